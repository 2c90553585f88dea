"""Canonical session jsonl (DESIGN.md) from elsewhere → `sessions/raw/`, validated on the way in.

Every file goes through `parse_session`, the same reader dream uses, so a bad line is reported
with file:line and skipped, and what lands in the Brain reads back exactly as imported.
"""

from __future__ import annotations

import json
from pathlib import Path

from brain.layout import is_session_id
from brain.sessions import parse_session
from dream.importers.base import MAX_INPUT_BYTES, Parsed, checked_id, read_input


def read_jsonl(path: Path) -> Parsed:
    """Read one canonical `.jsonl` file, or every `*.jsonl` directly inside a folder (sorted)."""
    files = sorted(p for p in path.glob("*.jsonl") if p.is_file()) if path.is_dir() else [path]
    if not files:
        return Parsed(problems=[f"{path}: no *.jsonl files here; pass a session file or a folder of them"])
    sessions = []
    problems: list[str] = []
    for file in files:
        display = str(file)
        data = read_input(file, display, problems, MAX_INPUT_BYTES)
        if data is None:
            continue
        data = _safe_header_id(data, display, problems)
        session, found = parse_session(data, display)
        problems += [str(p) for p in found]
        if session is not None:
            sessions.append(session)
    return Parsed(sessions=sessions, problems=problems)


def _safe_header_id(data: bytes, display: str, problems: list[str]) -> bytes:
    """The data with an unsafe header id replaced by a safe one (parse_session refuses unsafe ids)."""
    try:
        lines = data.decode("utf-8-sig").split("\n")
    except UnicodeDecodeError:
        return data  # parse_session reports it
    for index, raw in enumerate(lines):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except (json.JSONDecodeError, RecursionError):
            return data
        if not (isinstance(obj, dict) and obj.get("type") == "session" and isinstance(obj.get("id"), str)):
            return data
        if is_session_id(obj["id"]):
            return data
        safe = checked_id(obj["id"], f"{display}:{index + 1}", problems)
        lines[index] = json.dumps({**obj, "id": safe}, ensure_ascii=False, separators=(",", ":"))
        return "\n".join(lines).encode("utf-8")
    return data
