"""`.dream/state.json` and its shards `.dream/written/<xx>.json` and `.dream/sessions/<xx>.json`:
what Dream has processed and written, committed with each run.

Sessions by content hash and turn count (a grown session is processed from its next turn),
entities met but not yet given a page (pages are made for things people return to), and the git
blob id of every file as Dream last wrote it (the base of the 3-way merge with manual edits). The
two maps are most of the state (57,000 paths and 10,000 sessions on a 10,000-session Brain, 3 MB):
each is kept in 256 files by the first two hex digits of the sha1 of each key, so a run reads the
shards of what it asks about and rewrites (and git stores again) only those whose entries changed,
kilobytes, not megabytes.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, MutableMapping
from itertools import chain
from typing import Annotated

from pydantic import BeforeValidator, ConfigDict, Field

from brain import layout
from brain.errors import BrainError
from brain.model import Model, empty_list

#: 2: `written` lives in `.dream/written/` shards. 3: `sessions` lives in `.dream/sessions/` shards.
#: An older state.json is read as it is, and its first render writes every shard it lacked.
STATE_VERSION = 3
MAX_ENTITY_SESSIONS = 3


class SessionState(Model):
    model_config = ConfigDict(extra="forbid")
    hash: str
    turns: int
    run: str


class EntityState(Model):
    """An entity met in sessions: its type, where it was met (a few ids), its page slug once it has one."""

    model_config = ConfigDict(extra="forbid")
    name: str
    type: str
    sessions: list[str] = Field(default_factory=empty_list)
    slug: str | None = None


class _Shards(MutableMapping):
    """A map kept in 256 files of a folder by the first two hex digits of the sha1 of each key,
    read shard by shard as keys are asked (`read`: shard path → text or None; None: nothing to read,
    a new state or one whose map was still in state.json).

    A nightly run asks about a few dozen keys: only their shards are parsed, and only the ones that
    changed rendered again. Iterating, len() and == read every shard. An entry in a shard it does
    not belong to is not taken; an unreadable shard is named in `problems` when it is first needed."""

    FOLDER = ""

    def __init__(self, entries: dict | None = None, read: Callable[[str], str | None] | None = None) -> None:
        self._read = read
        self._shards: dict[str, dict] = {}  # shard → its entries now
        self._as_read: dict[str, dict] = {}  # shard → its entries as read (what render compares)
        self.problems: list[str] = []  # unreadable shards met so far
        for key, value in (entries or {}).items():
            self._shards.setdefault(self.shard(key), {})[key] = value

    @classmethod
    def shard(cls, key: str) -> str:
        """The file holding `key`'s entry."""
        return f"{cls.FOLDER}/{hashlib.sha1(key.encode('utf-8')).hexdigest()[:2]}.json"

    @classmethod
    def shards(cls) -> tuple[str, ...]:
        """Every shard file there can be, in order."""
        return tuple(f"{cls.FOLDER}/{i:02x}.json" for i in range(256))

    def _decode(self, found: dict) -> dict | None:
        """The entries of a parsed shard (None: not what a render writes)."""
        raise NotImplementedError

    def _encode(self, entries: dict) -> dict:
        return entries

    def _entries(self, shard: str) -> dict:
        entries = self._shards.get(shard)
        if entries is None:
            entries = self._shards[shard] = dict(self._load(shard))
        return entries

    def _load(self, shard: str) -> dict:
        raw = self._read(shard) if self._read is not None else None
        found: dict | None = {}
        if raw is not None:
            try:
                parsed = json.loads(raw)
            except ValueError:
                parsed = None
            found = self._decode(parsed) if isinstance(parsed, dict) else None
            if found is None:
                self.problems.append(shard)
                found = {}
            found = {key: value for key, value in found.items() if self.shard(key) == shard}
        self._as_read[shard] = found
        return found

    def _all(self) -> dict[str, dict]:
        if self._read is not None:
            for shard in self.shards():
                self._entries(shard)
        return self._shards

    def __getitem__(self, key: str):
        return self._entries(self.shard(key))[key]

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and key in self._entries(self.shard(key))

    def __setitem__(self, key: str, value) -> None:
        self._entries(self.shard(key))[key] = value

    def __delitem__(self, key: str) -> None:
        del self._entries(self.shard(key))[key]

    def __iter__(self):
        return (key for entries in list(self._all().values()) for key in list(entries))

    def __len__(self) -> int:
        return sum(map(len, self._all().values()))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({len(self._shards)} shards loaded)"

    def render(self, more: dict | None = None) -> dict[str, str]:
        """Each shard whose entries (with `more`) differ from what was read: shard path → text.
        A map that read nothing (new, or still in state.json) writes every shard that has entries."""
        grouped: dict[str, dict] = {}
        for key, value in (more or {}).items():
            grouped.setdefault(self.shard(key), {})[key] = value
        out = {}
        for shard in sorted(self._shards.keys() | grouped.keys()):
            entries = {**self._entries(shard), **grouped.get(shard, {})}
            # A shard not read (a new state, or one whose map was in state.json) was empty before:
            # written when it has entries.
            if entries != self._as_read.get(shard, {}):
                out[shard] = dumps_indented(self._encode(entries)) + "\n"
        return out


