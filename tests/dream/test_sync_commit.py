"""apply_sync: the commit it builds (by fast-import alone, or through Dream's own index past
FAST_COMMIT_MAX files) is the tree `git add` would give, names no ref, and the index ends where
`git reset` to the new commit would put it (kills: test_faults.py)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from nadia_runs import git, tree_by_git_add

from brain.repo import blob_id
from dream import sync
from dream.sync import Journal, SyncPlan, apply_sync, finish_worktree

WRITES = {
    "knowledge/people/ada.md": "# Ada\n\nnew page\n",
    "knowledge/index.md": "# Index\n\n- [[ada]]\n",
    "notes/ada/likes tea.md": "a note with a space in its name\n",
    'notes/ada/say "hi".md': "quotes\n",
    "notes/ada/back\\slash.md": "a backslash\n",
    "notes/ada/café.md": "unicode name, unicode text: naïve\n",
    "notes/ada/empty.md": "",
    "notes/ada/no-newline.md": "no final newline",
    "sessions/summaries/s1.md": "was executable\n",
    ".dream/state.json": "{}\n",
}


@pytest.fixture(params=["fast-import", "own-index"])
def commit_path(request, monkeypatch) -> str:
    """Each way a commit is built: fast-import alone (a nightly run) or its blobs and Dream's index."""
    monkeypatch.setattr(sync, "FAST_COMMIT_MAX", 10**6 if request.param == "fast-import" else 0)
    return request.param


def _brain(tmp_path: Path) -> tuple[Path, str]:
    root = tmp_path / "brain"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    for rel, text in {".gitignore": ".dream/cache/\n", "guide.md": "guide\n", "knowledge/index.md": "# Index\n", "sessions/summaries/s1.md": "old\n", "notes/bob/x.md": "bob\n"}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    (root / "sessions/summaries/s1.md").chmod(0o755)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "owner")
    return root, git(root, "rev-parse", "HEAD").strip()


def test_the_commit_has_the_tree_git_add_gives_and_no_ref_is_left(tmp_path: Path, commit_path: str) -> None:
    root, base = _brain(tmp_path)
    refs_before = git(root, "for-each-ref")
    plan = SyncPlan(writes=WRITES, added=sorted(WRITES), modified=[])
    result = apply_sync(root, plan, "Dream: run r1\n\nDream-Run: r1\n", "r1", base, root / ".dream/runs/r1")
    assert git(root, "rev-parse", "HEAD").strip() == result.commit
    assert git(root, "rev-parse", f"{result.commit}^{{tree}}").strip() == tree_by_git_add(tmp_path, root, WRITES, base)
    assert git(root, "rev-parse", f"{result.commit}^").strip() == base
    assert git(root, "log", "-1", "--format=%an <%ae>%n%B", result.commit) == "Dream <dream@localhost>\nDream: run r1\n\nDream-Run: r1\n\n"
    assert git(root, "for-each-ref") == refs_before.replace(base, result.commit)
    assert subprocess.run(["git", "fsck", "--no-dangling", "--no-progress"], cwd=root, capture_output=True).returncode == 0
    # The working tree and the index are at the new commit: nothing is left to commit or restore.
    assert git(root, "status", "--porcelain", "--untracked-files=no") == ""
    for rel, text in WRITES.items():
        assert (root / rel).read_bytes() == text.encode("utf-8")


def test_a_first_commit_has_no_parent(tmp_path: Path, commit_path: str) -> None:
    root = tmp_path / "brain"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    plan = SyncPlan(writes={"knowledge/index.md": "# Index\n"}, added=["knowledge/index.md"])
    result = apply_sync(root, plan, "Dream: first\n", "r0", None, root / ".dream/runs/r0")
    assert git(root, "rev-list", "--parents", "-n1", result.commit).split() == [result.commit]
    assert git(root, "ls-tree", "-r", "--name-only", result.commit).split() == ["knowledge/index.md"]


def _id(text: str) -> str:
    return blob_id(text.encode("utf-8"))


