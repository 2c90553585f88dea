"""Dream leaves git alone while the owner is in the middle of something, and works in a linked worktree."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from brain.errors import BrainError
from brain.scaffold import init_brain
from dream.backends import get_backend
from dream.run import run
from dream.settings import RunFlags, load_settings


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=Owner", "-c", "user.email=o@x", *args], cwd=root, check=True,
                          capture_output=True, text=True).stdout


def _brain(tmp_path: Path) -> Path:
    root = tmp_path / "brain"
    init_brain(root)
    lines = [{"type": "session", "id": "2026-01-02-chat", "started": "2026-01-02T10:00:00", "participants": ["Ana", "assistant"]},
             {"type": "turn", "n": 1, "role": "user", "speaker": "Ana", "text": "I work at Harbor Labs in Porto."}]
    (root / "sessions/raw/2026-01-02-chat.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    (root / "notes.txt").write_text("base\n", encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-q", "--allow-empty", "-m", "owner")
    return root


def _dream(root: Path):
    return run(load_settings(root, RunFlags(backend="offline", now="2026-01-03T02:00:00Z")), get_backend("offline"))


def _conflicted_merge(root: Path) -> None:
    git(root, "switch", "-q", "-c", "side")
    (root / "notes.txt").write_text("side\n", encoding="utf-8")
    git(root, "commit", "-q", "--allow-empty", "-am", "side")
    git(root, "switch", "-q", "main")
    (root / "notes.txt").write_text("main\n", encoding="utf-8")
    git(root, "commit", "-q", "--allow-empty", "-am", "main")
    subprocess.run(["git", "-c", "user.name=O", "-c", "user.email=o@x", "merge", "-q", "side"], cwd=root, capture_output=True)


def _pending_merge(root: Path) -> None:
    git(root, "switch", "-q", "-c", "side")
    (root / "other.txt").write_text("side\n", encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-q", "--allow-empty", "-m", "side")
    git(root, "switch", "-q", "main")
    git(root, "merge", "-q", "--no-commit", "--no-ff", "side")


def _detached(root: Path) -> None:
    git(root, "switch", "-q", "--detach", "HEAD")


@pytest.mark.parametrize(("make", "said"), [(_conflicted_merge, "a merge is in progress"), (_pending_merge, "a merge is in progress"),
                                            (_detached, "HEAD is detached")])
def test_a_run_changes_nothing_while_git_is_in_the_middle_of_something(tmp_path: Path, make, said: str):
    root = _brain(tmp_path)
    make(root)
    head, status = git(root, "rev-parse", "HEAD"), git(root, "status", "--porcelain")
    with pytest.raises(BrainError, match=said) as caught:
        _dream(root)
    assert "then run `dream run` again" in str(caught.value)
    assert git(root, "rev-parse", "HEAD") == head and git(root, "status", "--porcelain") == status


def test_a_run_works_in_a_linked_worktree(tmp_path: Path):
    root = _brain(tmp_path)
    other = tmp_path / "elsewhere"
    git(root, "worktree", "add", "-q", "-b", "night", str(other))
    shutil.copytree(root / "sessions/raw", other / "sessions/raw", dirs_exist_ok=True)  # git-ignored: not checked out
    report = _dream(other)
    assert report.status == "ok" and report.commit
    assert git(root, "rev-parse", "night").strip() == report.commit


def test_a_fresh_index_lock_stops_the_run_before_the_branch_moves_and_an_old_one_is_cleared(tmp_path: Path):
    import os
    import time

    root = _brain(tmp_path)
    head, status = git(root, "rev-parse", "HEAD"), git(root, "status", "--porcelain")
    lock = root / ".git" / "index.lock"
    lock.write_text("", encoding="utf-8")  # as a git killed a moment ago leaves it
    with pytest.raises(BrainError, match="git's index is locked") as caught:
        _dream(root)
    assert "delete" in str(caught.value) and "Dream changed nothing" in str(caught.value)
    assert git(root, "rev-parse", "HEAD") == head and git(root, "status", "--porcelain") == status
    old = time.time() - 120
    os.utime(lock, (old, old))  # a minute later no git holds it: it is a killed git's
    report = _dream(root)
    assert report.status == "ok" and report.commit and not lock.exists()
    assert git(root, "rev-parse", "HEAD").strip() == report.commit
    assert git(root, "status", "--porcelain") == status  # git's index follows the new commit
