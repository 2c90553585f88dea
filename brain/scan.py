"""WorktreeScan: the git commands that tell which files git vouches for, started early.

A module of its own that imports nothing heavy, so `dream run` can start git's stat of every file
before it imports pydantic and the compiler (about 0.3 s): the two then run side by side. What git
says is read as it is asked (GitKeys), not parsed whole.
"""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from brain import layout
from brain.forked import memory_file

if TYPE_CHECKING:
    from brain.tree import DirTree

#: Where folders are given their tree id at HEAD (DirTree.folder_tree): each topic's notes (a run
#: keeps a digest of each, dream.compile) and the sessions' folders (brain.indexing's link tallies).
_FOLDERS = ("notes/", "sessions/")  # brain.layout.NOTES, and the parent of SESSIONS_SUMMARIES


class WorktreeScan:
    """worktree_keys() in two steps: the git commands start here and are read by keys(), so a
    caller can do other work meanwhile (`dream run` imports its modules: git's stat of every file
    of a large Brain takes about as long)."""

    _COMMANDS = (
        ("git", "config", "--get", "core.autocrlf"),
        ("git", "ls-files", "-s", "-v", "-z", "--full-name"),
        # One thread: git stats a large index on every core by default (core.preloadIndex), which
        # on two cores slows the imports it runs beside by about as much as it saves itself.
        ("git", "-c", "core.preloadIndex=false", "--no-optional-locks", "status", "--porcelain=v1", "-z", "--no-renames", "--untracked-files=no", "--ignore-submodules=none"),
        # The tree id at HEAD of each topic's folder and of each sessions folder (its content in one id): a folder nothing in
        # which is changed, staged or untracked holds exactly that tree (DirTree.folder_tree). Left to
        # head_facts when it is asked (it lists them at the commit it resolved).
        ("git", "ls-tree", "-z", "HEAD", "--", *_FOLDERS),
    )

    def __init__(self, root: Path, walk: bool = False, head: bool = False, serve: bool = False) -> None:
        """`walk`: in a large Brain (WALK_AHEAD_MIN_INDEX), also list every file in a forked process
        (brain.listing.walk_cached: the folders changed since the listing was last kept are read),
        `walker`: `dream run` starts both before it imports the compiler, so the second core does the
        walk while the first imports (the run would otherwise wait for it). `head`: also ask git
        what a run needs of the commit it starts from (`head_facts()`), in a thread meanwhile.
        `serve`: the walking process stays to keep the listing at the run's end (ForkedWalk.refresh)."""
        root = self.root = Path(root)
        self._procs: list[subprocess.Popen] = []
        self._outs: list = []
        self.folders: dict[str, str] = {}  # folder → its tree id at HEAD, when nothing under it changed
        self.walker = None  # brain.listing.ForkedWalk of (files, symlinks), when `walk`
        self._head: tuple[threading.Thread, list] | None = None
        if not (root / ".git").exists():
            return
        if walk and index_size(root) >= WALK_AHEAD_MIN_INDEX:
            from brain.listing import fork_walk

            self.walker = fork_walk(root, serve=serve)
        if head:  # started after the fork above: a process is never forked while the thread runs
            got: list = []
            thread = threading.Thread(target=lambda: got.append(head_facts(root)), name="head-facts", daemon=True)
            thread.start()
            self._head = (thread, got)
        if (root / ".gitattributes").exists():
            return
        env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0"}
        try:  # they run side by side: git's stat of every file is the long one
            for command in self._commands():
                # Into files, not pipes: the listing is megabytes, and git would wait on a full pipe
                # until keys() is called; a file lets it finish while the caller imports.
                out = _scratch_file()
                self._outs.append(out)
                self._procs.append(subprocess.Popen(command, cwd=root, env=env, stdout=out, stderr=subprocess.DEVNULL))
        except OSError:
            self.close()

    def _commands(self) -> tuple[tuple[str, ...], ...]:
        return self._COMMANDS[:3] if self._head is not None else self._COMMANDS

    def keys(self) -> "GitKeys | dict[str, str]":
        """path → blob id of the files git vouches for ({} when it cannot say), read as asked."""
        procs, outs, self._procs, self._outs = self._procs, self._outs, [], []
        if len(procs) != len(self._commands()):
            _close(outs)
            return {}
        try:
            codes = [p.wait() for p in procs]
            data = []
            for out in outs:
                out.seek(0)
                data.append(out.read())
        except OSError:
            return {}
        finally:
            _close(outs)
        if codes[1] or codes[2] or data[0].strip() not in (b"", b"false"):
            return {}  # filters may make bytes differ from blobs (core.autocrlf): trust nothing
        keys = GitKeys(data[1], data[2])
        if self._head is not None:
            facts = self.head_facts()
            trees = facts.folders if facts is not None else {}
        else:
            trees = _folder_trees(data[3]) if not codes[3] else {}  # no HEAD yet: no folder trees
        if keys:
            self.folders = _unchanged(trees, keys.named)
        return keys

    def head_facts(self) -> "HeadFacts | None":
        """What `head_facts(root)` gave in the thread `head` started (None: not asked, or git failed)."""
        if self._head is None:
            return None
        thread, got = self._head
        thread.join()
        return got[0] if got else None

    def close(self) -> None:
        """Stop commands whose output will not be read (a run that ended before it listed files),
        and a walk whose listing was not taken."""
        if self._head is not None:
            self._head[0].join()  # a few quick git commands: no thread is left behind a fork
        for proc in self._procs:
            proc.kill()
            proc.wait()
        _close(self._outs)
        self._procs, self._outs = [], []
        if self.walker is not None:
            self.walker.discard()
            self.walker = None

    def tree(self) -> "DirTree":
        """The Brain as a DirTree that knows what git vouches for (keys(), folder trees) and is
        listed by the forked walk when there is one."""
        from brain.tree import DirTree

        walker = self.take_walker()
        keys = self.keys()
        return DirTree(self.root, keys=keys, folders=self.folders, listing=walker.result if walker is not None else None)

    def take_walker(self):
        """The forked walk, handed over (close() no longer stops it); None when there is none."""
        walker, self.walker = self.walker, None
        return walker