@pytest.mark.parametrize("old_format", [False, True])
def test_recovery_sets_the_index_from_the_commit_and_keeps_an_owner_edit(tmp_path: Path, old_format: bool) -> None:
    """The journal names each file's bytes before the run by blob id; one written by an earlier
    version (the texts themselves) is still finished."""
    root, base = _brain(tmp_path)
    writes = {"knowledge/index.md": "# Index\n\n- new\n", "notes/ada/a.md": "a\n"}
    result = apply_sync(root, SyncPlan(writes=writes, added=["notes/ada/a.md"], modified=["knowledge/index.md"]), "m\n", "r1", base, root / ".dream/runs/r1")
    # As if killed before the working tree was updated: files back as before, the owner edits one.
    git(root, "reset", "-q", base)
    (root / "notes/ada/a.md").unlink()
    (root / "knowledge/index.md").write_text("# Index\nowner\n", encoding="utf-8")
    if old_format:
        journal = Journal(run_id="r1", ref="refs/heads/main", old=base, new=result.commit, files={"knowledge/index.md": "# Index\n", "notes/ada/a.md": None})
    else:
        journal = Journal(run_id="r1", ref="refs/heads/main", old=base, new=result.commit, before={"knowledge/index.md": _id("# Index\n"), "notes/ada/a.md": None})
    git(root, "update-ref", "refs/heads/main", result.commit)
    finish_worktree(root, journal)
    assert (root / "notes/ada/a.md").read_text(encoding="utf-8") == "a\n"
    assert (root / "knowledge/index.md").read_text(encoding="utf-8") == "# Index\nowner\n"
    # Dream's note is in the index as committed; the page the owner edited keeps its old entry.
    assert git(root, "diff-index", "--cached", "--name-only", "HEAD") == "knowledge/index.md\n"
    assert git(root, "status", "--porcelain", "--untracked-files=no") == "MM knowledge/index.md\n"


def test_an_owner_save_during_the_swap_is_put_back(tmp_path: Path, monkeypatch) -> None:
    """finish_worktree replaces a file only while it holds what it held before the run; the owner
    may save it in the instant between that check and the rename: their bytes must win."""
    import os

    from dream import sync

    page = tmp_path / "knowledge" / "page.md"
    page.parent.mkdir()
    page.write_text("before\n", encoding="utf-8")
    real_replace, saved = os.replace, []

    def owner_saves_first(src, dst):
        if Path(dst) == page and not saved:  # the owner's editor appends right before Dream's rename
            saved.append(True)
            with open(page, "a", encoding="utf-8") as fh:
                fh.write("owner line\n")
        real_replace(src, dst)

    monkeypatch.setattr(sync.os, "replace", owner_saves_first)
    assert sync._swap_if_unchanged(page, "dream\n", _id("before\n"), set()) is False
    assert page.read_text(encoding="utf-8") == "before\nowner line\n"
    monkeypatch.setattr(sync.os, "replace", real_replace)

    assert sync._swap_if_unchanged(page, "dream\n", _id("before\nowner line\n"), set()) is True  # no one writing
    assert page.read_text(encoding="utf-8") == "dream\n"
    assert sync._swap_if_unchanged(page, "dream\n", _id("other\n"), set()) is True  # already Dream's text
    page.write_text("mine\n", encoding="utf-8")
    assert sync._swap_if_unchanged(page, "dream 2\n", _id("dream\n"), set()) is False  # the owner's: left alone
    assert page.read_text(encoding="utf-8") == "mine\n"
    assert not list(page.parent.glob(".*dream-tmp"))


