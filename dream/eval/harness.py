"""run_eval: compile each conversation into a temporary Brain, build packets per question, score them.

Three systems at each budget, in the same run: `brain` (the full packet), `no-wiki` (the same
Brain with knowledge/ left out: index and pages lanes empty, search never sees pages) and `bm25`
(raw turns only, `dream.eval.baseline`). Nothing in the product knows it is being measured: the
packets come from `brain.context` exactly as `brain context` builds them. With an answer backend,
every packet of a question with a gold answer is also answered and judged (`dream.eval.answering`).
"""

from __future__ import annotations

from dataclasses import dataclass

import json
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from pydantic import ConfigDict, Field

from brain.model import Model, Record, empty_list
from brain.tokens import estimate_tokens
from dream.backends.base import RunContext, Usage
from dream.eval.answering import Answered, Answerer, baseline_text
from dream.eval.baseline import TurnBM25
from dream.eval.datasets import Dataset, EvalCase, load_dataset
from dream.eval.metrics import answer_in, cited_gold, shown_gold

SYSTEMS = ("brain", "no-wiki", "bm25")
BUDGETS = (500, 1000, 2000)
ANSWER_LOG = "answers"  # folder of the answer backend's calls.jsonl, next to the Brains
Progress = Callable[[int, str], None]  # (steps done since the last call, what is running)


class Score(Record):
    system: str
    budget: int
    category: str
    questions: int
    with_gold: int
    recall: float | None  # mean share of gold turns shown (metrics.shown_gold), over questions that have gold turns
    all_evidence: float | None  # share of those questions whose gold turns were all shown
    cited: float | None = None  # mean share of gold turns by the older citation rule (comparison only)
    answerable: int
    answer_in: float | None  # share of questions with an answer whose answer string is in the packet
    tokens: float  # mean tokens used
    answered: int = 0  # questions answered and judged (none when not answering, or not at this budget)
    accuracy: float | None = None  # share of those the judge found correct
    f1: float | None = None  # mean token F1 of their answers against the gold answers


class LaneYield(Record):
    """What one lane of the full packet spent and showed, over all questions at one budget."""

    budget: int
    lane: str
    tokens: int  # admitted items' tokens
    shown: int  # gold turns its items show (a turn two lanes show counts in both)

    @property
    def per_1000(self) -> float:
        return 1000 * self.shown / self.tokens if self.tokens else 0.0


class Miss(Record):
    """A gold turn the full packet at the middle budget did not carry (for improving Dream)."""

    case: str
    category: str
    question: str
    answer: str | None
    gold: str
    text: str


class EvalReport(Model):
    model_config = ConfigDict(extra="forbid")
    dataset: str
    file: str
    backend: str
    search_mode: str = ""
    budgets: list[int]
    systems: list[str] = Field(default_factory=lambda: list(SYSTEMS))
    headline: list[str]
    brains: int = 0
    reused: int = 0  # Brains measured as found in the workdir, not compiled by this run
    sessions: int = 0
    questions: int = 0
    compile_seconds: float = 0.0
    packet_seconds: float = 0.0
    answer_backend: str | None = None  # answers and judges (`--answer`); None: nothing answered
    answer_model: str | None = None
    answer_budgets: list[int] = Field(default_factory=empty_list)
    answer_seconds: float = 0.0
    answer_errors: int = 0  # answers left out of accuracy and F1 because a call failed
    answer_usage: Usage | None = None  # the answer backend's tokens and calls (offline: none)
    scores: list[Score] = Field(default_factory=empty_list)
    lanes: list[LaneYield] = Field(default_factory=empty_list)  # the brain packet's lanes, per budget
    misses: list[Miss] = Field(default_factory=empty_list)
    answers: list[Answered] = Field(default_factory=empty_list)

    def score(self, system: str, budget: int, category: str) -> Score | None:
        return next((s for s in self.scores if (s.system, s.budget, s.category) == (system, budget, category)), None)


