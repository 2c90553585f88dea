"""brain.listing: the kept listing gives exactly what a walk gives, and reads only changed folders."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from brain import listing
from brain.listing import LISTING, refresh, save_listing, walk_cached
from brain.layout import document_runs
from brain.tree import walk_sorted


def _write(root: Path, rel: str, text: str = "x\n") -> None:
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    (root / rel).write_text(text, encoding="utf-8")


@pytest.fixture
def brain(tmp_path: Path) -> Path:
    root = tmp_path / "brain"
    for rel in ("knowledge/people/ada.md", "knowledge/projects/kiln.md", "notes/ada/one.md", "notes/ada/two.md",
                "sessions/raw/2024-01-01-a.jsonl", "sessions/summaries/2024-01-01-a.md", "log.md",
                ".dream/state.json", ".dream/written/0a.json", ".dream/runs/r/staged/x.md", ".git/HEAD",
                "node_modules/pkg/index.js", "notes/ada/__pycache__/x.pyc"):
        _write(root, rel)
    (root / "knowledge/people/link.md").symlink_to(root / "knowledge/people/ada.md")
    (root / "notes/linked").symlink_to(root / "notes/ada", target_is_directory=True)
    (root / "notes/dangling.md").symlink_to(root / "nowhere.md")
    return root


def _listed(root: Path) -> tuple[list[str], list[str]]:
    files, links, _ = walk_cached(root)
    return files, links


def _reads(monkeypatch: pytest.MonkeyPatch, root: Path) -> list[str]:
    """The folders walk_cached reads from now on, relative to root ("" for the root)."""
    read: list[str] = []
    real = listing.read_folder

    def counted(path: str, at_root: bool):
        read.append(os.path.relpath(path, root).replace(os.sep, "/").removeprefix("."))
        return real(path, at_root)

    monkeypatch.setattr(listing, "read_folder", counted)
    return read


def test_the_kept_listing_follows_every_kind_of_change(brain: Path):
    """After each change, with the listing kept or not in between, walk_cached lists what a walk does."""
    save_listing(brain)
    assert _listed(brain) == walk_sorted(brain)
    changes = [
        lambda r: _write(r, "notes/ada/three.md"),
        lambda r: (r / "notes/ada/one.md").unlink(),
        lambda r: _write(r, "notes/new-topic/deep/er/a.md"),
        lambda r: shutil.rmtree(r / "notes/new-topic"),
        lambda r: (r / "knowledge/projects").rename(r / "knowledge/work"),
        lambda r: ((r / "log.md").unlink(), _write(r, "log.md/inside.md")),  # a file becomes a folder
        lambda r: (shutil.rmtree(r / "knowledge/work"), (r / "knowledge/work").symlink_to(r / "notes", target_is_directory=True)),
        lambda r: (r / "notes/linked").unlink(),
        lambda r: _write(r, "top.md"),
        lambda r: [_write(r, f"sessions/raw/bulk-{i:04d}.jsonl") for i in range(listing.SPLICE_MAX + 10)],
        lambda r: shutil.rmtree(r / "sessions/raw"),
        lambda r: _write(r, ".dream/written/0b.json"),  # below .dream: read each time, not kept
    ]
    for i, change in enumerate(changes):
        change(brain)
        if i % 2 == 0:
            save_listing(brain)
        assert _listed(brain) == walk_sorted(brain), f"change {i}"
        assert _listed(brain) == walk_sorted(brain), f"change {i}, again"


def test_only_folders_changed_since_the_listing_was_kept_are_read(brain: Path, monkeypatch: pytest.MonkeyPatch):
    save_listing(brain)
    read = _reads(monkeypatch, brain)
    assert _listed(brain) == walk_sorted(brain) and read == []
    _write(brain, "sessions/raw/2024-01-02-b.jsonl")
    assert _listed(brain) == walk_sorted(brain)
    assert read == ["sessions/raw"]


def test_a_folder_whose_mtime_is_set_back_is_read_again(brain: Path):
    """cp -a, rsync and tar set a folder's mtime back; its ctime still tells."""
    save_listing(brain)
    folder = brain / "notes/ada"
    st = os.stat(folder)
    _write(brain, "notes/ada/restored.md")
    os.utime(folder, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert os.stat(folder).st_mtime_ns == st.st_mtime_ns
    assert "notes/ada/restored.md" in _listed(brain)[0]


def test_a_folder_changed_while_it_is_read_is_read_again_next_time(brain: Path, monkeypatch: pytest.MonkeyPatch):
    save_listing(brain)
    _write(brain, "notes/ada/three.md")
    real = listing.read_folder

    def racing(path: str, at_root: bool):
        found = real(path, at_root)
        if path.endswith("notes/ada"):
            _write(brain, "notes/ada/four.md")  # lands after the folder was read
        return found

    monkeypatch.setattr(listing, "read_folder", racing)
    save_listing(brain)
    files = listing._load(brain / LISTING)[1]
    assert "notes/ada/three.md" in files and "notes/ada/four.md" not in files  # as read
    monkeypatch.setattr(listing, "read_folder", real)
    assert "notes/ada/four.md" in _listed(brain)[0]  # not trusted: read again


def test_folders_no_older_than_the_probe_are_kept_to_be_read_again(brain: Path, monkeypatch: pytest.MonkeyPatch):
    """A folder written in the probe's own clock tick could change again unseen: it is not trusted."""
    monkeypatch.setattr(listing, "_probe", lambda root, **_: 0)
    save_listing(brain)
    monkeypatch.undo()
    read = _reads(monkeypatch, brain)
    assert _listed(brain) == walk_sorted(brain)
    assert sorted(read) == sorted({"", "knowledge", "knowledge/people", "knowledge/projects", "notes", "notes/ada",
                                    "sessions", "sessions/raw", "sessions/summaries"})


def test_refresh_keeps_what_a_run_wrote_after_its_walk(brain: Path, monkeypatch: pytest.MonkeyPatch):
    save_listing(brain)
    _, _, kept = walk_cached(brain)
    _write(brain, "notes/ada/from-the-run.md")
    _write(brain, "knowledge/places/kyoto.md")
    refresh(brain, kept)
    read = _reads(monkeypatch, brain)
    assert _listed(brain) == walk_sorted(brain) and read == []


@pytest.mark.parametrize("damage", [b"", b"garbage", None])
def test_a_missing_or_damaged_listing_is_walked_anew(brain: Path, damage: bytes | None):
    save_listing(brain)
    cache = brain / LISTING
    if damage is None:
        cache.write_bytes(cache.read_bytes()[:-10])  # torn: its crc32 fails
    else:
        cache.write_bytes(damage)
    _write(brain, "notes/ada/three.md")
    assert _listed(brain) == walk_sorted(brain)
    save_listing(brain)
    assert _listed(brain) == walk_sorted(brain)


def test_without_a_probe_nothing_is_trusted(brain: Path, monkeypatch: pytest.MonkeyPatch):
    """A probe that cannot be written (a read-only cache folder): the listing is kept, every folder
    in it marked to be read again."""
    monkeypatch.setattr(listing, "_probe", lambda root, **_: None)
    (brain / LISTING).parent.mkdir(parents=True, exist_ok=True)
    save_listing(brain)
    assert listing._load(brain / LISTING)[1] == [p for p in walk_sorted(brain)[0] if not p.startswith(".dream/")]
    monkeypatch.undo()
    read = _reads(monkeypatch, brain)
    assert _listed(brain) == walk_sorted(brain) and len(read) == 9


# -- Watch: the listing kept after a run's writes, without reading the folders again ----------------

linux_only = pytest.mark.skipif(listing._libc() is None, reason="inotify is Linux's")


def _swap_in(root: Path, rel: str, text: str = "new\n") -> None:
    """A file written as dream.sync does: aside, then renamed into place."""
    tmp = root / f"{rel}.tmp-swap"
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, root / rel)


