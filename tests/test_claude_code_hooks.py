"""Claude Code integration: `brain install claude-code` merges into the settings files, the
SessionStart hook prints the session's memory and fails open, the SessionEnd hook imports the
transcript. The hooks run as Claude Code runs them: a subprocess with the JSON on stdin."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from brain.scaffold import init_brain

ROOT = Path(__file__).resolve().parent.parent
TRANSCRIPT = ROOT / "fixtures/importers/claude-code/3f6c2a0e-8d1b-4e5a-9c7d-2b1e0f4a6d93.jsonl"
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "DREAM_NOW": "2026-07-15T02:00:00Z"}


def cli(tool: str, *args: str, stdin: str = "", cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", f"{tool}.cli", *args], input=stdin, capture_output=True, text=True,
                          cwd=cwd, env=ENV, timeout=120)


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("hooks") / "nadia"
    assert cli("dream", "demo", str(root)).returncode == 0
    return root


def test_install_merges_keeps_other_hooks_is_idempotent_backs_up_and_uninstalls(tmp_path: Path, demo: Path):
    settings, servers = tmp_path / "settings.json", tmp_path / "claude.json"
    theirs = {"model": "opus", "hooks": {"SessionStart": [{"matcher": "", "hooks": [{"type": "command", "command": "echo hi"}]}],
                                         "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "lint"}]}]}}
    settings.write_text(json.dumps(theirs), encoding="utf-8")
    servers.write_text(json.dumps({"mcpServers": {"other": {"command": "x"}}, "numStartups": 3}), encoding="utf-8")
    args = ("install", "claude-code", "--settings", str(settings), "--mcp-config", str(servers), "--brain", str(demo))
    first = cli("brain", *args)
    assert first.returncode == 0 and f"updated {settings}" in first.stdout
    once = json.loads(settings.read_text(encoding="utf-8"))
    assert once["model"] == "opus" and once["hooks"]["PreToolUse"] == theirs["hooks"]["PreToolUse"]
    start = [h["command"] for g in once["hooks"]["SessionStart"] for h in g["hooks"]]
    assert start[0] == "echo hi" and start[1].startswith("brain hook session-start --brain ")
    assert [h["command"] for g in once["hooks"]["SessionEnd"] for h in g["hooks"]][0].startswith("dream hook session-end")
    config = json.loads(servers.read_text(encoding="utf-8"))
    assert config["numStartups"] == 3 and config["mcpServers"]["other"] == {"command": "x"}
    assert config["mcpServers"]["brain"] == {"type": "stdio", "command": "brain", "args": ["mcp", "--brain", str(demo)]}
    assert json.loads((tmp_path / "settings.json.brain-backup").read_text(encoding="utf-8")) == theirs
    second = cli("brain", *args)
    assert second.returncode == 0 and "nothing to change" in second.stdout
    assert json.loads(settings.read_text(encoding="utf-8")) == once
    gone = cli("brain", *args, "--uninstall")
    assert gone.returncode == 0
    assert json.loads(settings.read_text(encoding="utf-8")) == theirs
    assert "brain" not in json.loads(servers.read_text(encoding="utf-8"))["mcpServers"]


def test_session_start_puts_the_project_page_then_the_index_into_the_session(demo: Path, tmp_path: Path):
    project = tmp_path / "japan-universal-design-sprint"  # a folder named after a page of the Brain
    project.mkdir()
    payload = json.dumps({"session_id": "s1", "transcript_path": "/dev/null", "cwd": str(project), "source": "startup"})
    result = cli("brain", "hook", "session-start", "--brain", str(demo), "--budget", "1500", stdin=payload)
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)["hookSpecificOutput"]
    assert out["hookEventName"] == "SessionStart"
    text = out["additionalContext"]
    assert "knowledge/projects/japan-universal-design-sprint.md" in text and text.index("# Japan Universal Design Sprint") < text.index("# Index")
    assert "sources:" not in text and "[cite:1]" in text  # the page's cites stay; `brain cite` resolves them
    assert len(text) / 3.5 <= 1600


def test_session_start_fails_open(tmp_path: Path):
    for stdin, brain in (("not json", tmp_path), ("{}", tmp_path / "missing")):
        result = cli("brain", "hook", "session-start", "--brain", str(brain), stdin=stdin)
        assert result.returncode == 0 and result.stdout == ""
        assert result.stderr.startswith("brain: no memory for this session:") and len(result.stderr.splitlines()) == 1


def test_session_start_is_fast_on_the_demo(demo: Path):
    payload = json.dumps({"cwd": str(demo)})
    cli("brain", "hook", "session-start", "--brain", str(demo), stdin=payload)
    start = time.perf_counter()
    assert cli("brain", "hook", "session-start", "--brain", str(demo), stdin=payload).returncode == 0
    assert time.perf_counter() - start < 5  # a loose ceiling for CI; bench/hook_latency.py measures it


def test_session_end_imports_the_transcript_once_and_fails_open(tmp_path: Path):
    brain = tmp_path / "memory"
    init_brain(brain)
    transcript = tmp_path / "t.jsonl"
    shutil.copyfile(TRANSCRIPT, transcript)
    payload = json.dumps({"session_id": "3f6c2a0e", "transcript_path": str(transcript), "cwd": str(tmp_path)})
    first = cli("dream", "hook", "session-end", "--brain", str(brain), stdin=payload)
    assert first.returncode == 0, first.stderr
    raw = sorted(p.name for p in (brain / "sessions/raw").glob("*.jsonl"))
    assert len(raw) == 1
    again = cli("dream", "hook", "session-end", "--brain", str(brain), stdin=payload)
    assert again.returncode == 0 and sorted(p.name for p in (brain / "sessions/raw").glob("*.jsonl")) == raw
    broken = cli("dream", "hook", "session-end", "--brain", str(brain), stdin="{}")
    assert broken.returncode == 0 and broken.stderr.startswith("dream: this session was not saved to the Brain:")


def test_import_claude_code_without_a_path_reads_every_project_and_says_when_there_is_none(tmp_path: Path):
    brain = tmp_path / "memory"
    init_brain(brain)
    config = tmp_path / "claude-config"
    for project, name in (("-home-me-alpha", "a1.jsonl"), ("-home-me-beta", "b1.jsonl")):
        (config / "projects" / project).mkdir(parents=True)
        text = TRANSCRIPT.read_text(encoding="utf-8").replace("3f6c2a0e-8d1b-4e5a-9c7d-2b1e0f4a6d93", name[:-6])
        (config / "projects" / project / name).write_text(text, encoding="utf-8")
    env = {**ENV, "CLAUDE_CONFIG_DIR": str(config)}
    result = subprocess.run([sys.executable, "-m", "dream.cli", "import", "claude-code", "--brain", str(brain)],
                            capture_output=True, text=True, cwd=ROOT, env=env, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "2 new" in result.stdout and len(list((brain / "sessions/raw").glob("*.jsonl"))) == 2
    one = subprocess.run([sys.executable, "-m", "dream.cli", "import", "claude-code", "--project", str(config / "projects/-home-me-beta"),
                          "--brain", str(brain)], capture_output=True, text=True, cwd=ROOT, env=env, timeout=120)
    assert one.returncode == 0 and "1 unchanged" in one.stdout
    (tmp_path / "empty" / "projects").mkdir(parents=True)
    none = subprocess.run([sys.executable, "-m", "dream.cli", "import", "claude-code", "--brain", str(brain)], capture_output=True,
                          text=True, cwd=ROOT, env={**ENV, "CLAUDE_CONFIG_DIR": str(tmp_path / "empty")}, timeout=120)
    assert none.returncode == 1 and "no Claude Code transcripts" in none.stderr
