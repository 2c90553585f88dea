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
        self.derived_from: dict[str, str | None] = {}  # live text each staged file was computed from

    def write(self, rel: str, text: str) -> None:
        if not dream_may_write(rel):
            reason = unsafe_reason(rel) or "outside the paths Dream may write"
            raise StagingError(f"refused to stage {rel!r}: {reason}")
        path = self.root / rel
        parent = path.parent
        if parent not in self._dirs:
            parent.mkdir(parents=True, exist_ok=True)
            self._dirs.add(parent)
        # The staged tree is private to the run (a crash discards it), so plain writes suffice.
        path.write_bytes(text.encode("utf-8"))
        if rel not in self.derived_from:
            live = self.base.read_bytes(rel).decode("utf-8", errors="replace") if self.base.exists(rel) else None
            self.derived_from[rel] = live
        self._written[rel] = text

    def drop(self, rel: str) -> None:
        """Remove a staged file (a rejected page): the live version, if any, stays."""
        self._written.pop(rel, None)
        (self.root / rel).unlink(missing_ok=True)

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
