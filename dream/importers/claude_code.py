"""Claude Code transcripts (`~/.claude/projects/<project>/*.jsonl`) → one canonical session per file.

Each line is an event; `user` and `assistant` events carry a `message` with text or content
blocks. One kept event becomes one turn, in file order: Claude Code only appends events, so a
session still being written grows by appended turns and earlier turns never change. Sidechain
(subagent) events, meta events and thinking are skipped. A tool call becomes one short line of the
turn's text, such as `[tool: Bash — ls -la]`, and one entry of the turn's `tools`: what the call
worked on (file, command, description, a TodoWrite's list), and the start of its result when the
tool failed. Results are tool output, never speech: they are not turns.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from brain.secrets import redact_secrets
from brain.sessions import MAX_SESSION_BYTES, Session, SessionHeader, Turn
from dream.importers.base import Parsed, checked_id, clean_text, read_input

TOOL_LINE_MAX = 120
_PREVIEW_KEYS = ("command", "file_path", "path", "pattern", "url", "query", "description", "prompt")
_KNOWN_TYPES = frozenset({"user", "assistant", "summary", "system"})
#: How much of a tool call a turn's `tools` entry keeps: enough to say what was done, not a log.
TOOL_FIELD_MAX = 300
TODOS_MAX = 30
_FILE_KEYS = ("file_path", "notebook_path")


def projects_home() -> Path:
    """Where Claude Code keeps its projects: $CLAUDE_CONFIG_DIR/projects, else ~/.claude/projects."""
    return Path(os.environ.get("CLAUDE_CONFIG_DIR") or Path.home() / ".claude").expanduser() / "projects"


def read_claude_code(path: Path) -> Parsed:
    """Read a single transcript, a project folder of transcripts (sorted, top level only), or a
    folder of project folders (~/.claude/projects itself): each project in it, sorted. Summary
    lines title the session whose message they name (`leafUuid`), in whichever file they stand;
    a summary whose message is in no file titles the file it stands in."""
    files = sorted(p for p in path.glob("*.jsonl") if p.is_file()) if path.is_dir() else [path]
    if not files and path.is_dir():
        files = sorted(p for project in path.iterdir() if project.is_dir() for p in project.glob("*.jsonl") if p.is_file())
    if not files:
        return Parsed(problems=[f"{path}: no Claude Code transcripts (*.jsonl) here or in its project folders; "
                                "pass ~/.claude/projects or one folder under it"])
    problems: list[str] = []
    read = [found for file in files if (found := _read_file(file, problems)) is not None]
    summaries = {leaf: said for found in read for leaf, said in found.summaries if leaf is not None}  # the newest wins
    known = set().union(*(found.seen for found in read))
    return Parsed(sessions=[_titled(found, summaries, known) for found in read if found.session is not None], problems=problems)


@dataclass
class _File:
    """One transcript as read: its session (untitled; None when it holds no turns), and what it
    says about the folder's sessions. Claude Code writes a session's summary line into whichever
    file was open, naming the session by one of its messages."""

    session: Session | None
    uuids: list[str]  # its main-line messages, in order
    seen: set[str] = field(default_factory=set)  # every message in it, a subagent's too
    summaries: list[tuple[str | None, str]] = field(default_factory=list)  # (leafUuid, summary) of its summary lines


def _titled(found: _File, summaries: dict[str, str], known: set[str]) -> Session:
    """The session titled by the newest summary naming one of its messages, else by the first of
    its file's own summaries that names no message of the folder."""
    named = [summaries[u] for u in found.uuids if u in summaries]
    own = [said for leaf, said in found.summaries if leaf not in known]
    title = (named[-1] if named else next(iter(own), "")) or None
    session = found.session
    return session.model_copy(update={"header": session.header.model_copy(update={"title": title})}) if title else session


def _lines(file: Path, problems: list[str]) -> list[str] | None:
    """The file's lines, decoded; None (reported) when unreadable or empty."""
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
    return text.lstrip("\ufeff").splitlines()


def _read_file(file: Path, problems: list[str]) -> _File | None:
    display = str(file)
    lines = _lines(file, problems)
    if lines is None:
        return None
    session_id: str | None = None
    found = _File(session=None, uuids=[])
    where: dict[str, str] = {}  # cwd, gitBranch, version: from the first event that has each
    recognised = False
    turns: list[dict[str, Any]] = []  # a Turn's fields: made Turns once every tool result is read
    calls: dict[str, dict[str, Any]] = {}  # tool_use id → its `tools` entry, for its result
    results: list[dict[str, Any]] = []  # results read since the last turn: the next turn carries them
    for lineno, raw in enumerate(lines, start=1):
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
        if event.get("type") == "summary" and isinstance(event.get("summary"), str):
            leaf = event.get("leafUuid")
            found.summaries.append((leaf if isinstance(leaf, str) else None, event["summary"].strip()))
        if isinstance(event.get("uuid"), str):
            found.seen.add(event["uuid"])
            if not event.get("isSidechain"):
                found.uuids.append(event["uuid"])
        results += _results(event, calls)
        turn = _turn(event, len(turns) + 1, calls)
        if turn is not None:
            if results:
                turn["results"], results = results, []
            turns.append(turn)
    if not turns:
        if not recognised:
            problems.append(f"{display}: no Claude Code events (user/assistant/summary lines); is this a Claude Code transcript?")
        return found  # summary-only and subagent-only files are normal: nothing to import, but their summaries count
    sid = checked_id(session_id or file.stem, display, problems)
    cwd = where.get("cwd")
    header = SessionHeader(
        id=sid, started=turns[0]["time"], source="claude-code", participants=["user", "assistant"],
        project=_project_name(cwd), cwd=cwd, branch=where.get("gitBranch"), version=where.get("version"),
    )
    found.session = Session(header=header, turns=[Turn(**turn) for turn in turns])
    return found


