"""Invariant 2: a kill at any point leaves the repository at the old or the new commit, loses no
manual edit, tears no file, and the next run ends with the same tree as an uninterrupted run."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from crash_harness import EDITED, FAULT_POINTS, OWNER_LINE, git, prepare, problems_after_crash, run_dream, snapshot
from nadia_runs import PERSONA, isolated_env


@pytest.fixture(scope="module")
def prepared(tmp_path_factory: pytest.TempPathFactory):
    """The Brain before the run, and the snapshot an uninterrupted run ends with."""
    base = tmp_path_factory.mktemp("faults")
    with isolated_env("2026-07-15T02:00:00+00:00"):
        before = prepare(base / "before", PERSONA)
        reference = base / "reference"
        shutil.copytree(before, reference, symlinks=True)
        assert run_dream(reference) == 0
        old = git(before, "rev-parse", "HEAD").strip()
        new = git(reference, "rev-parse", "HEAD").strip()
        yield before, snapshot(reference), {old, new}


@pytest.mark.parametrize("point", FAULT_POINTS)
def test_a_kill_at_each_fault_point_is_recovered(prepared, point: str, tmp_path: Path) -> None:
    before, expected, heads = prepared
    root = tmp_path / "brain"
    shutil.copytree(before, root, symlinks=True)
    with isolated_env("2026-07-15T02:00:00+00:00"):
        assert run_dream(root, fault=point) == -9, "the fault point was not reached"
        assert problems_after_crash(root, heads) == []
        assert run_dream(root) == 0
        assert problems_after_crash(root, heads) == []
        assert snapshot(root) == expected
        assert not (root / ".dream/journal.json").exists()


def test_the_reference_run_kept_the_owners_edit(prepared) -> None:
    _before, expected, _heads = prepared
    assert OWNER_LINE.encode() in expected[f"worktree:{EDITED}"]
