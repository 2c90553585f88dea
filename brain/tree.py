"""File trees a Brain can be read from: a folder on disk, or a staged overlay on top of one.

Validators, the index renderer and the CLI read through `Tree`, so the same checks run on the
live wiki and on dream's staged tree (staged files over the live ones, minus staged deletions).
"""

from __future__ import annotations

import bisect
import os
import stat
from pathlib import Path
from collections.abc import Mapping
from typing import Callable, Protocol

from brain import layout

_SKIP_DIRS = frozenset({".git", ".venv", "__pycache__", "node_modules"})
#: Below .dream only these are part of the Brain; runs/, cache/ and the lock are machine state.
_DREAM_KEEP = frozenset({"instructions.md", "forget.md", "state.json"})
#: A DirTree answers `exists` and `is_symlink` from its listing by bisection this many times, then
#: from a set of it (SortedLookup; brain.view.DOC_SET_AFTER is the same for documents).
LISTED_SET_AFTER = 3000


class Tree(Protocol):
    """Read-only view of a Brain's files by relative POSIX path."""

    def files(self) -> list[str]: ...
    def read_bytes(self, rel: str) -> bytes: ...
    def read_if_exists(self, rel: str) -> bytes | None: ...
    def exists(self, rel: str) -> bool: ...
    def is_symlink(self, rel: str) -> bool: ...
    def symlinks(self) -> list[str]: ...
    def symlink_target(self, rel: str) -> str | None: ...
    def key(self, rel: str) -> str | None: ...
    def folder_tree(self, folder: str, paths: list[str]) -> str | None: ...


