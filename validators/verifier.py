"""The semantic verifier's inputs: the cited claims of a page and the evidence each one cites.

Dream's gate judges them with its backend (offline: lexical support, see docs/offline.md), so
this module never imports dream.
"""

from __future__ import annotations

import re

from brain.model import Record
from brain.page import Page
from brain.view import BrainView
from validators.documents import per_view, prose_lines

_CITE_RE = re.compile(r"\[cite:(\d+)\]")


class Claim(Record):
    path: str
    line: int
    text: str
    cites: list[int]


class ClaimVerdict(Record):
    path: str
    line: int
    claim: str
    label: str  # supported | unsupported | contradicted
    score: float
    reason: str


def claims_of(page: Page) -> list[Claim]:
    """Every bullet, and every sentence of a paragraph, that carries `[cite:N]` markers."""
    out: list[Claim] = []
    for lineno, stripped in prose_lines(page):
        if not stripped or stripped.startswith("#") or "[cite:" not in stripped:
            continue
        if stripped.startswith(("- ", "* ", "+ ")) or re.match(r"^\d+[.)] ", stripped):
            pieces = [stripped]
        else:
            pieces = _split_sentences(stripped)
        for piece in pieces:
            cites = [int(n) for n in _CITE_RE.findall(piece)]
            if cites:
                out.append(Claim(path=page.path, line=lineno, text=piece, cites=cites))
    return out


def _split_sentences(text: str) -> list[str]:
    """Sentences, each keeping the cite markers that follow its full stop."""
    pieces, start = [], 0
    for m in re.finditer(r"[.!?](?:\s*\[cite:\d+\])*(?=\s+[A-Z\[]|\s*$)", text):
        pieces.append(text[start : m.end()].strip())
        start = m.end()
    if text[start:].strip():
        pieces.append(text[start:].strip())
    return pieces


def evidence_for(view: BrainView, page: Page, cites: list[int]) -> list[str]:
    """The cited text of each source, as 'speaker: text' so names count as support."""
    texts: list[str] = []
    known = _evidence(view)
    for n in cites:
        raw = page.frontmatter.sources.get(n)
        if raw is None:
            continue
        found = known.get(raw)
        if found is None:
            found = known[raw] = [] if view.check_target(raw) is not None else view.cited_text(raw)
        texts += found
    return texts


@per_view
def _evidence(view: BrainView) -> dict[str, list[str]]:
    """Evidence texts by target string: the notes of a topic cite the same turns again and again."""
    return {}