class HeadFacts(NamedTuple):
    """What `dream run` asks git of the commit it starts from (dream.run)."""

    head: str | None  # the commit HEAD points at; None in a repository with no commit yet
    pages: frozenset[str]  # the files below knowledge/ at `head`
    # Files below knowledge/ that commits since the last one (at or before `head`) that changed
    # .dream/state.json deleted: Dream's last commit, unless the owner committed state.json since.
    deleted: frozenset[str]
    folders: dict[str, str]  # each notes and sessions folder → its tree id at `head` (BrainRepo.folder_trees)


def head_facts(root: Path) -> HeadFacts | None:
    """HeadFacts of the repository at `root`: a few git commands, one after the other (each needs
    what the one before said); None when one fails."""
    def git(*args: str) -> bytes | None:
        try:
            done = subprocess.run(["git", *args], cwd=root, stdin=subprocess.DEVNULL, capture_output=True)
        except OSError:
            return None
        return done.stdout if done.returncode == 0 else None

    def text(out: bytes) -> str:
        return out.decode("utf-8", "surrogateescape")

    head = text(git("rev-parse", "--verify", "-q", "HEAD") or b"").strip() or None
    if head is None:
        return HeadFacts(None, frozenset(), frozenset(), {})
    pages = git("ls-tree", "-r", "--name-only", head, "--", layout.KNOWLEDGE)
    folders = git("ls-tree", "-z", head, "--", *_FOLDERS)
    last = git("log", "-1", "--format=%H", head, "--", layout.STATE)
    if pages is None or folders is None or last is None:
        return None
    deleted = b""
    if last.strip():
        deleted = git("diff", "--name-only", "--no-renames", "--diff-filter=D", text(last).strip(), head, "--", layout.KNOWLEDGE)
        if deleted is None:
            return None
    return HeadFacts(head, frozenset(text(pages).split()), frozenset(p for p in text(deleted).split("\n") if p), _folder_trees(folders))


#: A git index at least this large (bytes; about 10,000 files) has the walk of every file forked:
#: on a small Brain the fork would cost more than the walk.
WALK_AHEAD_MIN_INDEX = 1_000_000


def index_size(root: Path) -> int:
    try:
        return (Path(root) / ".git" / "index").stat().st_size
    except OSError:
        return 0


def _scratch_file():
    """An anonymous file for a command's output: in memory on Linux, without importing tempfile
    (3 ms before git could start), else a temporary file."""
    fd = memory_file("git-output")
    if fd is not None:
        return os.fdopen(fd, "w+b")
    import tempfile

    return tempfile.TemporaryFile()


def _close(files: list) -> None:
    for f in files:
        f.close()


