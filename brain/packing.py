"""The packer of `brain context`: admission of candidate items into the token budget, lane by lane.

Each candidate (`Cand`) is offered with its lane's cap; `Packer` charges its tokens or records why
it was not admitted, and grows an admitted item when a neighbouring turn joins it (an exchange) or
a statement of the same page section does. `window` cuts a turn to the passage a question asks about;
`render_card` is the one line a memory card reads as (its parts are described in docs/context.md):
`[card event · caroline · seen 2023-06-27, 2y old, STALE · 75%] A friend made it … (conv-26-s4#t5) — why: birthday; dense`
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from brain.tokens import estimate_tokens, truncate

if TYPE_CHECKING:
    from brain.search import SearchHit

LANE_OVERHEAD = 5  # tokens for a lane's heading in the printed packet
_SENTENCE_RE = re.compile(r"(?<=[.!?])\s+")
#: A sentence that only reacts to the other speaker ("Thanks, Melanie!", "Wow, that looks great!").
_REACTION_RE = re.compile(
    r"\s*(?:wow|woah|whoa|thanks|thank you|thx|congrats|congratulations|aww+|omg|haha\w*|lol|yay|yeah|yep|yes|nice|"
    r"cool|great|awesome|amazing|sounds|hey|hi|hello|glad|so glad|good luck|oh|sweet|lovely|ooh|totally|definitely|"
    r"absolutely|i agree|agreed)\b", re.I)


@dataclass
class Cand:
    lane: str
    ref: str
    text: str
    cites: list[str]
    reason: str
    tokens: int = field(init=False)
    admitted: bool = False
    why_not: str = ""
    blocker: "Cand | None" = None  # the admitted item that made this one redundant (its ref may grow: an exchange)
    shown: list[tuple[int, str]] = field(default_factory=list)  # a turn item's (turn number, "speaker: text")
    title: str = ""  # a statement's "page › heading", and its lines (more than one when grouped)
    lines: list[str] = field(default_factory=list)
    date: str = ""
    confidence: float | None = None  # a card's
    freshness: str = ""  # a card's `seen <date>, <age>` (STALE marked), or the date of a turn or statement

    def __post_init__(self) -> None:
        self.tokens = estimate_tokens(self.text)


class Packer:
    """Admission bookkeeping: the tokens left, per-lane use, and every candidate in order."""

    def __init__(self, avail: int) -> None:
        self.avail = avail
        self.left = avail
        self.cands: list[Cand] = []
        self._lane_used: dict[str, int] = {}

    def overhead(self, lane: str) -> int:
        return 0 if lane in self._lane_used else LANE_OVERHEAD

    def _take(self, lane: str, need: int, lane_cap: int | None) -> str:
        """Charge `need` tokens to `lane` when they fit what is left and the lane's cap; else why not."""
        lane_room = None if lane_cap is None else lane_cap - self._lane_used.get(lane, 0)
        if need > self.left:
            return f"needs {need} tokens, {self.left} left in the budget"
        if lane_room is not None and need > lane_room:
            return f"needs {need} tokens, {max(lane_room, 0)} left in the {lane} lane's share"
        self.left -= need
        self._lane_used[lane] = self._lane_used.get(lane, 0) + need
        return ""

    def offer(self, cand: Cand, lane_cap: int | None) -> bool:
        """Admit `cand` when it fits what is left (and its lane's cap); else record why not."""
        if cand not in self.cands:
            self.cands.append(cand)
        cand.why_not = self._take(cand.lane, cand.tokens + self.overhead(cand.lane), lane_cap)
        cand.admitted = not cand.why_not
        return cand.admitted

    def _grow(self, group: Cand, text: str) -> bool:
        """Replace the admitted `group`'s text by the longer `text` when the difference fits (the
        evidence lanes it serves have no cap of their own)."""
        if self._take(group.lane, estimate_tokens(text) - group.tokens, None):
            return False
        group.text, group.tokens = text, estimate_tokens(text)
        return True

    def join(self, group: Cand, cand: Cand) -> bool:
        """Add the statement `cand` to the admitted statement `group` of the same page section when the
        longer item fits: the "page › heading" title is printed once."""
        lines = group.lines + cand.lines
        if not self._grow(group, f"{group.title}: " + " · ".join(lines)):
            return False
        group.lines = lines
        group.ref += "," + cand.ref.partition("#")[2]
        group.cites = group.cites + [c for c in cand.cites if c not in group.cites]
        group.reason += f"; with {cand.ref.partition('#')[2]}: {cand.reason}"
        return True

    def merge(self, group: Cand, cand: Cand) -> bool:
        """Add the turn `cand` to the admitted exchange `group` (the turn before or after it) when the
        longer item fits: one header for both. `cand` is then not an item of its own."""
        shown = sorted(group.shown + cand.shown)
        sid = group.cites[0].removeprefix("session:").rpartition("#t")[0]
        first, last = shown[0][0], shown[-1][0]
        if not self._grow(group, f"[{group.date} · {sid}#t{first}-t{last}] " + " | ".join(line for _, line in shown)):
            return False
        group.shown = shown
        group.ref = f"session:{sid}#t{first}-t{last}"
        group.cites = [f"session:{sid}#t{n}" for n, _ in shown]
        group.reason += f"; with t{cand.shown[0][0]}: {cand.reason}"
        return True


