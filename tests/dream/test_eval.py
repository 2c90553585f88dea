"""dream.eval: metrics (table tests), datasets' gold mapping, and `dream eval` end to end on the small samples."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from click.testing import CliRunner

from dream.cli import main
from dream.eval.baseline import TurnBM25
from dream.eval.datasets import load_dataset
from dream.eval.harness import SYSTEMS, EvalOptions, render_markdown, run_eval
from dream.eval.metrics import answer_in, cited_gold, shown_gold

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "importers"
LOCOMO = FIXTURES / "locomo-sample.json"
LME = FIXTURES / "longmemeval-sample.json"


@dataclass
class It:
    text: str
    cites: list[str] = field(default_factory=list)


TURNS = {"session:s#t1": "We adopted a puppy!  Her name is Pepper, and she sleeps on the porch all afternoon.", "session:s#t2": "Nice."}


@pytest.mark.parametrize(
    ("items", "shown"),
    [
        ([It("[2024-01-10 · s#t1] Ana: We adopted a puppy! Her name is\nPepper, and she sleeps on the porch all afternoon.")],
         {"session:s#t1"}),  # the text, spaces and punctuation normalised
        ([It("Ana: … we adopted a puppy! Her name is Pepper, and she sleeps on the porch …", ["session:s#t1"])],
         {"session:s#t1"}),  # cites it and holds its content words
        ([It("Ana has a dog called Pepper", ["session:s#t1"])], set()),  # cites it, shows little of it
        ([It("Ana: Thanks! …", ["session:s#t1", "session:s#t2"])], set()),  # a fragment: "Nice." has no 4 content words
        ([It("Ana's page", ["session:s#t1", "session:s#t2", "session:s#t3", "session:s#t4"])], set()),
        ([It("Nicely done.")], set()),  # "nice" is there, but inside a word
        ([It("x", ["session:s#t1"]), It("Bo: Nice.")], {"session:s#t2"}),
    ],
)
def test_a_gold_turn_is_shown_when_an_item_holds_its_text_not_when_it_only_cites_it(items, shown):
    assert shown_gold(items, ["session:s#t1", "session:s#t2"], TURNS) == shown


@pytest.mark.parametrize(
    ("items", "cited"),
    [
        ([It("Ana has a dog called Pepper (s#t1)", ["session:s#t1"])], {"session:s#t1"}),  # a narrow cite
        ([It("Ana's page", ["session:s#t1", "session:s#t2", "session:s#t3", "session:s#t4"])], set()),  # cites 4 turns
        ([It("x", ["session:s#t1", "session:s#t2"]), It("Nice.")], {"session:s#t1", "session:s#t2"}),
    ],
)
def test_the_older_citation_rule_counts_a_narrow_citation(items, cited):
    assert cited_gold(items, ["session:s#t1", "session:s#t2"], TURNS) == cited


@pytest.mark.parametrize(
    ("answer", "expected"),
    [("Pepper", True), ("pepper.", True), ("Pep", False), ("7 May, 2023", True), ("8 May 2023", True),
     ("May 8, 2023", True), ("9 May 2023", False), (None, None), ("", None)],
)
def test_answer_in(answer, expected):
    assert answer_in([It("The dog is Pepper; adopted 7 May 2023."), It("[2023-05-08 · s#t1] Ana: hi")], answer) is expected


def test_datasets_map_gold_evidence_to_the_importers_ids():
    locomo = load_dataset("locomo", LOCOMO)
    multi = next(c for c in locomo.cases if c.category == "1 multi-hop")
    assert (multi.brain, multi.gold) == ("conv-90", ["session:conv-90-s2#t2", "session:conv-90-s2#t4"])  # "D2:2; D2:4"
    assert locomo.headline == ("1 multi-hop", "2 temporal", "3 open-domain", "4 single-hop")
    lme = load_dataset("longmemeval", LME)
    assert [(c.id, c.brain, c.category) for c in lme.cases][0][:2] == ("q001", "q001")
    assert all(g.startswith(f"session:{c.id}-") for c in lme.cases for g in c.gold)
    assert (locomo.owner, lme.owner) == (None, "User")  # one user's chats with an assistant: the user owns the Brain


@pytest.fixture(scope="module")
def locomo_report(tmp_path_factory):
    work = tmp_path_factory.mktemp("eval")
    return run_eval("locomo", LOCOMO, EvalOptions(budgets=(200, 400), embedder="none", workdir=work)), work


def test_eval_reports_every_system_budget_and_category(locomo_report):
    report, _ = locomo_report
    assert (report.brains, report.sessions, report.questions, report.search_mode) == (1, 2, 4, "lexical")
    categories = {s.category for s in report.scores}
    assert {"headline", "all", "4 single-hop"} <= categories
    for category in categories:
        for budget in (200, 400):
            assert {report.score(s, budget, category).system for s in SYSTEMS} == set(SYSTEMS)
    for s in report.scores:
        assert s.recall is None or 0.0 <= s.recall <= 1.0
        assert s.tokens <= s.budget
    single = report.score("brain", 400, "4 single-hop")
    assert (single.recall, single.answer_in) == (1.0, 1.0)  # "What is the name of Ana's dog?" → Pepper


def test_eval_markdown_has_one_table_per_budget(locomo_report):
    report, _ = locomo_report
    text = render_markdown(report)
    assert text.count("| category | n | shown brain | no-wiki | bm25 |") == 2
    assert "| **categories 1, 2, 3, 4** |" in text and "## Budget 400 tokens" in text
    assert text.count("Gold turns shown per 1,000 tokens of each lane (brain, all questions): ") == 2


def test_each_lane_says_what_its_tokens_showed(locomo_report):
    report, _ = locomo_report
    lanes = {(y.budget, y.lane): y for y in report.lanes}
    assert {lane for _, lane in lanes} >= {"standing", "turns"}
    turns = lanes[(400, "turns")]
    assert turns.tokens > 0 and turns.shown > 0 and turns.per_1000 == 1000 * turns.shown / turns.tokens
    assert lanes[(400, "standing")].shown == 0  # the guide cites no turn


def test_baseline_prepends_the_session_date_and_fills_the_budget(locomo_report):
    _, work = locomo_report
    bm25 = TurnBM25(work / "conv-90")
    items = bm25.packet("What is the name of Ana's dog?", 60)
    assert items and items[0].text.startswith("[2023-05-08 · conv-90-s1#t")
    assert sum(-(-len(i.text) // 3.5) for i in items) <= 60


def test_eval_reuses_compiled_brains(locomo_report):
    _, work = locomo_report
    again = run_eval("locomo", LOCOMO, EvalOptions(budgets=(200,), embedder="none", workdir=work, reuse=True))
    assert again.reused == 1 and again.questions == 4


def test_brain_eval_cli_longmemeval(tmp_path):
    result = CliRunner().invoke(main, ["eval", "longmemeval", str(LME), "--budgets", "300", "--embedder", "none",
                                       "--json", "--save", str(tmp_path / "lme")], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["dataset"] == "longmemeval" and data["questions"] == 2 and data["budgets"] == [300]
    assert "eval longmemeval" in result.stderr  # the progress bar
    table = (tmp_path / "lme.md").read_text()
    assert table.startswith("# dream eval longmemeval: longmemeval-sample.json")
    assert "| **all** |" in table and "headline" not in table
    assert json.loads((tmp_path / "lme.json").read_text())["questions"] == 2
