"""Scoring a packet against a question's gold evidence, and an answer against the gold answer.

A gold turn is **shown** (`shown_gold`) when one admitted item holds it: the item's text contains
the turn's first 80 normalised characters, or the item cites the turn and holds at least 60 % of
the turn's content words (stemmed, stopwords out; for turns with 4 or more). What counts is the
evidence an agent can read, not a citation to it. `cited_gold` is the older rule, kept for
comparison only: the turn's text is in an item, or an item citing at most 3 turns cites it. The
answer is in the packet when its normalised string is. A generated answer gets the LoCoMo paper's
token F1 against the gold answer (`token_f1`).
"""

from __future__ import annotations

import datetime as dt
import re
import string
from collections import Counter
from collections.abc import Iterable
from typing import Protocol

MAX_CITES = 3
#: Dropped before F1, as LoCoMo's normalize_answer drops them.
_ARTICLES = frozenset({"a", "an", "the", "and"})
_PUNCT = str.maketrans("", "", string.punctuation + "‘’“”–—")


class Item(Protocol):
    text: str
    cites: list[str]


def norm_ws(text: str) -> str:
    return " ".join(text.split())


def norm_answer(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())


SHOWN_PREFIX = 80  # normalised characters of a turn an item must contain
SHOWN_WORDS = 0.6  # or: the share of the turn's content words a citing item must hold ...
SHOWN_MIN_WORDS = 4  # ... for a turn with at least this many


def content_words(text: str) -> set[str]:
    """Stemmed words without stopwords: what a turn says, for the word-share test of `shown_gold`."""
    from brain.search import STOPWORDS

    return {_stem(w) for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in STOPWORDS}


def shown_gold(items: Iterable[Item], gold: list[str], turn_text: dict[str, str]) -> set[str]:
    """The gold turns an admitted item shows (the module docstring's rule)."""
    items = list(items)
    texts = [f" {norm_answer(i.text)} " for i in items]
    words = [content_words(i.text) for i in items]
    found = set()
    for ref in gold:
        turn = turn_text.get(ref, "")
        prefix, own = norm_answer(turn)[:SHOWN_PREFIX], content_words(turn)
        for item, text, have in zip(items, texts, words):
            if prefix and f" {prefix}" in text and (len(prefix) == SHOWN_PREFIX or f" {prefix} " in text):
                found.add(ref)
            elif ref in item.cites and len(own) >= SHOWN_MIN_WORDS and len(own & have) >= SHOWN_WORDS * len(own):
                found.add(ref)
            else:
                continue
            break
    return found


def cited_gold(items: Iterable[Item], gold: list[str], turn_text: dict[str, str]) -> set[str]:
    """The gold turns by the older, citation rule (comparison only)."""
    items = list(items)
    texts = [norm_ws(i.text) for i in items]
    found = set()
    for ref in gold:
        text = norm_ws(turn_text.get(ref, ""))
        if text and any(text in t for t in texts):
            found.add(ref)
        elif any(ref in i.cites and len(i.cites) <= MAX_CITES for i in items):
            found.add(ref)
    return found


_MONTHS = {m: i for i, m in enumerate(["january", "february", "march", "april", "may", "june", "july", "august",
                                         "september", "october", "november", "december"], start=1)}


def iso_form(answer: str) -> str | None:
    """`7 May 2023` or `May 7, 2023` as `2023 05 07` (normalised ISO), when the answer is just a date."""
    words = norm_answer(answer).split()
    if len(words) != 3:
        return None
    if words[0].isdigit() and words[1] in _MONTHS:
        day, month, year = words
    elif words[0] in _MONTHS and words[1].isdigit():
        month, day, year = words
    else:
        return None
    try:
        return dt.date(int(year), _MONTHS[month], int(day)).isoformat().replace("-", " ")
    except ValueError:
        return None


def answer_in(items: Iterable[Item], answer: str | None) -> bool | None:
    """True when the answer string is in the packet; None for questions without an answer.

    A date answer also counts in ISO form (packets write dates as YYYY-MM-DD).
    """
    if not answer or not norm_answer(answer):
        return None
    packet = f" {norm_answer(' '.join(i.text for i in items))} "
    forms = [norm_answer(answer)] + [f for f in [iso_form(answer)] if f]
    return any(f" {form} " in packet for form in forms)


def answer_tokens(text: str) -> list[str]:
    """LoCoMo's answer normalisation: lower case, punctuation deleted, articles dropped, words stemmed."""
    return [_stem(w) for w in text.lower().translate(_PUNCT).split() if w not in _ARTICLES]


def _stem(word: str) -> str:
    """Plural and -ed/-ing endings off, in the spirit of Porter's step 1 (LoCoMo stems with Porter).

    Not dream.text.words.stem: that one turns "class" into "clas" but "classes" into "class".
    """
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith(("sses", "shes", "ches", "xes", "zes")):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")) and len(word) > 3:
        word = word[:-1]
    for suffix in ("ing", "ed"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def token_f1(answer: str, gold: str) -> float:
    """Token F1 of a generated answer against the gold answer (the LoCoMo paper's answer metric)."""
    got, want = answer_tokens(answer), answer_tokens(gold)
    same = sum((Counter(got) & Counter(want)).values())
    if not same:
        return 0.0
    precision, recall = same / len(got), same / len(want)
    return round(2 * precision * recall / (precision + recall), 4)


_MONTH_NAME = r"(" + "|".join(sorted({*_MONTHS, *(m[:3] for m in _MONTHS), "sept"}, key=len, reverse=True)) + r")\.?"
_FULL_DATE_RES = (
    (re.compile(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b"), "ymd"),
    (re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?" + _MONTH_NAME + r",?\s+(\d{4})\b", re.I), "dmy"),
    (re.compile(r"\b" + _MONTH_NAME + r"\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})\b", re.I), "mdy"),
)


def dates_in(text: str) -> set[dt.date]:
    """The full dates (day, month and year) a text writes: `2023-05-07`, `7 May 2023`, `May 7th, 2023`."""
    return {d for d, _, _ in date_spans(text)}


def date_spans(text: str) -> list[tuple[dt.date, int, int]]:
    """Each full date the text writes, with where it starts and ends, in order."""
    found = []
    for regex, order in _FULL_DATE_RES:
        for m in regex.finditer(text):
            parts = dict(zip(order, m.groups()))
            month = parts["m"].lower().rstrip(".")
            month_n = int(month) if month.isdigit() else next(n for name, n in _MONTHS.items() if name.startswith(month[:3]))
            try:
                found.append((dt.date(int(parts["y"]), month_n, int(parts["d"])), m.start(), m.end()))
            except ValueError:
                continue
    return sorted(found, key=lambda f: f[1])
