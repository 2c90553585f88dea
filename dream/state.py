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
from collections.abc import Callable, MutableMapping
from typing import Annotated

from pydantic import BeforeValidator, ConfigDict, Field

from brain import layout
from brain.errors import BrainError
from brain.model import Model

#: 2: `written` lives in `.dream/written/` shards. A version 1 state.json (all in one file) is read
#: as it is, and its first render writes every shard.
STATE_VERSION = 2
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
    sessions: list[str] = Field(default_factory=list)
    slug: str | None = None


class Written(MutableMapping):
    """`written`: path → git blob id of Dream's last write, read shard by shard as paths are asked.

    A nightly run asks about the few dozen files it writes, of 57,000 on the 10k Brain: only their
    shards are parsed, and only the ones that changed rendered again. Iterating, len() and == read
    every shard. An entry in a shard it does not belong to is not taken (its file is the owner's);
    an unreadable shard is named in `problems` when it is first needed."""

    def __init__(self, entries: dict[str, str] | None = None, read: Callable[[str], str | None] | None = None) -> None:
        self._read = read  # shard path → text or None; None: nothing to read (a new or version 1 state)
        self._shards: dict[str, dict[str, str]] = {}  # shard → its entries now
        self._as_read: dict[str, dict[str, str]] = {}  # shard → its entries as read (what render compares)
        self.problems: list[str] = []  # unreadable shards met so far
        for path, blob in (entries or {}).items():
            self._shards.setdefault(written_shard(path), {})[path] = blob

    def _entries(self, shard: str) -> dict[str, str]:
        entries = self._shards.get(shard)
        if entries is None:
            entries = self._shards[shard] = dict(self._load(shard))
        return entries

    def _load(self, shard: str) -> dict[str, str]:
        raw = self._read(shard) if self._read is not None else None
        if raw is None:
            found: dict[str, str] = {}
        else:
            try:
                found = json.loads(raw)
            except ValueError:
                found = None
            if not isinstance(found, dict) or not all(isinstance(v, str) for v in found.values()):
                self.problems.append(shard)
                found = {}
            found = {path: blob for path, blob in found.items() if written_shard(path) == shard}
        self._as_read[shard] = found
        return found

    def _all(self) -> dict[str, dict[str, str]]:
        if self._read is not None:
            for shard in WRITTEN_SHARDS:
                self._entries(shard)
        return self._shards

    def __getitem__(self, path: str) -> str:
        return self._entries(written_shard(path))[path]

    def __contains__(self, path: object) -> bool:
        return isinstance(path, str) and path in self._entries(written_shard(path))

    def __setitem__(self, path: str, blob: str) -> None:
        self._entries(written_shard(path))[path] = blob

    def __delitem__(self, path: str) -> None:
        del self._entries(written_shard(path))[path]

    def __iter__(self):
        return (path for entries in list(self._all().values()) for path in list(entries))

    def __len__(self) -> int:
        return sum(map(len, self._all().values()))

    def __repr__(self) -> str:
        return f"Written({len(self._shards)} shards loaded)"

    def render(self, more: dict[str, str] | None = None) -> dict[str, str]:
        """Each shard whose entries (with `more`) differ from what was read: shard path → text.
        A state that read nothing (new, or version 1) writes every shard that has entries."""
        grouped: dict[str, dict[str, str]] = {}
        for path, blob in (more or {}).items():
            grouped.setdefault(written_shard(path), {})[path] = blob
        out = {}
        for shard in sorted(self._shards.keys() | grouped.keys()):
            entries = {**self._entries(shard), **grouped.get(shard, {})}
            # A shard not read (a new or version 1 state) was empty before: written when it has entries.
            if entries != self._as_read.get(shard, {}):
                out[shard] = dumps_indented(entries) + "\n"
        return out


