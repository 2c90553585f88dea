"""Front matter: the YAML block every Brain document starts with, read into `Frontmatter` and written back.

PyYAML's safe loader reads it (python-frontmatter strips the body and loses line numbers, so it is
not used); anchors and aliases are refused before loading (YAML bombs). `dump_frontmatter` writes
it canonically, in a fixed key order, quoting only where YAML needs it, so that what Dream writes
reads back as itself.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import re
from typing import Any

from pydantic import ConfigDict, Field, field_validator

from brain.errors import PageError
from brain.model import Model, empty_list

KEY_ORDER = ("title", "type", "aliases", "summary", "created", "updated", "sources")
_KEY_LINE_RE = re.compile(r"^([A-Za-z_][\w-]*)\s*:", re.M)
MAX_FRONTMATTER_CHARS = 64_000


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
            if not is_source_key(k):
                raise ValueError(f"source key {k!r} must be a whole number")
            out[int(k)] = str(target)
        return out

    def extras(self) -> dict[str, Any]:
        return dict(self.model_extra or {})


def is_source_key(key: Any) -> bool:
    """A key of `sources`: a whole number, as YAML reads `3:` or `"3":` (the N of [cite:N])."""
    return not isinstance(key, bool) and (isinstance(key, int) or (isinstance(key, str) and key.isdigit()))


def split_frontmatter(text: str, path: str) -> tuple[dict[str, Any], str, str, int]:
    """(meta, front-matter block, body, body's first line) of a document.

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
    return meta, stripped[:closed], stripped[closed:], end + 2


def key_lines_of(block: str) -> dict[str, int]:
    """Line of each top-level key of a front matter block (its `---` is the file's line 1)."""
    fm_text = block[block.find("\n") + 1 :]
    key_lines, line, at = {}, 2, 0
    for m in _KEY_LINE_RE.finditer(fm_text):
        line, at = line + fm_text.count("\n", at, m.start()), m.start()
        key_lines[m.group(1)] = line
    return key_lines


def _line_end(text: str, pos: int) -> int:
    """Where the line starting at `pos` ends (after its "\n", or at the end of the text)."""
    nl = text.find("\n", pos)
    return len(text) if nl < 0 else nl + 1


def _load_yaml(fm_text: str, path: str) -> dict[str, Any]:
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's where PyYAML was built with it: ten times faster
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
    key = scalar(key, flow=True) if isinstance(key, str) else key  # a key like `no` is a boolean unquoted
    if isinstance(value, dict):
        if not value:
            return f"{pad}{key}: {{}}"
        inner = "\n".join(_dump_item(k, v, indent + 2) for k, v in value.items())
        return f"{pad}{key}:\n{inner}"
    if isinstance(value, (list, tuple)):
        if any(isinstance(v, (dict, list, tuple)) for v in value):
            return f"{pad}{key}:\n" + "\n".join(f"{pad}  - {scalar(v)}" for v in value)
        return f"{pad}{key}: [" + ", ".join(scalar(v, flow=True) for v in value) + "]"
    return f"{pad}{key}: {scalar(value)}"


_PLAIN_RE = re.compile(r"^[A-Za-z_/][\w ./@()'+,&;:#?-]*$")
_YAML_WORDS = frozenset("true false yes no on off null y n ~".split())


def scalar(value: Any, flow: bool = False) -> str:
    """One YAML scalar on one line, quoted only where YAML needs it (stricter inside `[...]`)."""
    if isinstance(value, (dt.datetime, dt.date)):
        return value.isoformat()
    if isinstance(value, bool) or value is None:
        return {True: "true", False: "false", None: "null"}[value]
    if isinstance(value, int):
        return repr(value)  # floats go through PyYAML: it reads `1e+16` and `inf` back as strings
    if isinstance(value, str):
        if _plain_ok(value, flow):
            return value
        if value.isprintable() and not any(c in value for c in "\x85\u2028\u2029"):
            return "'" + value.replace("'", "''") + "'"
        return _double_quoted(value)
    if type(value) is float:
        return _float_scalar(repr(value), flow)  # a note's confidence: PyYAML once per distinct value
    return _yaml_scalar(value, flow)


def _yaml_scalar(value: Any, flow: bool) -> str:
    import yaml

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
