"""Topic digests (dream.digest) only ever save time: a page compiled from a digest changed in place is
the page compiled from every note, and a run from a digest commits the tree of a run without one."""

from __future__ import annotations

import datetime as dt
import json
import random
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest
from nadia_runs import add_session, copy_brain, dream, git, nadia_inputs

from dream import digest
from dream.backends.offline import OfflineBackend
from dream.compile import Compilation
from dream.digest import build_view, change
from dream.notes import Note
from dream.phases.update import _shown_notes

TOPICS = Path(".dream/cache/cards/topics")
KINDS = ["event", "identity", "preference", "project", "relationship", "learning"]
THINGS = ["went swimming at the pool", "adopted a cat named Miso", "painted a sunrise", "started a job at Kite Labs",
          "read a novel about whales", "ran a half marathon", "met my sister for lunch", "prefers tea to coffee"]


def _note(rng: random.Random, i: int) -> Note:
    observed = dt.date(2025, 1, 1) + dt.timedelta(days=rng.randrange(400))
    slot = rng.choice([None, None, None, "employer", "home", "topic:x"])
    return Note(
        path=f"notes/ana/n{i:04d}.md", statement=f"Ana {rng.choice(THINGS)} ({i}).", kind=rng.choice(KINDS), topic="ana",
        confidence=0.8, observed=observed, sources=[f"session:s{i}#1"],
        event_date=observed - dt.timedelta(days=rng.randrange(30)) if rng.random() < 0.5 else None,
        slot=slot, value=str(rng.randrange(3)) if slot else None, mentions=[rng.choice(["bo", "cy", "di"])] if rng.random() < 0.3 else [],
    )


def _shown(view, notes: dict[str, Note], backend) -> tuple:
    """What the page shows from a view: the notes of each part and the counts it leaves out."""
    members = sorted((notes[p] for p in view.members()), key=lambda n: (n.observed, n.path))
    comp = SimpleNamespace(backend=backend)
    current, history, _, hidden = _shown_notes(comp, "person", [n for n in members if n.until is None],
                                               [n for n in members if n.until is not None], [], view)
    return [n.path for n in current], [n.path for n in history], hidden, view.linked, view.first, view.last


@pytest.mark.parametrize("seed", range(6))
def test_a_view_changed_note_by_note_shows_what_a_view_of_every_note_shows(seed: int) -> None:
    rng = random.Random(seed)
    backend = OfflineBackend()
    notes = {n.path: n for n in (_note(rng, i) for i in range(rng.choice([10, 120, 400])))}
    view = build_view(notes.values(), backend.page_section, "offline", "person")
    rebuilt = 0
    for i in range(400, 700):
        current = [n for n in notes.values() if n.until is None]
        roll = rng.random()
        if roll < 0.4 and current:  # superseded: it moves to History
            old = rng.choice(current)
            new = old.model_copy(update={"until": old.observed + dt.timedelta(days=rng.randrange(60)), "superseded_by": f"session:t{i}#2"})
        elif roll < 0.6 and notes:  # said again: one more source, the same place
            old = rng.choice(list(notes.values()))
            new = old.model_copy(update={"sources": [*old.sources, f"session:t{i}#1"]})
        else:
            old, new = None, _note(rng, i)
        notes[new.path] = new
        if not change(view, old, new, backend.page_section, notes.__getitem__):
            view, rebuilt = build_view(notes.values(), backend.page_section, "offline", "person"), rebuilt + 1
        full = build_view(notes.values(), backend.page_section, "offline", "person")
        assert _shown(view, notes, backend) == _shown(full, notes, backend)
        assert view.current == full.current and view.history.count == full.history.count
        for heading, section in view.sections.items():
            other = full.sections.get(heading)
            assert other is not None and (section.count, section.pins) == (other.count, other.pins), heading
            assert section.cands <= other.cands  # the section's newest, as a view of every note has them
    assert rebuilt < 30  # in place nearly always: reading the topic in full is the exception


def _big_topic(root: Path, sid: str, day: int, colours: list[str]) -> None:
    turns = []
    for n, colour in enumerate(colours):
        turns += [("user", f"I went swimming at the {colour} pool on 2026-0{day}-{n % 28 + 1:02d} with my aunt."), ("assistant", "Nice.")]
    add_session(root, sid, f"2026-0{day}-01T09:00:00+09:00", turns)


