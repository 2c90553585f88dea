"""Token estimates and text cutting for budgets (context packets, the index, the eval baselines).

No offline tokenizer matches Claude's (DEPENDENCIES.md), so a token is estimated as 3.5
characters, calibrated from the `usage.input_tokens` of real responses: ceil(chars / 3.5).
"""

from __future__ import annotations

import math

TOKEN_CHARS = 3.5


def estimate_tokens(text: str) -> int:
    """Estimated tokens of `text`: ceil(len / 3.5); 0 for the empty string."""
    return math.ceil(len(text) / TOKEN_CHARS)


def truncate(text: str, tokens: int, marker: str = " …[truncated]") -> str:
    """`text` cut at a word boundary so that it plus `marker` fits `tokens`; unchanged when it fits."""
    if estimate_tokens(text) <= tokens:
        return text
    room = int(tokens * TOKEN_CHARS) - len(marker)  # the most characters that estimate to `tokens`
    if room <= 0:
        return ""
    cut = text[:room]
    space = cut.rfind(" ")
    if space > room // 2:
        cut = cut[:space]
    return cut.rstrip() + marker
