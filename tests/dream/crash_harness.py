"""Run Dream in a subprocess, kill it at a named fault point or a random moment, and check the Brain.

Shared by tests/dream/test_faults.py (every named point once) and bench/fault_kills.py (random kills).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from brain.errors import PageError
from brain.page import parse_page

FAULT_POINTS = (
    "after-staging",
    "after-gate",
    "after-plan",
    "after-blobs",
    "after-tree",
    "after-commit-object",
    "after-journal",
    "after-update-ref",
    "mid-worktree",
    "after-worktree",
    "after-index",
)
NOW = "2026-07-15T02:00:00Z"
OWNER_LINE = "Owner's note, not yet committed: ask Kenji about the Kyoto photos."
EDITED = "knowledge/people/nadia-rahman.md"


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout


def dream_cmd(root: Path) -> list[str]:
    return [sys.executable, "-m", "dream.cli", "run", "--brain", str(root), "--now", NOW]


def run_dream(root: Path, fault: str | None = None) -> int:
    env = {**os.environ, "DREAM_FAULT": fault} if fault else {k: v for k, v in os.environ.items() if k != "DREAM_FAULT"}
    return subprocess.run(dream_cmd(root), env=env, capture_output=True, timeout=300).returncode


def run_and_kill_after(root: Path, seconds: float) -> int:
    """Start a run and SIGKILL it after `seconds` (it may finish first)."""
    proc = subprocess.Popen(dream_cmd(root), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        proc.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    return proc.returncode


def prepare(dest: Path, persona: Path, held_back: int = 3) -> Path:
    """A compiled Brain with `held_back` sessions still to compile and an uncommitted owner edit."""
    from dream.backends import get_backend
    from dream.demo import copy_inputs
    from dream.run import run
    from dream.settings import RunFlags, load_settings

    copy_inputs(persona, dest)
    later = sorted((dest / "sessions/raw").glob("*.jsonl"))[-held_back:]
    aside = dest.parent / f"{dest.name}-later"
    aside.mkdir()
    for f in later:
        shutil.move(str(f), aside / f.name)
    git(dest, "add", "-A")
    git(dest, "commit", "-q", "--allow-empty", "-m", "inputs")
    run(load_settings(dest, RunFlags(backend="offline", now="2026-06-01T02:00:00Z")), get_backend("offline"))
    for f in sorted(aside.iterdir()):
        shutil.move(str(f), dest / "sessions/raw" / f.name)
    aside.rmdir()
    git(dest, "add", "-A")
    git(dest, "commit", "-q", "--allow-empty", "-m", "three more sessions")
    page = dest / EDITED
    page.write_text(page.read_text(encoding="utf-8") + f"\n{OWNER_LINE}\n", encoding="utf-8")
    return dest


def snapshot(root: Path) -> dict[str, bytes]:
    """Every tracked file at HEAD plus the working-tree bytes of the edited page."""
    out = {}
    for rel in git(root, "ls-files").splitlines():
        out[f"HEAD:{rel}"] = subprocess.run(["git", "show", f"HEAD:{rel}"], cwd=root, capture_output=True, check=True).stdout
    out[f"worktree:{EDITED}"] = (root / EDITED).read_bytes()
    return out


def problems_after_crash(root: Path, heads: set[str]) -> list[str]:
    """What is wrong with a Brain right after a kill (empty when it is sound)."""
    problems = []
    fsck = subprocess.run(["git", "fsck", "--no-dangling", "--no-progress"], cwd=root, capture_output=True, text=True)
    if fsck.returncode != 0:
        problems.append(f"git fsck failed: {fsck.stdout}{fsck.stderr}")
    head = git(root, "rev-parse", "HEAD").strip()
    if heads and head not in heads:
        problems.append(f"HEAD {head} is neither the old nor the new commit")
    for folder in ("knowledge", "notes", "sessions/summaries"):
        for path in sorted((root / folder).rglob("*.md")):
            rel = path.relative_to(root).as_posix()
            if rel in ("knowledge/index.md", "knowledge/log.md"):
                continue
            try:
                parse_page(path.read_text(encoding="utf-8"), rel)
            except (PageError, UnicodeDecodeError) as exc:
                problems.append(f"torn file {rel}: {exc}")
    if OWNER_LINE not in (root / EDITED).read_text(encoding="utf-8"):
        problems.append("the owner's uncommitted edit was lost")
    return problems


def wait_for(predicate, timeout: float = 10.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.01)
    return False
