"""`dream run|status|demo` from the command line: nothing to do, bad input, the lock, --dry-run,
--max-sessions, --json, and the messages people and cron see."""

from __future__ import annotations

import fcntl
import io
import json
import os
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from nadia_runs import (
    LAST_SESSION,
    NADIA_IDS,
    RAW,
    add_session,
    assert_sound,
    commit_files,
    dream,
    files_of,
    git,
    head,
    is_dream_path,
    nadia_inputs,
    processed,
    session_text,
)

from dream.cli import main

NOW = "2026-07-21T02:00:00Z"
KENJI = "knowledge/people/kenji-mori.md"


@pytest.fixture
def dream_cli():
    runner = CliRunner()

    def _invoke(*args: str | Path):
        return runner.invoke(main, [str(a) for a in args], catch_exceptions=False)

    return _invoke


def pending_session(
    root: Path,
    sid: str = "2026-07-20-kenji-book",
    text: str = "Kenji Mori is writing a book about tactile paving in Japanese stations.",
    commit: bool = True,
) -> str:
    add_session(root, sid, "2026-07-20T10:00:00+09:00", [("user", text), ("assistant", "Noted.")], commit)
    return sid


def brain_files(root: Path) -> dict[str, bytes]:
    """Every file but git's and the run's machine state (ignored by git)."""
    return files_of(root, (".git/", ".dream/runs/", ".dream/lock"))


# --- nothing to do ----------------------------------------------------------------------------


def test_nothing_pending_says_so_and_makes_no_commit(compiled_copy: Path, dream_cli) -> None:
    before, files = head(compiled_copy), brain_files(compiled_copy)
    quiet = dream_cli("run", "--brain", compiled_copy, "--now", NOW)
    assert (quiet.exit_code, quiet.stdout, quiet.stderr) == (0, "", "")  # cron: quiet on success
    told = dream_cli("run", "--brain", compiled_copy, "--now", NOW, "-v")
    assert (told.exit_code, told.stdout.splitlines()[0], told.stderr) == (0, "dream: nothing new; no commit", "")
    as_json = json.loads(dream_cli("run", "--brain", compiled_copy, "--now", NOW, "--json").stdout)
    assert (as_json["status"], as_json["sessions"], as_json["commit"]) == ("nothing-to-do", [], None)
    assert head(compiled_copy) == before and brain_files(compiled_copy) == files


# --- bad input --------------------------------------------------------------------------------


def test_a_run_whose_gate_rejects_a_file_exits_1_saying_what_and_does_not_try_it_every_night(compiled_copy: Path, dream_cli) -> None:
    page = compiled_copy / "knowledge/people/nadia-rahman.md"
    page.write_text(page.read_text(encoding="utf-8").replace("title: Nadia Rahman", "title: [Nadia Rahman", 1), encoding="utf-8")
    git(compiled_copy, "commit", "-q", "--allow-empty", "-am", "my edit")
    add_session(compiled_copy, "2026-08-01-new-job", "2026-08-01T10:00:00+09:00", [
        ("user", "I work at Kyoto University as a professor of inclusive design."), ("assistant", "Congratulations.")])
    result = dream_cli("run", "--brain", compiled_copy, "--now", "2026-08-02T02:00:00Z")
    assert result.exit_code == 1
    assert "rejected: knowledge/people/nadia-rahman.md:" in result.stdout and "F001 invalid YAML" in result.stdout
    assert result.stderr.strip() == "dream: error: the gate rejected 1 file(s) (listed above with why); the rest is committed"
    again = dream_cli("run", "--brain", compiled_copy, "--now", "2026-08-03T02:00:00Z")
    assert (again.exit_code, again.stdout, again.stderr) == (0, "", "")  # the session is done: no rejection every night


