"""state.json and its shards (`.dream/written/`, `.dream/sessions/`): what a render writes, what a parse reads back."""

from __future__ import annotations

import json

import pytest

from brain.errors import BrainError

from dream.state import WRITTEN_SHARDS, DreamState, SessionState, parse_state, session_shard, shard_problem, written_shard

PATHS = {f"notes/ada/fact-{i}.md": f"{i:040x}" for i in range(300)} | {"knowledge/people/ada.md": "a" * 40}


def _fresh() -> dict[str, str]:
    state = DreamState(sessions={"s1": SessionState(hash="h1", turns=3, run="r1")})
    return state.render(last_run="r1", written=PATHS)


def test_a_new_state_writes_state_json_without_the_map_and_every_shard_it_needs() -> None:
    files = _fresh()
    head = json.loads(files[".dream/state.json"])
    assert head == {"entities": {}, "last_run": "r1", "mentions": {}, "slots": {}, "version": 3}
    assert json.loads(files[session_shard("s1")]) == {"s1": {"hash": "h1", "run": "r1", "turns": 3}}
    assert sorted(p for p in files if p not in (".dream/state.json", session_shard("s1"))) == sorted({written_shard(p) for p in PATHS})
    for shard, text in files.items():
        if shard.startswith(".dream/written/"):
            entries = json.loads(text)
            assert entries and all(written_shard(p) == shard and PATHS[p] == blob for p, blob in entries.items())
            assert text == json.dumps(entries, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    assert written_shard("notes/ada/fact-1.md") in WRITTEN_SHARDS


def test_a_parsed_state_rewrites_only_the_shards_whose_entries_changed() -> None:
    files = _fresh()
    state, problem = parse_state(files[".dream/state.json"], files.get)
    assert problem is None and state.written == PATHS and state.sessions["s1"].turns == 3
    assert state.render(last_run="r1") == {".dream/state.json": files[".dream/state.json"]}
    new, changed, gone = "notes/bob/new.md", "notes/ada/fact-7.md", "notes/ada/fact-9.md"
    del state.written[gone]
    out = state.render(last_run="r2", written={new: "b" * 40, changed: "c" * 40})
    assert sorted(out) == sorted({".dream/state.json", written_shard(new), written_shard(changed), written_shard(gone)})
    after = {**files, **out}
    again, _ = parse_state(after[".dream/state.json"], after.get)
    assert again.written == {**{p: b for p, b in PATHS.items() if p != gone}, new: "b" * 40, changed: "c" * 40}
    assert again.last_run == "r2"


def test_a_version_1_state_keeps_its_map_and_its_first_render_writes_every_shard() -> None:
    old = json.dumps({"version": 1, "sessions": {}, "written": PATHS, "last_run": "r0"})
    state, problem = parse_state(old, lambda rel: None)
    assert problem is None and state.written == PATHS
    files = state.render(last_run="r1")
    assert "written" not in json.loads(files[".dream/state.json"]) and json.loads(files[".dream/state.json"])["version"] == 3
    assert len(files) - 1 == len({written_shard(p) for p in PATHS})


def test_an_unreadable_shard_is_named_and_the_others_are_read() -> None:
    files = _fresh()
    bad = written_shard("knowledge/people/ada.md")
    files[bad] = "{not json"
    state, problem = parse_state(files[".dream/state.json"], files.get)
    assert problem is None and shard_problem(state.written) is None  # shards are read as they are needed
    assert "knowledge/people/ada.md" not in state.written  # its shard is read now, and found unreadable
    assert shard_problem(state.written) == (f"{bad} is unreadable: the files listed there are kept as the owner's "
                                            "until Dream writes them again; restore them with `git checkout -- .dream/written`")
    lost = {p for p in PATHS if written_shard(p) == bad}
    assert state.written == {p: b for p, b in PATHS.items() if p not in lost}


def test_a_state_from_a_newer_dream_stops_the_run_rather_than_being_rewritten() -> None:
    with pytest.raises(BrainError) as caught:
        parse_state(json.dumps({"version": 4}), lambda rel: None)
    assert (caught.value.message, caught.value.hint) == (
        ".dream/state.json is version 4, written by a newer Dream (this one reads up to 3)", "upgrade brain-dream, then run it again")


def test_the_worktree_lists_the_shards_and_notes_a_linked_one(tmp_path) -> None:
    """Shards are part of the Brain, as state.json is; runs/ and cache/ are not. A linked shard is
    listed among the links, as a linked state.json is, so the structure checks see it."""
    from brain.tree import DirTree

    written = tmp_path / ".dream/written"
    written.mkdir(parents=True)
    (written / "0a.json").write_text("{}\n", encoding="utf-8")
    (tmp_path / "elsewhere.json").write_text("{}\n", encoding="utf-8")
    (written / "0b.json").symlink_to(tmp_path / "elsewhere.json")
    (tmp_path / ".dream/sessions").mkdir()
    (tmp_path / ".dream/sessions/0c.json").write_text("{}\n", encoding="utf-8")
    (tmp_path / ".dream/cache").mkdir()
    (tmp_path / ".dream/cache/x.json").write_text("{}\n", encoding="utf-8")
    tree = DirTree(tmp_path)
    assert tree.files() == [".dream/sessions/0c.json", ".dream/written/0a.json", ".dream/written/0b.json", "elsewhere.json"]
    assert tree.symlinks() == [".dream/written/0b.json"]


def test_a_run_reads_only_the_shards_it_asks_about_and_renders_only_those_it_changed() -> None:
    files = _fresh()
    asked = []

    def read(rel: str) -> str | None:
        asked.append(rel)
        return files.get(rel)

    state, _ = parse_state(files[".dream/state.json"], read)
    assert asked == []
    one = "notes/ada/fact-3.md"
    assert state.written.get(one) == PATHS[one] and asked == [written_shard(one)]
    out = state.render(last_run="r2", written={one: PATHS[one]})  # the same blob: nothing to write
    assert sorted(out) == [".dream/state.json"]
    out = state.render(last_run="r2", written={one: "d" * 40})
    assert sorted(out) == [".dream/state.json", written_shard(one)]
    assert json.loads(out[written_shard(one)]) == {**json.loads(files[written_shard(one)]), one: "d" * 40}
    assert len(set(asked)) == 1


def test_an_entry_in_a_shard_it_does_not_belong_to_is_not_taken() -> None:
    files = _fresh()
    path = "knowledge/people/ada.md"
    other = next(s for s in WRITTEN_SHARDS if s != written_shard(path) and s in files)
    files[other] = json.dumps({**json.loads(files[other]), "knowledge/people/zed.md": "e" * 40})
    state, _ = parse_state(files[".dream/state.json"], files.get)
    assert "knowledge/people/zed.md" not in state.written and state.written == PATHS


@pytest.mark.parametrize("seed", range(40))
def test_a_state_read_shard_by_shard_renders_what_a_state_built_whole_renders(seed: int) -> None:
    """Sessions are read from `.dream/sessions/` as they are asked, and only the shards whose
    records changed are rendered: over the files it was read from, the same Brain as a state
    holding every session renders."""
    import random

    rnd = random.Random(seed)
    ids = [f"2026-01-{rnd.randint(1, 28):02d}-s{rnd.randint(0, 30)}" for _ in range(rnd.choice([0, 1, 2, 5, 40]))]
    entries = {sid: SessionState(hash=f"{rnd.getrandbits(64):016x}", turns=rnd.randint(1, 99), run="r1") for sid in ids}
    files = DreamState(sessions=entries).render(last_run=rnd.choice([None, "r1"]))
    for text in files.values():
        assert text == json.dumps(json.loads(text), indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    asked: list[str] = []
    lazy, _ = parse_state(files[".dream/state.json"], lambda rel: asked.append(rel) or files.get(rel))
    whole = DreamState(sessions=dict(entries))
    touched = set()
    for _ in range(rnd.randint(0, 8)):
        known = sorted(entries)
        sid = rnd.choice(known) if known and rnd.random() < 0.5 else f"2026-0{rnd.randint(1, 2)}-{rnd.randint(1, 28):02d}-s{rnd.randint(0, 30)}"
        touched.add(sid)
        if sid in whole.sessions and rnd.random() < 0.4:
            for state in (lazy, whole):
                state.sessions.pop(sid)
        else:
            value = SessionState(hash="f" * 16, turns=rnd.randint(1, 99), run="r2")
            for state in (lazy, whole):
                state.sessions[sid] = value
        probe = rnd.choice(known + [sid, "zzz", "0"])
        touched.add(probe)
        assert lazy.sessions.get(probe) == whole.sessions.get(probe)
        assert (probe in lazy.sessions) == (probe in whole.sessions)
    out = lazy.render(last_run="r2")
    assert set(asked) <= {session_shard(sid) for sid in touched}  # nothing else was read
    assert set(out) - {".dream/state.json"} <= {session_shard(sid) for sid in touched}  # nor rewritten
    merged = {rel: text for rel, text in {**files, **out}.items() if text != "{}\n"}  # a shard emptied stays, empty
    assert merged == whole.render(last_run="r2")
    assert dict(lazy.sessions) == dict(whole.sessions) and len(lazy.sessions) == len(whole.sessions)


def test_a_version_2_state_moves_its_sessions_to_shards_on_its_first_render() -> None:
    sessions = {f"2026-01-{i:02d}-s{i}": {"hash": f"{i:064x}", "run": "r0", "turns": i} for i in range(1, 29)}
    old = json.dumps({"version": 2, "sessions": sessions, "last_run": "r0"}, indent=1, sort_keys=True)
    state, problem = parse_state(old, lambda rel: None)
    assert problem is None and {sid: s.model_dump() for sid, s in state.sessions.items()} == sessions
    files = state.render(last_run="r1")
    head = json.loads(files[".dream/state.json"])
    assert "sessions" not in head and head["version"] == 3
    assert sorted(p for p in files if p != ".dream/state.json") == sorted({session_shard(sid) for sid in sessions})
    again, _ = parse_state(files[".dream/state.json"], files.get)
    assert {sid: s.model_dump() for sid, s in again.sessions.items()} == sessions
    assert again.render(last_run="r1") == {".dream/state.json": files[".dream/state.json"]}


def test_an_unreadable_sessions_shard_is_named_and_its_sessions_count_as_new() -> None:
    files = DreamState(sessions={"s1": SessionState(hash="h1", turns=3, run="r1"), "s2": SessionState(hash="h2", turns=1, run="r1")}).render()
    bad = session_shard("s1")
    files[bad] = json.dumps({"s1": {"hash": "h1", "turns": "three"}})
    state, _ = parse_state(files[".dream/state.json"], files.get)
    assert "s1" not in state.sessions and (session_shard("s2") == bad or state.sessions["s2"].hash == "h2")
    assert shard_problem(state.sessions) == (f"{bad} is unreadable: the sessions listed there are processed again as new; "
                                             "restore them with `git checkout -- .dream/sessions`")
    assert shard_problem(state.written) is None
    state.sessions["s1"] = SessionState(hash="h1", turns=3, run="r2")
    assert json.loads(state.render()[bad])["s1"] == {"hash": "h1", "run": "r2", "turns": 3}  # the next render mends it
