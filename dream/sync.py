"""Sync: the staged tree becomes one git commit, merged with whatever the owner changed meanwhile.

`plan_sync` is pure: for each staged file it compares the live text now with the live text the
file was computed from; an owner's edit in between is merged (3-way), and on conflict the owner's
text stays and Dream's change is deferred. `apply_sync` writes atomically and commits once.
"""

from __future__ import annotations

import functools
import os
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from pydantic import ConfigDict, Field

from brain import layout
from brain.errors import BrainError
from brain.model import Model, empty_list
from brain.repo import BrainRepo, blob_id, git_env
from brain.tree import read_fd
from dream.merge import merge3

DREAM_AUTHOR = "Dream <dream@localhost>"
DREAM_IDENTITY = {"GIT_AUTHOR_NAME": "Dream", "GIT_AUTHOR_EMAIL": "dream@localhost"}


class SyncPlan(Model):
    model_config = ConfigDict(extra="forbid", frozen=True)
    writes: dict[str, str] = Field(default_factory=dict)  # path → final text
    added: list[str] = Field(default_factory=empty_list)
    modified: list[str] = Field(default_factory=empty_list)
    conflicts: list[str] = Field(default_factory=empty_list)
    merged: list[str] = Field(default_factory=empty_list)  # written as a merge with the owner's edit, not as staged
    # path → the live text its write was merged against (read when the plan was made). A file that
    # holds anything else when the working tree is updated was edited since, and is left alone.
    based_on: dict[str, str | None] = Field(default_factory=dict)


def plan_sync(staged: dict[str, str], derived_from: dict[str, str | None], live_now: dict[str, str | None]) -> SyncPlan:
    writes, added, modified, conflicts, merged = {}, [], [], [], []
    for path, text in sorted(staged.items()):
        before, now = derived_from.get(path), live_now.get(path)
        if now != before and not layout.is_state_path(path):
            if now is None:
                conflicts.append(f"{path}: deleted by the owner during the run; not re-created")
                continue
            text, clean = merge3(before or "", now, text)
            if not clean:
                conflicts.append(f"{path}: edited by the owner during the run; the owner's text was kept")
                continue
            merged.append(path)
        if text == now:
            continue
        writes[path] = text
        (modified if now is not None else added).append(path)
    based_on = {path: live_now.get(path) for path in writes}
    return SyncPlan(writes=writes, added=added, modified=modified, conflicts=conflicts, merged=merged, based_on=based_on)


def read_live(root: Path, paths: list[str]) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for rel in paths:
        p = Path(root) / rel
        out[rel] = p.read_bytes().decode("utf-8", errors="replace") if p.is_file() and not p.is_symlink() else None
    return out


def write_atomic(path: Path, text: str) -> None:
    """Temp file in the same folder, then rename: a reader sees the old file or the new one, never a torn one.

    No fsync per file: the commit is the unit of durability (git writes its objects safely), and
    the journal lets the next run finish a working-tree update a crash interrupted.
    """
    _replace_file(path, text.encode("utf-8"), set())


