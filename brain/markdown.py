"""One MarkdownIt with inline rules for `[[wikilinks]]` and `[cite:N]`; every ref keeps its line.

Code spans and fenced code are text, not edges: refs found there are reported separately
(`code_refs`) so the L validator can warn that they will not link.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING

from pydantic import ConfigDict

from brain.model import Model

if TYPE_CHECKING:  # imported by markdown(): what Dream writes takes the line scanner, and a
    # nightly run need not import markdown-it at all (20 ms of its start)
    from markdown_it import MarkdownIt
    from markdown_it.rules_inline import StateInline

_WIKILINK_RE = re.compile(r"\[\[([^\[\]\n|#]*)(?:#([^\[\]\n|]*))?(?:\|([^\[\]\n]*))?\]\]")
_CITE_RE = re.compile(r"\[cite:(\d{1,6})\]")
_ANY_REF_RE = re.compile(_WIKILINK_RE.pattern + "|" + _CITE_RE.pattern)


class WikiLink(Model):
    """`[[target#heading|text]]` at a 1-based line of the file."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    target: str
    heading: str | None = None
    text: str | None = None
    line: int


class CiteRef(Model):
    """`[cite:N]` at a 1-based line of the file."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    n: int
    line: int


class Heading(Model):
    model_config = ConfigDict(extra="forbid", frozen=True)
    level: int
    title: str
    line: int


class CodeRef(Model):
    """A wikilink or cite written inside code: not an edge."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    text: str
    line: int


class BodyRefs(Model):
    model_config = ConfigDict(extra="forbid", frozen=True)
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


@lru_cache(maxsize=1)
def markdown() -> MarkdownIt:
    """The shared parser (CommonMark + tables), with the ref rule before links."""
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark").enable("table")
    md.inline.ruler.before("link", "brain_ref", _ref_rule)
    return md


_ATX_RE = re.compile(r"^(#{1,6})(?:[ \t]+(.*))?$")
_ATX_CLOSE_RE = re.compile(r"(?:^|[ \t]+)#+$")
_MARKERS = r"(?:(?:[-*+]|\d+[.)])[ \t]+)"
#: What only markdown-it reads right: code spans and fences, escapes, HTML, entities, tabs, inline
#: links (anywhere: `_NEEDS_PARSER_CHARS` and "](")…
_NEEDS_PARSER_CHARS = re.compile(r"[`\\<&\t~]")
#: …and at the start of a line. Each alternative follows a "\n" (searched in "\n" + body), so
#: Python's regex engine jumps from newline to newline; as one pattern with `^`, it tried every
#: alternative at every character (~55 ms a MB: 12.7 ms of a nightly run on the 10k Brain).
_NEEDS_PARSER_LINE = re.compile(
    r"\n(?: {4}"  # indented code
    r"| {0,3}(?:=+|-+)[ \t]*$"  # setext underlines, thematic breaks
    rf"| {{0,3}}{_MARKERS}*(?:>|\[[^\]]*\]:)"  # block quotes, reference definitions
    rf"| {{0,3}}{_MARKERS}+#| {{0,3}}#{{7}}"  # headings inside lists, not-a-heading
    r"| {0,3}(?:(?:[-*+]|\d+[.)]) +)*(?:[-*+]|\d+[.)]) {5})",  # code inside a list item
    re.M,
)


#: parse_body's results by (body, first line). A run builds each page it writes, then its gate reads
#: the staged file back: on the 10k Brain 19 of a nightly run's 130 bodies were parsed twice, a
#: third of the bytes (the owner's page among them). The results are frozen and shared (a Page
#: copies their lists). Bodies past _BODY_MEMO_CHARS are not kept.
_BODY_MEMO: dict[tuple[str, int], BodyRefs] = {}
_BODY_MEMO_MAX = 512
_BODY_MEMO_CHARS = 256_000


def parse_body(body: str, first_line: int = 1) -> BodyRefs:
    """Links, cites, headings and code refs of a markdown body whose first line is `first_line`.

    Plain bodies (no code, HTML, quotes, setext headings, tables, escapes or reference definitions:
    what Dream writes) take a line scanner that gives the same result as the full parser at a
    fiftieth of the cost; anything else goes through markdown-it. Do not modify the result.
    """
    key = (body, first_line)
    hit = _BODY_MEMO.get(key)
    if hit is not None:
        return hit
    refs = _scan_plain(body, first_line) if takes_fast_path(body) else parse_body_full(body, first_line)
    if len(body) <= _BODY_MEMO_CHARS:
        if len(_BODY_MEMO) >= _BODY_MEMO_MAX:
            _BODY_MEMO.clear()
        _BODY_MEMO[key] = refs
    return refs


def takes_fast_path(body: str) -> bool:
    return ("](" not in body and not _NEEDS_PARSER_CHARS.search(body) and not _NEEDS_PARSER_LINE.search("\n" + body)
            and ("|" not in body or "|" not in _WIKILINK_RE.sub("", body)))


def parse_body_full(body: str, first_line: int = 1) -> BodyRefs:
    """parse_body through markdown-it, whatever the body."""
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


def _scan_plain(body: str, first_line: int) -> BodyRefs:
    links: list[WikiLink] = []
    cites: list[CiteRef] = []
    headings: list[Heading] = []
    for offset, line in enumerate(body.split("\n")):
        lineno = first_line + offset
        stripped = line.lstrip(" ")
        if stripped.startswith("#") and len(line) - len(stripped) <= 3:
            m = _ATX_RE.match(stripped)
            if m:
                title = _ATX_CLOSE_RE.sub("", (m.group(2) or "").strip(" \t")).strip()
                headings.append(Heading(level=len(m.group(1)), title=title, line=lineno))
        if "[" not in line:
            continue
        for m in _ANY_REF_RE.finditer(line):
            if m.group(4) is not None:
                cites.append(CiteRef(n=int(m.group(4)), line=lineno))
            else:
                links.append(WikiLink(
                    target=m.group(1).strip(),
                    heading=(m.group(2) or "").strip() or None,
                    text=(m.group(3) or "").strip() or None,
                    line=lineno,
                ))
    return BodyRefs(links=links, cites=cites, headings=headings, code_refs=[])


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

    def _link(m: re.Match) -> str:
        return (m.group(3) or m.group(1) or "").strip()

    text = _CITE_RE.sub("", text)
    return _WIKILINK_RE.sub(_link, text)


def wikilink(slug: str, text: str | None = None) -> str:
    return f"[[{slug}|{text}]]" if text and text != slug else f"[[{slug}]]"
