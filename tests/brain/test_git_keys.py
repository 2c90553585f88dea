"""GitKeys reads `git ls-files` output as paths are asked (bisection, or a folder parsed once); it
must answer what a parse of the whole output answers, for any path asked."""

from __future__ import annotations

import os
import random
import subprocess
from pathlib import Path

import pytest

from brain.repo import BrainRepo
from brain.scan import GitKeys, WorktreeScan
from brain.tree import DirTree


def _git(root: Path, *args: str) -> bytes:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True).stdout


def _whole_parse(listed: bytes, status: bytes) -> dict[str, str]:
    """Every key, parsed entry by entry (what `dream run` did before GitKeys)."""
    entries = [e for e in status.split(b"\0") if len(e) > 3]
    changed = {e[3:].decode("utf-8", "surrogateescape") for e in entries if e[1:2] != b" " or e[:1] == b"U"}
    keys = {}
    for entry in listed.split(b"\0"):
        head, _, rel = entry.partition(b"\t")
        path = rel.decode("utf-8", "surrogateescape")
        if head[:9] in (b"H 100644 ", b"H 100755 ") and head[49:] == b" 0" and path not in changed:
            keys[path] = head[9:49].decode("ascii")
    return keys


# Names whose order in bytes differs from a naive one: a sibling "a-b" sorts between "a" and "a/",
# "a0" right after "a/", non-ASCII after ASCII; spaces; a tab.
_NAMES = ["a", "a-b", "a.md", "a0", "ab", "b c", "é", "z", "Z", "_", "x\ty", "日本"]


def _tree(root: Path, seed: int) -> list[str]:
    rnd = random.Random(seed)
    made = []
    for _ in range(rnd.randint(1, 60)):
        depth = rnd.choice([1, 2, 2, 3])
        rel = "/".join(rnd.choice(_NAMES) for _ in range(depth)) + rnd.choice([".md", "", ".jsonl"])
        path = root / rel
        if any(p.is_file() for p in path.parents) or path.is_dir():
            continue  # a file where a folder would be, or the reverse
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"{rel} {rnd.random()}\n", encoding="utf-8")
        made.append(rel)
    return sorted(set(made))


def _committed(tmp_path: Path, seed: int) -> tuple[Path, list[str]]:
    """A repository holding the random tree of `seed`, committed; (its root, the files made)."""
    root = tmp_path / "repo"
    root.mkdir()
    _git(root, "init", "-q")
    made = _tree(root, seed)
    _git(root, "add", "-A")
    _git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "files")
    return root, made


@pytest.mark.parametrize("seed", range(12))
def test_every_answer_is_the_whole_parses(tmp_path: Path, seed: int):
    root, made = _committed(tmp_path, seed)
    rnd = random.Random(seed)
    for rel in rnd.sample(made, min(len(made), 6)):  # changed, staged, executable, deleted, assumed unchanged
        action = rnd.choice(["edit", "stage", "exec", "delete", "assume"])
        path = root / rel
        if action == "delete":
            path.unlink()
            continue
        path.write_text("changed\n", encoding="utf-8")
        if action == "stage":
            _git(root, "add", "--", rel)
        elif action == "exec":
            os.chmod(path, 0o755)
            _git(root, "add", "--", rel)
        elif action == "assume":
            _git(root, "update-index", "--assume-unchanged", "--", rel)
    (root / "untracked.md").write_text("new\n", encoding="utf-8")
    listed = _git(root, "ls-files", "-s", "-v", "-z", "--full-name")
    status = _git(root, "status", "--porcelain=v1", "-z", "--no-renames", "--untracked-files=no")
    truth = _whole_parse(listed, status)
    asked = sorted({*made, "untracked.md", "a", "a/", "zz", "", "é/é.md"} | {rel[:-1] for rel in made} | {rel + "x" for rel in made})
    for threshold in (0, 1, 1000):  # folders parsed at once, after a lookup, never
        keys = GitKeys(listed, status)
        keys.PARSE_AFTER = threshold
        for _ in range(2):  # asked twice: the second time from a parsed folder, maybe
            for rel in rnd.sample(asked, len(asked)):
                assert keys.get(rel) == truth.get(rel), (threshold, rel)
                assert (rel in keys) == (rel in truth)
    assert dict(GitKeys(listed, status)) == truth
    assert WorktreeScan(root).keys() == truth
    # A folder's entries, as the run compares them with what it kept: the files right in it that
    # have a key, each with git's entry (whose blob is the key); get() then answers from them.
    keys = GitKeys(listed, status)
    every = [e for e in listed.split(b"\0") if e]
    for folder in sorted({rel[: i + 1] for rel in made for i, c in enumerate(rel) if c == "/"} | {""}):
        right_in = {rel: key for rel, key in truth.items() if rel.startswith(folder) and "/" not in rel[len(folder):]}
        entries = keys.vouched_entries(folder)
        assert list(entries) == sorted(right_in, key=lambda r: r.encode("utf-8", "surrogateescape"))
        assert {rel: e[9:49].decode("ascii") for rel, e in entries.items()} == right_in
        assert all(e in every and e.endswith(b"\t" + rel.encode("utf-8", "surrogateescape")) for rel, e in entries.items())
        assert all(keys.get(rel) == key for rel, key in right_in.items())
    # Entries of paths, looked up one by one: whatever git lists for them, vouched for or not.
    for rel in asked:
        want = {e for e in every if e.partition(b"\t")[2] == rel.encode("utf-8", "surrogateescape")}
        assert keys.entries_of([rel]) == want, rel
    assert keys.entries_of(made) == {e for e in every if e.partition(b"\t")[2].decode("utf-8", "surrogateescape") in made}


