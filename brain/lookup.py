"""Find the document a person or an agent names: a slug, alias, title, note stem, session id or path.

Unknown names get "Did you mean …?" suggestions (difflib); ambiguous ones list the candidates.
"""

from __future__ import annotations

import difflib

from brain.errors import NotFoundError
from brain.view import BrainView


def find_doc(view: BrainView, query: str) -> str:
    """The path of the one document `query` names (case-insensitive); NotFoundError otherwise."""
    name = query.strip()
    if view.has_doc(name):  # a path: answered from the listing, nothing parsed
        return name
    hits = view.resolve(name)
    if not hits:
        folded = name.casefold()
        hits = sorted(p for p, d in view.docs.items() if d.frontmatter.title.strip().casefold() == folded)
    if len(hits) == 1:
        return hits[0]
    if hits:
        raise NotFoundError(
            f"{query!r} is ambiguous: it names {len(hits)} documents ({', '.join(hits)})",
            "pass the path of the one you mean",
        )
    raise NotFoundError(f"no page, note or session summary named {query!r}", _suggest(view, name))


def _suggest(view: BrainView, name: str) -> str:
    """'did you mean …?' from the slugs, aliases, titles and ids closest to `name` (one per document)."""
    names: dict[str, tuple[str, str]] = {}  # casefolded → (as it should be typed, path)
    for path in view.page_paths:
        stem = path.rsplit("/", 1)[1][:-3]
        names.setdefault(stem.casefold(), (stem, path))
    for path, doc in view.docs.items():
        for shown in (doc.slug, doc.frontmatter.title.strip(), *(a.strip() for a in doc.frontmatter.aliases)):
            names.setdefault(shown.casefold(), (shown, path))
    close = difflib.get_close_matches(name.casefold(), sorted(names), n=12, cutoff=0.6)
    picked: dict[str, str] = {}  # path → name, best match first
    for key in close:
        shown, path = names[key]
        picked.setdefault(path, shown)
    if picked:
        return "did you mean " + " or ".join(repr(s) for s in list(picked.values())[:3]) + "?"
    return "run `brain index` to list the pages"
