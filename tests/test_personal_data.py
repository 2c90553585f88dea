"""Phone numbers, e-mail and street addresses and birth dates stay in their pages and turns, out of
the index every agent reads, and out of a packet unless its question asks for them."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from brain.context import ContextBuilder, ContextOptions, render_packet
from brain.personal import asked_kinds, personal_spans, withhold
from brain.scaffold import init_brain
from brain.search import Searcher
from dream.backends import get_backend
from dream.importers import import_path
from dream.run import run
from dream.settings import RunFlags, load_settings

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "importers" / "personal"


@pytest.mark.parametrize(("text", "kinds"), [
    ("Call me at +351 912 345 678 or (555) 123-4567.", ["phone", "phone"]),
    ("Her phone is 030 1234 5678", ["phone"]),
    ("Mail ana.lima@example.pt today", ["email"]),
    ("I live at 221B Baker Street, London.", ["address"]),
    ("Moved to Rua das Flores 12 in Porto", ["address"]),
    ("I was born on 14 March 1990.", ["birth date"]),
    ("DOB: 03/14/1990", ["birth date"]),
    ("The meeting is on 2024-05-03 at 10:30, version 2.0.74, ISBN 978 0 13 110362 7.", []),
    ("We raised 1,200,000 dollars in 2023; she ran 5 10 15 km between 1999 and 2004.", []),
])
def test_what_counts_as_personal(text: str, kinds: list[str]) -> None:
    assert [kind for _, _, kind in personal_spans(text)] == kinds


def test_a_question_that_asks_for_a_kind_sees_it() -> None:
    text = "Ana: +351 912 345 678, Rua das Flores 12."
    assert withhold(text) == "Ana: [phone withheld], [address withheld]."
    assert withhold(text, asked_kinds("What is Ana's phone number?")) == "Ana: +351 912 345 678, [address withheld]."
    assert asked_kinds("What did Ana say about Kyoto?") == frozenset()


@pytest.fixture
def brain(tmp_path: Path) -> Path:
    root = tmp_path / "memory"
    init_brain(root, owner="Ana")
    import_path("jsonl", FIXTURE, root)
    report = run(load_settings(root, RunFlags(backend="offline", now="2026-03-03T02:00:00Z")), get_backend("offline"))
    assert report.status == "ok"
    return root


def _packet(root: Path, question: str) -> str:
    builder = ContextBuilder(root, Searcher.open(root, embedder=None))
    return render_packet(builder.build(question, ContextOptions(budget=1500, now=dt.date(2026, 3, 3))))


PERSONAL = ("912 345 678", "Rua das Flores 12", "ana.lima@example.pt", "14 March 1990")


def test_the_index_and_an_unrelated_packet_carry_none(brain: Path) -> None:
    index = (brain / "knowledge" / "index.md").read_text(encoding="utf-8")
    packet = _packet(brain, "Where does Ana work?")
    assert "Harbor Labs" in packet
    for datum in PERSONAL:
        assert datum not in index and datum not in packet
    assert "withheld]" in packet  # the turn is shown, its phone number and address are not


def test_a_packet_whose_question_asks_shows_that_kind_only(brain: Path) -> None:
    packet = _packet(brain, "What is Ana's phone number?")
    assert "+351 912 345 678" in packet and "Rua das Flores 12" not in packet
    assert "14 March 1990" in _packet(brain, "When was Ana born?")