class GitKeys(Mapping):
    """path → blob id of each file git vouches for: tracked, a regular file at stage 0, and not
    changed in the working tree (a change only staged keeps its key: the index's blob is the
    file's bytes). Read from `git ls-files -s -v -z` output as paths are asked, not parsed whole:
    the output is 7 MB for the 67,000 files of a 10,000-session Brain, and a run asks about the
    files of a few folders. A path is found by bisection of the output (sorted by path, as git's
    index is); a folder asked about often enough is parsed once, all its entries together, and
    kept as its entries (`vouched_entries`), which `dream run` also compares with what it kept.
    """

    #: Lookups in one folder after which its entries are parsed together (a run asks the key of
    #: each of 10,000 summaries and raw sessions, and of a few notes among 40,000).
    PARSE_AFTER = 32

    def __init__(self, listed: bytes, status: bytes) -> None:
        self._raw = listed
        entries = [e for e in status.split(b"\0") if len(e) > 3]
        #: every path git status names (a folder holding one is not as HEAD has it)
        self.named = frozenset(e[3:].decode("utf-8", "surrogateescape") for e in entries)
        # Staged-only changes keep their key: the index's blob is the file's bytes.
        self._changed = frozenset(e[3:].decode("utf-8", "surrogateescape") for e in entries if e[1:2] != b" " or e[:1] == b"U")
        self._folders: dict[str, dict[str, bytes]] = {}  # folder ("a/b/") → its files' entries, parsed
        self._asked: dict[str, int] = {}
        self._whole: dict[str, str] | None = None
        self._clean: dict[str, int | None] = {}  # folder → clean_count(folder)

    def __bool__(self) -> bool:
        return bool(self._raw)

    def get(self, rel: str, default: str | None = None) -> str | None:
        cut = rel.rfind("/") + 1
        folder = rel[:cut]
        found = self._folders.get(folder)
        if found is None:
            asked = self._asked[folder] = self._asked.get(folder, 0) + 1
            if asked <= self.PARSE_AFTER:
                return self._lookup(rel, default)
            found = self._folders[folder] = self._parse(folder)
        entry = found.get(rel)
        return entry[9:49].decode("ascii") if entry is not None else default

    def __contains__(self, rel: object) -> bool:
        return isinstance(rel, str) and self.get(rel) is not None

    def __getitem__(self, rel: str) -> str:
        key = self.get(rel)
        if key is None:
            raise KeyError(rel)
        return key

    def __iter__(self):
        return iter(self._every())

    def __len__(self) -> int:
        return len(self._every())

    def _every(self) -> dict[str, str]:
        """Every key, parsed at once (for callers that list them all, and tests)."""
        if self._whole is None:
            self._whole = {rel: entry[9:49].decode("ascii") for rel, entry in self._parse("", every=True).items()}
        return self._whole

    def vouched_entries(self, folder: str) -> dict[str, bytes]:
        """rel → git's index entry (as `entries` lists it) of each file right in `folder` ("a/b/")
        that git vouches for, in path order: the files get() gives a key of. Parsed once, and then
        get() in that folder is answered from it."""
        found = self._folders.get(folder)
        if found is None:
            found = self._folders[folder] = self._parse(folder)
        return found

    def entries_of(self, rels: Iterable[str]) -> set[bytes]:
        """git's index entries of these paths, found by bisection (several for an unmerged path)."""
        raw, out = self._raw, set()
        for rel in rels:
            path = rel.encode("utf-8", "surrogateescape")
            start = self._seek(path)
            while (tab := raw.find(b"\t", start)) >= 0 and (end := raw.find(b"\0", tab)) >= 0 and raw[tab + 1 : end] == path:
                out.add(raw[start:end])
                start = end + 1
        return out

    def entries(self, folder: str) -> list[bytes]:
        """git's index entries below `folder` ("a/b/"), as listed: b"<tag> <mode> <blob> <stage>\\t<path>"."""
        start, end = self._range(folder)
        return self._raw[start:end].split(b"\0")[:-1] if end > start else []

    def clean_count(self, folder: str) -> int | None:
        """How many files below `folder` ("a/b/") git vouches for, when that is every entry it lists
        there (none a symlink, a submodule or unmerged) and status names none of them; else None."""
        if folder not in self._clean:
            self._clean[folder] = self._count_clean(folder)
        return self._clean[folder]

    def _count_clean(self, folder: str) -> int | None:
        start, end = self._range(folder)
        raw = self._raw
        # Counted in place (the owner's notes are 4 MB of the listing: a copy cost more than the
        # counts): each entry ends with a NUL, and starts at `start` or right after one.
        entries = raw.count(b"\0", start, end)
        clean = sum(raw.count(b"\0" + head, max(start - 1, 0), end) + (start == 0 < end and raw.startswith(head))
                    for head in (b"H 100644 ", b"H 100755 "))
        if clean != entries or any(p.startswith(folder) for p in self.named):
            return None
        return entries

    def _seek(self, path: bytes) -> int:
        """The offset of the first entry whose path is not below `path` in git's (byte) order."""
        raw, lo, hi = self._raw, 0, len(self._raw)
        while lo < hi:
            mid = (lo + hi) // 2
            start = raw.rfind(b"\0", lo, mid) + 1 or lo  # the entry that holds byte `mid`
            start = max(start, lo)
            tab = raw.find(b"\t", start)
            end = raw.find(b"\0", tab)
            if tab < 0 or end < 0:
                return hi  # a malformed tail: nothing past it is found
            if raw[tab + 1 : end] < path:
                lo = end + 1
            else:
                hi = start
        return lo

    def _lookup(self, rel: str, default: str | None) -> str | None:
        path = rel.encode("utf-8", "surrogateescape")
        raw = self._raw
        start = self._seek(path)
        tab = raw.find(b"\t", start)
        end = raw.find(b"\0", tab)
        if tab < 0 or end < 0 or raw[tab + 1 : end] != path:
            return default
        return entry_key(raw[start:tab], rel, self._changed) or default

    def _range(self, folder: str) -> tuple[int, int]:
        """The offsets of the entries below `folder` ("a/b/"; "" for all)."""
        if not folder:
            return 0, len(self._raw)
        return self._seek(folder.encode("utf-8", "surrogateescape")), self._seek(_after(folder).encode("utf-8", "surrogateescape"))

    def _parse(self, folder: str, every: bool = False) -> dict[str, bytes]:
        """The entries of the files directly in `folder` that git vouches for (`every`: in its
        subfolders too), by path."""
        start, end = self._range(folder)
        out: dict[str, bytes] = {}
        changed, depth = self._changed, folder.count("/")
        for entry in self._raw[start:end].split(b"\0"):
            head, _, name = entry.partition(b"\t")
            rel = name.decode("utf-8", "surrogateescape")
            if (every or rel.count("/") == depth) and entry_key(head, rel, changed) is not None:
                out[rel] = entry
        return out