def test_a_swap_from_the_staged_copy_keeps_the_owner_save_and_the_copy(tmp_path: Path, monkeypatch) -> None:
    """The staged copy is linked aside and renamed over the file: an owner save in the instant
    before the rename still wins, and the copy (the run's record) keeps Dream's text."""
    import os

    from dream import sync

    page, copy = tmp_path / "knowledge" / "page.md", tmp_path / "staged.md"
    page.parent.mkdir()
    page.write_text("before\n", encoding="utf-8")
    copy.write_text("dream\n", encoding="utf-8")
    (page.parent / ".page.md.dream-tmp").write_text("left by a killed run\n", encoding="utf-8")
    real_replace, saved = os.replace, []

    def owner_saves_first(src, dst):
        if Path(dst) == page and not saved:
            saved.append(True)
            with open(page, "a", encoding="utf-8") as fh:
                fh.write("owner line\n")
        real_replace(src, dst)

    monkeypatch.setattr(sync.os, "replace", owner_saves_first)
    assert sync._swap_if_unchanged(page, "dream\n", _id("before\n"), set(), copy) is False
    assert page.read_text(encoding="utf-8") == "before\nowner line\n"
    assert copy.read_text(encoding="utf-8") == "dream\n" and not page.samefile(copy)
    monkeypatch.setattr(sync.os, "replace", real_replace)

    # What the journal's "before" read: the same bytes are not hashed again, other bytes are.
    read = (b"before\nowner line\n", _id("before\nowner line\n"))
    assert sync._swap_if_unchanged(page, "dream\n", _id("before\nowner line\n"), set(), copy, read) is True
    assert page.samefile(copy) and page.read_text(encoding="utf-8") == "dream\n"
    page.unlink()
    page.write_text("mine\n", encoding="utf-8")  # saved after the journal read the file
    assert sync._swap_if_unchanged(page, "dream 2\n", _id("dream\n"), set(), copy, (b"dream\n", _id("dream\n"))) is False
    assert page.read_text(encoding="utf-8") == "mine\n"
    assert not list(page.parent.glob(".*dream-tmp"))


def test_an_owner_save_between_the_plan_and_the_commit_stays(tmp_path: Path) -> None:
    """Dream merges the live text when it plans the sync; building the commit then takes a while. A
    save made meanwhile is not in Dream's text, so the file is left as the owner has it."""
    from dream.sync import plan_sync, read_live

    root, base = _brain(tmp_path)
    staged = {"knowledge/index.md": "# Index\n\n- [[ada]]\n", "notes/ada/a.md": "a\n"}
    plan = plan_sync(staged, {"knowledge/index.md": "# Index\n", "notes/ada/a.md": None}, read_live(root, list(staged)))
    (root / "knowledge/index.md").write_text("# Index\nowner line\n", encoding="utf-8")  # saved after the plan
    result = apply_sync(root, plan, "m\n", "r1", base, root / ".dream/runs/r1")
    assert git(root, "show", f"{result.commit}:knowledge/index.md") == "# Index\n\n- [[ada]]\n"
    assert (root / "knowledge/index.md").read_text(encoding="utf-8") == "# Index\nowner line\n"  # not overwritten
    assert (root / "notes/ada/a.md").read_text(encoding="utf-8") == "a\n"
    assert git(root, "status", "--porcelain", "--untracked-files=no") == "MM knowledge/index.md\n"  # as after recovery


def test_the_blobs_of_a_small_commit_stay_in_one_pack(tmp_path: Path, commit_path: str) -> None:
    """fast-import's pack is kept, not exploded into a loose file per object (the nightly run's cost)."""
    from brain.repo import blob_id

    root, base = _brain(tmp_path)
    plan = SyncPlan(writes=WRITES, added=sorted(WRITES), modified=[])
    apply_sync(root, plan, "Dream: run r1\n", "r1", base, root / ".dream/runs/r1")
    packs = sorted((root / ".git/objects/pack").glob("*.idx"))
    assert len(packs) == 1
    packed = {line.split()[0] for line in git(root, "verify-pack", "-v", str(packs[0])).splitlines() if " blob " in line}
    assert packed == {blob_id(text.encode("utf-8")) for text in WRITES.values()}
    git(root, "fsck", "--no-progress")


