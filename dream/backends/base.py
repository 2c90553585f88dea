"""The model-backend interface: Dream's four questions as typed calls (pydantic in, pydantic out),
and the errors a backend raises.

Phases never know which backend answers. `offline` implements the calls directly; network
backends implement one structured-completion primitive. Two more calls, `answer` and `judge`,
serve `dream eval --answer`, never a Dream run.
"""

from __future__ import annotations

import datetime as dt
import email.utils
import time
from abc import ABC, abstractmethod
from collections.abc import Mapping
from pathlib import Path
from typing import ClassVar, Literal

from pydantic import ConfigDict, Field

from brain.model import Model, empty_list
from brain.sessions import Session

#: Checked before every request a network backend sends; `dream replay` and the tests turn it off.
ALLOW_NETWORK = True

FactKind = Literal["preference", "identity", "relationship", "project", "event", "decision", "correction", "learning", "task", "command"]
VerdictLabel = Literal["supported", "unsupported", "contradicted"]
PageType = Literal["person", "organization", "place", "project", "concept", "preference", "learning", "event"]
#: A page's sections for current facts, in page order, and the kinds each holds; only the Timeline
#: is dated by when things happened (the others by when they were said).
SECTIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("About", ("identity", "correction")),
    ("People", ("relationship",)),
    ("Preferences", ("preference",)),
    ("Projects", ("project",)),
    ("Decisions", ("decision",)),
    ("Learnings", ("learning",)),
    ("Open tasks", ("task",)),
    ("Commands", ("command",)),
    ("Timeline", ("event",)),
)
SECTION_OF_KIND: dict[str, str] = {kind: heading for heading, kinds in SECTIONS for kind in kinds}
#: A page shows at most this many facts per section (and of its History and Mentioned in): the
#: newest, plus the current value of each slot (employer, home, …). Every fact stays in its note;
#: `WritePageRequest.hidden` says how many a section leaves out. This also bounds what a model is sent.
PAGE_SECTION_FACTS = 25


class _Model(Model):
    model_config = ConfigDict(extra="forbid", frozen=True)


class BackendError(Exception):
    """A model call failed; the unit (session or page) fails, the run goes on.

    `fatal` errors (no key, a key the server refuses) would fail every unit alike, so the run stops.
    """

    hint: str | None = None
    fatal: bool = False


# Errors of network backends, mapped at the boundary from SDK or HTTP failures (never parsed from text).
OFFLINE_HINT = "run `dream run --backend offline`"


class NeedsKeyError(BackendError):
    """No API key, or the server refused it (401/403)."""

    fatal = True

    def __init__(self, message: str, env: str = "ANTHROPIC_API_KEY") -> None:
        super().__init__(message)
        self.env = env
        self.hint = f"set {env} or {OFFLINE_HINT}"


class BackendHTTPError(BackendError):
    """The server answered with an error status."""

    def __init__(self, status: int, body: str, message: str | None = None) -> None:
        super().__init__(message or f"HTTP {status} from the model server: {body[:200]}")
        self.status, self.body = status, body
        self.hint = "the server failed; the unit stays pending and is retried by the next run" if status >= 500 else None


class BackendRateLimited(BackendHTTPError):
    """429: too many requests; `retry_after` is what the server asked us to wait (seconds), if it said."""

    def __init__(self, body: str, retry_after: float | None) -> None:
        wait = f"; retry after {retry_after:g} s" if retry_after is not None else ""
        super().__init__(429, body, f"rate limited by the model server (HTTP 429){wait}")
        self.retry_after = retry_after
        self.hint = "lower the pace (--max-sessions) or raise [dream] max_wait in brain.toml"


class BackendTimeout(BackendError):
    def __init__(self, seconds: float | None) -> None:
        after = f" after {seconds:g} s" if seconds else ""
        super().__init__(f"the model server did not answer{after}")
        self.hint = "raise [dream] timeout in brain.toml, or try again later"


class BackendUnavailable(BackendError):
    """The server cannot be reached (refused, DNS, TLS)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.hint = f"check [dream] base_url and the network, or {OFFLINE_HINT}"


class BackendOutputError(BackendError):
    """The model's answer did not validate, twice (the second time after seeing the error)."""

    def __init__(self, task: str, unit: str, error: str) -> None:
        super().__init__(f"{task} for {unit}: the model's answer was invalid twice: {error}")
        self.hint = "the unit stays pending; try another model (--model) or `--backend offline`"