@linux_only
def test_a_watched_run_keeps_the_listing_without_reading_its_folders(brain: Path, monkeypatch: pytest.MonkeyPatch):
    save_listing(brain)
    _, _, kept = walk_cached(brain)
    written = ["notes/ada/new.md", "notes/ada/one.md", "knowledge/people/bo.md"]
    watch = listing.Watch(brain, {"notes/ada/", "knowledge/people/"}, kept)
    _swap_in(brain, "notes/ada/new.md")
    _swap_in(brain, "notes/ada/one.md")  # replaces a listed file
    os.link(brain / "notes/ada/two.md", brain / "knowledge/people/bo.md")  # linked from a staged copy
    vouched = watch.vouched(written)
    watch.close()
    assert {rel: names for rel, (_, names) in vouched.folders.items()} == {"notes/ada/": ["new.md"], "knowledge/people/": ["bo.md"]}
    read = _reads(monkeypatch, brain)
    refresh(brain, kept, vouched)
    assert read == []  # neither folder was read again
    assert _listed(brain) == walk_sorted(brain) and read == []


@linux_only
@pytest.mark.parametrize("meddle", [
    lambda r: _write(r, "notes/ada/theirs.md"),  # a file the run did not write
    lambda r: (r / "notes/ada/two.md").unlink(),  # a listed file gone
    lambda r: (r / "notes/ada/new.md").unlink() or (r / "notes/ada/new.md").symlink_to(r / "log.md"),  # the run's name, now a link
    lambda r: (r / "notes/ada/sub").mkdir(),  # a folder came
    lambda r: _swap_in(r, "notes/ada/new.md", "again\n"),  # the run's file arrived twice
])
def test_a_folder_where_more_happened_than_the_run_did_is_read_again(brain: Path, meddle, monkeypatch: pytest.MonkeyPatch):
    save_listing(brain)
    _, _, kept = walk_cached(brain)
    watch = listing.Watch(brain, {"notes/ada/"}, kept)
    _swap_in(brain, "notes/ada/new.md")
    meddle(brain)
    vouched = watch.vouched(["notes/ada/new.md"])
    watch.close()
    assert "notes/ada/" not in vouched.folders
    read = _reads(monkeypatch, brain)
    refresh(brain, kept, vouched)
    assert "notes/ada" in read
    assert _listed(brain) == walk_sorted(brain)


