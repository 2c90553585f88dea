"""Markdown, links and diffs as HTML for `brain serve`. Pages and transcripts are untrusted text.

markdown-it renders with raw HTML off (`markdown(html=False)`): a `<script>` written in a page is
shown as text. Wikilinks and `[cite:N]` become links built here, their text escaped by markupsafe.
"""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import quote

from markupsafe import Markup

from brain import layout
from brain.citations import CitationError, CitationTarget
from brain.markdown import markdown


def to_html(body: str, link_href: Callable[[str], str | None], cite_href: Callable[[int], str | None]) -> Markup:
    """`body` as HTML; `link_href(target)` and `cite_href(n)` give each ref's URL (None: it leads nowhere)."""
    md = markdown(html=False)
    tokens = md.parse(body)
    for token in tokens:
        for child in token.children or ():
            if child.type == "wikilink":
                child.type, child.content = "html_inline", _wikilink(child.meta, link_href(child.meta["target"]))
            elif child.type == "cite":
                n = child.meta["n"]
                child.type, child.content = "html_inline", _anchor("cite", cite_href(n), f"[{n}]", f"citation {n}")
    return Markup(md.renderer.render(tokens, md.options, {}))


def _wikilink(meta: dict, href: str | None) -> str:
    text = meta["text"] or meta["target"] + (f" › {meta['heading']}" if meta["heading"] else "")
    return _anchor("wikilink", href, text, None if href else "no page of this name")


def _anchor(cls: str, href: str | None, text: str, title: str | None) -> str:
    if href is None:
        return str(Markup('<span class="{} dangling" title="{}">{}</span>').format(cls, title or "", text))
    return str(Markup('<a class="{}" href="{}"{}>{}</a>').format(cls, href, Markup(' title="{}"').format(title) if title else "", text))


def doc_href(path: str) -> str:
    """A page by its slug, a session summary as its session, a note by its path."""
    stem = path.rsplit("/", 1)[-1].removesuffix(".md")
    if layout.is_summary_path(path):
        return f"/session/{quote(stem)}"
    return "/page/" + quote(stem if layout.is_page_path(path) else path)


def session_href(session_id: str, first: int, last: int | None = None) -> str:
    """The turns first..last inside their session, highlighted, scrolled to the first."""
    return f"/session/{quote(session_id)}?turns=t{first}-t{last or first}#t{first}"


def ref_href(ref: str) -> str | None:
    """Where a search hit's or a packet item's ref is shown: `session:<id>#t3-t5`, `<doc path>#L12`."""
    if ref.startswith("session:"):
        return target_href(ref, "", 0)  # a session target leads to its turns, never to /cite/
    path = ref.split("#", 1)[0]
    return doc_href(path) if layout.doc_kind(path) else None


def target_href(raw: str, path: str, n: int) -> str | None:
    """Where `[cite:n]` of the document at `path` (its source `raw`) leads: the cited turns, or the
    evidence page of a connector record or note; None for a malformed target."""
    try:
        target = CitationTarget.parse(raw)
    except CitationError:
        return None
    if target.kind == "session":
        return session_href(target.ref, target.first_turn or 1, target.last_turn)
    return f"/cite/{n}/{quote(path)}"


def turn_range(text: str | None) -> range:
    """`t3-t5`, `3-5` or `t3` (a `?turns=` value) as turn numbers; empty when it is none of them."""
    first, _, last = (text or "").replace("t", "").partition("-")
    if not first.isdigit() or (last and not last.isdigit()):
        return range(0)
    return range(int(first), int(last or first) + 1)


def diff_rows(patch: str) -> list[tuple[str, str]]:
    """(css class, line) of each line of a unified diff: head, hunk, add, del or ctx."""
    rows = []
    for line in patch.splitlines():
        if line.startswith(("+++", "---", "diff ", "index ", "similarity", "rename ", "new file", "deleted file")):
            rows.append(("head", line))
        elif line.startswith("@@"):
            rows.append(("hunk", line))
        else:
            rows.append(({"+": "add", "-": "del"}.get(line[:1], "ctx"), line))
    return rows
