"""Summarize: `sessions/summaries/<id>.md` for each processed session, every sentence citing turns.

Runs after attach so that `topics` and links name pages that exist after this run.
"""

from __future__ import annotations

from brain import layout
from brain.citations import CitationTarget
from brain.page import Frontmatter, render_new
from brain.sessions import Session
from dream.backends.base import SessionSummary, SummarizeRequest
from dream.backends.offline import link_names
from dream.compile import Compilation


def summarize_session(comp: Compilation, session: Session) -> SessionSummary:
    req = SummarizeRequest(session=session, owner=comp.settings.owner, instructions=comp.instructions.text)
    return comp.backend.summarize(req)


def write_summaries(comp: Compilation, done: list[tuple[Session, SessionSummary]]) -> None:
    """Stage the summary of each session, in order."""
    for session, summary in done:
        comp.stage(layout.summary_path(session.id), summary_text(comp, session, summary))


def summary_text(comp: Compilation, session: Session, summary: SessionSummary) -> str:
    """A session's summary document, linking the pages the run knows."""
    numbers: dict[str, int] = {}
    parts = []
    names: dict[str, str] = {}  # name → the slug of its page
    for name in summary.topics:
        known = comp.resolver.lookup(name)
        if known and known.slug not in comp.instructions.forget:
            names.setdefault(name, known.slug)
    for sentence in summary.sentences:
        last = min(sentence.last_turn, session.turns[-1].n if session.turns else sentence.last_turn)
        target = str(CitationTarget.session(session.id, sentence.first_turn, max(last, sentence.first_turn)))
        n = numbers.setdefault(target, len(numbers) + 1)
        parts.append(f"{link_names(sentence.text, names)} [cite:{n}]")
    header = session.header
    fm = Frontmatter(
        title=summary.title,
        type="session",
        id=session.id,
        started=header.started or "",
        participants=list(header.participants),
        turns=len(session.turns),
        topics=list(dict.fromkeys(names.values())),
        sources={n: t for t, n in numbers.items()},
    )
    body = f"# {summary.title}\n\n" + (" ".join(parts) if parts else "Nothing in this session was worth keeping.") + "\n"
    return render_new(fm, body)