@linux_only
def test_a_change_after_the_watch_ended_is_seen(brain: Path):
    save_listing(brain)
    _, _, kept = walk_cached(brain)
    watch = listing.Watch(brain, {"notes/ada/"}, kept)
    _swap_in(brain, "notes/ada/new.md")
    vouched = watch.vouched(["notes/ada/new.md"])
    watch.close()
    assert "notes/ada/" in vouched.folders
    _write(brain, "notes/ada/later.md")  # after the events were read: its stat tells
    refresh(brain, kept, vouched)
    assert _listed(brain) == walk_sorted(brain)
    assert "notes/ada/later.md" in _listed(brain)[0]


@linux_only
def test_a_folder_changed_before_the_watch_began_is_not_vouched_for(brain: Path):
    save_listing(brain)
    _, _, kept = walk_cached(brain)
    _write(brain, "notes/ada/before.md")  # after the listing, before the watch: unseen by inotify
    watch = listing.Watch(brain, {"notes/ada/"}, kept)
    _swap_in(brain, "notes/ada/new.md")
    assert watch.vouched(["notes/ada/new.md"]).folders == {}
    assert watch.vouched([]) == (None, {})  # stopped: nothing more to vouch for
    watch.close()
    refresh(brain, kept)
    assert _listed(brain) == walk_sorted(brain)


def test_a_walker_that_serves_keeps_the_listing_as_a_refresh_here_would(brain: Path):
    """`dream run`'s walker stays (fork_walk(serve=True)): the listing it keeps after the run's
    writes is the one refresh() here keeps."""
    save_listing(brain)
    walker = listing.fork_walk(brain, serve=True)
    files, links = walk_sorted(brain)
    assert walker is not None and walker.result() == (files, links, document_runs(files))
    kept = walker.kept
    _write(brain, "notes/ada/three.md")  # what a run writes after its walk
    assert walker.refresh(None) and walker.close() is True
    served = (brain / LISTING).read_bytes()
    refresh(brain, kept)
    assert (brain / LISTING).read_bytes() == served
    assert _listed(brain) == walk_sorted(brain)
    assert not walker.refresh(None)  # closed: the caller does it here
