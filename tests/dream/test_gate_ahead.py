"""The gate judges a pure backend's claims in a forked process: the result must be exactly what
judging in the run's own process gives (verdicts, removed claims, rejected files, staged text)."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import ClassVar

from brain.page import Frontmatter, render_new
from brain.tree import DirTree
from dream.backends.offline import OfflineBackend
from dream.gate import AHEAD_MIN_FILES, run_gate
from dream.notes import Note, render_note
from dream.settings import VerifierPolicy
from dream.staging import StagedTree

SESSION = [
    {"type": "session", "id": "s1", "started": "2026-05-03T10:02:00+09:00", "participants": ["Ada", "assistant"]},
    {"type": "turn", "n": 1, "role": "user", "speaker": "Ada", "text": "I moved to Kyoto last spring and I work at Sora Lab now."},
    {"type": "turn", "n": 2, "role": "assistant", "speaker": "assistant", "text": "Kyoto is lovely in spring."},
]
STATEMENTS = {
    "moved": ("Ada moved to Kyoto last spring.", ["session:s1#t1"]),
    "works": ("Ada works at Sora Lab.", ["session:s1#t1"]),
    "violin": ("Ada plays the violin with the Berlin orchestra.", ["session:s1#t1"]),  # not in the turn: removed
    "gone": ("Ada cites a turn that does not exist.", ["session:s1#t9"]),  # C-check error: rejected
}


class SerialOffline(OfflineBackend):
    pure: ClassVar[bool] = False  # the same verdicts, judged in the run's own process


def _gate(root: Path, backend, policy: VerifierPolicy):
    staged = StagedTree(root / f"staged-{type(backend).__name__}", DirTree(root))
    for i in range(AHEAD_MIN_FILES // len(STATEMENTS) + 1):  # enough files for the gate to fork
        for slug, (statement, sources) in STATEMENTS.items():
            note = Note(path=f"notes/ada/{slug}-{i}.md", statement=statement, kind="identity", topic="ada", confidence=0.8,
                        observed=dt.date(2026, 5, 3), sources=sources)
            staged.write(note.path, render_note(note))
    page = Frontmatter(title="Ada", type="person", summary="A person.", created=dt.date(2026, 5, 3), updated=dt.date(2026, 5, 3),
                       sources={1: "session:s1#t1"})
    staged.write("knowledge/people/ada.md", render_new(page, "# Ada\n\n## About\n- 2026-05-03: Ada moved to Kyoto. [cite:1]\n- 2026-05-03: Ada collects rare stamps from Peru. [cite:1]\n"))
    result = run_gate(staged, backend, lambda: None, policy)
    summary = {
        "findings": [f.lint_line() for f in result.findings],
        "verdicts": [v.model_dump() for v in result.verdicts],
        "rejected": result.rejected,
        "removed": [v.model_dump() for v in result.removed],
        "flagged": [v.model_dump() for v in result.flagged],
        "unverified": result.unverified,
    }
    return summary, staged.written


def test_verdicts_judged_ahead_equal_verdicts_judged_in_process(tmp_path: Path) -> None:
    root = tmp_path / "brain"
    (root / "sessions/raw").mkdir(parents=True)
    (root / "sessions/raw/s1.jsonl").write_text("".join(json.dumps(line) + "\n" for line in SESSION), encoding="utf-8")
    for policy in (VerifierPolicy(), VerifierPolicy(unsupported="reject"), VerifierPolicy(unsupported="keep")):
        ahead, ahead_files = _gate(root, OfflineBackend(), policy)
        serial, serial_files = _gate(root, SerialOffline(), policy)
        assert ahead == serial
        assert ahead_files == serial_files
        assert any(v["label"] == "unsupported" for v in ahead["verdicts"]) or ahead["removed"] or ahead["rejected"]
    assert "notes/ada/gone-0.md" in ahead["rejected"]
