"""The units search ranks and packets carry: one chunk per raw turn, memory card, or page statement.

`chunks_of(rel, data)` reads one Brain file (a raw session, a note, a page or a session summary)
into chunks. A page or summary is cut into statements — a list item, or a sentence with the
`[cite:N]` markers that end it — so that each chunk cites only the few turns it rests on, and a
packet spends its budget on statements rather than whole pages. Every chunk knows its date.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from typing import NamedTuple

from brain import layout
from brain.citations import CitationError, CitationTarget, expand_session_cites
from brain.errors import PageError
from brain.page import Page, parse_page
from brain.sessions import parse_session

KINDS = ("page", "summary", "note", "turn")
_CITE_RE = re.compile(r"\[cite:(\d{1,6})\]")
_LINK_RE = re.compile(r"\[\[([^\[\]\n|#]*)(?:#[^\[\]\n|]*)?(?:\|([^\[\]\n]*))?\]\]")
_HEADING_RE = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_ITEM_RE = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
# A statement ends after its cite markers: "… powerful. [cite:1] Next …" → two statements.
_STATEMENT_END_RE = re.compile(r"((?:\s*\[cite:\d{1,6}\])+)\s+(?=\S)")
MAX_STATEMENT_CHARS = 1200


@dataclass(slots=True)
class Chunk:
    """One searchable unit. Plain dataclass, not pydantic: a large Brain has 100,000s of them."""

    ref: str  # session:<id>#t<n> | notes/<topic>/<slug>.md | <path>#L<a>-L<b>
    kind: str  # one of KINDS
    path: str  # the file it was read from
    title: str  # page title › heading, card title, or "speaker · session id"
    text: str  # markdown as written (cites as [cite:N] for pages, notes and summaries)
    cites: list[str] = field(default_factory=list)  # session:<id>#t<n>, expanded
    date: str | None = None  # YYYY-MM-DD: turn time, card observed / event date, page updated
    confidence: float | None = None
    meta: dict = field(default_factory=dict)  # card: kind, topic, observed, event_date, until; turn: speaker


class DocInfo(NamedTuple):
    """What ranking pages needs of a readable document (brain.indexing.page_ranks)."""

    links: list[str]  # the [[link]] targets it names, each once, sorted
    aliases: list[str]  # its front matter's aliases
    updated: str | None  # its front matter's `updated` date, YYYY-MM-DD


def chunks_of(rel: str, data: bytes) -> list[Chunk]:
    """Chunks of one file of the Brain; [] for a file search does not read or cannot parse."""
    return read_document(rel, data)[0]


def read_document(rel: str, data: bytes) -> tuple[list[Chunk], DocInfo | None]:
    """(chunks, DocInfo) of one file of the Brain; the DocInfo is None for a file that is not a
    readable page, note or summary."""
    if rel.startswith(layout.SESSIONS_RAW + "/") and rel.endswith(".jsonl"):
        return _turn_chunks(rel, data), None
    kind = layout.doc_kind(rel)
    if not kind:
        return [], None
    try:
        page = parse_page(data.decode("utf-8", errors="replace"), rel)
    except PageError:
        return [], None
    fm = page.frontmatter
    info = DocInfo(sorted({link.target for link in page.links if link.target}), list(fm.aliases),
                   fm.updated.isoformat() if fm.updated else None) if _is_utf8(data) else None
    if kind == "note":
        return [_note_chunk(page)], info
    return _statement_chunks(page, kind), info


def _is_utf8(data: bytes) -> bool:
    """A document that is not UTF-8 is unreadable to the Brain (brain.view): it links nowhere."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


_INDEXABLE_RE = re.compile(rf"{layout.SESSIONS_RAW}/[^/]*\.jsonl|{layout.DOCUMENT_RE.pattern}")


def indexable(rel: str) -> bool:
    """True for the files `chunks_of` reads: raw sessions and documents."""
    return _INDEXABLE_RE.fullmatch(rel) is not None and rel not in layout.GENERATED


def plain(text: str) -> str:
    """Text without cite markers and with `[[slug|text]]` shown as its text (for matching)."""
    text = re.sub(r"\s*\[cite:\d{1,6}\]", "", text)
    return _LINK_RE.sub(lambda m: (m.group(2) or m.group(1)).strip(), text)


