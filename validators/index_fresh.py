"""I checks: the generated indexes agree with what they index.

knowledge/index.md lists every page (`- [[slug|Title]]: summary`), sessions/index.md every
session summary (`- YYYY-MM-DD [[id|Title]] (N turns)`); both are rewritten by `dream run`.
Each index is read once; lines are compared with brain.render's own line functions.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from brain import layout
from brain.view import BrainView
from validators.documents import per_view
from validators.registry import Item, check

_ENTRY_RE = re.compile(r"^\s*[-*+]\s.*?\[\[([^\]|#\n]*)(?:[#|][^\]\n]*)?\]\]")
_REGEN = "run `dream run` to regenerate the index"


@dataclass
class _Index:
    path: str
    what: str  # "page" or "session summary"
    exists: bool
    entries: list[tuple[int, str, str]]  # (line, target, line text)
    documents: dict[str, str]  # name → path of what must be listed
    lines: dict[str, str]  # name → its expected line, for documents that parse


def _read_entries(view: BrainView, path: str) -> tuple[bool, list[tuple[int, str, str]]]:
    raw = view.tree.read_if_exists(path) if not view.tree.is_symlink(path) else None
    if raw is None:
        return False, []
    text = raw.decode("utf-8", errors="replace")
    match, out = _ENTRY_RE.match, []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if (m := match(line)) is not None:
            out.append((lineno, m[1].strip(), line.rstrip()))
    return True, out


@per_view
def _indexes(view: BrainView) -> list[_Index]:
    # Expected lines are brain.render's own (BrainView.page_lines, summary_entries).
    pages = {p.rsplit("/", 1)[1][:-3]: p for p in view.page_paths}
    page_lines = {p.rsplit("/", 1)[1][:-3]: line for p, line in view.page_lines().items()}
    # Every document below the folder is a summary (a `<folder>/<id>.md`): its id is the rest.
    cut = len(layout.SESSIONS_SUMMARIES) + 1
    summaries = {f[cut:-3]: f for f in view.paths_under(layout.SESSIONS_SUMMARIES + "/")}
    summary_lines = {sid: line for sid, (_, line) in view.summary_entries().items()}
    out = []
    for path, what, docs, lines in (
        (layout.KNOWLEDGE_INDEX, "page", pages, page_lines),
        (layout.SESSIONS_INDEX, "session summary", summaries, summary_lines),
    ):
        exists, entries = _read_entries(view, path)
        out.append(_Index(path, what, exists, entries, docs, lines))
    return out


@check("I001", "error", "knowledge/index.md or sessions/index.md missing while pages or summaries exist")
def index_missing(view: BrainView) -> Iterator[Item]:
    for idx in _indexes(view):
        if not idx.exists and idx.documents:
            n = len(idx.documents)
            yield idx.path, 1, f"{idx.path} is missing but {n} {idx.what}{' exists' if n == 1 else 's exist'}; {_REGEN}"


@check("I002", "error", "page or session summary not listed in its index")
def not_listed(view: BrainView) -> Iterator[Item]:
    for idx in _indexes(view):
        if not idx.exists:
            continue
        # The names not listed, then sorted: not the 10,000 summaries of a large Brain. A page that
        # cannot be read has no line to list (its F001 says why), so it is not missing one.
        missing = idx.lines.keys() - {target for _line, target, _text in idx.entries}
        for name in sorted(missing):
            yield idx.path, 1, f"{idx.documents[name]} is not listed; {_REGEN}"


@check("I003", "error", "index line linking a page or session summary that does not exist")
def listed_but_gone(view: BrainView) -> Iterator[Item]:
    for idx in _indexes(view):
        for line, target, _text in idx.entries:
            if target not in idx.documents:
                yield idx.path, line, f"[[{target}]] is listed but no such {idx.what} exists; {_REGEN}"


@check("I004", "warning", "index line out of date (title, summary, date or turns changed) or listed twice")
def stale_line(view: BrainView) -> Iterator[Item]:
    for idx in _indexes(view):
        seen: set[str] = set()
        for line, target, text in idx.entries:
            if target in seen:
                yield idx.path, line, f"[[{target}]] is listed more than once; {_REGEN}"
                continue
            seen.add(target)
            expected = idx.lines.get(target)
            if expected is not None and text != expected:
                yield idx.path, line, f"line for [[{target}]] is out of date: expected '{expected}'; {_REGEN}"
