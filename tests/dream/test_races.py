"""The owner keeps working while Dream runs: edits and commits made mid-run are never lost."""

from __future__ import annotations

import random
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from crash_harness import EDITED, OWNER_LINE, dream_cmd, git, prepare, problems_after_crash
from nadia_runs import PERSONA, isolated_env

RACES = 8  # bench/races.py runs hundreds


def owner_commit(root: Path, rel: str, line: str) -> bool:
    """Append a line and commit it, retrying while Dream's git holds a lock (index or branch ref).

    A person committing by hand would see the same "Unable to create '….lock'" (or "cannot lock
    ref 'HEAD': is at X but expected Y", when Dream's update-ref moved the branch between git's
    read and its write) and try again. False when git says there is nothing to commit: Dream's
    commit, made while the owner waited for its lock, already holds the edit (a page Dream updates
    is merged with the owner's unsaved text); the caller checks that it does.
    """
    with open(root / rel, "a", encoding="utf-8") as fh:
        fh.write(f"\n{line}\n")
    deadline = time.monotonic() + 60  # a slow disk can hold a lock for seconds; a person waits too
    while True:
        done = subprocess.run(["git", "commit", "-q", "--allow-empty", "-m", "owner edit", "--", rel], cwd=root, capture_output=True, text=True)
        if done.returncode == 0:
            return True
        if "nothing to commit" in done.stdout or "nothing added to commit" in done.stdout:
            return False
        if ".lock" not in done.stderr and "cannot lock ref" not in done.stderr:
            raise AssertionError(f"git commit failed: {done.stderr.strip() or done.stdout.strip()}")
        if time.monotonic() > deadline:
            raise AssertionError(f"could not commit: git locks held for a minute ({done.stderr.strip()})")
        time.sleep(0.01)


def race(before: Path, work: Path, seed: int) -> list[str]:
    """One race: start Dream, edit and commit pages at a random moment, then check nothing was lost."""
    rnd = random.Random(seed)
    shutil.copytree(before, work, symlinks=True)
    proc = subprocess.Popen(dream_cmd(work), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    time.sleep(rnd.uniform(0.0, 1.2))
    committed = f"Owner line committed mid-run ({seed})."
    target = rnd.choice([EDITED, "knowledge/organizations/sora-city-laboratory.md", "knowledge/projects/japan-universal-design-sprint.md"])
    by_owner = owner_commit(work, target, committed)
    _, err = proc.communicate(timeout=300)
    problems = [] if proc.returncode == 0 else [f"dream run failed: {err.strip()}"]
    problems += problems_after_crash(work, set())
    if committed not in (work / target).read_text(encoding="utf-8"):
        problems.append(f"the committed owner line vanished from {target}")
    if by_owner and committed not in git(work, "log", "-p", "-1", "--format=", "--grep=owner edit", "--", target):
        problems.append("the owner's commit is not in history")
    if not by_owner and committed not in git(work, "show", f"HEAD:{target}"):
        problems.append("git had nothing to commit, yet the owner's line is not in HEAD")
    return problems


DELETABLE = ("knowledge/organizations/sora-city-laboratory.md", "knowledge/projects/japan-universal-design-sprint.md",
             "knowledge/places/kyoto.md", "knowledge/people/kenji-mori.md")


def deletion_race(before: Path, work: Path, seed: int) -> list[str]:
    """One race: start Dream, delete a page at a random moment; the page must stay deleted through
    that run and the next (which records it in forget.md once it compiles anything)."""
    rnd = random.Random(seed)
    shutil.copytree(before, work, symlinks=True)
    proc = subprocess.Popen(dream_cmd(work), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    time.sleep(rnd.uniform(0.0, 1.2))
    target = rnd.choice(DELETABLE)
    (work / target).unlink()
    _, err = proc.communicate(timeout=300)
    problems = [] if proc.returncode == 0 else [f"dream run failed: {err.strip()}"]
    if (work / target).exists():
        problems.append(f"{target}, deleted by the owner mid-run, was brought back")
    again = subprocess.run(dream_cmd(work), capture_output=True, text=True, timeout=300)
    if again.returncode not in (0, 3):
        problems.append(f"the next run failed: {again.stderr.strip()}")
    if (work / target).exists():
        problems.append(f"{target} was brought back by the next run")
    if target in git(work, "diff", "--name-only", "HEAD~1", "HEAD") and (work / target).exists():
        problems.append(f"{target} is in Dream's commit and back in the working tree")
    return problems


@pytest.fixture(scope="module")
def before(tmp_path_factory: pytest.TempPathFactory) -> Path:
    with isolated_env("2026-07-15T02:00:00+00:00"):
        return prepare(tmp_path_factory.mktemp("races") / "before", PERSONA)


@pytest.mark.parametrize("seed", range(RACES))
def test_owner_commits_during_a_run_are_kept(before: Path, seed: int, tmp_path: Path) -> None:
    with isolated_env("2026-07-15T02:00:00+00:00"):
        assert race(before, tmp_path / "brain", seed) == []
    assert OWNER_LINE  # the uncommitted edit prepared in `before` is checked by problems_after_crash


@pytest.mark.parametrize("seed", range(4))
def test_a_page_the_owner_deletes_during_a_run_stays_deleted(before: Path, seed: int, tmp_path: Path) -> None:
    with isolated_env("2026-07-15T02:00:00+00:00"):
        assert deletion_race(before, tmp_path / "brain", seed) == []