def window(text: str, terms: dict[str, float], tokens: int) -> str:
    """The run of sentences that fits `tokens` with the most weight of `terms` in it, with `…` where it was cut.

    When no sentence fits whole, the best sentence is cut at a word boundary.
    """
    sentences = _SENTENCE_RE.split(text)
    marker = " …"
    room = tokens - estimate_tokens(marker + marker)
    scores = [sum(w for t, w in terms.items() if t[:5] in low) for low in (s.lower() for s in sentences)]
    best, best_score = (0, 0), -1
    # With no query word anywhere (a reply raised by its neighbour), what the turn says comes
    # after its opening reaction: "Thanks, Melanie! I painted it after …".
    first = 0
    if not any(scores):
        while first < len(sentences) - 1 and (_REACTION_RE.match(sentences[first]) or len(sentences[first].split()) <= 3):
            first += 1
    for start in range(first, len(sentences)):
        size, total, end = 0, 0, start
        while end < len(sentences) and size + estimate_tokens(sentences[end]) + 1 <= room:
            size += estimate_tokens(sentences[end]) + 1
            total += scores[end]
            end += 1
        if end > start and total > best_score:
            best, best_score = (start, end), total
    start, end = best
    if end <= start:  # not one sentence fits: the best one, cut
        start = max(range(len(sentences)), key=lambda i: (scores[i], -i)) if any(scores) else first
        body = truncate(sentences[start], room + estimate_tokens(marker), marker)
        return ("… " if start else "") + body
    body = " ".join(sentences[start:end])
    return ("… " if start else "") + body + (marker if end < len(sentences) else "")


def exchange_for(cand: Cand, state: Packer) -> Cand | None:
    """The admitted turn item of the same session whose turns are next to `cand`'s, while it shows
    fewer than 3 (an exchange cites at most 3 turns, so each stays checkable evidence)."""
    n = cand.shown[0][0]
    sid = cand.cites[0].rpartition("#t")[0]
    for other in state.cands:
        if (other.admitted and other.lane == "turns" and other.shown and len(other.shown) < 3
                and other.cites[0].rpartition("#t")[0] == sid
                and (n == other.shown[0][0] - 1 or n == other.shown[-1][0] + 1)):
            return other
    return None


def section_for(cand: Cand, state: Packer) -> Cand | None:
    """The admitted statement of the same page section that `cand` can join: together they cite at
    most 3 turns (so each stays checkable evidence)."""
    if not cand.lines or not cand.cites:
        return None
    for other in state.cands:
        if (other.admitted and other.lines and other.title == cand.title
                and len(set(other.cites) | set(cand.cites)) <= 3):
            return other
    return None


# -- memory cards -----------------------------------------------------------------------------
#: Days after which a card of this kind is flagged STALE (facts age at different speeds).
AGE_LIMITS: dict[str, int] = {"preference": 365, "identity": 5 * 365, "relationship": 2 * 365, "project": 180, "event": 365,
                              "decision": 365, "correction": 2 * 365, "learning": 3 * 365,
                              "task": 30, "command": 365}  # a project's open tasks: a month later, ask before trusting the list
DEFAULT_AGE_LIMIT = 365


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
    short = truncate(statement, room) if room > 0 else ""
    return f"{head}{short} {tail}", short != statement


def _date(value: object) -> dt.date | None:
    if isinstance(value, dt.date):
        return value
    try:
        return dt.date.fromisoformat(str(value)[:10]) if value else None
    except ValueError:
        return None
