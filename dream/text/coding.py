"""A coding agent's session (Claude Code), read as work: the request that opened it, the files it
changed and how it ended. Pure functions over a sanitised session (agent markup already gone)."""

from __future__ import annotations

import re
from collections import Counter

from brain.sessions import Session, Turn
from dream.text.words import clean_statement, sentences

_NOT_A_REQUEST_RE = re.compile(r"^(?:Caveat:|\[tool[:\]]|\[Request interrupted|<)")
_EDIT_RE = re.compile(r"^\[tool: (?:Edit|MultiEdit|Write|NotebookEdit) — (.+)\]$", re.M)  # the importer's tool line
_TOOL_LINE_RE = re.compile(r"^\[tool[:\]].*$", re.M)
REQUEST_CHARS = 200
FILES_SHOWN = 5


def request_of(text: str) -> str:
    """What the user asked: the turn's first sentences, up to REQUEST_CHARS ("" for none)."""
    said = text.strip()
    if not said or _NOT_A_REQUEST_RE.match(said):
        return ""
    out = ""
    for sentence in sentences(said):
        if out and len(out) + len(sentence) > REQUEST_CHARS:
            break
        out = f"{out} {sentence}".strip()
    return clean_statement(out, REQUEST_CHARS)


def first_request(session: Session, first_turn: int = 1) -> tuple[Turn, str] | None:
    """The first user turn from `first_turn` that asks something, and what it asks."""
    asked = ((t, request_of(t.text)) for t in session.turns if t.n >= first_turn and t.role == "user")
    return next(((t, r) for t, r in asked if r), None)


def changed_files(session: Session, first_turn: int = 1) -> tuple[list[tuple[str, int]], list[Turn]]:
    """(path, edits) of the files the agent changed, most edited first, paths below the session's
    folder made relative to it; and the turns that changed them."""
    cwd = (session.header.cwd or "").rstrip("/")
    counts: Counter = Counter()
    turns = []
    for turn in session.turns:
        if turn.n < first_turn or turn.role != "assistant":
            continue
        for m in _EDIT_RE.finditer(turn.text):
            path = m.group(1)
            counts[path[len(cwd) + 1 :] if cwd and path.startswith(cwd + "/") else path] += 1
            if not turns or turns[-1] is not turn:
                turns.append(turn)
    return counts.most_common(), turns


def changed_line(files: list[tuple[str, int]]) -> str:
    listed = ", ".join(f"`{path}`" for path, _ in files[:FILES_SHOWN])
    more = len(files) - FILES_SHOWN
    return clean_statement(f"Changed {listed}" + (f" and {more} more files" if more > 0 else ""))


def outcome(session: Session) -> tuple[str, Turn] | None:
    """How the session ended: the first sentence of the agent's last words that says something
    (not "Perfect!", not a heading or a lead-in such as "Here is the overview:")."""
    for turn in reversed(session.turns):
        if turn.role != "assistant":
            continue
        said = _TOOL_LINE_RE.sub("", turn.text).strip()
        if not said:
            continue
        for sentence in sentences(said):
            sentence = _MARKDOWN_LEAD_RE.sub("", sentence).replace("**", "").strip()
            if len(sentence.split()) >= 4 and not sentence.endswith(":"):
                return clean_statement(sentence, REQUEST_CHARS), turn
        return None
    return None


_MARKDOWN_LEAD_RE = re.compile(r"^(?:#+\s*|[-*>]\s+|\d+[.)]\s+)+")
