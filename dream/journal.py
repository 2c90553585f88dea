"""The journal of a sync, and the working-tree update it lets the next run finish after a crash.

`.dream/journal.json` is written after the commit is built and before the branch moves. Once the
branch has moved, Dream's files in the working tree are replaced by the new commit's, each only
while it still holds what it held before the run (anything else is the owner's and stays, showing
as their uncommitted change), and git's index gets the new entries. Then the journal is removed.
A run that finds a journal finishes that update (the branch moved) or discards it (it did not).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from pathlib import Path

from pydantic import ConfigDict, Field

from brain import layout
from brain.errors import BrainError
from brain.model import Model
from brain.repo import BrainRepo, blob_id


class Journal(Model):
    """`.dream/journal.json`: a commit whose working-tree update may not have finished."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    run_id: str
    ref: str
    old: str | None
    new: str
    # path → git blob id of the file before the run (None: it did not exist)
    before: dict[str, str | None] = Field(default_factory=dict)
    files: dict[str, str | None] | None = None  # the texts themselves: journals of earlier versions

    def before_ids(self) -> dict[str, str | None]:
        """path → blob id before the run, whichever version wrote the journal."""
        if self.files is None:
            return self.before
        return {rel: blob_id(text.encode("utf-8")) if text is not None else None for rel, text in self.files.items()}


def write_atomic(path: Path, text: str) -> None:
    """Temp file in the same folder, then rename: a reader sees the old file or the new one, never a torn one.

    No fsync per file: the commit is the unit of durability (git writes its objects safely), and
    the journal lets the next run finish a working-tree update a crash interrupted."""
    path.parent.mkdir(parents=True, exist_ok=True)
    os.replace(_write_aside(path, text.encode("utf-8")), path)


def before_ids(root: Path, paths: list[str], accounted: dict[str, set], based_on: dict[str, str | None]) -> dict[str, str | None]:
    """The blob id of what each file holds now (None: no file), for the journal. A file holding a
    text the plan did not account for (an edit saved since) counts as the text planned on, so the
    swap leaves the owner's edit alone."""
    out: dict[str, str | None] = {}
    for rel in sorted(paths):
        raw = read_bytes(Path(root) / rel)
        known = accounted.get(rel)
        if known is None or (raw.decode("utf-8", errors="replace") if raw is not None else None) in known:
            out[rel] = blob_id(raw) if raw is not None else None
        else:
            was = based_on[rel]
            out[rel] = blob_id(was.encode("utf-8")) if was is not None else None
    return out


def finish_worktree(root: Path, journal: Journal, targets: dict[str, str] | None = None) -> None:
    """Bring the working tree and index to the new commit for Dream's files; the owner's edits stay.

    Idempotent, so the next run can redo it from the journal after a crash. `targets`: path → the
    commit's text (read from the commit when None; a path the commit lacks is deleted)."""
    repo = BrainRepo(root)
    files = journal.before_ids()
    if targets is None:
        targets = read_at(repo, journal.new, sorted(files))
    done: dict[str, str | None] = {}  # path → its blob id in the commit (None: deleted)
    for i, (rel, before) in enumerate(sorted(files.items())):
        target = targets.get(rel)
        if _swap_if_unchanged(Path(root) / rel, target, before):
            done[rel] = blob_id(target.encode("utf-8")) if target is not None else None
        if i == len(files) // 2:
            fault("mid-worktree")
    fault("after-worktree")
    if done:
        # The entries git would take from the new commit; without stat data, like `git reset
        # --no-refresh`: the owner's next git command refreshes them.
        info = "".join(f"100644 {blob}\t{rel}\0" if blob else f"0 {'0' * 40}\t{rel}\0" for rel, blob in sorted(done.items()))
        clear_stale_index_lock(repo.git_dir() / "index.lock")
        _with_index_retry(lambda: repo.git("update-index", "-z", "--index-info", stdin=info.encode("utf-8")))
    fault("after-index")
    (Path(root) / layout.JOURNAL).unlink(missing_ok=True)


def _swap_if_unchanged(path: Path, target: str | None, before: str | None) -> bool:
    """Put `target` at `path` (None: remove the file) when the file still holds the bytes of blob
    `before` (None: no file), or already `target`; True when it holds `target` now.

    The owner may be saving the file at this very moment. The new text is put aside first, the
    file is checked right before the rename, and the old file is kept open across it: bytes the
    owner wrote into it meanwhile are seen after the rename and put back, as their change. A new
    file is linked into place, which fails rather than replace one the owner just created."""
    data = target.encode("utf-8") if target is not None else None
    current = read_bytes(path)
    if current == data:
        return True
    if (blob_id(current) if current is not None else None) != before:
        return False
    if data is None:
        path.unlink(missing_ok=True)
        with contextlib.suppress(OSError):  # its folder goes too, once empty (the shards of an older state)
            path.parent.rmdir()
        return True
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = _write_aside(path, data)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        return _link_new(tmp, path)
    except OSError:  # a symlink or a folder took its place: the owner's
        os.unlink(tmp)
        return False
    try:
        seen = _read_fd(fd) if fd is not None else None
        if seen != current and (blob_id(seen) if seen is not None else None) != before:
            os.unlink(tmp)
            return False
        os.replace(tmp, path)
        after = _read_fd(fd) if fd is not None else None
    finally:
        if fd is not None:
            os.close(fd)
    if after != seen:  # written while it was swapped: the owner's text wins
        os.replace(_write_aside(path, after), path)
        return False
    return True


