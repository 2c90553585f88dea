"""One MarkdownIt with inline rules for `[[wikilinks]]` and `[cite:N]`; every ref keeps its line.

Code spans and fenced code are text, not edges: refs found there are reported separately
(`code_refs`) so the L validator can warn that they will not link.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING

from brain.model import Record

if TYPE_CHECKING:  # imported by markdown(), when a body is first parsed: a command that reads only front matter never needs it
    from markdown_it import MarkdownIt
    from markdown_it.rules_inline import StateInline

_WIKILINK_RE = re.compile(r"\[\[([^\[\]\n|#]*)(?:#([^\[\]\n|]*))?(?:\|([^\[\]\n]*))?\]\]")
_CITE_RE = re.compile(r"\[cite:(\d{1,6})\]")
_ANY_REF_RE = re.compile(_WIKILINK_RE.pattern + "|" + _CITE_RE.pattern)


class WikiLink(Record):
    """`[[target#heading|text]]` at a 1-based line of the file."""

    target: str
    heading: str | None = None
    text: str | None = None
    line: int


class CiteRef(Record):
    """`[cite:N]` at a 1-based line of the file."""

    n: int
    line: int


class Heading(Record):
    level: int
    title: str
    line: int


class CodeRef(Record):
    """A wikilink or cite written inside code: not an edge."""

    text: str
    line: int


class BodyRefs(Record):
    links: list[WikiLink]
    cites: list[CiteRef]
    headings: list[Heading]
    code_refs: list[CodeRef]


def _ref_rule(state: StateInline, silent: bool) -> bool:
    start = state.pos
    if state.src[start] == "!" and state.src.startswith("[[", start + 1):
        start += 1  # an Obsidian embed `![[slug]]` is a link too (and not an image)
    elif state.src[start] != "[":
        return False
    m = _ANY_REF_RE.match(state.src, start)
    if not m or (start != state.pos and m.group(4) is not None):
        return False
    if not silent:
        if start != state.pos:
            state.push("text", "", 0).content = "!"
        if m.group(4) is not None:
            token = state.push("cite", "", 0)
            token.meta = {"n": int(m.group(4)), "offset": start}
        else:
            token = state.push("wikilink", "", 0)
            token.meta = {
                "target": m.group(1).strip(),
                "heading": (m.group(2) or "").strip() or None,
                "text": (m.group(3) or "").strip() or None,
                "offset": start,
            }
        token.content = m.group(0)
    state.pos = m.end()
    return True


@lru_cache(maxsize=2)
def markdown(html: bool = True) -> MarkdownIt:
    """The shared parser (CommonMark + tables), with the ref rule before links. `html=False` is
    for display (`brain serve`): raw HTML in a page is then text, shown escaped, never markup."""
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": html}).enable("table")
    md.inline.ruler.before("link", "brain_ref", _ref_rule)
    return md


def parse_body(body: str, first_line: int = 1) -> BodyRefs:
    """Links, cites, headings and code refs of a markdown body whose first line is `first_line`."""
    links: list[WikiLink] = []
    cites: list[CiteRef] = []
    headings: list[Heading] = []
    code_refs: list[CodeRef] = []
    tokens = markdown().parse(body)
    for i, tok in enumerate(tokens):
        base = first_line + (tok.map[0] if tok.map else 0)
        if tok.type == "heading_open" and i + 1 < len(tokens):
            headings.append(Heading(level=int(tok.tag[1]), title=tokens[i + 1].content.strip(), line=base))
        elif tok.type in ("fence", "code_block"):
            start = base + (1 if tok.type == "fence" else 0)
            for m in _ANY_REF_RE.finditer(tok.content):
                code_refs.append(CodeRef(text=m.group(0), line=start + tok.content.count("\n", 0, m.start())))
        elif tok.type == "inline":
            _collect_inline(tok, base, links, cites, code_refs)
    return BodyRefs(links=links, cites=cites, headings=headings, code_refs=code_refs)


def _collect_inline(tok, base: int, links: list, cites: list, code_refs: list) -> None:
    src = tok.content
    offset_hint = 0
    for child in tok.children or []:
        if child.type in ("wikilink", "cite"):
            offset = child.meta["offset"]
            line = base + src.count("\n", 0, offset)
            offset_hint = offset
            if child.type == "cite":
                cites.append(CiteRef(n=child.meta["n"], line=line))
            else:
                links.append(
                    WikiLink(target=child.meta["target"], heading=child.meta["heading"], text=child.meta["text"], line=line)
                )
        elif child.type == "code_inline" and _ANY_REF_RE.search(child.content):
            # Code spans carry no offset; find the span in the source after the last known ref.
            at = src.find(child.content, offset_hint)
            line = base + (src.count("\n", 0, at) if at >= 0 else 0)
            for m in _ANY_REF_RE.finditer(child.content):
                code_refs.append(CodeRef(text=m.group(0), line=line))


def strip_refs(text: str) -> str:
    """Plain text: `[[slug|text]]` → text, `[[slug]]` → slug, cites removed."""
    return _WIKILINK_RE.sub(lambda m: (m.group(3) or m.group(1) or "").strip(), _CITE_RE.sub("", text))
