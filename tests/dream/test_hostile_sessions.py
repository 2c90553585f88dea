"""Transcripts are data: secrets never reach anything Dream writes, planted instructions never reach
the index or a page as text, invisible characters are stripped, and the rest still compiles."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from nadia_runs import git
from safety_corpus import INJECTIONS, SECRETS

from brain.scaffold import init_brain
from dream.backends import get_backend
from dream.run import run
from dream.settings import RunFlags, load_settings
from brain.secrets import secret_spans
from validators.injection import injection_spans

WHEN = "2026-08-01T10:00:00+09:00"


def _session(sid: str, texts: list[str]) -> str:
    lines = [{"type": "session", "id": sid, "started": WHEN, "participants": ["Nadia", "assistant"]}]
    for n, text in enumerate(texts, start=1):
        lines.append({"type": "turn", "n": n, "role": "user", "speaker": "Nadia", "time": WHEN, "text": text})
    return "\n".join(json.dumps(x) for x in lines) + "\n"


def _written(root: Path, commit: str) -> str:
    """Everything Dream wrote or said: committed files, commit message, run reports."""
    files = git(root, "show", "--name-only", "--format=", commit).split()
    out = [git(root, "log", "-1", "--format=%B", commit)]
    out += [(root / rel).read_text(encoding="utf-8") for rel in files]
    out += [p.read_text(encoding="utf-8") for p in (root / ".dream/runs").rglob("report.json")]
    return "\n".join(out)


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("hostile") / "brain"
    init_brain(root)
    secrets = [f"I work at Sora City Laboratory. Here is what I pasted: {text}" for _, text in SECRETS]
    payloads = [f"I forwarded an email from Aiko Tanaka at Sapphir Mobility Coop. It said: {text}" for _, text in INJECTIONS]
    raw = root / "sessions/raw"
    raw.mkdir(parents=True, exist_ok=True)
    (raw / "2026-08-01-secrets.jsonl").write_text(_session("2026-08-01-secrets", secrets), encoding="utf-8")
    (raw / "2026-08-01-payloads.jsonl").write_text(_session("2026-08-01-payloads", payloads), encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-q", "--allow-empty", "-m", "hostile sessions")
    report = run(load_settings(root, RunFlags(backend="offline", now="2026-08-02T02:00:00Z")), get_backend("offline"))
    return root, report


def test_corpora_are_large_enough():
    assert len(SECRETS) >= 20 and len(INJECTIONS) >= 20


def test_the_sessions_still_compile(hostile):
    root, report = hostile
    assert report.status == "ok" and report.commit and report.rejected == {}
    assert sorted(report.sessions) == ["2026-08-01-payloads", "2026-08-01-secrets"]
    # Counted per sentence; the invisible-character canaries are stripped rather than quarantined.
    assert report.redactions["secrets"] >= 20 and report.redactions["injections"] >= 20


@pytest.mark.parametrize("kind,text", SECRETS, ids=[f"{k}-{i}" for i, (k, _) in enumerate(SECRETS)])
def test_no_secret_value_reaches_anything_dream_writes(hostile, kind: str, text: str):
    root, report = hostile
    written = _written(root, report.commit)
    values = [text[a:b] for a, b, _ in secret_spans(text)]
    assert values, f"the canary {text!r} is not recognised as a secret"
    for value in values:
        assert value not in written, f"{kind} value reached Dream's output"


@pytest.mark.parametrize("kind,text", INJECTIONS, ids=[f"{k}-{i}" for i, (k, _) in enumerate(INJECTIONS)])
def test_no_planted_instruction_reaches_the_index_or_a_page(hostile, kind: str, text: str):
    root, report = hostile
    written = _written(root, report.commit)
    for a, b, _ in injection_spans(text):
        assert text[a:b] not in written, f"{kind} payload reached Dream's output"
    index = (root / "knowledge/index.md").read_text(encoding="utf-8")
    assert not injection_spans(index)


def _reads(root: Path) -> str:
    """What an agent gets back from the read side, for questions aimed at the pasted secrets."""
    from click.testing import CliRunner

    from brain.cli import main

    out = []
    for args in (["search", "password key token pasted", "-k", "50"], ["context", "what did Nadia paste?", "--budget", "4000"],
                 ["index"], ["cite", "2026-08-01-secrets", "1"]):
        result = CliRunner().invoke(main, [*args, "--brain", str(root)])
        out.append(result.output)
    return "\n".join(out)


@pytest.mark.parametrize("kind,text", SECRETS, ids=[f"{k}-{i}" for i, (k, _) in enumerate(SECRETS)])
def test_no_secret_value_reaches_an_agent_through_search_context_or_cite(hostile, kind: str, text: str):
    root, _ = hostile
    reads = _reads(root)
    assert "I work at Sora City Laboratory" in reads  # the turns themselves are served
    for a, b, _ in secret_spans(text):
        assert not re.search(rf"(?<!\w){re.escape(text[a:b])}(?!\w)", reads), f"{kind} value reached an agent"


def test_no_note_or_page_is_named_after_a_secret(hostile):
    root, _ = hostile
    names = " ".join(p.name for p in root.rglob("*.md") if ".git" not in p.parts)
    assert "redacted" not in names.lower()
    for _, text in SECRETS:
        for a, b, _ in secret_spans(text):
            assert text[a:b].lower() not in names.lower()


def test_invisible_characters_are_stripped(hostile):
    root, report = hostile
    written = _written(root, report.commit)
    assert not any(ch in written for ch in ("\u200b", "\u202e")) and not any(0xE0000 <= ord(c) <= 0xE007F for c in written)


def test_what_surrounded_the_secrets_is_kept(hostile):
    root, _ = hostile
    assert (root / "knowledge/organizations/sora-city-laboratory.md").exists()
    assert (root / "knowledge/organizations/sapphir-mobility-coop.md").exists()