@pytest.mark.parametrize("seed", range(12))
def test_a_folder_is_counted_clean_only_when_git_vouches_for_all_it_lists(tmp_path: Path, seed: int):
    root, made = _committed(tmp_path, seed)
    rnd = random.Random(seed)
    for rel in rnd.sample(made, min(len(made), 2)):
        (root / rel).write_text("changed\n", encoding="utf-8")
    listed = _git(root, "ls-files", "-s", "-v", "-z", "--full-name")
    status = _git(root, "status", "--porcelain=v1", "-z", "--no-renames", "--untracked-files=no")
    truth = _whole_parse(listed, status)
    keys = GitKeys(listed, status)
    folders = sorted({rel[: i + 1] for rel in made for i, c in enumerate(rel) if c == "/"})
    for folder in folders:
        below = [rel for rel in made if rel.startswith(folder)]
        clean = all(rel in truth for rel in below)
        assert keys.clean_count(folder) == (len(below) if clean else None), folder


def test_a_topic_folder_tree_is_given_only_for_exactly_its_listed_files(tmp_path: Path):
    """DirTree.folder_tree counts instead of looking each note up; it gives what the lookup gives."""
    root = tmp_path / "repo"
    for topic in ("same", "extra", "nested", "linked"):
        (root / "notes" / topic).mkdir(parents=True)
        for i in range(3):
            (root / "notes" / topic / f"n{i}.md").write_text(f"{topic} {i}\n", encoding="utf-8")
    (root / "notes/extra/readme.txt").write_text("tracked, not a note\n", encoding="utf-8")
    (root / "notes/nested/deeper").mkdir()
    (root / "notes/nested/deeper/x.md").write_text("below a topic\n", encoding="utf-8")
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "notes")
    (root / "notes/linked/n3.md").symlink_to("n0.md")  # untracked: status -uno does not name it
    (root / "notes/extra/n3.md").write_text("untracked\n", encoding="utf-8")
    scan = WorktreeScan(root)
    tree = DirTree(root, keys=scan.keys(), folders=scan.folders)
    head = {t: _git(root, "rev-parse", f"HEAD:notes/{t}").decode().strip() for t in ("same", "extra", "nested", "linked")}
    docs = {t: [f"notes/{t}/n{i}.md" for i in range(3)] for t in head}
    assert tree.folder_tree("notes/same", docs["same"]) == head["same"]
    assert tree.folder_tree("notes/nested", docs["nested"]) == head["nested"]  # the lookup of each says so too
    # An untracked note beside a tracked file that is no note: as many of each, but not the same files.
    assert tree.folder_tree("notes/extra", [*docs["extra"], "notes/extra/n3.md"]) is None
    assert tree.folder_tree("notes/linked", [*docs["linked"], "notes/linked/n3.md"]) is None


def test_a_tree_says_a_file_exists_without_the_disk_only_when_listed_and_vouched_for(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """DirTree.exists: a listed file git vouches for is a regular file (no stat); anything else,
    changed, untracked, a symlink or a folder, is asked of the disk, and says what the disk says."""
    import brain.tree as tree_module

    root = tmp_path / "repo"
    (root / "knowledge/people").mkdir(parents=True)
    for name in ("kept", "changed", "gone"):
        (root / f"knowledge/people/{name}.md").write_text(f"{name}\n", encoding="utf-8")
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "pages")
    (root / "knowledge/people/changed.md").write_text("edited\n", encoding="utf-8")
    (root / "knowledge/people/gone.md").unlink()
    (root / "knowledge/people/new.md").write_text("untracked\n", encoding="utf-8")
    (root / "knowledge/people/link.md").symlink_to("kept.md")
    (root / "knowledge/people/folder.md").mkdir()
    scan = WorktreeScan(root)
    tree = DirTree(root, keys=scan.keys(), folders=scan.folders)
    tree.files()
    asked: list[str] = []
    real = os.path.isfile
    monkeypatch.setattr(tree_module.os.path, "isfile", lambda p: asked.append(os.path.basename(p)) or real(p))
    said = {name: tree.exists(f"knowledge/people/{name}.md") for name in ("kept", "changed", "gone", "new", "link", "folder", "nowhere")}
    assert said == {"kept": True, "changed": True, "gone": False, "new": True, "link": True, "folder": False, "nowhere": False}
    assert sorted(asked) == sorted(f"{n}.md" for n in said if n != "kept")


