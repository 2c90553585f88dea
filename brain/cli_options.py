"""Options and helpers every `brain` command shares (brain.cli and brain.cli_agents)."""

from __future__ import annotations

import os
from pathlib import Path

import click

from brain import layout
from brain.errors import NotABrainError

brain_option = click.option("--brain", "brain_path", type=click.Path(file_okay=False), default=None,
                            help="Brain folder (default: $BRAIN_HOME, else the current folder).")
json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
embedder_option = click.option(
    "--embedder", type=click.Choice(["auto", "wordllama", "minilm", "none"]), default=None,
    help="Dense vectors: auto (wordllama when installed), wordllama, minilm (the [minilm] extra), or none (default: [search] embedder in brain.toml, else auto).",
)


def root_of(brain_path: str | None) -> Path:
    """The Brain's folder (absolute): `--brain PATH`, else `$BRAIN_HOME`, else the current folder.
    A Brain is a folder with knowledge/ or brain.toml; NotABrainError says where it looked."""
    if brain_path:
        path, origin = Path(brain_path), "--brain"
    elif os.environ.get("BRAIN_HOME"):
        path, origin = Path(os.environ["BRAIN_HOME"]), "$BRAIN_HOME"
    else:
        path, origin = Path.cwd(), "the current folder"
    path = path.resolve()
    if not path.is_dir():
        raise NotABrainError(f"not a Brain: {path} does not exist (from {origin})", "run `brain init PATH` or pass --brain")
    if not ((path / layout.KNOWLEDGE).is_dir() or (path / layout.CONFIG).is_file()):
        raise NotABrainError(
            f"not a Brain: {path} has no {layout.KNOWLEDGE}/ nor {layout.CONFIG} (from {origin})",
            "run `brain init PATH` or pass --brain",
        )
    return path


def embedder_name(root: Path, flag: str | None) -> str:
    from brain.config import BrainConfig

    table = (BrainConfig.load(root).model_extra or {}).get("search")
    return flag or (table.get("embedder") if isinstance(table, dict) else None) or "auto"
