"""Benchmark files → questions with gold evidence turns, and the inputs of one Brain per conversation.

LoCoMo: one Brain per sample (a two-person conversation of many sessions); categories 1 multi-hop,
2 temporal, 3 open-domain, 4 single-hop, 5 adversarial (no answer). LongMemEval: one Brain per
question (its haystack sessions); the category is the question type; turns marked `has_answer`
are the evidence. Ids follow the importers' fixed mapping (../shared/data/README.md).
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

from brain.model import Record
from dream.importers.locomo import evidence_targets, parse_date_time
from dream.importers.longmemeval import parse_date
from dream.importers.longmemeval import session_id as lme_session_id

LOCOMO_CATEGORIES = {1: "1 multi-hop", 2: "2 temporal", 3: "3 open-domain", 4: "4 single-hop", 5: "5 adversarial"}
#: The categories LoCoMo's headline numbers use (adversarial questions have no answer).
LOCOMO_HEADLINE = ("1 multi-hop", "2 temporal", "3 open-domain", "4 single-hop")
LONGMEMEVAL_OWNER = "User"


class EvalCase(Record):
    """One question: its gold turns (`session:<id>#t<n>`) and the Brain it is asked of."""

    id: str
    brain: str
    question: str
    answer: str | None
    category: str
    gold: list[str]
    now: dt.date  # the clock of its packets: the question's date, else the conversation's last day
    asked: dt.date | None = None  # when the question is asked, where the benchmark says (LongMemEval)


class Dataset(Record):
    """The questions, and per Brain the JSON list to import (in the importer's own format)."""

    name: str  # the importer format: locomo | longmemeval
    cases: list[EvalCase]
    brains: dict[str, list[Any]]
    headline: tuple[str, ...]
    #: `owner` of each Brain's brain.toml, as the person would set it: LongMemEval sessions are one
    #: user's chats with an assistant, so that user owns the Brain; a LoCoMo conversation is between
    #: two people, neither of them an assistant's user, so it has none.
    owner: str | None = None


def load_dataset(fmt: str, path: Path) -> Dataset:
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(data, list):
        raise ValueError(f"{path}: expected a JSON list of {fmt} items")
    if fmt == "locomo":
        return _locomo(data)
    if fmt == "longmemeval":
        return _longmemeval(data)
    raise ValueError(f"unknown benchmark {fmt!r}; choose locomo or longmemeval")


def _answer(value: Any) -> str | None:
    return None if value is None else str(value)


def _locomo(data: list[dict]) -> Dataset:
    cases, brains = [], {}
    for sample in data:
        sid = sample["sample_id"]
        brains[sid] = [sample]
        conv = sample["conversation"]
        dates = [parse_date_time(v) for k, v in conv.items() if k.endswith("_date_time") and isinstance(v, str)
                 and isinstance(conv.get(k.removesuffix("_date_time")), list)]
        now = max(dt.date.fromisoformat(d[:10]) for d in dates if d)
        for i, qa in enumerate(sample.get("qa", [])):
            gold = sorted({str(t) for ev in qa.get("evidence", []) for t in evidence_targets(sid, str(ev))})
            cases.append(EvalCase(
                id=f"{sid}-q{i + 1}", brain=sid, question=qa["question"], answer=_answer(qa.get("answer")),
                category=LOCOMO_CATEGORIES.get(qa.get("category"), str(qa.get("category"))), gold=gold, now=now,
            ))
    return Dataset(name="locomo", cases=cases, brains=brains, headline=LOCOMO_HEADLINE)


def _longmemeval(data: list[dict]) -> Dataset:
    cases, brains = [], {}
    for item in data:
        qid = item["question_id"]
        brains[qid] = [item]
        gold = sorted(
            f"session:{lme_session_id(qid, hid)}#t{n}"
            for hid, turns in zip(item["haystack_session_ids"], item["haystack_sessions"])
            for n, turn in enumerate(turns, start=1)
            if isinstance(turn, dict) and turn.get("has_answer")
        )
        asked = parse_date(item.get("question_date") or "")
        dates = [parse_date(d) for d in item.get("haystack_dates", []) if isinstance(d, str)]
        now = dt.date.fromisoformat((asked or max(d for d in dates if d))[:10])
        cases.append(EvalCase(id=qid, brain=qid, question=item["question"], answer=_answer(item.get("answer")),
                              category=item.get("question_type", "?"), gold=gold, now=now,
                              asked=dt.date.fromisoformat(asked[:10]) if asked else None))
    types = tuple(sorted({c.category for c in cases}))
    return Dataset(name="longmemeval", cases=cases, brains=brains, headline=types, owner=LONGMEMEVAL_OWNER)
