"""The canonical session transcript (`sessions/raw/<id>.jsonl`): read-only reader and writer.

Line 1 is the header, then one turn per line, numbered from 1 and never renumbered. A bad line
is skipped and reported with its line number; the rest of the session is still read.

Transcript text is cleaned as it is read, and as it is imported (`clean_turn_text`): secrets
become `[REDACTED:<kind>]` and invisible characters go, so no reader — `brain search`,
`brain context`, `brain cite`, Dream — ever holds a secret from a transcript.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import ConfigDict, Field, ValidationError

from brain.invisible import strip_invisible
from brain.layout import is_session_id
from brain.model import Model, Record, empty_list
from brain.secrets import redact_secrets

MAX_SESSION_BYTES = 50_000_000
MAX_TURN_CHARS = 200_000


class SessionHeader(Model):
    model_config = ConfigDict(extra="allow", frozen=True)
    type: Literal["session"] = "session"
    id: str
    started: str | None = None
    source: str | None = None
    title: str | None = None
    participants: list[str] = Field(default_factory=empty_list)
    # A coding agent's session (Claude Code): the project (its folder's name), that folder, the git
    # branch and the agent's version, as the session began (a growing session keeps its first line).
    project: str | None = None
    cwd: str | None = None
    branch: str | None = None
    version: str | None = None


class Turn(Model):
    model_config = ConfigDict(extra="allow", frozen=True)
    type: Literal["turn"] = "turn"
    n: int = Field(ge=1)
    role: str
    speaker: str | None = None
    time: str | None = None
    text: str


class Session(Record):
    header: SessionHeader
    turns: list[Turn]

    @property
    def id(self) -> str:
        return self.header.id

    def turn(self, n: int) -> Turn | None:
        """Turn n (turns are dense from 1, so this is an index unless lines were skipped)."""
        if 1 <= n <= len(self.turns) and self.turns[n - 1].n == n:
            return self.turns[n - 1]
        return next((t for t in self.turns if t.n == n), None)


class SessionProblem(Record):
    path: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"


def parse_session(data: bytes | str, path: str) -> tuple[Session | None, list[SessionProblem]]:
    """A session and the problems met; None when there is no usable header."""
    problems: list[SessionProblem] = []

    def problem(line: int, message: str) -> None:
        problems.append(SessionProblem(path=path, line=line, message=message))

    text = _decoded(data, problem) if isinstance(data, bytes) else data
    if text is None:
        return None, problems
    header: SessionHeader | None = None
    turns: dict[int, Turn] = {}
    for lineno, raw in enumerate(text.lstrip("\ufeff").splitlines(), start=1):
        obj = _line_object(raw, lineno, problem)
        if obj is None:
            continue
        kind = obj.get("type")
        try:
            if kind == "session":
                if header is not None:
                    problem(lineno, "second session header; line skipped")
                    continue
                header = SessionHeader.model_validate(obj)
                if header.title and (title := clean_turn_text(header.title)) != header.title:
                    header = header.model_copy(update={"title": title})
                if not is_session_id(header.id):
                    problem(lineno, f"unsafe session id {header.id!r}; use letters, digits, '.', '_' and '-'")
                    return None, problems
            elif kind == "turn":
                turn = Turn.model_validate(obj)
                if turn.n in turns:
                    problem(lineno, f"turn {turn.n} appears twice; the later line is skipped")
                    continue
                if len(turn.text) > MAX_TURN_CHARS:
                    problem(lineno, f"turn {turn.n} is longer than {MAX_TURN_CHARS} characters; it was cut")
                    turn = turn.model_copy(update={"text": turn.text[:MAX_TURN_CHARS]})
                if (text := clean_turn_text(turn.text)) != turn.text:
                    turn = turn.model_copy(update={"text": text})
                turns[turn.n] = turn
            else:
                problem(lineno, f"unknown line type {kind!r}; expected 'session' or 'turn'; line skipped")
        except ValidationError as exc:
            err = exc.errors()[0]
            where = ".".join(str(p) for p in err["loc"])
            problem(lineno, f"invalid {kind} line: {where}: {err['msg']}; line skipped")
    if header is None:
        problem(1, "no session header line ({\"type\": \"session\", \"id\": ...})")
        return None, problems
    return Session(header=header, turns=[turns[n] for n in sorted(turns)]), problems


def clean_turn_text(text: str) -> str:
    """Transcript text as every reader gets it: secrets redacted, invisible characters removed."""
    return redact_secrets(strip_invisible(text))


def _decoded(data: bytes, problem) -> str | None:
    """The text of a session file's bytes; None (with the problem said) when it cannot be one."""
    if len(data) > MAX_SESSION_BYTES:
        problem(1, f"session is larger than {MAX_SESSION_BYTES // 1_000_000} MB; split it into several sessions")
        return None
    if b"\x00" in data:
        problem(1, "binary content (NUL byte); a session must be UTF-8 JSON lines")
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        problem(data.count(b"\n", 0, exc.start) + 1, "invalid UTF-8; undecodable bytes were replaced with U+FFFD")
        return data.decode("utf-8", errors="replace")


def _line_object(raw: str, lineno: int, problem) -> dict | None:
    """One line's JSON object; None for a blank line, or (said) one that is not an object."""
    if not raw.strip():
        return None
    try:
        obj = json.loads(raw)
    except json.JSONDecodeError as exc:
        problem(lineno, f"malformed JSON ({exc.msg}); line skipped")
        return None
    except RecursionError:
        problem(lineno, "JSON nested too deeply; line skipped")
        return None
    if not isinstance(obj, dict):
        problem(lineno, "a line must be a JSON object; line skipped")
        return None
    return obj


def render_session(session: Session) -> str:
    """Canonical jsonl: header then turns, one compact JSON object per line, keys in model order."""
    lines = [_dump(session.header.model_dump(exclude_none=True))]
    lines += [_dump(t.model_dump(exclude_none=True)) for t in session.turns]
    return "\n".join(lines) + "\n"


def _dump(obj: dict[str, Any]) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def turn_evidence(turn: Turn) -> str:
    """A turn as a citation shows it: its text, then which part of ChatGPT custom instructions it is
    (`kind`), what a coding agent's tool calls in it worked on (`tools`) and the results it carries
    (`results`), redacted like the text."""
    extra = turn.model_extra or {}
    lines = [f"[custom instructions: {extra['kind'].replace('-', ' ')}]"] if extra.get("kind") in ("about-me", "how-to-answer") else []
    for tool in (t for t in extra.get("tools") or () if isinstance(t, dict)):
        todos = [t for t in tool.get("todos") or () if isinstance(t, dict)]
        if todos:
            lines.append("[tasks: " + "; ".join(f"{t.get('content')} ({t.get('status')})" for t in todos) + "]")
        if isinstance(tool.get("command"), str) and tool["command"] not in turn.text:
            lines.append(f"[command: {tool['command']}]")
    for result in (r for r in extra.get("results") or () if isinstance(r, dict)):
        call = " ".join(str(result[k]) for k in ("name", "command") if result.get(k))
        if result.get("error"):
            lines.append(f"[tool result: {call} failed: {result['error']}]")
        elif result.get("answer"):
            lines.append(f"[tool result: {call}: {result['answer']}]")
    return "\n".join([turn.text, redact_secrets("\n".join(lines))]) if lines else turn.text
