"""Whether a packet item shows a turn: the rule `brain context` packs by and `dream eval` scores by.

An item shows a turn when its text contains the turn's first 80 normalised characters, or when it
cites the turn and holds at least 60 % of the turn's content words (stemmed, stopwords out; for
turns of 4 or more). A citation alone shows nothing: a page line that cites a turn but lost the
answer (the duration a "how long" question asks for) does not make the turn redundant.
"""

from __future__ import annotations

import re

from brain.search import STOPWORDS

PREFIX = 80  # normalised characters of the turn the item must contain
SHARE = 0.6  # or: the share of the turn's content words a citing item must hold ...
MIN_WORDS = 4  # ... for a turn with at least this many


def normalised(text: str) -> str:
    """Lower case, punctuation to spaces, spaces collapsed."""
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())


def stem(word: str) -> str:
    """Plural and -ed/-ing endings off, in the spirit of Porter's step 1 (LoCoMo stems with Porter)."""
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


def content_words(text: str) -> set[str]:
    """Stemmed words without stopwords: what a text says, for the word-share test."""
    return {stem(w) for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in STOPWORDS}


class ItemText:
    """An item's text, normalised once, asked about several turns."""

    def __init__(self, text: str) -> None:
        self.norm = f" {normalised(text)} "
        self.words = content_words(text)

    def shows(self, turn: str, cites: bool) -> bool:
        """True when the item shows `turn` (`cites`: the item cites it)."""
        prefix = normalised(turn)[:PREFIX]
        if prefix and f" {prefix}" in self.norm and (len(prefix) == PREFIX or f" {prefix} " in self.norm):
            return True
        own = content_words(turn) if cites else set()
        return len(own) >= MIN_WORDS and len(own & self.words) >= SHARE * len(own)
