"""Characters a reader cannot see: zero-width and filler characters, bidi controls, Unicode tags.

They can hide text from the person reading a page while an agent still reads it, so transcript
text loses them as it is read (brain.sessions) and the X validators flag any that remain.
"""

from __future__ import annotations

from brain.patterns import LazyPattern, Span, replace_spans

_BIDI = frozenset(range(0x202A, 0x202F)) | frozenset(range(0x2066, 0x206A))
_INVISIBLE = frozenset({0x200B, 0x2060, 0x2061, 0x2062, 0x2063, 0x2064, 0x180E, 0x115F, 0x1160, 0x3164, 0xFFA0})
_JOINERS = frozenset({0x200C, 0x200D})
_BLACK_FLAG = 0x1F3F4
_CANDIDATES = LazyPattern(
    "[\u115f\u1160\u180e\u200b-\u200d\u202a-\u202e\u2060-\u2064\u2066-\u2069\u3164\ufeff\uffa0"
    "\U000e0000-\U000e007f\U000e0100-\U000e01ef]"
)


def _is_cjk(ch: str) -> bool:
    o = ord(ch)
    return 0x3400 <= o <= 0x9FFF or 0xF900 <= o <= 0xFAFF or 0x20000 <= o <= 0x3FFFF


def _char_kind(text: str, i: int) -> str | None:
    o = ord(text[i])
    if o in _BIDI:
        return "bidi"
    if o in _INVISIBLE or (o == 0xFEFF and i > 0):
        return "invisible"
    if 0xE0000 <= o <= 0xE007F:
        j = i
        while j > 0 and 0xE0000 <= ord(text[j - 1]) <= 0xE007F:
            j -= 1
        return None if j > 0 and ord(text[j - 1]) == _BLACK_FLAG else "tag"  # emoji subdivision flags
    if o in _JOINERS:
        before = text[i - 1] if i > 0 else " "
        after = text[i + 1] if i + 1 < len(text) else " "
        return "invisible" if before.isascii() and after.isascii() else None
    if 0xE0100 <= o <= 0xE01EF:  # allowed as one ideographic variation selector right after its ideograph
        return None if i > 0 and _is_cjk(text[i - 1]) else "invisible"
    return None


def invisible_spans(text: str) -> list[Span]:
    """Runs of invisible characters (zero-width, fillers, joiners inside ASCII words), bidi
    controls, and Unicode tag characters (which can smuggle hidden text). Joiners inside emoji,
    emoji flag tags and ideographic variation selectors are allowed."""
    if text.isascii():
        return []
    spans: list[Span] = []
    for m in _CANDIDATES.finditer(text):
        i = m.start()
        kind = _char_kind(text, i)
        if kind is None:
            continue
        if spans and spans[-1][1] == i and spans[-1][2] == kind:
            spans[-1] = (spans[-1][0], i + 1, kind)
        else:
            spans.append((i, i + 1, kind))
    return spans


def strip_invisible(text: str) -> str:
    """`text` without the characters `invisible_spans` reports (and without a leading BOM)."""
    return replace_spans(text, invisible_spans(text), lambda _kind: "").lstrip("\ufeff")
