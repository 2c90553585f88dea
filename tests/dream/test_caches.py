"""Caches only ever save time: a run with its cache missing, corrupt or stale commits the same tree
as a run with a warm one, and git's word on which files are unchanged is taken only where it holds."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from nadia_runs import add_session, copy_brain, dream, files_of, git

from brain import doccache
from brain.doccache import DocCards
from brain.repo import BrainRepo, blob_id, worktree_keys
from brain.scan import WorktreeScan
from brain.layout import document_runs
from brain.tree import DirTree
from brain.view import BrainView
from dream.compile import DocCache

CACHE = Path(".dream/cache/cards")
NEW_TURNS = [
    ("user", "I moved to Lisbon last month and I now work at Harbor Studio as a designer."),
    ("assistant", "Noted."),
    ("user", "My manager at Harbor Studio is Ines Costa."),
]


def _committed(root: Path) -> dict[str, bytes]:
    """Every file of HEAD's tree (what the run committed)."""
    out = {}
    for rel in git(root, "ls-tree", "-r", "--name-only", "HEAD").split("\n"):
        if rel:
            out[rel] = (root / rel).read_bytes()
    return out


def _next_run(root: Path) -> dict[str, bytes]:
    add_session(root, "2026-07-20-moving", "2026-07-20T09:00:00+00:00", NEW_TURNS)
    report = dream(root, "2026-07-21T02:00:00Z")
    assert report.commit
    return _committed(root)


def _shards(root: Path) -> list[Path]:
    files = sorted((root / CACHE).glob("*.json"))
    assert len(files) > 5
    return files


def _corrupt(root: Path) -> None:
    for i, f in enumerate(_shards(root)):
        f.write_bytes(b"{not json" if i % 2 else b"\xff\xfe")


def _missing(root: Path) -> None:
    shutil.rmtree(root / CACHE)


def _rewrite(root: Path, change) -> None:
    for f in _shards(root):
        data = json.loads(f.read_text(encoding="utf-8"))
        data["entries"] = {p: change(e) for p, e in data["entries"].items()}
        f.write_text(json.dumps(data), encoding="utf-8")


def _wrong_shapes(root: Path) -> None:
    # Right keys, cards of the wrong shape: each must be rebuilt, not trusted.
    _rewrite(root, lambda e: [e[0], {"bogus": 1}])


def _bad_notes(root: Path) -> None:
    # Right keys and shape, a note that does not validate: rebuilt from the file.
    _rewrite(root, lambda e: [e[0], {"note": {"path": 1}, "key": "x"}] if "note" in e[1] else e)


def _stale(root: Path) -> None:
    # Keys that no file has any more: every card is built again from the file.
    _rewrite(root, lambda e: ["0" * 40, e[1]])


def _other_code(root: Path) -> None:
    # Cards built by other code (an upgrade): the whole cache is ignored, even with wrong cards.
    for f in _shards(root):
        data = json.loads(f.read_text(encoding="utf-8"))
        data["version"] = "older-code"
        data["entries"] = {p: [e[0], {"title": "x", "aliases": [], "line": "x", "started": "", "sha256": "0" * 64}] for p, e in data["entries"].items()}
        f.write_text(json.dumps(data), encoding="utf-8")


@pytest.mark.parametrize("spoil", [_missing, _corrupt, _wrong_shapes, _bad_notes, _stale, _other_code], ids=lambda f: f.__name__.strip("_"))
def test_a_spoilt_cache_gives_the_tree_of_a_warm_one(compiled_copy: Path, tmp_path: Path, spoil):
    assert (compiled_copy / CACHE).is_dir()
    other = copy_brain(compiled_copy, tmp_path / "other")
    warm = _next_run(compiled_copy)
    spoil(other)
    assert _next_run(other) == warm


def test_a_nightly_run_looks_only_at_the_raw_sessions_that_are_new(compiled_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """The snapshot of sessions/raw/ the last run left (dream.phases.orient.RawSnapshot) vouches for
    the files it saw; without it every file is looked at, and the tree is the same."""
    import dream.run as run_module

    seen = []
    real = run_module.raw_sessions
    monkeypatch.setattr(run_module, "raw_sessions", lambda *a, **k: seen.append(real(*a, **k)) or seen[-1])
    other = copy_brain(compiled_copy, tmp_path / "other")
    assert (compiled_copy / CACHE / run_module.RAW_SNAPSHOT).is_file()
    warm = _next_run(compiled_copy)
    assert seen[-1].examined == ["sessions/raw/2026-07-20-moving.jsonl"]
    (other / CACHE / run_module.RAW_SNAPSHOT).unlink()
    assert _next_run(other) == warm
    assert len(seen[-1].examined) == len(list((other / "sessions/raw").glob("*.jsonl")))


def test_a_cache_from_an_older_brain_is_not_trusted_for_changed_files(compiled_copy: Path, tmp_path: Path):
    old_cache = tmp_path / "old-cache"
    shutil.copytree(compiled_copy / CACHE, old_cache)
    other = copy_brain(compiled_copy, tmp_path / "other")
    _next_run(compiled_copy)
    add_session(compiled_copy, "2026-07-22-tea", "2026-07-22T09:00:00+00:00", [("user", "I prefer green tea over coffee now.")])
    dream(compiled_copy, "2026-07-23T02:00:00Z")
    _next_run(other)
    shutil.rmtree(other / CACHE)
    shutil.copytree(old_cache, other / CACHE)  # the cache of two runs ago
    add_session(other, "2026-07-22-tea", "2026-07-22T09:00:00+00:00", [("user", "I prefer green tea over coffee now.")])
    dream(other, "2026-07-23T02:00:00Z")
    assert _committed(other) == _committed(compiled_copy)


def test_an_uncommitted_owner_edit_is_read_not_taken_from_git(compiled_copy: Path):
    page = next((compiled_copy / "knowledge" / "organizations").glob("*.md"))
    text = page.read_text(encoding="utf-8").replace("title: ", "title: Renamed ", 1)
    page.write_text(text, encoding="utf-8")
    keys = worktree_keys(compiled_copy)
    rel = page.relative_to(compiled_copy).as_posix()
    assert rel not in keys
    view = BrainView(DirTree(compiled_copy, keys=keys), cards=DocCache(compiled_copy / CACHE))
    assert view.page_card(rel)["title"].startswith("Renamed ")


def test_worktree_keys_are_blob_ids_of_unchanged_tracked_files(tmp_path: Path):
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    for name in ("same.md", "edited.md", "hidden.md", "staged.md"):
        (root / name).write_text(f"{name}\n", encoding="utf-8")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "files")
    (root / "edited.md").write_text("changed\n", encoding="utf-8")
    (root / "hidden.md").write_text("changed too\n", encoding="utf-8")
    git(root, "update-index", "--assume-unchanged", "hidden.md")
    (root / "staged.md").write_text("staged\n", encoding="utf-8")
    git(root, "add", "staged.md")
    (root / "untracked.md").write_text("new\n", encoding="utf-8")
    keys = worktree_keys(root)
    assert keys == {"same.md": blob_id(b"same.md\n"), "staged.md": blob_id(b"staged\n")}
    assert git(root, "hash-object", "same.md").strip() == keys["same.md"]
    (root / ".gitattributes").write_text("*.md text eol=crlf\n", encoding="utf-8")
    assert worktree_keys(root) == {}  # filters may make bytes differ from blobs: trust nothing
    assert worktree_keys(tmp_path) == {}  # not a repository


