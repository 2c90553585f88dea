"""The sessions phase on two cores: pending sessions prepared ahead of their turn.

Attach must take the sessions one by one (each resolves names against the pages the ones before
it made), but reading, sanitising, summarising and extracting a session depend on the session
alone — for a pure backend (ModelBackend.pure), whose answers are functions of the request. So a
forked process prepares the pending sessions in order while this one attaches the ones it has
delivered; whenever this one would wait for it, it prepares the last sessions not taken yet
itself (brain.forked.Shared: work stealing from the tail), so neither core idles.

Extraction ahead rests on the entities known when it ran; attach uses those facts only where the
entities learned since type the same names alike (ModelBackend.facts_still_hold), else it asks
again. The Brain is the one a single process compiles, byte for byte.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from brain import layout
from brain.forked import Shared
from brain.sessions import Session
from brain.tree import DirTree
from brain.view import parse_session_cached
from dream.backends.base import FactBatch, SessionSummary
from dream.compile import Compilation
from dream.phases.attach import extract_request
from dream.phases.orient import PendingSession as Pending
from dream.phases.summarize import summarize_session
from dream.sanitize import sanitize_session

#: Fewer pending sessions than this are prepared in process (a nightly run): forking would cost more.
AHEAD_MIN_SESSIONS = 200


@dataclass
class Prepared:
    """A pending session read and sanitised (and, ahead, summarised and extracted)."""

    problems: list[str]
    clean: Session | None = None  # None: the file could not be read as a session
    redactions: dict[str, int] = field(default_factory=dict)
    summary: SessionSummary | None = None
    facts: tuple[FactBatch, object] | None = None  # the backend's extract_ahead


def prepare(comp: Compilation, live: DirTree, pending: Pending, ahead: bool = False) -> Prepared:
    """Read and sanitise a pending session; `ahead`: also summarise it and extract its facts."""
    sid = pending.id
    rel = layout.raw_session_path(sid)
    session, session_problems = parse_session_cached(rel, live.read_bytes(rel))
    out = Prepared(problems=[str(p) for p in session_problems])
    if session is None:
        return out
    if session.header.id != sid:
        # Citations name the file (sessions/raw/<id>.jsonl), whatever its header says.
        out.problems.append(f"{rel}:1: header id {session.header.id!r} differs from the file name; cited as {sid!r}")
        session = session.model_copy(update={"header": session.header.model_copy(update={"id": sid})})
    out.clean, counts = sanitize_session(session, comp.instructions)
    out.redactions = counts.model_dump()
    if ahead:
        out.summary = summarize_session(comp, out.clean)
        out.facts = comp.backend.extract_ahead(extract_request(comp, out.clean, pending.first_turn))
    return out


def prepare_ahead(comp: Compilation, live: DirTree, pending: list[Pending]) -> Shared[Prepared] | None:
    """The pending sessions prepared on two cores, asked for in order (`get(i)`), for a pure backend
    and a run of many sessions; None: prepare them here, one by one (`prepare`)."""
    if not comp.backend.pure or len(pending) < AHEAD_MIN_SESSIONS:
        return None

    def parsed_here(i: int, _: Prepared) -> None:
        # The gate resolves this session's citations here and in its verifier's fork: parsed
        # once in this process, both have it (the child's parse stayed in the child).
        rel = layout.raw_session_path(pending[i].id)
        parse_session_cached(rel, live.read_bytes(rel))

    return Shared(lambda p: prepare(comp, live, p, ahead=True), pending, parsed_here)
