"""Scoring a packet against a question's gold evidence, and an answer against the gold answer.

A gold turn is **shown** (`shown_gold`) when one admitted item holds it (brain.shown: its text,
or a citing item with 60 % of its content words). What counts is the evidence an agent can
read, not a citation to it. `cited_gold` is the older rule, kept for
comparison only: the turn's text is in an item, or an item citing at most 3 turns cites it. The
answer is in the packet when its normalised string is. A generated answer gets the LoCoMo paper's
token F1 against the gold answer (`token_f1`).
"""

from __future__ import annotations

import datetime as dt
import string
from collections import Counter
from collections.abc import Iterable
from typing import Protocol

from brain.shown import ItemText, normalised, stem

MAX_CITES = 3
#: Dropped before F1, as LoCoMo's normalize_answer drops them.
_ARTICLES = frozenset({"a", "an", "the", "and"})
_PUNCT = str.maketrans("", "", string.punctuation + "‘’“”–—")


class Item(Protocol):
    text: str
    cites: list[str]


def norm_ws(text: str) -> str:
    return " ".join(text.split())


#: Lower case, punctuation as spaces: the normalisation the shown rule uses too.
norm_answer = normalised


def shown_gold(items: Iterable[Item], gold: list[str], turn_text: dict[str, str]) -> set[str]:
    """The gold turns an admitted item shows (brain.shown: the rule the packer packs by)."""
    items = list(items)
    texts = [ItemText(i.text) for i in items]
    return {ref for ref in gold if any(t.shows(turn_text.get(ref, ""), ref in i.cites) for i, t in zip(items, texts))}


def cited_gold(items: Iterable[Item], gold: list[str], turn_text: dict[str, str]) -> set[str]:
    """The gold turns by the older, citation rule (comparison only)."""
    items = list(items)
    texts = [norm_ws(i.text) for i in items]
    found = set()
    for ref in gold:
        text = norm_ws(turn_text.get(ref, ""))
        if (text and any(text in t for t in texts)) or any(ref in i.cites and len(i.cites) <= MAX_CITES for i in items):
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
    return [stem(w) for w in text.lower().translate(_PUNCT).split() if w not in _ARTICLES]


def token_f1(answer: str, gold: str) -> float:
    """Token F1 of a generated answer against the gold answer (the LoCoMo paper's answer metric)."""
    got, want = answer_tokens(answer), answer_tokens(gold)
    same = sum((Counter(got) & Counter(want)).values())
    if not same:
        return 0.0
    precision, recall = same / len(got), same / len(want)
    return round(2 * precision * recall / (precision + recall), 4)