def test_a_topic_folder_has_its_tree_id_only_while_nothing_in_it_differs_from_head(tmp_path: Path):
    root = tmp_path / "repo"
    topics = ("same", "edited", "staged", "deleted", "untracked", "linked")
    for topic in topics:
        (root / "notes" / topic).mkdir(parents=True)
        (root / "notes" / topic / "a.md").write_text(f"{topic}\n", encoding="utf-8")
    (root / "notes" / "loose.md").write_text("not in a topic\n", encoding="utf-8")
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "notes")
    (root / "notes/edited/a.md").write_text("changed\n", encoding="utf-8")
    (root / "notes/staged/a.md").write_text("staged change\n", encoding="utf-8")
    git(root, "add", "notes/staged/a.md")
    (root / "notes/deleted/a.md").unlink()
    (root / "notes/untracked/b.md").write_text("new\n", encoding="utf-8")  # git status -uno does not see it
    (root / "notes/linked/b.md").symlink_to("a.md")
    scan = WorktreeScan(root)
    tree = DirTree(root, keys=scan.keys(), folders=scan.folders)
    head = {t: git(root, "rev-parse", f"HEAD:notes/{t}").strip() for t in topics}
    assert scan.folders == {f"notes/{t}": head[t] for t in ("same", "untracked", "linked")}
    listed = {t: [p for p in tree.files() if p.startswith(f"notes/{t}/")] for t in topics}
    assert {t: tree.folder_tree(f"notes/{t}", listed[t]) for t in topics} == {t: head[t] if t == "same" else None for t in topics}
    assert BrainRepo(root).folder_trees("HEAD") == {f"notes/{t}": head[t] for t in topics}
    git(root, "commit", "-q", "-am", "more")
    assert WorktreeScan(root).keys() and BrainRepo(root).folder_trees("HEAD")["notes/edited"] == git(root, "rev-parse", "HEAD:notes/edited").strip()


def test_doc_cards_rebuild_what_does_not_match(tmp_path: Path):
    root = tmp_path / "brain"
    rel = "knowledge/people/ada.md"
    page = root / rel
    page.parent.mkdir(parents=True)
    page.write_text("---\ntitle: Ada\ntype: person\naliases: [A.]\nsummary: A friend.\n---\n# Ada\n", encoding="utf-8")
    folder = tmp_path / "cards"
    view = BrainView(DirTree(root), cards=DocCards(folder))
    card = view.page_card(rel)
    assert card == {"title": "Ada", "aliases": ["A."], "line": "- [[ada|Ada]]: A friend."}
    view.cards.save()
    assert DocCards(folder).get(rel) == [blob_id(page.read_bytes()), card]
    assert DocCards(folder, version="other").get(rel) is None
    page.write_text(page.read_text(encoding="utf-8").replace("A friend.", "An old friend."), encoding="utf-8")
    fresh = BrainView(DirTree(root), cards=DocCards(folder))
    assert fresh.page_card(rel)["line"] == "- [[ada|Ada]]: An old friend."
    for f in folder.glob("*.json"):
        f.write_bytes(b"\xff\xfe garbage")
    assert DocCards(folder).get(rel) is None


def test_the_live_and_the_staged_version_of_a_page_keep_their_cards(tmp_path: Path):
    from brain.tree import MemTree, OverlayTree

    root = tmp_path / "brain"
    rel = "knowledge/people/ada.md"
    (root / rel).parent.mkdir(parents=True)
    (root / rel).write_text("---\ntitle: Ada\ntype: person\nsummary: A friend.\n---\n# Ada\n", encoding="utf-8")
    live = DirTree(root)
    staged = OverlayTree(live, MemTree({rel: "---\ntitle: Ada\ntype: person\nsummary: An old friend.\n---\n# Ada\n"}, tmp_path / "staged"))
    cards = DocCards()
    built: list[str] = []

    def parse(tree):
        def parse_in(path: str):
            built.append(type(tree).__name__)
            return BrainView(tree).doc(path)
        return parse_in

    lines = {"live": "- [[ada|Ada]]: A friend.", "staged": "- [[ada|Ada]]: An old friend."}
    # A run asks for both versions in turn (live index lines, staged index lines, each gate check):
    # each is built once, and the one asked last is the one kept on disk.
    for _ in range(3):
        assert cards.page(rel, live, parse(live))["line"] == lines["live"]
        assert cards.page(rel, staged, parse(staged))["line"] == lines["staged"]
    assert built == ["DirTree", "OverlayTree"]
    assert cards.get(rel)[0] == blob_id(staged.read_bytes(rel))
    assert cards.page(rel, live, parse(live))["line"] == lines["live"]
    assert cards.get(rel)[0] == blob_id((root / rel).read_bytes())
    # A third version is built; the two before it are not all kept: one is put aside at a time.
    third = OverlayTree(live, MemTree({rel: "---\ntitle: Ada\ntype: person\nsummary: A new friend.\n---\n# Ada\n"}, tmp_path / "third"))
    assert cards.page(rel, third, parse(third))["line"] == "- [[ada|Ada]]: A new friend."
    assert cards.page(rel, live, parse(live))["line"] == lines["live"]
    assert cards.page(rel, staged, parse(staged))["line"] == lines["staged"]
    assert built == ["DirTree", "OverlayTree", "OverlayTree", "OverlayTree"]
    # A dropped card (found corrupt) is forgotten in both places: it is built again.
    cards.drop(rel)
    assert cards.page(rel, live, parse(live))["line"] == lines["live"]
    assert built[-1] == "DirTree" and len(built) == 5


