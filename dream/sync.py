"""Sync: the staged tree becomes one git commit, merged with whatever the owner changed meanwhile.

`plan_sync` is pure: for each staged file it compares the live text now with the live text the
file was computed from; an owner's edit in between is merged (3-way), and on conflict the owner's
text stays and Dream's change is deferred. `apply_sync` builds the commit off to the side (in a
git index of the run's own), writes a journal, moves the branch with a compare-and-swap, and then
brings the working tree to the commit (dream.journal), which the next run finishes after a crash.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import ConfigDict, Field

from brain import layout
from brain.errors import BrainError
from brain.model import Model, empty_list
from brain.repo import BrainRepo, blob_id
from dream.journal import Journal, before_ids, fault, finish_worktree, read_at, require_free_index, write_atomic
from dream.merge import merge3

DREAM_IDENTITY = {"GIT_AUTHOR_NAME": "Dream", "GIT_AUTHOR_EMAIL": "dream@localhost"}
ZERO = "0" * 40


class SyncPlan(Model):
    model_config = ConfigDict(extra="forbid", frozen=True)
    writes: dict[str, str] = Field(default_factory=dict)  # path → final text
    deletes: list[str] = Field(default_factory=empty_list)  # paths removed (state files of an older layout)
    added: list[str] = Field(default_factory=empty_list)
    modified: list[str] = Field(default_factory=empty_list)
    conflicts: list[str] = Field(default_factory=empty_list)
    merged: list[str] = Field(default_factory=empty_list)  # written as a merge with the owner's edit, not as staged
    # path → the live text its write was merged against (read when the plan was made). A file that
    # holds anything else when the working tree is updated was edited since, and is left alone.
    based_on: dict[str, str | None] = Field(default_factory=dict)


def plan_sync(staged: dict[str, str], derived_from: dict[str, str | None], live_now: dict[str, str | None],
              removed: frozenset[str] = frozenset(), vanished: frozenset[str] = frozenset()) -> SyncPlan:
    """What to write: each staged file merged with what the owner did to it during the run
    (`vanished`: files the owner deleted before the run staged them)."""
    writes, added, modified, conflicts, merged = {}, [], [], [], []
    for path, text in sorted(staged.items()):
        before, now = derived_from.get(path), live_now.get(path)
        if (now != before or path in vanished) and not layout.is_state_path(path):
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
    deletes = sorted(p for p in removed if live_now.get(p) is not None and p not in writes)
    return SyncPlan(writes=writes, deletes=deletes, added=added, modified=modified, conflicts=conflicts, merged=merged,
                    based_on={**based_on, **{p: live_now[p] for p in deletes}})


def read_live(root: Path, paths: list[str]) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for rel in paths:
        p = Path(root) / rel
        out[rel] = p.read_bytes().decode("utf-8", errors="replace") if p.is_file() and not p.is_symlink() else None
    return out


class SyncResult(Model):
    model_config = ConfigDict(extra="forbid", frozen=True)
    commit: str | None
    conflicts: list[str] = Field(default_factory=empty_list)  # found while rebasing on the owner's commits
    rebased: int = 0


def apply_sync(root: Path, plan: SyncPlan, message: str, run_id: str, base: str | None, run_dir: Path) -> SyncResult:
    """Commit the plan off to the side, move the branch with a compare-and-swap, then update the tree.

    If the owner committed while the run worked, the branch moved: the plan is merged onto their
    commit (3-way per file, their text wins on conflict) and the swap is tried again."""
    if not plan.writes and not plan.deletes:
        return SyncResult(commit=None)
    repo = BrainRepo(root)
    ref = repo.git("symbolic-ref", "-q", "HEAD").strip() or "HEAD"
    writes, deletes, conflicts = dict(plan.writes), list(plan.deletes), []
    # The texts each write accounts for: the live text the plan merged, and what the owner committed
    # meanwhile (a rebase merges it). An edit saved after those is the owner's alone (before_ids).
    accounted = {rel: {plan.based_on[rel]} for rel in [*writes, *deletes] if rel in plan.based_on}
    for rebased in range(5):
        new = build_commit(repo, writes, deletes, message, base, run_dir)
        fault("after-commit-object")
        require_free_index(root)  # the branch moves only when git's index can follow it
        journal = Journal(run_id=run_id, ref=ref, old=base, new=new, before=before_ids(root, [*writes, *deletes], accounted, plan.based_on))
        write_atomic(Path(root) / layout.JOURNAL, journal.model_dump_json(indent=1) + "\n")
        fault("after-journal")
        try:
            repo.git("update-ref", "-m", f"dream: run {run_id}", ref, new, base or ZERO)
        except BrainError:
            (Path(root) / layout.JOURNAL).unlink(missing_ok=True)
            current = repo.head()
            writes, deletes, lost, theirs = _rebase(repo, writes, deletes, base, current)
            for rel, text in theirs.items():
                if rel in accounted:  # a plan without based_on (built by hand) keeps reading the file
                    accounted[rel].add(text)
            conflicts += lost
            base = current
            if not writes and not deletes:
                return SyncResult(commit=None, conflicts=conflicts, rebased=rebased + 1)
            continue
        fault("after-update-ref")
        finish_worktree(root, journal, targets=writes)
        return SyncResult(commit=new, conflicts=conflicts, rebased=rebased)
    raise BrainError("the branch kept moving while Dream tried to commit", "run `dream run` again")


def build_commit(repo: BrainRepo, writes: dict[str, str], deletes: list[str], message: str, base: str | None, run_dir: Path) -> str:
    """Blobs, trees and a commit object, made off to the side: nothing visible changes yet. The
    blobs go into one pack (`git fast-import`: loose objects would cost a file each, and a first
    compile writes tens of thousands); the trees are made in a git index of the run's own
    (`<run>/index`), so that the owner's index, and what they staged in it, is not touched."""
    run_dir.mkdir(parents=True, exist_ok=True)
    blobs = {rel: blob_id(text.encode("utf-8")) for rel, text in writes.items()}
    stream = b"".join(b"blob\ndata %d\n%s\n" % (len(data), data) for data in (writes[rel].encode("utf-8") for rel in sorted(writes)))
    # A pack of fewer than 100 objects would be exploded into loose files (fastimport.unpackLimit): kept
    # whole, compressed as `git add` compresses loose objects (level 1: state.json is megabytes).
    repo.git("-c", "fastimport.unpackLimit=0", "-c", "core.compression=1", "fast-import", "--quiet", stdin=stream)
    fault("after-blobs")
    env = {"GIT_INDEX_FILE": str(run_dir / "index")}
    for leftover in ("index", "index.lock"):  # a killed attempt of this run's own (the same run id) left them
        (run_dir / leftover).unlink(missing_ok=True)
    repo.git("read-tree", base or "--empty", env=env)
    entries = [f"100644 {blobs[rel]}\t{rel}\0" for rel in sorted(writes)] + [f"0 {ZERO}\t{rel}\0" for rel in deletes]
    repo.git("update-index", "-z", "--index-info", env=env, stdin="".join(entries).encode("utf-8"))
    tree = repo.git("write-tree", env=env).strip()
    fault("after-tree")
    (run_dir / "message").write_text(message, encoding="utf-8")
    parents = ["-p", base] if base else []
    return repo.git("commit-tree", tree, *parents, "-F", str(run_dir / "message"), env=DREAM_IDENTITY).strip()


def _rebase(repo: BrainRepo, writes: dict[str, str], deletes: list[str], base: str | None,
            head: str | None) -> tuple[dict[str, str], list[str], list[str], dict[str, str]]:
    """Dream's changes re-applied on the owner's newer commit: their changes win where they overlap.
    Also returns the owner's committed text of each file the result merged."""
    out, lost, theirs = {}, [], {}
    paths = sorted([*writes, *deletes])
    before = read_at(repo, base, paths) if base else {}
    after = read_at(repo, head, paths) if head else {}
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
    kept = [rel for rel in deletes if after.get(rel) is not None and after.get(rel) == before.get(rel)]
    return out, kept, lost, theirs
