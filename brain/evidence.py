"""What a `[cite:N]` of a document points at: the cited turns, connector record or note.

Used by `brain cite`; a missing source, a malformed target or one that does not resolve is a
NotFoundError/BrainError naming the file and the line of the source in the front matter.
"""

from __future__ import annotations

import re

from pydantic import ConfigDict, Field

from brain import layout
from brain.citations import CitationError, CitationTarget
from brain.errors import BrainError, NotFoundError
from brain.model import Model
from brain.page import Page
from brain.sessions import turn_evidence
from brain.view import BrainView


class EvidenceItem(Model):
    """One cited turn (turn/speaker/time set) or one record or note (fields set)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    label: str
    text: str
    turn: int | None = None
    speaker: str | None = None
    time: str | None = None
    fields: dict[str, str] = Field(default_factory=dict)


class Evidence(Model):
    model_config = ConfigDict(extra="forbid", frozen=True)
    path: str
    n: int
    target: str
    items: list[EvidenceItem]


def cite_evidence(view: BrainView, path: str, n: int) -> Evidence:
    """The evidence behind `[cite:n]` of the document at `path`."""
    doc = view.docs.get(path)
    if doc is None:
        raise view.errors.get(path) or NotFoundError(f"{path} is not a page, note or summary")
    sources = doc.frontmatter.sources
    if n not in sources:
        have = ", ".join(str(k) for k in sorted(sources))
        raise NotFoundError(f"{path} has no source {n}", f"its sources are {have}" if have else "its front matter has no sources")
    raw = sources[n]
    where = f"{path}:{source_line(doc, n)}"
    try:
        target = CitationTarget.parse(raw)
    except CitationError as exc:
        raise BrainError(f"{where}: source {n} is malformed: {exc}", "fix the target in the front matter") from None
    problem = view.check_target(raw)
    if problem:
        raise NotFoundError(f"{where}: source {n} does not resolve: {problem}", "fix the target or restore what it cites")
    return Evidence(path=path, n=n, target=str(target), items=_items(view, target))


def _items(view: BrainView, target: CitationTarget) -> list[EvidenceItem]:
    if target.kind == "session":
        session = view.session(target.ref)
        turns = [t for t in (session.turn(k) for k in target.turns) if t is not None] if session else []
        return [EvidenceItem(label=f"session:{target.ref}#t{t.n} {t.speaker or t.role}" + (f" {t.time}" if t.time else ""),
                             text=turn_evidence(t), turn=t.n, speaker=t.speaker or t.role, time=t.time) for t in turns]
    if target.kind == "source":
        rec = view.source_records[target.ref]
        return [EvidenceItem(label=f"{target} ({rec.kind}, {rec.path})", text=rec.text, fields=rec.fields)]
    note = view.docs.get(f"{layout.NOTES}/{target.ref}")
    text = note.body.strip() if note else view.tree.read_bytes(f"{layout.NOTES}/{target.ref}").decode("utf-8", "replace")
    return [EvidenceItem(label=f"{target} ({layout.NOTES}/{target.ref})", text=text)]


def source_line(doc: Page, n: int) -> int:
    """The line of `n: <target>` under `sources:` in the front matter (the key's line if not found)."""
    start = doc.key_lines.get("sources", 1)
    lines = (doc.source_text or "").splitlines()
    pattern = re.compile(rf"^\s+['\"]?{n}['\"]?\s*:")
    for lineno in range(start, min(len(lines), doc.body_line - 1) + 1):
        if pattern.match(lines[lineno - 1]):
            return lineno
    return start
