"""A coding agent's sessions (Claude Code) onto their project's page: per session, the request
that opened it and the files it changed, dated and citing their turns.

The project is the session header's `project` (the folder the agent worked in); the page is
named after it and answers to the folder's path too.
"""

from __future__ import annotations

from brain.sessions import Session, Turn
from dream.backends.base import Entity, Fact
from dream.compile import Compilation
from dream.phases.attach import add_fact, resolve
from dream.text.coding import changed_files, changed_line, first_request
from dream.text.facts import turn_date


def attach_project(comp: Compilation, session: Session, first_turn: int) -> None:
    """The session's request and changed files as facts of its project's page (new turns only)."""
    name, cwd = session.header.project, session.header.cwd
    if not name:
        return
    slug = resolve(comp, name, Entity(name=name, type="project", aliases=[cwd] if cwd else []), as_subject=True)
    if slug is None:
        return
    asked = first_request(session, first_turn)
    if asked is not None:
        add_fact(comp, slug, _fact(session, f"Asked: {asked[1]}", [asked[0]]), session.id, [])
    files, turns = changed_files(session, first_turn)
    if files:
        add_fact(comp, slug, _fact(session, changed_line(files), turns), session.id, [])


def _fact(session: Session, statement: str, turns: list[Turn]) -> Fact:
    day = turn_date(turns[0], session)
    return Fact(kind="event", subject=session.header.project or "", statement=statement, first_turn=turns[0].n,
                last_turn=turns[-1].n, observed=day, event_date=day, confidence=0.9)