def test_a_scan_can_walk_ahead_and_a_walk_not_taken_is_stopped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from brain import scan as scan_module
    from brain.tree import walk_sorted

    root = tmp_path / "repo"
    (root / "notes/a").mkdir(parents=True)
    (root / "notes/a/x.md").write_text("x\n", encoding="utf-8")
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "x")
    assert WorktreeScan(root, walk=True).walker is None  # a small Brain: walked when needed, not forked
    monkeypatch.setattr(scan_module, "WALK_AHEAD_MIN_INDEX", 0)
    taken = WorktreeScan(root, walk=True)
    walker = taken.take_walker()
    assert walker is not None and taken.walker is None and walker.result()[:2] == walk_sorted(root)
    left = WorktreeScan(root, walk=True)
    assert left.walker is not None and left.walker.pid
    pid = left.walker.pid
    left.close()  # the run ended before it listed the files: the child is stopped and reaped
    assert left.walker is None
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, 0)


def test_tree_changes_and_cat_blobs_read_git_exactly(tmp_path: Path):
    from brain.repo import BrainRepo, TreeChange, blob_id

    root = tmp_path / "b"
    (root / "d").mkdir(parents=True)
    (root / "d/keep.md").write_text("same\n")
    (root / "d/edit.md").write_text("before\n")
    (root / "d/gone.md").write_bytes(b"\x00binary\n\n")
    (root / "d/run.sh").write_text("echo\n")
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "one")
    (root / "d/edit.md").write_text("after\n")
    (root / "d/gone.md").unlink()
    (root / "d/new file.md").write_text("new\n")
    (root / "d/run.sh").chmod(0o755)
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "two")
    repo = BrainRepo(root)
    old, new = (_git(root, "rev-parse", f"{rev}:d").decode().strip() for rev in ("HEAD~1", "HEAD"))
    b = lambda data: blob_id(data)  # noqa: E731
    assert repo.tree_changes(old, new) == [
        TreeChange("edit.md", "100644", b(b"before\n"), "100644", b(b"after\n")),
        TreeChange("gone.md", "100644", b(b"\x00binary\n\n"), "000000", ""),
        TreeChange("new file.md", "000000", "", "100644", b(b"new\n")),
        TreeChange("run.sh", "100644", b(b"echo\n"), "100755", b(b"echo\n")),
    ]
    assert repo.tree_changes(old, "0123456789abcdef0123456789abcdef01234567") is None
    missing = "0123456789abcdef0123456789abcdef01234567"
    assert repo.cat_blobs([b(b"\x00binary\n\n"), missing, b(b"after\n")]) == {b(b"\x00binary\n\n"): b"\x00binary\n\n", b(b"after\n"): b"after\n"}
    assert repo.cat_blobs([]) == {}


def test_head_facts_are_what_git_says_of_head_whether_asked_ahead_or_now(tmp_path: Path):
    """The pages at HEAD, and the pages deleted since the last commit that changed state.json: a
    run asks them while it imports (WorktreeScan(head=True)), or when it needs them."""
    from brain.scan import HeadFacts, head_facts

    root = tmp_path / "brain"
    root.mkdir()
    _git(root, "init", "-q")
    _git(root, "config", "user.name", "t")
    _git(root, "config", "user.email", "t@t")
    assert head_facts(root) == HeadFacts(None, frozenset(), frozenset(), {})  # no commit yet
    for rel in ("knowledge/people/ada.md", "knowledge/people/bo.md", "knowledge/index.md", "notes/ada/n.md", ".dream/state.json"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(f"{rel}\n", encoding="utf-8")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "dream")
    _git(root, "rm", "-q", "knowledge/people/bo.md")  # the owner deletes a page and commits
    _git(root, "commit", "-q", "-m", "owner")
    (root / "knowledge" / "people" / "ada.md").unlink()  # and another, not committed
    head = _git(root, "rev-parse", "HEAD").decode().strip()
    expected = HeadFacts(head, frozenset({"knowledge/people/ada.md", "knowledge/index.md"}), frozenset({"knowledge/people/bo.md"}),
                         BrainRepo(root).folder_trees("HEAD"))
    assert expected.folders == {"notes/ada": _git(root, "rev-parse", "HEAD:notes/ada").decode().strip()}
    assert head_facts(root) == expected
    scan = WorktreeScan(root, head=True)
    try:
        assert scan.head_facts() == expected
    finally:
        scan.close()
    assert WorktreeScan(root).head_facts() is None  # not asked
    # The folder trees git vouches for are the same whether the scan lists them or head_facts does.
    for rel in ("notes/bo/n.md", "notes/cy/n.md"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("n\n", encoding="utf-8")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "notes")
    (root / "notes" / "bo" / "n.md").write_text("edited\n", encoding="utf-8")
    listed, asked = WorktreeScan(root), WorktreeScan(root, head=True)
    assert listed.keys() == asked.keys()
    assert listed.folders == asked.folders and set(asked.folders) == {"notes/ada", "notes/cy"}


