"""Old runs give back their scratch (staged tree, private git index, blob lists); what says what
happened stays, and the newest runs stay whole for inspection."""

from __future__ import annotations

import json
from pathlib import Path

from dream.runs import KEEP_SCRATCH, prune_runs

SCRATCH = ("staged/knowledge/people/x.md", "blobs/0001", "index", "blob-list", "index-info")
KEPT = ("report.json", "message", "calls.jsonl", "record/record.json")


def make_run(root: Path, run_id: str) -> Path:
    run = root / ".dream" / "runs" / run_id
    for rel in (*SCRATCH, *KEPT):
        (run / rel).parent.mkdir(parents=True, exist_ok=True)
        (run / rel).write_text("x", encoding="utf-8")
    return run


def files(run: Path) -> set[str]:
    return {p.relative_to(run).as_posix() for p in run.rglob("*") if p.is_file()}


def test_runs_older_than_the_newest_keep_only_their_report_message_calls_and_record(tmp_path: Path) -> None:
    ids = [f"2026071{d}T020000Z-abc{d}" for d in range(8)]
    runs = [make_run(tmp_path, i) for i in ids]
    (tmp_path / ".dream" / "journal.json").write_text(json.dumps({"run_id": ids[1]}), encoding="utf-8")
    pruned = prune_runs(tmp_path, current=ids[0])  # the current run is kept whatever its name
    assert pruned == [ids[2]] and KEEP_SCRATCH == 5
    assert files(runs[2]) == set(KEPT)
    for run in [runs[0], runs[1], *runs[3:]]:
        assert files(run) == set(SCRATCH) | set(KEPT)
    assert prune_runs(tmp_path, current=ids[0]) == []  # nothing left to prune


def test_a_dream_run_prunes_old_runs_and_keeps_its_own(tmp_path: Path) -> None:
    from brain.scaffold import init_brain
    from dream.backends.offline import OfflineBackend
    from dream.run import run
    from dream.settings import RunFlags, load_settings

    root = tmp_path / "brain"
    init_brain(root)
    session = [
        {"type": "session", "id": "2025-12-31-chat", "started": "2025-12-31T10:00:00", "participants": ["Ana", "Ben"]},
        {"type": "turn", "n": 1, "role": "user", "speaker": "Ana", "text": "I work at Harbor Labs in Porto these days."},
    ]
    (root / "sessions/raw/2025-12-31-chat.jsonl").write_text("".join(json.dumps(t) + "\n" for t in session), encoding="utf-8")
    old = [make_run(root, f"2020010{d}T000000Z-old{d}") for d in range(KEEP_SCRATCH)]
    report = run(load_settings(root, RunFlags(backend="offline", now="2026-01-01T00:00:00Z")), OfflineBackend())
    assert report.status == "ok" and (root / ".dream" / "runs" / report.run_id / "report.json").is_file()
    assert files(old[0]) == set(KEPT)  # the oldest fell out of the newest five
    assert all(files(r) == set(SCRATCH) | set(KEPT) for r in old[1:])
