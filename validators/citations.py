"""C checks: `[cite:N]` markers against the `sources` mapping, and where each source points.

They read parsed documents only (an unreadable one already has an F finding). Resolving a
session target reads that raw session once (BrainView caches it), and only when it is cited.
Whether a claim is supported by its evidence is the semantic verifier's job, not a C check.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from brain.citations import CitationTarget
from brain.page import Page
from brain.view import BrainView
from validators.documents import parse_target, prose_lines, source_lines
from validators.registry import Item, check


def _targets(page: Page) -> Iterator[tuple[int, int, str, CitationTarget | str]]:
    """(n, line, raw target, parsed target or why it is malformed) per source entry."""
    lines = source_lines(page)
    for n, raw in sorted(page.frontmatter.sources.items()):
        yield n, lines[n], raw, parse_target(raw)


@check("C001", "error", "[cite:N] with no source N in the front matter")
def cite_without_source(view: BrainView) -> Iterator[Item]:
    for path, page in view.docs.items():
        for cite in page.cites:
            if cite.n not in page.frontmatter.sources:
                yield path, cite.line, f"[cite:{cite.n}] has no source"


@check("C002", "warning", "source N that no [cite:N] in the body uses")
def source_never_cited(view: BrainView) -> Iterator[Item]:
    for path, page in view.docs.items():
        if not page.frontmatter.sources:
            continue
        used = {c.n for c in page.cites}
        lines = source_lines(page)
        for n in sorted(page.frontmatter.sources):
            if n not in used:
                yield path, lines[n], f"source {n} is never cited; cite it as [cite:{n}] or remove it"


@check("C003", "error", "malformed citation target (not session:<id>#t<n>[-t<m>], source:<connector>/<id> or note:<path>.md)")
def malformed_target(view: BrainView) -> Iterator[Item]:
    for path, page in view.docs.items():
        for n, line, _raw, target in _targets(page):
            if isinstance(target, str):
                yield path, line, f"source {n}: {target}"


@check("C004", "error", "citation target that does not resolve: no such session, turn, source record or note")
def unresolved_target(view: BrainView) -> Iterator[Item]:
    for path, page in view.docs.items():
        for n, line, raw, target in _targets(page):
            reason = None if isinstance(target, str) else view.check_target(raw)
            if reason is not None:
                yield path, line, f"source {n}: {reason}; fix the target or remove the source"


@check("C005", "warning", "[cite:N] written inside code, where it cites nothing")
def cite_in_code(view: BrainView) -> Iterator[Item]:
    for path, page in view.docs.items():
        for ref in page.code_refs:
            if ref.text.startswith("[cite:"):
                yield path, ref.line, f"{ref.text} is inside code and cites nothing; move it out of the code span or fence"


# Lines of Dream's that state nothing, so need no citation: a list of links or of names (a
# Related section), the pointers to what a page leaves out, the line of a session with nothing to keep.
_NOT_A_CLAIM = re.compile(
    r"(?:[-*+]\s+)?(?:!?\[\[[^\]\n]+\]\](?:\s*[,·]\s*!?\[\[[^\]\n]+\]\])*"
    r"|[A-Z][\w'’.&-]*(?:\s+[A-Z&][\w'’.&-]*){0,5}"
    r"|… \d+ older fact\(s\) are in notes/\S+"
    r"|… and \d+ more \(brain backlinks [\w.-]+\)"
    r"|Nothing in this session was worth keeping\.)"
)


def _new_lines(view: BrainView, path: str, page: Page) -> Iterator[tuple[int, str]]:
    """(line, text) of the body lines a run adds to a document: not in its live version (those
    are the owner's, or checked before), and not inside code blocks."""
    below = view.below.doc(path) if view.below is not None else None
    before = {line.strip() for line in below.body.splitlines()} if below is not None else set()
    return ((line, text) for line, text in prose_lines(page) if text not in before)


@check("C006", "error", "a line a Dream run adds without a [cite:N] (checked on what a run stages)")
def uncited_claim(view: BrainView) -> Iterator[Item]:
    if view.focus is None:  # `brain validate`: the owner's own lines need no citation
        return
    for path, page in view.docs.items():
        for line, text in _new_lines(view, path, page):
            if text and not text.startswith(("#", "|", ">", "<!--")) and "[cite:" not in text and not _NOT_A_CLAIM.fullmatch(text):
                # The line itself is not quoted: it is unchecked text, and reasons go into commit messages.
                yield path, line, "a statement without [cite:N]: every claim Dream writes cites its evidence"
