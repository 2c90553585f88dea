"""Pages: front matter (pydantic) + markdown body; `parse_page` / `render_page` are a round-trip pair.

A page we render re-parses and re-renders byte-identically; a hand-written page keeps its exact
bytes unless its front matter or body is changed, and then only the changed part is rewritten.
PyYAML's safe loader reads the front matter (python-frontmatter strips the body and loses line
numbers, so it is not used); anchors/aliases are refused before loading (YAML bombs).
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import re
from typing import TYPE_CHECKING, Any

from pydantic import ConfigDict, Field, ValidationError, field_validator

from brain.citations import CitationError, CitationTarget
from brain.errors import PageError
from brain.markdown import BodyRefs, CiteRef, CodeRef, Heading, WikiLink, parse_body
from brain.model import Model, empty_list

if TYPE_CHECKING:
    import yaml

KEY_ORDER = ("title", "type", "aliases", "summary", "created", "updated", "sources")
_KEY_LINE_RE = re.compile(r"^([A-Za-z_][\w-]*)\s*:", re.M)
MAX_FRONTMATTER_CHARS = 64_000
_YAML_BREAKS = ("\n", "\r", "\x85", "\u2028", "\u2029")


class Frontmatter(Model):
    """Front matter of any Brain document (page, session summary, note); unknown keys are kept.

    Type-specific required keys (a page's summary, a summary's id, a note's kind) are checked by
    the F validators, so that one missing key is a finding rather than an unreadable page.
    """

    model_config = ConfigDict(extra="allow", frozen=True)

    title: str
    type: str
    aliases: list[str] = Field(default_factory=empty_list)
    summary: str | None = None
    created: dt.date | None = None
    updated: dt.date | None = None
    sources: dict[int, str] = Field(default_factory=dict)

    @field_validator("title", "type", "summary", mode="before")
    @classmethod
    def _text(cls, v: Any) -> Any:
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return str(v)
        return v

    @field_validator("aliases", mode="before")
    @classmethod
    def _aliases(cls, v: Any) -> Any:
        if v is None:
            return []
        if isinstance(v, str):
            return [v]
        return [str(a) for a in v] if isinstance(v, list) else v

    @field_validator("created", "updated", mode="before")
    @classmethod
    def _date(cls, v: Any) -> Any:
        if isinstance(v, dt.datetime):
            return v.date()
        if isinstance(v, str) and not re.fullmatch(r"\d{4}-\d{2}-\d{2}", v.strip()):
            raise ValueError(f"{v!r} is not a date; write YYYY-MM-DD")
        return v

    @field_validator("sources", mode="before")
    @classmethod
    def _sources(cls, v: Any) -> Any:
        if v is None:
            return {}
        if not isinstance(v, dict):
            raise ValueError("sources must be a mapping of numbers to citation targets")
        out: dict[int, str] = {}
        for k, target in v.items():
            if isinstance(k, bool) or not (isinstance(k, int) or (isinstance(k, str) and k.isdigit())):
                raise ValueError(f"source key {k!r} must be a whole number")
            out[int(k)] = str(target)
        return out

    def target(self, n: int) -> CitationTarget:
        """The parsed target of source n; KeyError when missing, CitationError when malformed."""
        return CitationTarget.parse(self.sources[n])

    def extras(self) -> dict[str, Any]:
        return dict(self.model_extra or {})


class Page(Model):
    """A parsed Brain document. `source_*` keep what it was parsed from, for byte-stable rendering."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    path: str
    frontmatter: Frontmatter
    body: str
    body_line: int = 1
    links: list[WikiLink] = Field(default_factory=empty_list)
    cites: list[CiteRef] = Field(default_factory=empty_list)
    headings: list[Heading] = Field(default_factory=empty_list)
    code_refs: list[CodeRef] = Field(default_factory=empty_list)
    key_lines: dict[str, int] = Field(default_factory=dict)
    source_text: str | None = None
    source_frontmatter: Frontmatter | None = None
    source_body: str | None = None
    source_fm_block: str | None = None

    @property
    def slug(self) -> str:
        return self.path.rsplit("/", 1)[-1].removesuffix(".md")

    @property
    def title(self) -> str:
        return self.frontmatter.title

    def with_changes(self, frontmatter: Frontmatter | None = None, body: str | None = None) -> "Page":
        """A copy with new front matter and/or body; refs are re-read, the source is remembered."""
        new_body = self.body if body is None else body
        refs = parse_body(new_body, self.body_line)
        return self.model_copy(
            update={
                "frontmatter": frontmatter or self.frontmatter,
                "body": new_body,
                **{name: list(refs) for name, refs in _refs_fields(refs).items()},  # not validated: copied here
            }
        )


def _refs_fields(refs: BodyRefs) -> dict[str, Any]:
    """A page's ref fields from parse_body's result, which is shared: Page() validates them into
    lists of its own; a copy that skips validation (model_copy) must copy them."""
    return {"links": refs.links, "cites": refs.cites, "headings": refs.headings, "code_refs": refs.code_refs}


def split_frontmatter(text: str, path: str) -> tuple[dict[str, Any], str | None, str, int, dict[str, int]]:
    """(meta, front-matter block, body, body's first line, key → line) of a document.

    Raises PageError, naming the line, for: no front matter, no closing `---`, invalid YAML,
    anchors/aliases, unsafe tags, a non-mapping. A leading BOM is ignored.
    """
    if "\x00" in text:
        raise PageError(path, 1, "binary content (NUL byte)", "remove the file or save it as UTF-8 text")
    stripped = text.lstrip("\ufeff")
    # Lines end at "\n" only: str.splitlines also splits at \f, \x1c, \u2028…, which would shift
    # every line number after them (markdown-it and the YAML marks count "\n" only). Only the
    # lines up to the closing `---` are looked at; the body is the rest of the text.
    first_end = _line_end(stripped, 0)
    if not stripped or stripped[:first_end].rstrip("\r\n") != "---":
        raise PageError(path, 1, "no front matter: the file must start with a line '---'", "add title/type front matter")
    start, pos, end = first_end, first_end, 1
    while pos < len(stripped):
        nxt = _line_end(stripped, pos)
        if stripped[pos:nxt].rstrip("\r\n") in ("---", "..."):
            break
        pos, end = nxt, end + 1
    else:
        raise PageError(path, 1, "front matter is not closed by a line '---'", "add the closing '---'")
    fm_text = stripped[start:pos]
    if len(fm_text) > MAX_FRONTMATTER_CHARS:
        raise PageError(path, 2, f"front matter is larger than {MAX_FRONTMATTER_CHARS} characters", "shorten it")
    meta = _load_yaml(fm_text, path)
    closed = _line_end(stripped, pos)
    return meta, stripped[:closed], stripped[closed:], end + 2, _key_lines(fm_text)


def _key_lines(fm_text: str) -> dict[str, int]:
    """Line of each top-level key of a front matter block (its first line is the file's line 2)."""
    key_lines, line, at = {}, 2, 0
    for m in _KEY_LINE_RE.finditer(fm_text):
        line, at = line + fm_text.count("\n", at, m.start()), m.start()
        key_lines[m.group(1)] = line
    return key_lines


def _line_end(text: str, pos: int) -> int:
    """Where the line starting at `pos` ends (after its "\n", or at the end of the text)."""
    nl = text.find("\n", pos)
    return len(text) if nl < 0 else nl + 1


def _yaml():
    """PyYAML, imported when first needed: the front matter Brain writes is read and written
    without it (`_simple_yaml`, `_scalar`), and importing it cost 12 ms of every command's start."""
    import yaml

    return yaml


def _loader() -> "type[yaml.SafeLoader]":
    yaml = _yaml()
    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _load_yaml(fm_text: str, path: str) -> dict[str, Any]:
    fast = _simple_yaml(fm_text)
    if fast is not None:
        return fast
    yaml, loader = _yaml(), _loader()
    try:
        # An anchor needs `&` and an alias `*`: without them the event scan (as slow as the load) is skipped.
        for event in yaml.parse(fm_text, Loader=loader) if "&" in fm_text or "*" in fm_text else ():
            if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
                line = event.start_mark.line + 2 if event.start_mark else 2
                raise PageError(path, line, "YAML anchors and aliases are not allowed in front matter", "write the value out")
        meta = yaml.load(fm_text, Loader=loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        line = mark.line + 2 if mark else 2
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise PageError(path, line, f"invalid YAML in front matter: {problem}", "fix the YAML syntax") from None
    except (ValueError, TypeError, OverflowError, RecursionError) as exc:
        # PyYAML's constructors raise plain errors for values that match a tag but cannot be
        # built (`created: 2026-02-30` → ValueError); a page must never crash the reader.
        line = next((i + 2 for i, text in enumerate(fm_text.splitlines()) if _bad_date(text)), 2)
        raise PageError(path, line, f"invalid value in front matter: {exc}", "dates are YYYY-MM-DD") from None
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        raise PageError(path, 2, f"front matter must be a mapping of keys, not {type(meta).__name__}", "write key: value lines")
    return meta


# -- the front matter Brain writes, read without PyYAML -----------------------------------------
# What dump_frontmatter writes (and most hand-written front matter) is a small subset of YAML:
# `key: scalar`, `key: [a, b]`, `key: {}` and one level of `key:` + `  k: scalar` lines. It is
# read here with PyYAML's own resolution (_implicit_tag); anything else (comments, blocks, escapes,
# odd scalars, duplicate keys, …) returns None and goes through PyYAML, so the result is always PyYAML's.
_STR_TAG = "tag:yaml.org,2002:str"
# PyYAML's implicit resolvers (yaml.resolver.Resolver, PyYAML 5 and 6), in its order: the tag of a
# plain scalar is the first whose pattern matches among those listed for its first character.
# Copied so that reading front matter does not import PyYAML; a test holds them to PyYAML's.
_IMPLICIT_RESOLVERS = (
    ("tag:yaml.org,2002:bool", re.compile(r'''^(?:yes|Yes|YES|no|No|NO
                    |true|True|TRUE|false|False|FALSE
                    |on|On|ON|off|Off|OFF)$''', re.X), "yYnNtTfFoO"),
    ("tag:yaml.org,2002:float", re.compile(r'''^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?
                    |\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?
                    |[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*
                    |[-+]?\.(?:inf|Inf|INF)
                    |\.(?:nan|NaN|NAN))$''', re.X), "-+0123456789."),
    ("tag:yaml.org,2002:int", re.compile(r'''^(?:[-+]?0b[0-1_]+
                    |[-+]?0[0-7_]+
                    |[-+]?(?:0|[1-9][0-9_]*)
                    |[-+]?0x[0-9a-fA-F_]+
                    |[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$''', re.X), "-+0123456789"),
    ("tag:yaml.org,2002:merge", re.compile(r"^(?:<<)$"), "<"),
    ("tag:yaml.org,2002:null", re.compile(r'''^(?: ~
                    |null|Null|NULL
                    | )$''', re.X), ("~", "n", "N", "")),
    ("tag:yaml.org,2002:timestamp", re.compile(r'''^(?:[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]
                    |[0-9][0-9][0-9][0-9] -[0-9][0-9]? -[0-9][0-9]?
                     (?:[Tt]|[ \t]+)[0-9][0-9]?
                     :[0-9][0-9] :[0-9][0-9] (?:\.[0-9]*)?
                     (?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)$''', re.X), "0123456789"),
    ("tag:yaml.org,2002:value", re.compile(r"^(?:=)$"), "="),
    ("tag:yaml.org,2002:yaml", re.compile(r"^(?:!|&|\*)$"), "!&*"),
)
_IMPLICIT_BY_FIRST: dict[str, list[tuple[str, "re.Pattern[str]"]]] = {}
for _tag, _pattern, _firsts in _IMPLICIT_RESOLVERS:
    for _first in _firsts:
        _IMPLICIT_BY_FIRST.setdefault(_first, []).append((_tag, _pattern))
del _tag, _pattern, _firsts, _first


def _implicit_tag(text: str) -> str:
    """The tag PyYAML gives the plain scalar `text` (`Resolver().resolve(ScalarNode, text, (True, False))`)."""
    for tag, pattern in _IMPLICIT_BY_FIRST.get(text[:1], ()):
        if pattern.match(text):
            return tag
    return _STR_TAG
_SIMPLE_LINE_RE = re.compile(r"([A-Za-z0-9_][A-Za-z0-9_-]*):(?: (.*))?\n")
_SIMPLE_NESTED_RE = re.compile(r"  ([A-Za-z0-9_][A-Za-z0-9_-]*):(?: (.*))?\n")
_INT_RE = re.compile(r"[1-9][0-9]*|0")
_FLOAT_RE = re.compile(r"[0-9]+\.[0-9]+")
_YMD_RE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")
_SINGLE_RE = re.compile(r"'((?:[^']|'')*)'")
_DOUBLE_RE = re.compile(r'"((?:[^"\\]|\\.)*)"')
_ESCAPE_RE = re.compile(r"\\(?:([\\\"])|x([0-9A-Fa-f]{2})|u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8})|(.))")
_PLAIN_START = frozenset("-?:,[]{}#&*!|>'\"%@`")
_NO = object()  # "not in the subset"


def _simple_yaml(fm_text: str) -> dict[str, Any] | None:
    """The mapping PyYAML's safe loader reads from `fm_text`, or None when it is not in the subset."""
    if not fm_text.endswith("\n") or "\t" in fm_text or "\r" in fm_text:
        return None
    out: dict[Any, Any] = {}
    nested: dict[Any, Any] | None = None  # the mapping of the last `key:` line
    for line in fm_text.splitlines(keepends=True):
        if not line[:-1].isprintable():  # also excludes the other YAML line breaks and a BOM
            return None
        inner = line.startswith("  ")
        m = (_SIMPLE_NESTED_RE if inner else _SIMPLE_LINE_RE).fullmatch(line)
        if m is None or (inner and (nested is None or m.group(2) is None)):
            return None
        if not inner and nested == {}:
            return None  # `key:` with nothing under it is null: left to PyYAML
        target = nested if inner else out
        key = _plain(m.group(1), flow=False)
        if key is _NO or isinstance(key, (bool, dt.date)) or key in target:
            return None
        if m.group(2) is None:
            nested = out[key] = {}
            continue
        if not inner:
            nested = None
        value = _value(m.group(2))
        if value is _NO:
            return None
        target[key] = value
    return None if nested == {} else out


def _value(text: str) -> Any:
    if text.startswith("[") and text.endswith("]"):
        inner = text[1:-1]
        if not inner:
            return []
        items = []
        for item in _flow_items(inner):
            value = _scalar_value(item, flow=True)
            if value is _NO:
                return _NO
            items.append(value)
        return items
    if text == "{}":
        return {}
    return _scalar_value(text, flow=False)


def _flow_items(inner: str) -> list[str]:
    """`a, 'b, c', "d"` split at the commas between items (quoted commas kept)."""
    items, start, quote, i = [], 0, None, 0
    while i < len(inner):
        c = inner[i]
        if quote == "'":
            if c == "'":
                if inner[i + 1 : i + 2] == "'":
                    i += 1
                else:
                    quote = None
        elif quote == '"':
            if c == "\\":
                i += 1
            elif c == '"':
                quote = None
        elif c in "'\"" and i == start:
            quote = c
        elif c == ",":
            items.append(inner[start:i])
            if inner[i + 1 : i + 2] != " ":
                return ["[bad"]
            start = i + 2
            i += 1
        i += 1
    items.append(inner[start:])
    return items


def _scalar_value(text: str, flow: bool) -> Any:
    if text.startswith("'"):
        m = _SINGLE_RE.fullmatch(text)
        return m.group(1).replace("''", "'") if m else _NO
    if text.startswith('"'):
        m = _DOUBLE_RE.fullmatch(text)
        if m is None:
            return _NO
        bad = False

        def unescape(e: re.Match) -> str:
            nonlocal bad
            if e.group(1):
                return e.group(1)
            if e.group(5) is not None:
                bad = True
                return ""
            code = int(e.group(2) or e.group(3) or e.group(4), 16)
            if 0xD800 <= code <= 0xDFFF or code > 0x10FFFF:
                bad = True
                return ""
            return chr(code)

        value = _ESCAPE_RE.sub(unescape, m.group(1))
        return _NO if bad else value
    return _plain(text, flow)


@functools.lru_cache(maxsize=65536)  # keys, types, dates and targets repeat across documents
def _plain(text: str, flow: bool) -> Any:
    """A plain scalar as PyYAML resolves and builds it (str, simple int, float or date), else _NO."""
    if not text or text != text.strip() or text[0] in _PLAIN_START or ": " in text or " #" in text or text.endswith(":"):
        return _NO
    if flow and any(c in text for c in ",[]{}?:#"):
        return _NO
    tag = _implicit_tag(text)
    if tag == _STR_TAG:
        return text
    if tag == "tag:yaml.org,2002:int" and _INT_RE.fullmatch(text):
        return int(text)
    if tag == "tag:yaml.org,2002:float" and _FLOAT_RE.fullmatch(text):
        return float(text)
    if tag == "tag:yaml.org,2002:timestamp":
        m = _YMD_RE.fullmatch(text)
        if m:
            try:
                return dt.date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
            except ValueError:
                return _NO  # PyYAML names the error
    return _NO


_DATE_VALUE_RE = re.compile(r":\s*(\d{4})-(\d{1,2})-(\d{1,2})\b")


def _bad_date(line: str) -> bool:
    m = _DATE_VALUE_RE.search(line)
    if not m:
        return False
    try:
        dt.date(*map(int, m.groups()))
    except ValueError:
        return True
    return False


def parse_page(text: str, path: str) -> Page:
    """Parse a document; raises PageError (with file and line) when it cannot be read."""
    meta, block, body, body_line, key_lines = split_frontmatter(text, path)
    try:
        fm = Frontmatter.model_validate(meta)
    except ValidationError as exc:
        err = exc.errors()[0]
        key = str(err["loc"][0]) if err["loc"] else ""
        what = "is missing" if err["type"] == "missing" else f"is invalid: {err['msg'].removeprefix('Value error, ')}"
        raise PageError(path, key_lines.get(key, 2), f"front matter key '{key}' {what}", "see docs/FORMATS.md") from None
    refs = parse_body(body, body_line)
    return Page(
        path=path,
        frontmatter=fm,
        body=body,
        body_line=body_line,
        key_lines=key_lines,
        source_text=text,
        source_frontmatter=fm,
        source_body=body,
        source_fm_block=block,
        **_refs_fields(refs),
    )


def new_page(path: str, frontmatter: Frontmatter, body: str) -> Page:
    """A page built in code (no source text); render_page writes it canonically."""
    body_line = dump_frontmatter(frontmatter).count("\n") + 1
    return Page(path=path, frontmatter=frontmatter, body=body, body_line=body_line, **_refs_fields(parse_body(body, body_line)))


def render_new(frontmatter: Frontmatter, body: str) -> str:
    """The text of a page built in code, without parsing its body (render_page(new_page(...)) in short)."""
    return dump_frontmatter(frontmatter) + body


def render_built(path: str, frontmatter: Frontmatter, body: str) -> tuple[str, Page | None]:
    """render_new(frontmatter, body), and the Page that parse_page(text, path) gives, found without
    reading the YAML back: it holds the values just dumped, which read back as themselves
    (dump_frontmatter's round trip). None where that is not certain: parse the text then."""
    block = dump_frontmatter(frontmatter)
    text = block + body
    fm_text = block[4:-4]  # between the "---" lines
    if "\x00" in text or len(fm_text) > MAX_FRONTMATTER_CHARS or not fm_text:
        return text, None  # parse_page's errors (and `---` + `---`, which PyYAML reads as null)
    meta: dict[str, Any] = {}
    for key in KEY_ORDER[:-1]:  # the keys and order dump_frontmatter writes
        value = getattr(frontmatter, key)
        if not (value in (None, [], {}) or (key == "summary" and value == "")):
            meta[key] = value
    meta.update(frontmatter.extras())
    if frontmatter.sources:
        meta["sources"] = dict(sorted(frontmatter.sources.items()))
    for key, value in meta.items():
        if isinstance(value, list):
            if not all(_reads_back(v) for v in value):
                return text, None
            meta[key] = list(value)  # a fresh list, as a parse makes
        elif key == "sources":
            if not all(type(k) is int and type(v) is str for k, v in value.items()):
                return text, None
        elif not _reads_back(value):
            return text, None
    try:
        fm = Frontmatter.model_validate(meta)
    except ValidationError:
        return text, None
    body_line = fm_text.count("\n") + 3
    refs = parse_body(body, body_line)
    page = Page(path=path, frontmatter=fm, body=body, body_line=body_line, key_lines=_key_lines(fm_text), source_text=text,
                source_frontmatter=fm, source_body=body, source_fm_block=block, **_refs_fields(refs))
    return text, page


def _reads_back(value: Any) -> bool:
    """A scalar that _scalar dumps as text YAML reads back as an equal value of the same type.
    Floats: finite and not zero (kept out since _float_scalar once wrote 0.0 and -0.0 alike; it
    tells them apart now, so zeros are a caution here, left to the parser)."""
    kind = type(value)
    return value is None or kind in (str, int, dt.date) or (kind is float and value - value == 0 and value != 0)


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
        lines[end:end] = [f"{indent}{n}: {_scalar(new.sources[n])}{nl}" for n in added]
    patched = "".join(lines)
    try:
        meta, *_ = split_frontmatter(patched + "x", "patch")
        if Frontmatter.model_validate(meta) != new:
            return None
    except (PageError, ValidationError):
        return None
    return patched


def dump_frontmatter(fm: Frontmatter) -> str:
    """Canonical front matter block: KEY_ORDER but `sources`, unknown keys in their order, then `sources`."""
    out = ["---"]
    for key in KEY_ORDER[:-1]:
        value = getattr(fm, key)  # the declared fields: plain values (model_dump would only copy them)
        if value in (None, [], {}) or (key == "summary" and value == ""):
            continue
        out.append(_dump_item(key, value, 0))
    for key, value in fm.extras().items():
        out.append(_dump_item(key, value, 0))
    if fm.sources:
        out.append(_dump_item("sources", dict(sorted(fm.sources.items())), 0))
    out.append("---")
    return "\n".join(out) + "\n"


def _dump_item(key: Any, value: Any, indent: int) -> str:
    pad = " " * indent
    key = _scalar(key, flow=True) if isinstance(key, str) else key  # a key like `no` is a boolean unquoted
    if isinstance(value, dict):
        if not value:
            return f"{pad}{key}: {{}}"
        inner = "\n".join(_dump_item(k, v, indent + 2) for k, v in value.items())
        return f"{pad}{key}:\n{inner}"
    if isinstance(value, (list, tuple)):
        if any(isinstance(v, (dict, list, tuple)) for v in value):
            return f"{pad}{key}:\n" + "\n".join(f"{pad}  - {_scalar(v)}" for v in value)
        return f"{pad}{key}: [" + ", ".join(_scalar(v, flow=True) for v in value) + "]"
    return f"{pad}{key}: {_scalar(value)}"


_PLAIN_RE = re.compile(r"^[A-Za-z_/][\w ./@()'+,&;:#?-]*$")
_YAML_WORDS = frozenset("true false yes no on off null y n ~".split())


def _scalar(value: Any, flow: bool = False) -> str:
    """One YAML scalar on one line, quoted only where YAML needs it (stricter inside `[...]`)."""
    if isinstance(value, (dt.datetime, dt.date)):
        return value.isoformat()
    if isinstance(value, bool) or value is None:
        return {True: "true", False: "false", None: "null"}[value]
    if isinstance(value, int):
        return repr(value)  # floats go through PyYAML: it reads `1e+16` and `inf` back as strings
    if isinstance(value, str) and _plain_ok(value, flow):
        return value
    if isinstance(value, str):
        if value.isprintable() and not any(c in value for c in "\x85\u2028\u2029"):
            return "'" + value.replace("'", "''") + "'"
        return _double_quoted(value)
    if type(value) is float:
        return _float_scalar(repr(value), flow)  # a note's confidence: PyYAML once per distinct value
    return _yaml_scalar(value, flow)


def _yaml_scalar(value: Any, flow: bool) -> str:
    yaml = _yaml()
    if flow or isinstance(value, (dict, list, tuple)):
        text = yaml.safe_dump([value], default_flow_style=True, allow_unicode=True, width=10**9).strip()[1:-1]
    else:
        text = yaml.safe_dump({"k": value}, default_flow_style=False, allow_unicode=True, width=10**9)
        text = text[3:].removesuffix("\n")
    return json.dumps(value, ensure_ascii=False) if "\n" in text else text


_DECIMAL_RE = re.compile(r"-?[0-9]+\.[0-9]+")


@functools.lru_cache(maxsize=4096)
def _float_scalar(text: str, flow: bool) -> str:
    """Keyed by repr: 0.0 and -0.0 are equal (one key of a cache by value) but are written apart.
    A plain decimal (a confidence: 0.85) is what PyYAML writes for it, its repr; others ask PyYAML."""
    if _DECIMAL_RE.fullmatch(text):
        return text
    return _yaml_scalar(float(text), flow)


def _double_quoted(text: str) -> str:
    """A YAML double-quoted scalar on one line: line breaks and unprintables as escapes."""
    out = []
    for c in text:
        if c in '\\"':
            out.append("\\" + c)
        elif c.isprintable() and c not in "\x85\u2028\u2029":
            out.append(c)
        elif ord(c) <= 0xFF:
            out.append(f"\\x{ord(c):02x}")
        elif ord(c) <= 0xFFFF:
            out.append(f"\\u{ord(c):04x}")
        else:
            out.append(f"\\U{ord(c):08x}")
    return '"' + "".join(out) + '"'


_NUMBERISH_RE = re.compile(r"^[\d.+-]|^(?:\.inf|\.nan)$", re.I)
_FLOW_UNSAFE_RE = re.compile(r"[,\[\]{}?:#]")


@functools.lru_cache(maxsize=65536)
def _plain_ok(text: str, flow: bool) -> bool:
    """True when YAML reads `text` back as the same string without quotes (checked conservatively)."""
    if not text or text != text.strip() or text.lower() in _YAML_WORDS or not _PLAIN_RE.match(text):
        return False
    if ": " in text or " #" in text or text.endswith(":") or (flow and _FLOW_UNSAFE_RE.search(text)):
        return False
    return not _NUMBERISH_RE.match(text)


def parse_target_or_none(fm: Frontmatter, n: int) -> CitationTarget | None:
    try:
        return fm.target(n)
    except (KeyError, CitationError):
        return None