class Written(_Shards):
    """`written`: path → git blob id of Dream's last write, in `.dream/written/` (57,000 paths on
    the 10k Brain). An entry of an unreadable shard is lost: its file counts as the owner's."""

    FOLDER = layout.WRITTEN

    def _decode(self, found: dict) -> dict | None:
        return found if all(isinstance(v, str) for v in found.values()) else None


class SessionRecords(_Shards):
    """`sessions`: session id → SessionState, in `.dream/sessions/` (10,000 on the 10k Brain; a
    nightly run reads the shards of the sessions it examines). A session of an unreadable shard
    is taken for new: it is processed again."""

    FOLDER = layout.SESSION_RECORDS

    def _decode(self, found: dict) -> dict | None:
        try:
            return {sid: SessionState.model_validate(value) for sid, value in found.items()}
        except ValueError:
            return None

    def _encode(self, entries: dict) -> dict:
        return {sid: value.model_dump() for sid, value in entries.items()}


def _as_sessions(value: object) -> object:
    """A plain mapping (state.json up to version 2, a constructor argument) becomes SessionRecords."""
    if isinstance(value, SessionRecords):
        return value
    if isinstance(value, dict):
        return SessionRecords({k: v if isinstance(v, SessionState) else SessionState.model_validate(v) for k, v in value.items()})
    return value


def _as_written(value: object) -> object:
    """A plain mapping (a version 1 state.json, a constructor argument) becomes a Written."""
    return value if isinstance(value, Written) else Written(dict(value)) if isinstance(value, dict) else value


class DreamState(Model):
    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)
    version: int = STATE_VERSION
    # session id → SessionState, in `.dream/sessions/` (in state.json up to version 2)
    sessions: Annotated[SessionRecords, BeforeValidator(_as_sessions)] = Field(default_factory=SessionRecords)
    entities: dict[str, EntityState] = Field(default_factory=dict)
    # path → git blob id of Dream's last write, in `.dream/written/` (in state.json up to version 1)
    written: Annotated[Written, BeforeValidator(_as_written)] = Field(default_factory=Written)
    slots: dict[str, list[str]] = Field(default_factory=dict)  # global slot → note paths that fill it
    mentions: dict[str, list[str]] = Field(default_factory=dict)  # page slug → notes of other pages naming it
    last_run: str | None = None

    def render(self, last_run: str | None = None, written: dict[str, str] | None = None) -> dict[str, str]:
        """state.json and each shard (`.dream/written/`, `.dream/sessions/`) whose entries changed
        since it was read: path → text.

        Sorted, stable JSON (one key per line at the top levels) so diffs stay readable.
        `last_run` and `written` (more entries) are applied to the output only, so a run can
        render its state several times without copying it."""
        data = self.model_dump(exclude_none=True, exclude={"written", "sessions"})
        data["version"] = STATE_VERSION
        if last_run is not None:
            data["last_run"] = last_run
        return {layout.STATE: dumps_indented(data) + "\n", **self.written.render(written), **self.sessions.render()}


