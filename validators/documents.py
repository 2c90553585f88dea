"""Shared, cached readings of a BrainView for the checks: documents with their raw front matter,
and the lines of source entries and prose.

Results are cached per view (weakly), so each file is read and parsed at most once per run
however many checks look at it.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar
from weakref import WeakKeyDictionary

from brain import layout
from brain.citations import CitationError, CitationTarget
from brain.errors import PageError
from brain.page import Frontmatter, Page, key_lines_of, split_frontmatter
from brain.view import BrainView

T = TypeVar("T")
_SOURCE_ENTRY_RE = re.compile(r"""^\s+['"]?(\d+)['"]?\s*:""")


def per_view(build: Callable[[BrainView], T]) -> Callable[[BrainView], T]:
    """`build(view)` once per view (kept while the view lives): every check that asks shares it."""
    results: WeakKeyDictionary[BrainView, T] = WeakKeyDictionary()

    @functools.wraps(build)
    def once(view: BrainView) -> T:
        if view not in results:
            results[view] = build(view)
        return results[view]

    return once


@dataclass
class Document:
    """A page, session summary or note, parsed or not.

    `meta` is the raw front matter mapping (None when it cannot be read: then `split_error`
    says why); `page` is the parsed Page when the document passed `parse_page`.
    """

    path: str
    kind: str  # "page", "summary" or "note"
    page: Page | None
    meta: dict[Any, Any] | None
    key_lines: dict[str, int] = field(default_factory=dict)
    error: PageError | None = None
    split_error: PageError | None = None

    @property
    def stem(self) -> str:
        return self.path.rsplit("/", 1)[-1].removesuffix(".md")

    def line(self, key: str) -> int:
        """Line of a top-level front matter key (1, the opening `---`, when it is absent)."""
        return self.key_lines.get(key, 1)


@per_view
def documents(view: BrainView) -> list[Document]:
    """Every document the view read (parsed or failed), sorted by path."""
    out: list[Document] = []
    for path in sorted(set(view.docs) | set(view.errors)):
        kind = layout.doc_kind(path)
        page = view.docs.get(path)
        if page is not None:
            out.append(Document(path, kind, page, _meta_of(page.frontmatter), dict(page.key_lines)))
            continue
        error = view.errors[path]
        try:
            text = view.tree.read_bytes(path).decode("utf-8")
            meta, block, _body, _line = split_frontmatter(text, path)
            key_lines = key_lines_of(block)
        except PageError as exc:
            out.append(Document(path, kind, None, None, error=error, split_error=exc))
        except (OSError, UnicodeDecodeError):
            out.append(Document(path, kind, None, None, error=error, split_error=error))
        else:
            out.append(Document(path, kind, None, meta, key_lines, error=error))
    return out


def _meta_of(fm: Frontmatter) -> dict[str, Any]:
    """The keys the author wrote, with the values the model kept (dates as dates)."""
    meta = {k: getattr(fm, k) for k in Frontmatter.model_fields if k in fm.model_fields_set}
    meta.update(fm.extras())
    return meta


def parse_target(raw: str) -> CitationTarget | str:
    """The parsed citation target, or the reason it is malformed."""
    try:
        return CitationTarget.parse(raw)
    except CitationError as exc:
        return str(exc)


def prose_lines(page: Page) -> Iterator[tuple[int, str]]:
    """(line, stripped text) of each body line outside fenced code (the fence lines left out too)."""
    fenced = False
    for offset, line in enumerate(page.body.splitlines()):
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            fenced = not fenced
        elif not fenced:
            yield page.body_line + offset, stripped


def source_lines(page: Page) -> dict[int, int]:
    """Line of each `sources` entry (`  3: session:…`); the `sources:` line when not found."""
    start = page.key_lines.get("sources")
    if start is None:
        return {}
    out: dict[int, int] = {}
    block = (page.source_fm_block or "").splitlines()
    for lineno in range(start + 1, len(block) + 1):
        text = block[lineno - 1]
        if text.strip() and not text[:1].isspace():
            break
        m = _SOURCE_ENTRY_RE.match(text)
        if m:
            out.setdefault(int(m.group(1)), lineno)
    return {n: out.get(n, start) for n in page.frontmatter.sources}


def nearest(name: str, choices: list[str]) -> str | None:
    """A close match for a "did you mean …?" hint (only for small choice lists)."""
    import difflib

    hits = difflib.get_close_matches(name, choices, n=1, cutoff=0.75)
    return hits[0] if hits else None
