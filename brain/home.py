"""Which folder is the Brain: `--brain PATH`, else `$BRAIN_HOME`, else the current folder."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from brain import layout
from brain.errors import NotABrainError

ENV_VAR = "BRAIN_HOME"


def is_brain(path: Path) -> bool:
    """A Brain is a folder with knowledge/ or brain.toml."""
    return (path / layout.KNOWLEDGE).is_dir() or (path / layout.CONFIG).is_file()


def locate_brain(explicit: str | Path | None, env: Mapping[str, str], cwd: Path) -> Path:
    """The Brain's root folder (absolute); NotABrainError saying where it looked."""
    if explicit:
        path, origin = Path(explicit), "--brain"
    elif env.get(ENV_VAR):
        path, origin = Path(env[ENV_VAR]), f"${ENV_VAR}"
    else:
        path, origin = cwd, "the current folder"
    path = (cwd / path).resolve()
    if not path.is_dir():
        raise NotABrainError(f"not a Brain: {path} does not exist (from {origin})", "run `brain init PATH` or pass --brain")
    if not is_brain(path):
        raise NotABrainError(
            f"not a Brain: {path} has no {layout.KNOWLEDGE}/ nor {layout.CONFIG} (from {origin})",
            "run `brain init PATH` or pass --brain",
        )
    return path
