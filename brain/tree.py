"""File trees a Brain can be read from: a folder on disk, files in memory, or one over another.

Validators, the index renderer and the CLI read through a `Tree`, so the same checks run on the
live wiki and on Dream's staged tree (staged files over the live ones).
"""

from __future__ import annotations

import bisect
import os
import stat
from pathlib import Path
from typing import Protocol

_SKIP_DIRS = frozenset({".git", ".venv", "__pycache__", "node_modules"})
#: Below .dream only these are part of the Brain; runs/, cache/ and the lock are machine state.
_DREAM_KEEP = ("forget.md", "instructions.md", "state.json")


class Tree(Protocol):
    """Read-only view of a Brain's files by relative POSIX path."""

    root: Path

    def files(self) -> list[str]: ...
    def read_bytes(self, rel: str) -> bytes: ...
    def read_if_exists(self, rel: str) -> bytes | None: ...
    def exists(self, rel: str) -> bool: ...
    def is_symlink(self, rel: str) -> bool: ...
    def symlinks(self) -> list[str]: ...
    def symlink_target(self, rel: str) -> str | None: ...


class _ReadBytes:
    """`read_bytes` of a tree, from its `read_if_exists`."""

    def read_bytes(self, rel: str) -> bytes:
        data = self.read_if_exists(rel)
        if data is None:
            raise FileNotFoundError(rel)
        return data


class DirTree(_ReadBytes):
    """A folder on disk, listed once (sorted) when first asked; `.git`, Dream's runs and caches are skipped."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self._prefix = os.path.join(root, "")  # paths are joined as strings: a run asks for ~100,000 of them
        self._files: list[str] | None = None
        self._links: frozenset[str] = frozenset()
        self._stats: dict[str, tuple[int, int]] | None = None

    def files(self) -> list[str]:
        if self._files is None:
            found, links, _ = walk(self.root)
            self._files, self._links = sorted(found), frozenset(links)
        return self._files

    def stats(self) -> dict[str, tuple[int, int]]:
        """(size, mtime in ns) of each listed file as the listing found it (a symlink's target's;
        a broken one is left out): the one walk of the tree, when a caller wants both."""
        if self._stats is None:
            found, links, self._stats = walk(self.root, stat=True)
            self._files, self._links = sorted(found), frozenset(links)
        return self._stats

    def symlinks(self) -> list[str]:
        self.files()
        return sorted(self._links)

    def read_if_exists(self, rel: str) -> bytes | None:
        """The bytes of the regular file at `rel` (a symlink followed), None when there is none.
        Opened without blocking and checked before it is read: a FIFO named like a page would
        otherwise wait for a writer forever."""
        try:
            fd = os.open(self._prefix + rel, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return None
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return None
            with os.fdopen(fd, "rb", closefd=False) as fh:
                return fh.read()
        finally:
            os.close(fd)

    def exists(self, rel: str) -> bool:
        return os.path.isfile(self._prefix + rel)

    def is_symlink(self, rel: str) -> bool:
        return os.path.islink(self._prefix + rel)

    def symlink_target(self, rel: str) -> str | None:
        """Where a symlink points, resolved; None when `rel` is not a link."""
        path = self.root / rel
        return str(path.resolve()) if path.is_symlink() else None


class MemTree(_ReadBytes):
    """Files held in memory (path → text), e.g. what a run staged; `texts` is read live, not copied."""

    def __init__(self, texts: dict[str, str], root: Path) -> None:
        self.texts = texts
        self.root = Path(root)

    def files(self) -> list[str]:
        return sorted(self.texts)

    def read_if_exists(self, rel: str) -> bytes | None:
        text = self.texts.get(rel)
        return text.encode("utf-8") if text is not None else None

    def exists(self, rel: str) -> bool:
        return rel in self.texts

    def is_symlink(self, rel: str) -> bool:
        return False

    def symlinks(self) -> list[str]:
        return []

    def symlink_target(self, rel: str) -> str | None:
        return None


class OverlayTree(_ReadBytes):
    """`upper` (a staged tree) over `base`, with `deleted` paths hidden; a file of `upper` hides the base's."""

    def __init__(self, base: Tree, upper: Tree, deleted: frozenset[str] = frozenset()) -> None:
        self.base = base
        self.upper = upper
        self.deleted = deleted
        self.root = upper.root

    def files(self) -> list[str]:
        return sorted((set(self.base.files()) | set(self.upper.files())) - self.deleted)

    def _pick(self, rel: str) -> Tree:
        return self.upper if self.upper.exists(rel) else self.base

    def read_if_exists(self, rel: str) -> bytes | None:
        return None if rel in self.deleted else self._pick(rel).read_if_exists(rel)

    def exists(self, rel: str) -> bool:
        return rel not in self.deleted and (self.upper.exists(rel) or self.base.exists(rel))

    def is_symlink(self, rel: str) -> bool:
        return self._pick(rel).is_symlink(rel)

    def symlinks(self) -> list[str]:
        below = (rel for rel in self.base.symlinks() if not self.upper.exists(rel))
        return sorted({*below, *self.upper.symlinks()} - self.deleted)

    def symlink_target(self, rel: str) -> str | None:
        return self._pick(rel).symlink_target(rel)


def text_if_exists(tree: Tree, rel: str) -> str | None:
    """The text of the file at `rel` (bytes that are not UTF-8 replaced), None when there is none."""
    raw = tree.read_if_exists(rel)
    return raw.decode("utf-8", errors="replace") if raw is not None else None


def under(listing: list[str], prefix: str) -> list[str]:
    """The paths of a sorted listing below `prefix` ("a/b/"): a range of it."""
    start = bisect.bisect_left(listing, prefix)
    return listing[start : bisect.bisect_left(listing, prefix[:-1] + chr(ord(prefix[-1]) + 1), start)]


def walk(root: Path, stat: bool = False) -> tuple[list[str], list[str], dict[str, tuple[int, int]]]:
    """Every file below `root` (what DirTree lists, unordered), which of them are symlinks, and
    with `stat` the (size, mtime in ns) of each that has a target.

    A linked folder is listed as a file (the S checks report it) and not gone into; `.git` and the
    like are skipped, and of `.dream/` only the files that are part of the Brain are listed."""
    files: list[str] = []
    links: list[str] = []
    stats: dict[str, tuple[int, int]] = {}
    folders = [(os.fspath(root), "")]
    while folders:
        path, rel_dir = folders.pop()
        try:
            entries = list(os.scandir(path))
        except OSError:
            continue
        for entry in entries:
            rel = rel_dir + entry.name
            if entry.is_dir() and not entry.is_symlink():
                if entry.name not in _SKIP_DIRS and not (rel_dir == "" and entry.name == ".dream"):
                    folders.append((entry.path, rel + "/"))
                continue
            files.append(rel)
            if entry.is_symlink():
                links.append(rel)
            if stat:
                try:
                    st = entry.stat()
                except OSError:  # a broken symlink
                    continue
                stats[rel] = (st.st_size, st.st_mtime_ns)
    dream = Path(root) / ".dream"
    for name in _DREAM_KEEP if dream.is_dir() and not dream.is_symlink() else ():
        if (dream / name).is_file():
            files.append(f".dream/{name}")
            if (dream / name).is_symlink():
                links.append(f".dream/{name}")
    return files, links, stats
