"""`dream run --backend openai` end to end: urllib against a chat-completions stub on 127.0.0.1.

The stub plays an OpenAI-compatible server (Ollama, llama.cpp, vLLM, OpenAI): JSON-schema output
where it is supported, and the broken JSON small local models send where it is not.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from nadia_runs import assert_sound, git
from stubs import SMALL, Reply, Stub, dream_run, error_reply, pending, set_dream, small_brain

from dream.cli import main

KEY = "sk-test-openai-0123456789-NEVER-WRITE-ME"
VICTIM = SMALL[1]
MODEL = "llama3.1:8b"


@pytest.fixture
def stub():
    s = Stub("openai")
    yield s
    s.close()


def brain_for(tmp_path: Path, stub: Stub, **dream) -> Path:
    root = small_brain(tmp_path / "brain")
    set_dream(root, **{"base_url": stub.base_url, "model": MODEL, "timeout": 5, "retries": 0, **dream})
    return root


def run_json(root: Path, *args: str, key: str | None = KEY) -> tuple[Result, dict]:
    result = dream_run(root, "--backend", "openai", "--json", *args, env={"OPENAI_API_KEY": key} if key else {})
    return result, json.loads(result.stdout)


def calls(root: Path, run_id: str) -> list[dict]:
    return [json.loads(line) for line in (root / ".dream/runs" / run_id / "calls.jsonl").read_text(encoding="utf-8").splitlines()]


def test_a_local_server_compiles_sessions_into_a_commit_that_validates_clean(tmp_path: Path, stub: Stub) -> None:
    root = brain_for(tmp_path, stub)
    result, report = run_json(root, "--record")
    assert result.exit_code == 0 and (report["status"], report["backend"], report["model"]) == ("ok", "openai", MODEL)
    assert report["sessions"] == list(SMALL) and report["session_failures"] == {} and report["pages_created"]
    assert_sound(root)
    assert "\nDream-Backend: openai\n" in git(root, "log", "-1", "--format=%B")
    system = stub.seen[0].body["messages"][0]
    for s in stub.seen:
        body = s.body
        assert s.path == "/v1/chat/completions" and s.headers["authorization"] == f"Bearer {KEY}"
        assert body["model"] == MODEL and body["temperature"] == 0 and body["messages"][0] == system
        assert body["response_format"]["type"] == "json_schema" and body["response_format"]["json_schema"]["name"] == s.task
        assert body["messages"][1]["content"].startswith(f"Task: {s.task}\n")
    assert system["role"] == "system" and system["content"].startswith("# Dream: the compiler of a Brain")
    logged = calls(root, report["run_id"])
    assert len(logged) == len(stub.seen) and all(c["usage"]["input_tokens"] > 0 and c["usage"]["output_tokens"] > 0 for c in logged)
    assert logged[0]["usage"]["cache_read_tokens"] == 0 and all(c["usage"]["cache_read_tokens"] > 0 for c in logged[1:])
    assert report["cost_usd"] is None and "cost unknown" in git(root, "log", "-1", "--format=%B")  # a local model has no list price
    for path in root.rglob("*"):
        if path.is_file() and ".git" not in path.relative_to(root).parts:
            assert KEY.encode() not in path.read_bytes(), path
    assert KEY not in git(root, "log", "-p", "--all")


def test_replay_is_byte_identical_without_network_and_a_tampered_record_differs(tmp_path: Path, stub: Stub, monkeypatch) -> None:
    root = brain_for(tmp_path, stub)
    result, report = run_json(root, "--record")
    stub.close()

    def no_network(self, address):
        raise ConnectionRefusedError(f"no network in this test: {address!r}")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    run_id = report["run_id"]
    replayed = CliRunner().invoke(main, ["replay", run_id, "--brain", str(root)], catch_exceptions=False)
    assert replayed.exit_code == 0 and replayed.output.startswith(f"dream replay {run_id}: identical tree ")
    # A recorded run is a regression fixture: change one answer and the replay names what differs.
    exchanges = root / ".dream/runs" / run_id / "record/exchanges.jsonl"
    entries = [json.loads(line) for line in exchanges.read_text(encoding="utf-8").splitlines()]
    first = next(e for e in entries if e["task"] == "summarize")
    first["completion"]["data"]["title"] = "A title never given"
    exchanges.write_text("".join(json.dumps(e) + "\n" for e in entries), encoding="utf-8")
    tampered = CliRunner().invoke(main, ["replay", run_id, "--brain", str(root), "--into", str(tmp_path / "replayed")], catch_exceptions=False)
    assert tampered.exit_code == 1
    assert f"  differs: sessions/summaries/{first['unit']}.md\n" in tampered.output and (tmp_path / "replayed/.git").is_dir()


def test_a_server_without_json_schema_gets_json_object_then_the_schema_in_the_prompt(tmp_path: Path, stub: Stub) -> None:
    root = brain_for(tmp_path, stub)
    stub.refuse_formats = {"json_schema", "json_object"}
    result, report = run_json(root, key=None)
    assert result.exit_code == 0 and report["sessions"] == list(SMALL)
    formats = [s.body.get("response_format", {}).get("type") for s in stub.seen]
    assert formats[:3] == ["json_schema", "json_object", None] and set(formats[3:]) == {None}
    assert '"title":"SessionSummary"' in stub.seen[2].body["messages"][1]["content"]  # the schema, in the prompt
    assert "authorization" not in stub.seen[0].headers  # no key: a local server needs none
    assert_sound(root)


def test_fenced_json_with_a_trailing_comma_is_repaired_without_asking_again(tmp_path: Path, stub: Stub) -> None:
    root = brain_for(tmp_path, stub)
    stub.script("summarize", Reply(mangle=lambda a: "Here you go:\n```json\n" + json.dumps(a)[:-1] + ",}\n```"), contains=VICTIM)
    result, report = run_json(root)
    assert result.exit_code == 0 and report["sessions"] == list(SMALL)
    assert len([s for s in stub.requests("summarize") if VICTIM in s.body["messages"][1]["content"]]) == 1


def test_broken_json_is_shown_to_the_model_once_then_repaired(tmp_path: Path, stub: Stub) -> None:
    root = brain_for(tmp_path, stub)
    stub.script("extract_facts", Reply(mangle=lambda a: json.dumps(a)[: len(json.dumps(a)) // 2]), contains=VICTIM)
    result, report = run_json(root)
    assert result.exit_code == 0 and report["sessions"] == list(SMALL) and report["session_failures"] == {}
    first, repair = [s for s in stub.requests("extract_facts") if VICTIM in s.body["messages"][1]["content"]]
    assert [m["role"] for m in repair.body["messages"]] == ["system", "user", "assistant", "user"]
    assert repair.body["messages"][2]["content"] == first.reply["choices"][0]["message"]["content"]
    assert repair.body["messages"][3]["content"].startswith("Your answer for the extract_facts task was not valid:\n\nthe answer holds no JSON object")
    assert_sound(root)


def test_broken_json_twice_fails_the_session_loudly_and_loses_nothing(tmp_path: Path, stub: Stub) -> None:
    root = brain_for(tmp_path, stub)
    broken = Reply(answer='{"facts": [{"kind": "event", "subject": "Nadia"')
    stub.script("extract_facts", broken, broken, contains=VICTIM)
    result = dream_run(root, "--backend", "openai", env={"OPENAI_API_KEY": KEY})
    assert result.exit_code == 0
    assert f"  session failed: {VICTIM}: extract_facts for {VICTIM}: the model's answer was invalid twice: the answer holds no JSON object" in result.stdout
    assert pending(root) == [VICTIM] and f"sessions/summaries/{VICTIM}.md" not in git(root, "ls-files")
    assert_sound(root)
    again, report = run_json(root)
    assert report["sessions"] == [VICTIM] and pending(root) == []


def test_a_429_is_retried_after_retry_after_and_a_500_fails_only_its_session(tmp_path: Path, stub: Stub) -> None:
    root = brain_for(tmp_path, stub, retries=1, max_wait=0.05)  # caps the 5xx backoff too
    stub.script("summarize", error_reply("openai", 429, "slow down", {"retry-after": "0"}), contains=SMALL[0])
    stub.script("summarize", error_reply("openai", 500, "boom"), error_reply("openai", 500, "boom"), contains=VICTIM)
    result, report = run_json(root)
    assert result.exit_code == 0 and report["sessions"] == [SMALL[0], SMALL[2]]
    assert report["session_failures"][VICTIM].startswith("HTTP 500 from the model server:")
    retried = [(c["unit"], c["retry"], (c["error"] or "").split(":")[0]) for c in calls(root, report["run_id"]) if c["task"] == "summarize"]
    assert retried[:2] == [(SMALL[0], 0, "BackendRateLimited"), (SMALL[0], 1, "")]
    assert [r for r in retried if r[0] == VICTIM] == [(VICTIM, 0, "BackendHTTPError"), (VICTIM, 1, "BackendHTTPError")]
    assert pending(root) == [VICTIM]


def test_a_timeout_fails_its_session_and_the_rest_lands(tmp_path: Path, stub: Stub) -> None:
    root = brain_for(tmp_path, stub, timeout=0.3)
    stub.script("extract_facts", Reply(delay=1.0), contains=VICTIM)
    result, report = run_json(root)
    assert result.exit_code == 0 and report["sessions"] == [SMALL[0], SMALL[2]]
    assert report["session_failures"][VICTIM].startswith("the model server did not answer after 0.3 s")


def test_openai_itself_without_a_key_fails_before_any_request(tmp_path: Path) -> None:
    root = small_brain(tmp_path / "brain")
    set_dream(root, model="gpt-4o-mini")
    result = dream_run(root, "--backend", "openai")
    assert result.exit_code == 1
    assert result.stderr == "dream: error: no OPENAI_API_KEY for the OpenAI API (set OPENAI_API_KEY or run `dream run --backend offline`)\n"


def test_a_refused_key_stops_the_run(tmp_path: Path, stub: Stub) -> None:
    root = brain_for(tmp_path, stub)
    stub.script("*", error_reply("openai", 401, "bad key"))
    result = dream_run(root, "--backend", "openai", env={"OPENAI_API_KEY": KEY})
    assert result.exit_code == 1 and len(stub.seen) == 1
    assert result.stderr == f"dream: error: the server at {stub.base_url} refused the key (HTTP 401)\n"


def test_a_cost_budget_for_a_model_without_a_price_is_refused_before_any_request(tmp_path: Path, stub: Stub) -> None:
    root = brain_for(tmp_path, stub)
    result = dream_run(root, "--backend", "openai", "--max-cost", "0.50", env={"OPENAI_API_KEY": KEY})
    assert result.exit_code == 1 and stub.seen == []
    assert result.stderr.startswith(f"dream: error: no price is known for the model {MODEL}, so --max-cost cannot be enforced")


def test_an_uncited_claim_a_model_adds_to_a_page_is_rejected_at_the_gate(tmp_path: Path, stub: Stub) -> None:
    """Invariant 4 whatever the backend: the gate verifies cited lines and rejects uncited ones."""
    root = brain_for(tmp_path, stub)
    lie = "Kenji Mori secretly owns three racing boats."
    stub.script("write_page", Reply(mangle=lambda a: {**a, "body": a["body"].rstrip("\n") + f"\n\n- {lie}\n"}),
                contains="page `kenji-mori`")
    result, report = run_json(root)
    assert result.exit_code == 1 and report["status"] == "ok"  # the rest landed; the exit says something did not
    rejected = report["rejected"]["knowledge/people/kenji-mori.md"]
    assert any("C006 a statement without [cite:N]" in why for why in rejected)
    others = [why for path, whys in report["rejected"].items() if path != "knowledge/people/kenji-mori.md" for why in whys]
    assert all(why.endswith("its page knowledge/people/kenji-mori.md was rejected") for why in others)  # its notes wait with it
    for path in root.rglob("*.md"):
        if ".git" not in path.parts:
            assert lie not in path.read_text(encoding="utf-8"), path
    assert lie not in git(root, "log", "-p")