written_shard = Written.shard  # the `.dream/written/` file holding a path's entry
session_shard = SessionRecords.shard  # the `.dream/sessions/` file holding a session's record
#: Every shard file there can be, in order.
WRITTEN_SHARDS = Written.shards()


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
    """The shapes of the state and its shards, laid out by string formatting, not one value at a
    time: str → str (`written`, 57,000 paths on the 10k Brain), str → a list of strings
    (`mentions`), and str → a dict with the same keys in each, every column all strings, all ints
    or all lists of strings (`sessions`, 10,000; `entities`); a first compile or a migration renders
    every shard. Else None (the general path). Only strings json writes as they are qualify, so the
    bytes are json.dumps's."""
    keys = sorted(value)
    rows = [value[k] for k in keys]
    if not _plain(keys):
        return None
    inner = pad + " "
    if all(type(v) is str for v in rows):
        if not _plain(rows):
            return None
        return "{" + inner + '"' + ('",' + inner + '"').join(map('": "'.join, zip(keys, rows))) + '"' + pad + "}"
    if all(type(v) is list for v in rows):
        cells = _plain_lists(rows, inner)
        if cells is None:
            return None
        return "{" + inner + ("," + inner).join(['"%s": %s' % kv for kv in zip(keys, cells)]) + pad + "}"
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
        elif all(type(v) is list for v in column) and (column := _plain_lists(column, cell)) is not None:
            formats.append('"' + col + '": %s')
        else:
            return None
        columns.append(column)
    row = '"%s": {' + cell + ("," + cell).join(formats) + inner + "}"
    return "{" + inner + ("," + inner).join([row % cells for cells in zip(keys, *columns)]) + pad + "}"


def _plain_lists(lists: list[list], pad: str) -> list[str] | None:
    """Each list of strings as json.dumps(indent=1) lays it out at `pad`; None unless every item of
    every list is a string json writes as it is."""
    try:  # joins only strings: anything else raises
        if not _plain(list(chain.from_iterable(lists))):
            return None
    except TypeError:
        return None
    inner = pad + " "
    sep = '",' + inner + '"'
    return ["[" + inner + '"' + sep.join(one) + '"' + pad + "]" if one else "[]" for one in lists]


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


def parse_state(text: str | None, read: Callable[[str], str | None]) -> tuple[DreamState, str | None]:
    """The state, and a problem message when state.json was unreadable. `read`: path → text or
    None, to read the shards (`.dream/written/`, `.dream/sessions/`) as they are needed; an
    unreadable shard is named in the map's `problems` (see `shard_problem`): the files a written
    shard listed are taken for the owner's until Dream writes them again, the sessions a sessions
    shard listed for new.

    A state.json of a newer version raises BrainError. An unreadable one gives a fresh state (every
    session is treated as new)."""
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
    if state.version >= 2:
        state.written = Written(read=read)
    if state.version >= 3:
        state.sessions = SessionRecords(read=read)
    return state, problem


def shard_problem(shards: _Shards) -> str | None:
    """What to tell the owner about the unreadable shards of a map met so far (None when there were none)."""
    bad = sorted(set(shards.problems))
    if not bad:
        return None
    shown = ", ".join(bad[:3]) + (f" and {len(bad) - 3} more" if len(bad) > 3 else "")
    what = ("the sessions listed there are processed again as new" if isinstance(shards, SessionRecords)
            else "the files listed there are kept as the owner's until Dream writes them again")
    return f"{shown} {'is' if len(bad) == 1 else 'are'} unreadable: {what}; restore them with `git checkout -- {shards.FOLDER}`"


def content_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


