"""A role corrected later moves to History with the date: "Aiko is not the coordinator, she is
the director" leaves the director current, and only for Aiko."""

from __future__ import annotations

import json
from pathlib import Path

from brain.scaffold import init_brain
from dream.backends import get_backend
from dream.importers import import_path
from dream.run import run
from dream.settings import RunFlags, load_settings


def _session(folder: Path, sid: str, day: str, text: str) -> None:
    lines = [{"type": "session", "id": sid, "started": f"{day}T10:00:00+00:00", "participants": ["Nadia", "assistant"]},
             {"type": "turn", "n": 1, "role": "user", "speaker": "Nadia", "time": f"{day}T10:00:00+00:00", "text": text}]
    (folder / f"{sid}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")


def test_a_corrected_role_goes_to_history_and_the_new_one_is_current(tmp_path: Path) -> None:
    root, inbox = tmp_path / "memory", tmp_path / "in"
    init_brain(root, owner="Nadia")
    inbox.mkdir()
    _session(inbox, "2026-03-01-kickoff", "2026-03-01",
             "Aiko Tanaka is the coordinator of the sprint. Kenji Mori is the coordinator of the workshop.")
    _session(inbox, "2026-03-08-fix", "2026-03-08", "Aiko Tanaka is not the coordinator, she is the director of the sprint.")
    import_path("jsonl", inbox, root)
    report = run(load_settings(root, RunFlags(backend="offline", now="2026-03-09T00:00:00Z")), get_backend("offline"))
    assert report.facts_superseded == 1
    body = (root / "knowledge/people/aiko-tanaka.md").read_text(encoding="utf-8")
    about, history = body.split("## About\n", 1)[1].split("## History\n", 1)
    assert "she is the director of the sprint" in about and "is the coordinator of the sprint" not in about
    assert "- Until 2026-03-08: Aiko Tanaka is the coordinator of the sprint." in history
    kenji = (root / "knowledge/people/kenji-mori.md").read_text(encoding="utf-8")
    assert "## History" not in kenji  # Kenji's own role is untouched