def test_session_hashes_take_the_cache_only_where_git_vouches(tmp_path: Path):
    from dream.state import content_hash

    root = tmp_path / "brain"
    raw = root / "sessions/raw"
    raw.mkdir(parents=True)
    for sid in ("a", "b", "c"):
        (raw / f"{sid}.jsonl").write_bytes(f'{{"type":"session","id":"{sid}"}}\n'.encode())
    paths = [f"sessions/raw/{sid}.jsonl" for sid in ("a", "b", "c")]
    truth = {p: content_hash((root / p).read_bytes()) for p in paths}
    cache = DocCache(tmp_path / "cards")
    assert cache.session_hashes(paths, DirTree(root)) == truth  # cold: each file is read
    cache.save()
    store = tmp_path / "cards" / DocCache.HASHES_FILE
    keys = {p: blob_id((root / p).read_bytes()) for p in paths}
    assert _store_lines(store) == [f"{p}\t{keys[p]}\t{truth[p]}" for p in paths]
    # A line whose blob id is the file's is believed; a stale blob id or a malformed line is not.
    lines = _store_lines(store)
    lines[0] = f"{paths[0]}\t{keys[paths[0]]}\t{'0' * 64}"  # a wrong hash, under the right key: believed
    lines[1] = f"{paths[1]}\t{'f' * 40}\t{'0' * 64}"  # a stale key: the file is read again
    lines[2] = f"{paths[2]}\t{keys[paths[2]]}\t7"  # not a hash: read again
    store.write_bytes(store.read_bytes().partition(b"\n")[0] + b"\n" + _batch(lines))
    warm = DocCache(tmp_path / "cards")
    got = warm.session_hashes(paths, DirTree(root, keys=keys))
    assert got == {paths[0]: "0" * 64, paths[1]: truth[paths[1]], paths[2]: truth[paths[2]]}
    before = store.read_bytes()
    warm.save()  # what was read again is remembered: appended as one batch, a later line winning
    assert store.read_bytes().startswith(before)
    assert _store_lines(store)[3:] == [f"{p}\t{keys[p]}\t{truth[p]}" for p in paths[1:]]
    assert DocCache(tmp_path / "cards").session_hashes(paths, DirTree(root, keys=keys)) == got
    fewer = DocCache(tmp_path / "cards")
    fewer.session_hashes(paths[1:], DirTree(root, keys=keys))
    fewer.save()  # a path no longer asked about (its session was removed) is forgotten: written whole
    assert _store_lines(store) == [f"{p}\t{keys[p]}\t{truth[p]}" for p in paths[1:]]
    # Other code's file is not believed.
    other = DocCache(tmp_path / "cards", version="other")
    assert other.session_hashes(paths, DirTree(root, keys=keys)) == truth
    # Without git's word (no keys) each file is read for its key, and the card under it is used.
    assert DocCache(tmp_path / "cards").session_hashes(paths, DirTree(root)) == truth


def _store_lines(store: Path) -> list[str]:
    """A LineStore file's entry lines, without its version line and batch trailers."""
    return [line for line in store.read_text().splitlines()[1:] if not line.startswith("\t")]


def _batch(lines: list[str]) -> bytes:
    """Lines as one LineStore batch, with the trailer that vouches for them."""
    import zlib

    body = "".join(line + "\n" for line in lines).encode()
    return body + f"\tend\t{len(lines)}\t{zlib.crc32(body):08x}\n".encode()


def test_state_renders_exactly_as_json_dumps():
    import random

    from dream.state import dumps_indented

    rnd = random.Random(1)

    def value(depth: int):
        c = rnd.random()
        if depth > 3 or c < 0.3:
            return rnd.choice(["a", 'é"\\\n\u2028x', "", 0, -5, 10**20, True, False, None, "zz\x00", 1.5])
        if c < 0.6:
            return [value(depth + 1) for _ in range(rnd.randint(0, 3))]
        return {rnd.choice(["k", "é", "a b", '"q', ""]) + str(rnd.randint(0, 9)): value(depth + 1) for _ in range(rnd.randint(0, 4))}

    for _ in range(2000):
        data = value(0)
        assert dumps_indented(data) == json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False)
    assert dumps_indented({1: 2}) == json.dumps({1: 2}, indent=1, sort_keys=True, ensure_ascii=False)

    # The shapes state.json is made of, which have a path of their own: path → blob id, and
    # session → {hash, run, turns}; each with the odd value that must take the general path.
    odd = ['é', 'a"b', "a\\b", "tab\t", "\x00", "\x1f", "\x7f", "\u2028", "\ud800", "", " "]
    for _ in range(800):
        n = rnd.randint(1, 6)
        keys = [rnd.choice(["notes/a/x.md", "s1", "b", *odd]) + str(i) for i in range(n)]
        strings = lambda: [rnd.choice(["notes/a/x.md", "s1", *odd]) for _ in range(rnd.choice([0, 1, 3]))]  # noqa: E731
        shape = rnd.random()
        if shape < 0.35:
            data = {k: rnd.choice(["0123abcd", "", *odd]) for k in keys}
        elif shape < 0.5:  # page slug → note paths (mentions)
            data = {k: strings() if rnd.random() < 0.95 else rnd.choice([[1], ["a", None], [["x"]], "x"]) for k in keys}
        else:  # the entities' rows hold a list column (sessions)
            cols = rnd.choice([["hash", "run", "turns"], ["turns"], ["a\\", "b"], ["é", "z"], ["name", "sessions", "slug"]])
            data = {k: {c: rnd.choice([rnd.randint(-3, 10**20), "r1", "x", strings()] + ([True, None, 1.5, "q\"", "\n", [2]] if rnd.random() < 0.2 else []))
                        for c in cols if rnd.random() < 0.95} for k in keys}
            if rnd.random() < 0.5:  # a column all lists
                data = {k: {**row, "sessions": strings()} for k, row in data.items()}
        data = {"top": data} if rnd.random() < 0.5 else data
        assert dumps_indented(data) == json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False), data


def test_a_save_rewrites_only_the_buckets_that_changed(tmp_path: Path):
    from brain.doccache import NOTE_BUCKETS, shard_of

    folder = tmp_path / "cards"
    cards = DocCards(folder)
    paths = [f"notes/owner/fact-{i}.md" for i in range(300)]
    for p in paths:
        cards.remember(p, p.encode(), {"n": p})
    cards.save()
    files = sorted(folder.glob("*.json"))
    assert 1 < len(files) <= NOTE_BUCKETS
    before = {f: f.read_bytes() for f in files}
    again = DocCards(folder)
    assert all(again.get(p) == [blob_id(p.encode()), {"n": p}] for p in paths)
    again.remember(paths[7], b"new", {"n": "new"})
    again.save()
    changed = [f for f in files if f.read_bytes() != before[f]]
    assert len(changed) == 1
    assert json.loads(changed[0].read_bytes())["shard"] == shard_of(paths[7])
    assert DocCards(folder).get(paths[7]) == [blob_id(b"new"), {"n": "new"}]
    assert DocCards(folder).get(paths[8]) == [blob_id(paths[8].encode()), {"n": paths[8]}]


