"""Generated files: `knowledge/index.md` and `sessions/index.md` (jinja2 templates, docs/FORMATS.md).

Output depends only on the pages it lists, sorted, so two renders of one Brain are byte-identical.
"""

from __future__ import annotations

from functools import lru_cache

import jinja2

from brain import layout
from brain.page import Page

TYPE_HEADINGS = {t: folder.capitalize() for t, folder in layout.TYPE_FOLDERS.items()}


@lru_cache(maxsize=1)
def _env() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("brain", "templates"),
        autoescape=False,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
    )


def one_line(text: str | None) -> str:
    return " ".join((text or "").split())


def index_line(page: Page) -> str:
    """`- [[slug|Title]]: summary` — one page's line in knowledge/index.md."""
    title = one_line(page.frontmatter.title).replace("]]", "] ]").replace("|", "/")
    summary = one_line(page.frontmatter.summary)
    link = f"[[{page.slug}|{title}]]" if title and title != page.slug else f"[[{page.slug}]]"
    return f"- {link}: {summary}" if summary else f"- {link}"


def render_knowledge_index(pages: dict[str, Page]) -> str:
    """knowledge/index.md for the given pages (path → page), grouped by type in layout order."""
    groups = []
    for page_type in layout.PAGE_TYPES:
        members = sorted((p for path, p in pages.items() if layout.page_location(path) and layout.page_location(path)[0] == page_type), key=lambda p: p.slug)
        if members:
            groups.append({"heading": TYPE_HEADINGS[page_type], "lines": [index_line(p) for p in members]})
    return _env().get_template("knowledge_index.md.j2").render(groups=groups)


def session_index_line(summary: Page) -> str:
    fm = summary.frontmatter
    extra = fm.extras()
    started = str(extra.get("started") or "")[:10] or "undated"
    turns = extra.get("turns")
    title = one_line(fm.title).replace("]]", "] ]").replace("|", "/")
    tail = f" ({turns} turns)" if isinstance(turns, int) else ""
    return f"- {started} [[{summary.slug}|{title}]]{tail}"


def render_sessions_index(summaries: dict[str, Page]) -> str:
    """sessions/index.md: one line per summarised session, newest first (by started, then id)."""
    ordered = sorted(summaries.values(), key=lambda s: (str(s.frontmatter.extras().get("started") or ""), s.slug), reverse=True)
    return _env().get_template("sessions_index.md.j2").render(lines=[session_index_line(s) for s in ordered])
