"""A coding agent's sessions (Claude Code) onto their project's page: per session, the request
that opened it and the files it changed (Timeline), the rules and corrections the user gave
(Decisions, Learnings), the errors met and what followed, the commands that built or tested it,
and the agent's open tasks as last written (a newer list supersedes it); dated and citing turns.

The project is the session header's `project` (the folder the agent worked in); the page is
named after it and answers to the folder's path too.
"""

from __future__ import annotations

from brain.sessions import Session, Turn
from dream.backends.base import Entity, Fact
from dream.compile import Compilation
from dream.phases.attach import add_fact, resolve
from dream.text.coding import build_commands, changed_files, changed_line, errors_met, first_request, open_tasks, stated_rules, tasks_line
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
    for kind, statement, turn in stated_rules(session, first_turn):
        add_fact(comp, slug, _fact(session, statement, [turn], kind), session.id, [])
    for statement, turns in errors_met(session, first_turn):
        add_fact(comp, slug, _fact(session, statement, turns, "learning"), session.id, [])
    for command, turn in build_commands(session, first_turn):
        add_fact(comp, slug, _fact(session, f"`{command}`", [turn], "command"), session.id, [])
    tasks = open_tasks(session, first_turn)
    if tasks is not None:
        line = tasks_line(tasks[0])
        add_fact(comp, slug, _fact(session, line, [tasks[1]], "task").model_copy(update={"slot": "open-tasks", "value": line}), session.id, [])


def _fact(session: Session, statement: str, turns: list[Turn], kind: str = "event") -> Fact:
    day = turn_date(turns[0], session)
    return Fact(kind=kind, subject=session.header.project or "", statement=statement, first_turn=turns[0].n,
                last_turn=turns[-1].n, observed=day, event_date=day if kind == "event" else None, confidence=0.9)
