"""Regression fixture: a recorded anthropic run over three Nadia sessions, committed, replayed on every run.

fixtures/backends/anthropic-nadia/ holds the records of `dream run --backend anthropic --record` (made
against the loopback stub by fixtures/backends/make_anthropic_fixture.py) and the tree that run
committed. Here the same base Brain is rebuilt, the records are put in its `.dream/runs/<id>/`, and
`dream replay` runs with networking disabled: any change to prompts, parsing or the pipeline that
alters the compiled Brain makes the replayed tree differ (or a prompt miss its recorded answer).
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import socket
from pathlib import Path

import pytest
from nadia_runs import git, isolated_env

from dream.replay import replay

REPO = Path(__file__).resolve().parents[2]
FIXTURE = REPO / "fixtures" / "backends" / "anthropic-nadia"
REGENERATE = "if the change is intended, regenerate with `.venv/bin/python fixtures/backends/make_anthropic_fixture.py` and review the diff of fixtures/backends/anthropic-nadia/expected/"


def _maker():
    spec = importlib.util.spec_from_file_location("make_anthropic_fixture", FIXTURE.parent / "make_anthropic_fixture.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_committed_anthropic_recording_replays_to_the_recorded_tree(tmp_path: Path, monkeypatch) -> None:
    maker = _maker()
    expected = json.loads((FIXTURE / "expected.json").read_text(encoding="utf-8"))
    meta = json.loads((FIXTURE / "record" / "record.json").read_text(encoding="utf-8"))
    assert (meta["run_id"], meta["base"], meta["backend"]) == (expected["run_id"], expected["base"], "anthropic")
    assert tuple(expected["sessions"]) == maker.SESSIONS

    with isolated_env(expected["git_date"]):
        root = maker.build_base(tmp_path / "brain")
    base = git(root, "rev-parse", "HEAD").strip()
    assert base == expected["base"], (
        f"the rebuilt base Brain is commit {base[:12]}, the fixture was recorded on {expected['base'][:12]}: "
        f"Nadia's inputs, `brain init` or the way the base is built changed; {REGENERATE}"
    )
    shutil.copytree(FIXTURE / "record", root / ".dream" / "runs" / expected["run_id"] / "record")

    def no_network(self, address):
        if self.family == socket.AF_UNIX:
            return None
        raise ConnectionRefusedError(f"no network in this test: {address!r}")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    scratch = tmp_path / "replay"
    result = replay(root, expected["run_id"], into=scratch)

    assert result.misses == 0, f"{result.misses} request(s) with no recorded answer: a prompt or the inputs changed; {REGENERATE}"
    assert result.replayed_commit, "the replay committed nothing"
    if result.replayed_tree != expected["tree"]:
        got = _maker().tree_files(scratch, result.replayed_commit)
        want = expected["files"]
        differs = sorted(p for p in want.keys() | got.keys() if want.get(p) != got.get(p))
        pytest.fail(f"the replayed Brain differs from the recorded one in {len(differs)} file(s): {differs[:20]}; {REGENERATE}")
    # The tree holds what expected/ shows, byte for byte.
    for rel in expected["changed"]:
        assert (scratch / rel).read_bytes() == (FIXTURE / "expected" / rel).read_bytes(), rel
    assert git(scratch, "status", "--porcelain") == ""
