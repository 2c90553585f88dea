"""C checks: cites against sources, and where each source points."""

from __future__ import annotations

import pytest
from validator_brain import NADIA, brain_with

from brain.tree import DirTree
from brain.view import BrainView
from validators import run_checks

P = "knowledge/people/nadia-rahman.md"
FIX = "fix the target or remove the source"
EXPECTED_FORMS = "expected session:<id>#t<n>[-t<m>], source:<connector>/<id> or note:<path>.md"


def _sources(block: str, cites: str) -> str:
    return NADIA.replace("  1: session:2026-05-03-kyoto#t1-t2", block).replace("[cite:1].", cites + ".")


CASES = [
    ("cite-without-source", {P: NADIA.replace("[cite:1].", "[cite:1] and more [cite:7].")}, [
        f"{P}:13: C001 [cite:7] has no source",
    ]),
    ("no-sources-at-all", {P: NADIA.replace("sources:\n  1: session:2026-05-03-kyoto#t1-t2\n", "")}, [
        f"{P}:11: C001 [cite:1] has no source",
    ]),
    ("source-never-cited", {P: _sources("  1: session:2026-05-03-kyoto#t1-t2\n  2: session:2026-05-03-kyoto#t2", "[cite:1]")}, [
        f"{P}:10: C002 source 2 is never cited; cite it as [cite:2] or remove it",
    ]),
    ("malformed", {P: _sources("  1: sess:2026-05-03-kyoto#t1\n  2: session:2026-05-03-kyoto#t3-t2", "[cite:1][cite:2]")}, [
        f"{P}:9: C003 source 1: malformed citation target 'sess:2026-05-03-kyoto#t1': {EXPECTED_FORMS}",
        f"{P}:10: C003 source 2: turn range t3-t2 must start at 1 or later and not run backwards",
    ]),
    ("unresolved", {P: _sources(
        "  1: session:2026-05-03-kyoto#t2-t5\n  2: session:nope#t1\n  3: source:calendar/evt-99\n"
        "  4: note:nadia-rahman/missing.md\n  5: note:nadia-rahman/prefers-pdf.md\n  6: source:calendar/evt-88",
        "[cite:1][cite:2][cite:3][cite:4][cite:5][cite:6]",
    )}, [
        f"{P}:9: C004 source 1: session:2026-05-03-kyoto#t2-t5 cites turn 3, but session '2026-05-03-kyoto' has turns 1-2; {FIX}",
        f"{P}:10: C004 source 2: session 'nope' does not exist under sessions/raw/; {FIX}",
        f"{P}:11: C004 source 3: source:calendar/evt-99 names no record under sources/calendar/; {FIX}",
        f"{P}:12: C004 source 4: note:nadia-rahman/missing.md: no such note under notes/; {FIX}",
    ]),
    ("unreadable-session", {"sessions/raw/2026-05-03-kyoto.jsonl": '{"type":"turn","n":1,"role":"user","text":"x"}\n'}, [
        f"{path}:{line}: C004 source 1: session '2026-05-03-kyoto' cannot be read: sessions/raw/2026-05-03-kyoto.jsonl "
        f"has no usable header line; {FIX}"
        for path, line in [
            (P, 9),
            ("knowledge/projects/japan-sprint.md", 9),
            ("notes/nadia-rahman/prefers-pdf.md", 9),
            ("sessions/summaries/2026-05-03-kyoto.md", 10),
        ]
    ]),
    ("cite-in-code", {P: NADIA + "\nWrite `[cite:1]` like this.\n\n```\n[cite:2]\n```\n"}, [
        f"{P}:15: C005 [cite:1] is inside code and cites nothing; move it out of the code span or fence",
        f"{P}:18: C005 [cite:2] is inside code and cites nothing; move it out of the code span or fence",
    ]),
    ("flow-style-sources", {P: NADIA.replace(
        "sources:\n  1: session:2026-05-03-kyoto#t1-t2", "sources: {1: 'session:2026-05-03-kyoto#t1-t2', 2: 'bad'}"
    )}, [
        f"{P}:8: C002 source 2 is never cited; cite it as [cite:2] or remove it",
        f"{P}:8: C003 source 2: malformed citation target 'bad': {EXPECTED_FORMS}",
    ]),
    ("quoted-keys", {P: _sources("  '1': session:2026-05-03-kyoto#t1-t2\n  \"2\": bad", "[cite:1]")}, [
        f"{P}:10: C002 source 2 is never cited; cite it as [cite:2] or remove it",
        f"{P}:10: C003 source 2: malformed citation target 'bad': {EXPECTED_FORMS}",
    ]),
]


@pytest.mark.parametrize("changes, expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_c_checks(lint, changes, expected):
    assert lint(brain_with(changes), select="C") == expected


def test_c001_lint_line_reads_as_documented(lint):
    files = brain_with({P: NADIA.replace("[cite:1].", "[cite:7].")})
    assert f"{P}:13: C001 [cite:7] has no source" in lint(files)


class CountingTree(DirTree):
    """A DirTree that records every file it reads."""

    def __init__(self, root) -> None:
        super().__init__(root)
        self.reads: list[str] = []

    def read_bytes(self, rel: str) -> bytes:
        self.reads.append(rel)
        return super().read_bytes(rel)

    def read_if_exists(self, rel: str) -> bytes | None:
        self.reads.append(rel)
        return super().read_if_exists(rel)


def test_session_is_read_once_and_only_when_cited(make_tree):
    tree = CountingTree(make_tree(brain_with({
        "sessions/raw/uncited.jsonl": '{"type":"session","id":"uncited"}\n',
        "sessions/raw/also-uncited.jsonl": "not json\n",
    })))
    assert run_checks(BrainView(tree)) == []
    assert [r for r in tree.reads if r.startswith("sessions/raw/")] == ["sessions/raw/2026-05-03-kyoto.jsonl"]
