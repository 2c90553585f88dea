"""Generated files: `knowledge/index.md` and `sessions/index.md` (docs/FORMATS.md).

Output depends only on the pages it lists, sorted, so two renders of one Brain are byte-identical.
Both are a title and lists of lines, built as strings: a template engine's import would cost a
nightly run more than these renders.
"""

from __future__ import annotations

from brain import layout
from brain.page import Page
from brain.personal import withhold


def one_line(text: str | None) -> str:
    return " ".join((text or "").split())


def link_text(text: str | None) -> str:
    """Text safe inside `[[slug|text]]`: one line, no brackets or pipes (they would end the link)."""
    return one_line(text).replace("[", "(").replace("]", ")").replace("|", "/")


def index_line(page: Page) -> str:
    """`- [[slug|Title]]: summary` — one page's line in knowledge/index.md (every agent reads it:
    personal data in a summary is withheld there; the page keeps it)."""
    title = link_text(page.frontmatter.title)
    summary = withhold(one_line(page.frontmatter.summary))
    link = f"[[{page.slug}|{title}]]" if title and title != page.slug else f"[[{page.slug}]]"
    return f"- {link}: {summary}" if summary else f"- {link}"


def render_knowledge_index(pages: dict[str, Page]) -> str:
    """knowledge/index.md for the given pages (path → page), grouped by type in layout order."""
    return render_knowledge_index_lines({path: index_line(p) for path, p in pages.items()})


def render_knowledge_index_lines(lines: dict[str, str]) -> str:
    """knowledge/index.md from each page's index line (page path → line), for callers that cache lines."""
    by_type: dict[str, list[tuple[str, str]]] = {}
    for path, line in lines.items():
        loc = layout.page_location(path)
        if loc:
            by_type.setdefault(loc[0], []).append((loc[1], line))
    out = ["# Index\n"]
    for t in layout.PAGE_TYPES:  # a `## Heading` per type that has pages, in layout order
        if t in by_type:
            out.append(f"\n## {layout.TYPE_FOLDERS[t].capitalize()}\n")
            out += [line + "\n" for _, line in sorted(by_type[t])]
    return "".join(out)


def session_index_line(summary: Page) -> str:
    fm = summary.frontmatter
    extra = fm.extras()
    started = str(extra.get("started") or "")[:10] or "undated"
    turns = extra.get("turns")
    title = link_text(fm.title)
    tail = f" ({turns} turns)" if isinstance(turns, int) else ""
    return f"- {started} [[{summary.slug}|{title}]]{tail}"


def render_sessions_index(summaries: dict[str, Page]) -> str:
    """sessions/index.md: one line per summarised session, newest first (by started, then id)."""
    return render_sessions_index_lines(
        {s.slug: (str(s.frontmatter.extras().get("started") or ""), session_index_line(s)) for s in summaries.values()}
    )


def render_sessions_index_lines(entries: dict[str, tuple[str, str]]) -> str:
    """sessions/index.md from session id → (started, line), for callers that cache lines."""
    ordered = sorted(entries.items(), key=lambda kv: (kv[1][0], kv[0]), reverse=True)
    return "# Sessions\n" + ("\n" + "".join(line + "\n" for _, (_, line) in ordered) if ordered else "")