class Journal(Model):
    """`.dream/journal.json`: a commit whose working-tree update may not have finished."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    run_id: str
    ref: str
    old: str | None
    new: str
    # path → git blob id of the file before the run (None: it did not exist). Ids, not texts: the
    # journal is written on every sync, and a large Brain's generated files are megabytes.
    before: dict[str, str | None] = Field(default_factory=dict)
    files: dict[str, str | None] | None = None  # the texts themselves: journals of earlier versions

    def before_ids(self) -> dict[str, str | None]:
        """path → blob id before the run, whichever version wrote the journal."""
        if self.files is None:
            return self.before
        return {rel: blob_id(text.encode("utf-8")) if text is not None else None for rel, text in self.files.items()}


class SyncResult(Model):
    model_config = ConfigDict(extra="forbid", frozen=True, arbitrary_types_allowed=True)
    commit: str | None
    conflicts: list[str] = Field(default_factory=empty_list)  # found while rebasing on the owner's commits
    rebased: int = 0
    # apply_sync(wait_index=False): git's index update, still running; finish() ends it
    index_update: "IndexUpdate | None" = Field(default=None, exclude=True, repr=False)

    def finish(self) -> None:
        """Wait for the index update apply_sync left running (wait_index=False); then the sync is done."""
        if self.index_update is not None:
            self.index_update.wait()


def apply_sync(
    root: Path, plan: SyncPlan, message: str, run_id: str, base: str | None, run_dir: Path,
    staged: tuple[Path, dict[str, str]] | None = None, wait_index: bool = True, early: EarlyCommit | None = None,
    meanwhile: Callable[[], None] | None = None, landed: Callable[[str], None] | None = None,
) -> SyncResult:
    """Commit the plan off to the side, move the branch with a compare-and-swap, then update the tree.

    If the owner committed while the run worked, the branch moved: the plan is merged onto their
    commit (3-way per file, their text wins on conflict) and the swap is tried again.
    `staged`: the staged folder and the texts written in it; a file new to the working tree whose
    text is the staged one is linked from there instead of written again (finish_worktree).
    `wait_index=False`: git's update of its index (reading and writing all of it: 8 MB on the 10k
    Brain) goes on while the caller does its own work; the caller must call `result.finish()`.
    `early`: the trees of the staged files, built while the gate ran (EarlyCommit); the commit is
    built on them when they still fit the plan, else as usual. `meanwhile()`: the caller's work,
    done (once) while git writes the commit. `landed(commit)`: called once the branch has moved to
    it, before the working tree is brought there (the caller can ask git about it meanwhile).
    """
    if not plan.writes:
        return SyncResult(commit=None)
    repo = BrainRepo(root)
    # git's update of its index is started now, so that it has read the index (8 MB on the 10k
    # Brain) by the time the files are swapped and their entries sent (finish_worktree).
    clear_stale_index_lock(root)
    update = IndexUpdate(repo)
    try:
        result = _apply_sync(root, repo, plan, message, run_id, base, run_dir, staged, wait_index, early, meanwhile, landed, update)
    except BaseException:
        update.abandon()
        raise
    if result.commit is None:  # nothing landed (a rebase left nothing to write): nothing to set
        update.abandon()
    return result


def _apply_sync(root: Path, repo: BrainRepo, plan: SyncPlan, message: str, run_id: str, base: str | None, run_dir: Path,
                staged: tuple[Path, dict[str, str]] | None, wait_index: bool, early: EarlyCommit | None,
                meanwhile: Callable[[], None] | None, landed: Callable[[str], None] | None, update: IndexUpdate) -> SyncResult:
    # The branch to move, asked while the commit is written; the identities (and time) fast-import
    # must be told, beside it when no early commit may give the tree (commit-tree needs none).
    asked_ref = repo.git_all_later((("symbolic-ref", "-q", "HEAD"), None))
    idents = _identities(repo, ask_now=early is None)
    ref = None
    writes, conflicts, rebased = dict(plan.writes), [], 0
    # The texts each write accounts for: the live text the plan merged, and what the owner committed
    # meanwhile (a rebase merges it). An edit saved after those is the owner's alone: the journal then
    # records the planned text as "before", so finish_worktree leaves the file as the owner has it.
    accounted = {rel: {plan.based_on[rel]} for rel in writes if rel in plan.based_on}
    for _ in range(5):
        before: dict[str, str | None] = {}
        read: dict[str, tuple[bytes, str]] = {}  # what _before_ids read and hashed, for the swap

        def work(writes: dict[str, str] = writes, before: dict[str, str | None] = before, read: dict = read) -> None:
            """While git writes the commit: what each file holds now (the journal's "before"), and
            the caller's work (the first time)."""
            nonlocal meanwhile
            before.update(_before_ids(root, writes, accounted, plan.based_on, read))
            if meanwhile is not None:
                meanwhile, then = None, meanwhile
                then()

        new, blobs = _build_commit(repo, writes, message, base, run_dir, idents, early, work)
        if ref is None:
            ref = asked_ref()[0].strip() or "HEAD"
        fault("after-commit-object")
        journal = Journal(run_id=run_id, ref=ref, old=base, new=new, before=before)
        write_atomic(Path(root) / layout.JOURNAL, journal.model_dump_json(indent=1) + "\n")
        fault("after-journal")
        try:
            # one transaction: the branch moves (if still at `base`) and fast-import's refs go
            moves = f"update {ref} {new} {base or '0' * 40}\ndelete {SYNC_REF}\ndelete {EARLY_REF}\n"
            repo.git("update-ref", "-m", f"dream: run {run_id}", "--stdin", stdin=moves.encode("utf-8"))
        except BrainError:
            (Path(root) / layout.JOURNAL).unlink(missing_ok=True)
            current = repo.head()
            writes, lost, theirs = _rebase(repo, writes, base, current)
            for rel, text in theirs.items():
                if rel in accounted:  # a plan without based_on (built by hand) keeps reading the file
                    accounted[rel].add(text)
            conflicts += lost
            base, rebased = current, rebased + 1
            if not writes:
                return SyncResult(commit=None, conflicts=conflicts, rebased=rebased)
            continue
        fault("after-update-ref")
        if landed is not None:
            landed(new)
        folder, texts = staged or (None, {})
        copies = {rel: folder / rel for rel, text in writes.items() if folder is not None and texts.get(rel) == text}
        finish_worktree(root, journal, targets=writes, copies=copies, target_ids=blobs, wait=wait_index, read=read, update=update)
        return SyncResult(commit=new, conflicts=conflicts, rebased=rebased, index_update=None if wait_index else update)
    raise BrainError("the branch kept moving while Dream tried to commit", "run `dream run` again")


def _before_ids(root: Path, writes: dict[str, str], accounted: dict[str, set], based_on: dict[str, str | None],
                read: dict[str, tuple[bytes, str]] | None = None) -> dict[str, str | None]:
    """The blob id of what each file to write holds now (None: no file), for the journal; a file
    holding a text the plan did not account for (an edit saved since) counts as the text planned
    on, so the swap leaves the owner's edit alone. `read`: gets (bytes, blob id) of each file whose
    "before" is what it holds (the swap then need not hash those bytes again)."""
    before: dict[str, str | None] = {}
    for rel in sorted(writes):
        raw = _read_bytes(root / rel)
        known = accounted.get(rel)
        if known is None or (raw.decode("utf-8", errors="replace") if raw is not None else None) in known:
            before[rel] = blob_id(raw) if raw is not None else None
            if raw is not None and read is not None:
                read[rel] = (raw, before[rel])
        else:
            was = based_on[rel]
            before[rel] = blob_id(was.encode("utf-8")) if was is not None else None
    return before


def _identities(repo: BrainRepo, ask_now: bool) -> Callable[[], tuple[str, str]]:
    """The author's and committer's identities (and time) as `git var` gives them, the author Dream:
    what fast-import must be told to write the commit commit-tree would. Asked now (`ask_now`),
    else when first needed: a nightly run on a large Brain commits its last early commit's tree
    by commit-tree, which takes them from git itself (two git processes fewer; on the 10k Brain the
    run was no shorter for it, since sync waits for that early commit anyway)."""
    commands = ((("var", "GIT_AUTHOR_IDENT"), DREAM_IDENTITY), (("var", "GIT_COMMITTER_IDENT"), None))
    asked = repo.git_all_later(*commands) if ask_now else None

    @functools.cache
    def identities() -> tuple[str, str]:
        author, committer = (asked or repo.git_all_later(*commands))()
        return author.strip(), committer.strip()

    return identities


def _build_commit(repo: BrainRepo, writes: dict[str, str], message: str, base: str | None, run_dir: Path,
                  idents: Callable[[], tuple[str, str]], early: EarlyCommit | None = None,
                  meanwhile: Callable[[], None] = lambda: None) -> tuple[str, dict[str, str]]:
    """Blobs, trees and a commit object written off to the side: nothing visible changes yet.
    Returns the commit and each write's blob id. `idents()`: the author's and committer's, as
    `git var` gives them (_identities), asked only where fast-import writes the commit.

    A nightly run's few dozen files: blobs, trees and commit from one `git fast-import`
    (`_fast_commit`), which reads only the folders on the changed paths. Past FAST_COMMIT_MAX
    files (a first compile): blobs from fast-import, trees from Dream's own index (`_write_trees`),
    since fast-import finds each entry by a linear scan of its folder, quadratic in a folder's size
    (a full compile's notes/<owner>/ holds 36,000 notes: 7 s). Both give the same commit.
    """
    run_dir.mkdir(parents=True, exist_ok=True)
    if len(writes) <= FAST_COMMIT_MAX:
        on = early.tree_for(writes, base) if early is not None else None
        if on is not None and all(on[1].get(rel) == text for rel, text in writes.items()):
            # The early commit's tree already holds every write (a nightly run's last early commit
            # is started after the final regenerate): the commit is that tree. commit-tree writes
            # the one object; fast-import would start, write a pack and index it (~10 ms here).
            new = _commit_tree(repo, on[0], message, base, meanwhile)
            if new is not None:
                fault("after-blobs")
                fault("after-tree")
                return new, {rel: on[2][rel] for rel in writes}
            meanwhile = lambda: None  # noqa: E731 - done once, by _commit_tree
        new, blobs = _fast_commit(repo, writes, message, base, idents(), on, meanwhile)
        fault("after-blobs")
        fault("after-tree")
        return new, blobs
    meanwhile()
    blobs = _write_blobs(repo.root, writes)
    fault("after-blobs")
    tree = _write_trees(repo, blobs, base)
    fault("after-tree")
    msg = run_dir / "message"
    msg.write_text(message, encoding="utf-8")
    parents = ["-p", base] if base else []
    return repo.git("commit-tree", tree, *parents, "-F", str(msg), env=DREAM_IDENTITY).strip(), blobs


def _commit_tree(repo: BrainRepo, tree: str, message: str, base: str | None, meanwhile: Callable[[], None]) -> str | None:
    """The commit of `tree` on `base` by `git commit-tree`, the author Dream (the commit fast-import
    would write: the identities and dates are git's own). `meanwhile()` runs once, while git
    writes it. None when git fails."""
    proc = None
    try:
        proc = subprocess.Popen(["git", "commit-tree", tree, *(["-p", base] if base else [])], cwd=repo.root, env=git_env(DREAM_IDENTITY),
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        proc.stdin.write(message.encode("utf-8"))  # a commit message fits the pipe: git reads it meanwhile
        proc.stdin.close()
    except OSError:  # no git, or it stopped before reading: the fast-import path says why
        pass
    try:
        meanwhile()
    finally:
        out = b""
        if proc is not None:
            out = proc.stdout.read()
            proc.stdout.close()
            proc.wait()
    new = out.decode("ascii", errors="replace").strip()
    return new if proc is not None and proc.returncode == 0 and len(new) == 40 else None


#: Up to this many files a commit is built by fast-import alone: each costs a scan of its folder
#: (notes/<owner>/ holds tens of thousands), a few milliseconds at most.
FAST_COMMIT_MAX = 500
#: The ref fast-import must name for its commit; deleted in the transaction that moves the branch.
SYNC_REF = "refs/dream/sync"
#: The same for the early commit (EarlyCommit), deleted with it (or when the early commit goes unused).
EARLY_REF = "refs/dream/early"


#: fast-import explodes a pack of fewer than 100 objects into loose files (`fastimport.unpackLimit`):
#: a nightly run's few dozen objects then cost a second process that re-inflates and re-compresses
#: each one, the big folder trees too (0.4 s of a 4.5 s run on a 10,000-session Brain). The pack is
#: kept instead; `git gc --auto`, which the owner's own commits run, folds packs together past
#: `gc.autoPackLimit` (50).
_KEEP_PACK = ("-c", "fastimport.unpackLimit=0")
#: How the blobs are stored, as `git add` stores them: compressed fast (git's loose objects use
#: level 1, `core.looseCompression`) and without deltas (`--depth=0`, on the command below).
#: fast-import deltas each blob against the one before it in the stream, which here is an unrelated
#: file: on a 10,000-session Brain a nightly run's 28 blobs (8 MB, state.json most of it) took
#: 0.54 s, 0.22 s stored like this, for a pack 8 % larger until `git gc` repacks it (it searches
#: deltas among all versions then).
_FAST_STORE = ("-c", "core.compression=1")
_FAST_IMPORT = ("git", *_KEEP_PACK, *_FAST_STORE, "fast-import", "--quiet", "--depth=0", "--force")


def _inline(rel: str, data: bytes) -> bytes:
    """fast-import's command setting the file `rel` to `data`."""
    return b"M 100644 inline %s\ndata %d\n%s\n" % (_fast_path(rel), len(data), data)


def _on_tree(tree: str | None, sent: dict[str, str], sent_blobs: dict[str, str], writes: dict[str, str],
             blobs: dict[str, str]) -> Iterator[bytes]:
    """fast-import's commands for a commit of `writes` on the tree `tree` (None: the parent's),
    which holds the texts `sent` (blob ids `sent_blobs`): the tree taken whole, then each write whose
    text differs. Each write's blob id goes into `blobs`."""
    if tree is not None:
        yield b'M 040000 %s ""\n' % tree.encode("ascii")
    for rel in sorted(writes):
        if sent.get(rel) == writes[rel]:
            blobs[rel] = sent_blobs[rel]
            continue
        data = writes[rel].encode("utf-8")
        blobs[rel] = blob_id(data)
        yield _inline(rel, data)


def _fast_import(root: Path, chunks, meanwhile: Callable[[], None] | None = None) -> bytes:
    """Run `git fast-import` on the byte chunks `chunks` yields; returns what it printed (get-mark).
    `meanwhile()`: the caller's work while fast-import runs; the stream then goes through a file
    (a nightly commit's few megabytes), which fast-import reads at its pace while the caller works."""
    with tempfile.TemporaryFile() as err, tempfile.TemporaryFile() as out:  # files, not pipes: nothing blocks
        if meanwhile is not None:
            with tempfile.TemporaryFile() as stream:
                for chunk in chunks:
                    stream.write(chunk)
                stream.seek(0)
                proc = subprocess.Popen(_FAST_IMPORT, cwd=root, stdin=stream, stdout=out, stderr=err)
            try:
                meanwhile()
            except BaseException:
                proc.wait()  # not left running behind a failed run
                raise
        else:
            proc = subprocess.Popen(_FAST_IMPORT, cwd=root, stdin=subprocess.PIPE, stdout=out, stderr=err, bufsize=1 << 20)
            try:
                for chunk in chunks:
                    proc.stdin.write(chunk)
                # No `done`: a run killed mid-stream then leaves only unreachable objects, not a crash report.
                proc.stdin.close()
            except BrokenPipeError:
                pass  # fast-import stopped early: its message is in `err`
        code = proc.wait()
        err.seek(0)
        why = err.read().decode("utf-8", errors="replace").strip().splitlines()
        out.seek(0)
        printed = out.read()
    if code != 0:
        raise BrainError(f"git fast-import failed: {why[0] if why else f'exit {code}'}", "run `git fsck`, then `dream run` again")
    return printed


def _write_blobs(root: Path, writes: dict[str, str]) -> dict[str, str]:
    """Each write's text stored as a blob (one `git fast-import`, no commit); path → blob id."""
    blobs = {}

    def stream():
        for rel in sorted(writes):
            data = writes[rel].encode("utf-8")
            blobs[rel] = blob_id(data)
            yield b"blob\ndata %d\n%s\n" % (len(data), data)

    _fast_import(root, stream())
    return blobs


def _fast_commit(repo: BrainRepo, writes: dict[str, str], message: str, base: str | None, idents: tuple[str, str],
                 early: tuple[str, dict[str, str], dict[str, str]] | None = None,
                 meanwhile: Callable[[], None] | None = None) -> tuple[str, dict[str, str]]:
    """The commit `commit-tree` would make of `base` with `writes` applied, written by one fast-import
    on SYNC_REF; the identities and dates are git's own (`git var`), the author Dream.
    `early`: (tree, texts, blob ids) of a commit of `base` with `texts` applied (EarlyCommit.tree_for):
    the commit takes that tree whole and applies only the writes whose text differs."""
    author, committer = idents
    blobs = {}
    tree, sent, sent_blobs = early if early is not None else (None, {}, {})

    def stream():
        text = message.encode("utf-8")
        head = b"commit %s\nmark :1\nauthor %s\ncommitter %s\ndata %d\n%s\n" % (
            SYNC_REF.encode(), author.encode("utf-8"), committer.encode("utf-8"), len(text), text)
        yield head + (b"from %s\n" % base.encode("ascii") if base else b"")
        yield from _on_tree(tree, sent, sent_blobs, writes, blobs)
        yield b"\nget-mark :1\n"

    printed = _fast_import(repo.root, stream(), meanwhile).decode("ascii", errors="replace").split()
    if len(printed) != 1 or len(printed[0]) != 40:
        raise BrainError(f"git fast-import printed no commit id ({printed[:1]})", "run `git fsck`, then `dream run` again")
    return printed[0], blobs


#: A tree of at least this many files has its staged files committed early (EarlyCommit): the
#: folders a nightly run touches there are large (notes/<owner>/ of the 10k Brain: 36,000 notes,
#: 60 ms of fast-import's time); on a small tree the extra process would cost more.
EARLY_COMMIT_MIN_FILES = 5_000


class EarlyCommit:
    """Staged files committed on `base` by a fast-import that runs while the run goes on; sync then
    builds its commit on that tree (`_fast_commit`), and its fast-import only stores what changed
    since: the log entry and state, written after the gate.

    On the 10k Brain, fast-import spends two thirds of a nightly commit reading and writing the
    large folders on the changed paths (notes/<owner>/ holds 36,000 notes); this moves that off the
    run's path. A run starts one for its notes while the pages compile, then one `on` that tree
    for the rest while the gate runs. The early commits themselves are thrown away (EARLY_REF goes
    with the transaction that moves the branch), and are used only when they still fit: same base,
    and no file they hold left out of the final writes (the gate dropped it, the owner's edit won).
    Otherwise, a failed process included, the commit is built as before.
    """

    def __init__(self, root: Path, writes: dict[str, str], base: str, on: EarlyCommit | None = None) -> None:
        self.root, self.base = root, base
        # The earlier one is done by now (it had the pages' compile to run in): this one starts on its tree.
        tree = on._wait() if on is not None and on.base == base else None
        self.sent = dict(on.sent) if tree is not None else {}  # path → text, of this commit and the ones it is on
        self.blobs = dict(on.blobs) if tree is not None else {}
        self._started = on is not None and on._started
        if on is not None:
            on._close()
        self._out, self._err = tempfile.TemporaryFile(), tempfile.TemporaryFile()
        self._tree: str | None = None
        self._used = False  # the commit was built on it (its ref went with that commit's transaction)
        with tempfile.TemporaryFile() as stream:  # a file, not a pipe: the run never waits on fast-import
            stream.write(b"commit %s\nmark :1\ncommitter %s 0 +0000\ndata 0\nfrom %s\n" % (
                EARLY_REF.encode(), DREAM_AUTHOR.encode(), base.encode("ascii")))
            stream.writelines(_on_tree(tree, self.sent, self.blobs, writes, self.blobs))
            stream.write(b'\nls :1 ""\n')
            self.sent.update(writes)
            stream.seek(0)
            try:
                self._proc: subprocess.Popen | None = subprocess.Popen(_FAST_IMPORT, cwd=root, stdin=stream, stdout=self._out, stderr=self._err)
            except OSError:
                self._proc = None
        self._started = self._started or self._proc is not None

    def tree_for(self, writes: dict[str, str], base: str | None) -> tuple[str, dict[str, str], dict[str, str]] | None:
        """(tree, texts, blob ids) to build the commit of `writes` on `base` from, or None when the
        early commit does not fit it or failed. Waits for fast-import to finish."""
        if base != self.base or not self.sent.keys() <= writes.keys():
            self._wait()  # not stopped: it would race the real commit for the refs
            return None
        tree = self._wait()
        self._used = tree is not None
        return (tree, self.sent, self.blobs) if tree is not None else None

    def _wait(self) -> str | None:
        if self._proc is not None:
            code, self._proc = self._proc.wait(), None
            self._out.seek(0)
            printed = self._out.read().split()  # `040000 tree <id>`
            if code == 0 and len(printed) == 3 and printed[:2] == [b"040000", b"tree"] and len(printed[2]) == 40:
                self._tree = printed[2].decode("ascii")
        return self._tree

    def discard(self) -> None:
        """End it: waited for (a process killed while it writes its ref would leave the ref locked),
        then its ref deleted unless the commit built on it took that away; its objects are left
        unreachable, for `git gc`."""
        self._wait()
        if self._started and not self._used:
            subprocess.run(["git", "update-ref", "-d", EARLY_REF], cwd=self.root, capture_output=True, check=False)
        self._close()

    def _close(self) -> None:
        self._out.close()
        self._err.close()


def _fast_path(rel: str) -> bytes:
    """A path as fast-import reads it: C-quoted when it starts with a quote or holds a newline or backslash."""
    raw = rel.encode("utf-8")
    if not (raw.startswith(b'"') or b"\n" in raw or b"\\" in raw):
        return raw
    return b'"' + raw.replace(b"\\", b"\\\\").replace(b'"', b'\\"').replace(b"\n", b"\\n") + b'"'


def _write_trees(repo: BrainRepo, blobs: dict[str, str], base: str | None) -> str:
    """The id of `base`'s tree with each path set to its blob (mode 100644); other entries kept.

    Built as `git add` + `git commit` build it, by git's index code, but in Dream's own index
    (`.dream/cache/sync-index`; the owner's index, which may hold their staged changes, is not
    touched): its cache-tree keeps the id of every folder, so `write-tree` rewrites only the folders
    the writes touch. The index is kept for the next run. What was committed since (the sessions
    imported for it) is applied to it as a diff; when it is lost, unreadable or far behind, it is
    read again from `base`.
    """
    index = repo.root / layout.SYNC_INDEX
    index.parent.mkdir(parents=True, exist_ok=True)
    env = {"GIT_INDEX_FILE": str(index)}
    git = lambda *args, **kw: repo.git(*_PRIVATE_INDEX, *args, env=env, **kw)  # noqa: E731
    # Only a run holding the Dream lock uses this index: a lock file beside it is a killed git's.
    (repo.root / (layout.SYNC_INDEX + ".lock")).unlink(missing_ok=True)
    catch_up = _catch_up(repo, git, index, base) if base else None
    if catch_up is None:
        git("read-tree", *([base] if base else ["--empty"]))
        catch_up = b""
    # --replace: a file where a folder was, or a folder where a file was, as `git add` does it
    git("update-index", "-z", "--replace", "--index-info", stdin=catch_up + _file_entries(blobs))
    tree = git("write-tree").strip()
    _remember_tree(index, tree)
    return tree


def _stamp(index: Path) -> str | None:
    """The index file's size and trailing checksum (git's hash of all it holds), None when unreadable."""
    try:
        with open(index, "rb") as f:
            size = f.seek(0, os.SEEK_END)
            f.seek(max(0, size - 32))
            return f"{size} {f.read().hex()}"
    except OSError:
        return None


def _memo(index: Path) -> Path:
    """Where the tree Dream's index holds is noted: `sync-index.tree` beside it."""
    return index.with_name(index.name + ".tree")


def _remember_tree(index: Path, tree: str) -> None:
    """Note beside Dream's index the tree it holds, so the next run need not ask `write-tree`."""
    stamp = _stamp(index)
    memo = _memo(index)
    if stamp is None:
        memo.unlink(missing_ok=True)
    else:
        write_atomic(memo, f"{tree} {stamp}\n")


def _remembered_tree(index: Path) -> str | None:
    """The tree _remember_tree noted, if the index is still the very file it was noted for."""
    try:
        tree, stamp = _memo(index).read_text(encoding="ascii").strip().split(" ", 1)
    except (OSError, ValueError):
        return None
    return tree if stamp == _stamp(index) else None


def _file_entries(blobs: dict[str, str]) -> bytes:
    """`update-index -z --index-info` lines setting each path to its blob as a regular file."""
    return b"".join(b"100644 %s\t%s\0" % (blob.encode("ascii"), rel.encode("utf-8")) for rel, blob in sorted(blobs.items()))


#: Past this many files committed since Dream's index was written, it is read afresh from the commit.
CATCH_UP_MAX = 2000


def _catch_up(repo: BrainRepo, git, index: Path, base: str) -> bytes | None:
    """`--index-info` lines that bring Dream's index from its tree to `base`'s; None to read it afresh."""
    if not index.is_file():
        return None
    try:
        have = _remembered_tree(index) or git("write-tree").strip()
        out = repo.git("diff-tree", "-r", "-z", "--no-renames", "--no-commit-id", "-l0", have, f"{base}^{{tree}}")
    except BrainError:  # unreadable: git writes an index whole or not at all, but a person may not
        return None
    # ":<old mode> <new mode> <old id> <new id> <status>\0<path>\0" per changed file
    fields = out.encode("utf-8", "surrogateescape").split(b"\0")
    lines = []
    for head, path in zip(fields[0::2], fields[1::2]):
        _, mode, _, oid, status = head.split(b" ")
        lines.append(b"0 %s\t%s\0" % (b"0" * 40, path) if status == b"D" else b"%s %s\t%s\0" % (mode, oid, path))
        if len(lines) > CATCH_UP_MAX:
            return None
    return b"".join(lines)


#: Dream's index is read and written only by the commands above: no split index (its shared part
#: would go to .git/), no file-system monitor, no untracked cache (it never looks at the worktree).
#: Version 4 compresses the paths: 5 MB instead of 8 on a 10,000-session Brain, read and written twice.
#: The index keeps its trailing checksum (`index.skipHash`, which feature.manyFiles turns on, would
#: zero it): the note of the tree it holds is matched to the file by it (_remembered_tree).
_PRIVATE_INDEX = ("-c", "index.version=4", "-c", "core.splitIndex=false", "-c", "core.fsmonitor=false", "-c", "core.untrackedCache=false",
                  "-c", "index.skipHash=false")


def _rebase(repo: BrainRepo, writes: dict[str, str], base: str | None,
            head: str | None) -> tuple[dict[str, str], list[str], dict[str, str]]:
    """Dream's writes re-applied on the owner's newer commit: their changes win where they overlap.
    Also returns the owner's committed text of each file the result merged."""
    out, lost, theirs = {}, [], {}
    paths = sorted(writes)
    before = _read_many(repo, base, paths) if base else {}
    after = _read_many(repo, head, paths) if head else {}
    for rel, text in writes.items():
        was, now = before.get(rel), after.get(rel)
        if now == was:
            out[rel] = text
            continue
        if now is None:
            lost.append(f"{rel}: deleted by the owner in a commit made during the run; not re-created")
            continue
        merged, clean = merge3(was or "", now, text)
        if clean:
            out[rel] = merged
            theirs[rel] = now
        else:
            lost.append(f"{rel}: the owner committed an overlapping edit during the run; the owner's text was kept")
    return out, lost, theirs


def finish_worktree(root: Path, journal: Journal, targets: dict[str, str] | None = None,
                    copies: dict[str, Path] | None = None, target_ids: dict[str, str] | None = None,
                    wait: bool = True, read: dict[str, tuple[bytes, str]] | None = None,
                    update: "IndexUpdate | None" = None) -> "IndexUpdate":
    """Bring the working tree and index to the new commit for Dream's files; the owner's edits stay.

    Idempotent, so the next run can redo it from the journal after a crash. A file is rewritten only
    when it still holds what it held before the run (or Dream's own text): anything else is the
    owner's and is left alone, showing as their uncommitted change. `copies`: files already holding
    a target's bytes (the staged folder's); a file new to the working tree is hard-linked from its
    copy, which costs a fifth of writing it (a full compile creates one file per note). `target_ids`:
    the blob id of each target where the caller knows it (not hashed again: a large Brain's generated files are megabytes).
    `wait=False`: returns with git's index update still running (IndexUpdate.wait() ends it).
    `read`: path → (bytes, blob id) of files hashed moments ago (apply_sync's journal "before").
    `update`: git's index update, started by the caller (an IndexUpdate not sent anything yet).
    """
    copies, target_ids, read = copies or {}, target_ids or {}, read or {}
    repo = BrainRepo(root)
    files = journal.before_ids()
    if targets is None:  # recovering after a crash: read the new commit's files in one git call
        targets = _read_many(repo, journal.new, sorted(files))
    if update is None:
        if files:
            clear_stale_index_lock(root)
        update = IndexUpdate(repo, start=bool(files))  # git reads its index (8 MB on the 10k Brain) while the files are swapped
    done, made = [], set()
    try:
        for i, (rel, before) in enumerate(sorted(files.items())):
            target = targets.get(rel)
            if target is not None and _swap_if_unchanged(Path(root) / rel, target, before, made, copies.get(rel), read.get(rel)):
                done.append(rel)
            if i == len(files) // 2:
                fault("mid-worktree")
        fault("after-worktree")
    except BaseException:
        update.abandon()  # the journal stays: the next run finishes from it
        raise
    # The entries git would take from the new commit (its blobs are these bytes); like
    # `git reset --no-refresh`, without stat data: the owner's next git command refreshes them.
    info = _file_entries({rel: target_ids.get(rel) or blob_id(targets[rel].encode("utf-8")) for rel in done}) if done else None
    update.send(info)
    if wait:
        update.wait()
    return update


class IndexUpdate:
    """`git update-index --index-info` of the files a sync finished: started first (git reads its
    index meanwhile), then `send(entries)`; `wait()` ends it (retrying while the owner's git holds
    the index lock) and then removes the journal: until then, a killed run leaves the journal for
    the next run to finish from (finish_worktree is idempotent)."""

    def __init__(self, repo: BrainRepo, start: bool = True) -> None:
        self._repo, self._info, self._proc = repo, None, None
        if not start:  # nothing to update (send(None) only)
            return
        try:
            self._proc = subprocess.Popen(["git", "update-index", "-z", "--index-info"], cwd=repo.root, stdin=subprocess.PIPE,
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        except OSError:  # no git: wait() runs it again and says why
            self._proc = None

    def send(self, info: bytes | None) -> None:
        """The index entries to set (None: none; git then leaves its index as it was)."""
        self._info = info
        if self._proc is None:
            return
        try:
            if info:
                self._proc.stdin.write(info)  # a nightly run's few kilobytes fit the pipe; a full compile's megabytes go as git reads
            self._proc.stdin.close()
        except OSError:  # it stopped before reading (the owner's git held the lock): wait() runs it again
            pass

    def abandon(self) -> None:
        """End git's process with nothing set (its index stays as it was); the journal is kept."""
        self.send(None)
        if self._proc is not None:
            self._proc.wait()
        self._proc = None

    def wait(self) -> None:
        info, proc, self._info, self._proc = self._info, self._proc, None, None
        code = proc.wait() if proc is not None else None
        if info is not None and code != 0:
            # Failed (most often: the owner's git held .git/index.lock): again, as a plain call that
            # waits out the lock and says what git said.
            _with_index_retry(lambda: self._repo.git("update-index", "-z", "--index-info", stdin=info))
        fault("after-index")
        (Path(self._repo.root) / layout.JOURNAL).unlink(missing_ok=True)


SyncResult.model_rebuild()


def _swap_if_unchanged(path: Path, target: str, before: str | None, made: set[Path], copy: Path | None = None,
                       read: tuple[bytes, str] | None = None) -> bool:
    """Put `target` at `path` when the file still holds the bytes of blob `before` (None: no file), or
    `target`; True when it holds `target` now.

    The owner may be saving the file at this very moment. The new text is put aside first, the
    file is checked right before the rename, and the old file is kept open across it: bytes the
    owner wrote into it meanwhile are seen after the rename and put back, as their change. `copy`,
    a file holding `target` (the staged one), is linked rather than written again: at `path` when
    the file is new (a link never replaces a file the owner created meanwhile), else aside.
    `read`: (bytes, their blob id) as read moments ago: the same bytes now are not hashed again.
    """
    data = target.encode("utf-8")
    current = _read_bytes(path)
    if current == data:
        return True
    held = read[1] if read is not None and current == read[0] else (blob_id(current) if current is not None else None)
    if held != before:
        return False
    if before is None and copy is not None:
        linked = _link_new(copy, path, made)
        if linked is not None:
            return linked or _read_bytes(path) == data  # not linked: a file the owner created meanwhile
    tmp = _link_aside(path, copy, made) if copy is not None else None
    tmp = tmp or _write_aside(path, data, made)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        fd = None
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
        _replace_file(path, after, made)
        return False
    return True


def _link_new(copy: Path, path: Path, made: set[Path]) -> bool | None:
    """Hard-link `copy` to the absent `path`: True when linked, False when a file is there now (the
    owner's: never replaced), None when links do not work here (another file system, no permission)."""
    _make_folder(path, made)
    try:
        os.link(copy, path)
    except FileExistsError:
        return False
    except OSError:
        return None
    return True


def _link_aside(path: Path, copy: Path, made: set[Path]) -> Path | None:
    """`copy` hard-linked next to `path`, ready to be renamed over it; None when links do not work
    here (the caller writes the bytes instead)."""
    _make_folder(path, made)
    tmp = _aside(path)
    tmp.unlink(missing_ok=True)  # one a killed run left
    try:
        os.link(copy, tmp)
    except OSError:
        return None
    return tmp


def _aside(path: Path) -> Path:
    """Where a file's new bytes wait, next to it, to be renamed over it."""
    return path.with_name(f".{path.name}.dream-tmp")


def _make_folder(path: Path, made: set[Path]) -> None:
    """`path`'s folder, created once per sync (`made` remembers the ones done)."""
    if path.parent not in made:
        path.parent.mkdir(parents=True, exist_ok=True)
        made.add(path.parent)


def _read_fd(fd: int) -> bytes:
    os.lseek(fd, 0, os.SEEK_SET)
    return read_fd(fd)


def _write_aside(path: Path, data: bytes, made: set[Path]) -> Path:
    """`data` in a temporary file next to `path`, ready to be renamed over it."""
    _make_folder(path, made)
    tmp = _aside(path)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)
    return tmp


def _replace_file(path: Path, data: bytes, made: set[Path]) -> None:
    """write_atomic's mechanism, for many files: each folder in `made` is not created again."""
    os.replace(_write_aside(path, data, made), path)


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


def clear_stale_index_lock(root: Path, max_age: float = 60.0) -> bool:
    """Remove `.git/index.lock` left by a killed git (older than max_age seconds); True when removed."""
    lock = Path(root) / ".git" / "index.lock"
    try:
        age = time.time() - lock.stat().st_mtime
    except FileNotFoundError:
        return False
    if age < max_age:
        return False
    lock.unlink(missing_ok=True)
    return True


def _read_many(repo: BrainRepo, rev: str, paths: list[str]) -> dict[str, str]:
    """`rev:path` for many paths through one `git cat-file --batch` (missing paths left out)."""
    found = _cat_batch(repo, [f"{rev}:{p}" for p in paths])
    return {rel: got[1].decode("utf-8", errors="replace") for rel, got in zip(paths, found) if got is not None}


def _cat_batch(repo: BrainRepo, names: list[str]) -> list[tuple[bytes, bytes] | None]:
    """(type, content) of each named object, None where it is missing: one `git cat-file --batch`.

    Staging refuses control characters in names (brain.layout), so each name is one request line.
    """
    proc = subprocess.run(["git", "cat-file", "--batch"], cwd=repo.root, input="".join(n + "\n" for n in names).encode("utf-8"),
                          capture_output=True)
    if proc.returncode != 0:
        err = proc.stderr.decode("utf-8", errors="replace").strip().splitlines()
        raise BrainError(f"git cat-file failed: {err[0] if err else f'exit {proc.returncode}'}", "run `git fsck`, then `dream run` again")
    out, pos, found = proc.stdout, 0, []
    for _ in names:
        nl = out.index(b"\n", pos)
        head = out[pos:nl].split(b" ")
        pos = nl + 1
        # "<id> <type> <size>", else "<name> missing" (a name may hold spaces: not split on them)
        if len(head) != 3 or len(head[0]) != 40 or not head[2].isdigit():
            found.append(None)
            continue
        size = int(head[2])
        found.append((head[1], out[pos : pos + size]))
        pos += size + 1
    return found


def _read_bytes(path: Path) -> bytes | None:
    """A regular file's bytes; None when there is none (missing, a folder, a symlink)."""
    try:
        return path.read_bytes() if not path.is_symlink() else None
    except (FileNotFoundError, IsADirectoryError):
        return None


def fault(name: str) -> None:
    """Fault injection for the crash tests: `DREAM_FAULT=<name>` kills the process right here."""
    if os.environ.get("DREAM_FAULT") == name:
        os.kill(os.getpid(), signal.SIGKILL)
