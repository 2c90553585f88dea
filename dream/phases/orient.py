"""Orient: which sessions are new or grew since the last run, and what the owner asked.

Reads the raw session files and `.dream/state.json`; writes nothing. `plan_sessions` is pure.
"""

from __future__ import annotations

import bisect
from typing import Callable, NamedTuple

from pydantic import ConfigDict, Field

from brain import layout
from brain.frames import frame, unframe
from brain.model import Model, empty_list
from brain.tree import Tree
from dream.state import DreamState, content_hash


class SessionFile(NamedTuple):
    """A raw session file and its content hash (a plain tuple: a run lists ~10,000 of them)."""

    id: str
    hash: str


class PendingSession(Model):
    model_config = ConfigDict(extra="forbid", frozen=True)
    id: str
    hash: str
    first_turn: int  # 1 for a new session; the first unseen turn for a grown one
    seen_turns: int = 0


class RunPlan(Model):
    model_config = ConfigDict(extra="forbid", frozen=True)
    pending: list[PendingSession]
    deferred: list[str] = Field(default_factory=empty_list)  # pending beyond --max-sessions
    problems: list[str] = Field(default_factory=empty_list)


def list_session_files(tree: Tree, hashes_of: Callable[[list[str]], dict[str, str]] | None = None,
                       rels: list[str] | None = None) -> tuple[list[SessionFile], list[str]]:
    """Every raw session with its content hash; unsafe names and symlinks are reported and skipped.

    `hashes_of(rels)`, when given, supplies the hashes (dream's cache: unchanged files are not read).
    `rels`: only these files of the folder (sorted), not all it lists."""
    problems, found = [], []
    prefix = layout.SESSIONS_RAW + "/"
    if rels is None:
        rels = raw_listing(tree)
    for rel in rels:
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


def raw_listing(tree: Tree) -> list[str]:
    """The files below sessions/raw/ (a range of the sorted listing)."""
    prefix = layout.SESSIONS_RAW + "/"
    listing = tree.files()
    return listing[bisect.bisect_left(listing, prefix) : bisect.bisect_left(listing, prefix[:-1] + "0")]


class RawSnapshot(NamedTuple):
    """What a run knew of sessions/raw/ when it ended, kept in the run's cache for the next one.

    `entries` are git's index entries of the raw files git vouched for when the run began; `records`
    is the key of the session records the run committed (state.json and `.dream/sessions/`, by blob
    id: dream.run._records_key). While the records are still those, a file whose entry is still
    among `entries` (and whose bytes git still vouches for) has the content it had then, measured
    against the same records: it is pending now exactly when it was then, which
    `pending` says (rel → (id, content hash)). `skipped` are those of them list_session_files
    skipped (bad names, links): looked at again, so they are reported again. A nightly run then
    examines only the files that are new, changed, pending or skipped, not each of 10,000."""

    records: str
    entries: frozenset[bytes]
    pending: dict[str, tuple[str, str]]
    skipped: frozenset[str]

    def dump(self, version: str) -> bytes:
        head = {"records": self.records, "pending": self.pending, "skipped": sorted(self.skipped)}
        return frame(version, head, b"\0".join(sorted(self.entries)))

    @classmethod
    def load(cls, raw: bytes | None, version: str) -> "RawSnapshot | None":
        """The snapshot `dump` wrote with this `version`; None when absent, of other code, or damaged."""
        found = unframe(raw, version)
        if found is None:
            return None
        head, body = found
        try:
            ok = (isinstance(head["records"], str) and all(isinstance(v, str) for v in head["skipped"])
                  and all(isinstance(v, list) and len(v) == 2 and all(isinstance(x, str) for x in v) for v in head["pending"].values()))
        except (KeyError, TypeError, AttributeError):
            return None
        if not ok:
            return None
        return cls(head["records"], frozenset(body.split(b"\0")) if body else frozenset(),
                   {rel: (v[0], v[1]) for rel, v in head["pending"].items()}, frozenset(head["skipped"]))


class RawSessions:
    """The raw sessions a run examined (all, or those a snapshot could not vouch for) and what the
    next snapshot is built from."""

    def __init__(self, files: list[SessionFile], problems: list[str], examined: list[str], raw_entries: dict[str, bytes] | None,
                 named: frozenset[str]) -> None:
        self.files, self.problems = files, problems
        self.examined = examined  # the files looked at (rels): `files` and the skipped ones
        self._raw_entries, self._named, self._entries = raw_entries or {}, named, None

    @property
    def entries(self) -> dict[str, bytes]:
        """rel → git's index entry, of the raw files git vouches for now and status names not (not
        even as a change only staged)."""
        if self._entries is None:
            raw, named = self._raw_entries, self._named
            self._entries = raw if named.isdisjoint(raw) else {rel: e for rel, e in raw.items() if rel not in named}
        return self._entries


def raw_sessions(tree: Tree, entries: dict[str, bytes] | None, named: frozenset[str], snapshot: RawSnapshot | None,
                 hashes_of: Callable[[list[str], bool], dict[str, str]] | None = None) -> RawSessions:
    """The raw sessions to plan from: every one, or (with a `snapshot` taken under the current session records)
    those whose index entry is not among the snapshot's, that git does not vouch for, or that were
    pending or skipped then. `entries`: rel → git's index entry of each file in sessions/raw/ git
    vouches for (GitKeys.vouched_entries; None: git cannot say, and every file is examined);
    `named`: the paths git status names; `hashes_of(rels, every)` supplies content hashes
    (`every`: rels are all the raw sessions)."""
    listed = raw_listing(tree)
    examined = listed
    if snapshot is not None and entries is not None:
        known, again = snapshot.entries, snapshot.pending.keys() | snapshot.skipped
        # The snapshot holds only entries git vouched for then: one of them, byte for byte, is
        # vouched for now unless status names its file. Those files are known; the rest are examined.
        examined = [rel for rel in listed if rel in again or rel in named or entries.get(rel) not in known]
    every = examined is listed
    files, problems = list_session_files(tree, (lambda rels: hashes_of(rels, every)) if hashes_of is not None else None, examined)
    return RawSessions(files, problems, examined, entries, named)


def next_snapshot(raw: RawSessions, state: DreamState, records: str) -> RawSnapshot:
    """The snapshot to keep after a run that committed `state`, its session records keyed `records`."""
    prefix = layout.SESSIONS_RAW + "/"
    pending: dict[str, tuple[str, str]] = {}
    taken = set()
    for f in raw.files:
        rel = f"{prefix}{f.id}.jsonl"
        taken.add(rel)
        seen = state.sessions.get(f.id)
        if rel in raw.entries and (seen is None or seen.hash != f.hash):
            pending[rel] = (f.id, f.hash)
    skipped = frozenset(rel for rel in raw.examined if rel not in taken and rel in raw.entries)
    return RawSnapshot(records, frozenset(raw.entries.values()), pending, skipped)


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
