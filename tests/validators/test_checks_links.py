"""L checks: unresolved, clashing and ambiguous names, links in code, headings, topics."""

from __future__ import annotations

import pytest
from validator_brain import NADIA, NOTE, SPRINT, SUMMARY, brain_with

P = "knowledge/people/nadia-rahman.md"
J = "knowledge/projects/japan-sprint.md"
C = "knowledge/concepts/japan-sprint.md"
S = "sessions/summaries/2026-05-03-kyoto.md"
N = "notes/nadia-rahman/prefers-pdf.md"


def _says(text: str) -> str:
    return NADIA.replace("[cite:1].", f"[cite:1], {text}.")


CASES = [
    ("unresolved", {P: _says("with [[Japan Sprint]] and [[nowhere]] and [[]] and [[projects/japan-sprint.md]]")}, [
        f"{P}:13: L001 [[Japan Sprint]] does not resolve to a page, alias, note or session; did you mean [[japan-sprint]]?",
        f"{P}:13: L001 [[]] links nothing; write [[slug]] or remove it",
        f"{P}:13: L001 [[nowhere]] does not resolve to a page, alias, note or session",
        f"{P}:13: L001 [[projects/japan-sprint.md]] does not resolve to a page, alias, note or session; did you mean [[japan-sprint]]?",
    ]),
    # The link resolves; the target's own F001 says why it cannot be read, and the linking page is fine.
    ("unreadable-target", {P: _says("see [[2026-05-04-other]]"), "sessions/summaries/2026-05-04-other.md": "no front matter\n"}, []),
    ("name-clash-and-ambiguous-link", {C: SPRINT.replace("type: project", "type: concept").replace("aliases: [JUDS]", "aliases: [Nadia, juds]")}, [
        f"{C}:1: L002 slug 'japan-sprint' is also used by {J}; slugs must be unique across knowledge/, rename one",
        f"{C}:4: L002 alias 'Nadia' also names {P}; [[Nadia]] is ambiguous, remove or change the alias",
        f"{C}:4: L002 alias 'juds' also names {J}; [[juds]] is ambiguous, remove or change the alias",
        f"{P}:4: L002 alias 'Nadia' also names {C}; [[Nadia]] is ambiguous, remove or change the alias",
        f"{P}:13: L003 [[japan-sprint]] is ambiguous: it names {C}, {J}; link the slug of the one you mean",
        f"{J}:1: L002 slug 'japan-sprint' is also used by {C}; slugs must be unique across knowledge/, rename one",
        f"{J}:4: L002 alias 'JUDS' also names {C}; [[JUDS]] is ambiguous, remove or change the alias",
        f"{S}:14: L003 [[japan-sprint]] is ambiguous: it names {C}, {J}; link the slug of the one you mean",
    ]),
    ("ambiguous-note-stem", {P: _says("see [[prefers-pdf]]"), "notes/japan-sprint/prefers-pdf.md": NOTE.replace("topic: nadia-rahman", "topic: japan-sprint")}, [
        f"{P}:13: L003 [[prefers-pdf]] is ambiguous: it names notes/japan-sprint/prefers-pdf.md, {N}; link the slug of the one you mean",
    ]),
    ("link-in-code", {P: NADIA + "\nType `[[japan-sprint]]` to link.\n\n    [[indented]]\n"}, [
        f"{P}:15: L004 [[japan-sprint]] is inside code and will not link; move it out of the code span or fence",
        f"{P}:17: L004 [[indented]] is inside code and will not link; move it out of the code span or fence",
    ]),
    ("missing-heading", {P: _says("see [[japan-sprint#History]], [[japan-sprint#history]], [[japan-sprint#Future]] and [[#Missing]]")}, [
        f"{P}:13: L005 [[#Missing]]: {P} has no heading 'Missing' (headings: 'Nadia Rahman')",
        f"{P}:13: L005 [[japan-sprint#Future]]: {J} has no heading 'Future' (headings: 'Japan Sprint', 'History')",
    ]),
    ("unknown-topics", {
        S: SUMMARY.replace("topics: [japan-sprint]", "topics: [japan-sprint, osaka]"),
        "notes/nadia/x.md": NOTE.replace("topic: nadia-rahman", "topic: nadia"),
    }, [
        "notes/nadia/x.md:5: L006 topic 'nadia' names no page under knowledge/; use a page slug",
        f"{S}:8: L006 topic 'osaka' names no page under knowledge/; use a page slug",
    ]),
]


@pytest.mark.parametrize("changes, expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_l_checks(lint, changes, expected):
    assert lint(brain_with(changes), select="L") == expected


def test_every_kind_of_name_resolves(lint):
    """Slug, alias in any case, session id (its summary), note stem, own heading."""
    text = _says("see [[JUDS]], [[juds]], [[Nadia|her]], [[2026-05-03-kyoto]], [[prefers-pdf]], [[#Nadia Rahman]]")
    assert lint(brain_with({P: text}), select="L") == []


def test_alias_equal_to_own_slug_is_no_clash(lint):
    assert lint(brain_with({P: NADIA.replace("aliases: [Nadia]", "aliases: [Nadia, nadia-rahman, NADIA]")}), select="L") == []
