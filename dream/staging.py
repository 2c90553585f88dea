"""The staged tree: every file a run writes lands under `.dream/runs/<run-id>/staged/` first.

Writes outside the paths Dream may write (invariant 1) or with unsafe names are refused here,
so no backend output can reach `.git/`, `guide.md`, raw sessions or anything else.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from brain.errors import BrainError
from brain.layout import dream_may_write, unsafe_reason
from brain.tree import MemTree, OverlayTree, Tree


class StagingError(BrainError):
    """A write the layout does not allow."""


class StagedTree:
    """Files written by this run, over the live tree they will replace."""

    def __init__(self, root: Path, base: Tree) -> None:
        self.root = Path(root)
        if self.root.exists():
            shutil.rmtree(self.root)
        self.root.mkdir(parents=True)
        self.base = base
        self._written: dict[str, str] = {}
        self._dirs: set[Path] = set()
        self._unflushed: set[str] = set()  # written or dropped since the last flush()
        self.derived_from: dict[str, str | None] = {}  # live text each staged file was computed from

    def write(self, rel: str, text: str) -> None:
        if not dream_may_write(rel):
            reason = unsafe_reason(rel) or "outside the paths Dream may write"
            raise StagingError(f"refused to stage {rel!r}: {reason}")
        # Kept in memory and written to the folder once, by flush(): a note gains sources many
        # times in one run, and the folder is only for people inspecting a run.
        self._unflushed.add(rel)
        if rel not in self.derived_from:
            live = self.base.read_bytes(rel).decode("utf-8", errors="replace") if self.base.exists(rel) else None
            self.derived_from[rel] = live
        self._written[rel] = text

    def drop(self, rel: str) -> None:
        """Remove a staged file (a rejected page): the live version, if any, stays."""
        self._written.pop(rel, None)
        self._unflushed.add(rel)

    def flush(self) -> None:
        """Bring the staged folder in line with what is staged (private to the run: plain writes)."""
        for rel in sorted(self._unflushed):
            path = self.root / rel
            text = self._written.get(rel)
            if text is None:
                path.unlink(missing_ok=True)
                continue
            if path.parent not in self._dirs:
                path.parent.mkdir(parents=True, exist_ok=True)
                self._dirs.add(path.parent)
            path.write_bytes(text.encode("utf-8"))
        self._unflushed.clear()

    def read(self, rel: str) -> str | None:
        """The staged text, else the live text, else None."""
        if rel in self._written:
            return self._written[rel]
        if self.base.exists(rel):
            return self.base.read_bytes(rel).decode("utf-8", errors="replace")
        return None

    @property
    def written(self) -> dict[str, str]:
        """Staged path → text, sorted by path (a fresh copy: callers may drop files while iterating)."""
        return dict(sorted(self._written.items()))

    def has(self, rel: str) -> bool:
        return rel in self._written

    def overlay(self) -> OverlayTree:
        """The staged files over the live tree; staged files are read from memory (they mirror
        the staged folder: every write and drop goes through this class)."""
        return OverlayTree(self.base, MemTree(self._written, self.root))
