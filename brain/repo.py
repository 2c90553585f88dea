"""BrainRepo: git for a Brain, through the git CLI, one plain subprocess per call.

No git process outlives a call, which a long-lived reader (a server) needs; the CLI is what git
itself keeps stable.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Generic, TypeVar

from pydantic import Field

from brain.errors import BrainError, NotFoundError
from brain.model import Record, empty_list

_TRAILER_RE = re.compile(r"^(Dream-[A-Za-z-]+):[ \t]*(.*?)\s*$", re.M)
_REJECTED_RE = re.compile(r"^Rejected: (.+)$", re.M)
_SHA_RE = re.compile(r"^[0-9a-f]{7,40}$")
T = TypeVar("T")


class LogEntry(Record):
    """One commit; a Dream run's carries its trailers (Dream-Sessions, Dream-Verifier …) and the
    files its gate rejected (`path: first reason`), as its message says them."""

    sha: str
    date: str
    author: str
    subject: str
    run_id: str | None = None
    trailers: dict[str, str] = Field(default_factory=dict)
    rejected: list[str] = Field(default_factory=empty_list)


_UNFINISHED = (
    ("MERGE_HEAD", ("a merge is in progress", "finish it with `git commit` or stop it with `git merge --abort`")),
    ("rebase-merge", ("a rebase is in progress", "`git rebase --continue` or `git rebase --abort`")),
    ("rebase-apply", ("a rebase or `git am` is in progress", "`git rebase --continue` or `--abort`")),
    ("CHERRY_PICK_HEAD", ("a cherry-pick is in progress", "`git cherry-pick --continue` or `--abort`")),
    ("REVERT_HEAD", ("a revert is in progress", "`git revert --continue` or `--abort`")),
    ("BISECT_LOG", ("a bisect is in progress", "`git bisect reset` when done")),
)


class BrainRepo:
    """Git operations on a Brain folder."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    @classmethod
    def init(cls, root: Path) -> "BrainRepo":
        Path(root).mkdir(parents=True, exist_ok=True)
        proc = subprocess.run(["git", "init", "-q", "--initial-branch=main", str(root)], capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            raise BrainError(f"git init failed in {root}: {proc.stderr.strip()}", "install git 2.28 or later")
        return cls(root)

    def is_repo(self) -> bool:
        return (self.root / ".git").exists()

    def _require_repo(self) -> None:
        if not self.is_repo():
            raise BrainError(f"{self.root} is not a git repository", "run `brain init` first")

    def git(self, *args: str, env: dict[str, str] | None = None, stdin: bytes | None = None) -> str:
        """Run `git <args>` in the Brain (`stdin`: what it reads); raises BrainError with git's message."""
        proc = self._run(args, env=git_env(env), stdin=stdin)
        if proc.returncode != 0:
            text = proc.stderr.decode("utf-8", "surrogateescape").strip()
            raise BrainError(f"git {' '.join(args[:2])} failed: {text or f'exit {proc.returncode}'}")
        text = proc.stdout.decode("utf-8", "surrogateescape")
        return text[:-1] if text.endswith("\n") else text  # one final newline less, as callers compare lines

    def git_dir(self) -> Path:
        """The repository's git folder (`.git`, or elsewhere for a linked worktree)."""
        return Path(self.git("rev-parse", "--absolute-git-dir").strip())

    def unfinished(self) -> tuple[str, str] | None:
        """What the owner began in git and has not finished (a merge, a rebase …), or a detached
        HEAD, with what to do about it: a commit of Dream's would be taken into it. None when git is
        at rest on a branch."""
        gd = self.git_dir()
        for name, what in _UNFINISHED:
            if (gd / name).exists():
                return what
        if self._run(("symbolic-ref", "-q", "HEAD")).returncode != 0:
            return "HEAD is detached (no branch is checked out)", "`git switch <branch>`"
        return None

    def head(self) -> str | None:
        """The commit HEAD points at, or None in a repository with no commits."""
        try:
            return self.git("rev-parse", "--verify", "-q", "HEAD").strip() or None
        except BrainError:
            return None

    def commit_all(self, message: str, author: str | None = None, paths: list[str] | None = None) -> str | None:
        """Stage `paths` (all when None) and commit; returns the new sha, None when nothing changed."""
        self.git("add", "-A", "--", *(paths or ["."]))
        if not self.git("status", "--porcelain", "--", *(paths or ["."])).strip():
            return None
        args = ["commit", "-q", "-m", message]
        if author:
            args += ["--author", author]
        self.git(*args, "--", *(paths or ["."]))
        return self.head()

    def cat_blob(self, blob: str) -> bytes | None:
        """Exact bytes of a blob by id (trailing newlines kept), None when git does not have it."""
        proc = self._run(("cat-file", "blob", blob))
        return proc.stdout if proc.returncode == 0 else None

    def _run(self, args: tuple[str, ...], env: dict[str, str] | None = None, stdin: bytes | None = None) -> subprocess.CompletedProcess:
        """`git <args>` in the Brain, its output captured; BrainError when this is no repository or git is missing."""
        self._require_repo()
        try:
            if stdin is None:
                return subprocess.run(["git", *args], cwd=self.root, env=env, stdin=subprocess.DEVNULL, capture_output=True)
            return subprocess.run(["git", *args], cwd=self.root, env=env, input=stdin, capture_output=True)
        except OSError as exc:
            raise BrainError(f"git {' '.join(args[:2])} failed: {exc}", "install git") from exc

    def log(self, rel: str | None = None, limit: int = 50) -> list[LogEntry]:
        """Commits touching `rel` (following renames), newest first, with each commit's Dream run id."""
        if self.head() is None:
            self._require_repo()  # not a git repository at all: BrainError, not "no history"
            return []
        fmt = "%H%x1f%ad%x1f%an%x1f%s%x1f%B%x1e"
        args = ["log", f"-n{limit}", "--date=iso-strict", f"--format={fmt}"]
        if rel:
            args += ["--follow", "--", rel]
        out = self.git(*args)
        entries = []
        for record in out.split("\x1e"):
            record = record.strip("\n")
            if not record:
                continue
            sha, date, author, subject, body = record.split("\x1f", 4)
            trailers = dict(_TRAILER_RE.findall(body))
            entries.append(LogEntry(sha=sha, date=date, author=author, subject=subject, run_id=trailers.get("Dream-Run"),
                                    trailers=trailers, rejected=_REJECTED_RE.findall(body)))
        return entries

    def patch(self, sha: str, rel: str) -> str:
        """The change commit `sha` made to `rel` (following renames), as a unified diff."""
        if not _SHA_RE.match(sha):  # never an option or a revision range: only a commit id reaches git
            raise NotFoundError(f"{sha!r} is not a commit id", "use the sha `brain log` shows")
        try:
            return self.git("log", "-1", "-p", "--follow", "--format=", "--no-color", "--no-ext-diff", sha, "--", rel)
        except BrainError:
            raise NotFoundError(f"no commit {sha} in {self.root}", "use the sha `brain log` shows") from None


class HeadCache(Generic[T]):
    """A value built from the Brain, built again when its HEAD commit moves (a `dream run`
    committed): what a long-lived reader keeps between requests. `close` ends an old value."""

    def __init__(self, root: Path, build: Callable[[], T], close: Callable[[T], None] | None = None) -> None:
        self.root, self.build, self.close = Path(root), build, close
        self.head: str | None = None
        self.value: T | None = None

    def get(self) -> T:
        head = BrainRepo(self.root).head()
        if self.value is None or head != self.head:
            if self.value is not None and self.close is not None:
                self.close(self.value)
            self.value, self.head = self.build(), head
        return self.value


def blob_id(data: bytes) -> str:
    """The id git gives these bytes as a blob (`git hash-object`), without running git."""
    h = hashlib.sha1(b"blob %d\0" % len(data))
    h.update(data)
    return h.hexdigest()


def git_user_name() -> str | None:
    """`git config user.name` of the person running the command, or None."""
    done = subprocess.run(["git", "config", "--get", "user.name"], capture_output=True, text=True, check=False)
    return (done.stdout.strip() or None) if done.returncode == 0 else None


@functools.cache  # the person's git config, read once per process
def _has_git_identity() -> bool:
    """True when git has a user.name of its own (the person's config): then we never override it."""
    return git_user_name() is not None


def git_env(env: dict[str, str] | None = None) -> dict[str, str]:
    """The caller's environment, plus a fallback identity only where git has none (cron, CI)."""
    fallback = {}
    if not _has_git_identity():
        fallback = {
            "GIT_AUTHOR_NAME": "Brain",
            "GIT_AUTHOR_EMAIL": "brain@localhost",
            "GIT_COMMITTER_NAME": "Brain",
            "GIT_COMMITTER_EMAIL": "brain@localhost",
        }
    return {**fallback, **os.environ, **(env or {})}
