"""Scoring a packet against a question's gold evidence (issue 5's definitions).

A gold turn is found when its text is in an admitted item (whitespace-normalised), or when an
admitted item cites it and cites at most 3 turns (a narrow citation points at the evidence; a
page citing fifty turns does not). The answer is in the packet when its normalised string is.
"""

from __future__ import annotations

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


def answer_in(items: Iterable[Item], answer: str | None) -> bool | None:
    """True when the answer string is in the packet; None for questions without an answer."""
    if not answer or not norm_answer(answer):
        return None
    packet = norm_answer(" ".join(i.text for i in items))
    return f" {norm_answer(answer)} " in f" {packet} "
