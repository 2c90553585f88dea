"""The staged tree: every file a run writes is staged here, in memory, until sync commits it.

A dry run, or a run that fails, writes it out to `.dream/runs/<run-id>/staged/` for the owner to
read. Writes outside the paths Dream may write (invariant 1) or with unsafe names are refused here,
so no backend output can reach `.git/`, `guide.md`, raw sessions or anything else.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from brain.errors import BrainError
from brain.layout import dream_may_write, unsafe_reason
from brain.tree import MemTree, Tree, text_if_exists


class StagingError(BrainError):
    """A write the layout does not allow."""


class StagedTree:
    """Files written by this run, over the live tree they will replace."""

    def __init__(self, root: Path, base: Tree, removable: tuple[str, ...] = (), listed: frozenset[str] = frozenset()) -> None:
        """`removable`: folders (".dream/written/") whose files a run may remove, besides its own.
        `listed`: the files the run found when it began; one gone when the run stages it was
        deleted by the owner meanwhile (`vanished`), and sync does not bring it back."""
        self.root = Path(root)
        self.base = base
        self.removable = removable
        self._written: dict[str, str] = {}
        self.removed: set[str] = set()  # live files this run deletes
        self.derived_from: dict[str, str | None] = {}  # live text each staged file was computed from
        self.listed = listed
        self.vanished: set[str] = set()

    def write(self, rel: str, text: str) -> None:
        if not dream_may_write(rel):
            reason = unsafe_reason(rel) or "outside the paths Dream may write"
            raise StagingError(f"refused to stage {rel!r}: {reason}")
        if rel not in self.derived_from:
            self.computed_from(rel, text_if_exists(self.base, rel))
        self._written[rel] = text

    def computed_from(self, rel: str, live: str | None) -> None:
        """The live text a staged file is computed from, when the caller read it (else `write` reads it)."""
        if rel not in self.derived_from:
            self.derived_from[rel] = live
            if live is None and rel in self.listed:
                self.vanished.add(rel)

    def remove(self, rel: str) -> None:
        """Delete a live file Dream owns (a state file of an older layout)."""
        if not (dream_may_write(rel) or rel.startswith(self.removable)) or unsafe_reason(rel):
            raise StagingError(f"refused to remove {rel!r}: outside the paths Dream may write")
        self.removed.add(rel)

    def drop(self, rel: str) -> None:
        """Remove a staged file (a rejected page): the live version, if any, stays."""
        self._written.pop(rel, None)

    def flush(self) -> None:
        """Write what is staged into the run's folder, for the owner to read (nothing reads it back)."""
        shutil.rmtree(self.root, ignore_errors=True)
        self.root.mkdir(parents=True)
        for rel, text in self._written.items():
            path = self.root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")

    def read(self, rel: str) -> str | None:
        """The staged text, else the live text, else None."""
        if rel in self._written:
            return self._written[rel]
        return text_if_exists(self.base, rel)

    @property
    def written(self) -> dict[str, str]:
        """Staged path → text, sorted by path (a fresh copy: callers may drop files while iterating)."""
        return dict(sorted(self._written.items()))

    def has(self, rel: str) -> bool:
        return rel in self._written

    def tree(self) -> MemTree:
        """The staged files as a tree (read live: every write and drop goes through this class)."""
        return MemTree(self._written, self.root)
