"""Orient: which sessions are new or grew since the last run, and what the owner asked.

Reads the raw session files and `.dream/state.json`; writes nothing. `plan_sessions` is pure.
"""

from __future__ import annotations

import hashlib
from typing import NamedTuple

from pydantic import ConfigDict, Field

from brain import layout
from brain.model import Model, empty_list
from brain.tree import Tree, under
from dream.state import DreamState


class SessionFile(NamedTuple):
    """A raw session file and its content hash."""

    id: str
    hash: str


class PendingSession(Model):
    model_config = ConfigDict(extra="forbid", frozen=True)
    id: str
    hash: str
    first_turn: int  # 1 for a new session; the first unseen turn for a grown one


class RunPlan(Model):
    model_config = ConfigDict(extra="forbid", frozen=True)
    pending: list[PendingSession]
    deferred: list[str] = Field(default_factory=empty_list)  # pending beyond --max-sessions


def list_session_files(tree: Tree) -> tuple[list[SessionFile], list[str]]:
    """Every raw session with its content hash; unsafe names and symlinks are reported and skipped."""
    problems, found = [], []
    prefix = layout.SESSIONS_RAW + "/"
    for rel in under(tree.files(), prefix):
        name = rel[len(prefix) :]
        if "/" in name or not name.endswith(".jsonl"):
            problems.append(f"{rel}: not a session file (expected {prefix}<id>.jsonl); skipped")
            continue
        sid = name[:-6]
        if not layout.is_session_id(sid):
            problems.append(f"{rel}: unsafe session id {sid!r}; rename the file (letters, digits, '.', '_', '-'); skipped")
            continue
        if tree.is_symlink(rel):
            problems.append(f"{rel}: is a symbolic link; copy the file into the Brain instead; skipped")
            continue
        data = tree.read_if_exists(rel)
        if data is None:
            problems.append(f"{rel}: not a regular file; skipped")
            continue
        found.append(SessionFile(sid, hashlib.sha256(data).hexdigest()))
    return found, problems


def plan_sessions(files: list[SessionFile], state: DreamState, max_sessions: int | None) -> RunPlan:
    """New and changed sessions in id order (ids start with dates where importers can), capped."""
    pending = []
    for f in sorted(files, key=lambda f: f.id):
        seen = state.sessions.get(f.id)
        if seen is not None and seen.hash == f.hash:
            continue
        pending.append(PendingSession(id=f.id, hash=f.hash, first_turn=(seen.turns if seen else 0) + 1))
    deferred: list[str] = []
    if max_sessions is not None and len(pending) > max_sessions:
        deferred = [p.id for p in pending[max_sessions:]]
        pending = pending[:max_sessions]
    return RunPlan(pending=pending, deferred=deferred)
