"""A coding agent's sessions (Claude Code) onto their project's page: per session, the request
that opened it and the files it changed, dated and citing their turns.

The project is the session header's `project` (the folder the agent worked in); the page is
named after it and answers to the folder's path too.
"""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter

from brain.sessions import Session, Turn
from dream.backends.base import Entity, Fact
from dream.compile import Compilation
from dream.phases.attach import add_fact, resolve
from dream.text.words import clean_statement, sentences

#: Markup a coding agent wraps around what the user typed: the editor's selection, reminders,
#: slash commands and their output. None of it is the request.
_MARKUP_RE = re.compile(
    r"<(ide_selection|ide_opened_file|ide_diagnostics|system-reminder|command-name|command-message|command-args"
    r"|local-command-stdout|local-command-stderr|user-prompt-submit-hook)>.*?</\1>", re.S)
_NOT_A_REQUEST_RE = re.compile(r"^(?:Caveat:|\[tool[:\]]|\[Request interrupted|<)")
_EDIT_RE = re.compile(r"^\[tool: (?:Edit|MultiEdit|Write|NotebookEdit) — (.+)\]$", re.M)  # the importer's tool line
REQUEST_CHARS = 200
FILES_SHOWN = 5


def attach_project(comp: Compilation, session: Session, first_turn: int) -> None:
    """The session's request and changed files as facts of its project's page (new turns only)."""
    name, cwd = session.header.project, session.header.cwd
    if not name:
        return
    slug = resolve(comp, name, Entity(name=name, type="project", aliases=[cwd] if cwd else []), as_subject=True)
    if slug is None:
        return
    turns = [t for t in session.turns if t.n >= first_turn]
    asked = next((t for t in turns if t.role == "user" and request_of(t.text)), None)
    if asked is not None:
        add_fact(comp, slug, _fact(name, f"Asked: {request_of(asked.text)}", [asked]), session.id, [])
    edits = [(t, _relative(m.group(1), cwd)) for t in turns if t.role == "assistant" for m in _EDIT_RE.finditer(t.text)]
    if edits:
        counts = Counter(path for _, path in edits)
        listed = ", ".join(f"`{path}`" for path, _ in counts.most_common(FILES_SHOWN))
        more = len(counts) - FILES_SHOWN
        statement = clean_statement(f"Changed {listed}" + (f" and {more} more files" if more > 0 else ""))
        add_fact(comp, slug, _fact(name, statement, [t for t, _ in edits]), session.id, [])


def request_of(text: str) -> str:
    """What the user asked, without the markup around it: its first sentences, up to REQUEST_CHARS."""
    said = _MARKUP_RE.sub("", text).strip()
    if not said or _NOT_A_REQUEST_RE.match(said):
        return ""
    out = ""
    for sentence in sentences(said):
        if out and len(out) + len(sentence) > REQUEST_CHARS:
            break
        out = f"{out} {sentence}".strip()
    return clean_statement(out, REQUEST_CHARS)


def _relative(path: str, cwd: str | None) -> str:
    """A path as the project knows it: below its folder when it is there."""
    if cwd and path.startswith(cwd.rstrip("/") + "/"):
        return path[len(cwd.rstrip("/")) + 1 :]
    return path


def _fact(project: str, statement: str, turns: list[Turn]) -> Fact:
    day = _day(turns[0].time)
    return Fact(kind="event", subject=project, statement=statement, first_turn=turns[0].n, last_turn=turns[-1].n,
                observed=day, event_date=day, confidence=0.9)


def _day(time: str | None) -> dt.date:
    try:
        return dt.date.fromisoformat((time or "")[:10])
    except ValueError:
        return dt.date.min