def test_documents_of_a_staged_tree_are_those_a_full_listing_finds(tmp_path: Path):
    from brain.tree import MemTree, OverlayTree
    from brain.view import doc_kind, doc_paths_of

    live = tmp_path / "live"
    for rel in ("knowledge/people/ada.md", "knowledge/people/ben.md", "notes/ada/a.md", "sessions/summaries/s1.md", "guide.md", "knowledge/index.md"):
        (live / rel).parent.mkdir(parents=True, exist_ok=True)
        (live / rel).write_text("x\n", encoding="utf-8")
    (live / "notes/ada/link.md").symlink_to(live / "notes/ada/a.md")
    (live / "knowledge/people/cleo.md").symlink_to(live / "knowledge/people/ada.md")
    base = DirTree(live)
    assert doc_paths_of(base) == ["knowledge/people/ada.md", "knowledge/people/ben.md", "notes/ada/a.md", "sessions/summaries/s1.md"]
    staged = {"knowledge/people/cleo.md": "y\n", "notes/ben/b.md": "y\n", "knowledge/index.md": "y\n", "sessions/summaries/s0.md": "y\n"}
    for deleted in (frozenset(), frozenset({"knowledge/people/ben.md", "notes/ben/b.md"})):
        tree = OverlayTree(base, MemTree(staged, tmp_path / "staged"), deleted=deleted)
        naive = [rel for rel in sorted((set(base.files()) | set(staged)) - deleted) if doc_kind(rel) and not tree.is_symlink(rel)]
        assert tree.files() == sorted((set(base.files()) | set(staged)) - deleted)
        assert doc_paths_of(tree) == naive
        assert BrainView(tree).paths_under("knowledge/") == [p for p in naive if p.startswith("knowledge/")]
        assert tree.symlinks() == [rel for rel in tree.files() if tree.is_symlink(rel)]
    upper = tmp_path / "upper"
    (upper / "knowledge/people").mkdir(parents=True)
    (upper / "knowledge/people/ada.md").symlink_to(live / "guide.md")  # a linked file hides the live page
    (upper / "knowledge/people/cleo.md").write_text("a file where the live tree has a link\n", encoding="utf-8")
    over = OverlayTree(base, DirTree(upper))
    assert "knowledge/people/ada.md" not in doc_paths_of(over)
    assert base.symlinks() == ["knowledge/people/cleo.md", "notes/ada/link.md"]
    assert over.symlinks() == [rel for rel in over.files() if over.is_symlink(rel)] == ["knowledge/people/ada.md", "notes/ada/link.md"]


def test_the_one_pass_document_listing_is_the_per_path_one():
    """brain.view._documents finds in one regex pass what `_kind` finds path by path."""
    import random

    from brain.view import _documents, doc_kind

    parts = ["notes", "knowledge", "sessions", "summaries", "raw", "people", "", "a b", "x.md", ".md", "md",
             "index.md", "log.md", "n\nl", "notes.md", "é", "sessions/summaries", "knowledge/people", "s1.jsonl"]
    rng = random.Random(7)
    roots = ["notes/", "knowledge/", "sessions/summaries/", "sessions/", "", "notes/ada/", "knowledge/people/"]
    files = sorted({rng.choice(roots) + "/".join(rng.choice(parts) for _ in range(rng.randint(1, 3))) for _ in range(20000)}
                   | {"knowledge/index.md", "knowledge/log.md", "sessions/index.md", "notes//.md", "sessions/summaries/.md"})
    expected = [rel for rel in files if doc_kind(rel)]
    assert len(expected) > 50 and {doc_kind(rel) for rel in expected} == {"page", "note", "summary"}
    assert _documents(files) == expected
    runs = document_runs(files)
    assert all(0 <= start < end <= len(files) for start, end in runs)
    assert all(a[1] < b[0] for a, b in zip(runs, runs[1:]))  # in order, apart: none could be joined
    assert [rel for start, end in runs for rel in files[start:end]] == expected