def test_read_if_exists_gives_a_files_bytes_or_none_and_never_raises_for_a_file_gone_since_the_scan(tmp_path: Path):
    """Tree.read_if_exists: one open. A file listed and vouched for when the run scanned, then
    deleted by the owner, is None (exists() still says True: it asks no disk); so are a folder, a
    FIFO (not read: reading would wait for a writer) and a dangling symlink. A symlink to a file
    is followed, as exists() follows it."""
    from brain.tree import MemTree, OverlayTree, text_if_exists

    root = tmp_path / "repo"
    (root / "knowledge/people").mkdir(parents=True)
    for name in ("kept", "gone"):
        (root / f"knowledge/people/{name}.md").write_text(f"{name}\n", encoding="utf-8")
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "pages")
    (root / "knowledge/people/link.md").symlink_to("kept.md")
    (root / "knowledge/people/dangling.md").symlink_to("nowhere.md")
    (root / "knowledge/people/folder.md").mkdir()
    os.mkfifo(root / "knowledge/people/fifo.md")
    scan = WorktreeScan(root)
    tree = DirTree(root, keys=scan.keys(), folders=scan.folders)
    tree.files()
    (root / "knowledge/people/gone.md").unlink()  # after the scan listed it and git vouched for it
    assert tree.exists("knowledge/people/gone.md")  # what the scan knew
    got = {name: tree.read_if_exists(f"knowledge/people/{name}.md")
           for name in ("kept", "gone", "link", "dangling", "folder", "fifo", "nowhere")}
    assert got == {"kept": b"kept\n", "gone": None, "link": b"kept\n", "dangling": None, "folder": None, "fifo": None, "nowhere": None}
    assert tree.read_if_exists("knowledge/people/kept.md/under") is None  # a file's name used as a folder
    assert text_if_exists(tree, "knowledge/people/gone.md") is None

    staged = MemTree({"knowledge/people/new.md": "new\n", "knowledge/people/kept.md": "staged\n"}, root)
    assert staged.read_if_exists("knowledge/people/new.md") == b"new\n"
    assert staged.read_if_exists("knowledge/people/gone.md") is None
    over = OverlayTree(tree, staged, deleted=frozenset({"knowledge/people/link.md"}))
    assert {name: over.read_if_exists(f"knowledge/people/{name}.md") for name in ("kept", "new", "link", "gone")} == {
        "kept": b"staged\n", "new": b"new\n", "link": None, "gone": None}


def test_a_page_deleted_after_the_scan_is_read_as_absent_by_the_view_and_the_staging(tmp_path: Path):
    """What a run reads through its trees meets a file the owner deleted after the scan as absent:
    the view neither parses nor lists it among its documents, a session cited is one that does
    not exist, and staging a file over it records that it was derived from nothing."""
    from brain.view import BrainView
    from dream.staging import StagedTree

    root = tmp_path / "repo"
    (root / "knowledge/people").mkdir(parents=True)
    (root / "sessions/raw").mkdir(parents=True)
    (root / "knowledge/people/ana.md").write_text("---\ntitle: Ana\ntype: person\n---\n# Ana\n", encoding="utf-8")
    (root / "sessions/raw/s1.jsonl").write_text('{"type":"session","id":"s1"}\n{"type":"turn","n":1,"role":"user","text":"hi"}\n', encoding="utf-8")
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "pages")
    scan = WorktreeScan(root)
    tree = DirTree(root, keys=scan.keys(), folders=scan.folders)
    view = BrainView(tree)
    assert view.has_doc("knowledge/people/ana.md")  # listed
    (root / "knowledge/people/ana.md").unlink()
    (root / "sessions/raw/s1.jsonl").unlink()
    assert view.doc("knowledge/people/ana.md") is None
    assert view.docs == {}
    assert view.session("s1") is None
    staged = StagedTree(tmp_path / "staged", tree)
    staged.write("knowledge/people/ana.md", "---\ntitle: Ana\ntype: person\n---\n# Ana\n\nNew.\n")
    assert staged.derived_from["knowledge/people/ana.md"] is None
    assert staged.read("knowledge/people/gone.md") is None
