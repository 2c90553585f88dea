"""A clean Brain has no findings; the hand-written fixture Brain has none either."""

from __future__ import annotations

from pathlib import Path

from validator_brain import BRAIN, KNOWLEDGE_INDEX, SESSIONS_INDEX

from brain.render import render_knowledge_index, render_sessions_index
from brain.tree import DirTree
from brain.view import BrainView
from validators import run_checks

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def test_clean_brain_has_no_findings(lint):
    assert lint(BRAIN) == []


def test_clean_brain_indexes_are_what_render_writes(view_of):
    view = view_of(BRAIN)
    assert render_knowledge_index(view.pages) == KNOWLEDGE_INDEX
    assert render_sessions_index(view.summaries) == SESSIONS_INDEX


def test_empty_brain_has_no_findings(lint):
    assert lint({}) == []


def test_nadia_fixture_is_clean():
    findings = run_checks(BrainView(DirTree(FIXTURES / "nadia")))
    assert [f.lint_line() for f in findings] == []
