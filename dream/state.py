"""`.dream/state.json`: what Dream has processed and written, committed with each run.

Sessions by content hash and turn count (a grown session is processed from its next turn),
entities met but not yet given a page (pages are made for things people return to), and the git
blob id of every file as Dream last wrote it (the base of the 3-way merge with manual edits).
"""

from __future__ import annotations

import hashlib
import json
import re

from pydantic import BaseModel, ConfigDict, Field

STATE_VERSION = 1
MAX_ENTITY_SESSIONS = 3


class SessionState(BaseModel):
    model_config = ConfigDict(extra="forbid")
    hash: str
    turns: int
    run: str


class EntityState(BaseModel):
    """An entity met in sessions: its type, where it was met (a few ids), its page slug once it has one."""

    model_config = ConfigDict(extra="forbid")
    name: str
    type: str
    sessions: list[str] = Field(default_factory=list)
    slug: str | None = None


class DreamState(BaseModel):
    model_config = ConfigDict(extra="forbid")
    version: int = STATE_VERSION
    sessions: dict[str, SessionState] = Field(default_factory=dict)
    entities: dict[str, EntityState] = Field(default_factory=dict)
    written: dict[str, str] = Field(default_factory=dict)  # path → git blob id of Dream's last write
    slots: dict[str, list[str]] = Field(default_factory=dict)  # global slot → note paths that fill it
    mentions: dict[str, list[str]] = Field(default_factory=dict)  # page slug → notes of other pages naming it
    last_run: str | None = None

    def render(self, last_run: str | None = None, written: dict[str, str] | None = None) -> str:
        """Sorted, stable JSON (one key per line at the top levels) so diffs stay readable.

        `last_run` and `written` (more entries) are applied to the output only, so a run can
        render its state several times without copying it."""
        data = self.model_dump(exclude_none=True)
        if last_run is not None:
            data["last_run"] = last_run
        if written:
            data["written"].update(written)
        return dumps_indented(data) + "\n"


def dumps_indented(data: object) -> str:
    """`json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False)`, byte for byte, without
    json's pure-Python indenting encoder (state.json is megabytes on a large Brain)."""
    out: list[str] = []
    try:
        _dump(data, "\n", out)
    except _Unusual:
        return json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False)
    return "".join(out)


class _Unusual(Exception):
    """A value the fast path does not handle (floats, non-string keys): json.dumps does it."""


_encode = json.encoder.encode_basestring  # what json uses with ensure_ascii=False


_SCALARS = (str, int, bool, type(None))  # not float: json.dumps formats those (the slow path)
_FLAT: dict[str, json.JSONEncoder] = {}


def _flat(pad: str) -> json.JSONEncoder:
    """json's C encoder laying out a container of scalars as indent=1 would at this depth."""
    enc = _FLAT.get(pad)
    if enc is None:
        enc = _FLAT[pad] = json.JSONEncoder(sort_keys=True, ensure_ascii=False, check_circular=False, separators=("," + pad + " ", ": "))
    return enc


#: What json escapes in a string with ensure_ascii=False: a string with none of these is written as
#: '"' + itself + '"'.
_ESCAPED = re.compile(r'[\x00-\x1f"\\]')


def _plain(strings: list[str]) -> bool:
    joined = "".join(strings)
    if '"' in joined or "\\" in joined:
        return False
    return joined.isprintable() or _ESCAPED.search(joined) is None  # printable: no control character


def _plain_table(value: dict[str, object], pad: str) -> str | None:
    """The two shapes that make state.json megabytes, laid out by string formatting, not one value
    at a time: str → str (`written`, 57,000 paths on the 10k Brain) and str → a dict with the same
    keys in each, every column all strings or all ints (`sessions`, 10,000). Else None (the general
    path). Only strings json writes as they are qualify, so the bytes are json.dumps's."""
    keys = sorted(value)
    rows = [value[k] for k in keys]
    if not _plain(keys):
        return None
    inner = pad + " "
    if all(type(v) is str for v in rows):
        if not _plain(rows):
            return None
        return "{" + inner + '"' + ('",' + inner + '"').join(map('": "'.join, zip(keys, rows))) + '"' + pad + "}"
    first = rows[0]
    if type(first) is not dict or not first or not all(type(r) is dict for r in rows):
        return None
    names = first.keys()
    if not all(r.keys() == names for r in rows):
        return None
    cols = sorted(names)
    if not all(type(c) is str for c in cols) or not _plain(cols):
        return None
    cell = inner + " "
    columns, formats = [], []
    for col in cols:
        column = [r[col] for r in rows]
        if all(type(v) is str for v in column) and _plain(column):
            formats.append('"' + col + '": "%s"')
        elif all(type(v) is int for v in column):  # not bool: type() is exact
            formats.append('"' + col + '": %d')
        else:
            return None
        columns.append(column)
    row = '"%s": {' + cell + ("," + cell).join(formats) + inner + "}"
    return "{" + inner + ("," + inner).join([row % cells for cells in zip(keys, *columns)]) + pad + "}"


def _dump(value: object, pad: str, out: list[str]) -> None:
    if type(value) is str:
        out.append(_encode(value))
    elif type(value) is dict:
        if not value:
            out.append("{}")
            return
        inner = pad + " "
        if all(type(k) is str for k in value):
            fast = _plain_table(value, pad)
            if fast is not None:
                out.append(fast)
                return
            if all(type(v) in _SCALARS for v in value.values()):
                out.append("{" + inner + _flat(pad).encode(value)[1:-1] + pad + "}")
                return
        sep = "{" + inner
        for key in sorted(value):
            if type(key) is not str:
                raise _Unusual
            out.append(sep)
            out.append(_encode(key))
            out.append(": ")
            _dump(value[key], inner, out)
            sep = "," + inner
        out.append(pad + "}")
    elif type(value) is list:
        if not value:
            out.append("[]")
            return
        inner = pad + " "
        if all(type(v) in _SCALARS for v in value):
            out.append("[" + inner + _flat(pad).encode(value)[1:-1] + pad + "]")
            return
        sep = "[" + inner
        for item in value:
            out.append(sep)
            _dump(item, inner, out)
            sep = "," + inner
        out.append(pad + "]")
    elif value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif type(value) is int:
        out.append(int.__repr__(value))
    else:
        raise _Unusual


def parse_state(text: str | None) -> tuple[DreamState, str | None]:
    """The state, and a problem message when the file was unreadable (a fresh state is used then)."""
    if not text:
        return DreamState(), None
    try:
        return DreamState.model_validate_json(text), None
    except ValueError as exc:
        first = str(exc).splitlines()[0]
        return DreamState(), f".dream/state.json is unreadable ({first}); every session will be treated as new"


def content_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


