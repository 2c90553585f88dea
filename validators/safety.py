"""X checks: secrets and instructions aimed at an agent in what agents read.

Scanned: every file under knowledge/ and notes/, session summaries, and the generated indexes
(knowledge/index.md, knowledge/log.md, sessions/index.md); raw sessions are input and are not.
Each file is read once per run. The text rules live in brain.secrets, brain.invisible and
validators.injection.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from collections.abc import Container, Iterator
from dataclasses import dataclass
from functools import cached_property

from brain import layout
from brain.invisible import strip_invisible
from brain.patterns import Span
from brain.secrets import secret_spans
from brain.tree import text_if_exists
from brain.view import BrainView
from validators.documents import per_view
from validators.injection import injection_spans
from validators.registry import Item, check

_ROOTS = (layout.KNOWLEDGE + "/", layout.NOTES + "/", layout.SESSIONS_SUMMARIES + "/")
_PHRASE_KINDS = frozenset({"override", "role", "system-prompt", "exfiltration"})
_QUOTE_IT = "remove it, or quote it inside a '> [!untrusted]' callout"


@dataclass
class _Scan:
    path: str
    text: str
    secrets: list[Span]
    injections: list[Span]

    @cached_property
    def _newlines(self) -> list[int]:
        """Offsets of the text's newlines, found when first asked: most texts have nothing to point at."""
        return [m.start() for m in re.finditer("\n", self.text)]

    def where(self, start: int) -> tuple[int, int]:
        """1-based line and column (in characters) of an offset."""
        i = bisect.bisect_left(self._newlines, start)
        return i + 1, start - (self._newlines[i - 1] + 1 if i else 0) + 1


@per_view
def _scans(view: BrainView) -> list[_Scan]:
    out = []
    for rel in view.checked_files:
        if not (rel.startswith(_ROOTS) or rel in layout.GENERATED) or view.tree.is_symlink(rel):
            continue
        page = view.docs.get(rel)  # a parsed document's text is at hand
        try:
            text = page.source_text if page is not None else text_if_exists(view.tree, rel)
        except OSError:
            continue  # unreadable: nothing to scan
        if text is None or "\x00" in text:
            continue  # binary: S001/F001 report it; a regex over it means nothing
        out.append(_Scan(rel, text, secret_spans(text), injection_spans(text)))
    return out


def _snippet(text: str, limit: int = 60) -> str:
    flat = " ".join(strip_invisible(text).split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def _chars(text: str) -> str:
    codes = list(dict.fromkeys(text))
    names = ", ".join(f"U+{ord(c):04X} {unicodedata.name(c, 'UNNAMED')}" for c in codes[:3])
    return names + (", ..." if len(codes) > 3 else "")


@check("X001", "error", "secret: API key, token, private key, JWT, password in a URL or stated in prose")
def secrets(view: BrainView) -> Iterator[Item]:
    for scan in _scans(view):
        for start, _end, kind in scan.secrets:
            line, col = scan.where(start)
            yield scan.path, line, f"possible secret ({kind}) at column {col}; remove it from the Brain, and rotate it if it is real"


def _injections(view: BrainView, kinds: Container[str]) -> Iterator[tuple[str, int, int, str, str]]:
    """(path, line, column, kind, text) of each injection span of one of `kinds`."""
    for scan in _scans(view):
        for start, end, kind in scan.injections:
            if kind in kinds:
                line, col = scan.where(start)
                yield scan.path, line, col, kind, scan.text[start:end]


@check("X002", "error", "instruction aimed at an agent (ignore previous instructions, system prompt, send … to …)")
def injected_instructions(view: BrainView) -> Iterator[Item]:
    for path, line, _col, kind, text in _injections(view, _PHRASE_KINDS):
        yield path, line, f"instruction aimed at an agent ({kind}): '{_snippet(text)}'; {_QUOTE_IT}"


@check("X003", "error", "hidden HTML comment containing a directive")
def hidden_comment(view: BrainView) -> Iterator[Item]:
    for path, line, _col, _kind, text in _injections(view, ("hidden-comment",)):
        yield path, line, f"hidden HTML comment with a directive: '{_snippet(text)}'; {_QUOTE_IT}"


@check("X004", "warning", "invisible character (zero-width space, word joiner, filler) that hides or splits text")
def invisible_chars(view: BrainView) -> Iterator[Item]:
    for path, line, col, _kind, text in _injections(view, ("invisible",)):
        yield path, line, f"invisible character ({_chars(text)}) at column {col}; remove it"


@check("X005", "error", "bidi control or Unicode tag characters that make text read other than it is")
def bidi_or_tag_chars(view: BrainView) -> Iterator[Item]:
    for path, line, col, kind, text in _injections(view, ("bidi", "tag")):
        what = "bidi control" if kind == "bidi" else "Unicode tag characters (hidden text)"
        yield path, line, f"{what} ({_chars(text)}) at column {col}; remove it"
