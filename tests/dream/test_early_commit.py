"""The early commit (dream.sync.EarlyCommit): on a large Brain the staged files are committed by a
fast-import that runs while the gate does, and sync builds its commit on that tree. Whatever the
early commit held, the commit that lands is the one built without it, and no ref is left."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from nadia_runs import add_session, copy_brain, dream, git, tree_by_git_add

from dream import run as run_module
from dream import sync
from dream.sync import EarlyCommit, SyncPlan, apply_sync

FINAL = {
    "knowledge/people/ada.md": "# Ada\n\nnew page\n",
    "knowledge/index.md": "# Index\n\n- [[ada]]\n",
    "notes/bob/y.md": "a second note\n",
    "notes/ada/café.md": "unicode name\n",
    ".dream/state.json": '{"final": true}\n',
}


def _brain(tmp_path: Path) -> tuple[Path, str]:
    root = tmp_path / "brain"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    for rel, text in {"guide.md": "guide\n", "knowledge/index.md": "# Index\n", "notes/bob/x.md": "bob\n"}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "owner")
    return root, git(root, "rev-parse", "HEAD").strip()


@pytest.fixture
def streams(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """What sync's fast-import is fed (the early commit's own process is not among them)."""
    seen: list[bytes] = []
    real = sync._fast_import

    def spy(root, chunks, meanwhile=None):
        data = b"".join(chunks)
        seen.append(data)
        return real(root, [data], meanwhile)

    monkeypatch.setattr(sync, "_fast_import", spy)
    return seen


def _commit(root: Path, base: str, early: EarlyCommit | None) -> str:
    plan = SyncPlan(writes=FINAL, added=sorted(FINAL), modified=[])
    try:
        result = apply_sync(root, plan, "Dream: run r1\n", "r1", base, root / ".dream/runs/r1", early=early)
    finally:
        if early is not None:
            early.discard()
    return result.commit


def test_the_commit_built_on_the_early_tree_is_the_one_git_add_gives(tmp_path: Path, streams: list[bytes]) -> None:
    root, base = _brain(tmp_path)
    refs = git(root, "for-each-ref")
    # Before the gate: no state yet, an index the gate's drop will change, the rest as final.
    before_gate = {k: v for k, v in FINAL.items() if k != ".dream/state.json"} | {"knowledge/index.md": "# Index\n\n- [[ada]]\n- [[gone]]\n"}
    new = _commit(root, base, EarlyCommit(root, before_gate, base))
    assert git(root, "rev-parse", f"{new}^{{tree}}").strip() == tree_by_git_add(tmp_path, root, FINAL, base)
    assert git(root, "rev-parse", f"{new}^").strip() == base
    # Built on the early tree: only what changed since went through fast-import again.
    (stream,) = streams
    assert b'\nM 040000 ' in stream
    assert b"knowledge/index.md" in stream and b".dream/state.json" in stream
    assert b"notes/bob/y.md" not in stream and b"knowledge/people/ada.md" not in stream
    assert git(root, "for-each-ref") == refs.replace(base, new)
    assert subprocess.run(["git", "fsck", "--no-dangling", "--no-progress"], cwd=root, capture_output=True).returncode == 0


def test_a_commit_on_an_early_commit_on_another_is_the_one_git_add_gives(tmp_path: Path, streams: list[bytes]) -> None:
    root, base = _brain(tmp_path)
    refs = git(root, "for-each-ref")
    # The notes while the pages compile (one rewritten later), then the rest on that tree.
    notes = {"notes/bob/y.md": "a first draft\n", "notes/ada/café.md": FINAL["notes/ada/café.md"]}
    first = EarlyCommit(root, notes, base)
    second = EarlyCommit(root, {k: v for k, v in FINAL.items() if k != ".dream/state.json"}, base, on=first)
    new = _commit(root, base, second)
    assert git(root, "rev-parse", f"{new}^{{tree}}").strip() == tree_by_git_add(tmp_path, root, FINAL, base)
    (stream,) = streams
    assert b'\nM 040000 ' in stream and b".dream/state.json" in stream and b"notes/" not in stream
    assert git(root, "for-each-ref") == refs.replace(base, new)


def test_an_early_commit_holding_every_write_is_committed_as_fast_import_would(tmp_path: Path, streams: list[bytes]) -> None:
    root, base = _brain(tmp_path)
    refs = git(root, "for-each-ref")
    first = EarlyCommit(root, {k: v for k, v in FINAL.items() if k != ".dream/state.json"}, base)
    new = _commit(root, base, EarlyCommit(root, FINAL, base, on=first))  # the last one, after the final regenerate
    assert git(root, "rev-parse", f"{new}^{{tree}}").strip() == tree_by_git_add(tmp_path, root, FINAL, base)
    assert git(root, "rev-parse", f"{new}^").strip() == base
    assert streams == []  # the early tree taken whole: no fast-import of sync's own
    # Message, author Dream and committer as git gives them, as fast-import's commit carries them.
    assert git(root, "log", "-1", "--format=%an <%ae>|%B", new).strip() == "Dream <dream@localhost>|Dream: run r1"
    assert git(root, "log", "-1", "--format=%cn <%ce>", new).strip() == git(root, "var", "GIT_COMMITTER_IDENT").rsplit(" ", 2)[0]
    assert git(root, "for-each-ref") == refs.replace(base, new)
    assert subprocess.run(["git", "fsck", "--no-dangling", "--no-progress"], cwd=root, capture_output=True).returncode == 0


def test_git_is_asked_who_commits_only_where_fast_import_writes_the_commit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """commit-tree takes the identities from git itself: `git var` runs only for fast-import."""
    asked: list[str] = []
    real = sync.BrainRepo.git_all_later

    def spy(self, *commands):
        asked.extend(" ".join(args) for args, _env in commands)
        return real(self, *commands)

    monkeypatch.setattr(sync.BrainRepo, "git_all_later", spy)
    root, base = _brain(tmp_path)
    first = EarlyCommit(root, {k: v for k, v in FINAL.items() if k != ".dream/state.json"}, base)
    new = _commit(root, base, EarlyCommit(root, FINAL, base, on=first))
    assert asked == ["symbolic-ref -q HEAD"]
    asked.clear()
    plan = SyncPlan(writes={"notes/bob/z.md": "z\n"}, added=["notes/bob/z.md"], modified=[])
    apply_sync(root, plan, "Dream: run r2\n", "r2", new, root / ".dream/runs/r2")
    assert asked == ["symbolic-ref -q HEAD", "var GIT_AUTHOR_IDENT", "var GIT_COMMITTER_IDENT"]


@pytest.mark.parametrize("why", ["a file it holds is not written any more", "the branch moved", "its fast-import failed"])
def test_an_early_commit_that_does_not_fit_is_not_used(tmp_path: Path, streams: list[bytes], why: str) -> None:
    root, base = _brain(tmp_path)
    early_writes, early_base, early_root = dict(FINAL), base, root
    if why == "a file it holds is not written any more":  # the gate dropped it (one the earlier early commit holds)
        early_writes["notes/ada/dropped.md"] = "a note of a dropped page\n"
    elif why == "the branch moved":  # the owner committed while the gate ran: sync rebases on it
        (root / "guide.md").write_text("guide, edited\n", encoding="utf-8")
        git(root, "commit", "-q", "-am", "owner again")
        early_base, base = base, git(root, "rev-parse", "HEAD").strip()
    else:
        early_root = tmp_path / "not-a-repo"
        early_root.mkdir()
    refs = git(root, "for-each-ref")
    first = EarlyCommit(early_root, {k: v for k, v in early_writes.items() if k.startswith("notes/")}, early_base)
    new = _commit(root, base, EarlyCommit(early_root, early_writes, early_base, on=first))
    assert git(root, "rev-parse", f"{new}^{{tree}}").strip() == tree_by_git_add(tmp_path, root, FINAL, base)
    (stream,) = streams
    assert b"M 040000" not in stream and b"notes/bob/y.md" in stream
    assert git(root, "for-each-ref") == refs.replace(base, new)


def test_an_unused_early_commit_leaves_no_ref(tmp_path: Path) -> None:
    root, base = _brain(tmp_path)
    refs = git(root, "for-each-ref")
    early = EarlyCommit(root, FINAL, base)
    early.discard()  # the run failed, or nothing passed the gate
    assert git(root, "for-each-ref") == refs


def test_a_run_on_a_large_brain_lands_the_tree_a_run_without_it_lands(compiled_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                     streams: list[bytes]) -> None:
    turns = [("user", "Lena from Pine Laboratory asked for the figures as PDF, not PNG."), ("assistant", "Noted: PDF figures for Lena.")]
    other = copy_brain(compiled_copy, tmp_path / "other")
    started: list[set[str]] = []

    class Seen(EarlyCommit):
        def __init__(self, root, writes, base, on=None):
            started.append(set(writes))
            super().__init__(root, writes, base, on)

    monkeypatch.setattr(run_module, "EarlyCommit", Seen)
    trees = {}
    for root, threshold in ((compiled_copy, 0), (other, 10**9)):
        monkeypatch.setattr(run_module, "EARLY_COMMIT_MIN_FILES", threshold)
        add_session(root, "2026-07-20-figures", "2026-07-20T09:00:00+09:00", turns)
        report = dream(root, "2026-07-21T02:00:00Z")
        assert report.status == "ok" and report.commit, report
        trees[threshold] = git(root, "rev-parse", "HEAD^{tree}").strip()
        assert "refs/dream/" not in git(root, "for-each-ref")
        assert git(root, "status", "--porcelain") == ""
    assert trees[0] == trees[10**9]
    # The notes, then the rest before the gate but the log (written again after it), then the rest.
    assert len(started) == 3 and "knowledge/log.md" not in started[0] | started[1] and "knowledge/log.md" in started[2]
    # The last early commit, started after the final regenerate, holds every write (state.json's
    # 2 MB among them on a large Brain): sync commits its tree and runs no fast-import of its own.
    (plain_stream,) = streams
    assert b"M 040000" not in plain_stream and b"inline" in plain_stream
