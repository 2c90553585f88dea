"""Importers: other transcript formats → canonical `sessions/raw/<id>.jsonl` in a Brain.

Each format module reads its input into canonical `Session`s (`Parsed`); `base` gives them safe
ids and writes them. Importers add sessions and append turns, never rewrite one, and never
touch git (the next `dream run` commits).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from dream.importers.base import ImportReport, Parsed, import_sessions, safe_session_id
from dream.importers.canonical import read_jsonl
from dream.importers.chatgpt import read_chatgpt
from dream.importers.claude_code import read_claude_code
from dream.importers.locomo import read_locomo
from dream.importers.longmemeval import read_longmemeval
from dream.timing import Progress

IMPORTERS: dict[str, Callable[[Path], Parsed]] = {
    "jsonl": read_jsonl,
    "claude-code": read_claude_code,
    "chatgpt": read_chatgpt,
    "locomo": read_locomo,
    "longmemeval": read_longmemeval,
}

__all__ = ["IMPORTERS", "ImportReport", "Parsed", "import_path", "read_source", "safe_session_id"]


def read_source(fmt: str, path: Path) -> Parsed:
    """Parse `path` in `fmt` without writing anything (ValueError for an unknown format)."""
    try:
        reader = IMPORTERS[fmt]
    except KeyError:
        raise ValueError(f"unknown import format {fmt!r}; choose one of {', '.join(sorted(IMPORTERS))}") from None
    path = Path(path)
    if not path.exists():
        return Parsed(problems=[f"{path}: does not exist; check the path"])
    return reader(path)


def import_path(fmt: str, path: Path, brain_root: Path, progress: Progress | None = None) -> ImportReport:
    """Import `path` in `fmt` into `brain_root/sessions/raw/`; problems are reported, not raised.
    `progress` hears the reading, then each session written (the CLI's bar on a terminal)."""
    if progress is not None:
        progress("reading", 0, 0)
    return import_sessions(fmt, Path(path), read_source(fmt, path), Path(brain_root), progress)