def test_a_staged_file_is_linked_from_the_staged_folder_and_a_merged_one_is_written(tmp_path: Path) -> None:
    root, base = _brain(tmp_path)
    folder = root / ".dream/runs/r1/staged"
    staged = {"notes/ada/a.md": "a\n", "notes/ada/b.md": "b as staged\n", "knowledge/index.md": "# Index\n\n- [[ada]]\n"}
    for rel, text in staged.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text, encoding="utf-8")
    # b.md's planned text is not the staged one (a merge changed it): it must not be linked.
    writes = {**staged, "notes/ada/b.md": "b as merged\n"}
    plan = SyncPlan(writes=writes, added=["notes/ada/a.md", "notes/ada/b.md"], modified=["knowledge/index.md"])
    apply_sync(root, plan, "m\n", "r1", base, root / ".dream/runs/r1", staged=(folder, staged))
    assert (root / "notes/ada/a.md").samefile(folder / "notes/ada/a.md")
    assert not (root / "notes/ada/b.md").samefile(folder / "notes/ada/b.md")
    # It existed: the staged copy is linked aside and renamed over it (the swap's checks still hold).
    assert (root / "knowledge/index.md").samefile(folder / "knowledge/index.md")
    for rel, text in writes.items():
        assert (root / rel).read_text(encoding="utf-8") == text
    assert git(root, "status", "--porcelain", "--untracked-files=no") == ""


def test_a_link_never_replaces_a_file_the_owner_created_meanwhile(tmp_path: Path) -> None:
    from dream.sync import _link_new

    copy = tmp_path / "staged.md"
    copy.write_text("Dream's text\n", encoding="utf-8")
    path = tmp_path / "live" / "page.md"
    path.parent.mkdir()
    path.write_text("the owner's new file\n", encoding="utf-8")
    assert _link_new(copy, path, set()) is False
    assert path.read_text(encoding="utf-8") == "the owner's new file\n"
    path.unlink()
    assert _link_new(copy, path, set()) is True and path.samefile(copy)


def test_untouched_entries_of_a_touched_folder_keep_their_mode_and_id(tmp_path: Path, commit_path: str) -> None:
    """The folders a write touches are rebuilt from the base's: a symlink, an executable and a big
    folder's other files stay as they were; the tree is the one `git add` gives."""
    root, base = _brain(tmp_path)
    bob = root / "notes/bob"
    (bob / "run.sh").write_text("#!/bin/sh\n", encoding="utf-8")
    (bob / "run.sh").chmod(0o755)
    (bob / "link.md").symlink_to("x.md")
    for i in range(3000):
        (bob / f"old-{i:04d}.md").write_text(f"old {i}\n", encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "a big folder")
    base = git(root, "rev-parse", "HEAD").strip()
    writes = {f"notes/bob/new-{i:04d}.md": f"new {i}\n" for i in range(3000)}
    writes["notes/bob/old-0007.md"] = "changed\n"
    writes["notes/bob/deeper/still/x.md"] = "a folder the base lacks\n"
    result = apply_sync(root, SyncPlan(writes=writes, added=sorted(writes), modified=[]), "m\n", "r1", base, root / ".dream/runs/r1")
    assert git(root, "rev-parse", f"{result.commit}^{{tree}}").strip() == tree_by_git_add(tmp_path, root, writes, base)
    listing = git(root, "ls-tree", result.commit, "notes/bob/")
    assert "120000 blob" in listing and "100755 blob" in listing


def test_folders_with_spaces_new_and_old_get_the_tree_git_add_gives(tmp_path: Path, commit_path: str) -> None:
    root, _ = _brain(tmp_path)
    (root / "notes/my topic").mkdir(parents=True)
    (root / "notes/my topic/a.md").write_text("a\n", encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "a folder with a space")
    base = git(root, "rev-parse", "HEAD").strip()
    writes = {"notes/my topic/b.md": "b\n", "notes/new topic missing/c.md": "c\n", "notes/my topic/a.md": "a, changed\n"}
    result = apply_sync(root, SyncPlan(writes=writes, added=sorted(writes), modified=[]), "m\n", "r1", base, root / ".dream/runs/r1")
    assert git(root, "rev-parse", f"{result.commit}^{{tree}}").strip() == tree_by_git_add(tmp_path, root, writes, base)


