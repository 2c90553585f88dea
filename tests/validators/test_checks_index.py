"""I checks: knowledge/index.md against the pages, sessions/index.md against the summaries."""

from __future__ import annotations

import pytest
from validator_brain import KNOWLEDGE_INDEX, NADIA, SESSIONS_INDEX, SUMMARY, brain_with

P = "knowledge/people/nadia-rahman.md"
S = "sessions/summaries/2026-05-03-kyoto.md"
K = "knowledge/index.md"
X = "sessions/index.md"
REGEN = "run `dream run` to regenerate the index"
CONCEPT = NADIA.replace("type: person", "type: concept").replace("Nadia Rahman", "Universal design").replace("aliases: [Nadia]\n", "")

CASES = [
    ("missing", {K: None, X: None}, [
        f"{K}:1: I001 {K} is missing but 2 pages exist; {REGEN}",
        f"{X}:1: I001 {X} is missing but 1 session summary exists; {REGEN}",
    ]),
    ("not-listed", {"knowledge/concepts/universal-design.md": CONCEPT, "sessions/summaries/2026-05-04-other.md": "unreadable\n"}, [
        f"{K}:1: I002 knowledge/concepts/universal-design.md is not listed; {REGEN}",
    ]),  # the unreadable summary has no line to list: its F001 says why
    ("listed-but-gone", {
        K: KNOWLEDGE_INDEX + "- [[gone|Gone]]: was here.\n",
        X: SESSIONS_INDEX + "- 2026-01-01 [[old-session|Old]] (3 turns)\n",
    }, [
        f"{K}:8: I003 [[gone]] is listed but no such page exists; {REGEN}",
        f"{X}:4: I003 [[old-session]] is listed but no such session summary exists; {REGEN}",
    ]),
    ("stale-and-twice", {
        P: NADIA.replace("summary: Accessibility researcher.", "summary: Researcher in Tokyo."),
        S: SUMMARY.replace("turns: 2", "turns: 3"),
        K: KNOWLEDGE_INDEX + "- [[japan-sprint]]\n",
    }, [
        f"{K}:4: I004 line for [[nadia-rahman]] is out of date: expected '- [[nadia-rahman|Nadia Rahman]]: Researcher in Tokyo.'; {REGEN}",
        f"{K}:8: I004 [[japan-sprint]] is listed more than once; {REGEN}",
        f"{X}:3: I004 line for [[2026-05-03-kyoto]] is out of date: expected "
        f"'- 2026-05-03 [[2026-05-03-kyoto|Kyoto planning]] (3 turns)'; {REGEN}",
    ]),
    ("no-pages-no-index-needed", {K: None, X: None, P: None, "knowledge/projects/japan-sprint.md": None, S: None}, []),
]


@pytest.mark.parametrize("changes, expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_i_checks(lint, changes, expected):
    assert lint(brain_with(changes), select="I") == expected
