"""How a memory card (a note) reads inside a context packet: one line an agent can weigh.

`[card event · caroline · seen 2023-06-27, 2y old, STALE · 75%] A friend made it … (conv-26-s4#t5) — why: birthday; dense`

type, scope (its topic page), freshness, confidence, a truncation marker when the statement was
shortened, and why search found it in a few words (docs/context.md describes each).
"""

from __future__ import annotations

import datetime as dt

from brain.search import SearchHit
from brain.tokens import estimate_tokens, truncate

#: Days after which a card of this kind is flagged STALE (facts age at different speeds).
AGE_LIMITS: dict[str, int] = {
    "preference": 365,
    "identity": 5 * 365,
    "relationship": 2 * 365,
    "project": 180,
    "event": 365,
    "decision": 365,
    "correction": 2 * 365,
    "learning": 3 * 365,
}
DEFAULT_AGE_LIMIT = 365
TRUNCATED = " …[truncated]"


def age_label(observed: dt.date, now: dt.date) -> str:
    """`today`, `5d old`, `3mo old`, `2y old` (future dates read `today`)."""
    days = (now - observed).days
    if days <= 0:
        return "today"
    if days < 60:
        return f"{days}d old"
    if days < 730:
        return f"{days // 30}mo old"
    return f"{days // 365}y old"


def freshness(meta: dict, now: dt.date) -> tuple[str, bool]:
    """(label, stale) of a card from its `observed` / `until` dates and kind."""
    observed = _date(meta.get("observed"))
    until = _date(meta.get("until"))
    if until is not None:
        return f"superseded {until.isoformat()}", True
    if observed is None:
        return "undated", False
    days = (now - observed).days
    stale = days > AGE_LIMITS.get(str(meta.get("kind")), DEFAULT_AGE_LIMIT)
    return f"seen {observed.isoformat()}, {age_label(observed, now)}", stale


def render_card(hit: SearchHit, statement: str, cites: str, now: dt.date, max_tokens: int) -> tuple[str, bool]:
    """(line, truncated): the card a search hit is, within `max_tokens`, the statement shortened first."""
    meta, confidence, why = hit.meta, hit.confidence, hit.brief()
    label, stale = freshness(meta, now)
    event = f" · event {meta['event_date']}" if meta.get("event_date") else ""
    conf = f"{round(100 * confidence)}%" if confidence is not None else "?%"
    head = f"[card {meta.get('kind', 'note')} · {meta.get('topic', '?')} · {label}{', STALE' if stale else ''}{event} · {conf}] "
    tail = f"{cites} — why: {why}"
    room = max_tokens - estimate_tokens(head + tail + " ")
    short = truncate(statement, room, TRUNCATED) if room > 0 else ""
    return f"{head}{short} {tail}", short != statement


def _date(value: object) -> dt.date | None:
    if isinstance(value, dt.date):
        return value
    try:
        return dt.date.fromisoformat(str(value)[:10]) if value else None
    except ValueError:
        return None
