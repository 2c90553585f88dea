"""Checks of a model's answer against its request: what pydantic cannot know.

Turn spans inside the session, cite numbers the page's facts have, links to pages that exist,
one verdict per claim, an answer that says something. A problem found here is shown to the model
once (LLMBackend's repair call).
"""

from __future__ import annotations

import re

from dream.backends.base import AnswerDraft, FactBatch, PageDraft, SessionSummary, WritePageRequest

_LINK_RE = re.compile(r"\[\[([^\]|#]+)(?:#[^\]|]*)?(?:\|[^\]]*)?\]\]")
_CITE_RE = re.compile(r"\[cite:(\d+)\]")


def span(first: int, last: int, lo: int, hi: int) -> str | None:
    if not (lo <= first <= last <= hi):
        return f"turns {first}-{last} are not a span within turns {lo} to {hi}"
    return None


def check_summary(out: SessionSummary, first: int, last: int) -> list[str]:
    problems = [f"sentences[{i}]: {p}" for i, s in enumerate(out.sentences) if (p := span(s.first_turn, s.last_turn, 1, last))]
    problems += [f"sentences[{i}]: write no [cite:N] markers or [[links]]" for i, s in enumerate(out.sentences) if "[cite:" in s.text or "[[" in s.text]
    if not out.title.strip():
        problems.append("title is empty")
    return problems


def check_facts(out: FactBatch, first: int, last: int) -> list[str]:
    problems = [f"facts[{i}]: {p}" for i, f in enumerate(out.facts) if (p := span(f.first_turn, f.last_turn, first, last))]
    problems += [f"facts[{i}]: subject is empty" for i, f in enumerate(out.facts) if not f.subject.strip()]
    return problems


def check_page(out: PageDraft, req: WritePageRequest) -> list[str]:
    given = {n for f in [*req.current, *req.history, *req.mentioned] for n in f.cites}
    slugs = {s for s, _ in req.related} | set(req.names.values()) | {req.slug}
    problems = []
    unknown = sorted({int(n) for n in _CITE_RE.findall(out.body)} - given)
    if unknown:
        problems.append(f"body cites {', '.join(f'[cite:{n}]' for n in unknown)}, which no fact has; use only {sorted(given)}")
    bad_links = sorted(set(_LINK_RE.findall(out.body)) - slugs)
    if bad_links:
        problems.append(f"body links to unknown pages {bad_links}; link only to {sorted(slugs - {req.slug})}")
    if not out.body.lstrip().startswith(f"# {req.title}"):
        problems.append(f"body must start with the heading '# {req.title}'")
    if "\n" in out.summary.strip():
        problems.append("summary must be one line")
    return problems


def check_verdicts(out, count: int) -> list[str]:
    seen = [v.n for v in out.verdicts]
    missing = sorted(set(range(1, count + 1)) - set(seen))
    extra = sorted({n for n in seen if not 1 <= n <= count} | {n for n in seen if seen.count(n) > 1})
    problems = []
    if missing:
        problems.append(f"no verdict for claim(s) {missing}; give exactly one per claim 1..{count}")
    if extra:
        problems.append(f"claim number(s) {extra} are unknown or judged twice")
    return problems


def check_answer(out: AnswerDraft) -> list[str]:
    if not out.answer.strip():
        return ["answer is empty; answer `not mentioned` when the packet does not say"]
    return []


def no_json(stop_reason: str | None) -> str:
    if stop_reason in ("max_tokens", "length"):
        return "the answer was cut off at the output token limit; answer more briefly"
    return "the answer holds no JSON object of the requested shape"
