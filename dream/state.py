"""`.dream/state.json`: what Dream has processed and written, committed with each run.

Sessions by content hash and turn count (a grown session is processed from its next turn),
entities met but not yet given a page (pages are made for things people return to), and the git
blob id of every file as Dream last wrote it (the base of the 3-way merge with manual edits).
Sorted, indented JSON, so `git log -p` shows what a run changed in it.

Versions 2 and 3 kept `written` and `sessions` in 256 files each under `.dream/written/` and
`.dream/sessions/`: such a state is read once, and the next render is one file (LEGACY_SHARDS
names the files the run removes).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from pydantic import ConfigDict, Field

from brain import layout
from brain.errors import BrainError
from brain.model import Model, empty_list

STATE_VERSION = 4
MAX_ENTITY_SESSIONS = 3
#: Where state versions 2 and 3 kept `written` and `sessions`, each in `<xx>.json` files.
LEGACY_SHARDS = {"written": ".dream/written", "sessions": ".dream/sessions"}


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


class DreamState(Model):
    model_config = ConfigDict(extra="forbid")
    version: int = STATE_VERSION
    sessions: dict[str, SessionState] = Field(default_factory=dict)
    entities: dict[str, EntityState] = Field(default_factory=dict)
    written: dict[str, str] = Field(default_factory=dict)  # path → git blob id of Dream's last write
    merge_bases: dict[str, str] = Field(default_factory=dict)  # path → Dream's own text, where the owner's edits sit on it
    slots: dict[str, list[str]] = Field(default_factory=dict)  # global slot → note paths that fill it
    mentions: dict[str, list[str]] = Field(default_factory=dict)  # page slug → notes of other pages naming it
    last_run: str | None = None

    def render(self, last_run: str | None = None, written: dict[str, str] | None = None) -> str:
        """The text of state.json. `last_run` and `written` (more entries) are applied to the
        output only, so a run can render its state several times without copying it."""
        data = self.model_dump(exclude_none=True)
        data["written"] = {**self.written, **(written or {})}
        if not data["merge_bases"]:  # most Brains have none: their state.json has no such key
            del data["merge_bases"]
        if last_run is not None:
            data["last_run"] = last_run
        return json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def legacy_files(root: Path) -> list[str]:
    """The shard files of a version 2 or 3 state in the Brain at `root` (DirTree does not list them)."""
    out = []
    for folder in LEGACY_SHARDS.values():
        path = Path(root) / folder
        if path.is_dir() and not path.is_symlink():
            out += sorted(f"{folder}/{p.name}" for p in path.iterdir() if p.is_file() and not p.is_symlink())
    return out


def parse_state(text: str | None, read: Callable[[str], str | None], shards: list[str]) -> tuple[DreamState, list[str]]:
    """The state and the problems met reading it. `read`: path → text or None; `shards`: the files
    of a version 2 or 3 state (`legacy_files`). An unreadable state.json gives a fresh state (every
    session is treated as new); one of a newer version raises BrainError."""
    if not text:
        return DreamState(), []
    try:
        raw = json.loads(text)
        if not isinstance(raw, dict):
            raise ValueError("not a JSON object")
        version = raw.get("version", 1)
        if isinstance(version, int) and version > STATE_VERSION:  # going on would write it back without what it cannot read
            raise BrainError(f"{layout.STATE} is version {version}, written by a newer Dream (this one reads up to "
                             f"{STATE_VERSION})", "upgrade brain-dream, then run it again")
        problems = _read_shards(raw, "written", read, shards) if version in (2, 3) else []
        problems += _read_shards(raw, "sessions", read, shards) if version == 3 else []
        return DreamState.model_validate({**raw, "version": STATE_VERSION}), problems
    except ValueError as exc:
        first = str(exc).splitlines()[0]
        return DreamState(), [f"{layout.STATE} is unreadable ({first}); every session will be treated as new"]


def _read_shards(raw: dict, key: str, read: Callable[[str], str | None], shards: list[str]) -> list[str]:
    """The map `key` of an older state, gathered from its shard files into `raw`."""
    merged: dict = {}
    problems = []
    for rel in (f for f in shards if f.startswith(LEGACY_SHARDS[key] + "/")):
        try:
            part = json.loads(read(rel) or "{}")
            if not isinstance(part, dict):
                raise ValueError
            merged.update(part)
        except ValueError:
            what = ("the sessions listed there are processed again as new" if key == "sessions"
                    else "the files listed there are kept as the owner's until Dream writes them again")
            problems.append(f"{rel} is unreadable: {what}")
    raw[key] = merged
    return problems
