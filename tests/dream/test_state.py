"""state.json: what a render writes, what a parse reads back, and the states older Dreams wrote."""

from __future__ import annotations

import hashlib
import json

import pytest

from brain.errors import BrainError
from dream.state import DreamState, SessionState, legacy_files, parse_state

PATHS = {f"notes/ada/fact-{i}.md": f"{i:040x}" for i in range(300)} | {"knowledge/people/ada.md": "a" * 40}
SESSIONS = {f"2026-01-{i:02d}-s{i}": {"hash": f"{i:064x}", "run": "r0", "turns": i} for i in range(1, 29)}


def _fresh() -> str:
    state = DreamState(sessions={"s1": SessionState(hash="h1", turns=3, run="r1")})
    return state.render(last_run="r1", written=PATHS)


def _shards(folder: str, entries: dict) -> dict[str, str]:
    """A map as versions 2 and 3 kept it: 256 files by the first two hex digits of each key's sha1."""
    out: dict[str, dict] = {}
    for key, value in entries.items():
        out.setdefault(f"{folder}/{hashlib.sha1(key.encode('utf-8')).hexdigest()[:2]}.json", {})[key] = value
    return {rel: json.dumps(part, indent=1, sort_keys=True) + "\n" for rel, part in out.items()}


def test_a_state_is_one_sorted_indented_file_that_reads_back_as_it_was() -> None:
    text = _fresh()
    data = json.loads(text)
    assert text == json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    assert data["version"] == 4 and data["written"] == PATHS and data["last_run"] == "r1"
    assert data["sessions"] == {"s1": {"hash": "h1", "run": "r1", "turns": 3}}
    state, problems = parse_state(text, lambda rel: None, [])
    assert problems == [] and state.written == PATHS and state.sessions["s1"].turns == 3
    assert state.render(last_run="r1") == text


def test_a_version_1_state_keeps_its_map() -> None:
    old = json.dumps({"version": 1, "sessions": {}, "written": PATHS, "last_run": "r0"})
    state, problems = parse_state(old, lambda rel: None, [])
    assert problems == [] and state.written == PATHS
    assert json.loads(state.render(last_run="r1"))["version"] == 4


@pytest.mark.parametrize("version", [2, 3])
def test_the_shards_of_versions_2_and_3_are_read_into_one_state(version: int) -> None:
    files = _shards(".dream/written", PATHS)
    head = {"version": version, "last_run": "r0", "entities": {}}
    if version == 3:
        files |= _shards(".dream/sessions", SESSIONS)
    else:
        head["sessions"] = SESSIONS
    state, problems = parse_state(json.dumps(head), files.get, sorted(files))
    assert problems == [] and state.written == PATHS
    assert {sid: s.model_dump() for sid, s in state.sessions.items()} == SESSIONS
    assert json.loads(state.render())["written"] == PATHS


def test_an_unreadable_shard_is_named_and_the_others_are_read() -> None:
    files = _shards(".dream/written", PATHS) | _shards(".dream/sessions", SESSIONS)
    bad = sorted(p for p in files if p.startswith(".dream/written/"))[0]
    lost = set(json.loads(files[bad]))
    files[bad] = "{not json"
    state, problems = parse_state(json.dumps({"version": 3}), files.get, sorted(files))
    assert problems == [f"{bad} is unreadable: the files listed there are kept as the owner's until Dream writes them again"]
    assert state.written == {p: b for p, b in PATHS.items() if p not in lost}


def test_a_state_from_a_newer_dream_stops_the_run_rather_than_being_rewritten() -> None:
    with pytest.raises(BrainError) as caught:
        parse_state(json.dumps({"version": 5}), lambda rel: None, [])
    assert (caught.value.message, caught.value.hint) == (
        ".dream/state.json is version 5, written by a newer Dream (this one reads up to 4)", "upgrade brain-dream, then run it again")


def test_an_unreadable_state_is_a_fresh_one_and_says_so() -> None:
    state, problems = parse_state("{not json", lambda rel: None, [])
    assert state == DreamState()
    assert problems and problems[0].startswith(".dream/state.json is unreadable (") and problems[0].endswith("every session will be treated as new")


def test_the_shards_of_an_older_state_are_found_where_it_kept_them(tmp_path) -> None:
    written = tmp_path / ".dream/written"
    written.mkdir(parents=True)
    (written / "0a.json").write_text("{}\n", encoding="utf-8")
    (tmp_path / "elsewhere.json").write_text("{}\n", encoding="utf-8")
    (written / "0b.json").symlink_to(tmp_path / "elsewhere.json")  # not Dream's to read or remove
    (tmp_path / ".dream/sessions").mkdir()
    (tmp_path / ".dream/sessions/0c.json").write_text("{}\n", encoding="utf-8")
    assert legacy_files(tmp_path) == [".dream/written/0a.json", ".dream/sessions/0c.json"]