class Sessions(MutableMapping):
    """`sessions`: session id → SessionState, read from state.json's text as ids are asked.

    Built from a dict, it is that dict. Built from the text of the "sessions" object as a render
    laid it out (`block`; the caller vouches that Dream rendered it: dream.run checks the blob id),
    an id is found in the text and only its entry parsed, and a render splices the entries set or
    deleted since into that text instead of laying out 10,000 sessions again. Iterating or len()
    parse them all (the dict then holds them)."""

    def __init__(self, entries: dict[str, SessionState] | None = None, block: str | None = None) -> None:
        self._dict: dict[str, SessionState] | None = dict(entries or {}) if block is None else None
        self._block = block
        self._changed: dict[str, SessionState | None] = {}  # over the block: set, or deleted (None)

    def _all(self) -> dict[str, SessionState]:
        if self._dict is None:
            raw = json.loads(self._block or "{}")
            entries = {sid: SessionState.model_validate(v) for sid, v in raw.items()}
            for sid, value in self._changed.items():
                if value is None:
                    entries.pop(sid, None)
                else:
                    entries[sid] = value
            self._dict, self._block, self._changed = dict(sorted(entries.items())), None, {}
        return self._dict

    def _lookup(self, sid: str) -> SessionState | None:
        if sid in self._changed:
            return self._changed[sid]
        start, end, found = _find_entry(self._block or "{}", sid)
        if not found:
            return None
        text = self._block[start:end]  # type: ignore[index]
        return SessionState.model_validate(json.loads(text[text.index(": {") + 2 :]))

    def __getitem__(self, sid: str) -> SessionState:
        value = self._all().get(sid) if self._dict is not None else self._lookup(sid)
        if value is None:
            raise KeyError(sid)
        return value

    def __contains__(self, sid: object) -> bool:
        if not isinstance(sid, str):
            return False
        return sid in self._dict if self._dict is not None else self._lookup(sid) is not None

    def __setitem__(self, sid: str, value: SessionState) -> None:
        if self._dict is not None:
            self._dict[sid] = value
        else:
            self._changed[sid] = value

    def __delitem__(self, sid: str) -> None:
        if sid not in self:
            raise KeyError(sid)
        if self._dict is not None:
            del self._dict[sid]
        else:
            self._changed[sid] = None

    def __iter__(self):
        return iter(list(self._all()))

    def __len__(self) -> int:
        return len(self._all())

    def __repr__(self) -> str:
        return f"Sessions({'lazy' if self._dict is None else len(self._dict)})"

    def render(self) -> str:
        """The "sessions" object as `dumps_indented` lays it out one level down (pad "\n ")."""
        if self._dict is not None:
            return _dump_at(dict(sorted((k, v.model_dump()) for k, v in self._dict.items())), "\n ")
        block = self._block or "{}"
        try:
            for sid, value in sorted(self._changed.items()):
                entry = None if value is None else _encode(sid) + ": " + _dump_at(value.model_dump(), "\n  ")
                block = _splice(block, _find_entry(block, sid), entry)
        except _Unusual:
            return Sessions(self._all()).render()
        return block


def _find_entry(block: str, sid: str) -> tuple[int, int, bool]:
    """Where the entry of `sid` is in a "sessions" block, `"<sid>": {…}` without a separator:
    (start, end, True); else (at, at, False), where it would be inserted (the closing "\\n }" when
    it would come last). Found by bisection: entries are sorted by id, each starts a line
    indented by two spaces with a quote, which no other line does (their lines have three)."""
    first = block.find('\n  "')
    if first < 0:
        return len(block) - 1, len(block) - 1, False  # "{}": before its "}"
    close_all = len(block) - 3  # "\n }"
    if block[close_all:] != "\n }":
        raise _Unusual
    lo, hi = first + 3, close_all
    while lo < hi:
        mid = (lo + hi) // 2
        start = block.rfind('\n  "', lo - 3, mid + 1) + 3
        if json.loads(_key_at(block, start)) < sid:
            end = _end_at(block, start)
            lo = end + 4 if block.startswith(",\n  ", end) else close_all
        else:
            hi = start
    if lo >= close_all or json.loads(_key_at(block, lo)) != sid:
        return lo, lo, False
    return lo, _end_at(block, lo), True


def _key_at(block: str, start: int) -> str:
    """The key of the entry at `start`, as JSON."""
    colon = block.find('": {', start)
    if colon < 0 or block[start] != '"':
        raise _Unusual
    return block[start : colon + 1]


def _end_at(block: str, start: int) -> int:
    """Where the entry at `start` ends (after its "\\n  }")."""
    close = block.find("\n  }", start)
    if close < 0:
        raise _Unusual
    return close + 4


def _splice(block: str, where: tuple[int, int, bool], entry: str | None) -> str:
    """`block` with the entry at `where` (`_find_entry`) replaced by `entry`, inserted, or removed (None)."""
    start, end, found = where
    if found and entry is not None:
        return block[:start] + entry + block[end:]
    if found:  # the entry goes with one separator ",\n  ": the one after it, else the one before
        if block.startswith(",\n  ", end):
            return block[:start] + block[end + 4 :]
        if block[start - 4 : start] == ",\n  ":
            return block[: start - 4] + block[end:]
        return "{}"  # it was the only one
    if entry is None:
        return block
    if block == "{}":
        return "{\n  " + entry + "\n }"
    if start == len(block) - 3:  # after the last entry
        return block[:start] + ",\n  " + entry + block[start:]
    return block[:start] + entry + ",\n  " + block[start:]


def _dump_at(value: object, pad: str) -> str:
    """`value` as dumps_indented lays it out where its lines are indented by `pad` (a newline and spaces)."""
    return dumps_indented(value).replace("\n", pad)


