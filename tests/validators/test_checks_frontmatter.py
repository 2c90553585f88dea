"""F checks: each code on a Brain broken in one file, asserted as exact lint lines."""

from __future__ import annotations

import pytest
from validator_brain import NADIA, NOTE, SUMMARY, brain_with

P = "knowledge/people/nadia-rahman.md"
S = "sessions/summaries/2026-05-03-kyoto.md"
N = "notes/nadia-rahman/prefers-pdf.md"
PAGE_NEEDS = "a page needs title, type, summary, created and updated"

CASES = [
    # F001: the document cannot be read at all
    ("no-front-matter", {P: "# Nadia\n"}, [
        f"{P}:1: F001 no front matter: the file must start with a line '---' (add title/type front matter)",
    ]),
    ("unclosed", {P: NADIA.replace("---\n# Nadia", "# Nadia")}, [
        f"{P}:1: F001 front matter is not closed by a line '---' (add the closing '---')",
    ]),
    ("invalid-yaml", {P: NADIA.replace("summary: Accessibility researcher.", "summary: [unclosed")}, [
        f"{P}:6: F001 invalid YAML in front matter: did not find expected ',' or ']' (fix the YAML syntax)",
    ]),
    ("anchors", {P: NADIA.replace("aliases: [Nadia]", "aliases: &a [Nadia]\nother: *a")}, [
        f"{P}:4: F001 YAML anchors and aliases are not allowed in front matter (write the value out)",
    ]),
    ("not-a-mapping", {P: "---\n- a\n- b\n---\nbody\n"}, [
        f"{P}:2: F001 front matter must be a mapping of keys, not list (write key: value lines)",
    ]),
    ("invalid-utf8", {P: NADIA.encode().replace(b"Accessibility", b"Acc\xff")}, [
        f"{P}:5: F001 invalid UTF-8 at byte 66 (save the file as UTF-8)",
    ]),
    ("nul-byte", {P: NADIA.encode() + b"\x00"}, [
        f"{P}:1: F001 binary content (NUL byte) (remove the file or save it as UTF-8 text)",
    ]),
    ("impossible-date", {P: NADIA.replace("created: 2026-05-03", "created: 2026-02-30")}, [
        f"{P}:6: F001 invalid value in front matter: day is out of range for month (dates are YYYY-MM-DD)",
    ]),
    # F002: required keys per kind
    ("page-missing-summary", {P: NADIA.replace("summary: Accessibility researcher.\n", "")}, [
        f"{P}:1: F002 front matter key 'summary' is missing; {PAGE_NEEDS}",
    ]),
    ("page-empty-title", {P: NADIA.replace("title: Nadia Rahman", "title:")}, [
        f"{P}:2: F002 front matter key 'title' is empty; give it a value",
    ]),
    ("summary-missing-turns", {S: SUMMARY.replace("turns: 2\n", "")}, [
        f"{S}:1: F002 front matter key 'turns' is missing; a session summary needs id, title, type, started and turns",
    ]),
    ("note-missing-kind-confidence", {N: NOTE.replace("confidence: 0.9\n", "").replace("kind: preference\n", "")}, [
        f"{N}:1: F002 front matter key 'confidence' is missing; a note needs title, type, kind, topic, confidence and observed",
        f"{N}:1: F002 front matter key 'kind' is missing; a note needs title, type, kind, topic, confidence and observed",
    ]),
    # F003: value shapes
    ("title-list-aliases-mapping", {P: NADIA.replace("title: Nadia Rahman", "title: [Nadia, Rahman]").replace("aliases: [Nadia]", "aliases: {a: b}")}, [
        f"{P}:2: F003 front matter key 'title' must be text, not a list",
        f"{P}:4: F003 front matter key 'aliases' must be a list of names, e.g. [a, b]",
    ]),
    ("sources-key", {P: NADIA.replace("  1: session", "  a: session")}, [
        f"{P}:8: F003 sources key 'a' must be a whole number (the N of [cite:N])",
    ]),
    ("sources-not-mapping", {P: NADIA.replace("sources:\n  1: session:2026-05-03-kyoto#t1-t2", "sources: session:x")}, [
        f"{P}:8: F003 front matter key 'sources' must be a mapping of numbers to citation targets",
    ]),
    ("turns-not-number", {S: SUMMARY.replace("turns: 2", "turns: many")}, [
        f"{S}:7: F003 front matter key 'turns' must be a whole number, not 'many'",
    ]),
    ("key-not-a-name", {P: NADIA.replace("aliases: [Nadia]", "aliases: [Nadia]\n1: one")}, [
        f"{P}:1: F003 front matter key 1 is not a name; keys are words such as title",
    ]),
    # F004: dates
    ("created-not-date", {P: NADIA.replace("created: 2026-05-03", "created: May 3")}, [
        f"{P}:6: F004 created 'May 3' is not a date; write YYYY-MM-DD",
    ]),
    ("observed-and-started", {
        N: NOTE.replace("observed: 2026-05-03", "observed: '2026-13-01'"),
        S: SUMMARY.replace("started: 2026-05-03T10:02:00+09:00", "started: yesterday"),
    }, [
        f"{N}:7: F004 observed '2026-13-01' is not a date; write YYYY-MM-DD",
        f"{S}:5: F004 started 'yesterday' is not a date and time; write e.g. 2026-05-03T10:02:00+09:00",
    ]),
    # F005 … F011
    ("unknown-type", {P: NADIA.replace("type: person", "type: persn")}, [
        f"{P}:3: F005 type 'persn' is not a page type (did you mean 'person'?); use one of person, organization, "
        "place, project, concept, preference, learning, event",
    ]),
    ("type-folder", {
        P: NADIA.replace("type: person", "type: project"),
        S: SUMMARY.replace("type: session", "type: note"),
        N: NOTE.replace("type: note", "type: session"),
    }, [
        f"{P}:3: F006 type 'project' does not match folder knowledge/people/; move the file to knowledge/projects/ or write type: person",
        f"{N}:3: F006 type 'session' does not belong in notes/; write type: note",
        f"{S}:3: F006 type 'note' does not belong in sessions/summaries/; write type: session",
    ]),
    ("note-kind", {N: NOTE.replace("kind: preference", "kind: preferenc")}, [
        f"{N}:4: F007 note kind 'preferenc' is unknown (did you mean 'preference'?); use one of preference, identity, "
        "relationship, project, event, decision, correction, learning, task, command",
    ]),
    ("confidence-range", {N: NOTE.replace("confidence: 0.9", "confidence: 1.5")}, [
        f"{N}:6: F008 confidence 1.5 must be a number from 0 to 1, e.g. 0.8",
    ]),
    ("confidence-word", {N: NOTE.replace("confidence: 0.9", "confidence: high")}, [
        f"{N}:6: F008 confidence 'high' must be a number from 0 to 1, e.g. 0.8",
    ]),
    ("summary-id", {S: SUMMARY.replace("id: 2026-05-03-kyoto", "id: 2026-05-04-kyoto")}, [
        f"{S}:2: F009 id '2026-05-04-kyoto' does not match the file name 2026-05-03-kyoto.md; they must be the same session id",
    ]),
    ("updated-before-created", {P: NADIA.replace("updated: 2026-06-01", "updated: 2026-04-01")}, [
        f"{P}:7: F010 updated 2026-04-01 is earlier than created 2026-05-03; fix one of the dates",
    ]),
    ("note-topic-folder", {N: NOTE.replace("topic: nadia-rahman", "topic: japan-sprint")}, [
        f"{N}:5: F011 topic 'japan-sprint' does not match the folder notes/nadia-rahman/; move the note or fix the topic",
    ]),
]


@pytest.mark.parametrize("changes, expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_f_checks(lint, changes, expected):
    assert lint(brain_with(changes), select="F") == expected


def test_f_warnings_are_warnings(view_of):
    from validators import run_checks

    files = brain_with({P: NADIA.replace("updated: 2026-06-01", "updated: 2026-04-01")})
    assert [(f.code, f.severity) for f in run_checks(view_of(files), select="F")] == [("F010", "warning")]


def test_valid_variants_pass(lint):
    """Numbers as titles, a single alias as text, a date-only `started`, confidence 0 and 1."""
    files = brain_with({
        P: NADIA.replace("aliases: [Nadia]", "aliases: Nadia").replace("created: 2026-05-03", "created: '2026-05-03'"),
        S: SUMMARY.replace("started: 2026-05-03T10:02:00+09:00", "started: 2026-05-03"),
        N: NOTE.replace("confidence: 0.9", "confidence: 1"),
    })
    assert lint(files, select="F") == []
    assert lint(brain_with({N: NOTE.replace("confidence: 0.9", "confidence: 0")}), select="F") == []
