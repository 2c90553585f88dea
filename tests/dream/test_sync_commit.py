"""apply_sync: the commit it builds (in a git index of the run's own) is the tree `git add` would
give, names no ref, and the index ends where `git reset` to the new commit would put it (kills:
test_faults.py)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from nadia_runs import git, tree_by_git_add

from brain.repo import blob_id
from dream import journal as journal_module
from dream.journal import Journal, finish_worktree, read_at, recover
from dream.sync import SyncPlan, apply_sync

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


def _brain(tmp_path: Path) -> tuple[Path, str]:
    root = tmp_path / "brain"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    for rel, text in {".gitignore": ".dream/cache/\n", "guide.md": "guide\n", "knowledge/index.md": "# Index\n", "sessions/summaries/s1.md": "old\n", "notes/bob/x.md": "bob\n"}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    (root / "sessions/summaries/s1.md").chmod(0o755)
    git(root, "add", "-A")
    git(root, "commit", "-q", "--allow-empty", "-m", "owner")
    return root, git(root, "rev-parse", "HEAD").strip()


def test_the_commit_has_the_tree_git_add_gives_and_no_ref_is_left(tmp_path: Path) -> None:
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


def test_a_first_commit_has_no_parent(tmp_path: Path) -> None:
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

    monkeypatch.setattr(journal_module.os, "replace", owner_saves_first)
    assert journal_module._swap_if_unchanged(page, "dream\n", _id("before\n")) is False
    assert page.read_text(encoding="utf-8") == "before\nowner line\n"
    monkeypatch.setattr(journal_module.os, "replace", real_replace)

    assert journal_module._swap_if_unchanged(page, "dream\n", _id("before\nowner line\n")) is True  # no one writing
    assert page.read_text(encoding="utf-8") == "dream\n"
    assert journal_module._swap_if_unchanged(page, "dream\n", _id("other\n")) is True  # already Dream's text
    page.write_text("mine\n", encoding="utf-8")
    assert journal_module._swap_if_unchanged(page, "dream 2\n", _id("dream\n")) is False  # the owner's: left alone
    assert page.read_text(encoding="utf-8") == "mine\n"
    assert not list(page.parent.glob(".*dream-tmp"))


def test_a_new_file_never_replaces_one_the_owner_created_meanwhile(tmp_path: Path, monkeypatch) -> None:
    """A file Dream adds may be created by the owner between Dream's look and its write: theirs stays."""
    page = tmp_path / "knowledge" / "new.md"
    page.parent.mkdir()
    real_link = os.link

    def owner_creates_first(src, dst):
        if Path(dst) == page:
            page.write_text("the owner's new file\n", encoding="utf-8")
        real_link(src, dst)

    monkeypatch.setattr(journal_module.os, "link", owner_creates_first)
    assert journal_module._swap_if_unchanged(page, "dream\n", None) is False
    assert page.read_text(encoding="utf-8") == "the owner's new file\n"
    monkeypatch.setattr(journal_module.os, "link", real_link)
    page.unlink()
    assert journal_module._swap_if_unchanged(page, "dream\n", None) is True
    assert page.read_text(encoding="utf-8") == "dream\n" and not list(page.parent.glob(".*dream-tmp"))


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


def test_untouched_entries_of_a_touched_folder_keep_their_mode_and_id(tmp_path: Path) -> None:
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
    git(root, "commit", "-q", "--allow-empty", "-m", "a big folder")
    base = git(root, "rev-parse", "HEAD").strip()
    writes = {f"notes/bob/new-{i:04d}.md": f"new {i}\n" for i in range(3000)}
    writes["notes/bob/old-0007.md"] = "changed\n"
    writes["notes/bob/deeper/still/x.md"] = "a folder the base lacks\n"
    result = apply_sync(root, SyncPlan(writes=writes, added=sorted(writes), modified=[]), "m\n", "r1", base, root / ".dream/runs/r1")
    assert git(root, "rev-parse", f"{result.commit}^{{tree}}").strip() == tree_by_git_add(tmp_path, root, writes, base)
    listing = git(root, "ls-tree", result.commit, "notes/bob/")
    assert "120000 blob" in listing and "100755 blob" in listing