def _as_sessions(value: object) -> object:
    """A plain mapping (a parsed state.json, a constructor argument) becomes a Sessions."""
    if isinstance(value, Sessions):
        return value
    if isinstance(value, dict):
        return Sessions({k: v if isinstance(v, SessionState) else SessionState.model_validate(v) for k, v in value.items()})
    return value


def _as_written(value: object) -> object:
    """A plain mapping (a version 1 state.json, a constructor argument) becomes a Written."""
    return value if isinstance(value, Written) else Written(dict(value)) if isinstance(value, dict) else value


class DreamState(Model):
    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)
    version: int = STATE_VERSION
    sessions: Annotated[Sessions, BeforeValidator(_as_sessions)] = Field(default_factory=Sessions)
    entities: dict[str, EntityState] = Field(default_factory=dict)
    # path → git blob id of Dream's last write, in `.dream/written/` (in state.json up to version 1)
    written: Annotated[Written, BeforeValidator(_as_written)] = Field(default_factory=Written)
    slots: dict[str, list[str]] = Field(default_factory=dict)  # global slot → note paths that fill it
    mentions: dict[str, list[str]] = Field(default_factory=dict)  # page slug → notes of other pages naming it
    last_run: str | None = None

    def render(self, last_run: str | None = None, written: dict[str, str] | None = None) -> dict[str, str]:
        """state.json and each `.dream/written/` shard whose entries changed since it was read: path → text.

        Sorted, stable JSON (one key per line at the top levels) so diffs stay readable.
        `last_run` and `written` (more entries) are applied to the output only, so a run can
        render its state several times without copying it."""
        data = self.model_dump(exclude_none=True, exclude={"written", "sessions"})
        data["version"] = STATE_VERSION
        if last_run is not None:
            data["last_run"] = last_run
        text = dumps_indented(data)
        at = text.find(_AFTER_SESSIONS)  # keys are sorted: "sessions" comes right before "slots"
        if at < 0:
            raise BrainError(f"{layout.STATE} could not be laid out", "report this bug")
        text = text[:at] + _SESSIONS_KEY + self.sessions.render() + text[at:]
        return {layout.STATE: text + "\n", **self.written.render(written)}


#: Where state.json's "sessions" object begins and what follows it, as `dumps_indented` lays out the
#: state (sorted keys: … "mentions", "sessions", "slots", "version"; "slots" is always there).
_SESSIONS_KEY = ',\n "sessions": '
_AFTER_SESSIONS = ',\n "slots": '


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


def parse_state(text: str | None, read: Callable[[str], str | None] | None = None, rendered: bool = False) -> tuple[DreamState, str | None]:
    """The state, and a problem message when state.json was unreadable. `read`: path → text or
    None, to read the `.dream/written/` shards as they are needed (without it none are: only
    sessions are wanted); an unreadable shard is named in `state.written.problems` (see
    `shard_problem`) and the files it listed are taken for the owner's until Dream writes them again.
    `rendered`: the caller vouches that `text` is a render of this code's (dream.run checks its blob
    id): its sessions are then read as they are asked (Sessions), not all 10,000 parsed.

    A state.json of a newer version raises BrainError. An unreadable one gives a fresh state (every
    session is treated as new)."""
    state, problem = DreamState(), None
    if text:
        block = None
        if rendered and (start := text.find(_SESSIONS_KEY)) > 0 and (end := text.find(_AFTER_SESSIONS, start)) > 0:
            block, text = text[start + len(_SESSIONS_KEY) : end], text[:start] + text[end:]
        try:
            state = DreamState.model_validate_json(text)
            if block is not None:
                state.sessions = Sessions(block=block)
        except ValueError as exc:
            first = str(exc).splitlines()[0]
            state, problem = DreamState(), f"{layout.STATE} is unreadable ({first}); every session will be treated as new"
    if state.version > STATE_VERSION:  # going on would write it back without what this version cannot read
        raise BrainError(f"{layout.STATE} is version {state.version}, written by a newer Dream (this one reads up to "
                         f"{STATE_VERSION})", "upgrade brain-dream, then run it again")
    if read is not None and state.version >= 2:
        state.written = Written(read=read)
    return state, problem


def shard_problem(written: Written) -> str | None:
    """What to tell the owner about the unreadable shards met so far (None when there were none)."""
    bad = sorted(set(written.problems))
    if not bad:
        return None
    shown = ", ".join(bad[:3]) + (f" and {len(bad) - 3} more" if len(bad) > 3 else "")
    return (f"{shown} {'is' if len(bad) == 1 else 'are'} unreadable: the files listed there are kept as "
            "the owner's until Dream writes them again; restore them with `git checkout -- .dream/written`")


def content_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


