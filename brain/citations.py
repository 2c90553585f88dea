"""Citation targets: `session:<id>#t4`, `session:<id>#t4-t6`, `source:<connector>/<id>`, `note:<path>`.

`CitationTarget.parse` and `str()` are a round-trip pair; resolution against a Brain lives in
`brain.resolve` so that this module stays pure.
"""

from __future__ import annotations

import functools
import re
from typing import Literal

from brain.model import Record

_SESSION_RE = re.compile(r"^session:([A-Za-z0-9][A-Za-z0-9._-]*)#t(\d+)(?:-t(\d+))?$")
_SOURCE_RE = re.compile(r"^source:([A-Za-z0-9][A-Za-z0-9._-]*)/(\S+)$")
_NOTE_RE = re.compile(r"^note:(\S+\.md)$")


class CitationError(ValueError):
    """A citation target string that does not follow the format; the message says which."""


class CitationTarget(Record):
    """Where a cited claim's evidence lives.

    kind=session: ref is the session id, turns first_turn..last_turn (inclusive, from 1).
    kind=source:  ref is `<connector>/<record-id>`.
    kind=note:    ref is the path below notes/.
    """

    kind: Literal["session", "source", "note"]
    ref: str
    first_turn: int | None = None
    last_turn: int | None = None

    @classmethod
    @functools.lru_cache(maxsize=65536)  # frozen, so one parsed target serves every reader
    def parse(cls, text: str) -> "CitationTarget":
        """The target a string names; raises CitationError (saying what is wrong) when malformed."""
        text = str(text).strip()
        m = _SESSION_RE.match(text)
        if m:
            first = int(m.group(2))
            last = int(m.group(3)) if m.group(3) else first
            if first < 1 or last < first:
                raise CitationError(f"turn range t{first}-t{last} must start at 1 or later and not run backwards")
            if ".." in m.group(1):
                raise CitationError("session id must not contain '..'")
            return cls(kind="session", ref=m.group(1), first_turn=first, last_turn=last)
        m = _SOURCE_RE.match(text)
        if m:
            return cls(kind="source", ref=f"{m.group(1)}/{m.group(2)}")
        m = _NOTE_RE.match(text)
        if m and ".." not in m.group(1).split("/") and not m.group(1).startswith("/"):
            return cls(kind="note", ref=m.group(1))
        raise CitationError(
            f"malformed citation target {text!r}: expected session:<id>#t<n>[-t<m>], "
            "source:<connector>/<id> or note:<path>.md"
        )

    @classmethod
    def session(cls, session_id: str, first: int, last: int | None = None) -> "CitationTarget":
        return cls(kind="session", ref=session_id, first_turn=first, last_turn=last or first)

    @property
    def connector(self) -> str | None:
        return self.ref.split("/", 1)[0] if self.kind == "source" else None

    @property
    def turns(self) -> range:
        """The cited turn numbers (empty for non-session targets)."""
        if self.kind != "session" or self.first_turn is None:
            return range(0)
        return range(self.first_turn, (self.last_turn or self.first_turn) + 1)

    def __str__(self) -> str:
        if self.kind == "session":
            if self.last_turn and self.last_turn != self.first_turn:
                return f"session:{self.ref}#t{self.first_turn}-t{self.last_turn}"
            return f"session:{self.ref}#t{self.first_turn}"
        return f"{self.kind}:{self.ref}"


def expand_session_cites(targets: list[CitationTarget]) -> list[str]:
    """`session:<id>#t<n>` for every turn the targets cover, sorted and unique."""
    out = {f"session:{t.ref}#t{n}" for t in targets if t.kind == "session" for n in t.turns}
    return sorted(out, key=_turn_sort_key)


def _turn_sort_key(ref: str) -> tuple[str, int]:
    head, _, turn = ref.rpartition("#t")
    return head, int(turn)
