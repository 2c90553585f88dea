"""A first compile on two cores — sessions prepared ahead (dream.ahead), notes and summaries
rendered by brain.forked.Shared: the Brain must be the one a single process compiles, byte for
byte, whichever process did which part and whatever the child did."""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

import pytest
from nadia_runs import DEMO_NOW, NADIA_IDS, dream, files_of, nadia_inputs

import dream.ahead as ahead_mod
import dream.phases.attach as attach_mod
import dream.phases.summarize as summarize_mod
from brain.sessions import Session, SessionHeader, Turn
from dream.backends.base import EntityRef, ExtractRequest
from dream.backends.offline import OfflineBackend

NOT_OUTPUT = (".git/", ".dream/runs/", ".dream/lock")


def _compile(root: Path) -> tuple[dict[str, bytes], dict]:
    report = dream(nadia_inputs(root), DEMO_NOW)
    assert report.status == "ok", report.reason
    return files_of(root, NOT_OUTPUT), report.model_dump(exclude={"commit", "timings"})


def _held(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Every facts_still_hold answer in this process (one per session prepared ahead)."""
    answers: list[bool] = []
    original = OfflineBackend.facts_still_hold

    def counted(self, rests_on, req):
        answers.append(original(self, rests_on, req))
        return answers[-1]

    monkeypatch.setattr(OfflineBackend, "facts_still_hold", counted)
    return answers


def _two_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nadia's few sessions fork as a first compile of thousands does."""
    monkeypatch.setattr(ahead_mod, "AHEAD_MIN_SESSIONS", 1)
    monkeypatch.setattr(attach_mod, "SHARED_MIN_NOTES", 1)
    monkeypatch.setattr(attach_mod, "NOTES_PER_CHUNK", 3)
    monkeypatch.setattr(summarize_mod, "SHARED_MIN_SUMMARIES", 1)
    monkeypatch.setattr(summarize_mod, "SUMMARIES_PER_CHUNK", 2)


def test_a_compile_on_two_cores_gives_the_brain_one_process_gives(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    alone = _compile(tmp_path / "alone")  # Nadia's few sessions: below every threshold, no fork
    _two_cores(monkeypatch)
    held = _held(monkeypatch)
    both = _compile(tmp_path / "ahead")
    assert len(held) == len(NADIA_IDS) and any(held)  # every session came prepared ahead, most facts reused
    assert sorted(both[0]) == sorted(alone[0])
    assert [p for p in both[0] if both[0][p] != alone[0][p]] == []
    assert both[1] == alone[1]


def test_a_child_that_fails_midway_changes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    alone = _compile(tmp_path / "alone")
    parent, original = os.getpid(), ahead_mod.prepare

    def failing(comp, live, pending, ahead=False):
        if os.getpid() != parent and pending.id == NADIA_IDS[2]:
            raise RuntimeError("the child dies on the third session")
        return original(comp, live, pending, ahead)

    _two_cores(monkeypatch)
    monkeypatch.setattr(ahead_mod, "prepare", failing)
    both = _compile(tmp_path / "ahead")
    assert [p for p in set(both[0]) | set(alone[0]) if both[0].get(p) != alone[0].get(p)] == []
    assert both[1] == alone[1]


def _session(text: str) -> Session:
    header = SessionHeader(id="s2", started="2026-05-04T10:00:00+00:00", participants=["Ada", "assistant"])
    return Session(header=header, turns=[Turn(n=1, role="user", speaker="Ada", text=text)])


def test_facts_extracted_ahead_hold_only_while_known_names_are_typed_alike() -> None:
    backend = OfflineBackend()
    session = _session("I had lunch with Kestrel in Oslo on Monday and we planned the next trip.")
    before = ExtractRequest(session=session, owner="Ada", known=[])
    batch, rests_on = backend.extract_ahead(before)
    assert batch == backend.extract_facts(before)
    assert "kestrel" in rests_on and rests_on["kestrel"] is None  # asked of `known`, not known then
    unrelated = [EntityRef(slug="maple-studio", title="Maple Studio", type="organization")]
    assert backend.facts_still_hold(rests_on, before.model_copy(update={"known": unrelated}))
    kestrel = [EntityRef(slug="kestrel", title="Kestrel", type="organization")]
    later = before.model_copy(update={"known": kestrel})
    assert not backend.facts_still_hold(rests_on, later)
    assert backend.extract_facts(later) != batch  # which is why it is asked again
