"""Shared pieces of the text scanners (brain.secrets, validators.injection).

A span is (start, end, kind): a half-open character range of the scanned text and what it is.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

Span = tuple[int, int, str]


class LazyPattern:
    """A regex compiled the first time it is used, then used as an `re.Pattern` (`search`,
    `finditer`, `groupindex`, ...). The scanners' ~50 patterns are tried only where their gates
    open, and a nightly run opens few of them, so none is compiled at every command's start."""

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self._source = (pattern, flags)

    def __getattr__(self, name: str):
        if name.startswith("__"):  # copy, pickle and friends asking: not a use
            raise AttributeError(name)
        compiled = re.compile(*self._source)
        # Kept on the instance: later uses find them at once, without coming back here.
        self.__dict__.update({attr: getattr(compiled, attr) for attr in _PATTERN_ATTRIBUTES})
        return getattr(compiled, name)


_PATTERN_ATTRIBUTES = ("search", "match", "fullmatch", "finditer", "findall", "sub", "subn", "split", "pattern", "flags",
                       "groups", "groupindex")

# A gate is a cheap substring test that must pass before a regex runs: each group of words needs
# one present (in the lower-cased text; in the text itself when a word has capitals). Regex
# scans dominate the X checks, and most documents open no gate at all.
Gate = tuple[tuple[str, ...], ...]


def gate_open(gate: Gate, text: str, lower: str) -> bool:
    """True when every group of the gate has a word in the text (capitalised words: exact case)."""
    if text is lower:  # one haystack (the phrase scanner passes its lower-cased text twice)
        for group in gate:
            for w in group:
                if w in lower:
                    break
            else:
                return False
        return True
    for group in gate:
        for w in group:
            if w in (lower if w == w.lower() else text):
                break
        else:
            return False
    return True


def disjoint(spans: Iterable[Span]) -> list[Span]:
    """Sorted spans with overlaps dropped (the earliest, then the longest, wins)."""
    out: list[Span] = []
    for span in sorted(spans, key=lambda s: (s[0], -s[1], s[2])):
        if out and span[0] < out[-1][1]:
            continue
        out.append(span)
    return out


def replace_spans(text: str, spans: list[Span], mark: Callable[[str], str]) -> str:
    """`text` with each of the sorted, disjoint `spans` replaced by `mark(kind)`."""
    parts, at = [], 0
    for start, end, kind in spans:
        parts += [text[at:start], mark(kind)]
        at = end
    return "".join(parts) + text[at:]