def test_what_the_owner_staged_stays_staged_and_out_of_dreams_commit(tmp_path: Path, commit_path: str) -> None:
    root, base = _brain(tmp_path)
    (root / "guide.md").write_text("guide, staged by the owner\n", encoding="utf-8")
    (root / "notes/bob/new.md").write_text("a new note, staged\n", encoding="utf-8")
    git(root, "add", "guide.md", "notes/bob/new.md")
    result = apply_sync(root, SyncPlan(writes=WRITES, added=sorted(WRITES)), "m\n", "r1", base, root / ".dream/runs/r1")
    assert git(root, "rev-parse", f"{result.commit}^{{tree}}").strip() == tree_by_git_add(tmp_path, root, WRITES, base)
    assert git(root, "diff", "--cached", "--name-status") == "M\tguide.md\nA\tnotes/bob/new.md\n"
    assert git(root, "show", ":guide.md") == "guide, staged by the owner\n"


def test_both_ways_make_the_same_commit_object(tmp_path: Path, monkeypatch) -> None:
    """fast-import's commit is byte for byte the one commit-tree makes: same author (Dream), same
    committer (the owner's identity), same dates, same message, same parent."""
    monkeypatch.setenv("GIT_AUTHOR_DATE", "2030-01-02T03:04:05+0100")
    monkeypatch.setenv("GIT_COMMITTER_DATE", "2030-01-02T03:04:06+0100")
    monkeypatch.setenv("GIT_COMMITTER_NAME", "Owner Name")
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", "owner@example.org")
    made = []
    for limit in (10**6, 0):
        monkeypatch.setattr(sync, "FAST_COMMIT_MAX", limit)
        (tmp_path / str(limit)).mkdir()
        root, base = _brain(tmp_path / str(limit))
        message = "Dream: run r1\n\nnaïve ünïcode\n\nDream-Run: r1\n"
        made.append(apply_sync(root, SyncPlan(writes=WRITES, added=sorted(WRITES)), message, "r1", base, root / ".dream/runs/r1").commit)
        assert git(root, "cat-file", "commit", made[-1]).splitlines()[2:4] == [
            "author Dream <dream@localhost> 1893549845 +0100", "committer Owner Name <owner@example.org> 1893549846 +0100"]
    assert made[0] == made[1]


def _in_index(root: Path, index: Path, *args: str) -> str:
    env = {**os.environ, "GIT_INDEX_FILE": str(index)}
    return subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True, text=True).stdout


@pytest.mark.parametrize("spoil", ["none", "owner-commit", "lost", "garbage", "stale-lock", "other-tree", "memo-lost", "memo-garbage"])
def test_dreams_own_index_gives_the_git_add_tree_however_it_was_left(tmp_path: Path, spoil: str, monkeypatch) -> None:
    """The second sync reuses the index the first left at its commit (and the note of its tree); an
    owner's commit in between, a lost or garbled index or note, a killed git's lock file or an index
    at another tree are all read again."""
    monkeypatch.setattr(sync, "FAST_COMMIT_MAX", 0)
    root, base = _brain(tmp_path)
    first = apply_sync(root, SyncPlan(writes=WRITES, added=sorted(WRITES)), "m1\n", "r1", base, root / ".dream/runs/r1")
    index = root / ".dream/cache/sync-index"
    memo = root / ".dream/cache/sync-index.tree"
    tree = git(root, "rev-parse", f"{first.commit}^{{tree}}").strip()
    assert _in_index(root, index, "write-tree").strip() == tree
    assert memo.read_text(encoding="ascii").split()[0] == tree
    base = first.commit
    if spoil == "owner-commit":
        (root / "guide.md").write_text("guide, edited\n", encoding="utf-8")
        (root / "guide.md").chmod(0o755)
        (root / "notes/bob/y.md").write_text("bob y\n", encoding="utf-8")
        (root / "notes/bob/x.md").unlink()
        (root / "notes/ada/empty.md").unlink()
        (root / "notes/ada/empty.md").mkdir()
        (root / "notes/ada/empty.md/inside.md").write_text("a folder where a file was\n", encoding="utf-8")
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", "owner")
        base = git(root, "rev-parse", "HEAD").strip()
    elif spoil == "lost":
        index.unlink()
    elif spoil == "garbage":
        index.write_bytes(b"DIRC not an index")
    elif spoil == "stale-lock":
        (root / ".dream/cache/sync-index.lock").write_bytes(b"")
    elif spoil == "other-tree":  # the note of its tree stays: the index's checksum no longer matches it
        _in_index(root, index, "read-tree", "--empty")
    elif spoil == "memo-lost":
        memo.unlink()
    elif spoil == "memo-garbage":
        memo.write_text("not a note\n", encoding="ascii")
    writes = {"notes/ada/second.md": "second run\n", "knowledge/index.md": "# Index\n\n- [[ada]]\n- [[bob]]\n"}
    second = apply_sync(root, SyncPlan(writes=writes, added=["notes/ada/second.md"], modified=["knowledge/index.md"]),
                        "m2\n", "r2", base, root / ".dream/runs/r2")
    assert git(root, "rev-parse", f"{second.commit}^{{tree}}").strip() == tree_by_git_add(tmp_path, root, writes, base)
    assert git(root, "status", "--porcelain", "--untracked-files=no") == ""


