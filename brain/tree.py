"""File trees a Brain can be read from: a folder on disk, or a staged overlay on top of one.

Validators, the index renderer and the CLI read through `Tree`, so the same checks run on the
live wiki and on dream's staged tree (staged files over the live ones, minus staged deletions).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Protocol

_SKIP_DIRS = frozenset({".git", ".venv", "__pycache__", "node_modules"})
#: Below .dream only these are part of the Brain; runs/, cache/ and the lock are machine state.
_DREAM_KEEP = frozenset({"instructions.md", "forget.md", "state.json"})


class Tree(Protocol):
    """Read-only view of a Brain's files by relative POSIX path."""

    def files(self) -> list[str]: ...
    def read_bytes(self, rel: str) -> bytes: ...
    def exists(self, rel: str) -> bool: ...
    def is_symlink(self, rel: str) -> bool: ...
    def symlink_target(self, rel: str) -> str | None: ...


class DirTree:
    """A folder on disk. Listing is sorted; `.git`, dream's run folders and caches are skipped."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self._files: list[str] | None = None

    def files(self) -> list[str]:
        if self._files is None:
            self._files = sorted(_walk(self.root))
        return self._files

    # os.path on strings, not pathlib: validate calls these ~50,000 times on a large Brain and
    # Path construction was a quarter of its time.
    def _abs(self, rel: str) -> str:
        return os.path.join(self.root, rel)

    def read_bytes(self, rel: str) -> bytes:
        with open(self._abs(rel), "rb") as f:
            return f.read()

    def read_text(self, rel: str) -> str:
        return self.read_bytes(rel).decode("utf-8", errors="replace")

    def exists(self, rel: str) -> bool:
        return os.path.isfile(self._abs(rel))

    def is_symlink(self, rel: str) -> bool:
        return os.path.islink(self._abs(rel))

    def symlink_target(self, rel: str) -> str | None:
        """Where a symlink points, resolved; None when `rel` is not a link."""
        path = self.root / rel
        if not path.is_symlink():
            return None
        return str(path.resolve())


class OverlayTree:
    """`upper` (a staged tree) over `base`, with `deleted` paths hidden."""

    def __init__(self, base: Tree, upper: DirTree, deleted: frozenset[str] = frozenset()) -> None:
        self.base = base
        self.upper = upper
        self.deleted = deleted
        self.root = upper.root
        self._files: list[str] | None = None

    def files(self) -> list[str]:
        if self._files is None:
            merged = (set(self.base.files()) | set(self.upper.files())) - self.deleted
            self._files = sorted(merged)
        return self._files

    def _pick(self, rel: str) -> Tree:
        return self.upper if self.upper.exists(rel) else self.base

    def read_bytes(self, rel: str) -> bytes:
        if rel in self.deleted:
            raise FileNotFoundError(rel)
        return self._pick(rel).read_bytes(rel)

    def read_text(self, rel: str) -> str:
        return self.read_bytes(rel).decode("utf-8", errors="replace")

    def exists(self, rel: str) -> bool:
        return rel not in self.deleted and (self.upper.exists(rel) or self.base.exists(rel))

    def is_symlink(self, rel: str) -> bool:
        return self._pick(rel).is_symlink(rel)

    def symlink_target(self, rel: str) -> str | None:
        return self._pick(rel).symlink_target(rel)

    def brain_root(self) -> Path:
        """The live Brain's folder (symlinks are judged against it)."""
        return getattr(self.base, "root", self.upper.root)


def _walk(root: Path) -> list[str]:
    out: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        rel_dir = os.path.relpath(dirpath, root).replace(os.sep, "/")
        rel_dir = "" if rel_dir == "." else rel_dir + "/"
        keep = []
        for d in sorted(dirnames):
            full = os.path.join(dirpath, d)
            if d in _SKIP_DIRS or (rel_dir == "" and d == ".dream"):
                continue
            if os.path.islink(full):
                out.append(rel_dir + d)  # a linked folder is listed as a file so S checks see it
                continue
            keep.append(d)
        dirnames[:] = keep
        for f in sorted(filenames):
            out.append(rel_dir + f)
    dream = root / ".dream"
    if dream.is_dir() and not dream.is_symlink():
        out += [f".dream/{name}" for name in sorted(_DREAM_KEEP) if (dream / name).is_file()]
    return out
