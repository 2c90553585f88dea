"""Raw sessions stay out of git: `brain init` ignores them, and the first run on an older Brain does too, once."""

from __future__ import annotations

import subprocess
from pathlib import Path

from nadia_runs import LAST_SESSION, PERSONA, RAW, dream, git, nadia_inputs


def _ignored(root: Path, rel: str) -> bool:
    return subprocess.run(["git", "check-ignore", "-q", "--no-index", rel], cwd=root).returncode == 0


def test_an_owners_git_add_all_commits_no_raw_session(tmp_path: Path) -> None:
    root = nadia_inputs(tmp_path / "brain")
    assert "sessions/raw/" in (root / ".gitignore").read_text(encoding="utf-8").splitlines()
    assert dream(root, "2026-07-15T02:00:00Z").status == "ok"
    git(root, "add", "-A")
    git(root, "commit", "-q", "--allow-empty", "-m", "everything")
    assert not [p for p in git(root, "ls-files").splitlines() if p.startswith(RAW)]
    assert git(root, "status", "--porcelain") == ""
    assert list((root / RAW).glob("*.jsonl")), "the transcripts stay on disk"


def test_the_first_run_on_an_older_brain_ignores_raw_sessions_and_an_owner_who_takes_it_out_keeps_it_out(tmp_path: Path) -> None:
    root = nadia_inputs(tmp_path / "brain", leave_out=(LAST_SESSION,))
    older = "# mine\n*.tmp\n.dream/runs/\n.dream/cache/\n.dream/lock\n.dream/journal.json\n"
    (root / ".gitignore").write_text(older, encoding="utf-8")
    git(root, "commit", "-q", "-am", "an older Brain")

    first = dream(root, "2026-07-15T02:00:00Z")
    assert first.status == "ok"
    assert (root / ".gitignore").read_text(encoding="utf-8") == older + "sessions/raw/\n"
    assert git(root, "show", "HEAD:.gitignore") == older + "sessions/raw/\n"
    assert _ignored(root, f"{RAW}/new.jsonl")

    (root / ".gitignore").write_text(older, encoding="utf-8")
    git(root, "commit", "-q", "-am", "I back my transcripts up in git")
    (root / RAW / f"{LAST_SESSION}.jsonl").write_bytes((PERSONA / RAW / f"{LAST_SESSION}.jsonl").read_bytes())
    second = dream(root, "2026-07-16T02:00:00Z")
    assert second.status == "ok"
    assert (root / ".gitignore").read_text(encoding="utf-8") == older