def _project_name(cwd: str | None) -> str | None:
    """The project a session worked in: the last part of its folder (`~/src/brain-dream` → brain-dream)."""
    name = re.split(r"[\\/]", cwd.rstrip("/\\"))[-1] if cwd else ""
    return name or None


def _message(event: dict[str, Any]) -> dict[str, Any] | None:
    """The message of a main-line user or assistant event (not a sidechain's, not meta)."""
    if event.get("type") not in ("user", "assistant") or event.get("isSidechain") or event.get("isMeta"):
        return None
    message = event.get("message")
    return message if isinstance(message, dict) and (message.get("role") or event["type"]) in ("user", "assistant") else None


def _turn(event: dict[str, Any], n: int, calls: dict[str, dict[str, Any]]) -> dict[str, Any] | None:
    """A turn's fields; its tool calls are remembered by id, for the results that answer them."""
    message = _message(event)
    if message is None:
        return None
    text, tools = content_parts(message.get("content"))
    if not text:
        return None
    role = message.get("role") or event["type"]
    turn = {"n": n, "role": role, "speaker": role, "time": normalize_time(event.get("timestamp")), "text": text}
    if tools:
        turn["tools"] = [entry for _, entry in tools]
        calls.update({block["id"]: entry for block, entry in tools if isinstance(block.get("id"), str)})
    return turn


def content_parts(content: Any) -> tuple[str, list[tuple[dict[str, Any], dict[str, Any]]]]:
    """Text of a message (text blocks as they are, tool calls as one line each, the rest skipped)
    and its tool calls as (block, `tools` entry)."""
    if isinstance(content, str):
        return content.strip(), []
    if not isinstance(content, list):
        return "", []
    lines, tools = [], []
    for block in content:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str) and block["text"].strip():
            lines.append(block["text"].strip())
        elif kind == "tool_use":
            lines.append(tool_line(block.get("name"), block.get("input")))
            tools.append((block, tool_entry(block.get("name"), block.get("input"))))
        elif kind == "image":
            lines.append("[image]")
        # tool_result, thinking, redacted_thinking: skipped (bulky, or not what was said)
    return "\n".join(lines), tools


def tool_entry(name: Any, tool_input: Any) -> dict[str, Any]:
    """What a tool call worked on: `name`, and `file`, `command`, `description`, `todos` where it has them."""
    entry: dict[str, Any] = {"name": name if isinstance(name, str) and name else "tool"}
    given = tool_input if isinstance(tool_input, dict) else {}
    file = next((given[k] for k in _FILE_KEYS if isinstance(given.get(k), str) and given[k].strip()), None)
    for key, value in (("file", file), ("command", given.get("command")), ("description", given.get("description"))):
        if isinstance(value, str) and value.strip():
            entry[key] = _field(value)
    todos = given.get("todos")
    if isinstance(todos, list):
        entry["todos"] = [{"content": _field(t["content"]), "status": str(t.get("status") or "pending")}
                          for t in todos[:TODOS_MAX] if isinstance(t, dict) and isinstance(t.get("content"), str)]
    return entry


def _results(event: dict[str, Any], calls: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """What this event's tool results tell: a failed call's first words (`error`) and a Task's
    answer (its subagent's report), each naming the call. Other results are output, not kept."""
    message = _message(event)
    content = message.get("content") if message is not None else None
    out = []
    for block in content if isinstance(content, list) else ():
        call = calls.get(block.get("tool_use_id")) if isinstance(block, dict) and block.get("type") == "tool_result" else None
        said = _result_text(block.get("content")) if call is not None else ""
        if not said.strip():
            continue
        named = {k: call[k] for k in ("name", "file", "command", "description") if k in call}
        if block.get("is_error") is True:
            out.append({**named, "error": _field(_error_line(said))})
        elif call["name"] == "Task":
            out.append({**named, "answer": _field(said)})
    return out


#: A failure's telling line: the exception a traceback ends with ("ModuleNotFoundError: …").
_EXCEPTION_LINE_RE = re.compile(r"^\s*(?:[\w.]+(?:Error|Exception)|error(?:\[\w+\])?)\b.*\S", re.M | re.I)
_EXIT_CODE_RE = re.compile(r"^\s*Exit code \d+\s*$", re.M)


def _error_line(said: str) -> str:
    """What a failed result says in one line: the last exception line, else its first line with words."""
    exceptions = _EXCEPTION_LINE_RE.findall(said)
    if exceptions:
        return exceptions[-1].strip()
    lines = [line.strip() for line in _EXIT_CODE_RE.sub("", said).splitlines() if line.strip()]
    return lines[0] if lines else said


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = content if isinstance(content, list) else []
    return "\n".join(b["text"] for b in parts if isinstance(b, dict) and isinstance(b.get("text"), str))


def _field(value: str) -> str:
    """A tool field as a turn keeps it: redacted, in one line, at most TOOL_FIELD_MAX characters."""
    line = re.sub(r"\s+", " ", redact_secrets(clean_text(value))).strip()
    return line if len(line) <= TOOL_FIELD_MAX else line[: TOOL_FIELD_MAX - 1].rstrip() + "…"


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