@dataclass(frozen=True)
class EvalOptions:
    """How `run_eval` measures. `workdir` keeps the compiled Brains (one folder per conversation);
    with `reuse`, a Brain already compiled there is measured as it is instead of being compiled
    again. `backend_options` (a dream.settings.LLMOptions: model, base_url) configure the compiling
    backend. With `answer` (a backend name; `answer_options` a dream.settings.LLMOptions), every
    system's packet at `answer_budgets` (default: all budgets) is answered and judged for each
    question that has a gold answer."""

    budgets: tuple[int, ...] = BUDGETS
    backend: str = "offline"
    backend_options: object = None
    embedder: str = "auto"
    workdir: Path | None = None
    reuse: bool = False
    limit: int | None = None
    answer: str | None = None
    answer_options: object = None
    answer_budgets: tuple[int, ...] | None = None


def run_eval(fmt: str, path: Path, options: EvalOptions | None = None, progress: Progress | None = None) -> EvalReport:
    """Evaluate packets on a LoCoMo or LongMemEval file."""
    from dream.backends import get_backend

    o = options or EvalOptions()
    data = load_dataset(fmt, path)
    cases = data.cases[: o.limit] if o.limit else data.cases
    wanted = list(dict.fromkeys(c.brain for c in cases))
    report = EvalReport(dataset=fmt, file=str(path), backend=o.backend, budgets=list(o.budgets), headline=list(data.headline))
    answerer = None
    if o.answer:
        report.answer_budgets = list(o.answer_budgets or o.budgets)
        if set(report.answer_budgets) - set(o.budgets):
            raise ValueError(f"answer budgets {report.answer_budgets} are not all among the budgets measured {list(o.budgets)}")
        answerer = Answerer(get_backend(o.answer, o.answer_options))  # before compiling: a missing key fails fast
        report.answer_backend, report.answer_model = o.answer, answerer.backend.model
    results: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="brain-eval-") as tmp:
        base = Path(o.workdir) if o.workdir else Path(tmp)
        if answerer is not None:  # the answer calls' log: <workdir>/answers/calls.jsonl
            answerer.backend.open_run(RunContext(run_dir=base / ANSWER_LOG))
        for key in wanted:
            root = base / key
            t0 = time.perf_counter()
            if o.reuse and (root / "knowledge").is_dir():
                report.reused += 1
            else:
                _compile(data, key, root, o.backend, max(c.now for c in cases if c.brain == key), o.backend_options)
            report.sessions += len(list((root / "sessions" / "raw").glob("*.jsonl")))
            report.compile_seconds += time.perf_counter() - t0
            if progress:
                progress(1, f"compiled {key}")
            t0 = time.perf_counter()
            results += _score_brain(root, [c for c in cases if c.brain == key], o, report, progress, answerer)
            report.packet_seconds += time.perf_counter() - t0
    report.brains, report.questions = len(wanted), len(cases)
    report.scores = _aggregate(results, o.budgets, data.headline)
    if answerer is not None:
        report.packet_seconds -= answerer.seconds
        report.answer_seconds, report.answer_errors = round(answerer.seconds, 2), answerer.errors
        report.answer_usage = answerer.backend.usage()
    report.compile_seconds = round(report.compile_seconds, 2)
    report.packet_seconds = round(report.packet_seconds, 2)
    return report


def steps(fmt: str, path: Path, limit: int | None = None, answer_budgets: int = 0) -> int:
    """How many progress steps `run_eval` reports: one per Brain compiled, one per question, and
    one per packet answered (a question with a gold answer × systems × `answer_budgets` budgets)."""
    data = load_dataset(fmt, path)
    cases = data.cases[:limit] if limit else data.cases
    answered = sum(1 for c in cases if c.answer) * len(SYSTEMS) * answer_budgets
    return len({c.brain for c in cases}) + len(cases) + answered


def _compile(data: Dataset, key: str, root: Path, backend: str, now, options=None) -> None:
    from brain.scaffold import init_brain
    from dream.backends import get_backend
    from dream.importers import import_path
    from dream.run import run
    from dream.settings import RunFlags, load_settings

    init_brain(root)
    if data.owner:
        (root / "brain.toml").write_text(f"owner = {json.dumps(data.owner)}\n", encoding="utf-8")
    source = root.parent / f"{key}.input.json"
    source.write_text(json.dumps(data.brains[key]), encoding="utf-8")
    import_path(data.name, source, root)
    source.unlink()
    run(load_settings(root, RunFlags(backend=backend, now=f"{now.isoformat()}T23:59:00Z")), get_backend(backend, options))


