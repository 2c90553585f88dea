"""Orient: which sessions are new or grew since the last run, and what the owner asked.

Reads the raw session files and `.dream/state.json`; writes nothing. `plan_sessions` is pure.
"""

from __future__ import annotations

import bisect
from typing import Callable, NamedTuple

from pydantic import BaseModel, ConfigDict, Field

from brain import layout
from brain.tree import Tree
from dream.state import DreamState, content_hash


class SessionFile(NamedTuple):
    """A raw session file and its content hash (a plain tuple: a run lists ~10,000 of them)."""

    id: str
    hash: str


class PendingSession(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    id: str
    hash: str
    first_turn: int  # 1 for a new session; the first unseen turn for a grown one
    seen_turns: int = 0


class RunPlan(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    pending: list[PendingSession]
    deferred: list[str] = Field(default_factory=list)  # pending beyond --max-sessions
    problems: list[str] = Field(default_factory=list)


def list_session_files(tree: Tree, hashes_of: Callable[[list[str]], dict[str, str]] | None = None) -> tuple[list[SessionFile], list[str]]:
    """Every raw session with its content hash; unsafe names and symlinks are reported and skipped.

    `hashes_of(rels)`, when given, supplies the hashes (dream's cache: unchanged files are not read)."""
    problems, found = [], []
    prefix = layout.SESSIONS_RAW + "/"
    listing = tree.files()  # sorted: the folder's files are one range of it
    for rel in listing[bisect.bisect_left(listing, prefix) : bisect.bisect_left(listing, prefix[:-1] + "0")]:
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
        found.append((sid, rel))
    digests = hashes_of([rel for _, rel in found]) if hashes_of is not None else {rel: content_hash(tree.read_bytes(rel)) for _, rel in found}
    files = [SessionFile(sid, digests[rel]) for sid, rel in found]
    return files, problems


def plan_sessions(files: list[SessionFile], state: DreamState, max_sessions: int | None) -> RunPlan:
    """New and changed sessions in id order (ids start with dates where importers can), capped."""
    pending = []
    for f in sorted(files, key=lambda f: f.id):
        seen = state.sessions.get(f.id)
        if seen is not None and seen.hash == f.hash:
            continue
        turns = seen.turns if seen else 0
        pending.append(PendingSession(id=f.id, hash=f.hash, first_turn=turns + 1, seen_turns=turns))
    deferred: list[str] = []
    if max_sessions is not None and len(pending) > max_sessions:
        deferred = [p.id for p in pending[max_sessions:]]
        pending = pending[:max_sessions]
    return RunPlan(pending=pending, deferred=deferred)
