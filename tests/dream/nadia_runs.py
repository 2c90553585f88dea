"""Helpers for the end-to-end `dream run` tests: Nadia's inputs in a fresh Brain, runs, sessions, git.

Everything is real: `brain init`, real files, real git; the only backend is `offline`.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import shutil
import subprocess
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest

from brain.repo import BrainRepo
from brain.tree import DirTree
from brain.view import BrainView
from dream.backends import get_backend
from testenv import TEST_GIT_ENV

from dream.demo import copy_inputs, persona_dir
from dream.report import RunReport
from dream.run import run
from dream.settings import RunFlags, load_settings

PERSONA = persona_dir()
RAW = "sessions/raw"
LAST_SESSION = "2026-07-14-report-figures"
NADIA_IDS = sorted(p.name[: -len(".jsonl")] for p in (PERSONA / RAW).glob("*.jsonl"))
#: The clock `dream demo` uses by default; every Nadia compile here uses it too.
DEMO_NOW = "2026-07-15T02:00:00Z"
#: What Dream may write (DESIGN.md, invariant 1).
DREAM_ROOTS = ("knowledge/", "notes/", "sessions/summaries/")
DREAM_FILES = ("sessions/index.md", ".dream/state.json", ".dream/forget.md")
#: Trailers every Dream commit ends with (README "How it works", dream.report).
TRAILERS_RE = re.compile(
    r"\n\nDream-Run: (?P<run>\d{8}T\d{6}Z-[0-9a-f]{6})\n"
    r"Dream-Sessions: (?P<sessions>\d+)\n"
    r"Dream-Backend: offline\n"
    r"Dream-Verifier: (?P<supported>\d+) supported, (?P<unsupported>\d+) unsupported, (?P<contradicted>\d+) contradicted\n"
    r"Dream-Tokens: 0 in, 0 out\n*\Z"
)


@contextmanager
def isolated_env(git_date: str | None = None) -> Iterator[None]:
    """What tests/conftest.py's safety net sets per test, for fixtures of a wider scope:
    no model keys, a fixed git identity, no user git config (and, if given, fixed commit dates)."""
    with pytest.MonkeyPatch.context() as mp:
        for name in list(os.environ):
            if name.startswith(("ANTHROPIC_", "OPENAI_", "GIT_")) or name in ("BRAIN_HOME", "DREAM_NOW"):
                mp.delenv(name, raising=False)
        for key, value in TEST_GIT_ENV.items():
            mp.setenv(key, value)
        if git_date:
            mp.setenv("GIT_AUTHOR_DATE", git_date)
            mp.setenv("GIT_COMMITTER_DATE", git_date)
        yield


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout


def head(root: Path) -> str:
    return git(root, "rev-parse", "HEAD").strip()


def commit_files(root: Path, rev: str = "HEAD") -> list[str]:
    """Paths a commit changed (added, modified or deleted)."""
    return sorted(git(root, "show", "--name-only", "--format=", rev).split())


def added_files(root: Path, rev: str = "HEAD") -> list[str]:
    out = git(root, "show", "--name-status", "--format=", rev)
    return sorted(line.split("\t", 1)[1] for line in out.splitlines() if line.startswith("A\t"))


def processed(root: Path) -> dict[str, dict]:
    """The sessions `.dream/state.json` records: id → hash, run, turns."""
    from dream.state import legacy_files, parse_state

    def read(rel: str) -> str | None:
        return (root / rel).read_text(encoding="utf-8") if (root / rel).is_file() else None

    state, problems = parse_state(read(".dream/state.json"), read, legacy_files(root))
    assert problems == []
    return {sid: record.model_dump() for sid, record in state.sessions.items()}


def is_dream_path(rel: str) -> bool:
    return rel.startswith(DREAM_ROOTS) or rel in DREAM_FILES


def dream(root: Path, now: str, **kwargs) -> RunReport:
    """One `dream run` with the offline backend, as the CLI does it."""
    return run(load_settings(root, RunFlags(backend="offline", now=now, **kwargs)), get_backend("offline"))


def nadia_inputs(dest: Path, leave_out: tuple[str, ...] = ()) -> Path:
    """A fresh Brain holding Nadia's inputs (what `dream demo` copies), committed; no run yet."""
    copy_inputs(PERSONA, dest)
    for sid in leave_out:
        (dest / RAW / f"{sid}.jsonl").unlink()
    BrainRepo(dest).commit_all("Nadia's inputs")
    return dest


def copy_brain(src: Path, dest: Path) -> Path:
    shutil.copytree(src, dest, symlinks=True)
    return dest


def session_text(sid: str, started: str, turns: list[tuple[str, str]]) -> str:
    """A canonical session: turns are (role, text); users speak as Nadia, a minute apart."""
    start = dt.datetime.fromisoformat(started)
    lines = [{"type": "session", "id": sid, "started": started, "source": "chat", "participants": ["Nadia", "assistant"]}]
    for n, (role, text) in enumerate(turns, 1):
        lines.append(turn_record(n, role, text, (start + dt.timedelta(minutes=n)).isoformat()))
    return "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines)