def _date(value: object) -> str | None:
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()[:10]
    if isinstance(value, str) and re.match(r"^\d{4}-\d{2}-\d{2}", value.strip()):
        return value.strip()[:10]
    return None


def _cites(page: Page, numbers: list[int]) -> list[str]:
    targets = []
    for n in numbers:
        raw = page.frontmatter.sources.get(n)
        try:
            targets.append(CitationTarget.parse(raw)) if raw else None
        except CitationError:
            continue
    return expand_session_cites(targets)


def _turn_chunks(rel: str, data: bytes) -> list[Chunk]:
    session, _ = parse_session(data, rel)
    if session is None:
        return []
    sid = session.id
    started = _date(session.header.started)
    out = []
    for turn in session.turns:
        who = turn.speaker or turn.role
        ref = f"session:{sid}#t{turn.n}"
        out.append(Chunk(
            ref=ref, kind="turn", path=rel, title=f"{who} · {sid}", text=turn.text, cites=[ref],
            date=_date(turn.time) or started, meta={"speaker": who, "role": turn.role},
        ))
    return out


def _note_chunk(page: Page) -> Chunk:
    fm = page.frontmatter
    extra = fm.extras()
    body = page.body.strip()
    meta = {
        "kind": str(extra.get("kind", "learning")),
        "topic": str(extra.get("topic", page.path.split("/")[1])),
        "observed": _date(extra.get("observed")) or _date(fm.created),
        "event_date": _date(extra.get("event_date")),
        "until": _date(extra.get("until")),
    }
    try:
        confidence = min(1.0, max(0.0, float(extra.get("confidence", 0.5))))
    except (TypeError, ValueError):
        confidence = 0.5
    return Chunk(
        ref=page.path, kind="note", path=page.path, title=fm.title, text=body or fm.title,
        cites=_cites(page, sorted(fm.sources)), date=meta["event_date"] or meta["observed"],
        confidence=confidence, meta={k: v for k, v in meta.items() if v is not None},
    )


#: "- … 12 older fact(s) are in notes/x/", "- … and 3 more": pointers a page leaves, not statements.
_MARKER_RE = re.compile(r"^[-*]\s+…")


def _statement_chunks(page: Page, kind: str) -> list[Chunk]:
    """A page or summary cut into statements, each titled with its page and heading."""
    fm = page.frontmatter
    date = _date(fm.extras().get("started")) if kind == "summary" else None
    date = date or _date(fm.updated) or _date(fm.created)
    heading = ""
    out: list[Chunk] = []
    block: list[tuple[int, str]] = []

    def flush() -> None:
        if not block:
            return
        first = block[0][0]
        text = " ".join(line.strip() for _, line in block)
        block.clear()
        is_item = bool(_ITEM_RE.match(text))
        parts = [text] if is_item else _statements(text)
        for i, part in enumerate(parts, start=1):
            part = part.strip()
            if not plain(part).strip() or _MARKER_RE.match(part):
                continue
            numbers = [int(n) for n in _CITE_RE.findall(part)]
            title = f"{fm.title} › {heading}" if heading else fm.title
            ref = f"{page.path}#L{first}" if len(parts) == 1 else f"{page.path}#L{first}.{i}"
            out.append(Chunk(ref=ref, kind=kind, path=page.path, title=title, text=part[:MAX_STATEMENT_CHARS],
                             cites=_cites(page, numbers), date=date))

    for offset, line in enumerate(page.body.splitlines()):
        lineno = page.body_line + offset
        m = _HEADING_RE.match(line)
        if m:
            flush()
            if len(m.group(1)) > 1:
                heading = m.group(2)
            continue
        if not line.strip() or _ITEM_RE.match(line):
            flush()
        if line.strip():
            block.append((lineno, line))
    flush()
    return _unique_refs(out)


def _statements(text: str) -> list[str]:
    """A paragraph split after each run of cite markers (summaries cite every sentence)."""
    pieces, start = [], 0
    for m in _STATEMENT_END_RE.finditer(text):
        pieces.append(text[start : m.end(1)])
        start = m.end()
    pieces.append(text[start:])
    return [p for p in pieces if p.strip()]


def _unique_refs(chunks: list[Chunk]) -> list[Chunk]:
    seen: dict[str, int] = {}
    for c in chunks:
        if c.ref in seen:
            seen[c.ref] += 1
            c.ref = f"{c.ref}.{seen[c.ref]}"
        else:
            seen[c.ref] = 0
    return chunks
