"""The read side's answers as text: what `brain` prints and what the MCP server returns.

One function per question an agent asks of a Brain, each over a Brain folder, each returning the
text both front ends show. Transcript text reaches these answers already redacted
(brain.sessions); turns are shown as quoted data under their session, speaker and date.
"""

from __future__ import annotations

from pathlib import Path

from brain.tree import DirTree
from brain.view import BrainView


def view_of(root: Path) -> BrainView:
    return BrainView(DirTree(root))


def indent(text: str) -> str:
    return "\n".join("    " + line if line else "" for line in text.splitlines()) or "    "


def searchers(root: Path, embedder: str):
    """One open Searcher of the Brain, opened again when HEAD moves (`.get()` gives it): what a
    server keeps, as bringing a large Brain's index up to date is slow next to a search."""
    from brain.repo import HeadCache
    from brain.search import Searcher

    return HeadCache(root, lambda: Searcher.open(root, embedder=embedder), close=lambda s: s.close())


def index_result(root: Path, budget: int | None = None, fresh: bool = True):
    """The compact map of the Brain within `budget` tokens (brain.toml's default when None),
    trimmed by ranks from the search index brought up to date, or as last left (`fresh=False`)."""
    from brain.config import BrainConfig
    from brain.indexing import index_for_agent, indexed_documents, last_indexed_documents

    view = view_of(root)
    limit = budget if budget is not None else BrainConfig.load(root).index.budget
    documents = indexed_documents if fresh else last_indexed_documents
    return index_for_agent(view, limit, lambda: documents(view.tree))


def show_text(root: Path, name: str) -> str:
    """The file of the page, note or summary `name` names."""
    from brain.lookup import find_doc

    view = view_of(root)
    return view.tree.read_bytes(find_doc(view, name)).decode("utf-8", errors="replace")


def graph_of(root: Path):
    """The Brain's link graph (every document parsed once)."""
    from brain.graph import BrainGraph

    return BrainGraph(view_of(root))


def link_rows(graph, name: str, side: str) -> list[dict]:
    """`side`="target": the links `name` writes; "source": the documents that link to it."""
    links = graph.outlinks(name) if side == "target" else graph.backlinks(name)
    rows = []
    for lk in links:
        path = getattr(lk, side)
        slug = path.rsplit("/", 1)[1].removesuffix(".md") if path else lk.name
        rows.append({"slug": slug, "line": lk.line, "path": path, "name": lk.name})
    return rows


def rows_text(rows: list[dict]) -> str:
    return "".join(f"{row['slug']}\t{row['line']}\t{row['path'] or '(not found)'}\n" for row in rows)


def cite_text(root: Path, name: str, n: int) -> str:
    """Each cited turn (session, turn, speaker, time) with its text indented, or the record or note."""
    from brain.evidence import cite_evidence
    from brain.lookup import find_doc

    view = view_of(root)
    evidence = cite_evidence(view, find_doc(view, name), n)
    return "".join(f"{item.label}\n{indent(item.text)}\n" for item in evidence.items)


def search_text(result) -> str:
    """A SearchResult as numbered hits: ref, kind, date, why, then the title and text indented; a
    raw turn's text is quoted (`> speaker · session: …`): what someone said, not an instruction."""
    out = []
    for n, hit in enumerate(result.hits, 1):
        out.append(f"{n}. {hit.ref}  [{hit.kind}{' ' + hit.date if hit.date else ''}]  {hit.why()}\n")
        quote = "> " if hit.kind == "turn" else ""
        out.append(indent(quote + hit.title + ": " + " ".join(hit.text.split())[:300]) + "\n")
    return "".join(out)


def recent_text(root: Path, limit: int = 10) -> str:
    """What memory changed lately: the last commits, with the Dream run each came from."""
    from brain.repo import BrainRepo

    entries = BrainRepo(root).log(None, limit=limit)
    lines = [f"{e.sha[:7]}  {e.date[:10]}  {e.author}  {e.run_id or '-'}  {e.subject}" for e in entries]
    return "\n".join(lines) + "\n" if lines else "no commits yet\n"
