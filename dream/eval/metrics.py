"""Scoring a packet against a question's gold evidence (issue 5's definitions).

A gold turn is found when its text is in an admitted item (whitespace-normalised), or when an
admitted item cites it and cites at most 3 turns (a narrow citation points at the evidence; a
page citing fifty turns does not). The answer is in the packet when its normalised string is.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable
from typing import Protocol

MAX_CITES = 3


class Item(Protocol):
    text: str
    cites: list[str]


def norm_ws(text: str) -> str:
    return " ".join(text.split())


def norm_answer(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())


def found_gold(items: Iterable[Item], gold: list[str], turn_text: dict[str, str]) -> set[str]:
    """The gold turns the admitted items carry."""
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