def _score_brain(root: Path, cases: list[EvalCase], options: EvalOptions, report: EvalReport,
                 progress: Progress | None, answerer: Answerer | None) -> list[dict]:
    from brain.context import ContextBuilder, ContextOptions, render_packet
    from brain.search import Searcher

    budgets = options.budgets
    searcher = Searcher.open(root, embedder=options.embedder)
    builder = ContextBuilder(root, searcher)
    bm25 = TurnBM25(root)
    turn_text = {c.ref: c.text for c in bm25.turns}
    middle = sorted(budgets)[len(budgets) // 2]
    lanes: dict[tuple[int, str], list[int]] = {}  # (budget, lane) → [tokens, shown]
    out = []
    try:
        for case in cases:
            row = {"case": case, "runs": {}}
            for budget in budgets:
                for system in SYSTEMS:
                    if system == "bm25":
                        items, used = bm25.packet(case.question, budget), None
                        text = baseline_text(items, budget)
                    else:
                        exclude = ("knowledge/",) if system == "no-wiki" else ()
                        packet = builder.build(case.question, ContextOptions(budget=budget, now=case.now, exclude=exclude))
                        items, used, text = packet.admitted, packet.used, render_packet(packet)
                        report.search_mode = report.search_mode or packet.mode
                    each = [shown_gold([i], case.gold, turn_text) for i in items]  # one item shows a turn, or none does
                    found = set().union(*each)
                    if system == "brain":
                        for i, shows in zip(items, each):
                            spent = lanes.setdefault((budget, i.lane), [0, 0])
                            spent[0], spent[1] = spent[0] + i.tokens, spent[1] + len(shows)
                    cited = cited_gold(items, case.gold, turn_text)
                    tokens = used if used is not None else sum(estimate_tokens(i.text) for i in items)
                    answered = None
                    if answerer is not None and case.answer and budget in report.answer_budgets:
                        answered = answerer(case, system, budget, text)
                        report.answers.append(answered)
                        if progress:
                            progress(1, f"answered {case.id} ({system}, {budget})")
                    row["runs"][(system, budget)] = (len(found), answer_in(items, case.answer), tokens, answered, len(cited))
                    if system == "brain" and budget == middle:
                        report.misses += [
                            Miss(case=case.id, category=case.category, question=case.question, answer=case.answer,
                                 gold=ref, text=turn_text.get(ref, "(not in the Brain)"))
                            for ref in case.gold if ref not in found
                        ]
            out.append(row)
            if progress:
                progress(1, case.id)
    finally:
        bm25.close()
        searcher.close()
    for y in report.lanes:  # the Brains measured before this one
        spent = lanes.setdefault((y.budget, y.lane), [0, 0])
        spent[0], spent[1] = spent[0] + y.tokens, spent[1] + y.shown
    report.lanes = [LaneYield(budget=b, lane=lane, tokens=t, shown=n) for (b, lane), (t, n) in sorted(lanes.items())]
    return out


def _aggregate(results: list[dict], budgets: tuple[int, ...], headline: tuple[str, ...]) -> list[Score]:
    groups: dict[str, list[dict]] = {}
    for row in results:
        groups.setdefault(row["case"].category, []).append(row)
    ordered = sorted(groups.items())
    ordered.append(("headline", [r for r in results if r["case"].category in headline]))
    ordered.append(("all", results))
    return [_score(system, budget, category, rows) for category, rows in ordered for budget in budgets for system in SYSTEMS]


def _score(system: str, budget: int, category: str, rows: list[dict]) -> Score:
    recalls, alls, answers, tokens, judged, cites = [], [], [], [], [], []
    for row in rows:
        found, ans, used, answered, cited = row["runs"][(system, budget)]
        gold = len(row["case"].gold)
        if gold:
            recalls.append(found / gold)
            alls.append(found == gold)
            cites.append(cited / gold)
        if ans is not None:
            answers.append(ans)
        tokens.append(used)
        if answered is not None and answered.correct is not None:
            judged.append(answered)
    mean = lambda xs: round(sum(xs) / len(xs), 4) if xs else None  # noqa: E731
    return Score(system=system, budget=budget, category=category, questions=len(rows), with_gold=len(recalls),
                 recall=mean(recalls), all_evidence=mean(alls), cited=mean(cites), answerable=len(answers), answer_in=mean(answers),
                 tokens=round(sum(tokens) / len(tokens), 1) if tokens else 0.0, answered=len(judged),
                 accuracy=mean([a.correct for a in judged]), f1=mean([a.f1 for a in judged]))


def render_markdown(report: EvalReport) -> str:
    """One table per budget: per category, evidence recall / all-evidence / answer-in-packet per system,
    and when answering, judged accuracy and token F1 per system."""
    pct = lambda v: "–" if v is None else f"{100 * v:.1f}"  # noqa: E731
    head_label = "categories " + ", ".join(c.split()[0] for c in report.headline) if report.dataset == "locomo" else "headline"
    lines = [
        f"# dream eval {report.dataset}: {Path(report.file).name}",
        "",
        f"{report.questions} questions, {report.brains} Brains, {report.sessions} sessions; backend `{report.backend}`, "
        f"search `{report.search_mode}`; compile {report.compile_seconds:.1f} s, packets {report.packet_seconds:.1f} s.",
        "Shown = mean share of gold turns an item shows (its text, or a citing item with 60 % of its content words); "
        "all = share of questions with every gold turn shown; answer = answer string in the packet; cited = the older "
        "citation rule, for comparison only. Systems: brain / no-wiki (knowledge/ left out) / bm25 (whole raw turns, stemmed).",
    ]
    answering = report.answer_backend is not None
    if answering:
        lines.append(_answer_line(report))
    categories = list(dict.fromkeys(s.category for s in report.scores))
    if {s.category for s in report.scores} - {"headline", "all"} == set(report.headline):
        categories.remove("headline")  # the headline is every category: its row would repeat "all"
    head = "| category | n | shown brain | no-wiki | bm25 | all brain | no-wiki | bm25 | answer brain | no-wiki | bm25 | cited brain |"
    rule = "|---|---:|" + "---:|" * 10
    if answering:
        head, rule = head + " acc brain | no-wiki | bm25 | F1 brain | no-wiki | bm25 |", rule + "---:|" * 6
    for budget in report.budgets:
        lines += ["", f"## Budget {budget} tokens", "", head, rule]
        for category in categories:
            row = [report.score(s, budget, category) for s in SYSTEMS]
            label = head_label if category == "headline" else category
            cells = [pct(r.recall) for r in row] + [pct(r.all_evidence) for r in row] + [pct(r.answer_in) for r in row]
            cells.append(pct(row[0].cited))
            if answering:
                cells += [pct(r.accuracy) for r in row] + [pct(r.f1) for r in row]
            lines.append(f"| {'**' + label + '**' if category in ('headline', 'all') else label} | {row[0].questions} | " + " | ".join(cells) + " |")
        spent = [y for y in report.lanes if y.budget == budget]
        if spent:
            lines += ["", "Gold turns shown per 1,000 tokens of each lane (brain, all questions): "
                      + " · ".join(f"{y.lane} {y.per_1000:.1f} ({y.tokens:,} tokens)" for y in spent)]
    return "\n".join(lines) + "\n"


def _answer_line(report: EvalReport) -> str:
    model = f" ({report.answer_model})" if report.answer_model else ""
    judge = "a lexical rule, a rough proxy of a model judge" if report.answer_backend == "offline" else "the same model"
    usage = report.answer_usage or Usage()
    spent = f"{usage.calls} model calls, {usage.input_tokens} tokens in, {usage.output_tokens} out" if usage.calls else "no model calls"
    if usage.cost_usd:
        spent += f", ${usage.cost_usd:.4f}"
    failed = f"; **{report.answer_errors} failed** (a call failed; left out of acc and F1)" if report.answer_errors else ""
    return (f"Acc = share of answers judged correct, F1 = mean token F1 of the answer against the gold answer; answered by "
            f"`{report.answer_backend}`{model} at budgets {', '.join(map(str, report.answer_budgets))}, judged by {judge}; "
            f"{len(report.answers)} answers, {spent}; {report.answer_seconds:.1f} s{failed}.")
