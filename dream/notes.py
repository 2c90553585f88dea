"""Memory cards: one fact per file under `notes/<topic>/<slug>.md` (docs/FORMATS.md).

Notes are Dream's durable fact store. A page is compiled from the notes of its topic: current
notes become its statements, superseded notes (with `until` and `superseded_by`) its History.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Container

from pydantic import ConfigDict, Field

from brain import layout
from brain.model import Model, empty_list
from brain.page import Frontmatter, Page, render_new
from dream.text.words import clean_statement


class Note(Model):
    model_config = ConfigDict(extra="forbid", frozen=True)
    path: str
    statement: str
    kind: str
    topic: str
    confidence: float
    observed: dt.date
    sources: list[str]  # citation targets, first is the turn that stated it
    event_date: dt.date | None = None
    slot: str | None = None
    value: str | None = None
    mentions: list[str] = Field(default_factory=empty_list)  # slugs of other pages it names
    until: dt.date | None = None
    superseded_by: str | None = None  # citation target of the turn that changed it

    @property
    def current(self) -> bool:
        return self.until is None


def note_from_page(page: Page) -> Note | None:
    """The note a parsed card holds; None when the card is not one of Dream's (hand-written, odd)."""
    fm = page.frontmatter
    extra = fm.extras()
    try:
        statement = page.body.split("[cite:", 1)[0].strip() or fm.title
        return Note(
            path=page.path,
            statement=statement,
            kind=str(extra.get("kind", "learning")),
            topic=str(extra.get("topic", page.path.split("/")[1])),
            confidence=float(extra.get("confidence", 0.5)),
            observed=_date(extra.get("observed")) or fm.created or dt.date(1970, 1, 1),
            sources=[fm.sources[k] for k in sorted(fm.sources)],
            event_date=_date(extra.get("event_date")),
            slot=extra.get("slot"),
            value=extra.get("value"),
            mentions=[str(m) for m in extra.get("mentions", []) or []],
            until=_date(extra.get("until")),
            superseded_by=extra.get("superseded_by"),
        )
    except (TypeError, ValueError):
        return None


def _date(value: object) -> dt.date | None:
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    if isinstance(value, str):
        try:
            return dt.date.fromisoformat(value[:10])
        except ValueError:
            return None
    return None


def render_note(note: Note) -> str:
    """A card: front matter in FORMATS.md order, then the statement citing every source."""
    extras: dict[str, object] = {
        "kind": note.kind,
        "topic": note.topic,
        "confidence": round(note.confidence, 2),
        "observed": note.observed,
    }
    for name in _OPTIONAL:
        value = getattr(note, name)
        if value:
            extras[name] = sorted(value) if name == "mentions" else value
    fm = Frontmatter(
        title=clean_statement(note.statement, 120).rstrip("."),
        type="note",
        sources={i: s for i, s in enumerate(note.sources, start=1)},
        **extras,
    )
    cites = "".join(f"[cite:{i}]" for i in range(1, len(note.sources) + 1))
    return render_new(fm, f"{note.statement} {cites}\n")


#: A card's optional front-matter fields, written only when set, in this order.
_OPTIONAL = ("event_date", "slot", "value", "mentions", "until", "superseded_by")


def note_slug(statement: str, taken: Container[str]) -> str:
    base = layout.slugify(statement, fallback="fact")[:60].rstrip("-")
    slug, i = base, 2
    while slug in taken:
        slug, i = f"{base}-{i}", i + 1
    return slug
