"""The pure parts of the model backends, as tables: JSON repair, retry-after, prices and budgets,
claim removal, backend choice, and LLMBackend's repair and retry logic with a scripted `_complete`."""

from __future__ import annotations

import email.utils

import pytest

from brain.errors import BrainError
from brain.sessions import Session, SessionHeader, Turn
from dream.backends import base
from dream.backends.base import CallUsage, SummarizeRequest, Usage
from dream.backends.base import BackendHTTPError, BackendOutputError, BackendRateLimited, NetworkDisabledError, parse_retry_after
from dream.backends.llm import Completion, LLMBackend, Prompt
from dream.backends.openai_compat import parse_json_object
from dream.calls import cost, over_budget, price_for
from dream.claims import remove_claims
from dream.settings import LLMOptions, RunFlags, choose_backend, load_settings


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": 1}', {"a": 1}),
        ('```json\n{"a": [1, 2,]}\n```', {"a": [1, 2]}),
        ('Sure! Here it is: {"a": {"b": 2,},} Hope this helps.', {"a": {"b": 2}}),
        ('{"a": 1', None),  # truncated: nothing is guessed
        ("[1, 2]", None),  # not an object
        ("no json at all", None),
        ('{"text": "a } in a string"}', {"text": "a } in a string"}),
    ],
)
def test_parse_json_object_repairs_only_what_is_mechanical(text: str, expected) -> None:
    assert parse_json_object(text) == expected


