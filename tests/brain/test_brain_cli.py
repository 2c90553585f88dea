"""Each `brain` command with click's CliRunner on small real trees (and real git)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from brain.cli import main

JUDS = "knowledge/projects/juds.md"


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout


# -- the group ---------------------------------------------------------------------------------
def test_help_lists_every_command_and_stays_light():
    code = "import sys; from brain.cli import main; print(sorted(m for m in ('networkx', 'git', 'validators', 'yaml', 'markdown_it', 'mcp') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=Path(__file__).parents[2])
    assert out.stdout.strip() == "[]"
    assert sorted(main.commands) == ["backlinks", "cite", "context", "hook", "index", "init", "install", "links", "log", "mcp", "search", "serve", "show", "validate"]


def test_version(cli):
    assert cli("--version").stdout == "brain, version 0.1.0\n"


def test_not_a_brain_is_one_clear_error(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = cli("index")
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr == (
        f"error: not a Brain: {tmp_path} has no knowledge/ nor brain.toml (from the current folder)\n"
        "hint: run `brain init PATH` or pass --brain\n"
    )
    result = cli("index", env={"BRAIN_HOME": str(tmp_path / "nowhere")})
    assert result.stderr.startswith(f"error: not a Brain: {tmp_path / 'nowhere'} does not exist (from $BRAIN_HOME)\n")


def test_brain_is_found_from_flag_env_or_current_folder(cli, small_brain, monkeypatch, tmp_path):
    expected = cli("index", "--brain", small_brain).stdout
    assert expected.startswith("# Index\n")
    assert cli("index", env={"BRAIN_HOME": str(small_brain)}).stdout == expected
    monkeypatch.chdir(small_brain)
    assert cli("index").stdout == expected
    monkeypatch.chdir(tmp_path)
    assert cli("index", env={"BRAIN_HOME": str(small_brain)}).stdout == expected


# -- init --------------------------------------------------------------------------------------
def test_init_creates_the_layout_and_commits(cli, tmp_path):
    root = tmp_path / "b"
    result = cli("init", root)
    assert result.exit_code == 0, result.stderr
    sha = git(root, "rev-parse", "--short=7", "HEAD").strip()
    assert result.stdout == (
        f"Initialised a Brain in {root}\n"
        "  created brain.toml\n  created guide.md\n  created knowledge/index.md\n  created knowledge/log.md\n"
        "  created sessions/index.md\n  created .dream/instructions.md\n  created .dream/forget.md\n"
        f"  created .gitignore\n  new git repository, commit {sha}\n"
    )
    assert git(root, "ls-files").split() == [
        ".dream/forget.md", ".dream/instructions.md", ".gitignore", "brain.toml", "guide.md",
        "knowledge/index.md", "knowledge/log.md", "sessions/index.md",
    ]
    assert git(root, "status", "--porcelain") == ""
    assert (root / "sessions/raw").is_dir() and (root / "rules").is_dir()
    assert (root / "knowledge/index.md").read_text() == "# Index\n"
    assert ".dream/runs/" in (root / ".gitignore").read_text().splitlines()
    again = cli("init", root)
    assert again.exit_code == 1
    assert again.stderr == f"error: {root} is already a Brain (it has knowledge/)\nhint: use it with --brain {root}\n"


def test_init_names_the_owner_given_or_git_s_user_name(cli, tmp_path, monkeypatch):
    from brain.config import BrainConfig

    def owner(name: str):
        return BrainConfig.from_toml((tmp_path / name / "brain.toml").read_text()).owner

    assert cli("init", "--owner", 'Ana "Nana" Lima', tmp_path / "a").exit_code == 0
    assert owner("a") == 'Ana "Nana" Lima'
    assert cli("init", tmp_path / "b").exit_code == 0  # the tests' git has no user.name
    assert owner("b") is None
    config = tmp_path / "gitconfig"
    config.write_text("[user]\n\tname = Bo Chen\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    assert cli("init", tmp_path / "c").exit_code == 0
    assert owner("c") == "Bo Chen"


def test_init_in_a_folder_with_files_keeps_them(cli, make_tree):
    root = make_tree({"guide.md": "# Mine\n", ".gitignore": "*.tmp\n", "notes.txt": "private\n"}, name="own")
    result = cli("init", "--json", root)
    report = json.loads(result.stdout)
    assert report["kept"] == ["guide.md"] and report["updated"] == [".gitignore"]
    assert "guide.md" not in report["created"]
    assert (root / "guide.md").read_text() == "# Mine\n"
    assert (root / ".gitignore").read_text() == "*.tmp\n.dream/runs/\n.dream/cache/\n.dream/lock\n.dream/journal.json\nsessions/raw/\n"
    assert "notes.txt" not in git(root, "ls-files").split()
    assert cli("index", "--brain", root).stdout == "# Index\n"


# -- index -------------------------------------------------------------------------------------
def test_index_renders_when_missing_and_trims(cli, small_brain):
    full = cli("index", "--brain", small_brain)
    assert full.stdout == (
        "# Index\n\n## People\n- [[nadia-rahman|Nadia Rahman]]: Accessibility researcher in Tokyo.\n\n"
        "## Projects\n- [[juds|Japan Universal Design Sprint]]: Two-week sprint in Kyoto and Sendai.\n\n"
        "## Concepts\n- [[universal-design|Universal design]]: Design usable by everyone.\n"
    )
    trimmed = cli("index", "--brain", small_brain, "--budget", "60")
    assert trimmed.stdout == (  # juds has more backlinks than nadia-rahman
        "# Index\n\n## Projects\n- [[juds|Japan Universal Design Sprint]]: Two-week sprint in Kyoto and Sendai.\n\n"
        "(index trimmed to 60 tokens: 2 of 3 pages omitted — open knowledge/ or run `brain show NAME` for the rest)\n"
    )
    data = json.loads(cli("index", "--brain", small_brain, "--budget", "60", "--json").stdout)
    assert (data["trimmed"], data["omitted"], data["total"], data["budget"]) == (True, ["nadia-rahman", "universal-design"], 3, 60)


def test_index_budget_comes_from_brain_toml(cli, small_brain):
    (small_brain / "brain.toml").write_text("[index]\nbudget = 60\n", encoding="utf-8")
    assert "2 of 3 pages omitted" in cli("index", "--brain", small_brain).stdout
    assert "omitted" not in cli("index", "--brain", small_brain, "--budget", "0").stdout
    (small_brain / "brain.toml").write_text("[index]\nbudget = lots\n", encoding="utf-8")
    result = cli("index", "--brain", small_brain)
    assert result.exit_code == 1
    assert result.stderr.startswith(f"error: {small_brain / 'brain.toml'}:2: invalid TOML: Invalid value\n")


# -- show --------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["juds", "JUDS", "japan universal design sprint", JUDS])
def test_show_by_slug_alias_title_or_path(cli, small_brain, name):
    result = cli("show", name, "--brain", small_brain)
    assert result.exit_code == 0
    assert result.stdout == (small_brain / JUDS).read_text()


def test_show_json(cli, small_brain):
    data = json.loads(cli("show", "nadia", "--json", "--brain", small_brain).stdout)
    assert data["path"] == "knowledge/people/nadia-rahman.md"
    assert data["frontmatter"]["sources"] == {"1": "session:s1#t1"}
    assert data["frontmatter"]["created"] == "2026-05-03"
    assert data["links"] == [{"target": "juds", "heading": None, "text": "the sprint", "line": 13}]
    assert data["cites"] == [{"n": 1, "line": 13}]


def test_show_unknown_suggests_and_ambiguous_lists(cli, small_brain):
    result = cli("show", "nadia-rahmen", "--brain", small_brain)
    assert result.exit_code == 1
    assert result.stderr == "error: no page, note or session summary named 'nadia-rahmen'\nhint: did you mean 'nadia-rahman'?\n"
    (small_brain / "knowledge/places").mkdir()
    (small_brain / "knowledge/places/kyoto.md").write_text("---\ntitle: Kyoto\ntype: place\naliases: [JUDS]\n---\n")
    result = cli("show", "judS", "--brain", small_brain)
    assert result.stderr == (
        "error: 'judS' is ambiguous: it names 2 documents (knowledge/places/kyoto.md, knowledge/projects/juds.md)\n"
        "hint: pass the path of the one you mean\n"
    )


def test_show_broken_page_as_text_and_json(cli, small_brain):
    (small_brain / JUDS).write_text("---\ntitle: [x\n---\n")
    assert cli("show", "juds", "--brain", small_brain).stdout == "---\ntitle: [x\n---\n"
    result = cli("show", "juds", "--json", "--brain", small_brain)
    assert result.exit_code == 1
    assert result.stderr.startswith(f"error: {JUDS}:3: invalid YAML in front matter")


# -- links and backlinks -----------------------------------------------------------------------
def test_links_and_backlinks(cli, small_brain):
    assert cli("links", "juds", "--brain", small_brain).stdout == (
        "nadia-rahman\t14\tknowledge/people/nadia-rahman.md\nkyoto-station\t15\t(not found)\n"
    )
    assert cli("backlinks", "JUDS", "--brain", small_brain).stdout == (
        "universal-design\t10\tknowledge/concepts/universal-design.md\n"
        "nadia-rahman\t13\tknowledge/people/nadia-rahman.md\n"
        "report-due\t11\tnotes/juds/report-due.md\n"
    )
    rows = json.loads(cli("backlinks", "nadia-rahman", "--json", "--brain", small_brain).stdout)
    assert rows == [{"slug": "juds", "line": 14, "path": JUDS, "name": "nadia-rahman"}]
    empty = cli("backlinks", "universal-design", "--brain", small_brain)
    assert (empty.exit_code, empty.stdout, empty.stderr) == (0, "", "no document links to universal-design\n")


# -- cite --------------------------------------------------------------------------------------
def test_cite_prints_turns_with_speaker_and_time(cli, small_brain):
    assert cli("cite", "juds", "1", "--brain", small_brain).stdout == (
        "session:s1#t1 Nadia 2026-05-03T10:02:00+09:00\n    I lead JUDS.\n    It runs in June.\n"
        "session:s1#t2 assistant\n    Noted.\n"
    )
    assert cli("cite", "juds", "2", "--brain", small_brain).stdout == (
        "source:cal/evt-1 (event, sources/cal/calendar.ics)\n"
        "    Summary: Kyoto workshop\n    Dtstart: 20260610T090000\n    Location: Kyoto Station\n"
    )
    data = json.loads(cli("cite", "report-due", "1", "--json", "--brain", small_brain).stdout)
    assert data["target"] == "session:s1#t2" and data["path"] == "notes/juds/report-due.md"
    assert data["items"] == [{"label": "session:s1#t2 assistant", "text": "Noted.", "turn": 2,
                              "speaker": "assistant", "time": None, "fields": {}}]


def test_cite_of_a_note(cli, small_brain):
    text = (small_brain / JUDS).read_text().replace("  2: source:cal/evt-1", "  2: note:juds/report-due.md")
    (small_brain / JUDS).write_text(text)
    assert cli("cite", "juds", "2", "--brain", small_brain).stdout == (
        "note:juds/report-due.md (notes/juds/report-due.md)\n    The final report of [[juds]] is due on 2026-07-31 [cite:1].\n"
    )


@pytest.mark.parametrize(
    ("source", "n", "error"),
    [
        (None, "7", f"error: {JUDS} has no source 7\nhint: its sources are 1, 2\n"),
        ("session:s1#t2-t9", "2", f"error: {JUDS}:10: source 2 does not resolve: session:s1#t2-t9 cites turn 3, "
                                  "but session 's1' has turns 1-2\nhint: fix the target or restore what it cites\n"),
        ("session:gone#t1", "2", f"error: {JUDS}:10: source 2 does not resolve: session 'gone' does not exist under "
                                 "sessions/raw/\nhint: fix the target or restore what it cites\n"),
        ("source:cal/evt-9", "2", f"error: {JUDS}:10: source 2 does not resolve: source:cal/evt-9 names no record "
                                  "under sources/cal/\nhint: fix the target or restore what it cites\n"),
        ("the chat on Monday", "2", f"error: {JUDS}:10: source 2 is malformed: malformed citation target 'the chat on "
                                    "Monday': expected session:<id>#t<n>[-t<m>], source:<connector>/<id> or note:<path>.md\n"
                                    "hint: fix the target in the front matter\n"),
    ],
)
def test_cite_errors_name_file_and_line(cli, small_brain, source, n, error):
    if source:
        text = (small_brain / JUDS).read_text().replace("  2: source:cal/evt-1", f"  2: {source}")
        (small_brain / JUDS).write_text(text)
    result = cli("cite", "juds", n, "--brain", small_brain)
    assert (result.exit_code, result.stdout, result.stderr) == (1, "", error)


# -- log ---------------------------------------------------------------------------------------
def test_log_shows_history_with_run_ids(cli, small_brain):
    git(small_brain, "init", "-q", "-b", "main")
    git(small_brain, "add", "-A")
    git(small_brain, "commit", "-q", "--allow-empty", "-m", "by hand", "--date", "2026-05-03T10:00:00+00:00")
    (small_brain / JUDS).write_text((small_brain / JUDS).read_text() + "\nMore.\n")
    git(small_brain, "commit", "-q", "--allow-empty", "-am", "dream: 1 page updated\n\nDream-Run: 20260601T020000Z-1a2b3c",
        "--date", "2026-06-01T02:00:00+00:00", "--author", "Dream <dream@localhost>")
    result = cli("log", "JUDS", "--brain", small_brain)
    shas = git(small_brain, "log", "--format=%h", "--abbrev=7").split()
    assert result.stdout == (
        f"{shas[0]}  2026-06-01  Dream  20260601T020000Z-1a2b3c  dream: 1 page updated\n"
        f"{shas[1]}  2026-05-03  Test Owner  -  by hand\n"
    )
    entries = json.loads(cli("log", "juds", "--json", "-n", "1", "--brain", small_brain).stdout)
    assert [(e["author"], e["run_id"]) for e in entries] == [("Dream", "20260601T020000Z-1a2b3c")]
    untracked = cli("log", "universal-design", "--brain", small_brain)
    assert untracked.stderr == ""  # committed in the first commit
    (small_brain / "knowledge/concepts/new.md").write_text("---\ntitle: New\ntype: concept\n---\n")
    fresh = cli("log", "new", "--brain", small_brain)
    assert (fresh.exit_code, fresh.stdout, fresh.stderr) == (0, "", "no commits touch knowledge/concepts/new.md yet\n")


def test_log_outside_git_is_an_error(cli, small_brain):
    result = cli("log", "juds", "--brain", small_brain)
    assert result.exit_code == 1
    assert result.stderr == f"error: {small_brain} is not a git repository\nhint: run `brain init` first\n"


# -- validate ----------------------------------------------------------------------------------
def test_validate_prints_lint_lines_and_exits_by_severity(cli, small_brain):
    result = cli("validate", "--brain", small_brain)
    lines = result.stdout.splitlines()
    assert f"{JUDS}:15: L001 [[kyoto-station]] does not resolve to a page, alias, note or session" in lines
    assert result.exit_code == 1
    assert result.stderr.endswith(" in 7 files\n")
    errors = sum(1 for line in result.stdout.splitlines())
    assert errors >= 2


def test_validate_json_select_and_strict(cli, small_brain):
    data = json.loads(cli("validate", "--format", "json", "--select", "L001", "--brain", small_brain).stdout)
    assert data == [{"code": "L001", "path": JUDS, "line": 15, "severity": "error",
                     "message": "[[kyoto-station]] does not resolve to a page, alias, note or session"}]
    warnings_only = cli("validate", "--select", "L004", "--brain", small_brain)
    assert warnings_only.exit_code == 0
    assert warnings_only.stderr == "0 errors, 1 warning in 7 files\n"
    strict = cli("validate", "--select", "L004", "--strict", "--json", "--brain", small_brain)
    assert strict.exit_code == 1 and json.loads(strict.stdout)[0]["code"] == "L004"


def test_validate_ignore_and_unknown_codes(cli, small_brain):
    result = cli("validate", "--ignore", "L,I", "--brain", small_brain)
    assert (result.exit_code, result.stdout, result.stderr) == (0, "", "no problems in 7 files\n")
    unknown = cli("validate", "--select", "Z9", "--brain", small_brain)
    assert unknown.exit_code == 1
    assert unknown.stderr.startswith("error: unknown check code or family 'Z9'\n")


def test_validate_a_fresh_brain_is_clean(cli, tmp_path):
    cli("init", tmp_path / "b")
    result = cli("validate", "--brain", tmp_path / "b")
    assert (result.exit_code, result.stdout) == (0, ""), result.stdout
    assert result.stderr == "no problems in 8 files\n"
