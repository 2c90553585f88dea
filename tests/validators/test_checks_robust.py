"""No check raises on weird content: every problem is a finding, never an E000."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from validator_brain import BRAIN, NADIA, brain_with

from brain.tree import DirTree
from brain.view import BrainView
from validators import run_checks

P = "knowledge/people/nadia-rahman.md"
WEIRD: dict[str, str | bytes] = {
    P: "---\ntitle: x\ntype: person\nsources: {1: [a, b], 2: {x: y}, 3: null, 4: 4}\n---\n[cite:1] [cite:2] [cite:4] [[#]] [[|]]\n",
    "knowledge/people/a.md": "---\ntitle: !!binary aGVsbG8=\ntype: [person]\ncreated: 99999-01-01\n---\n",
    "knowledge/people/b.md": "---\n" + "[" * 200 + "\n---\n",
    "knowledge/people/c.md": "---\n? [a, b]\n: c\n---\n",
    "knowledge/people/d.md": "---\ntitle: x\ntype: person\nupdated: 2026-01-01 10:00:00\ncreated: 2026-01-02\n---\n",
    "knowledge/people/e.md": b"\xef\xbb\xbf---\ntitle: BOM\n---\n\x85\xff",
    "knowledge/people/f.md": "---\ntitle: x\ntype: person\naliases: [[nested]]\ntopics: 3\n---\n" + "> " * 50 + "[[deep]]\n",
    "knowledge/people/g.md": "---\ntitle: x\ntype: person\nsources:\n  1: session:../../etc#t1\n  2: note:../x.md\n  3: source:a/../../b\n---\n[cite:1][cite:2][cite:3]\n",
    "knowledge/people/h.md": "---\n---\n",
    "knowledge/people/i.md": "",
    "knowledge/people/j.md": "---\ntitle: x\ntype: person\nsources:\n  99999999999999999999: session:x#t99999999999999999999\n---\n",
    "notes/x/y.md": "---\ntitle: x\ntype: note\nconfidence: .nan\nobserved: [2026]\nkind: {a: 1}\ntopic: [x]\n---\n<!--",
    "sessions/summaries/s.md": "---\nid: [s]\ntype: session\nturns: -1\nstarted: 2026-99-99\ntitle: x\n---\n",
    "sessions/raw/2026-05-03-kyoto.jsonl": b'{"type":"session","id":"2026-05-03-kyoto"}\n{"type":"turn","n":"x"}\n[1]\n\xff\xfe\n{"type":"turn","n":1e400,"role":"user","text":"x"}\n',
    "knowledge/index.md": "- [[\n- [[]]\n- [[a|\n",
    "sessions/index.md": b"\x00\x01",
    "sources/x/y.ics": "BEGIN:VEVENT\nUID:\nEND:VEVENT\nBEGIN:VEVENT\n",
}


def _codes(files) -> list[str]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for rel, content in files.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8", "surrogatepass"))
        return [f.code for f in run_checks(BrainView(DirTree(root)))]


def test_weird_documents_are_findings_not_crashes():
    codes = _codes(brain_with(WEIRD))
    assert "E000" not in codes
    assert {"F001", "F002", "F003", "C003", "C004", "I003"} <= set(codes)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    front=st.text(max_size=200),
    body=st.lists(
        st.sampled_from(list("[]|#:!<>-`*\n ab1\u200b\u202e") + ["[[", "]]", "[cite:", "<!--", "-->", "> [!untrusted]", "```"]),
        max_size=80,
    ).map("".join),
    raw=st.binary(max_size=200),
)
def test_random_content_never_crashes_a_check(front, body, raw):
    files = dict(BRAIN)
    files[P] = "---\n" + front.replace("\x00", "") + "\n---\n" + body
    files["knowledge/projects/japan-sprint.md"] = NADIA.replace("[cite:1].", body)
    files["sessions/raw/2026-05-03-kyoto.jsonl"] = raw
    assert "E000" not in _codes(files)