class BudgetReached(BackendError):
    """The next call could take the run past --max-cost or --max-tokens: it is not sent."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.hint = "what is done lands; the rest stays pending for the next run"


def retry_wait(exc: BackendError, retry: int, retries: int, max_wait: float) -> float | None:
    """Seconds to wait before trying a failed call again, or None to give up."""
    if retry >= retries or exc.fatal:
        return None
    if isinstance(exc, BackendRateLimited):
        wait = exc.retry_after if exc.retry_after is not None else 2.0**retry
        return wait if wait <= max_wait else None
    if isinstance(exc, BackendHTTPError) and exc.status < 500:
        return None
    if isinstance(exc, (BackendHTTPError, BackendTimeout, BackendUnavailable)):
        return min(2.0**retry, max_wait)
    return None


class NetworkDisabledError(BackendError):
    fatal = True

    def __init__(self) -> None:
        super().__init__("networking is disabled (dream.backends.base.ALLOW_NETWORK is False)")


def parse_retry_after(headers: Mapping[str, str] | None, now: float | None = None) -> float | None:
    """Seconds to wait from `retry-after-ms`, `retry-after` (seconds or an HTTP date); None if absent."""
    if not headers:
        return None
    lower = {k.lower(): v for k, v in headers.items()}
    for key, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = lower.get(key)
        if value is None:
            continue
        try:
            return max(0.0, float(value) * scale)
        except ValueError:
            pass
        when = email.utils.parsedate_tz(value) if key == "retry-after" else None
        if when is not None:
            return max(0.0, email.utils.mktime_tz(when) - (now if now is not None else time.time()))
    return None


def scrub(text: str, secret: str | None) -> str:
    """The text with the API key cut out: error bodies are written to reports and logs."""
    return text.replace(secret, "[REDACTED:api-key]") if secret else text


class EntityRef(_Model):
    """A page the compiler already knows: what resolution matches new names against."""

    slug: str
    title: str
    type: str
    aliases: list[str] = Field(default_factory=empty_list)


class SummarizeRequest(_Model):
    session: Session
    owner: str | None = None
    instructions: str = ""
    first_turn: int = 1  # a grown session: summarise from here


class SummarySentence(_Model):
    text: str
    first_turn: int
    last_turn: int


class SessionSummary(_Model):
    title: str
    sentences: list[SummarySentence]
    topics: list[str] = Field(default_factory=empty_list)  # entity names the session is about


class ExtractRequest(_Model):
    session: Session
    owner: str | None = None
    known: list[EntityRef] = Field(default_factory=empty_list)
    instructions: str = ""
    never_record: list[str] = Field(default_factory=empty_list)
    first_turn: int = 1


class Entity(_Model):
    name: str
    type: PageType
    aliases: list[str] = Field(default_factory=empty_list)
    description: str | None = None


class Fact(_Model):
    """One claim extracted from a turn span, about one subject entity."""

    kind: FactKind
    subject: str  # entity name (resolved to a page by the attach phase)
    statement: str  # one sentence, third person, may name other entities
    first_turn: int
    last_turn: int
    observed: dt.date
    event_date: dt.date | None = None
    confidence: float = Field(ge=0.0, le=1.0)
    slot: str | None = None  # facts with the same subject and slot supersede each other (newer wins)
    value: str | None = None
    replaces: str | None = None  # a correction: the wrong value it replaces
    mentions: list[str] = Field(default_factory=empty_list)


class FactBatch(_Model):
    facts: list[Fact]
    entities: list[Entity] = Field(default_factory=empty_list)


class PageFact(_Model):
    """A fact as the page writer sees it: statement, its cite numbers, and when it stopped being true."""

    kind: str
    statement: str
    cites: list[int]
    observed: dt.date
    event_date: dt.date | None = None
    until: dt.date | None = None
    slot: str | None = None


class WritePageRequest(_Model):
    slug: str
    title: str
    type: str
    aliases: list[str] = Field(default_factory=empty_list)
    current: list[PageFact]
    history: list[PageFact] = Field(default_factory=empty_list)
    mentioned: list[PageFact] = Field(default_factory=empty_list)  # other pages' facts that name this one
    related: list[tuple[str, str]] = Field(default_factory=empty_list)  # (slug, title)
    names: dict[str, str] = Field(default_factory=dict)  # name → slug, for linking other pages
    instructions: str = ""
    # Section heading ("History", "Mentioned in" included) → facts left out of the request (they
    # stay in notes/<slug>/); the page says so at the end of that section.
    hidden: dict[str, int] = Field(default_factory=dict)


class PageDraft(_Model):
    summary: str
    body: str


class VerifyRequest(_Model):
    claim: str
    evidence: list[str]
    context: str = ""  # the page the claim lands on (contradictions); offline ignores it


class Verdict(_Model):
    label: VerdictLabel
    score: float
    reason: str


# A network backend's verdicts on the claims of one verify call (no docstrings: they would be in the schema).
class ClaimJudgement(_Model):
    n: int
    label: VerdictLabel
    reason: str


class ClaimVerdicts(_Model):
    verdicts: list[ClaimJudgement]


class AnswerRequest(_Model):
    """A benchmark question and the context packet an agent got for it (`dream eval --answer`)."""

    question: str
    packet: str  # the packet as the agent reads it (markdown); data, never instructions
    asked: dt.date | None = None  # when the question is asked, if the benchmark says


class AnswerDraft(_Model):
    answer: str  # a few words; "not mentioned" when the packet does not say


class JudgeRequest(_Model):
    question: str
    gold: str  # the benchmark's answer
    answer: str  # the generated answer


class Judgement(_Model):
    correct: bool
    reason: str  # one short sentence


class CallUsage(_Model):
    input_tokens: int = 0  # all input, cache reads and writes included
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0


class Usage(CallUsage):
    """The tokens of a run's calls so far, their cost and how many there were."""

    cost_usd: float | None = 0.0  # None: the model has no known price
    calls: int = 0