def test_parse_retry_after_reads_ms_seconds_and_http_dates() -> None:
    now = 1_800_000_000.0
    assert parse_retry_after({"Retry-After": "7"}) == 7.0
    assert parse_retry_after({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    assert parse_retry_after({"retry-after": email.utils.formatdate(now + 30, usegmt=True)}, now=now) == 30.0
    assert parse_retry_after({"retry-after": "soon"}) is None and parse_retry_after({}) is None and parse_retry_after(None) is None


def test_prices_and_cost_count_cache_reads_and_writes_at_their_rates() -> None:
    sonnet = price_for("claude-sonnet-4-6")
    usage = CallUsage(input_tokens=1_000_000, output_tokens=100_000, cache_read_tokens=600_000, cache_write_tokens=100_000)
    # 300k fresh x $3 + 600k read x $0.30 + 100k written x $3.75 + 100k out x $15 (per million)
    assert cost(sonnet, usage) == pytest.approx(0.9 + 0.18 + 0.375 + 1.5)
    assert price_for("claude-sonnet-4-6-20260101") == sonnet
    assert price_for("my-local-model") is None and cost(None, usage) is None
    assert price_for("my-local-model", 0.0, 0.0).output == 0.0


def test_over_budget_names_the_budget_that_stopped_the_run() -> None:
    spent = Usage(input_tokens=900, output_tokens=100, cost_usd=0.5)
    assert over_budget(spent, None, None) is None and over_budget(spent, 1001, 0.6) is None
    assert over_budget(spent, 1000, None) == "token budget reached: 1000 of 1000 tokens spent (--max-tokens)"
    assert over_budget(spent, None, 0.5) == "cost budget reached: $0.5000 of $0.5000 spent (--max-cost)"
    assert over_budget(Usage(cost_usd=None), None, 0.1) is None  # unknown price: only tokens can stop it


PAGE = """---
title: Kyoto
type: place
summary: A city.
created: 2026-03-11
updated: 2026-04-06
sources:
  1: session:s1#t1
  2: session:s1#t2
  3: session:s2#t4
---
# Kyoto

## About
- Kyoto is a city. [cite:1]
- Kyoto has a lab. [cite:2]

It rains a lot. The lab is near the station. [cite:2]

## Timeline
- 2026-06-10: The workshop is in Kyoto. [cite:3]
"""


def test_remove_claims_cuts_bullets_sentences_empty_sections_and_unused_sources() -> None:
    out = remove_claims(PAGE, "knowledge/places/kyoto.md", ["- 2026-06-10: The workshop is in Kyoto. [cite:3]", "It rains a lot."])
    assert "## Timeline" not in out and "workshop" not in out and "3: session:s2#t4" not in out
    assert "\n\nThe lab is near the station. [cite:2]\n" in out and "- Kyoto is a city. [cite:1]" in out
    assert out.endswith("[cite:2]\n") and out.count("\n\n\n") == 0
    assert remove_claims(PAGE, "knowledge/places/kyoto.md", ["- Kyoto is a city. [cite:1]"]).count("[cite:1]") == 0


def test_remove_claims_of_a_note_with_one_fact_leaves_nothing() -> None:
    note = "---\ntitle: X\ntype: note\nkind: event\ntopic: kyoto\nconfidence: 0.8\nobserved: 2026-03-11\nsources:\n  1: session:s1#t1\n---\nKyoto is a city. [cite:1]\n"
    assert remove_claims(note, "notes/kyoto/x.md", ["Kyoto is a city. [cite:1]"]) is None


@pytest.mark.parametrize(
    ("flag", "configured", "env_key", "expected"),
    [
        ("offline", "anthropic", "k", ("offline", "--backend")),
        (None, "openai", "k", ("openai", "brain.toml [dream] backend")),
        (None, None, "k", ("anthropic", "default: ANTHROPIC_API_KEY is set")),
        (None, None, None, ("offline", "default: no ANTHROPIC_API_KEY")),
    ],
)
def test_the_backend_is_the_flag_then_brain_toml_then_the_key(monkeypatch, flag, configured, env_key, expected) -> None:
    if env_key:
        monkeypatch.setenv("ANTHROPIC_API_KEY", env_key)
    assert choose_backend(flag, configured) == expected


def test_brain_toml_may_not_hold_a_key_and_bad_values_are_named(make_tree) -> None:
    root = make_tree({"brain.toml": '[dream]\nbackend = "anthropic"\napi_key = "sk-ant-x"\n'})
    with pytest.raises(BrainError, match=r"\[dream\] must not hold an API key"):
        load_settings(root)
    root = make_tree({"brain.toml": '[dream]\ntimeout = "soon"\n'}, name="other")
    with pytest.raises(BrainError, match=r"brain.toml: \[dream\].timeout: Input should be a valid number"):
        load_settings(root)
    settings = load_settings(make_tree({"brain.toml": '[dream]\nmodel = "m1"\n[dream.verifier]\nunsupported = "reject"\n'}, name="third"), RunFlags(model="m2"))
    assert (settings.llm.model, settings.verifier.unsupported, settings.verifier.contradicted) == ("m2", "reject", "flag")


# --- LLMBackend with a scripted primitive --------------------------------------------------------------


class Scripted(LLMBackend):
    name = "scripted"

    def __init__(self, answers: list, **options) -> None:
        self.waits: list[float] = []
        super().__init__("scripted-1", LLMOptions(**options), sleep=self.waits.append)
        self.answers, self.prompts = list(answers), []

    def _complete(self, prompt: Prompt) -> Completion:
        self.prompts.append(prompt)
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return Completion(raw=str(answer), data=answer, usage=CallUsage(input_tokens=10, output_tokens=2))


SESSION = Session(
    header=SessionHeader(id="s1", started="2026-03-11T10:00:00+09:00", participants=["Nadia", "assistant"]),
    turns=[Turn(n=1, role="user", speaker="Nadia", time="2026-03-11T10:00:00+09:00", text="I work at Lumen Research."),
           Turn(n=2, role="assistant", speaker="assistant", text="Noted.")],
)
GOOD = {"title": "Work", "sentences": [{"text": "Nadia works at Lumen Research.", "first_turn": 1, "last_turn": 1}], "topics": ["Lumen Research"]}


def test_an_invalid_answer_is_asked_again_with_its_error_then_fails_loudly() -> None:
    backend = Scripted([{"title": "Work"}, GOOD])
    assert backend.summarize(SummarizeRequest(session=SESSION)).title == "Work"
    assert backend.prompts[1].repair[1] == "1 validation error(s):\n- sentences: Field required"
    assert backend.prompts[0].key("m") != backend.prompts[1].key("m") and backend.usage().calls == 2
    outside = {**GOOD, "sentences": [{"text": "x", "first_turn": 3, "last_turn": 3}]}
    with pytest.raises(BackendOutputError, match=r"summarize for s1: the model's answer was invalid twice: - sentences\[0\]: turns 3-3 are not a span within turns 1 to 2"):
        Scripted([outside, outside]).summarize(SummarizeRequest(session=SESSION))


def test_retry_after_is_honoured_up_to_max_wait_and_5xx_backs_off() -> None:
    backend = Scripted([BackendRateLimited("{}", 0.25), BackendHTTPError(503, "busy"), GOOD], retries=2, max_wait=1.0)
    backend.summarize(SummarizeRequest(session=SESSION))
    assert backend.waits == [0.25, 1.0]  # retry-after as asked; then 2**1 s capped by max_wait
    too_long = Scripted([BackendRateLimited("{}", 30.0)], retries=2, max_wait=1.0)
    with pytest.raises(BackendRateLimited):
        too_long.summarize(SummarizeRequest(session=SESSION))
    assert too_long.waits == []


def test_no_request_leaves_when_networking_is_disabled(monkeypatch) -> None:
    monkeypatch.setattr(base, "ALLOW_NETWORK", False)
    backend = Scripted([GOOD])
    with pytest.raises(NetworkDisabledError):
        backend.summarize(SummarizeRequest(session=SESSION))
    assert backend.prompts == []


def test_prompts_are_templates_that_carry_the_transcript_escaped() -> None:
    tricky = SESSION.model_copy(update={"turns": [SESSION.turns[0].model_copy(update={"text": 'Use <b> & "quotes"'}), SESSION.turns[1]]})
    backend = Scripted([GOOD])
    backend.summarize(SummarizeRequest(session=tricky, owner="Nadia Rahman"))
    user = backend.prompts[0].user
    assert user.startswith("Task: summarize\n") and 'Owner of the Brain (the user who says "I"): Nadia Rahman' in user
    assert '<turn n="1" role="user" speaker="Nadia" time="2026-03-11T10:00:00+09:00">Use &lt;b&gt; &amp; &quot;quotes&quot;</turn>' in user
    assert backend.prompts[0].system.startswith("# Dream: the compiler of a Brain")  # the skill, without its front matter


@pytest.mark.parametrize("name", ["dream", "brain"])
def test_skills_are_agent_skills_with_a_name_and_a_description(name: str) -> None:
    import yaml

    from dream.backends.llm import SKILL

    text = (SKILL.parent.parent / name / "SKILL.md").read_text(encoding="utf-8")
    head, body = text.removeprefix("---\n").split("\n---\n", 1)
    meta = yaml.safe_load(head)
    assert set(meta) == {"name", "description"} and meta["name"] == name
    assert 20 < len(meta["description"]) <= 1024 and "Use when" in meta["description"]
    assert body.lstrip().startswith("# ")
