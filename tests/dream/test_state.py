"""state.json and its `.dream/written/` shards: what a render writes, what a parse reads back."""

from __future__ import annotations

import json

import pytest

from brain.errors import BrainError

from dream.state import WRITTEN_SHARDS, DreamState, SessionState, parse_state, shard_problem, written_shard

PATHS = {f"notes/ada/fact-{i}.md": f"{i:040x}" for i in range(300)} | {"knowledge/people/ada.md": "a" * 40}


def _fresh() -> dict[str, str]:
    state = DreamState(sessions={"s1": SessionState(hash="h1", turns=3, run="r1")})
    return state.render(last_run="r1", written=PATHS)


def test_a_new_state_writes_state_json_without_the_map_and_every_shard_it_needs() -> None:
    files = _fresh()
    head = json.loads(files[".dream/state.json"])
    assert head == {"entities": {}, "last_run": "r1", "mentions": {}, "slots": {},
                    "sessions": {"s1": {"hash": "h1", "run": "r1", "turns": 3}}, "version": 2}
    assert sorted(p for p in files if p != ".dream/state.json") == sorted({written_shard(p) for p in PATHS})
    for shard, text in files.items():
        if shard != ".dream/state.json":
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
    assert "written" not in json.loads(files[".dream/state.json"]) and json.loads(files[".dream/state.json"])["version"] == 2
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
    assert parse_state(files[".dream/state.json"])[0].written == {}  # no reader: sessions only


def test_a_state_from_a_newer_dream_stops_the_run_rather_than_being_rewritten() -> None:
    with pytest.raises(BrainError) as caught:
        parse_state(json.dumps({"version": 3}), lambda rel: None)
    assert (caught.value.message, caught.value.hint) == (
        ".dream/state.json is version 3, written by a newer Dream (this one reads up to 2)", "upgrade brain-dream, then run it again")


def test_the_worktree_lists_the_shards_and_notes_a_linked_one(tmp_path) -> None:
    """Shards are part of the Brain, as state.json is; runs/ and cache/ are not. A linked shard is
    listed among the links, as a linked state.json is, so the structure checks see it."""
    from brain.tree import DirTree

    written = tmp_path / ".dream/written"
    written.mkdir(parents=True)
    (written / "0a.json").write_text("{}\n", encoding="utf-8")
    (tmp_path / "elsewhere.json").write_text("{}\n", encoding="utf-8")
    (written / "0b.json").symlink_to(tmp_path / "elsewhere.json")
    (tmp_path / ".dream/cache").mkdir()
    (tmp_path / ".dream/cache/x.json").write_text("{}\n", encoding="utf-8")
    tree = DirTree(tmp_path)
    assert tree.files() == [".dream/written/0a.json", ".dream/written/0b.json", "elsewhere.json"]
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
def test_a_state_read_as_asked_renders_what_a_parsed_one_renders(seed: int) -> None:
    """parse_state(rendered=True) keeps the sessions as text, parses an entry when it is asked and
    splices what changed into the text: the same bytes as a state parsed whole, after any changes."""
    import random

    rnd = random.Random(seed)
    ids = [f"2026-01-{rnd.randint(1, 28):02d}-s{rnd.randint(0, 30)}" for _ in range(rnd.choice([0, 1, 2, 5, 40]))]
    base = DreamState(sessions={sid: SessionState(hash=f"{rnd.getrandbits(64):016x}", turns=rnd.randint(1, 99), run="r1") for sid in ids})
    text = base.render(last_run=rnd.choice([None, "r1"]))[".dream/state.json"]
    assert text == json.dumps(json.loads(text), indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    lazy, _ = parse_state(text, rendered=True)
    whole, _ = parse_state(text)
    assert repr(lazy.sessions) == "Sessions(lazy)"
    for _ in range(rnd.randint(0, 8)):
        known = sorted(whole.sessions)
        sid = rnd.choice(known) if known and rnd.random() < 0.5 else f"2026-0{rnd.randint(1, 2)}-{rnd.randint(1, 28):02d}-s{rnd.randint(0, 30)}"
        if sid in whole.sessions and rnd.random() < 0.4:
            for state in (lazy, whole):
                state.sessions.pop(sid)
        else:
            value = SessionState(hash="f" * 16, turns=rnd.randint(1, 99), run="r2")
            for state in (lazy, whole):
                state.sessions[sid] = value
        probe = rnd.choice(known + [sid, "zzz", "0"])
        assert lazy.sessions.get(probe) == whole.sessions.get(probe)
        assert (probe in lazy.sessions) == (probe in whole.sessions)
    assert lazy.render(last_run="r2") == whole.render(last_run="r2")
    assert repr(lazy.sessions) == "Sessions(lazy)"  # nothing above needed every session parsed
    assert dict(lazy.sessions) == dict(whole.sessions) and len(lazy.sessions) == len(whole.sessions)
    assert lazy.render(last_run="r2") == whole.render(last_run="r2")