def test_a_listing_given_with_its_document_runs_lists_the_documents_a_walk_finds(tmp_path: Path):
    """The forked walker says where the documents are among the files it sends (brain.listing):
    a tree given that lists them from it; runs that cannot be the listing's are not used."""
    from brain.tree import walk_sorted
    from brain.view import doc_paths_of

    root = tmp_path / "brain"
    for rel in ("knowledge/index.md", "knowledge/people/ada.md", "knowledge/people/ben.md", "knowledge/people/x.txt",
                "notes/ada/one.md", "notes/ada/deep/two.md", "notes/ben/three.md", "sessions/summaries/s1.md", "guide.md"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("x\n", encoding="utf-8")
    files, links = walk_sorted(root)
    expected = ["knowledge/people/ada.md", "knowledge/people/ben.md", "notes/ada/one.md", "notes/ben/three.md", "sessions/summaries/s1.md"]
    assert doc_paths_of(DirTree(root)) == expected
    runs = document_runs(files)
    given = DirTree(root, listing=lambda: (files, links, runs))
    assert given.document_runs() == runs and doc_paths_of(given) == expected
    # Told where they are, the tree takes it: these are the given ranges' paths, not a walk's.
    told = DirTree(root, listing=lambda: (files, links, [(1, 2)]))
    assert doc_paths_of(told) == files[1:2]
    for bad in ([(0, len(files) + 1)], [(3, 2)], [(2, 4), (3, 5)], [[0, 1]], [(0, "1")], [(-1, 2)]):
        tree = DirTree(root, listing=lambda bad=bad: (files, links, bad))
        assert tree.document_runs() is None and doc_paths_of(tree) == expected, bad


def test_a_tree_answers_from_its_listing_alike_by_bisection_and_by_set(tmp_path: Path, monkeypatch):
    """DirTree.exists and is_symlink take a listed path's answer from the listing (by bisection,
    then from a set once asked often) and ask the disk about the rest."""
    import brain.tree as tree_module

    root = tmp_path / "brain"
    for rel in ("a.md", "b/c.md", "d.md"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("x\n", encoding="utf-8")
    (root / "e.md").symlink_to(root / "a.md")
    keys = {"a.md": "1", "d.md": "2", "e.md": "3", "z.md": "4"}
    asked = ["a.md", "b/c.md", "d.md", "e.md", "b", "z.md", "b/c", "0", "~"] * 3
    answers = []
    for after in (10**9, 2):
        monkeypatch.setattr(tree_module, "LISTED_SET_AFTER", after)
        tree = DirTree(root, keys=keys)
        listed = tree.files()
        (root / "d.md").unlink()  # gone since the listing, which vouches for it (git had its key)
        (root / "z.md").write_text("new\n", encoding="utf-8")  # new since: not listed, asked of the disk
        got = [(tree.exists(rel), tree.is_symlink(rel)) for rel in asked]
        want = [((rel in listed and rel in keys) or os.path.isfile(root / rel),
                 rel in tree.symlinks() if rel in listed else os.path.islink(root / rel)) for rel in asked]
        assert got == want and tree._listed.hashed == (after == 2)
        answers.append(got)
        (root / "d.md").write_text("x\n", encoding="utf-8")
        (root / "z.md").unlink()
    assert answers[0] == answers[1] and answers[0][2] == (True, False) and answers[0][3] == (True, True)


def test_a_name_shared_by_pages_notes_and_summaries_resolves_to_all_of_them(tmp_path: Path):
    from brain.tree import MemTree

    def page(title: str, aliases: str = "") -> str:
        return f"---\ntitle: {title}\ntype: person\naliases: [{aliases}]\n---\n# {title}\n"

    files = {
        "knowledge/people/ada.md": page("Ada", "Tea"),
        "knowledge/people/tea.md": page("Tea"),
        "notes/ada/tea.md": "n\n",
        "notes/ben/tea.md": "n\n",
        "notes/ben/Likes-Tea.md": "n\n",
        "notes/cleo/likes-tea.md": "n\n",
        "notes/cleo/only-here.md": "n\n",
        "sessions/summaries/s1.md": "s\n",
        "notes/ada/s1.md": "n\n",
        "sessions/summaries/s2.md": "s\n",
    }
    view = BrainView(MemTree(files, tmp_path))
    assert view.resolve("TEA") == ["knowledge/people/ada.md", "knowledge/people/tea.md", "notes/ada/tea.md", "notes/ben/tea.md"]
    assert view.resolve("likes-tea") == ["notes/ben/Likes-Tea.md", "notes/cleo/likes-tea.md"]
    assert view.resolve("s1") == ["notes/ada/s1.md", "sessions/summaries/s1.md"]
    assert view.resolve(" only-here ") == ["notes/cleo/only-here.md"]
    assert view.resolve("s2") == ["sessions/summaries/s2.md"]
    assert view.resolve("ada") == ["knowledge/people/ada.md"]
    assert view.resolve("nobody") == []


def test_index_lines_of_a_staged_tree_follow_its_writes_and_drops(tmp_path: Path):
    from types import SimpleNamespace

    from dream.run import _index_entries
    from dream.staging import StagedTree

    def page(title: str, summary: str) -> str:
        return f"---\ntitle: {title}\ntype: person\nsummary: {summary}\n---\n# {title}\n"

    def summary(sid: str, started: str) -> str:
        return f"---\ntitle: Session {sid}\ntype: summary\nstarted: {started}\nsummary: Talked.\n---\n# {sid}\n"

    live = tmp_path / "live"
    files = {
        "knowledge/people/ada.md": page("Ada", "A friend."),
        "knowledge/people/ben.md": page("Ben", "A colleague."),
        "sessions/summaries/s1.md": summary("s1", "2026-01-01T09:00:00+00:00"),
    }
    for rel, text in files.items():
        (live / rel).parent.mkdir(parents=True, exist_ok=True)
        (live / rel).write_text(text, encoding="utf-8")
    tree = DirTree(live)
    cards = DocCache(tmp_path / "cards")
    staged = StagedTree(tmp_path / "staged", tree)
    comp = SimpleNamespace(view=BrainView(tree, cards=cards), staged=staged, cache=cards, live_index=None)

    def expected():  # what a fresh view of the staged tree lists
        view = BrainView(staged.overlay(), cards=DocCache())
        lines = {p: c["line"] for p in view.page_paths if (c := view.page_card(p)) is not None}
        entries = {p.rsplit("/", 1)[1][:-3]: (c["started"], c["line"]) for p in view.paths_under("sessions/summaries/") if (c := view.summary_card(p)) is not None}
        return lines, entries

    assert _index_entries(comp) == expected()
    staged.write("knowledge/people/ben.md", page("Ben", "A manager now."))
    staged.write("knowledge/people/cleo.md", page("Cleo", "New."))
    staged.write("knowledge/people/ada.md", "---\ntitle: [unclosed\n---\n")  # does not parse: no line
    staged.write("sessions/summaries/s2.md", summary("s2", "2026-02-01T09:00:00+00:00"))
    lines, entries = _index_entries(comp)
    assert (lines, entries) == expected()
    assert "knowledge/people/ada.md" not in lines and "manager" in lines["knowledge/people/ben.md"] and set(entries) == {"s1", "s2"}
    for rel in ("knowledge/people/ben.md", "knowledge/people/ada.md", "sessions/summaries/s2.md"):
        staged.drop(rel)  # the live file's line comes back
    assert _index_entries(comp) == expected()
    assert "A colleague." in _index_entries(comp)[0]["knowledge/people/ben.md"]


def test_indexes_are_rendered_again_only_when_a_staged_line_changed(tmp_path: Path):
    from types import SimpleNamespace

    from brain.render import render_knowledge_index_lines, render_sessions_index_lines
    from dream.run import _index_entries, _index_texts
    from dream.staging import StagedTree

    live = tmp_path / "live"
    (live / "knowledge/people").mkdir(parents=True)
    (live / "knowledge/people/ada.md").write_text("---\ntitle: Ada\ntype: person\nsummary: A friend.\n---\n# Ada\n", encoding="utf-8")
    tree = DirTree(live)
    cards = DocCache(tmp_path / "cards")
    staged = StagedTree(tmp_path / "staged", tree)
    comp = SimpleNamespace(view=BrainView(tree, cards=cards), staged=staged, cache=cards, live_index=None, index_memo=None)

    def fresh():
        lines, entries = _index_entries(comp)
        return render_knowledge_index_lines(lines), render_sessions_index_lines(entries)

    staged.write("knowledge/people/ben.md", "---\ntitle: Ben\ntype: person\nsummary: New.\n---\n# Ben\n")
    first = _index_texts(comp)
    assert first == fresh() and "[[ben|Ben]]" in first[0]
    staged.write("knowledge/log.md", "# Log\n\n- another entry\n")  # not a document with an index line
    assert _index_texts(comp) is first  # nothing it lists changed: the same texts, not rendered again
    staged.drop("knowledge/people/ben.md")  # the gate dropped it
    again = _index_texts(comp)
    assert again == fresh() and "ben" not in again[0]


def test_a_background_save_writes_what_a_save_here_writes(tmp_path: Path):
    paths = [f"notes/owner/fact-{i}.md" for i in range(300)] + ["knowledge/people/ada.md"]
    saved = {}
    for how in ("here", "background"):
        cards = DocCards(tmp_path / how)
        for p in paths:
            cards.remember(p, p.encode(), {"n": p})
        cards.save(background=(how == "background"))
        cards.wait()
        cards.wait()  # reaped once; a second wait returns at once
        saved[how] = {f.name: f.read_bytes() for f in sorted((tmp_path / how).glob("*"))}
    assert saved["background"] == saved["here"]
    assert len(saved["here"]) > 1 and not any(name.endswith(".tmp") for name in saved["here"])


def test_a_save_over_an_earlier_one_replaces_its_files(tmp_path: Path):
    # Each file is removed before its new copy takes the name (ext4 flushes a rename over a file).
    folder = tmp_path / "cards"
    for round_ in range(2):
        cards = DocCards(folder)
        for i in range(5):
            cards.remember(f"notes/owner/fact-{i}.md", f"{round_}".encode(), {"round": round_})
        cards.keep_file("snapshot.bin", f"kept {round_}".encode())
        cards.save()
    again = DocCards(folder)
    assert (folder / "snapshot.bin").read_bytes() == b"kept 1"
    assert [again.get(f"notes/owner/fact-{i}.md")[1] for i in range(5)] == [{"round": 1}] * 5
    assert not [p for p in folder.rglob("*") if p.name.endswith(".tmp")]


def test_a_small_background_save_is_written_here_at_once(tmp_path: Path, monkeypatch):
    # A nightly run's few dozen files: forking the run's large process would cost more than writing them.
    monkeypatch.setattr(doccache, "run_forked", lambda fn: pytest.fail("a small save forked a writer"))
    cards = DocCards(tmp_path / "cards")
    for i in range(3):
        cards.remember(f"notes/owner/fact-{i}.md", b"x", {"n": i})
    cards.keep_file("snapshot.bin", b"kept")
    cards.save(background=True)
    assert (tmp_path / "cards" / "snapshot.bin").read_bytes() == b"kept"
    assert DocCards(tmp_path / "cards").get("notes/owner/fact-2.md") is not None


@pytest.mark.parametrize("notes", [1, doccache.BACKGROUND_MIN_FILES * 2], ids=["here", "forked"])
def test_a_background_save_that_fails_costs_only_the_cache(tmp_path: Path, notes: int):
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    cards = DocCards(blocked / "cards")  # cannot be made: the writer fails
    for i in range(notes):
        cards.remember(f"notes/owner/a{i}.md", b"a", {"n": 1})
    cards.save(background=True)
    cards.wait()  # returns; nothing is raised here
    assert DocCards(blocked / "cards").get("notes/owner/a0.md") is None
    with pytest.raises(OSError):
        cards.remember("notes/owner/b.md", b"b", {"n": 2})
        cards.save()  # a save here still says why


def test_dream_cli_starts_git_scan_before_heavy_imports():
    """`dream run` starts WorktreeScan before it imports the compiler: the CLI module and
    brain.scan must load without pydantic, or git's stat of every file waits for ~0.3 s of imports."""
    import subprocess
    import sys

    probe = "import sys, dream.cli, brain.scan; print(sorted(m for m in ('pydantic', 'brain.repo', 'dream.run') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_a_run_with_the_walk_forked_commits_what_a_run_walking_itself_commits(compiled_copy: Path, tmp_path: Path, monkeypatch):
    import dream.run as run_module

    other = copy_brain(compiled_copy, tmp_path / "other")
    trees = {}
    for root, threshold in ((compiled_copy, 10**12), (other, 0)):  # walked here; walked by a forked child
        monkeypatch.setattr(run_module, "WALK_AHEAD_MIN_INDEX", threshold)
        add_session(root, "2026-07-20-moving", "2026-07-20T09:00:00+00:00", NEW_TURNS)
        report = dream(root, "2026-07-21T02:00:00Z")
        assert report.status == "ok" and report.commit
        trees[threshold] = git(root, "rev-parse", "HEAD^{tree}")
    assert trees[0] == trees[10**12]


def test_dirtree_takes_a_listing_given_and_walks_when_it_is_not_one(tmp_path: Path):
    from brain.tree import walk_sorted

    root = tmp_path / "brain"
    for rel in ("knowledge/people/ada.md", "notes/ada/one.md", ".dream/state.json", ".dream/runs/r/x.md"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("x\n", encoding="utf-8")
    (root / "knowledge/people/link.md").symlink_to(root / "knowledge/people/ada.md")
    walked = DirTree(root)
    assert walk_sorted(root) == (walked.files(), walked.symlinks())
    assert walked.files() == [".dream/state.json", "knowledge/people/ada.md", "knowledge/people/link.md", "notes/ada/one.md"]
    given = DirTree(root, listing=lambda: (["a.md"], []))
    assert given.files() == ["a.md"]  # what the walker saw is what the tree lists
    for failed in (None, "garbage", ([], None)):  # a child that died, or sent something else
        tree = DirTree(root, listing=lambda failed=failed: failed)
        assert tree.files() == walked.files() and tree.symlinks() == walked.symlinks()
        assert tree.is_symlink("knowledge/people/link.md")


def test_a_run_that_stops_before_the_listing_leaves_no_walker_behind(compiled_copy: Path, monkeypatch):
    import dream.run as run_module
    from brain.errors import BrainError

    import brain.listing as listing_module

    monkeypatch.setattr(run_module, "WALK_AHEAD_MIN_INDEX", 0)
    started = []
    real = listing_module.start_helper  # the walker stays to serve the run's last writes
    monkeypatch.setattr(listing_module, "start_helper", lambda fn, serve: started.append(real(fn, serve)) or started[-1])
    state = compiled_copy / ".dream/state.json"
    state.write_text(json.dumps({**json.loads(state.read_text(encoding="utf-8")), "version": 99}), encoding="utf-8")
    with pytest.raises(BrainError, match="newer Dream"):
        dream(compiled_copy, "2026-07-21T02:00:00Z")
    assert len(started) == 1 and started[0].pid == 0  # stopped and reaped, not left blocked on its pipe


def test_a_line_store_keeps_any_text_and_ignores_lines_of_the_wrong_shape():
    from brain.doccache import LineStore

    store = LineStore(None, "v1", 2)
    odd = ("a\tb\\c\nd\\t", "")
    store.put("sessions/summaries/x.md", "a" * 40, odd)
    store.put("sessions/summaries/y.md", "b" * 40, ("2024-01-01", "- line"))
    store.put("bad\tpath.md", "c" * 40, ("x", "y"))  # not kept: a tab would break its line
    raw = store.render()
    again = LineStore(raw, "v1", 2)
    assert again.get("sessions/summaries/x.md", "a" * 40) == odd
    assert again.get("sessions/summaries/y.md", "b" * 40) == ("2024-01-01", "- line")
    assert again.get("sessions/summaries/y.md", "f" * 40) is None  # another blob: built again
    assert again.get("bad\tpath.md", "c" * 40) is None
    assert not again.dirty
    torn = raw + b"sessions/summaries/z.md\t" + b"c" * 40 + b"\tonly one field\n" + b"short\tline\n"
    assert set(LineStore(torn, "v1", 2).entries) == {"sessions/summaries/x.md", "sessions/summaries/y.md"}
    assert LineStore(raw, "v2", 2).entries == {}  # written by other code
    again.keep_only(["sessions/summaries/y.md"])
    assert again.dirty and list(LineStore(again.render(), "v1", 2).entries) == ["sessions/summaries/y.md"]


def test_a_line_store_ignores_wrong_lines_inside_a_batch_it_vouches_for():
    """Lines are split when asked (LineStore): one of the wrong shape in a batch whose trailer
    matches (a hand edit) counts as no entry, asked alone or listed, and the others load."""
    from brain.doccache import LineStore

    a = "a" * 40
    lines = [f"x\t{a}\tone", "no tab at all", f"y\t{'b' * 39}\tshort blob", f"z\t{a}\ttoo\tmany", f"w\t{a}\ta\\\\b\\tc"]
    raw = b"version v1\n" + _batch(lines)
    store = LineStore(raw, "v1", 1)
    assert store.get("x", a) == ("one",)
    assert store.get("y", "b" * 39) is None and store.get("z", a) is None
    assert store.get("w", a) == ("a\\b\tc",)  # escaped in the file: a backslash, a tab
    assert LineStore(raw, "v1", 1).entries == {"x": (a, "one"), "w": (a, "a\\b\tc")}
    assert not store.dirty
    store.put("y", a, ("now right",))  # a path whose line was wrong is put as new
    assert store.dirty and LineStore(raw + store.batch(), "v1", 1).get("y", a) == ("now right",)


def _line_store_reference(batches: list[list[str]]) -> dict[str, tuple[str, ...]]:
    """What a LineStore of width 1 holds, by definition: the last line for each path over all its
    batches, when that line has the store's shape."""
    last = {}
    for lines in batches:
        for line in lines:
            if "\t" in line:
                path, rest = line.split("\t", 1)
                last[path] = rest
    return {path: tuple(parts) for path, rest in last.items() if len(parts := rest.split("\t")) == 2 and len(parts[0]) == 40}


@pytest.mark.parametrize("seed", range(300))
def test_a_line_store_looked_up_by_bisection_holds_what_every_line_says(seed: int) -> None:
    """The first batch, sorted as render() writes it, is searched by bisection when a path is asked
    (LineStore): asked, put and listed, the store answers as the definition over every line does,
    with later batches (lines of the wrong shape among them), repeated paths and unsorted batches."""
    import random

    from brain.doccache import LineStore

    rng = random.Random(seed)
    names = ["a", "a-b", "a/b", "b", "ab", "c", "c c", "d"]
    blobs = ["1" * 40, "2" * 40, "3" * 39]

    def line() -> str:
        shape = rng.random()
        if shape < 0.8:
            return f"{rng.choice(names)}\t{rng.choice(blobs)}\t{rng.choice(['x', 'y', ''])}"
        return rng.choice([f"{rng.choice(names)}\t{blobs[0]}", "no tab", f"{rng.choice(names)}\t{blobs[1]}\tx\ty"])

    first = [line() for _ in range(rng.randrange(0, 12))]
    if rng.random() < 0.8:
        first.sort()
    batches = [first] + [[line() for _ in range(rng.randrange(0, 4))] for _ in range(rng.randrange(0, 3))]
    raw = b"version v1\n" + b"".join(_batch(lines) for lines in batches)
    expected = _line_store_reference(batches)
    assert LineStore(raw, "v1", 1).entries == expected
    store = LineStore(raw, "v1", 1)
    for _ in range(12):
        path = rng.choice([*names, "e", "a\t" + "1" * 40])
        if rng.random() < 0.3 and "\t" not in path:
            entry = (rng.choice(blobs[:2]), rng.choice(["p", "q"]))
            store.put(path, *entry[:1], entry[1:])
            expected[path] = entry
        blob = expected[path][0] if path in expected and rng.random() < 0.8 else rng.choice(blobs)
        want = expected[path][1:] if path in expected and expected[path][0] == blob else None
        assert store.get(path, blob) == want, (path, blob)
    assert store.entries == expected
    assert LineStore(store.render(), "v1", 1).entries == expected


def test_a_line_store_appends_what_changed_and_ignores_a_torn_batch():
    from brain.doccache import LineStore

    a, b, c = "a" * 40, "b" * 40, "c" * 40
    store = LineStore(None, "v1", 1)
    store.put("x", a, ("one",))
    store.put("y", a, ("two",))
    assert store.batch() is None  # no file yet: written whole
    raw = store.render()
    again = LineStore(raw, "v1", 1)
    again.put("y", b, ("three",))  # changed
    again.put("z", a, ("four",))  # new
    again.put("x", a, ("one",))  # the same: not written
    batch = again.batch()
    assert batch is not None and batch.count(b"\n") == 3  # two lines and the trailer
    assert not again.dirty and again.batch() == b"\tend\t0\t00000000\n"
    grown = LineStore(raw + batch, "v1", 1)
    assert grown.entries == {"x": (a, "one"), "y": (b, "three"), "z": (a, "four")}
    assert not grown.dirty
    # A torn append (the process died mid-write): that batch is ignored, the file written whole next.
    for cut in (1, len(batch) // 2, len(batch) - 1):
        torn = LineStore(raw + batch[:cut], "v1", 1)
        assert torn.entries == {"x": (a, "one"), "y": (a, "two")}
        torn.put("w", c, ("five",))
        assert torn.batch() is None
        assert LineStore(torn.render(), "v1", 1).entries == {"x": (a, "one"), "y": (a, "two"), "w": (c, "five")}
    # A batch whose bytes were changed after it was written is not believed, nor what follows it.
    forged = raw + batch.replace(b"three", b"thrEE") + LineStore(raw, "v1", 1).batch()
    assert LineStore(forged, "v1", 1).entries == {"x": (a, "one"), "y": (a, "two")}
    # An entry put since the file was read and then forgotten is only not appended.
    fresh = LineStore(raw, "v1", 1)
    fresh.put("n", c, ("new",))
    fresh.keep_only(["x", "y"])
    assert not fresh.dirty
    fresh.put("n", c, ("new",))
    assert LineStore(raw + fresh.batch(), "v1", 1).entries["n"] == (c, "new")
    # A removal of a line the file holds (changed since or not), or too many batches, writes it whole.
    changed = LineStore(raw, "v1", 1)
    changed.put("y", c, ("changed",))
    changed.keep_only(["x"])
    assert changed.dirty and changed.batch() is None
    grown.keep_only(["x", "z"])
    assert grown.dirty and grown.batch() is None
    many = raw
    for i in range(LineStore.MAX_BATCHES - 1):  # the whole file is the first batch
        step = LineStore(many, "v1", 1)
        step.put("x", a, (f"v{i}",))
        many += step.batch()
    last = LineStore(many, "v1", 1)
    assert last.entries["x"] == (a, f"v{LineStore.MAX_BATCHES - 2}")
    last.put("x", a, ("again",))
    assert last.batch() is None


@pytest.mark.parametrize("by_map", [False, True], ids=["by-folder", "by-map"])
@pytest.mark.parametrize("seed", range(20))
def test_resolve_finds_every_document_whose_folded_name_is_asked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int, by_map: bool):
    """resolve() looks a name up per folder, then (asked many names) in a map of every stem; both
    give what a map of every document's folded name gives, capitals, ß, shared stems and aliases included."""
    import random
    from collections import defaultdict

    from brain import view as view_module
    from brain.tree import MemTree
    from brain.view import doc_kind

    monkeypatch.setattr(view_module, "RESOLVE_MAP_AFTER", 0 if by_map else 10**6)
    rng = random.Random(seed)
    stems = ["tea", "Tea", "TEA", "straße", "strasse", "s1", "ada", "Ada-B", "x", "only", "a", "zz", "tea-2", "tea.x", "ada-c"]
    files = {}
    for _ in range(rng.randrange(5, 40)):
        folder = rng.choice(["notes/ada/", "notes/Ben/", "notes/cleo/", "sessions/summaries/", "knowledge/people/"])
        stem = rng.choice(stems)
        if folder == "knowledge/people/":
            stem = stem.lower()
            aliases = ", ".join(rng.sample(stems, rng.randrange(3)))
            files[f"{folder}{stem}.md"] = f"---\ntitle: {stem}\ntype: person\naliases: [{aliases}]\n---\n# {stem}\n"
        else:
            files[f"{folder}{stem}.md"] = "n\n"
    view = BrainView(MemTree(files, tmp_path))
    names: dict[str, set[str]] = defaultdict(set)
    for path in files:
        if doc_kind(path) is None:
            continue
        names[path.rsplit("/", 1)[1][:-3].casefold()].add(path)
        if doc_kind(path) == "page":
            for alias in view.page_card(path)["aliases"]:
                names[alias.strip().casefold()].add(path)
    for asked in stems + [s.upper() for s in stems] + ["nobody", "", "ada/tea", " tea ", "0", "b", "tea-1", "zzz"]:
        assert view.resolve(asked) == sorted(names.get(asked.strip().casefold(), ())), asked


@pytest.mark.parametrize("seed", range(30))
def test_folder_spans_give_every_folder_that_may_hold_a_name(seed: int):
    """FolderSpans.holding(name): exactly the folders with a span that holds the bound at or below
    the name, so every folder that holds the name (spans nested, overlapping, apart, equal, and
    several per folder, as BrainView makes them: one per first letter)."""
    import random
    from itertools import groupby

    from brain.view import FolderSpans

    rng = random.Random(seed)
    letters = "abcd"
    folders = {}
    for f in range(rng.randrange(0, 12)):
        prefix = rng.choice(["", "", rng.choice(letters)])
        folders[f"f{f}/"] = sorted({prefix + "".join(rng.choices(letters, k=rng.randrange(1, 4))) for _ in range(rng.randrange(1, 6))})
    per_letter = rng.random() < 0.5
    spans = []
    for folder, names in folders.items():
        runs = [list(run) for _, run in groupby(names, key=lambda n: n[0])] if per_letter else [names]
        spans += [(run[0], run[-1], folder) for run in runs]
    found = FolderSpans(rng.sample(spans, len(spans)))
    bounds = sorted({end for first, last, _ in spans for end in (first, last)})
    for name in {"".join(rng.choices(letters + "e", k=rng.randrange(0, 5))) for _ in range(60)} | set(bounds):
        below = [b for b in bounds if b <= name]
        expected = {f for first, last, f in spans if below and first <= below[-1] <= last}
        assert sorted(found.holding(name)) == sorted(expected), name
        assert {f for f, names in folders.items() if name in names} <= expected, name


def test_a_run_keeps_the_listing_and_the_next_run_sees_what_came_since(compiled_copy: Path, monkeypatch):
    """A large Brain's listing is kept between runs (brain.listing): a run leaves it holding its own
    files, and the next one still finds a session the owner put in without committing it."""
    import dream.run as run_module
    from brain import listing
    from brain.tree import walk_sorted

    monkeypatch.setattr(run_module, "WALK_AHEAD_MIN_INDEX", 0)
    add_session(compiled_copy, "2026-07-20-moving", "2026-07-20T09:00:00+00:00", NEW_TURNS)
    report = dream(compiled_copy, "2026-07-21T02:00:00Z")
    assert report.status == "ok" and report.commit
    assert (compiled_copy / listing.LISTING).exists()
    read = []
    real = listing.read_folder
    monkeypatch.setattr(listing, "read_folder", lambda path, at_root: read.append(path) or real(path, at_root))
    assert listing.walk_cached(compiled_copy)[:2] == walk_sorted(compiled_copy)
    if listing._libc() is not None:  # the folders the run wrote in were watched: none is read again
        assert read == []
    monkeypatch.setattr(listing, "read_folder", real)
    add_session(compiled_copy, "2026-07-22-untracked", "2026-07-22T09:00:00+00:00", NEW_TURNS, commit=False)
    report = dream(compiled_copy, "2026-07-23T02:00:00Z")
    assert report.sessions == ["2026-07-22-untracked"]
    assert listing.walk_cached(compiled_copy)[:2] == walk_sorted(compiled_copy)
