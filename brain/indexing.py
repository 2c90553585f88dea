"""`brain index`: knowledge/index.md for an agent's first message, trimmed to a token budget.

When the index is over budget (tokens as `brain.tokens` estimates them), whole lines are dropped,
lowest value first; a line is never shortened, so every line that is printed is as true as the
file. Value, highest first:
  1. the page's type: person, project and preference pages before all others (they answer
     "who / what am I working on / how do I want it"); lines naming no page come last;
  2. backlinks: how many other documents link to the page;
  3. recency: the page's `updated` date, newest first;
  4. the slug, alphabetically (a total order, so trimming is deterministic).
Surviving lines keep their place in the file; a group whose lines were all dropped loses its
heading. A last line says what was cut. If even the headings exceed the budget, they are printed.
"""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter, defaultdict
from collections.abc import Callable

from pydantic import ConfigDict, Field

from brain import layout
from brain.chunks import DocInfo
from brain.model import Model, empty_list
from brain.render import render_knowledge_index
from brain.tokens import estimate_tokens
from brain.tree import DirTree
from brain.view import BrainView

PRIORITY_TYPES = frozenset({"person", "project", "preference"})
_ENTRY_RE = re.compile(r"^\s*[-*] \[\[([^\]|#]+)")
_HEADING_RE = re.compile(r"^#{2,6} ")


class IndexResult(Model):
    """What `brain index` prints, and what it left out."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    text: str
    tokens: int
    budget: int
    total: int
    omitted: list[str] = Field(default_factory=empty_list)
    generated: bool = False  # True when knowledge/index.md was missing and rendered from pages

    @property
    def trimmed(self) -> bool:
        return bool(self.omitted)


def index_for_agent(view: BrainView, budget: int, documents: "Callable[[], dict[str, DocInfo]]") -> IndexResult:
    """knowledge/index.md (rendered from the pages when missing), within `budget` tokens (0: all).
    `documents()`: what the search index keeps of each document (page_ranks), asked only when the
    index is over budget."""
    generated = not view.tree.exists(layout.KNOWLEDGE_INDEX)
    text = render_knowledge_index(view.pages) if generated else view.tree.read_bytes(layout.KNOWLEDGE_INDEX).decode("utf-8", "replace")
    if text and not text.endswith("\n"):
        text += "\n"
    total = sum(1 for line in text.splitlines() if _ENTRY_RE.match(line))
    omitted: list[str] = []
    if 0 < budget < estimate_tokens(text):
        text, omitted = trim_index(text, budget, page_ranks(documents()))
    return IndexResult(text=text, tokens=estimate_tokens(text), budget=budget, total=total, omitted=omitted, generated=generated)


def indexed_documents(tree: DirTree) -> dict[str, DocInfo]:
    """What the search index, brought up to date (no vectors), keeps of each document."""
    from brain.search_index import SearchIndex

    index = SearchIndex.open(tree.root, tree=tree)
    try:
        return index.documents()
    finally:
        index.close()


def last_indexed_documents(tree: DirTree) -> dict[str, DocInfo]:
    """What the search index kept of each document when a search last brought it up to date,
    without reading the files again (SessionStart: a walk of a large Brain takes half a second,
    and ranks only choose which index lines a trim keeps); brought up to date when it cannot be read."""
    import sqlite3

    from brain.search_index import INDEX_FILE, SCHEMA_VERSION, documents_in

    try:
        conn = sqlite3.connect(f"file:{tree.root / INDEX_FILE}?mode=ro", uri=True)
        try:
            if conn.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone() == (SCHEMA_VERSION,):
                return documents_in(conn)
        finally:
            conn.close()
    except sqlite3.Error:
        pass
    return indexed_documents(tree)


def page_ranks(documents: dict[str, DocInfo]) -> dict[str, tuple]:
    """slug → sort key of its index line; smaller sorts first and is kept longest.

    The key is (person/project/preference pages first, more other documents linking to it, more
    recently updated, slug), from what the search index keeps of each readable document
    (brain.search_index: `documents()`)."""
    names: dict[str, set[str]] = defaultdict(set)  # casefolded slug or alias → the pages it names
    pages = [path for path in documents if layout.is_page_path(path)]
    for path in pages:
        names[path.rsplit("/", 1)[1][:-3].casefold()].add(path)
    for path in pages:
        for alias in documents[path].aliases:
            names[alias.strip().casefold()].add(path)
    linked: Counter[str] = Counter()
    for path, info in documents.items():
        targets: set[str] = set()
        for name in info.links:
            targets.update(names.get(name.strip().casefold(), ()))
        targets.discard(path)  # a page naming itself is not a backlink
        linked.update(targets)
    ranks: dict[str, tuple] = {}
    for path in pages:
        page_type, slug = layout.page_location(path)
        updated = documents[path].updated
        priority = 0 if page_type in PRIORITY_TYPES else 1
        ranks[slug] = (priority, -linked[path], -(dt.date.fromisoformat(updated).toordinal() if updated else 0), slug)
    return ranks


def trim_index(text: str, budget: int, ranks: dict[str, tuple]) -> tuple[str, list[str]]:
    """The most valuable lines of `text` that fit `budget` with the note; and the omitted slugs."""
    lines = text.splitlines()
    entries = [(i, m.group(1).strip()) for i, line in enumerate(lines) if (m := _ENTRY_RE.match(line))]
    order = sorted(entries, key=lambda e: ranks.get(e[1], (2, 0, 0, e[1])) + (e[0],))
    lo, hi = 0, len(order)  # the largest k whose render fits; render length grows with k
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if estimate_tokens(_render(lines, order, mid, budget)) <= budget:
            lo = mid
        else:
            hi = mid - 1
    omitted = sorted(slug for _, slug in order[lo:])
    return _render(lines, order, lo, budget), omitted


def _render(lines: list[str], order: list[tuple[int, str]], keep: int, budget: int) -> str:
    """The lines without the entries ranked after `keep`, and without sections left empty."""
    dropped = {i for i, _ in order[keep:]}
    entries = {i for i, _ in order}
    sections: list[list[int]] = [[]]  # line numbers: the preamble, then one list per heading
    for i, line in enumerate(lines):
        if _HEADING_RE.match(line):
            sections.append([])
        sections[-1].append(i)
    out: list[str] = []
    for n, section in enumerate(sections):
        had = [i for i in section if i in entries]
        if n and had and all(i in dropped for i in had):
            continue
        out += [lines[i] for i in section if i not in dropped]
    while out and not out[-1].strip():
        out.pop()
    note = (
        f"(index trimmed to {budget} tokens: {len(dropped)} of {len(order)} pages omitted"
        " — open knowledge/ or run `brain show NAME` for the rest)"
    )
    return "\n".join(out + ["", note]) + "\n"