def test_folders_with_spaces_new_and_old_get_the_tree_git_add_gives(tmp_path: Path) -> None:
    root, _ = _brain(tmp_path)
    (root / "notes/my topic").mkdir(parents=True)
    (root / "notes/my topic/a.md").write_text("a\n", encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-q", "--allow-empty", "-m", "a folder with a space")
    base = git(root, "rev-parse", "HEAD").strip()
    writes = {"notes/my topic/b.md": "b\n", "notes/new topic missing/c.md": "c\n", "notes/my topic/a.md": "a, changed\n"}
    result = apply_sync(root, SyncPlan(writes=writes, added=sorted(writes), modified=[]), "m\n", "r1", base, root / ".dream/runs/r1")
    assert git(root, "rev-parse", f"{result.commit}^{{tree}}").strip() == tree_by_git_add(tmp_path, root, writes, base)


def test_what_the_owner_staged_stays_staged_and_out_of_dreams_commit(tmp_path: Path) -> None:
    root, base = _brain(tmp_path)
    (root / "guide.md").write_text("guide, staged by the owner\n", encoding="utf-8")
    (root / "notes/bob/new.md").write_text("a new note, staged\n", encoding="utf-8")
    git(root, "add", "guide.md", "notes/bob/new.md")
    result = apply_sync(root, SyncPlan(writes=WRITES, added=sorted(WRITES)), "m\n", "r1", base, root / ".dream/runs/r1")
    assert git(root, "rev-parse", f"{result.commit}^{{tree}}").strip() == tree_by_git_add(tmp_path, root, WRITES, base)
    assert git(root, "diff", "--cached", "--name-status") == "M\tguide.md\nA\tnotes/bob/new.md\n"
    assert git(root, "show", ":guide.md") == "guide, staged by the owner\n"


def test_the_commit_is_authored_by_dream_and_committed_as_the_owner_at_gits_time(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("GIT_AUTHOR_DATE", "2030-01-02T03:04:05+0100")
    monkeypatch.setenv("GIT_COMMITTER_DATE", "2030-01-02T03:04:06+0100")
    monkeypatch.setenv("GIT_COMMITTER_NAME", "Owner Name")
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", "owner@example.org")
    root, base = _brain(tmp_path)
    message = "Dream: run r1\n\nnaïve ünïcode\n\nDream-Run: r1\n"
    commit = apply_sync(root, SyncPlan(writes=WRITES, added=sorted(WRITES)), message, "r1", base, root / ".dream/runs/r1").commit
    lines = git(root, "cat-file", "commit", commit).splitlines()
    assert lines[1:4] == [f"parent {base}", "author Dream <dream@localhost> 1893549845 +0100",
                          "committer Owner Name <owner@example.org> 1893549846 +0100"]
    assert git(root, "log", "-1", "--format=%B", commit) == message + "\n"


def test_reading_many_files_of_a_commit_leaves_out_missing_paths_with_spaces(tmp_path: Path) -> None:
    """cat-file says "<name> missing" for an absent path; a name with spaces once broke the reading."""
    from brain.repo import BrainRepo

    root, base = _brain(tmp_path)
    got = read_at(BrainRepo(root), base, ["guide.md", "notes/my topic/gone.md", "notes/bob/x.md", "a b c.md"])
    assert got == {"guide.md": "guide\n", "notes/bob/x.md": "bob\n"}


def test_an_index_lock_the_owners_git_holds_is_waited_out(tmp_path: Path) -> None:
    import threading

    root, base = _brain(tmp_path)
    lock = root / ".git/index.lock"
    lock.write_bytes(b"")  # the owner's git is busy
    release = threading.Timer(0.3, lock.unlink)
    release.start()
    result = apply_sync(root, SyncPlan(writes=WRITES, added=sorted(WRITES)), "m\n", "r1", base, root / ".dream/runs/r1")
    release.join()
    assert git(root, "rev-parse", "HEAD").strip() == result.commit
    assert not (root / ".dream/journal.json").exists()
    assert git(root, "status", "--porcelain", "--untracked-files=no") == ""


def test_a_swap_that_fails_leaves_the_journal_and_the_index_for_the_next_run(tmp_path: Path) -> None:
    """A file of Dream's cannot be written (here: a file stands where its folder must go): the
    branch has moved, the journal stays, git's index is untouched; the next run finishes once the
    obstacle is gone."""
    from brain import layout

    root, base = _brain(tmp_path)
    index_before = (root / ".git/index").read_bytes()
    (root / "notes/ada").parent.mkdir(parents=True, exist_ok=True)
    (root / "notes/ada").write_text("not a folder\n", encoding="utf-8")
    with pytest.raises(OSError):
        apply_sync(root, SyncPlan(writes=WRITES, added=sorted(WRITES), modified=[]), "Dream: run r1\n", "r1", base, root / ".dream/runs/r1")
    assert (root / layout.JOURNAL).is_file()
    assert (root / ".git/index").read_bytes() == index_before and not (root / ".git/index.lock").exists()
    (root / "notes/ada").unlink()
    assert recover(root).startswith("finished the working-tree update of run r1")
    assert not (root / layout.JOURNAL).exists()
    assert git(root, "status", "--porcelain", "--untracked-files=no") == ""
    for rel, text in WRITES.items():
        assert (root / rel).read_bytes() == text.encode("utf-8")


def test_a_deletion_lands_in_the_commit_and_the_working_tree_and_its_folder_goes(tmp_path: Path) -> None:
    root, base = _brain(tmp_path)
    (root / ".dream/written").mkdir(parents=True)
    (root / ".dream/written/0a.json").write_text("{}\n", encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-q", "--allow-empty", "-m", "an older state")
    base = git(root, "rev-parse", "HEAD").strip()
    plan = SyncPlan(writes={".dream/state.json": "{}\n"}, deletes=[".dream/written/0a.json"], based_on={".dream/written/0a.json": "{}\n"})
    result = apply_sync(root, plan, "m\n", "r1", base, root / ".dream/runs/r1")
    assert git(root, "ls-tree", "-r", "--name-only", result.commit, "--", ".dream") == ".dream/state.json\n"
    assert not (root / ".dream/written").exists()
    assert git(root, "status", "--porcelain", "--untracked-files=no") == ""
