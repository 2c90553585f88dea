"""The raw-session snapshot a run leaves (dream.phases.orient.RawSnapshot) lets the next run look
only at the raw files that are new, changed, pending or skipped. Whatever happens between runs,
the plan must be the one a look at every file gives."""

from __future__ import annotations

import json
import os
import random
import subprocess
from pathlib import Path

import pytest

from brain import layout
from brain.scan import GitKeys, WorktreeScan
from brain.tree import DirTree
from dream.compile import DocCache
from dream.phases.orient import RawSnapshot, next_snapshot, plan_sessions, raw_sessions
from dream.run import _raw_snapshot, _records, _records_key
from dream.state import SessionState, parse_state

RAW = layout.SESSIONS_RAW


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root, check=True, capture_output=True)


def _session(sid: str, turns: int) -> str:
    lines = [{"type": "session", "id": sid, "started": "2026-01-01T00:00:00+00:00"}]
    lines += [{"type": "turn", "n": n, "role": "user", "text": f"turn {n} of {sid}"} for n in range(1, turns + 1)]
    return "".join(json.dumps(line) + "\n" for line in lines)


def _orient(root: Path, snapshot: RawSnapshot | None, cache: DocCache, max_sessions: int | None):
    scan = WorktreeScan(root)
    keys = scan.keys()
    tree = DirTree(root, keys=keys, folders=scan.folders)
    records = _records(tree, keys)
    state, _ = parse_state(_text(root, layout.STATE), lambda rel: _text(root, rel))
    snapshot = _raw_snapshot(snapshot, _records_key(records))  # only for the session records it was taken under
    raw = raw_sessions(tree, keys.vouched_entries(f"{RAW}/") if isinstance(keys, GitKeys) else None,
                       keys.named if isinstance(keys, GitKeys) else frozenset(), snapshot,
                       lambda rels, every: cache.session_hashes(rels, tree, every))
    return raw, state, plan_sessions(raw.files, state, max_sessions), snapshot is not None, records


def _text(root: Path, rel: str) -> str | None:
    return (root / rel).read_text(encoding="utf-8") if (root / rel).is_file() else None


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")