def test_a_malformed_line_is_reported_with_file_and_line_and_the_rest_compiles(compiled_copy: Path) -> None:
    root = compiled_copy
    sid = "2026-07-20-kenji-book"
    good = session_text(sid, "2026-07-20T10:00:00+09:00", [
        ("user", "Kenji Mori is writing a book about tactile paving in Japanese stations."),
        ("assistant", "That sounds like a useful book."),
        ("user", "Aiko Tanaka is planning a tactile paving survey in Sendai Station."),
    ]).splitlines(keepends=True)
    broken = good[:2] + ['{"type":"turn","n":2,"role":"assistant","text":"cut off\n'] + good[3:]
    (root / RAW / f"{sid}.jsonl").write_text("".join(broken), encoding="utf-8")
    other = pending_session(root, "2026-07-20-other", "Priya Natarajan is designing a tactile map of Kyoto Station.", commit=False)
    git(root, "add", "-f", "--", RAW)
    git(root, "commit", "-q", "--allow-empty", "-m", "two sessions, one with a broken line")

    report = dream(root, NOW)
    assert report.status == "ok" and report.sessions == sorted([sid, other])
    assert len(report.problems) == 1
    assert re.fullmatch(rf"sessions/raw/{sid}\.jsonl:3: malformed JSON \(.+\); line skipped", report.problems[0])
    landed = "".join((root / p).read_text(encoding="utf-8") for p in commit_files(root) if p.startswith("notes/"))
    assert f"session:{sid}#t1" in landed and f"session:{sid}#t3" in landed and f"session:{other}#t1" in landed
    assert f"sessions/summaries/{sid}.md" in commit_files(root)
    assert_sound(root)


def test_dream_run_tells_about_a_malformed_line_without_verbose(compiled_copy: Path, dream_cli) -> None:
    root = compiled_copy
    sid = pending_session(root)
    path = root / RAW / f"{sid}.jsonl"
    path.write_text(path.read_text(encoding="utf-8") + '{"type":"turn","n":3,"role":"user","text":"cut\n', encoding="utf-8")
    git(root, "commit", "-q", "--allow-empty", "-am", "a broken line")
    result = dream_cli("run", "--brain", root, "--now", NOW)
    assert result.exit_code == 0
    assert f"sessions/raw/{sid}.jsonl:4: malformed JSON" in result.stdout + result.stderr


def test_unsafe_names_and_binary_sessions_are_reported_and_the_rest_compiles(compiled_copy: Path) -> None:
    root = compiled_copy
    (root / RAW / "bad name!.jsonl").write_text(session_text("bad", "2026-07-20T09:00:00+09:00", [("user", "Kenji Mori likes tea.")]))
    (root / RAW / "2026-07-20-binary.jsonl").write_bytes(b"\x00\xff\xfe not a session\n")
    good = pending_session(root)
    git(root, "add", "-f", "--", RAW)
    git(root, "commit", "-q", "--allow-empty", "-m", "three new files")

    report = dream(root, NOW)
    assert report.status == "ok" and report.sessions == [good]
    assert report.problems == [
        "sessions/raw/bad name!.jsonl: unsafe session id 'bad name!'; rename the file (letters, digits, '.', '_', '-'); skipped",
        "sessions/raw/2026-07-20-binary.jsonl:1: binary content (NUL byte); a session must be UTF-8 JSON lines",
    ]
    assert report.session_failures == {"2026-07-20-binary": "unreadable session (see problems)"}
    assert f"sessions/summaries/{good}.md" in commit_files(root) and report.rejected == {}


def test_a_session_that_cannot_be_read_does_not_make_a_commit_every_night(compiled_copy: Path) -> None:
    root = compiled_copy
    (root / RAW / "2026-07-20-binary.jsonl").write_bytes(b"\x00\xff\xfe not a session\n")
    git(root, "add", "-f", "--", RAW)
    git(root, "commit", "-q", "--allow-empty", "-m", "a broken export")
    before = head(root)
    for night in ("2026-07-21T02:00:00Z", "2026-07-22T02:00:00Z"):
        report = dream(root, night)
        assert report.session_failures == {"2026-07-20-binary": "unreadable session (see problems)"}
        assert report.commit is None and head(root) == before


def test_a_session_whose_header_id_differs_from_its_file_name_is_cited_by_its_file_name(compiled_copy: Path) -> None:
    root = compiled_copy
    sid = "2026-07-20-renamed"
    (root / RAW / f"{sid}.jsonl").write_text(session_text("an-old-export-id", "2026-07-20T10:00:00+09:00", [
        ("user", "Aiko Tanaka is writing a guide to step-free routes in Sendai Station."),
        ("assistant", "Noted."),
    ]), encoding="utf-8")
    git(root, "add", "-f", "--", RAW)
    git(root, "commit", "-q", "--allow-empty", "-m", "a renamed session")

    report = dream(root, NOW)
    assert report.status == "ok" and report.sessions == [sid] and report.rejected == {}
    assert f"sessions/summaries/{sid}.md" in commit_files(root)
    landed = "".join((root / p).read_text(encoding="utf-8") for p in commit_files(root) if p.startswith("notes/"))
    assert f"session:{sid}#t1" in landed


