"""Claude Code transcripts (`~/.claude/projects/<project>/*.jsonl`) → one canonical session per file.

Each line is an event; `user` and `assistant` events carry a `message` with text or content
blocks. One kept event becomes one turn, in file order: Claude Code only appends events, so a
session still being written grows by appended turns and earlier turns never change. Sidechain
(subagent) events, meta events, thinking and tool results are skipped; a tool call becomes one
short line such as `[tool: Bash — ls -la]`.
"""

from __future__ import annotations

import json
import os
import re
from datetime import datetime
from pathlib import Path
from typing import Any

from brain.sessions import MAX_SESSION_BYTES, Session, SessionHeader, Turn
from dream.importers.base import Parsed, checked_id, read_input

TOOL_LINE_MAX = 120
_PREVIEW_KEYS = ("command", "file_path", "path", "pattern", "url", "query", "description", "prompt")
_KNOWN_TYPES = frozenset({"user", "assistant", "summary", "system"})


def projects_home() -> Path:
    """Where Claude Code keeps its projects: $CLAUDE_CONFIG_DIR/projects, else ~/.claude/projects."""
    return Path(os.environ.get("CLAUDE_CONFIG_DIR") or Path.home() / ".claude").expanduser() / "projects"


def read_claude_code(path: Path) -> Parsed:
    """Read a single transcript, a project folder of transcripts (sorted, top level only), or a
    folder of project folders (~/.claude/projects itself): each project in it, sorted."""
    files = sorted(p for p in path.glob("*.jsonl") if p.is_file()) if path.is_dir() else [path]
    if not files and path.is_dir():
        files = sorted(p for project in path.iterdir() if project.is_dir() for p in project.glob("*.jsonl") if p.is_file())
    if not files:
        return Parsed(problems=[f"{path}: no Claude Code transcripts (*.jsonl) here or in its project folders; "
                                "pass ~/.claude/projects or one folder under it"])
    sessions: list[Session] = []
    problems: list[str] = []
    for file in files:
        session = _read_file(file, problems)
        if session is not None:
            sessions.append(session)
    return Parsed(sessions=sessions, problems=problems)


def _read_file(file: Path, problems: list[str]) -> Session | None:
    display = str(file)
    data = read_input(file, display, problems, MAX_SESSION_BYTES)
    if data is None:
        return None
    if not data.strip():
        problems.append(f"{display}: empty file; nothing to import")
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        problems.append(f"{display}:{line}: invalid UTF-8; undecodable bytes became U+FFFD")
        text = data.decode("utf-8", errors="replace")
    session_id: str | None = None
    title: str | None = None
    where: dict[str, str] = {}  # cwd, gitBranch, version: from the first event that has each
    recognised = False
    turns: list[Turn] = []
    for lineno, raw in enumerate(text.lstrip("\ufeff").splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            event = json.loads(raw)
        except json.JSONDecodeError as exc:
            problems.append(f"{display}:{lineno}: malformed JSON ({exc.msg}); line skipped")
            continue
        except RecursionError:
            problems.append(f"{display}:{lineno}: JSON nested too deeply; line skipped")
            continue
        if not isinstance(event, dict):
            problems.append(f"{display}:{lineno}: an event must be a JSON object; line skipped")
            continue
        recognised |= event.get("type") in _KNOWN_TYPES
        if session_id is None and isinstance(event.get("sessionId"), str) and event["sessionId"].strip():
            session_id = event["sessionId"].strip()
        for key in ("cwd", "gitBranch", "version"):
            if key not in where and isinstance(event.get(key), str) and event[key].strip():
                where[key] = event[key].strip()
        if event.get("type") == "summary" and title is None and isinstance(event.get("summary"), str):
            title = event["summary"].strip() or None
        turn = _turn(event, len(turns) + 1)
        if turn is not None:
            turns.append(turn)
    if not turns:
        if not recognised:
            problems.append(f"{display}: no Claude Code events (user/assistant/summary lines); is this a Claude Code transcript?")
        return None  # summary-only and subagent-only files are normal: nothing to import
    cwd = where.get("cwd")
    header = SessionHeader(
        id=checked_id(session_id or file.stem, display, problems), started=turns[0].time, source="claude-code",
        title=title, participants=["user", "assistant"], project=_project_name(cwd), cwd=cwd,
        branch=where.get("gitBranch"), version=where.get("version"),
    )
    return Session(header=header, turns=turns)


def _project_name(cwd: str | None) -> str | None:
    """The project a session worked in: the last part of its folder (`~/src/brain-dream` → brain-dream)."""
    name = re.split(r"[\\/]", cwd.rstrip("/\\"))[-1] if cwd else ""
    return name or None


def _turn(event: dict[str, Any], n: int) -> Turn | None:
    if event.get("type") not in ("user", "assistant") or event.get("isSidechain") or event.get("isMeta"):
        return None
    message = event.get("message")
    if not isinstance(message, dict):
        return None
    role = message.get("role") or event["type"]
    if role not in ("user", "assistant"):
        return None
    text = content_text(message.get("content"))
    if not text:
        return None
    return Turn(n=n, role=role, speaker=role, time=normalize_time(event.get("timestamp")), text=text)


def content_text(content: Any) -> str:
    """Text of a message: text blocks as they are, tool calls as one line, the rest skipped."""
    if isinstance(content, str):
        return content.strip()
    if not isinstance(content, list):
        return ""
    lines = []
    for block in content:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str) and block["text"].strip():
            lines.append(block["text"].strip())
        elif kind == "tool_use":
            lines.append(tool_line(block.get("name"), block.get("input")))
        elif kind == "image":
            lines.append("[image]")
        # tool_result, thinking, redacted_thinking: skipped (bulky, or not what was said)
    return "\n".join(lines)


def tool_line(name: Any, tool_input: Any) -> str:
    """`[tool: Bash — ls -la]`, at most TOOL_LINE_MAX characters."""
    name = name if isinstance(name, str) and name else "tool"
    preview = ""
    if isinstance(tool_input, dict):
        value = next((tool_input[k] for k in _PREVIEW_KEYS if isinstance(tool_input.get(k), str) and tool_input[k].strip()), None)
        if value is None and tool_input:
            value = json.dumps(tool_input, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
        preview = re.sub(r"\s+", " ", value or "").strip()
    line = f"[tool: {name} — {preview}]" if preview else f"[tool: {name}]"
    if len(line) > TOOL_LINE_MAX:
        line = line[: TOOL_LINE_MAX - 2].rstrip() + "…]"
    return line


def normalize_time(value: Any) -> str | None:
    """`2026-01-20T11:57:17.716Z` → `2026-01-20T11:57:17+00:00`; None if absent or unreadable."""
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value.strip()).isoformat(timespec="seconds")
    except ValueError:
        return None