@pytest.mark.parametrize("seed", range(16))
def test_a_plan_from_the_snapshot_is_the_plan_from_every_file(tmp_path: Path, seed: int):
    rnd = random.Random(seed)
    root = tmp_path / "brain"
    (root / RAW).mkdir(parents=True)
    (root / ".dream").mkdir()
    (root / layout.STATE).write_text("{}\n", encoding="utf-8")
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "init")
    cache = DocCache(tmp_path / "cards", version="v")
    snapshot, used, names = None, 0, [f"2026-01-{i:02d}-s{i}" for i in range(1, 30)]
    for step in range(40):
        present = sorted(p.name[:-6] for p in (root / RAW).glob("*.jsonl") if not p.is_symlink())
        op = rnd.choice(["add", "add", "add-untracked", "grow", "grow-uncommitted", "stage", "delete", "delete-uncommitted",
                         "revert", "bad-name", "link", "state-by-hand", "state-by-hand-uncommitted", "nothing"])
        if op.startswith("add") and len(present) < len(names):
            sid = rnd.choice([n for n in names if n not in present])
            (root / RAW / f"{sid}.jsonl").write_text(_session(sid, rnd.randint(1, 4)), encoding="utf-8")
            if op == "add":
                _git(root, "add", "-A", RAW)
                _git(root, "commit", "-q", "--allow-empty", "-m", "session")
        elif op.startswith("grow") and present:
            sid = rnd.choice(present)
            (root / RAW / f"{sid}.jsonl").write_text(_session(sid, rnd.randint(5, 9)), encoding="utf-8")
            if op == "grow":
                _git(root, "add", "--", f"{RAW}/{sid}.jsonl")
                _git(root, "commit", "-q", "--allow-empty", "-m", "grown")
        elif op == "stage" and present:
            sid = rnd.choice(present)
            (root / RAW / f"{sid}.jsonl").write_text(_session(sid, rnd.randint(1, 9)), encoding="utf-8")
            _git(root, "add", "-A", RAW)
        elif op.startswith("delete") and present:
            (root / RAW / f"{rnd.choice(present)}.jsonl").unlink()
            if op == "delete":
                _git(root, "add", "-A", RAW)
                _git(root, "commit", "-q", "--allow-empty", "-m", "gone")
        elif op == "revert":
            subprocess.run(["git", "checkout", "-q", "--", RAW], cwd=root, capture_output=True)  # nothing tracked yet: fails
        elif op == "bad-name":
            (root / RAW / rnd.choice(["con.jsonl", "notes.txt", "a..jsonl"])).write_text("{}\n", encoding="utf-8")
            if rnd.random() < 0.5:
                _git(root, "add", "-A", RAW)
                _git(root, "commit", "-q", "--allow-empty", "-m", "odd")
        elif op == "link" and present:
            link = root / RAW / f"linked-{step}.jsonl"
            os.symlink(f"{rnd.choice(present)}.jsonl", link)
            if rnd.random() < 0.5:
                _git(root, "add", "-A", RAW)
                _git(root, "commit", "-q", "--allow-empty", "-m", "link")
        elif op.startswith("state-by-hand"):
            # The owner drops a session's record (to have it processed again), or changes one,
            # committed or not; a shard new to git is untracked until a run commits it.
            state, _ = parse_state(_text(root, layout.STATE), lambda rel: _text(root, rel))
            if state.sessions:
                sid = rnd.choice(sorted(state.sessions))
                if rnd.random() < 0.5:
                    state.sessions.pop(sid)
                else:
                    state.sessions[sid] = SessionState(hash="0" * 64, turns=1, run="by-hand")
            _write(root, state.render())
            if op == "state-by-hand":
                _git(root, "commit", "-q", "--allow-empty", "-am", "owner edits the state")
        max_sessions = rnd.choice([None, 1, 2])
        fast_raw, state, fast, was_used, records = _orient(root, snapshot, cache, max_sessions)
        _, _, slow, _, _ = _orient(root, None, cache, max_sessions)
        assert fast == slow, (step, op)
        assert sorted(fast_raw.problems) == sorted(_orient(root, None, cache, max_sessions)[0].problems), (step, op)
        used += was_used
        # A run: some pending sessions are processed (others fail or wait), the state is committed.
        if rnd.random() < 0.15:
            continue  # a failed or dry run: no commit, the old snapshot stays
        for p in fast.pending:
            if rnd.random() < 0.8:
                state.sessions[p.id] = SessionState(hash=p.hash, turns=p.seen_turns + 1, run=f"r{step}")
        files = state.render(last_run=f"r{step}")
        _write(root, files)
        _git(root, "add", *files)
        _git(root, "commit", "-q", "--allow-empty", "-m", "dream")
        key = _records_key(records, files)  # as dream.run keeps it: None when git could not vouch for a record
        snapshot = RawSnapshot.load(next_snapshot(fast_raw, state, key).dump("v"), "v") if key is not None else None
    assert used > 10  # the snapshot was taken most of the time


def test_a_damaged_or_foreign_snapshot_is_not_taken():
    snap = RawSnapshot("a" * 40, frozenset({b"H 100644 " + b"b" * 40 + b" 0\tsessions/raw/x.jsonl"}), {"sessions/raw/y.jsonl": ("y", "h")}, frozenset({"sessions/raw/con.jsonl"}))
    raw = snap.dump("v")
    assert RawSnapshot.load(raw, "v") == snap
    assert RawSnapshot.load(raw, "other") is None
    assert RawSnapshot.load(raw[:-1], "v") is None
    assert RawSnapshot.load(raw.replace(b"bbbb", b"cccc", 1), "v") is None
    assert RawSnapshot.load(b"not json\n", "v") is None
    assert RawSnapshot.load(None, "v") is None
