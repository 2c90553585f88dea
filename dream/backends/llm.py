"""LLMBackend: Dream's typed calls on top of one structured-completion primitive, `_complete`.

Each call renders `dream/prompts/<task>.j2` under a system prompt that stays byte-identical for
the whole run (the Dream skill, the owner's standing instructions, the index at the start of the
run), so servers can cache it. The answer is validated by pydantic and by checks against the
request (turns in range, known cite numbers); an invalid answer is retried once with the error
shown to the model, then the unit fails loudly with BackendOutputError. 429, 5xx and timeouts
are retried here (not by the SDK) so that every attempt is logged and `retry-after` is honoured.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import time
from abc import abstractmethod
from dataclasses import dataclass, field, replace
from typing import Any, Callable, ClassVar

import jinja2
from pydantic import BaseModel, ValidationError

from brain.sessions import Session, SessionHeader, Turn
from brain.tokens import estimate_tokens
import dream.backends.base as backend_base
from dream.backends.base import (
    AnswerDraft,
    AnswerRequest,
    BackendError,
    BackendOutputError,
    BudgetReached,
    ClaimVerdicts,
    CallUsage,
    ExtractRequest,
    FactBatch,
    JudgeRequest,
    Judgement,
    ModelBackend,
    NetworkDisabledError,
    PageDraft,
    RunContext,
    SessionSummary,
    SummarizeRequest,
    Usage,
    Verdict,
    VerifyRequest,
    WritePageRequest,
    retry_wait,
)
from dream.backends.answers import check_answer, check_facts, check_page, check_summary, check_verdicts, no_json
from dream.bundled import bundled
from dream.calls import CallLog, add_usage, call_over_budget, cost, price_for
from dream.instructions import Instructions, parse_instructions
from dream.record import Recorder
from dream.sanitize import sanitize_session
from dream.settings import LLMOptions

SKILL = bundled("skills") / "dream" / "SKILL.md"
#: Turns shown before a grown session's first new turn, as context for pronouns.
CONTEXT_TURNS = 2
#: Claims judged in one verify call.
VERIFY_BATCH = 40
_INDEX_SLUG_RE = re.compile(r"^- \[\[([^\]|#]+)", re.M)


#: Task → the model of its answer. Every request carries all four schemas in this order (a stable prefix).
TASKS: dict[str, type[BaseModel]] = {
    "summarize": SessionSummary,
    "extract_facts": FactBatch,
    "write_page": PageDraft,
    "verify": ClaimVerdicts,
}
#: The eval's tasks (`dream eval --answer`): never in a Dream run, so they carry their own system
#: prompt and only their own schema, and their answers are short.
EVAL_TASKS: dict[str, type[BaseModel]] = {"answer": AnswerDraft, "judge": Judgement}
EVAL_MAX_TOKENS = 512
DESCRIPTIONS = {
    "summarize": "Record the summary of a session: a title, sentences with the turns that say them, topics.",
    "extract_facts": "Record the facts the new turns of a session state, and the entities they name.",
    "write_page": "Record a wiki page written from its facts: a one-line summary and the markdown body.",
    "verify": "Record one verdict per claim: supported, unsupported or contradicted, with a reason.",
    "answer": "Record the short answer to the question, taken from the packet alone.",
    "judge": "Record whether the generated answer is correct against the gold answer, with a one-sentence reason.",
}


@functools.lru_cache(maxsize=None)
def schema(task: str) -> dict:
    return {**TASKS, **EVAL_TASKS}[task].model_json_schema()


@dataclass(frozen=True)
class Completion:
    """One answer of the server: `data` is the parsed JSON object (None if there was none)."""

    raw: str
    data: Any = None
    usage: CallUsage = field(default_factory=CallUsage)
    stop_reason: str | None = None
    tool_id: str | None = None


@dataclass(frozen=True)
class Prompt:
    task: str
    system: str
    user: str
    repair: tuple[Completion, str] | None = None  # the previous answer and what was wrong with it

    def key(self, model: str) -> str:
        """Hash of everything the server sees but the transport: names the exchange in logs and records."""
        repair = [self.repair[0].raw, self.repair[1]] if self.repair else None
        payload = json.dumps([model, self.task, self.system, self.user, repair], ensure_ascii=False)
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class OutputInvalid(ValueError):
    """The answer parsed but says something impossible (a turn outside the session, an unknown cite)."""


def _xml(text: Any) -> str:
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


@functools.lru_cache(maxsize=1)
def _env() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("dream", "prompts"),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=False,
        autoescape=False,
    )
    env.filters["xml"] = _xml
    env.policies["json.dumps_kwargs"] = {"ensure_ascii": False, "sort_keys": False}
    return env


def render(template: str, **values: Any) -> str:
    return _env().get_template(template).render(**values).strip() + "\n"


@functools.lru_cache(maxsize=1)
def skill_text() -> str:
    """The Dream skill without its front matter: the first part of every system prompt."""
    if not SKILL.is_file():
        raise BackendError(f"the Dream skill {SKILL} is missing; install from a checkout with `pip install -e .`")
    text = SKILL.read_text(encoding="utf-8")
    if text.startswith("---\n"):
        text = text.split("\n---\n", 1)[1]
    return text.strip()


def describe(exc: Exception, limit: int = 1500) -> str:
    """A validation error as the model should read it: field paths and messages, no input echo."""
    if isinstance(exc, ValidationError):
        lines = [f"{'.'.join(str(p) for p in e['loc']) or '(root)'}: {e['msg']}" for e in exc.errors(include_url=False)]
        text = f"{len(lines)} validation error(s):\n" + "\n".join(f"- {line}" for line in lines)
    else:
        text = str(exc)
    return text if len(text) <= limit else text[: limit - 2] + " …"


class LLMBackend(ModelBackend):
    """A network backend: typed calls as prompts + structured output; subclasses implement `_complete`."""

    name: ClassVar[str] = "llm"
    needs_network: ClassVar[bool] = True

    def __init__(self, model: str, options: LLMOptions, sleep: Callable[[float], None] = time.sleep) -> None:
        self.model, self.options, self._sleep = model, options, sleep
        self.price = price_for(model, options.price_in, options.price_out)
        self._usage = Usage(cost_usd=0.0 if self.price else None)
        self._budget: tuple[int | None, float | None] = (None, None)
        self._log: CallLog | None = None
        self._recorder = None
        self._system: str | None = None
        self._indexed: frozenset[str] = frozenset()
        self._instructions = Instructions()

    def open_run(self, ctx: RunContext) -> None:
        self._usage = Usage(cost_usd=0.0 if self.price else None)
        self._budget, self.stopped = (ctx.max_tokens, ctx.max_cost), None
        self._log = CallLog(ctx.run_dir)
        self._system = render("system.j2", skill=skill_text(), instructions=ctx.instructions, index=ctx.index)
        self._indexed = frozenset(_INDEX_SLUG_RE.findall(ctx.index))
        self._instructions = parse_instructions(ctx.instructions)
        if ctx.record:
            self._recorder = Recorder(ctx.run_dir)

    @property
    def system(self) -> str:
        if self._system is None:  # used outside a run (unit tests): no instructions, no index
            self._system = render("system.j2", skill=skill_text(), instructions="", index="")
        return self._system

    @functools.cached_property
    def eval_system(self) -> str:
        """The system prompt of the eval's tasks: no Dream skill, no Brain, the inputs are data."""
        return render("eval_system.j2")

    def max_tokens_for(self, task: str) -> int:
        most = self.options.max_output_tokens
        return min(most, EVAL_MAX_TOKENS) if task in EVAL_TASKS else most

    def usage(self) -> Usage:
        return self._usage

    # --- the four questions ----------------------------------------------------------------------

    def summarize(self, req: SummarizeRequest) -> SessionSummary:
        turns, last = _shown(req.session, req.first_turn)
        user = render(
            "summarize.j2", session=req.session, turns=turns, first_turn=req.first_turn, last_turn=last,
            owner=req.owner, answer=self.answer_line("summarize"),
        )
        return self._structured("summarize", user, req.session.id, lambda out: check_summary(out, req.first_turn, last))

    def extract_facts(self, req: ExtractRequest) -> FactBatch:
        turns, last = _shown(req.session, req.first_turn)
        known = [
            {"name": k.title, "slug": k.slug, "type": k.type, **({"aliases": k.aliases} if k.aliases else {})}
            for k in req.known
            if k.slug not in self._indexed
        ]
        user = render(
            "extract_facts.j2", session=req.session, turns=turns, first_turn=req.first_turn, last_turn=last,
            owner=req.owner, known=known, answer=self.answer_line("extract_facts"),
        )
        return self._structured("extract_facts", user, req.session.id, lambda out: check_facts(out, req.first_turn, last))

    def write_page(self, req: WritePageRequest) -> PageDraft:
        data = req.model_dump(mode="json", exclude={"instructions", "slug", "title", "type"}, exclude_defaults=True)
        page_json = json.dumps({"slug": req.slug, "title": req.title, "type": req.type, **data}, ensure_ascii=False, separators=(",", ":"))
        user = render("write_page.j2", req=req, page_json=page_json, answer=self.answer_line("write_page"))
        return self._structured("write_page", user, req.slug, lambda out: check_page(out, req))

    def verify(self, req: VerifyRequest) -> Verdict:
        return self.verify_claims([req])[0]

    def verify_claims(self, reqs: list[VerifyRequest]) -> list[Verdict]:
        out: list[Verdict] = []
        for start in range(0, len(reqs), VERIFY_BATCH):
            out += self._verify_batch(reqs[start : start + VERIFY_BATCH])
        return out

    def _verify_batch(self, reqs: list[VerifyRequest]) -> list[Verdict]:
        claims = [{"n": i, "claim": r.claim, "evidence": self._clean(r.evidence)} for i, r in enumerate(reqs, 1)]
        user = render("verify.j2", claims=claims, context=reqs[0].context, answer=self.answer_line("verify"))
        unit = _first_line(reqs[0].context) or reqs[0].claim[:60]
        result = self._structured("verify", user, unit, lambda out: check_verdicts(out, len(reqs)))
        by_n = {v.n: v for v in result.verdicts}
        return [
            Verdict(label=by_n[i].label, score=1.0 if by_n[i].label == "supported" else 0.0, reason=by_n[i].reason)
            for i in range(1, len(reqs) + 1)
        ]

    # --- the eval's two questions (dream eval --answer) ----------------------------------------------

    def answer(self, req: AnswerRequest) -> AnswerDraft:
        lines = req.packet.splitlines()
        clean = iter(self._clean([line for line in lines if line.strip()]))
        packet = "\n".join(next(clean) if line.strip() else line for line in lines)
        user = render("answer.j2", question=req.question, asked=req.asked, packet=packet, answer=self.answer_line("answer"))
        return self._structured("answer", user, req.question[:60], check_answer, system=self.eval_system)

    def judge(self, req: JudgeRequest) -> Judgement:
        user = render("judge.j2", req=req, answer=self.answer_line("judge"))
        return self._structured("judge", user, req.question[:60], lambda out: [], system=self.eval_system)

    def _clean(self, texts: list[str]) -> list[str]:
        """Evidence and packets hold raw turn text read from the Brain: sanitise it as turns are before they leave."""
        turns = [Turn(n=i, role="user", text=t) for i, t in enumerate(texts, 1)]
        clean, _ = sanitize_session(Session(header=SessionHeader(id="evidence"), turns=turns), self._instructions)
        return [t.text for t in clean.turns]

    # --- structured output ------------------------------------------------------------------------

    def answer_line(self, task: str) -> str:
        """The last line of every user prompt: how to answer (a tool call, or JSON)."""
        return f"Answer with one JSON object that follows the `{task}` schema, and nothing else."

    def _structured(self, task: str, user: str, unit: str, check: Callable[[Any], list[str]], system: str | None = None):
        prompt = Prompt(task=task, system=system or self.system, user=user)
        output = TASKS.get(task) or EVAL_TASKS[task]
        for attempt in (1, 2):
            completion = self._call(prompt, unit, attempt)
            try:
                if completion.data is None:
                    raise OutputInvalid(no_json(completion.stop_reason))
                out = output.model_validate(completion.data)
                problems = check(out)
                if problems:
                    raise OutputInvalid("\n".join(f"- {p}" for p in problems[:20]))
                return out
            except (ValidationError, OutputInvalid) as exc:
                error = describe(exc)
                if attempt == 2:
                    raise BackendOutputError(task, unit, error) from None
                prompt = replace(prompt, repair=(completion, error))
        raise AssertionError("unreachable")

    def _call(self, prompt: Prompt, unit: str, attempt: int) -> Completion:
        """One logical call: retries after 429/5xx/timeouts, logged and (with --record) recorded."""
        if self.needs_network and not backend_base.ALLOW_NETWORK:
            raise NetworkDisabledError()
        worst = CallUsage(input_tokens=estimate_tokens(prompt.system + prompt.user), output_tokens=self.max_tokens_for(prompt.task))
        self.stopped = self.stopped or call_over_budget(self._usage, self.price, worst, self._budget[0], self._budget[1])
        if self.stopped:
            raise BudgetReached(self.stopped)
        key = prompt.key(self.model or "")
        retry = 0
        while True:
            started = time.monotonic()
            try:
                completion = self._complete(prompt)
            except BackendError as exc:
                self._note((prompt.task, unit, key), (attempt, retry), started, exc)
                wait = retry_wait(exc, retry, self.options.retries, self.options.max_wait)
                if wait is None:
                    if self._recorder is not None:
                        self._recorder.add(prompt, key, unit, error=exc)
                    raise
                self._sleep(wait)
                retry += 1
                continue
            self._note((prompt.task, unit, key), (attempt, retry), started, completion)
            if self._recorder is not None:
                self._recorder.add(prompt, key, unit, completion=completion)
            return completion

    def _note(self, call: tuple[str, str, str], tries: tuple[int, int], started: float, outcome: Completion | BaseException) -> None:
        """One request into the usage and the call log: `call` (task, unit, prompt key), `tries` (attempt, retry)."""
        usage = outcome.usage if isinstance(outcome, Completion) else None
        error = outcome if isinstance(outcome, BaseException) else None
        call_cost = cost(self.price, usage) if usage is not None else (0.0 if self.price else None)
        if usage is not None:
            self._usage = add_usage(self._usage, usage, call_cost)
        if self._log is None:
            return
        self._log.append(
            task=call[0], unit=call[1], backend=self.name, model=self.model or "",
            input_hash=call[2], attempt=tries[0], retry=tries[1], usage=usage or CallUsage(), cost_usd=call_cost,
            duration_ms=int((time.monotonic() - started) * 1000),
            error=f"{type(error).__name__}: {error}" if error is not None else None,
            replayed=not self.needs_network,
        )

    @abstractmethod
    def _complete(self, prompt: Prompt) -> Completion:
        """Send one request and return the answer; map every transport failure to a BackendError."""


def _shown(session, first_turn: int):
    turns = [t for t in session.turns if t.n >= first_turn - CONTEXT_TURNS]
    last = session.turns[-1].n if session.turns else first_turn
    return turns, last


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return ""