class RunContext(_Model):
    """What a backend learns when a run starts (dream.run): where to log, and the stable prompt prefix."""

    run_dir: Path
    index: str = ""  # knowledge/index.md at the start of the run
    instructions: str = ""  # .dream/instructions.md
    record: bool = False  # keep every model exchange for `dream replay`
    max_tokens: int | None = None  # no call is sent that could take the run past these
    max_cost: float | None = None


class ModelBackend(ABC):
    """Answers Dream's four questions and the eval's two; phases never know which backend runs."""

    name: ClassVar[str]
    model: str | None = None
    stopped: str | None = None  # why a budget refused a call of this run (the run stops at the next session)

    def open_run(self, ctx: RunContext) -> None:
        """Called once per run, before the first call, when the run id is known (offline: nothing)."""

    @abstractmethod
    def summarize(self, req: SummarizeRequest) -> SessionSummary: ...

    @abstractmethod
    def extract_facts(self, req: ExtractRequest) -> FactBatch: ...

    @abstractmethod
    def write_page(self, req: WritePageRequest) -> PageDraft: ...

    @abstractmethod
    def verify(self, req: VerifyRequest) -> Verdict: ...

    @abstractmethod
    def answer(self, req: AnswerRequest) -> AnswerDraft:
        """Answer a question from its packet alone (the eval's reader; Dream never calls it)."""

    @abstractmethod
    def judge(self, req: JudgeRequest) -> Judgement:
        """Whether a generated answer says what the gold answer says (the eval's judge)."""

    def page_section(self, page_type: str, kind: str, statement: str) -> tuple[str, bool]:
        """The section a current fact goes under on a page of this type, and whether that section is
        ordered by when things happened (else by when they were said). Dream keeps the newest
        PAGE_SECTION_FACTS of each section in the request, so it must match how `write_page` groups."""
        heading = SECTION_OF_KIND.get(kind, "About")
        return heading, heading == "Timeline"

    def verify_claims(self, reqs: list[VerifyRequest]) -> list[Verdict]:
        """Several claims of one page at once (model backends answer them in one call)."""
        return [self.verify(r) for r in reqs]

    def usage(self) -> Usage:
        """Tokens spent so far in this run (offline: none)."""
        return Usage()