POOLS = [f"{a}-{b}" for a in ("amber", "azure", "cedar", "coral", "jade", "plum") for b in ("north", "south", "east", "west", "lake", "hill", "park", "dock", "old", "new")]


def _runs(root: Path, spoil=None) -> dict[str, bytes]:
    """Two more nights on Nadia's Brain: many swims (a section past its candidates), then more swims
    and a new employer (a superseded fact). `spoil` acts on the digests between the two."""
    _big_topic(root, "2026-07-01-swims", 6, POOLS)
    assert dream(root, "2026-07-02T02:00:00Z").commit
    if spoil is not None:
        spoil(root)
    _big_topic(root, "2026-07-10-more-swims", 7, [f"second-{c}" for c in POOLS[:20]])
    add_session(root, "2026-07-11-job", "2026-07-11T09:00:00+09:00",
                [("user", "I left my old job; I now work at the Tide Pool Institute as a researcher."), ("assistant", "Congratulations.")])
    assert dream(root, "2026-07-12T02:00:00Z").commit
    out = {}
    for rel in git(root, "ls-tree", "-r", "--name-only", "HEAD").split("\n"):
        if rel:
            out[rel] = (root / rel).read_bytes()
    return out


def _digests(root: Path) -> list[Path]:
    found = sorted((root / TOPICS).glob("*.json"))
    assert found
    return found


def _digest_keys(root: Path) -> dict[str, str]:
    """topic → the key its digest is filed under."""
    return {d["topic"]: d["key"] for d in (json.loads(f.read_text(encoding="utf-8")) for f in _digests(root))}


def _rewrite(root: Path, change_data) -> None:
    for f in _digests(root):
        f.write_text(json.dumps(change_data(json.loads(f.read_text(encoding="utf-8")))), encoding="utf-8")


def _gone(root: Path) -> None:
    shutil.rmtree(root / TOPICS)


def _corrupt(root: Path) -> None:
    for f in _digests(root):
        f.write_bytes(b"{\"version\": ")


def _other_notes(root: Path) -> None:
    _rewrite(root, lambda d: {**d, "key": "0" * 32})  # a digest of notes that are not there


def _wrong_cards(root: Path) -> None:
    _rewrite(root, lambda d: {**d, "cards": {p: {"note": {"path": 3}, "key": "k"} for p in d.get("cards", {})}})


def _lost_members(root: Path) -> None:
    _rewrite(root, lambda d: {**d, "cards": dict(list(d.get("cards", {}).items())[:1])})


def _owner_edit(root: Path) -> None:
    """The owner rewords one of the notes (uncommitted): that topic's digest is not of its notes now."""
    note = sorted((root / "notes" / "nadia-rahman").glob("*swimming*"))[-1]
    text = note.read_text(encoding="utf-8")
    assert "with their aunt." in text
    note.write_text(text.replace("with their aunt.", "with their aunt Hana."), encoding="utf-8")


def _other_tree(root: Path) -> None:
    _rewrite(root, lambda d: {**d, "key": "tree:" + "0" * 40})  # the digest of another commit's folder


def _owner_commit(root: Path) -> None:
    """The owner's edit, committed: the folder's tree at HEAD is not the one the digest was made for."""
    _owner_edit(root)
    git(root, "commit", "-q", "-am", "owner: aunt's name")


def _owner_stages(root: Path) -> None:
    _owner_edit(root)
    git(root, "add", "-u")


def _owner_adds_a_note(root: Path) -> None:
    """A note the owner wrote by hand and did not commit (untracked): the folder is not HEAD's."""
    note = sorted((root / "notes" / "nadia-rahman").glob("*swimming*"))[0]
    text = note.read_text(encoding="utf-8")
    assert "with their aunt" in text
    (note.parent / ("hand-" + note.name)).write_text(text.replace("with their aunt", "with their uncle"), encoding="utf-8")


OWNER = (_owner_edit, _owner_commit, _owner_stages, _owner_adds_a_note)


