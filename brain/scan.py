"""WorktreeScan: the git commands that tell which files git vouches for, started early.

A module of its own that imports nothing heavy, so `dream run` can start git's stat of every file
before it imports pydantic and the compiler (about 0.3 s): the two then run side by side.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

_TOPICS = "notes/"  # brain.layout.NOTES: the folders a run keeps a digest of (dream.compile)


class WorktreeScan:
    """worktree_keys() in two steps: the git commands start here and are read by keys(), so a
    caller can do other work meanwhile (`dream run` imports its modules: git's stat of every file
    of a large Brain takes about as long)."""

    _COMMANDS = (
        ("git", "config", "--get", "core.autocrlf"),
        ("git", "ls-files", "-s", "-v", "-z", "--full-name"),
        ("git", "--no-optional-locks", "status", "--porcelain=v1", "-z", "--no-renames", "--untracked-files=no", "--ignore-submodules=none"),
        # The tree id at HEAD of each topic's folder (its content in one id): a folder nothing in
        # which is changed, staged or untracked holds exactly that tree (DirTree.folder_tree).
        ("git", "ls-tree", "-z", "HEAD", "--", _TOPICS),
    )

    def __init__(self, root: Path) -> None:
        root = Path(root)
        self._procs: list[subprocess.Popen] = []
        self.folders: dict[str, str] = {}  # folder → its tree id at HEAD, when nothing under it changed
        if not (root / ".git").exists() or (root / ".gitattributes").exists():
            return
        env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0"}
        try:  # they run side by side: git's stat of every file is the long one
            for command in self._COMMANDS:
                self._procs.append(subprocess.Popen(command, cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL))
        except OSError:
            self.close()

    def keys(self) -> dict[str, str]:
        procs, self._procs = self._procs, []
        if len(procs) != len(self._COMMANDS):
            return {}
        try:
            outs = [p.communicate()[0] for p in procs]
        except OSError:
            return {}
        if procs[1].returncode or procs[2].returncode:
            return {}
        keys, changed = _parse_keys(outs[0].strip(), outs[1], outs[2])
        if keys and not procs[3].returncode:  # no HEAD yet: no folder trees
            self.folders = _folder_trees(outs[3], changed)
        return keys

    def close(self) -> None:
        """Stop commands whose output will not be read (a run that ended before it listed files)."""
        for proc in self._procs:
            proc.kill()
            proc.communicate()
        self._procs = []


def _parse_keys(autocrlf: bytes, listed: bytes, status: bytes) -> tuple[dict[str, str], frozenset[str]]:
    """(path → blob id of the files git vouches for, every path status names)."""
    if autocrlf not in (b"", b"false"):
        return {}, frozenset()
    entries = [e for e in status.split(b"\0") if len(e) > 3]
    named = frozenset(e[3:].decode("utf-8", "surrogateescape") for e in entries)
    # Staged-only changes keep their key: the index's blob is the file's bytes.
    changed = {e[3:].decode("utf-8", "surrogateescape") for e in entries if e[1:2] != b" " or e[:1] == b"U"}
    keys: dict[str, str] = {}
    for entry in listed.split(b"\0"):
        # "H 100644 <blob> 0\t<path>": tag H (cached, no flags), regular file, stage 0.
        if entry[:9] != b"H 100644 " and entry[:9] != b"H 100755 ":
            continue
        head, _, rel = entry.partition(b"\t")
        if head[49:] != b" 0":
            continue
        path = rel.decode("utf-8", "surrogateescape")
        if path not in changed:
            keys[path] = head[9:49].decode("ascii")
    return keys, named


def _folder_trees(listed: bytes, changed: frozenset[str]) -> dict[str, str]:
    """folder → tree id from `git ls-tree -z` lines ("040000 tree <id>\t<path>"), without the
    folders holding a path git status names (the caller still checks for untracked files)."""
    dirty = {path[: path.index("/", path.index("/") + 1)] for path in changed if path.count("/") >= 2}
    out = {}
    for entry in listed.split(b"\0"):
        head, _, rel = entry.partition(b"\t")
        if head[:12] == b"040000 tree " and len(head) == 52:
            path = rel.decode("utf-8", "surrogateescape")
            if path not in dirty:
                out[path] = head[12:].decode("ascii")
    return out