def test_a_held_lock_fails_with_one_line_and_changes_nothing(compiled_copy: Path, dream_cli) -> None:
    root = compiled_copy
    pending_session(root)
    before = head(root)
    fd = os.open(root / ".dream/lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # another run holds it and wrote its pid
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        result = dream_cli("run", "--brain", root, "--now", NOW)
    finally:
        os.close(fd)
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr == f"dream: error: another dream run is in progress (pid {os.getpid()}) (wait for it to finish)\n"
    assert head(root) == before
    assert dream_cli("run", "--brain", root, "--now", NOW).exit_code == 0  # released: the next run works
    assert head(root) != before


def _dream_process(*args: str | Path):
    """`dream` as cron runs it: a process of its own."""
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "dream.cli", *map(str, args)], capture_output=True, text=True)


def test_the_dream_process_exits_with_its_status_and_all_its_output(compiled_copy: Path, dream_cli) -> None:
    root = compiled_copy
    pending_session(root)
    report = _dream_process("run", "--brain", root, "--now", NOW, "--dry-run", "--json")
    assert report.returncode == 0, report.stderr
    assert json.loads(report.stdout)["status"] == "dry-run"  # the whole report, flushed before the exit
    assert report.stdout == dream_cli("run", "--brain", root, "--now", NOW, "--dry-run", "--json").stdout

    failed = _dream_process("run", "--brain", root / "no-such-brain", "--now", NOW)
    assert failed.returncode == 1 and failed.stdout == ""
    assert failed.stderr.startswith("dream: error: ") and failed.stderr.count("\n") == 1
    usage = _dream_process("run", "--no-such-option")
    assert usage.returncode == 2 and "No such option" in usage.stderr


# --- --dry-run, --max-sessions ------------------------------------------------------------------


def test_dry_run_reports_the_files_but_writes_no_commit(compiled_copy: Path, dream_cli) -> None:
    root = compiled_copy
    sid = pending_session(root)
    before, files = head(root), brain_files(root)
    result = dream_cli("run", "--brain", root, "--now", NOW, "--dry-run", "--json")
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert (report["status"], report["sessions"], report["commit"]) == ("dry-run", [sid], None)
    assert {f"sessions/summaries/{sid}.md", KENJI, ".dream/state.json", "sessions/index.md"} <= set(report["files"])
    assert all(is_dream_path(p) for p in report["files"])
    assert head(root) == before and brain_files(root) == files
    assert git(root, "status", "--porcelain") == ""

    text = dream_cli("run", "--brain", root, "--now", NOW, "--dry-run")
    assert text.exit_code == 0
    assert text.stdout.startswith("dream: would write 1 session(s): 0 page(s) created, ")
    assert f"  session: {sid}\n" in text.stdout and f"  updated: {KENJI}\n" in text.stdout
    assert head(root) == before


def test_max_sessions_compiles_that_many_and_defers_the_rest(tmp_path: Path, dream_cli, monkeypatch) -> None:
    monkeypatch.setenv("GIT_AUTHOR_DATE", "2026-07-15T02:00:00+00:00")
    root = nadia_inputs(tmp_path / "brain")
    result = dream_cli("run", "--brain", root, "--now", "2026-07-15T02:00:00Z", "--max-sessions", "2", "--json")
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["status"] == "ok"
    assert report["sessions"] == NADIA_IDS[:2]
    assert report["deferred"] == NADIA_IDS[2:]
    assert sorted(processed(root)) == NADIA_IDS[:2]

    status = dream_cli("status", "--brain", root)
    subject = git(root, "log", "-1", "--format=%s").strip()
    assert status.stdout == (
        "2 session(s) compiled, 13 pending\n"
        + "".join(f"  pending: {sid}\n" for sid in NADIA_IDS[2:])
        + "last runs:\n"
        + f"  2026-07-15T02:00:00 {report['run_id']} {report['commit'][:10]} {subject}\n"
    )
    verbose = dream_cli("run", "--brain", root, "--now", "2026-07-16T02:00:00Z", "--max-sessions", "2", "-v")
    assert "  11 session(s) left for the next run (--max-sessions)\n" in verbose.stdout + "\n"


# --- --json, status, demo -------------------------------------------------------------------------

