"""The offline reader and judge of `dream eval --answer offline`: extractive and lexical, no model.

Reader: the packet sentence that shares the most content words with the question wins (its
item's speaker or page title count too; ties go to the earlier item; questions, and sentences
with no word beyond the question's, are skipped), cut to MAX_WORDS. A "when" question is
answered with the date that sentence mentions, made absolute against its item's date
("yesterday" in a turn of 2023-05-08 is 7 May 2023), else with the item's own date.
Judge: the rule in `judge`. Both are rough proxies of a model (docs/offline.md), deterministic.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

from dream.backends.base import AnswerDraft, AnswerRequest, JudgeRequest, Judgement
from dream.eval.metrics import norm_answer, token_f1
from dream.text.dates import MONTHS, WEEKDAYS, resolve_date
from dream.text.words import content_words, sentences

NOT_MENTIONED = "not mentioned"
MAX_WORDS = 25
#: The judge's threshold: an answer whose token F1 against the gold answer reaches it is correct.
JUDGE_F1 = 0.5
#: Lanes of a packet that are not evidence: the owner's guide and rules, the index of pages.
SKIPPED_SECTIONS = ("## Standing instructions", "## Index")
_WHEN_RE = re.compile(r"^\s*when\b|\b(?:what|which) (?:date|day|year|month|time)\b|\bhow long ago\b", re.I)
_ISO_RE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
_HEAD_RE = re.compile(r"^\[[^\]]*\]\s*")  # a turn's `[date · ref]`, a card's `[card kind · topic · …]`
_EVENT_RE = re.compile(r"\bevent (\d{4}-\d{2}-\d{2})\b")
_WHY_RE = re.compile(r"\s+— why: .*$")  # a card's retrieval reason
_CITE_NOTE_RE = re.compile(r"\s*\([^()]*#t[^()]*\)\s*$")  # `(conv-26-s1#t3 2023-05-08)`
#: How LoCoMo's gold answers place an event relative to a session date: "The week before 9 June 2023".
_RELATIVE_GOLD_RE = re.compile(
    r"^(?:the\s+)?(?:(one|two|three|four|\d+)\s+)?(day|week|weekend|monday|tuesday|wednesday|thursday|friday|saturday|sunday)s?"
    r"\s+(before|after|of)$", re.I)
_COUNTS = {"one": 1, "two": 2, "three": 3, "four": 4}
_MONTH_NAME = "(" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\.?"
_FULL_DATE_RES = (
    (re.compile(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b"), "ymd"),
    (re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?" + _MONTH_NAME + r",?\s+(\d{4})\b", re.I), "dmy"),
    (re.compile(r"\b" + _MONTH_NAME + r"\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})\b", re.I), "mdy"),
)


@dataclass(frozen=True)
class _Item:
    meta: str  # who said it, or the page and heading it is on
    body: str
    date: dt.date | None  # when it was said (a card: the event's date, else when it was seen)


def answer(req: AnswerRequest) -> AnswerDraft:
    """The best-matching packet sentence (or, for "when", its date), a few words long."""
    asked = set(content_words(req.question))
    best, best_key = None, (0, 0)
    for item in _items(req.packet):
        meta = set(content_words(item.meta)) & asked
        for sentence in sentences(item.body):
            said = set(content_words(sentence))
            if sentence.endswith("?") or not said - asked:
                continue  # a question, or only the question's own words: neither answers it
            own = said & asked
            key = (len(own | meta), len(own))
            if key > best_key:
                best, best_key = (item, sentence), key
    if best is None:
        return AnswerDraft(answer=NOT_MENTIONED)
    item, sentence = best
    if _WHEN_RE.search(req.question):
        ref = item.date or req.asked
        found = resolve_date(sentence, ref) if ref else None
        when = found[0] if found else item.date
        if when is not None:
            return AnswerDraft(answer=f"{when.day} {when:%B %Y}")
    return AnswerDraft(answer=_cut(sentence, asked))


def judge(req: JudgeRequest) -> Judgement:
    """Correct when the gold answer names a day or span of days (`7 May 2023`, `the week before
    9 June 2023`) and the answer a full date within it; else when the gold answer is in the answer
    (both normalised) or their token F1 reaches JUDGE_F1."""
    gold, got = norm_answer(req.gold), norm_answer(req.answer)
    if not gold:
        return Judgement(correct=False, reason="the gold answer is empty")
    window, got_dates = gold_days(req.gold), sorted({d for d, _, _ in date_spans(req.answer)})
    if window and got_dates:
        first, last = window
        span = first.isoformat() if first == last else f"{first.isoformat()} to {last.isoformat()}"
        inside = [d for d in got_dates if first <= d <= last]
        if inside:
            return Judgement(correct=True, reason=f"{inside[0].isoformat()} is within the gold answer's date ({span})")
        return Judgement(correct=False, reason=f"{got_dates[0].isoformat()} is outside the gold answer's date ({span})")
    if f" {gold} " in f" {got} ":
        return Judgement(correct=True, reason="the gold answer is in the answer")
    f1 = token_f1(req.answer, req.gold)
    if f1 >= JUDGE_F1:
        return Judgement(correct=True, reason=f"token F1 {f1:.2f} ≥ {JUDGE_F1}")
    return Judgement(correct=False, reason=f"token F1 {f1:.2f} < {JUDGE_F1} and the gold answer is not in the answer")


def gold_days(gold: str) -> tuple[dt.date, dt.date] | None:
    """The first and last day a gold answer allows: its date, or the span its relative phrase names
    (the day / week / weekend / Friday before or after a date, the week of a date); None otherwise."""
    spans = date_spans(gold)
    if len(spans) != 1:
        return None
    day, start, end = spans[0]
    prefix, rest = gold[:start].strip().lower(), gold[end:].strip(" .")
    if rest:
        return None
    if prefix in ("", "on"):
        return day, day
    m = _RELATIVE_GOLD_RE.match(prefix)
    if not m:
        return None
    count = (m.group(1) or "one").lower()
    n = int(count) if count.isdigit() else _COUNTS[count]
    unit, way = m.group(2).lower(), m.group(3).lower()
    if way == "of":
        monday = day - dt.timedelta(days=day.weekday())
        return (monday, monday + dt.timedelta(days=6)) if unit == "week" else None
    sign = -1 if way == "before" else 1
    if unit == "day":
        return (hit := day + dt.timedelta(days=sign * n)), hit
    if unit == "week":
        return (day - dt.timedelta(days=7 * n), day - dt.timedelta(days=7 * n - 6)) if sign < 0 else \
            (day + dt.timedelta(days=7 * n - 6), day + dt.timedelta(days=7 * n))
    target = WEEKDAYS["sunday" if unit == "weekend" else unit]
    step = (day.weekday() - target) % 7 or 7 if sign < 0 else (target - day.weekday()) % 7 or 7
    hit = day + dt.timedelta(days=sign * (step + 7 * (n - 1)))
    return (hit - dt.timedelta(days=1), hit) if unit == "weekend" else (hit, hit)  # a weekend: its Saturday and Sunday


def date_spans(text: str) -> list[tuple[dt.date, int, int]]:
    """Each full date (day, month and year) the text writes, with where it starts and ends, in order:
    `2023-05-07`, `7 May 2023`, `May 7th, 2023`."""
    found = []
    for regex, order in _FULL_DATE_RES:
        for m in regex.finditer(text):
            parts = dict(zip(order, m.groups()))
            month = parts["m"].lower()
            month_n = int(month) if month.isdigit() else MONTHS[month]
            try:
                found.append((dt.date(int(parts["y"]), month_n, int(parts["d"])), m.start(), m.end()))
            except ValueError:
                continue
    return sorted(found, key=lambda f: f[1])


def _items(packet: str) -> list[_Item]:
    """The evidence lines of a packet (markdown bullets of `brain context`, or plain lines)."""
    items, section, quoted_date = [], "", None
    for line in packet.splitlines():
        if line.startswith("#"):
            section = line.strip() if line.startswith("## ") else section
            continue
        text = line.strip()
        if not text or section in SKIPPED_SECTIONS or (text.startswith("(") and text.endswith(")")) or text.startswith("Quoted from "):
            continue
        if text.startswith("> "):  # a quoted turn, under the header line of its exchange
            text = f"[{quoted_date or ''}] {text[2:]}"
        text = text.removeprefix("- ")
        head = m.group(0) if (m := _HEAD_RE.match(text)) else ""
        rest = _CITE_NOTE_RE.sub("", _WHY_RE.sub("", text[len(head):]))
        event = _EVENT_RE.search(head)
        dates = _ISO_RE.findall(head) or _ISO_RE.findall(text)
        date = event.group(1) if event else (dates[0] if dates else None)
        if head and not rest.strip():  # the header line of quoted turns
            quoted_date = date
            continue
        card = head.startswith("[card")
        for part in [rest] if card else rest.split(" | "):  # an exchange: "Ana: … | Ben: …", one item per turn
            meta = ""
            if not card:
                who, sep, said = part.partition(": ")
                if sep and len(who) <= 80:
                    meta, part = who, said
            items.append(_Item(meta=meta, body=part, date=dt.date.fromisoformat(date) if date else None))
    return items


def _cut(sentence: str, asked: set[str]) -> str:
    """At most MAX_WORDS words, starting a little before the first word the question asks about."""
    words = sentence.split()
    if len(words) <= MAX_WORDS:
        return sentence
    first = next((i for i, w in enumerate(words) if set(content_words(w)) & asked), 0)
    start = max(0, min(first - 5, len(words) - MAX_WORDS))
    return " ".join(words[start : start + MAX_WORDS])