@pytest.mark.parametrize("spoil", [_gone, _corrupt, _other_notes, _other_tree, _wrong_cards, _lost_members, *OWNER], ids=lambda f: f.__name__.strip("_"))
def test_a_run_from_digests_commits_the_tree_of_a_run_that_reads_every_note(compiled_copy: Path, tmp_path: Path, spoil) -> None:
    other = copy_brain(compiled_copy, tmp_path / "other")
    spoilt = _runs(other, spoil)
    if spoil in OWNER:  # the same change to the notes, with no digest to go wrong
        warm = _runs(compiled_copy, lambda root: (spoil(root), _gone(root)))
    else:
        warm = _runs(compiled_copy)
    assert spoilt == warm


def test_a_topic_as_committed_is_known_by_its_folder_tree_without_looking_at_its_notes(compiled_copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """After a run, a topic's digest is keyed by its folder's tree id in Dream's commit; the next run
    finds the folder unchanged from git (status and one ls-tree), not by reading each note's blob id."""
    root = compiled_copy
    _big_topic(root, "2026-07-01-swims", 6, POOLS)
    assert dream(root, "2026-07-02T02:00:00Z").commit
    keys = _digest_keys(root)
    assert keys["nadia-rahman"] == "tree:" + git(root, "rev-parse", "HEAD:notes/nadia-rahman").strip()
    looked_at = []
    real = Compilation._tree_keys
    monkeypatch.setattr(Compilation, "_tree_keys", lambda self, paths: (looked_at.extend(paths), real(self, paths))[1])
    _big_topic(root, "2026-07-10-more-swims", 7, ["second-amber-north", "second-jade-lake"])
    report = dream(root, "2026-07-12T02:00:00Z")
    assert "knowledge/people/nadia-rahman.md" in report.pages_updated
    assert not [p for p in looked_at if p.startswith("notes/nadia-rahman/")]
    after = _digest_keys(root)
    assert after["nadia-rahman"] == "tree:" + git(root, "rev-parse", "HEAD:notes/nadia-rahman").strip()


def test_a_topic_a_run_began_is_keyed_by_its_folder_tree_at_once(tmp_path: Path) -> None:
    """The first compile makes every notes folder: with none in the commit it started from and none
    in the working tree, each folder in Dream's commit is exactly Dream's notes, so the run after
    it (the first nightly one) already knows them by tree id."""
    root = nadia_inputs(tmp_path / "brain")
    assert dream(root, "2026-07-15T02:00:00Z").commit
    keys = _digest_keys(root)
    folders = sorted(p.name for p in (root / "notes").iterdir())
    assert len(folders) > 5
    assert {t: keys.get(t) for t in folders} == {t: "tree:" + git(root, "rev-parse", f"HEAD:notes/{t}").strip() for t in folders}


def test_a_new_topic_with_an_owners_note_in_its_folder_is_not_keyed_by_tree(tmp_path: Path) -> None:
    """An untracked note the owner left in a folder Dream then fills is not in Dream's commit: the
    digest, which counts it, must not be known by that commit's tree."""
    root = nadia_inputs(tmp_path / "brain")
    mine = root / "notes" / "nadia-rahman" / "my-own-note.md"
    mine.parent.mkdir(parents=True)
    mine.write_text("---\nkind: learning\ntopic: nadia-rahman\n---\nNadia keeps a paper diary.\n", encoding="utf-8")
    assert dream(root, "2026-07-15T02:00:00Z").commit
    keys = _digest_keys(root)
    assert not keys.get("nadia-rahman", "").startswith("tree:")
    assert keys.get("sora-city-laboratory", "").startswith("tree:")


def test_a_nightly_run_reads_only_the_notes_its_pages_show(compiled_copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = compiled_copy
    _big_topic(root, "2026-07-01-swims", 6, POOLS)
    dream(root, "2026-07-02T02:00:00Z")
    read_in_full, parsed = [], []
    real_read_all, real_load = Compilation._read_all, Compilation._load_note
    monkeypatch.setattr(Compilation, "_read_all", lambda self, found, paths: (read_in_full.append(paths[0].split("/")[1] if paths else ""), real_read_all(self, found, paths))[1])
    monkeypatch.setattr(Compilation, "_load_note", lambda self, path: (parsed.append(path), real_load(self, path))[1])
    _big_topic(root, "2026-07-10-more-swims", 7, ["second-amber-north", "second-jade-lake"])
    report = dream(root, "2026-07-12T02:00:00Z")
    assert report.commit and "knowledge/people/nadia-rahman.md" in report.pages_updated
    total = len(list((root / "notes" / "nadia-rahman").glob("*.md")))
    assert total > digest.CANDIDATES
    assert "nadia-rahman" not in read_in_full
    assert len(parsed) < 10  # what the digest did not hold already


def _lose_buckets(root: Path) -> None:
    folders = [d for d in (root / TOPICS).iterdir() if d.is_dir()]
    assert folders
    for d in folders:
        shutil.rmtree(d)


def _stale_buckets(root: Path) -> None:
    files = sorted((root / TOPICS).glob("*/*.json"))
    assert files
    for f in files:
        data = json.loads(f.read_text(encoding="utf-8"))
        f.write_text(json.dumps({**data, "gen": "0" * 16}), encoding="utf-8")  # another generation than the digest names


@pytest.mark.parametrize("spoil", [None, _lose_buckets, _stale_buckets], ids=["intact", "lost", "stale"])
def test_a_key_index_in_bucket_files_commits_what_an_inline_one_does(compiled_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spoil) -> None:
    """A large topic keeps its statement-key index in bucket files, read as keys are asked; lost or
    stale ones are rebuilt from the notes. Either way the nights commit what inline indexes give."""
    from dream import compile as compile_module

    def said_again(root: Path) -> None:  # the second night restates swims of the first: found by their keys
        _big_topic(root, "2026-07-09-again", 6, POOLS[:8])

    other = copy_brain(compiled_copy, tmp_path / "other")
    inline = _runs(compiled_copy, said_again)
    monkeypatch.setattr(compile_module, "INLINE_KEYS", 0)  # every topic's index in bucket files
    rebuilt: list[int] = []
    real = Compilation._key_buckets
    monkeypatch.setattr(Compilation, "_key_buckets", lambda self, paths: (rebuilt.append(len(paths)), real(self, paths))[1])

    def check_then_spoil(root: Path) -> None:
        digests = {d["topic"]: d for d in (json.loads(f.read_text(encoding="utf-8")) for f in _digests(root))}
        assert "keys" in digests["nadia-rahman"] and "by_key" not in digests["nadia-rahman"]  # the topic the night changed
        if spoil is not None:
            spoil(root)
        said_again(root)

    assert _runs(other, check_then_spoil) == inline
    assert bool(rebuilt) == (spoil is not None)


def test_a_topic_read_in_full_for_a_note_another_page_mentions_keeps_its_digest(compiled_copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Kenji Mori's page shows the notes of other topics that name him ("Mentioned in"). With no
    digests (a new version of Dream starts its caches afresh), a run that compiles his page reads
    those topics in full; it keeps their digests too, so the next such run reads no topic in full."""
    root = compiled_copy
    _gone(root)
    read_in_full: list[str] = []
    real_read_all = Compilation._read_all
    monkeypatch.setattr(Compilation, "_read_all", lambda self, found, paths: (read_in_full.append(paths[0].split("/")[1] if paths else ""), real_read_all(self, found, paths))[1])
    add_session(root, "2026-07-20-kenji", "2026-07-20T09:00:00+09:00", [("user", "Kenji Mori moved his office to the Osaka branch."), ("assistant", "Noted.")])
    assert "knowledge/people/kenji-mori.md" in dream(root, "2026-07-21T02:00:00Z").pages_updated
    assert {"kenji-mori", "samuel-okafor", "japan-universal-design-sprint"} <= set(read_in_full)
    read_in_full.clear()
    add_session(root, "2026-07-22-kenji", "2026-07-22T09:00:00+09:00", [("user", "Kenji Mori starts a new course on tactile maps."), ("assistant", "Noted.")])
    assert "knowledge/people/kenji-mori.md" in dream(root, "2026-07-23T02:00:00Z").pages_updated
    assert read_in_full == []
