"""`dream run --backend anthropic` end to end: the real SDK against a Messages API stub on 127.0.0.1.

Six of Nadia's sessions (a correction that supersedes a fact, a pasted secret) are compiled once
through the stub, which answers like the offline backend would; the failure cases run on three,
with the stub scripted to misbehave for one unit. bench/backend_tokens.py runs all fifteen.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import NamedTuple

import pytest
from click.testing import CliRunner, Result
from nadia_runs import assert_sound, git, isolated_env
from stubs import SMALL, Reply, Stub, dream_run, error_reply, pending, set_dream, small_brain

from dream.cli import main

KEY = "sk-ant-test-0123456789-NEVER-WRITE-ME"
LEAKED = "sk-ant-api03-FAKEfakeFAKEfake0000EXAMPLE"  # pasted into 2026-04-14-api-key-script
TASKS = ["summarize", "extract_facts", "write_page", "verify"]
VICTIM = SMALL[1]  # the session the failure cases break
SIX = (*SMALL, "2026-04-14-api-key-script", "2026-04-22-sendai-correction", "2026-05-19-new-role")


class Compiled(NamedTuple):
    root: Path
    result: Result
    stub: Stub
    report: dict


@pytest.fixture(scope="module")
def nadia_anthropic(tmp_path_factory) -> Compiled:
    """All of Nadia through the stub, recorded; module-scoped, so it sets the test environment itself."""
    with isolated_env("2026-07-15T02:00:00+00:00"):
        stub = Stub("anthropic")
        root = small_brain(tmp_path_factory.mktemp("anthropic") / "brain", keep=SIX)
        set_dream(root, timeout=10, retries=0)
        result = dream_run(root, "--backend", "anthropic", "--record", "--json", env={"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": stub.base_url})
        stub.close()
    return Compiled(root, result, stub, json.loads(result.stdout))


@pytest.fixture
def stub():
    s = Stub("anthropic")
    yield s
    s.close()


@pytest.fixture
def brain(tmp_path: Path) -> Path:
    root = small_brain(tmp_path / "brain")
    set_dream(root, timeout=5, retries=0)
    return root


def env(stub: Stub) -> dict:
    return {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": stub.base_url}


def run_json(root: Path, stub: Stub, *args: str) -> tuple[Result, dict]:
    result = dream_run(root, "--backend", "anthropic", "--json", *args, env=env(stub))
    return result, json.loads(result.stdout)


def calls(root: Path, run_id: str) -> list[dict]:
    return [json.loads(line) for line in (root / ".dream/runs" / run_id / "calls.jsonl").read_text(encoding="utf-8").splitlines()]


# --- valid replies: all of Nadia -----------------------------------------------------------------------


def test_nadia_compiles_into_one_commit_that_validates_clean(nadia_anthropic: Compiled) -> None:
    root, report = nadia_anthropic.root, nadia_anthropic.report
    assert nadia_anthropic.result.exit_code == 0, nadia_anthropic.result.output
    assert (report["status"], report["backend"], report["model"], report["sessions"]) == ("ok", "anthropic", "claude-sonnet-4-6", sorted(SIX))
    assert report["session_failures"] == {} and report["rejected"] == {} and len(report["pages_created"]) > 10
    assert report["facts_superseded"] >= 1 and "## History\n- Until 2026-04-22: " in (root / "knowledge/projects/japan-universal-design-sprint.md").read_text(encoding="utf-8")
    assert_sound(root)
    message = git(root, "log", "-1", "--format=%B")
    assert "\nDream-Backend: anthropic\n" in message
    assert f"\nDream-Tokens: {report['tokens_in']} in, {report['tokens_out']} out; cache {report['cache_read_tokens']} read" in message
    assert f"- backend: anthropic (claude-sonnet-4-6); tokens: {report['tokens_in']} in" in (root / "knowledge/log.md").read_text(encoding="utf-8")
    assert git(root, "status", "--porcelain") == ""


def test_requests_are_messages_api_calls_with_the_stable_prefix_cached(nadia_anthropic: Compiled) -> None:
    seen = nadia_anthropic.stub.seen
    assert {s.task for s in seen} == set(TASKS)
    assert len([s for s in seen if s.task == "summarize"]) == len(SIX)
    first = seen[0].body
    for s in seen:
        body = s.body
        assert s.path == "/v1/messages" and s.headers["authorization"] == f"Bearer {KEY}" and s.headers["anthropic-version"]
        assert (body["model"], body["max_tokens"]) == ("claude-sonnet-4-6", 4096)
        # tools → system is the cache prefix: identical in every request, the breakpoint on its last block.
        assert body["tools"] == first["tools"] and [t["name"] for t in body["tools"]] == TASKS
        assert body["system"] == first["system"] and body["system"][-1]["cache_control"] == {"type": "ephemeral"}
        assert body["tool_choice"] == {"type": "tool", "name": s.task}
        assert body["messages"][0]["content"].startswith(f"Task: {s.task}\n")
    system = first["system"][0]["text"]
    assert system.startswith("# Dream: the compiler of a Brain") and "## Never record\n- Health details" in system
    # The transcript reaches the model as turns; secrets were redacted before any backend saw them.
    summarize = [s.body["messages"][0]["content"] for s in seen if s.task == "summarize"]
    assert '<turn n="1" role="user" speaker="Nadia" time="2026-04-06T09:15:00+09:00">I have the workshop dates for JUDS now.' in "".join(summarize)
    assert not any(LEAKED in json.dumps(s.body) for s in seen)
    assert "[REDACTED:" in "".join(summarize)


def test_calls_jsonl_logs_usage_with_cache_reads_and_writes_for_every_call(nadia_anthropic: Compiled) -> None:
    root, report = nadia_anthropic.root, nadia_anthropic.report
    logged = calls(root, report["run_id"])
    assert len(logged) == len(nadia_anthropic.stub.seen) == report["model_calls"]
    assert all(c["error"] is None and c["usage"]["input_tokens"] > 0 and c["usage"]["output_tokens"] > 0 for c in logged)
    assert logged[0]["usage"]["cache_write_tokens"] > 0 and logged[0]["usage"]["cache_read_tokens"] == 0
    assert all(c["usage"]["cache_read_tokens"] == logged[0]["usage"]["cache_write_tokens"] for c in logged[1:])
    assert sum(c["usage"]["input_tokens"] for c in logged) == report["tokens_in"]
    assert abs(sum(c["cost_usd"] for c in logged) - report["cost_usd"]) < 1e-4
    assert {c["task"] for c in logged} == set(TASKS) and len({c["input_hash"] for c in logged}) == len(logged)


def test_the_api_key_is_in_no_file_commit_or_log(nadia_anthropic: Compiled) -> None:
    root = nadia_anthropic.root
    for path in root.rglob("*"):
        if path.is_file() and ".git" not in path.relative_to(root).parts:
            assert KEY.encode() not in path.read_bytes(), path
    assert KEY not in git(root, "log", "-p", "--all", "--format=%H%n%B")
    assert (root / ".dream/runs" / nadia_anthropic.report["run_id"] / "record/exchanges.jsonl").is_file()


def test_replay_reproduces_the_recorded_run_byte_for_byte_with_networking_disabled(nadia_anthropic: Compiled, monkeypatch) -> None:
    def no_network(self, address):
        raise ConnectionRefusedError(f"no network in this test: {address!r}")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    run_id = nadia_anthropic.report["run_id"]
    result = CliRunner().invoke(main, ["replay", run_id, "--brain", str(nadia_anthropic.root), "--json"], catch_exceptions=False)
    out = json.loads(result.stdout)
    assert result.exit_code == 0 and out["identical"] and out["misses"] == 0
    assert out["recorded_commit"] == git(nadia_anthropic.root, "rev-parse", "HEAD").strip()
    assert out["replayed_tree"] == git(nadia_anthropic.root, "rev-parse", "HEAD^{tree}").strip()


# --- failures: one unit fails loudly, the rest lands ----------------------------------------------------


def test_an_invalid_answer_is_repaired_with_the_validation_error(brain: Path, stub: Stub) -> None:
    stub.script("summarize", Reply(answer={"title": 7, "sentences": "none"}), contains=VICTIM)
    result, report = run_json(brain, stub)
    assert result.exit_code == 0 and report["sessions"] == list(SMALL) and report["session_failures"] == {}
    [bad, repair] = [s for s in stub.requests("summarize") if VICTIM in s.body["messages"][0]["content"]]
    assert len(repair.body["messages"]) == 3
    tool_use, tool_result = repair.body["messages"][1]["content"][0], repair.body["messages"][2]["content"][0]
    assert tool_use["type"] == "tool_use" and tool_use["input"] == {"title": 7, "sentences": "none"}
    assert tool_result["type"] == "tool_result" and tool_result["is_error"] and tool_result["tool_use_id"] == tool_use["id"]
    assert "- title: Input should be a valid string" in tool_result["content"] and "- sentences: Input should be a valid list" in tool_result["content"]
    assert [c["attempt"] for c in calls(brain, report["run_id"]) if c["unit"] == VICTIM and c["task"] == "summarize"] == [1, 2]
    assert_sound(brain)


def test_an_answer_invalid_twice_fails_its_session_loudly_and_the_others_land(brain: Path, stub: Stub) -> None:
    wrong_turns = {"title": "Kickoff", "sentences": [{"text": "The sprint starts.", "first_turn": 40, "last_turn": 41}], "topics": []}
    stub.script("summarize", Reply(answer=wrong_turns), Reply(answer=wrong_turns), contains=VICTIM)
    result = dream_run(brain, "--backend", "anthropic", env=env(stub))
    assert result.exit_code == 0
    assert f"  session failed: {VICTIM}: summarize for {VICTIM}: the model's answer was invalid twice:" in result.stdout
    assert "turns 40-41 are not a span within turns 1 to 12" in result.stdout
    assert pending(brain) == [VICTIM]
    landed = git(brain, "show", "--name-only", "--format=", "HEAD")
    assert f"sessions/summaries/{SMALL[0]}.md" in landed and f"sessions/summaries/{VICTIM}.md" not in landed
    assert_sound(brain)
    # The next run, with a model that behaves, picks the session up.
    again, report = run_json(brain, stub)
    assert report["sessions"] == [VICTIM] and pending(brain) == []


def test_a_429_is_retried_after_the_servers_retry_after(tmp_path: Path, stub: Stub) -> None:
    root = small_brain(tmp_path / "brain", keep=SMALL[:1])
    set_dream(root, timeout=5, retries=1, max_wait=2)
    stub.script("extract_facts", error_reply("anthropic", 429, "slow down", {"retry-after": "0"}))
    result, report = run_json(root, stub)
    assert result.exit_code == 0 and report["sessions"] == [SMALL[0]]
    tried = [c for c in calls(root, report["run_id"]) if c["task"] == "extract_facts"]
    assert [(c["retry"], (c["error"] or "").split(":")[0]) for c in tried] == [(0, "BackendRateLimited"), (1, "")]
    assert "retry after 0 s" in tried[0]["error"]


def test_a_429_asking_for_longer_than_max_wait_fails_the_session_without_waiting(tmp_path: Path, stub: Stub) -> None:
    brain = small_brain(tmp_path / "brain")
    set_dream(brain, timeout=5, retries=2, max_wait=1)
    stub.script("summarize", error_reply("anthropic", 429, "slow down", {"retry-after": "3600"}), contains=VICTIM)
    result, report = run_json(brain, stub)
    assert result.exit_code == 0 and report["sessions"] == [SMALL[0], SMALL[2]]
    assert report["session_failures"][VICTIM].startswith("rate limited by the model server (HTTP 429); retry after 3600 s")
    assert pending(brain) == [VICTIM]


def test_a_500_fails_its_session_and_the_run_goes_on(brain: Path, stub: Stub) -> None:
    stub.script("extract_facts", error_reply("anthropic", 500, "internal"), contains=VICTIM)
    result, report = run_json(brain, stub)
    assert result.exit_code == 0 and report["sessions"] == [SMALL[0], SMALL[2]]
    assert report["session_failures"][VICTIM].startswith("HTTP 500 from the model server:")
    assert pending(brain) == [VICTIM]
    assert_sound(brain)


def test_a_timeout_fails_its_session_and_the_run_goes_on(tmp_path: Path, stub: Stub) -> None:
    brain = small_brain(tmp_path / "brain")
    set_dream(brain, timeout=0.3, retries=0)
    stub.script("summarize", Reply(delay=1.0, answer={"title": "late"}), contains=VICTIM)
    result, report = run_json(brain, stub)
    assert result.exit_code == 0 and report["sessions"] == [SMALL[0], SMALL[2]]
    assert report["session_failures"][VICTIM].startswith("the model server did not answer after 0.3 s")
    assert pending(brain) == [VICTIM]


def test_a_page_whose_write_fails_keeps_the_sessions_that_fed_it_pending(brain: Path, stub: Stub) -> None:
    page = "knowledge/organizations/sora-city-laboratory.md"
    bad = {"summary": "A lab", "body": "# Sora City Laboratory\n\n- It is a lab. [cite:99]\n"}
    stub.script("write_page", Reply(answer=bad), Reply(answer=bad), contains='"slug":"sora-city-laboratory"')
    result, report = run_json(brain, stub)
    assert result.exit_code == 0 and report["status"] == "ok"
    assert report["session_failures"][page].startswith("write_page for sora-city-laboratory: the model's answer was invalid twice: - body cites [cite:99]")
    fed = sorted(s for s, why in report["session_failures"].items() if why == f"kept pending: the page {page} it feeds could not be written")
    assert fed and pending(brain) == fed and set(report["sessions"]) == set(SMALL) - set(fed)
    # Its notes, and the notes that name it, wait with the sessions; links to it are plain text for now.
    assert not (brain / page).exists() and not (brain / "notes/sora-city-laboratory").exists()
    assert "[[sora-city-laboratory" not in "".join(p.read_text(encoding="utf-8") for p in (brain / "knowledge").rglob("*.md"))
    assert_sound(brain)
    again, report = run_json(brain, stub)
    assert page in report["pages_created"] and report["sessions"] == fed and pending(brain) == []
    assert_sound(brain)


def test_unsupported_claims_are_removed_and_contradicted_ones_flagged(brain: Path, stub: Stub) -> None:
    juds, sora = "knowledge/projects/japan-universal-design-sprint.md", "knowledge/organizations/sora-city-laboratory.md"
    dry, first = run_json(brain, stub, "--dry-run")
    staged = {p: (brain / ".dream/runs" / first["run_id"] / "staged" / p).read_text(encoding="utf-8") for p in (juds, sora)}
    claims = {p: [line for line in text.splitlines() if "[cite:" in line] for p, text in staged.items()}

    def judged(path: str, label: str) -> Reply:
        n = len(claims[path])
        return Reply(answer={"verdicts": [{"n": i, "label": label if i == 1 else "supported", "reason": f"{label} by the stub"} for i in range(1, n + 1)]})

    # A page's new claims are judged in one call (the first one that shows the page as context).
    stub.script("verify", judged(juds, "unsupported"), contains="<page>\n# Japan Universal Design Sprint")
    stub.script("verify", judged(sora, "contradicted"), contains="<page>\n# Sora City Laboratory")
    result, report = run_json(brain, stub)
    assert result.exit_code == 0 and report["verifier"]["unsupported"] == 1 and report["verifier"]["contradicted"] == 1
    [removed] = report["claims_removed"]
    assert removed == f"{juds}: {claims[juds][0].strip()} (unsupported: unsupported by the stub)"
    text = (brain / juds).read_text(encoding="utf-8")
    assert claims[juds][0] not in text and claims[juds][1] in text
    [flagged] = report["claims_flagged"]
    assert flagged == f"{sora}: {claims[sora][0].strip()} (contradicted: contradicted by the stub)"
    assert claims[sora][0] in (brain / sora).read_text(encoding="utf-8")
    message = git(brain, "log", "-1", "--format=%B")
    assert f"\nRemoved claim: {removed}\n" in message and f"\nFlagged claim: {flagged}\n" in message
    assert_sound(brain)


@pytest.mark.parametrize(("flag", "value", "named"), [("--max-tokens", "1", "--max-tokens"), ("--max-cost", "0.0001", "--max-cost")])
def test_a_budget_is_a_hard_limit_no_call_that_could_pass_it_is_sent(brain: Path, stub: Stub, flag: str, value: str,
                                                                      named: str) -> None:
    before = git(brain, "rev-parse", "HEAD")
    result, report = run_json(brain, stub, flag, value)
    assert stub.seen == []  # every call, at its largest, would pass the budget: none is sent
    assert result.exit_code == 1 and report["status"] == "failed"  # nothing was produced, and the run says why
    assert report["stopped"].endswith(f"({named})") and report["deferred"] == list(SMALL[1:])
    assert pending(brain) == list(SMALL) and git(brain, "rev-parse", "HEAD") == before  # nothing lost, all pending


def test_a_budget_that_fits_the_calls_of_the_first_session_stops_before_the_rest(brain: Path, stub: Stub) -> None:
    result, report = run_json(brain, stub, "--max-tokens", "16000")
    assert report["stopped"] and report["stopped"].endswith("(--max-tokens)")
    assert report["deferred"] and SMALL[0] not in report["deferred"]
    assert report["tokens_in"] + report["tokens_out"] <= 16000  # the budget is never passed


# --- keys -----------------------------------------------------------------------------------------------


def test_without_a_key_the_run_fails_before_any_request_with_a_hint(brain: Path, stub: Stub) -> None:
    before = git(brain, "rev-parse", "HEAD")
    result = dream_run(brain, "--backend", "anthropic", env={"ANTHROPIC_BASE_URL": stub.base_url})
    assert result.exit_code == 1 and stub.seen == []
    assert result.stderr == (
        "dream: error: the anthropic backend needs an API key, and ANTHROPIC_API_KEY is not set "
        "(set ANTHROPIC_API_KEY or run `dream run --backend offline`)\n"
    )
    assert git(brain, "rev-parse", "HEAD") == before


def test_a_refused_key_stops_the_run_after_one_request(brain: Path, stub: Stub) -> None:
    stub.script("*", error_reply("anthropic", 401, "invalid x-api-key"))
    result = dream_run(brain, "--backend", "anthropic", env=env(stub))
    assert result.exit_code == 1 and len(stub.seen) == 1
    assert result.stderr.endswith("dream: error: the Anthropic API refused the key (HTTP 401)\n")
    assert KEY not in result.output and pending(brain) == list(SMALL)


def test_with_a_key_and_no_choice_the_run_uses_anthropic_and_says_so(brain: Path, stub: Stub) -> None:
    result = dream_run(brain, env=env(stub))
    assert result.exit_code == 0 and len(stub.seen) > 0
    assert result.stderr.startswith("dream: using backend anthropic (default: ANTHROPIC_API_KEY is set;")
    assert "\nDream-Backend: anthropic\n" in git(brain, "log", "-1", "--format=%B")


def test_a_big_page_sends_the_model_only_what_it_shows(brain: Path, stub: Stub) -> None:
    """40 dated swims on Nadia's page: the write_page request carries 25 of them and says how many it left out."""
    from nadia_runs import add_session

    from dream.backends.base import PAGE_SECTION_FACTS

    colours = "amber azure beige black bronze cedar cherry cobalt copper coral cream denim ebony emerald golden granite hazel "\
              "indigo ivory jade khaki lemon lilac maroon mint navy ochre olive orchid pearl plum ruby rust sage salmon sand "\
              "scarlet silver teal violet".split()
    turns = []
    for day, colour in enumerate(colours, 1):
        turns += [("user", f"I went swimming at the {colour} pool on 2026-03-{day % 28 + 1:02d} with my aunt."), ("assistant", "Nice.")]
    add_session(brain, "2026-04-01-swims", "2026-04-01T09:00:00+09:00", turns)
    result, report = run_json(brain, stub)
    assert result.exit_code == 0, result.output
    pages = [r for r in stub.requests("write_page") if '"slug":"nadia-rahman"' in json.dumps(r.body, ensure_ascii=False).replace("\\\"", '"')]
    assert pages
    text = pages[-1].body["messages"][-1]["content"]
    text = text if isinstance(text, str) else "".join(part.get("text", "") for part in text)
    page = json.loads(text.split("<page>\n", 1)[1].split("\n</page>", 1)[0])
    events = [f for f in page["current"] if f["kind"] == "event"]
    assert len(events) == PAGE_SECTION_FACTS and page["hidden"]["Timeline"] >= len(colours) - PAGE_SECTION_FACTS
    assert "older fact(s) are in notes/nadia-rahman/" in text  # the prompt says what to write for them
