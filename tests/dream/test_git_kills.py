"""A run killed at a git call, then run again at once, never leaves a half-commit: HEAD is the old
commit or the new one, git's index describes HEAD for Dream's files, and the tree converges."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from crash_harness import dream_cmd, git, prepare, problems_after_crash, snapshot
from git_shim import calls_made, install, run_killed_at
from nadia_runs import PERSONA, isolated_env


def half_commit(root: Path) -> list[str]:
    """Dream's files staged in git's index against HEAD: what `git commit -a` would revert."""
    staged = subprocess.run(["git", "diff", "--cached", "--name-only"], cwd=root, capture_output=True, text=True, check=True).stdout
    return [p for p in staged.split() if p.startswith(("knowledge/", "notes/", "sessions/summaries/", "sessions/index.md", ".dream/"))]


def kill_and_rerun(before: Path, work: Path, call: int, shim, heads: set[str]) -> tuple[list[str], bool]:
    """(problems, refused): the run right after the kill may refuse because the killed git left
    git's index locked; the owner then does what it says (deletes the lock) and runs again."""
    shutil.copytree(before, work, symlinks=True)
    run_killed_at(dream_cmd(work), call, shim)
    problems = problems_after_crash(work, heads)
    head = git(work, "rev-parse", "HEAD")
    again = subprocess.run(dream_cmd(work), capture_output=True, text=True, timeout=300)
    lock = work / ".git" / "index.lock"
    refused = again.returncode != 0 and "git's index is locked" in again.stderr and f"delete {lock}" in again.stderr
    if refused:
        if git(work, "rev-parse", "HEAD") != head:
            problems.append("the run that refused moved the branch")
        lock.unlink()
        again = subprocess.run(dream_cmd(work), capture_output=True, text=True, timeout=300)
    if again.returncode != 0:
        problems.append(f"the run after the kill failed: {again.stderr.strip()}")
    problems += [f"half-commit: {p} staged against HEAD" for p in half_commit(work)]
    return problems, refused


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory):
    tmp = tmp_path_factory.mktemp("git-kills")
    with isolated_env("2026-07-15T02:00:00+00:00"):
        before = prepare(tmp / "before", PERSONA)
        shim = install(tmp / "shim")
        reference = tmp / "reference"
        shutil.copytree(before, reference, symlinks=True)
        run_killed_at(dream_cmd(reference), 10_000, shim)  # counts the git calls of an uninterrupted run
        total = calls_made(shim[1])
        heads = {git(before, "rev-parse", "HEAD").strip(), git(reference, "rev-parse", "HEAD").strip()}
        yield before, shim, total, heads, snapshot(reference)


def test_a_kill_at_every_git_call_of_a_run_then_an_immediate_run_leaves_no_half_commit(setup, tmp_path: Path):
    before, shim, total, heads, expected = setup
    assert total >= 5
    with isolated_env("2026-07-15T02:00:00+00:00"):
        failures, refusals = {}, []
        for call in range(1, total + 1):
            work = tmp_path / f"k{call}"
            problems, refused = kill_and_rerun(before, work, call, shim, heads)
            refusals += [call] * refused
            if snapshot(work) != expected:
                problems.append("the tree differs from an uninterrupted run")
            if problems:
                failures[call] = problems
            shutil.rmtree(work)
    assert failures == {}, f"of {total} git calls: {failures}"
    assert len(refusals) <= 2, refusals  # only where a killed git held the index: the owner is told what to do
