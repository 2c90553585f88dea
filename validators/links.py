"""L checks: `[[wikilinks]]` in pages, summaries and notes, and the names they resolve against.

A link target may be a page slug, a page alias (case-insensitive), a note stem or a session id
(docs/FORMATS.md). Names are checked where they are defined (two pages claiming one name) and
where they are used (a link that resolves to nothing, or to more than one file).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from brain import layout
from brain.markdown import strip_refs
from brain.view import BrainView
from validators.documents import documents
from validators.registry import Item, check


def _show(target: str, heading: str | None = None) -> str:
    return f"[[{target}#{heading}]]" if heading else f"[[{target}]]"


def _guesses(target: str) -> list[str]:
    """Names a mistyped target may have meant: without `.md` or a folder, or slugified."""
    base = target.rsplit("/", 1)[-1].removesuffix(".md")
    return [base, layout.slugify(base)]


@check("L001", "error", "[[link]] that resolves to no page, alias, note or session summary")
def unresolved_link(view: BrainView) -> Iterator[Item]:
    for path, page in view.docs.items():
        for link in page.links:
            if not link.target:
                if link.heading is None:
                    yield path, link.line, "[[]] links nothing; write [[slug]] or remove it"
                continue
            if view.resolve(link.target):  # resolved; a target that cannot be read has its own F001
                continue
            guess = next((g for g in _guesses(link.target) if g != link.target and view.resolve(g)), None)
            hint = f"; did you mean [[{guess}]]?" if guess else ""
            yield path, link.line, f"{_show(link.target)} does not resolve to a page, alias, note or session{hint}"


@check("L002", "error", "name clash: two pages share a slug, or an alias is also another page's slug or alias")
def name_clash(view: BrainView) -> Iterator[Item]:
    for slug, paths in sorted(view.slugs.items()):
        for path in paths:
            if len(paths) > 1:
                others = ", ".join(p for p in paths if p != path)
                yield path, 1, f"slug '{slug}' is also used by {others}; slugs must be unique across knowledge/, rename one"
    for path, page in view.pages.items():
        for alias in dict.fromkeys(a.strip() for a in page.frontmatter.aliases):
            others = sorted(view.page_names.get(alias.casefold(), set()) - {path})
            if alias and others:
                yield path, page.key_lines.get("aliases", 1), (
                    f"alias '{alias}' also names {', '.join(others)}; [[{alias}]] is ambiguous, remove or change the alias"
                )


@check("L003", "warning", "[[link]] whose target names more than one file")
def ambiguous_link(view: BrainView) -> Iterator[Item]:
    for path, page in view.docs.items():
        for link in page.links:
            hits = view.resolve(link.target) if link.target else []
            if len(hits) > 1:
                yield path, link.line, f"{_show(link.target)} is ambiguous: it names {', '.join(hits)}; link the slug of the one you mean"


@check("L004", "warning", "[[link]] written inside code, where it will not link")
def link_in_code(view: BrainView) -> Iterator[Item]:
    for path, page in view.docs.items():
        for ref in page.code_refs:
            if ref.text.startswith("[["):
                yield path, ref.line, f"{ref.text} is inside code and will not link; move it out of the code span or fence"


def _heading_key(text: str) -> str:
    return " ".join(re.sub(r"[^\w]+", " ", strip_refs(text)).split()).casefold()


@check("L005", "warning", "[[slug#heading]] whose heading does not exist on the target page")
def missing_heading(view: BrainView) -> Iterator[Item]:
    for path, page in view.docs.items():
        for link in page.links:
            if link.heading is None:
                continue
            hits = view.resolve(link.target) if link.target else [path]
            target = view.docs.get(hits[0]) if len(hits) == 1 else None
            if target is None:
                continue
            keys = {_heading_key(h.title) for h in target.headings}
            if _heading_key(link.heading) not in keys:
                shown = ", ".join(f"'{h.title}'" for h in target.headings[:6]) or "none"
                yield path, link.line, (
                    f"{_show(link.target, link.heading)}: {target.path} has no heading '{link.heading}' (headings: {shown})"
                )


@check("L006", "warning", "summary topic or note topic that names no page")
def unknown_topic(view: BrainView) -> Iterator[Item]:
    slugs = view.slugs
    for doc in documents(view):
        if doc.page is None:
            continue
        extras = doc.page.frontmatter.extras()
        if doc.kind == "summary" and isinstance(extras.get("topics"), list):
            topics = [str(t) for t in extras["topics"]]
            key = "topics"
        elif doc.kind == "note" and isinstance(extras.get("topic"), (str, int)):
            topics, key = [str(extras["topic"])], "topic"
        else:
            continue
        for topic in topics:
            if topic not in slugs:
                yield doc.path, doc.line(key), f"topic '{topic}' names no page under knowledge/; use a page slug"
