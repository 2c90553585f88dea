"""Pages: front matter (brain.frontmatter) + markdown body; `parse_page` / `render_page` are a round-trip pair.

A page we render re-parses and re-renders byte-identically; a hand-written page keeps its exact
bytes unless its front matter or body is changed, and then only the changed part is rewritten.
"""

from __future__ import annotations

import functools
import re

from pydantic import ValidationError

from brain.errors import PageError
from brain.frontmatter import Frontmatter, dump_frontmatter, key_lines_of, scalar, split_frontmatter
from brain.markdown import BodyRefs, CiteRef, CodeRef, Heading, WikiLink, parse_body
from brain.model import Record

__all__ = ["Frontmatter", "Page", "dump_frontmatter", "key_lines_of", "new_page", "parse_page", "render_new", "render_page",
           "split_frontmatter"]


class Page(Record):
    """A parsed Brain document. `source_*` keep what it was parsed from, for byte-stable rendering."""

    path: str
    frontmatter: Frontmatter
    body: str
    body_line: int = 1
    source_text: str | None = None
    source_frontmatter: Frontmatter | None = None
    source_body: str | None = None
    source_fm_block: str | None = None

    @property
    def slug(self) -> str:
        return self.path.rsplit("/", 1)[-1].removesuffix(".md")

    @functools.cached_property
    def key_lines(self) -> dict[str, int]:
        """Line of each top-level front matter key in the file it was parsed from ({} for a page built in code)."""
        return key_lines_of(self.source_fm_block) if self.source_fm_block is not None else {}

    @functools.cached_property
    def refs(self) -> BodyRefs:
        """Links, cites, headings and code refs of the body, parsed when first asked: most readers
        of a document need only its front matter."""
        return parse_body(self.body, self.body_line)

    @property
    def links(self) -> list[WikiLink]:
        return self.refs.links

    @property
    def cites(self) -> list[CiteRef]:
        return self.refs.cites

    @property
    def headings(self) -> list[Heading]:
        return self.refs.headings

    @property
    def code_refs(self) -> list[CodeRef]:
        return self.refs.code_refs

    def with_changes(self, frontmatter: Frontmatter | None = None, body: str | None = None) -> "Page":
        """A copy with new front matter and/or body; the source it was parsed from is remembered."""
        fields = {name: getattr(self, name) for name in type(self).model_fields}
        return Page(**{**fields, "frontmatter": frontmatter or self.frontmatter, "body": self.body if body is None else body})


def parse_page(text: str, path: str) -> Page:
    """Parse a document; raises PageError (with file and line) when it cannot be read."""
    meta, block, body, body_line = split_frontmatter(text, path)
    try:
        fm = Frontmatter.model_validate(meta)
    except ValidationError as exc:
        err = exc.errors()[0]
        key = str(err["loc"][0]) if err["loc"] else ""
        what = "is missing" if err["type"] == "missing" else f"is invalid: {err['msg'].removeprefix('Value error, ')}"
        raise PageError(path, key_lines_of(block).get(key, 2), f"front matter key '{key}' {what}", "see docs/FORMATS.md") from None
    return Page(
        path=path,
        frontmatter=fm,
        body=body,
        body_line=body_line,
        source_text=text,
        source_frontmatter=fm,
        source_body=body,
        source_fm_block=block,
    )


def new_page(path: str, frontmatter: Frontmatter, body: str) -> Page:
    """A page built in code (no source text); render_page writes it canonically."""
    body_line = dump_frontmatter(frontmatter).count("\n") + 1
    return Page(path=path, frontmatter=frontmatter, body=body, body_line=body_line)


def render_new(frontmatter: Frontmatter, body: str) -> str:
    """The text of a page built in code, without parsing its body (render_page(new_page(...)) in short)."""
    return dump_frontmatter(frontmatter) + body


def render_page(page: Page) -> str:
    """The page's text: its source bytes when unchanged; else only the changed keys are rewritten
    in the owner's front matter (comments and layout kept) when that can be done exactly; else
    canonical front matter + body."""
    if page.source_text is not None and page.frontmatter == page.source_frontmatter:
        if page.body == page.source_body:
            return page.source_text
        return (page.source_fm_block or "") + page.body
    if page.source_fm_block is not None and page.source_frontmatter is not None:
        block = _patch_block(page.source_fm_block, page.source_frontmatter, page.frontmatter)
        if block is not None:
            return block + page.body
    return dump_frontmatter(page.frontmatter) + page.body


def _patch_block(block: str, old: Frontmatter, new: Frontmatter) -> str | None:
    """The owner's front matter block with `updated` replaced and new `sources` appended, or None
    when other keys changed or the edit cannot be made exactly (checked by parsing it back)."""
    if old.model_copy(update={"updated": new.updated, "sources": new.sources}) != new:
        return None
    if any(old.sources.get(n) != t for n, t in old.sources.items() if n in new.sources) or not set(old.sources) <= set(new.sources):
        return None
    lines = block.splitlines(keepends=True)
    nl = "\r\n" if lines and lines[0].endswith("\r\n") else "\n"
    close = len(lines) - 1
    if new.updated != old.updated:
        at = next((i for i, line in enumerate(lines) if re.match(r"^updated\s*:", line)), None)
        text = f"updated: {new.updated.isoformat()}{nl}" if new.updated else None
        if at is not None and text:
            lines[at] = text
        elif text:
            lines.insert(close, text)
            close += 1
    added = [n for n in sorted(new.sources) if n not in old.sources]
    if added:
        at = next((i for i, line in enumerate(lines) if re.match(r"^sources\s*:\s*$", line)), None)
        if at is None:
            if any(re.match(r"^sources\s*:", line) for line in lines):
                return None  # an inline mapping: not patched by hand
            lines.insert(close, f"sources:{nl}")
            at, close = close, close + 1
        end = at + 1
        while end < close and (lines[end].startswith((" ", "\t")) or not lines[end].strip()):
            end += 1
        indent = re.match(r"^(\s+)", lines[at + 1]).group(1) if at + 1 < end else "  "
        lines[end:end] = [f"{indent}{n}: {scalar(new.sources[n])}{nl}" for n in added]
    patched = "".join(lines)
    try:
        meta, *_ = split_frontmatter(patched + "x", "patch")
        if Frontmatter.model_validate(meta) != new:
            return None
    except (PageError, ValidationError):
        return None
    return patched