class DirTree:
    """A folder on disk. Listing is sorted; `.git`, dream's run folders and caches are skipped.

    `keys`, when given, maps paths to the git blob id of their current content (files git knows
    to be unchanged), so caches can look a file up without reading it (`key`): a dict, or the
    GitKeys of brain.scan, which reads git's listing as paths are asked.
    """

    def __init__(self, root: Path, keys: "Mapping[str, str] | None" = None, folders: dict[str, str] | None = None,
                 listing: "Callable[[], tuple[list[str], ...] | None] | None" = None) -> None:
        """`listing`: gives (files, symlinks) as `walk_sorted` does, walked elsewhere meanwhile
        (dream.run forks it), or None: then the first `files()` walks the folder itself. A third
        part, where it is given, says where the documents are (brain.layout.document_runs of files)."""
        self.root = Path(root)
        self._root = os.fspath(self.root) + "/"
        self._files: list[str] | None = None
        self._runs: list[tuple[int, int]] | None = None
        self._listed: SortedLookup | None = None  # `in` the listing (files() makes it)
        self._links: frozenset[str] = frozenset()
        self.keys = keys or {}
        self.folders = folders or {}  # folder → git tree id at HEAD, nothing under it changed (WorktreeScan)
        self._listing = listing

    def files(self) -> list[str]:
        if self._files is None:
            given, self._listing = self._listing() if self._listing is not None else None, None
            listed = _is_listing(given)
            found, links = given[:2] if listed else walk_sorted(self.root)
            self._files, self._links = found, frozenset(links)
            self._listed = SortedLookup(found, LISTED_SET_AFTER)
            if listed and len(given) == 3 and _runs_fit(given[2], found):
                self._runs = given[2]
        return self._files

    def document_runs(self) -> list[tuple[int, int]] | None:
        """brain.layout.document_runs(files()) when whoever listed the files gave it, else None."""
        self.files()
        return self._runs

    def _is_listed(self, rel: str) -> bool:
        """Whether the listing holds `rel` (False before files()): a nightly run asks ~1,000 times."""
        return self._listed is not None and rel in self._listed

    def key(self, rel: str) -> str | None:
        """The git blob id of the file's bytes when known without reading it, else None."""
        return self.keys.get(rel)

    def folder_tree(self, folder: str, paths: list[str]) -> str | None:
        """The git tree id of `folder` at HEAD when the folder holds just that (`paths`: the files
        listed under it, each of which git must vouch for: none untracked), else None."""
        tree = self.folders.get(folder)
        if tree is None:
            return None
        if self.vouched_count(folder + "/") == len(paths):
            return tree
        return tree if all(map(self.keys.__contains__, paths)) else None

    def vouched_count(self, prefix: str) -> int | None:
        """How many files are listed below `prefix` ("a/b/"), when git vouches for every one of them
        and lists no other there (GitKeys.clean_count); else None (or when git's keys cannot count).
        Counted, not looked up one by one (the owner's notes are 40,000): those git vouches for are
        files on disk, among the listed ones, so as many of each means they are the same files."""
        count = getattr(self.keys, "clean_count", None)
        if count is None:
            return None
        listed = len(self.under(prefix))
        return listed if count(prefix) == listed else None

    def under(self, prefix: str) -> list[str]:
        """The listed files below `prefix` ("a/b/"), sorted: a range of the listing."""
        files = self.files()
        return files[bisect.bisect_left(files, prefix) : bisect.bisect_left(files, prefix[:-1] + "0")]

    def symlinks(self) -> list[str]:
        """The listed files that are symlinks (sorted): what `files()` holds that `is_symlink` is true of."""
        self.files()
        return sorted(self._links)

    # Plain string paths, not pathlib or os.path.join: a run calls these ~100,000 times on a
    # large Brain and path construction dominated them.
    def _abs(self, rel: str) -> str:
        return self._root + rel

    def read_bytes(self, rel: str) -> bytes:
        fd = os.open(self._abs(rel), os.O_RDONLY)
        try:
            return read_fd(fd)
        finally:
            os.close(fd)

    def read_if_exists(self, rel: str) -> bytes | None:
        """The bytes of the regular file at `rel` (a symlink followed, as `exists` does), None when
        there is none: one open, so a file the owner deleted since the listing or `exists` is
        None, not an error. Opened without blocking and checked before it is read: a FIFO named
        like a page is not a file, and reading it would wait for a writer."""
        try:
            fd = os.open(self._abs(rel), os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return None
        try:
            return read_fd(fd) if stat.S_ISREG(os.fstat(fd).st_mode) else None
        finally:
            os.close(fd)

    def read_text(self, rel: str) -> str:
        return self.read_bytes(rel).decode("utf-8", errors="replace")

    def exists(self, rel: str) -> bool:
        # A file the listing holds and git vouches for is a regular file (as of the scan): not asked
        # of the disk. A nightly run asks this of ~1,000 pages, sessions and state shards.
        if rel in self.keys and self._is_listed(rel):
            return True
        return os.path.isfile(self._abs(rel))

    def is_symlink(self, rel: str) -> bool:
        # The listing saw every listed file's type (no stat per file); others are asked the disk.
        if self._is_listed(rel):
            return rel in self._links
        return os.path.islink(self._abs(rel))

    def symlink_target(self, rel: str) -> str | None:
        """Where a symlink points, resolved; None when `rel` is not a link."""
        path = self.root / rel
        if not path.is_symlink():
            return None
        return str(path.resolve())


class MemTree:
    """Files held in memory (path → text), e.g. what a run staged; `texts` is read live, not copied."""

    def __init__(self, texts: dict[str, str], root: Path) -> None:
        self.texts = texts
        self.root = Path(root)

    def files(self) -> list[str]:
        return sorted(self.texts)

    def read_bytes(self, rel: str) -> bytes:
        try:
            return self.texts[rel].encode("utf-8")
        except KeyError:
            raise FileNotFoundError(rel) from None

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

    def key(self, rel: str) -> str | None:
        return None

    def folder_tree(self, folder: str, paths: list[str]) -> str | None:
        return None


class OverlayTree:
    """`upper` (a staged tree) over `base`, with `deleted` paths hidden."""

    def __init__(self, base: Tree, upper: "DirTree | MemTree", deleted: frozenset[str] = frozenset()) -> None:
        self.base = base
        self.upper = upper
        self.deleted = deleted
        self.root = upper.root
        self._files: list[str] | None = None

    def files(self) -> list[str]:
        if self._files is None:
            # Listings are sorted and the upper one is small (a run's staged files): inserting
            # them beats sorting the union of ~100,000 paths for every view of a run.
            self._files = insert_sorted(self.base.files(), self.upper.files())
            if self.deleted:
                self._files = [rel for rel in self._files if rel not in self.deleted]
        return self._files

    def _pick(self, rel: str) -> Tree:
        return self.upper if self.upper.exists(rel) else self.base

    def read_bytes(self, rel: str) -> bytes:
        if rel in self.deleted:
            raise FileNotFoundError(rel)
        return self._pick(rel).read_bytes(rel)

    def read_if_exists(self, rel: str) -> bytes | None:
        if rel in self.deleted:
            return None
        found = self.upper.read_if_exists(rel)
        return found if found is not None else self.base.read_if_exists(rel)

    def read_text(self, rel: str) -> str:
        return self.read_bytes(rel).decode("utf-8", errors="replace")

    def exists(self, rel: str) -> bool:
        return rel not in self.deleted and (self.upper.exists(rel) or self.base.exists(rel))

    def is_symlink(self, rel: str) -> bool:
        return self._pick(rel).is_symlink(rel)

    def symlinks(self) -> list[str]:
        upper = self.upper
        below = (rel for rel in self.base.symlinks() if not upper.exists(rel))  # an upper file hides the base's
        return sorted(rel for rel in {*below, *upper.symlinks()} if rel not in self.deleted)

    def symlink_target(self, rel: str) -> str | None:
        return self._pick(rel).symlink_target(rel)

    def key(self, rel: str) -> str | None:
        return None if rel in self.deleted else self._pick(rel).key(rel)

    def folder_tree(self, folder: str, paths: list[str]) -> str | None:
        return None  # staged files are not in any commit yet

    def brain_root(self) -> Path:
        """The live Brain's folder (symlinks are judged against it)."""
        return getattr(self.base, "root", self.upper.root)


def read_fd(fd: int) -> bytes:
    """What is left to read of an open file, by `os.read`: a run reads ~100,000 small files on a
    full compile, and a file object around each read cost 3 µs of the 7 µs a file took."""
    parts = []
    size = 1 << 16  # most documents fit one read; the heap gives this size without a mapping of its own
    while chunk := os.read(fd, size):
        parts.append(chunk)
        size = 1 << 20
    return parts[0] if len(parts) == 1 else b"".join(parts)


def text_if_exists(tree: Tree, rel: str) -> str | None:
    """The text of the file at `rel` (bytes that are not UTF-8 replaced), None when there is none:
    `read_if_exists`, so a file deleted since it was listed is None, not an error."""
    raw = tree.read_if_exists(rel)
    return raw.decode("utf-8", errors="replace") if raw is not None else None


def in_sorted(listing: list[str], rel: str) -> bool:
    """Whether the sorted `listing` holds `rel` (a bisection, not a scan or a set of it)."""
    i = bisect.bisect_left(listing, rel)
    return i < len(listing) and listing[i] == rel


class SortedLookup:
    """`rel in listing` of a sorted list: by bisection for the first `set_after` asks, then in a set
    of it. A run that asks about a few paths does not hash the 67,000 of the 10k Brain (5 ms); one
    that asks about every path (a full compile) does not bisect for each."""

    def __init__(self, listing: list[str], set_after: int) -> None:
        self._listing, self._left, self._set = listing, set_after, None

    def __contains__(self, rel: str) -> bool:
        if self._set is None:
            if self._left > 0:
                self._left -= 1
                return in_sorted(self._listing, rel)
            self._set = frozenset(self._listing)
        return rel in self._set

    @property
    def hashed(self) -> bool:
        """Whether it answers from a set by now."""
        return self._set is not None


def insert_sorted(listing: list[str], more: list[str]) -> list[str]:
    """A copy of the sorted `listing` with the paths of `more` it lacks, in order."""
    out = list(listing)
    for rel in more:
        i = bisect.bisect_left(out, rel)
        if i == len(out) or out[i] != rel:
            out.insert(i, rel)
    return out


def walk_sorted(root: Path) -> tuple[list[str], list[str]]:
    """Every file below root (what DirTree lists) and which of them are symlinks, both sorted."""
    found, links = _walk(root)
    return sorted(found), sorted(links)


def _is_listing(value: object) -> bool:
    return isinstance(value, tuple) and len(value) in (2, 3) and all(type(part) is list for part in value)


def _runs_fit(runs: list, files: list[str]) -> bool:
    """Whether `runs` can be index ranges of `files`, in order (a bad one would only drop or add
    documents: checked, since it comes from another process)."""
    at = 0
    for run in runs:
        if not (type(run) is tuple and len(run) == 2 and type(run[0]) is int and type(run[1]) is int and at <= run[0] < run[1] <= len(files)):
            return False
        at = run[1]
    return True


def _walk(root: Path) -> tuple[list[str], list[str]]:
    """Every file (and linked folder) below root, unordered, and which of them are symlinks (from the
    directory entries, so no stat per file)."""
    out: list[str] = []
    links: list[str] = []
    folders = [(os.fspath(root), "")]
    while folders:  # in no order: files() sorts the whole listing once
        path, rel_dir = folders.pop()
        try:
            names, linked, below = read_folder(path, rel_dir == "")
        except OSError:
            continue
        out += [rel_dir + name for name in names]
        links += [rel_dir + name for name in linked]
        folders += [(f"{path}/{name}", f"{rel_dir}{name}/") for name in below]
    more, more_links = dream_files(root)
    return out + more, links + more_links


def read_folder(path: str, at_root: bool) -> tuple[list[str], list[str], list[str]]:
    """One folder's entries as the listing takes them: (the names listed as files, which of those
    are symlinks, the subfolders to go into). A linked folder is listed as a file (S checks see it)
    and not gone into; `.git` and the like are skipped, and `.dream` at the root (dream_files).
    Raises OSError when the folder cannot be read."""
    files: list[str] = []
    links: list[str] = []
    folders: list[str] = []
    with os.scandir(path) as entries:
        for entry in entries:
            name = entry.name
            if entry.is_dir():  # follows links, as os.walk does
                if name in _SKIP_DIRS or (at_root and name == ".dream"):
                    continue
                if entry.is_symlink():
                    files.append(name)
                    links.append(name)
                    continue
                folders.append(name)
                continue
            files.append(name)
            if entry.is_symlink():
                links.append(name)
    return files, links, folders


def dream_files(root: Path) -> tuple[list[str], list[str]]:
    """What the listing holds below `.dream/`: the files of it that are part of the Brain
    (_DREAM_KEEP) and state.json's shards (layout.STATE_SHARDS), and which of them are symlinks."""
    out: list[str] = []
    links: list[str] = []
    dream = Path(root) / ".dream"
    if dream.is_dir() and not dream.is_symlink():
        for name in sorted(_DREAM_KEEP):
            if (dream / name).is_file():
                out.append(f".dream/{name}")
                if (dream / name).is_symlink():
                    links.append(f".dream/{name}")
        for folder in layout.STATE_SHARDS:
            shards = Path(root) / folder
            if shards.is_dir() and not shards.is_symlink():
                with os.scandir(shards) as entries:
                    for entry in entries:
                        if entry.is_file():
                            out.append(f"{folder}/{entry.name}")
                            if entry.is_symlink():
                                links.append(f"{folder}/{entry.name}")
    return out, links
