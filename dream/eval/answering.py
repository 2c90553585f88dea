"""`dream eval --answer BACKEND`: answer each question from its packet, judge the answer, score it.

The reader gets what an agent gets: the packet as `brain context` prints it (the bm25 baseline's
turns under the same heading), the question, and the day it is asked when the benchmark says
(LongMemEval; LoCoMo does not). The judge gets the question, the gold answer and the generated
one: a model judge as in the LoCoMo literature (Mem0's "J"), or offline a lexical rule. F1 is
the LoCoMo paper's token F1 of the answer against the gold answer, computed, not judged.
"""

from __future__ import annotations

import time
from collections.abc import Iterable

from brain.model import Record
from dream.backends.base import AnswerRequest, BackendError, JudgeRequest, ModelBackend
from dream.eval.datasets import EvalCase
from dream.eval.metrics import Item, token_f1

#: The heading `brain context` prints over evidence turns (brain.context.LANE_HEADINGS["turns"]).
TURNS_HEADING = "## Evidence turns"


class Answered(Record):
    """One question asked of one system at one budget: the answer, the judgement, the F1."""

    case: str
    category: str
    system: str
    budget: int
    question: str
    gold: str
    answer: str | None  # None when the reader's call failed
    correct: bool | None  # None when a call failed
    f1: float | None
    reason: str  # the judge's reason, or the error that stopped the calls


def baseline_text(items: Iterable[Item], budget: int) -> str:
    """The bm25 baseline's packet as an agent would read it: its turns under the turns heading."""
    lines = [f"- {i.text}" for i in items]
    return "\n".join([f"# Context (bm25 over raw turns, budget {budget} tokens)", "", TURNS_HEADING, *lines]) + "\n"


class Answerer:
    """Asks one backend to answer and to judge; counts the time spent and the calls that failed.

    A failed call (HTTP error after retries, an answer invalid twice) is recorded, not raised:
    that answer is left out of accuracy and F1 and counted in `errors`. A fatal error (no key, a
    refused key) would fail every call alike, so it stops the eval.
    """

    def __init__(self, backend: ModelBackend) -> None:
        self.backend = backend
        self.seconds = 0.0
        self.errors = 0

    def __call__(self, case: EvalCase, system: str, budget: int, packet: str) -> Answered:
        assert case.answer is not None
        started = time.perf_counter()
        answer = None
        try:
            answer = self.backend.answer(AnswerRequest(question=case.question, packet=packet, asked=case.asked)).answer
            verdict = self.backend.judge(JudgeRequest(question=case.question, gold=case.answer, answer=answer))
        except BackendError as exc:
            if exc.fatal:
                raise
            self.errors += 1
            return self._record(case, system, budget, answer, None, f"{'judge' if answer is not None else 'answer'} failed: {exc}")
        finally:
            self.seconds += time.perf_counter() - started
        return self._record(case, system, budget, answer, verdict.correct, verdict.reason)

    def _record(self, case: EvalCase, system: str, budget: int, answer: str | None, correct: bool | None, reason: str) -> Answered:
        scored = correct is not None and answer is not None
        return Answered(case=case.id, category=case.category, system=system, budget=budget, question=case.question,
                        gold=case.answer or "", answer=answer, correct=correct,
                        f1=token_f1(answer, case.answer or "") if scored else None, reason=reason)
