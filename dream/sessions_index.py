"""sessions/index.md kept as lines between runs: a nightly run splices its few new summaries in.

The index lists every session summary, newest first (brain.render.render_sessions_index_lines):
10,000 lines on the 10k Brain, each the card of a summary. A run that rebuilt it looked up the
card of every summary. Instead, a run leaves in its cache the sort key of each line of the index
it committed, with git's index entries of the summaries it was rendered from (`IndexSnapshot`).
While sessions/index.md is that blob and the summaries folder holds exactly those entries (git
vouches for each file, none untracked), its lines are the live summaries' lines: the next run
reads them from the file and splices in the summaries it stages.
"""

from __future__ import annotations

from typing import NamedTuple

from brain.frames import frame, unframe


def sort_key(session_id: str, started: str) -> str:
    """A line's place: render_sessions_index_lines orders by (started, id), newest first. NUL sorts
    before every other character and is in neither, so these strings sort as those pairs do."""
    return f"{started}\0{session_id}"


class IndexLines:
    """The lines of sessions/index.md with their sort keys, newest first; spliced in place."""

    def __init__(self, keys: list[str], lines: list[str]) -> None:
        self.keys, self.lines = keys, lines

    @classmethod
    def of(cls, entries: dict[str, tuple[str, str]]) -> "IndexLines":
        """From session id → (started, line), as render_sessions_index_lines orders them."""
        ordered = sorted(entries.items(), key=lambda kv: (kv[1][0], kv[0]), reverse=True)
        return cls([sort_key(sid, started) for sid, (started, _) in ordered], [line for _, (_, line) in ordered])

    def entries(self) -> dict[str, tuple[str, str]]:
        """session id → (started, line): what `of` takes."""
        parts = self._parts()
        return dict(zip(parts[1::2], zip(parts[::2], self.lines)))

    def lines_by_id(self) -> dict[str, str]:
        """session id → line."""
        return dict(zip(self._parts()[1::2], self.lines))

    def _parts(self) -> list[str]:
        """started, id, started, id, … of the keys: split in C (the gate asks for the 10,000 lines
        of the 10k Brain by id: 8 ms key by key)."""
        parts = "\0".join(self.keys).split("\0")
        if len(parts) != 2 * len(self.keys):  # a key holds no NUL, or more than one: not made by sort_key
            parts = [part for key in self.keys for part in key.partition("\0")[::2]]
        return parts

    def copy(self) -> "IndexLines":
        return IndexLines(list(self.keys), list(self.lines))

    def put(self, session_id: str, entry: tuple[str, str] | None) -> None:
        """Set the line of `session_id` to entry (started, line), or remove it (None)."""
        self._drop(session_id)
        if entry is None:
            return
        key = sort_key(session_id, entry[0])
        lo, hi = 0, len(self.keys)
        while lo < hi:  # the first key below `key` (the list is in descending order)
            mid = (lo + hi) // 2
            if self.keys[mid] > key:
                lo = mid + 1
            else:
                hi = mid
        self.keys.insert(lo, key)
        self.lines.insert(lo, entry[1])

    def _drop(self, session_id: str) -> None:
        tail = "\0" + session_id
        # Found in the keys joined, a search in C rather than a loop over the 10,000 keys of the 10k
        # Brain (a nightly run's session is new: every key was looked at), when no key holds a
        # newline: then a key's place is the number of newlines before it.
        joined = "\n".join(self.keys) + "\n"
        if joined.count("\n") == len(self.keys):
            at = joined.find(tail + "\n")
            while at >= 0:
                i = joined.count("\n", 0, at)
                if self.keys[i].count("\0") == 1:
                    del self.keys[i], self.lines[i]
                    return
                at = joined.find(tail + "\n", at + 1)
            return
        for i, key in enumerate(self.keys):
            if key.endswith(tail) and key.count("\0") == 1:
                del self.keys[i], self.lines[i]
                return

    def text(self) -> str:
        """sessions/index.md, as render_sessions_index_lines writes it."""
        return "# Sessions\n" + ("\n" + "\n".join(self.lines) + "\n" if self.lines else "")


class IndexSnapshot(NamedTuple):
    """What a run committed as sessions/index.md (`index`: its blob id), the sort key of each of
    its lines, and git's index entries of the summaries it lists (as the next run will find them)."""

    index: str
    entries: frozenset[bytes]
    keys: list[str]

    def dump(self, version: str) -> bytes:
        entries = b"\0".join(sorted(self.entries))
        return frame(version, {"index": self.index, "entries": len(entries)}, entries + b"\n" + "\n".join(self.keys).encode("utf-8"))

    @classmethod
    def load(cls, raw: bytes | None, version: str) -> "IndexSnapshot | None":
        """What `dump` wrote with this `version`; None when absent, of other code, or damaged."""
        found = unframe(raw, version)
        if found is None:
            return None
        head, body = found
        n_entries = head.get("entries")
        if not isinstance(head.get("index"), str) or not isinstance(n_entries, int) or body[n_entries : n_entries + 1] != b"\n":
            return None
        entries = body[:n_entries]
        keys = body[n_entries + 1 :].decode("utf-8", errors="replace")
        return cls(head["index"], frozenset(entries.split(b"\0")) if entries else frozenset(), keys.split("\n") if keys else [])

    def lines(self, text: str) -> IndexLines | None:
        """The index's lines with their keys, from the text of the index this snapshot describes;
        None when they do not pair up (then the lines are built from the summaries)."""
        if text == "# Sessions\n":
            return IndexLines([], []) if not self.keys else None
        head, sep, rest = text.partition("\n\n")
        lines = rest.split("\n")[:-1]
        if head != "# Sessions" or not sep or not rest.endswith("\n") or len(lines) != len(self.keys):
            return None
        return IndexLines(list(self.keys), lines)


def entry_of(path: str, blob: str) -> bytes:
    """git's index entry of a regular file `path` holding blob `blob`, as `git ls-files -s -v -z` shows it."""
    return b"H 100644 %s 0\t%s" % (blob.encode("ascii"), path.encode("utf-8", "surrogateescape"))