def turn_record(n: int, role: str, text: str, time: str) -> dict:
    speaker = "Nadia" if role == "user" else "assistant"
    record = {"type": "turn", "n": n, "role": role, "speaker": speaker}
    if role == "user":
        record["time"] = time
    record["text"] = text
    return record


def add_session(root: Path, sid: str, started: str, turns: list[tuple[str, str]], commit: bool = True) -> Path:
    """Write sessions/raw/<sid>.jsonl (and commit it, as an importer's user would)."""
    path = root / RAW / f"{sid}.jsonl"
    path.write_text(session_text(sid, started, turns), encoding="utf-8")
    if commit:
        git(root, "add", "-f", "--", f"{RAW}/{sid}.jsonl")
        git(root, "commit", "-q", "--allow-empty", "-m", f"session {sid}")
    return path


def files_of(root: Path, skip: tuple[str, ...] = (".git/",)) -> dict[str, bytes]:
    """Every file below root (relative posix path → bytes), except paths starting with `skip`."""
    out = {}
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root).as_posix()
        if p.is_file() and not (rel + "/").startswith(skip) and not rel.startswith(skip):
            out[rel] = p.read_bytes()
    return out


_LINK_RE = re.compile(r"\[\[([^\]|#]+)(?:#[^\]|]*)?(?:\|([^\]]*))?\]\]")


def plain(text: str) -> str:
    """Markdown line as a reader sees it: `[[slug|Text]]` → Text, cite markers dropped."""
    text = _LINK_RE.sub(lambda m: m.group(2) or m.group(1), text)
    return re.sub(r"\s*\[cite:\d+\]", "", text)


def sections(body: str) -> dict[str, list[str]]:
    """`## Heading` → its non-empty lines (lines before the first `##` go under '')."""
    out: dict[str, list[str]] = {"": []}
    current = ""
    for line in body.splitlines():
        if line.startswith("## "):
            current = line[3:].strip()
            out.setdefault(current, [])
        elif line.strip() and not line.startswith("# "):
            out[current].append(line)
    return out


# --- invariant 4: claims and their citations -------------------------------------------------------

_LINKS_ONLY = re.compile(r"^[-*] (?:\[\[[^\]]+\]\],?\s*)+$")
_NOTHING_KEPT = "Nothing in this session was worth keeping."  # a summary's placeholder, not a claim


def _sentences(text: str) -> list[str]:
    """Sentences of a paragraph, each keeping the cite markers after its full stop."""
    pieces, start = [], 0
    for m in re.finditer(r"[.!?](?:\s*\[cite:\d+\])*(?=\s+[A-Z\[]|\s*$)", text):
        pieces.append(text[start : m.end()].strip())
        start = m.end()
    return pieces + ([text[start:].strip()] if text[start:].strip() else [])


def uncited_claims(view: BrainView) -> list[str]:
    """Bullets and paragraph sentences of pages, notes and summaries that carry no [cite:N]."""
    out = []
    for path, doc in view.docs.items():
        for offset, line in enumerate(doc.body.splitlines()):
            text = line.strip()
            if not text or text.startswith("#") or _LINKS_ONLY.match(text) or text == _NOTHING_KEPT:
                continue
            pieces = [text] if text.startswith(("- ", "* ")) else _sentences(text)
            out += [f"{path}:{doc.body_line + offset}: {piece}" for piece in pieces if "[cite:" not in piece]
    return out


def unresolved_cites(view: BrainView) -> list[str]:
    """Every [cite:N] of pages, notes and summaries that has no source or no existing turn behind it."""
    problems = []
    for path, doc in view.docs.items():
        for cite in doc.cites:
            target = doc.frontmatter.sources.get(cite.n)
            if target is None:
                problems.append(f"{path}:{cite.line}: [cite:{cite.n}] has no source")
                continue
            why = view.check_target(target)
            if why is None and not target.startswith("session:"):
                why = f"{target} is not a session turn"
            if why:
                problems.append(f"{path}:{cite.line}: {why}")
    return problems


def assert_sound(root: Path) -> None:
    """Invariant 4 and `brain validate` on a Brain after a run: cites resolve, claims cite, no errors."""
    from validators import run_checks

    view = BrainView(DirTree(root))
    assert unresolved_cites(view) == []
    assert uncited_claims(view) == []
    assert [f.lint_line() for f in run_checks(view) if f.severity == "error"] == []


def tree_by_git_add(tmp_path: Path, root: Path, writes: dict[str, str], base: str) -> str:
    """The tree the owner would commit with `git add` of the same files on `base` (a copy of the Brain)."""
    copy = tmp_path / "copy"
    subprocess.run(["git", "clone", "-q", str(root), str(copy)], check=True)
    git(copy, "reset", "-q", "--hard", base)
    for rel, text in writes.items():
        (copy / rel).parent.mkdir(parents=True, exist_ok=True)
        (copy / rel).unlink(missing_ok=True)
        (copy / rel).write_bytes(text.encode("utf-8"))
    git(copy, "add", "-A")
    return git(copy, "write-tree").strip()