def test_reading_many_files_of_a_commit_leaves_out_missing_paths_with_spaces(tmp_path: Path) -> None:
    """cat-file says "<name> missing" for an absent path; a name with spaces once broke the reading."""
    from brain.repo import BrainRepo
    from dream.sync import _read_many

    root, base = _brain(tmp_path)
    got = _read_many(BrainRepo(root), base, ["guide.md", "notes/my topic/gone.md", "notes/bob/x.md", "a b c.md"])
    assert got == {"guide.md": "guide\n", "notes/bob/x.md": "bob\n"}


def test_an_index_update_left_running_ends_after_the_owners_lock_is_released(tmp_path: Path) -> None:
    """apply_sync(wait_index=False) returns with git's index update started; until finish() the
    journal stays (a run killed meanwhile is finished by the next), and an index.lock the owner's
    git holds is waited out, not reported."""
    import threading

    root, base = _brain(tmp_path)
    lock = root / ".git/index.lock"
    lock.write_bytes(b"")  # the owner's git is busy
    result = apply_sync(root, SyncPlan(writes=WRITES, added=sorted(WRITES)), "m\n", "r1", base, root / ".dream/runs/r1", wait_index=False)
    assert git(root, "rev-parse", "HEAD").strip() == result.commit
    assert (root / ".dream/journal.json").exists()
    release = threading.Timer(0.3, lock.unlink)
    release.start()
    result.finish()
    release.join()
    assert not (root / ".dream/journal.json").exists()
    assert git(root, "status", "--porcelain", "--untracked-files=no") == ""
    result.finish()  # once only: a second call does nothing


def test_a_swap_that_fails_leaves_the_journal_and_the_index_for_the_next_run(tmp_path: Path, monkeypatch) -> None:
    # git's index update starts before the files are swapped (it reads the index meanwhile): a
    # failure midway must end it without touching the index, and keep the journal to finish from.
    from brain import layout

    root, base = _brain(tmp_path)
    index_before = (root / ".git/index").read_bytes()
    plan = SyncPlan(writes=WRITES, added=sorted(WRITES), modified=[])
    real, calls = sync._swap_if_unchanged, []

    def flaky(path, *args, **kwargs):
        calls.append(path)
        if len(calls) == 3:
            raise OSError("No space left on device")
        return real(path, *args, **kwargs)

    monkeypatch.setattr(sync, "_swap_if_unchanged", flaky)
    with pytest.raises(OSError):
        apply_sync(root, plan, "Dream: run r1\n", "r1", base, root / ".dream/runs/r1")
    assert (root / layout.JOURNAL).is_file()
    assert (root / ".git/index").read_bytes() == index_before and not (root / ".git/index.lock").exists()
    monkeypatch.setattr(sync, "_swap_if_unchanged", real)
    sync.recover(root)
    assert not (root / layout.JOURNAL).exists()
    assert git(root, "status", "--porcelain", "--untracked-files=no") == ""
    for rel, text in WRITES.items():
        assert (root / rel).read_bytes() == text.encode("utf-8")