DOCUMENTED_FIELDS = {  # README / DESIGN: the run report (`--json` and .dream/runs/<run-id>/report.json)
    "run_id": str, "backend": str, "status": str, "sessions": list, "deferred": list, "pages_created": list,
    "pages_updated": list, "rejected": dict, "conflicts": list, "forgotten": list, "problems": list,
    "findings": list, "verifier": dict, "tokens_in": int, "tokens_out": int, "commit": str, "files": list,
}


def test_run_json_prints_the_report_with_its_documented_fields(compiled_copy: Path, dream_cli) -> None:
    root = compiled_copy
    sid = pending_session(root)
    result = dream_cli("run", "--brain", root, "--now", NOW, "--json")
    assert result.exit_code == 0 and result.stderr == ""
    report = json.loads(result.stdout)
    for field, kind in DOCUMENTED_FIELDS.items():
        assert isinstance(report.get(field), kind), field
    assert re.fullmatch(r"20260721T020000Z-[0-9a-f]{6}", report["run_id"])
    assert (report["backend"], report["status"], report["sessions"], report["commit"]) == ("offline", "ok", [sid], head(root))
    assert report["files"] == commit_files(root)
    assert KENJI in report["pages_updated"] and report["conflicts"] == [] and report["rejected"] == {}
    saved = json.loads((root / ".dream/runs" / report["run_id"] / "report.json").read_text(encoding="utf-8"))
    assert saved == report


def test_status_lists_the_last_run_and_the_pending_sessions(compiled_copy: Path, nadia_compiled, dream_cli,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    root = compiled_copy
    sid = pending_session(root)
    before = sorted((p, p.read_bytes()) for p in (root / ".dream").rglob("*") if p.is_file())
    result = dream_cli("status", "--brain", root)
    assert result.exit_code == 0
    assert sorted((p, p.read_bytes()) for p in (root / ".dream").rglob("*") if p.is_file()) == before  # status writes nothing
    compiled = nadia_compiled.report
    subject = git(root, "log", "-1", "--format=%s", compiled.commit).strip()
    assert result.stdout == (
        f"{len(NADIA_IDS)} session(s) compiled, 1 pending\n"
        f"  pending: {sid}\n"
        "last runs:\n"
        f"  2026-07-15T02:00:00 {compiled.run_id} {compiled.commit[:10]} {subject}\n"
    )
    assert json.loads(dream_cli("status", "--brain", root, "--json").stdout)["pending"] == [sid]


def test_status_of_a_brain_never_compiled(tmp_path: Path, dream_cli) -> None:
    root = nadia_inputs(tmp_path / "brain", leave_out=tuple(s for s in NADIA_IDS if s != LAST_SESSION))
    result = dream_cli("status", "--brain", root)
    assert result.stdout == f"0 session(s) compiled, 1 pending\n  pending: {LAST_SESSION}\nno runs yet\n"


def test_demo_into_a_folder_that_is_not_empty_fails_with_one_line(tmp_path: Path, dream_cli) -> None:
    dest = tmp_path / "taken"
    dest.mkdir()
    (dest / "notes.txt").write_text("mine\n", encoding="utf-8")
    result = dream_cli("demo", dest)
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr == f"dream: error: {dest} is not empty (choose a new folder for the demo)\n"
    assert [p.name for p in dest.iterdir()] == ["notes.txt"]




# --- progress on long work ------------------------------------------------------------------------


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_run_tells_its_progress_and_the_bar_shows_only_on_a_terminal(tmp_path: Path, dream_cli) -> None:
    from dream.backends import get_backend
    from dream.cli import _Bar
    from dream.run import run
    from dream.settings import RunFlags, load_settings

    root = nadia_inputs(tmp_path / "brain")
    heard: list[tuple[str, int, int]] = []
    run(load_settings(root, RunFlags(backend="offline", now=NOW, max_sessions=3)), get_backend("offline"), progress=lambda *a: heard.append(a))
    assert [h for h in heard if h[2]] == [("sessions", 1, 3), ("sessions", 2, 3), ("sessions", 3, 3)]
    assert [h[0] for h in heard if not h[2]] == ["orient", "sessions", "notes", "update", "generate", "gate", "generate", "sync"]
    screen, pipe = _Terminal(), io.StringIO()
    for out in (screen, pipe):
        with _Bar("sessions", file=out) as bar:
            bar("sessions", 2, 3)
    assert "dream sessions: 2/3 sessions" in screen.getvalue() and pipe.getvalue() == ""
    later = dream_cli("run", "--brain", root, "--now", NOW, "--max-sessions", "2")  # not a terminal: quiet, as under cron
    assert later.exit_code == 0 and later.output == ""
