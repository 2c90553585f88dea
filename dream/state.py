"""`.dream/state.json` and its shards `.dream/written/<xx>.json`: what Dream has processed and
written, committed with each run.

Sessions by content hash and turn count (a grown session is processed from its next turn),
entities met but not yet given a page (pages are made for things people return to), and the git
blob id of every file as Dream last wrote it (the base of the 3-way merge with manual edits). That
last map is most of the state (57,000 paths on a 10,000-session Brain): it is kept in 256 files by
the first two hex digits of the sha1 of each path, so a run rewrites (and git stores again) only
the shards of the few dozen files it wrote, not megabytes.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from brain import layout
from brain.errors import BrainError

#: 2: `written` lives in `.dream/written/` shards. A version 1 state.json (all in one file) is read
#: as it is, and its first render writes every shard.
STATE_VERSION = 2
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

    # shard file → its entries as read; None: nothing was read (a new or version 1 state): all are written
    _shards: dict[str, dict[str, str]] | None = PrivateAttr(default=None)

    def render(self, last_run: str | None = None, written: dict[str, str] | None = None) -> dict[str, str]:
        """state.json and each `.dream/written/` shard whose entries changed since it was read: path → text.

        Sorted, stable JSON (one key per line at the top levels) so diffs stay readable.
        `last_run` and `written` (more entries) are applied to the output only, so a run can
        render its state several times without copying it."""
        data = self.model_dump(exclude_none=True, exclude={"written"})
        data["version"] = STATE_VERSION
        if last_run is not None:
            data["last_run"] = last_run
        out = {layout.STATE: dumps_indented(data) + "\n"}
        merged = {**self.written, **written} if written else self.written
        shards = self._shards
        if shards is None:
            changed, shards = merged, {}
        else:
            read = {path: blob for entries in shards.values() for path, blob in entries.items()}
            changed = {path: blob for path, blob in merged.items() if read.get(path) != blob}
            changed.update((path, None) for path in read.keys() - merged.keys())
        grouped: dict[str, list[str]] = {}
        for path in changed:
            grouped.setdefault(written_shard(path), []).append(path)
        for shard in sorted(grouped):
            entries = {path: merged[path] for path in shards.get(shard, {}) if path in merged}
            entries.update((path, merged[path]) for path in grouped[shard] if path in merged)
            out[shard] = dumps_indented(entries) + "\n"
        return out


def written_shard(path: str) -> str:
    """The `.dream/written/` file holding `path`'s entry: the first two hex digits of its sha1."""
    return f"{layout.WRITTEN}/{hashlib.sha1(path.encode('utf-8')).hexdigest()[:2]}.json"


#: Every shard file there can be, in order.
WRITTEN_SHARDS = tuple(f"{layout.WRITTEN}/{i:02x}.json" for i in range(256))


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


def parse_state(text: str | None, read: Callable[[str], str | None] | None = None) -> tuple[DreamState, str | None]:
    """The state, and a problem message when a file was unreadable. `read`: path → text or None,
    to read the `.dream/written/` shards (without it they are not read: only sessions are wanted).

    A state.json of a newer version raises BrainError. An unreadable one gives a fresh state (every session is treated as new); an unreadable
    shard is left out (the files it listed are taken for the owner's until Dream writes them again)."""
    state, problem = DreamState(), None
    if text:
        try:
            state = DreamState.model_validate_json(text)
        except ValueError as exc:
            first = str(exc).splitlines()[0]
            state, problem = DreamState(), f"{layout.STATE} is unreadable ({first}); every session will be treated as new"
    if state.version > STATE_VERSION:  # going on would write it back without what this version cannot read
        raise BrainError(f"{layout.STATE} is version {state.version}, written by a newer Dream (this one reads up to "
                         f"{STATE_VERSION})", "upgrade brain-dream, then run it again")
    if read is None or state.version < 2:
        return state, problem
    shards, bad = {}, []
    for shard in WRITTEN_SHARDS:
        raw = read(shard)
        if raw is None:
            continue
        try:
            entries = json.loads(raw)
        except ValueError:
            entries = None
        if not isinstance(entries, dict) or not all(isinstance(v, str) for v in entries.values()):
            bad.append(shard)
            continue
        shards[shard] = entries
        state.written.update(entries)
    state._shards = shards
    if bad:
        shown = ", ".join(bad[:3]) + (f" and {len(bad) - 3} more" if len(bad) > 3 else "")
        note = (f"{shown} {'is' if len(bad) == 1 else 'are'} unreadable: the files listed there are kept as "
                "the owner's until Dream writes them again; restore them with `git checkout -- .dream/written`")
        problem = f"{problem}; {note}" if problem else note
    return state, problem


def content_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


