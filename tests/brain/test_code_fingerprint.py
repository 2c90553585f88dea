"""code_fingerprint: the digest of the code caches are built by, kept in a memo by the sources' stat.
A memo entry is used only while no source changed; a change that keeps the size and mtime still
changes the ctime; a file changed in the last MEMO_SETTLED_NS is not vouched for."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from brain import doccache
from brain.doccache import code_fingerprint


@pytest.fixture
def package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "src" / "fpkg"
    (folder / "sub").mkdir(parents=True)
    (folder / "__init__.py").write_text("X = 1\n", encoding="utf-8")
    (folder / "sub" / "rules.py").write_text("Y = 2\n", encoding="utf-8")
    (folder / "sub" / "page.j2").write_text("{{ title }}\n", encoding="utf-8")
    (folder / "notes.txt").write_text("not source\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path / "src"))
    monkeypatch.setattr(doccache, "_FINGERPRINTS", {})
    monkeypatch.setattr(doccache, "_STAT_KEYS", {})
    monkeypatch.setattr(doccache, "MEMO_SETTLED_NS", 0)  # the files were just written
    return folder


def _fresh(**kw) -> str:
    doccache._FINGERPRINTS.clear()  # a new process
    doccache._STAT_KEYS.clear()
    return code_fingerprint("fpkg", **kw)


def test_the_memo_gives_the_digest_the_sources_give_until_one_changes(package: Path, tmp_path: Path) -> None:
    memo = tmp_path / "cache" / "code-digests.txt"
    plain = _fresh()
    assert _fresh(memo=memo) == plain and memo.is_file()
    key, digest = memo.read_text(encoding="utf-8").split()
    memo.write_text(f"{key}\t{'f' * 32}\n", encoding="utf-8")
    assert _fresh(memo=memo) == "f" * 32  # the memo is believed: the sources were not read
    (package / "notes.txt").write_text("changed, but not source\n", encoding="utf-8")
    assert _fresh(memo=memo) == "f" * 32
    (package / "sub" / "rules.py").write_text("Y = 3\n", encoding="utf-8")  # same size
    assert _fresh(memo=memo) == _fresh() != plain
    assert memo.read_text(encoding="utf-8").count("\n") == 2  # the old entry stays beside the new


def test_a_change_that_restores_size_and_mtime_is_seen_by_its_ctime(package: Path, tmp_path: Path) -> None:
    memo = tmp_path / "code-digests.txt"
    rules = package / "sub" / "rules.py"
    before = rules.stat()
    plain = _fresh(memo=memo)
    key = memo.read_text(encoding="utf-8").split()[0]
    memo.write_text(f"{key}\t{'f' * 32}\n", encoding="utf-8")
    rules.write_text("Y = 9\n", encoding="utf-8")
    os.utime(rules, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert rules.stat().st_mtime_ns == before.st_mtime_ns
    assert _fresh(memo=memo) == _fresh() != plain


def test_sources_changed_just_now_are_not_kept_and_a_broken_memo_is_only_a_miss(package: Path, tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    memo = tmp_path / "code-digests.txt"
    monkeypatch.setattr(doccache, "MEMO_SETTLED_NS", 3600 * 10**9)
    plain = _fresh(memo=memo)
    assert not memo.exists()
    monkeypatch.setattr(doccache, "MEMO_SETTLED_NS", 0)
    memo.write_bytes(b"\xff\xfe not a memo\n")
    assert _fresh(memo=memo) == plain and memo.read_text(encoding="utf-8").count("\n") == 1
    readonly = tmp_path / "file-not-folder"
    readonly.write_text("x", encoding="utf-8")
    assert _fresh(memo=readonly / "code-digests.txt") == plain  # cannot be written: computed, nothing raised


def test_a_memo_given_later_in_the_process_is_written_too(package: Path, tmp_path: Path) -> None:
    """Two Brains in one process (tests, tools): each one's cache gets the digest."""
    first, second = tmp_path / "a" / "code-digests.txt", tmp_path / "b" / "code-digests.txt"
    plain = _fresh()
    assert code_fingerprint("fpkg", memo=first) == code_fingerprint("fpkg", memo=second) == plain
    assert first.read_text(encoding="utf-8") == second.read_text(encoding="utf-8") != ""