def entry_key(head: bytes, rel: str, changed: frozenset[str]) -> str | None:
    """The blob id of the index entry of `rel` whose head (before the tab) is `head`, when git
    vouches for it: "H 100644 <blob> 0" or "H 100755 …" (tracked, not assumed unchanged, a regular
    file at stage 0) and `rel` not among `changed` (see GitKeys); else None."""
    if (head[:9] != b"H 100644 " and head[:9] != b"H 100755 ") or head[49:] != b" 0" or rel in changed:
        return None
    return head[9:49].decode("ascii")


def _after(folder: str) -> str:
    """The first path past every one below `folder` ("a/" → "a0": "0" follows "/")."""
    return folder[:-1] + chr(ord(folder[-1]) + 1)


def tree_folder(rel: str) -> str | None:
    """The folder whose tree id is kept for a file below it (its first two parts: "notes/<topic>"
    of "notes/<topic>/x.md"); None for a file with no such folder above it ("notes/x.md")."""
    cut = rel.find("/", rel.find("/") + 1)
    return rel[:cut] if cut > 0 else None


def _folder_trees(listed: bytes) -> dict[str, str]:
    """folder → tree id from `git ls-tree -z` lines ("040000 tree <id>\t<path>")."""
    out = {}
    for entry in listed.split(b"\0"):
        head, _, rel = entry.partition(b"\t")
        if head[:12] == b"040000 tree " and len(head) == 52:
            out[rel.decode("utf-8", "surrogateescape")] = head[12:].decode("ascii")
    return out


def _unchanged(trees: dict[str, str], changed: frozenset[str]) -> dict[str, str]:
    """`trees` without the folders holding a path git status names (the caller still checks for
    untracked files)."""
    dirty = {tree_folder(path) for path in changed} - {None}
    return {folder: tree for folder, tree in trees.items() if folder not in dirty} if dirty else dict(trees)
