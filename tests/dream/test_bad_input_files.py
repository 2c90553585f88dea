"""Importers and the raw reader are total: pipes are never opened, deep nesting is a message, and an
import that read nothing exits non-zero. Each case runs the real CLI in a subprocess with a timeout,
so a hang fails the test instead of the suite."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from brain.scaffold import init_brain

DEEP = "[" * 100_000 + "]" * 100_000


def dream(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dream.cli", *args], cwd=cwd, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                               "GIT_COMMITTER_EMAIL": "t@t"})


@pytest.fixture
def brain(tmp_path: Path) -> Path:
    root = tmp_path / "memory"  # not "brain": a folder of that name in the cwd would shadow the package
    init_brain(root)
    return root


def test_a_pipe_is_refused_by_name_and_the_import_exits_non_zero(brain: Path, tmp_path: Path):
    fifo = tmp_path / "x.jsonl"
    os.mkfifo(fifo)
    result = dream("import", "jsonl", str(fifo), "--brain", str(brain), cwd=tmp_path)
    assert result.returncode == 1
    assert f"{fifo}: not a regular file (a pipe, device or socket)" in result.stderr
    assert "nothing could be imported" in result.stderr and "nothing was imported" in result.stdout


@pytest.mark.parametrize("fmt", ["chatgpt", "locomo", "longmemeval"])
def test_deeply_nested_json_is_one_line_not_a_traceback(brain: Path, tmp_path: Path, fmt: str):
    path = tmp_path / "deep.json"
    path.write_text(DEEP, encoding="utf-8")
    result = dream("import", fmt, str(path), "--brain", str(brain), cwd=tmp_path)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert f"{path}: JSON nested too deeply to read" in result.stderr


def test_an_import_where_every_input_is_bad_exits_non_zero(brain: Path, tmp_path: Path):
    empty = tmp_path / "empty.json"
    empty.write_text("", encoding="utf-8")
    result = dream("import", "chatgpt", str(empty), "--brain", str(brain), cwd=tmp_path)
    assert result.returncode == 1 and f"{empty}:1:1: malformed JSON" in result.stderr


def test_a_pipe_and_a_deep_line_in_sessions_raw_are_reported_and_the_rest_compiles(brain: Path, tmp_path: Path):
    raw = brain / "sessions/raw"
    os.mkfifo(raw / "pipe.jsonl")
    header = {"type": "session", "id": "2026-01-02-deep", "started": "2026-01-02T10:00:00", "participants": ["Ana"]}
    good = {"type": "turn", "n": 1, "role": "user", "speaker": "Ana", "text": "I work at Harbor Labs in Porto."}
    (raw / "2026-01-02-deep.jsonl").write_text(json.dumps(header) + "\n" + json.dumps(good) + "\n"
                                               + '{"type":"turn","n":2,"role":"user","text":' + DEEP + "}\n", encoding="utf-8")
    result = dream("run", "--brain", str(brain), "--now", "2026-01-03T02:00:00Z", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "sessions/raw/pipe.jsonl: not a regular file; skipped" in result.stdout + result.stderr
    assert "sessions/raw/2026-01-02-deep.jsonl:3: JSON nested too deeply; line skipped" in result.stdout + result.stderr
    assert (brain / "sessions/summaries/2026-01-02-deep.md").is_file()


def _session_lines(sid: str, *texts: str) -> str:
    header = {"type": "session", "id": sid, "started": "2026-01-02T10:00:00Z", "participants": ["Ana", "assistant"]}
    turns = [{"type": "turn", "n": n, "role": "user", "speaker": "Ana", "text": t} for n, t in enumerate(texts, 1)]
    return "".join(json.dumps(x) + "\n" for x in [header, *turns])


HUGE = "I work at Harbor Labs in Porto. " + "word " * 2_000_000  # a 10 MB line


def test_a_10_mb_line_and_symlink_loops_in_an_import_folder_are_bounded_and_the_rest_imports(brain: Path, tmp_path: Path):
    folder = tmp_path / "export"
    (folder / "sub").mkdir(parents=True)
    (folder / "big.jsonl").write_text(_session_lines("2026-01-02-big", HUGE, "I live in Porto."), encoding="utf-8")
    (folder / "small.jsonl").write_text(_session_lines("2026-01-03-small", "I like green tea."), encoding="utf-8")
    os.symlink(".", folder / "loop")
    os.symlink("..", folder / "sub" / "up")
    result = dream("import", "jsonl", str(folder), "--brain", str(brain), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "2 new" in result.stdout and "Traceback" not in result.stderr
    assert f"{folder / 'big.jsonl'}:2: turn 1 is longer than 200000 characters; it was cut" in result.stderr
    imported = (brain / "sessions/raw/2026-01-02-big.jsonl").read_text(encoding="utf-8")
    assert len(imported) < 300_000 and "I live in Porto." in imported


def test_a_10_mb_line_and_a_symlink_loop_in_sessions_raw_are_reported_and_the_rest_compiles(brain: Path, tmp_path: Path):
    raw = brain / "sessions/raw"
    (raw / "2026-01-02-big.jsonl").write_text(_session_lines("2026-01-02-big", HUGE, "I live in Porto."), encoding="utf-8")
    os.symlink(".", raw / "loop")
    os.symlink("2026-01-02-big.jsonl", raw / "again.jsonl")
    result = dream("run", "--brain", str(brain), "--now", "2026-01-03T02:00:00Z", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    said = result.stdout + result.stderr
    assert "sessions/raw/2026-01-02-big.jsonl:2: turn 1 is longer than 200000 characters; it was cut" in said
    assert "sessions/raw/again.jsonl: is a symbolic link" in said and "sessions/raw/loop: not a session file" in said
    summary = (brain / "sessions/summaries/2026-01-02-big.md").read_text(encoding="utf-8")
    assert len(summary) < 5_000 and "Harbor Labs" in summary