def _link_new(tmp: Path, path: Path) -> bool:
    """`tmp` becomes `path` unless a file appeared there: the owner's, kept."""
    try:
        os.link(tmp, path)
        return True
    except FileExistsError:
        return False
    finally:
        os.unlink(tmp)


def _write_aside(path: Path, data: bytes) -> Path:
    """`data` in a temporary file next to `path`, ready to be renamed over it."""
    tmp = path.with_name(f".{path.name}.dream-tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)
    return tmp


def _read_fd(fd: int) -> bytes:
    os.lseek(fd, 0, os.SEEK_SET)
    with os.fdopen(fd, "rb", closefd=False) as fh:
        return fh.read()


def read_bytes(path: Path) -> bytes | None:
    """A regular file's bytes; None when there is none (missing, a folder, a symlink)."""
    try:
        return path.read_bytes() if not path.is_symlink() else None
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None


def _with_index_retry(action, attempts: int = 100, pause: float = 0.05):
    """Run a git command that takes .git/index.lock, waiting while the owner's git holds it."""
    for i in range(attempts):
        try:
            return action()
        except BrainError as exc:
            if "index.lock" not in str(exc) or i == attempts - 1:
                raise
            time.sleep(pause)
    return None


def recover(root: Path) -> str | None:
    """Finish or discard what a killed run left: returns a line for the report, or None."""
    path = Path(root) / layout.JOURNAL
    if not path.is_file():
        return None
    try:
        journal = Journal.model_validate_json(path.read_text(encoding="utf-8"))
    except ValueError:
        path.unlink()
        return f"{layout.JOURNAL} was unreadable and was removed"
    repo = BrainRepo(root)
    current = repo.git("rev-parse", "-q", "--verify", journal.ref).strip() if journal.ref else repo.head()
    if current == journal.new:
        finish_worktree(root, journal)
        return f"finished the working-tree update of run {journal.run_id}, interrupted by a crash"
    path.unlink()
    return f"run {journal.run_id} was interrupted before its commit; it left nothing behind"


def clear_stale_index_lock(lock: Path, max_age: float = 60.0) -> bool:
    """Remove git's index lock left by a killed git (older than max_age seconds); True when removed."""
    try:
        age = time.time() - lock.stat().st_mtime
    except FileNotFoundError:
        return False
    if age < max_age:
        return False
    lock.unlink(missing_ok=True)
    return True


def require_free_index(root: Path, wait: float = 10.0) -> None:
    """Return once git's index is not locked: a lock older than a minute (a killed git's) is
    removed, a fresh one is waited for. Still locked after `wait` seconds: BrainError, before
    anything changed, so the branch never moves while the index cannot follow it."""
    lock = BrainRepo(root).git_dir() / "index.lock"
    deadline = time.monotonic() + wait
    while not clear_stale_index_lock(lock) and lock.exists():
        if time.monotonic() > deadline:
            raise BrainError(f"git's index is locked ({lock}); Dream changed nothing",
                             f"finish the git command that holds it, or delete {lock} if no git is running, then run `dream run` again")
        time.sleep(0.1)


def read_at(repo: BrainRepo, rev: str, paths: list[str]) -> dict[str, str]:
    """The text of each path at `rev`, through one `git cat-file --batch` (missing paths left out).

    Staging refuses control characters in names (brain.layout), so each name is one request line."""
    if not paths:
        return {}
    proc = subprocess.run(["git", "cat-file", "--batch"], cwd=repo.root, input="".join(f"{rev}:{p}\n" for p in paths).encode("utf-8"),
                          capture_output=True)
    if proc.returncode != 0:
        err = proc.stderr.decode("utf-8", errors="replace").strip().splitlines()
        raise BrainError(f"git cat-file failed: {err[0] if err else f'exit {proc.returncode}'}", "run `git fsck`, then `dream run` again")
    out, pos, found = proc.stdout, 0, {}
    for rel in paths:
        nl = out.index(b"\n", pos)
        head = out[pos:nl].split(b" ")
        pos = nl + 1
        # "<id> <type> <size>", else "<name> missing" (a name may hold spaces: not split on them)
        if len(head) != 3 or len(head[0]) != 40 or not head[2].isdigit():
            continue
        size = int(head[2])
        found[rel] = out[pos : pos + size].decode("utf-8", errors="replace")
        pos += size + 1
    return found


def fault(name: str) -> None:
    """Fault injection for the crash tests: `DREAM_FAULT=<name>` kills the process right here."""
    if os.environ.get("DREAM_FAULT") == name:
        os.kill(os.getpid(), signal.SIGKILL)
