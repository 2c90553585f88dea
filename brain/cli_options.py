"""Options and helpers every `brain` command shares (brain.cli and brain.cli_agents)."""

from __future__ import annotations

import os
from pathlib import Path

import click


def brain_option(f):
    return click.option(
        "--brain",
        "brain_path",
        type=click.Path(file_okay=False),
        default=None,
        help="Brain folder (default: $BRAIN_HOME, else the current folder).",
    )(f)


def json_option(f):
    return click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")(f)


def root_of(brain_path: str | None) -> Path:
    from brain.home import locate_brain

    return locate_brain(brain_path, os.environ, Path.cwd())


def embedder_option(f):
    return click.option(
        "--embedder", type=click.Choice(["auto", "wordllama", "minilm", "none"]), default=None,
        help="Dense vectors: auto (wordllama when installed), wordllama, minilm (the [minilm] extra), or none (default: [search] embedder in brain.toml, else auto).",
    )(f)


def embedder_name(root: Path, flag: str | None) -> str:
    from brain.config import BrainConfig

    table = (BrainConfig.load(root).model_extra or {}).get("search")
    return flag or (table.get("embedder") if isinstance(table, dict) else None) or "auto"
