"""The checks run the same on dream's staged tree: staged files over the live ones, minus deletions."""

from __future__ import annotations

from validator_brain import BRAIN, NADIA

from brain.tree import DirTree, OverlayTree
from brain.view import BrainView
from validators import run_checks

P = "knowledge/people/nadia-rahman.md"


def test_staged_changes_and_deletions_are_checked(make_tree):
    live = make_tree(dict(BRAIN), name="live")
    staged = make_tree({P: NADIA.replace("[cite:1].", "[cite:1] [cite:5].")}, name="staged")
    tree = OverlayTree(DirTree(live), DirTree(staged), deleted=frozenset({"knowledge/projects/japan-sprint.md"}))
    lines = [f.lint_line() for f in run_checks(BrainView(tree))]
    assert lines == [
        "knowledge/index.md:7: I003 [[japan-sprint]] is listed but no such page exists; run `dream run` to regenerate the index",
        f"{P}:13: C001 [cite:5] has no source",
        f"{P}:13: L001 [[japan-sprint]] does not resolve to a page, alias, note or session",
        "sessions/summaries/2026-05-03-kyoto.md:8: L006 topic 'japan-sprint' names no page under knowledge/; use a page slug",
        "sessions/summaries/2026-05-03-kyoto.md:14: L001 [[japan-sprint]] does not resolve to a page, alias, note or session",
    ]


def test_a_line_a_run_adds_without_a_citation_is_an_error_and_the_owners_lines_are_not(make_tree):
    live = make_tree(dict(BRAIN), name="live")
    owner_line = "Nadia keeps her notes in a paper diary."  # the owner's, uncited: already in the live page
    live_page = live / P
    live_page.write_text(live_page.read_text(encoding="utf-8").rstrip("\n") + f"\n\n{owner_line}\n", encoding="utf-8")
    added = live_page.read_text(encoding="utf-8") + "\n- Kenji Mori secretly owns three racing boats.\n- [[kyoto|Kyoto]]\n- Sora City Laboratory\n"
    staged = make_tree({P: added}, name="staged")
    tree = OverlayTree(DirTree(live), DirTree(staged))
    live_view = BrainView(DirTree(live))
    staged_view = BrainView.staged(live_view, DirTree(staged), focus=[P])
    lines = [f.lint_line() for f in run_checks(staged_view, select=["C006"])]
    n = added.count("\n", 0, added.index("- Kenji")) + 1
    assert lines == [f"{P}:{n}: C006 a statement without [cite:N]: every claim Dream writes cites its evidence"]
    assert [f.code for f in run_checks(BrainView(tree), select=["C006"])] == []  # `brain validate`: the owner's lines
