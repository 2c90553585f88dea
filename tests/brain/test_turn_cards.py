"""A citation's turns are checked against the remembered turn numbers of a raw session git
vouches for (DocCards.session_turns), without opening it; what is reported is unchanged."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from brain import view as view_module
from brain.doccache import DocCards, in_ranges, turn_ranges
from brain.scan import WorktreeScan
from brain.tree import DirTree
from brain.view import BrainView


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root, check=True, capture_output=True)


def _write(root: Path, turns: list[int]) -> None:
    lines = [{"type": "session", "id": "s1"}] + [{"type": "turn", "n": n, "role": "user", "text": f"t{n}"} for n in turns]
    (root / "sessions/raw/s1.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "session")


def _view(root: Path, cards: Path) -> BrainView:
    return BrainView(DirTree(root, keys=WorktreeScan(root).keys()), cards=DocCards(cards, version="v"))


@pytest.mark.parametrize(("numbers", "spec"), [([], ""), ([1], "1"), ([3, 1, 2], "1-3"), ([1, 2, 4, 5, 7], "1-2,4-5,7")])
def test_turn_ranges_round_trip(numbers: list[int], spec: str):
    assert turn_ranges(numbers) == spec
    assert [n for n in range(10) if in_ranges(n, spec)] == sorted(numbers)


def test_cited_turns_are_checked_from_the_remembered_numbers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    root, cards = tmp_path / "brain", tmp_path / "cards"
    (root / "sessions/raw").mkdir(parents=True)
    _git(root, "init", "-q")
    _write(root, [1, 2, 3, 5])
    first = _view(root, cards)
    assert first.check_target("session:s1#t2-t3") is None
    missing = first.check_target("session:s1#t4")
    assert missing == "session:s1#t4 cites turn 4, but session 's1' has turns 1-5"
    first.cards.save()
    assert (cards / DocCards.TURNS_FILE).is_file()
    # Remembered: a file git vouches for is not opened for turns it has; a missing turn is reported as before.
    parsed = []
    real = view_module.parse_session_cached
    monkeypatch.setattr(view_module, "parse_session_cached", lambda rel, data: parsed.append(rel) or real(rel, data))
    again = _view(root, cards)
    assert again.check_target("session:s1#t5") is None and parsed == []
    assert again.check_target("session:s1#t4") == missing and parsed == ["sessions/raw/s1.jsonl"]
    # The file changed (another blob): its numbers are read again.
    _write(root, [1, 2, 3, 4, 5])
    assert _view(root, cards).check_target("session:s1#t4") is None
    # Not vouched for by git (an uncommitted edit): read, as before.
    (root / "sessions/raw/s1.jsonl").write_text('{"type":"session","id":"s1"}\n', encoding="utf-8")
    assert "cites turn 1" in _view(root, cards).check_target("session:s1#t1")
