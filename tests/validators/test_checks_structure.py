"""S checks: layout, unsafe names, slugs, session ids, collisions, symlinks, raw sessions."""

from __future__ import annotations

import os

import pytest
from validator_brain import NADIA, NOTE, SESSION, SUMMARY, brain_with

from brain.tree import DirTree
from brain.view import BrainView
from validators import run_checks

RAW = "sessions/raw/2026-05-03-kyoto.jsonl"
OUTSIDE = "is outside the Brain layout and no tool reads it; move it (see docs/DESIGN.md) or remove it"
UNSAFE = "this name cannot be checked out everywhere (Windows, macOS); rename the file"
SLUG = "is not a valid slug (lower-case letters, digits, single hyphens)"
SID = "is not a valid session id (letters, digits, '.', '_', '-', starting with a letter or digit, no '..'); rename the file"
NFC, NFD = "sources/docs/caf\u00e9.md", "sources/docs/cafe\u0301.md"
LONG = "a" * 81

CASES = [
    ("outside-layout", {"stray.txt": "x", "knowledge/people/photo.png": b"\x89PNG", "knowledge/random.md": "x", "sessions/raw/notes.txt": "x"}, [
        f"knowledge/people/photo.png:1: S001 knowledge/people/photo.png {OUTSIDE}",
        f"knowledge/random.md:1: S001 knowledge/random.md {OUTSIDE}",
        f"sessions/raw/notes.txt:1: S001 sessions/raw/notes.txt {OUTSIDE}",
        f"stray.txt:1: S001 stray.txt {OUTSIDE}",
    ]),
    ("unsafe-names", {"knowledge/people/con.md": NADIA, "sources/docs/what?.md": "x", "sources/docs/trailing. ": "x"}, [
        f"knowledge/people/con.md:1: S002 unsafe name 'con.md': {UNSAFE}",
        f"sources/docs/trailing. :1: S002 unsafe name 'trailing. ': {UNSAFE}",
        f"sources/docs/what?.md:1: S002 unsafe name 'what?.md': {UNSAFE}",
    ]),
    ("bad-slugs", {
        "knowledge/people/Nadia Rahman.md": NADIA,
        "knowledge/people/index.md": NADIA,
        "notes/Nadia/x_y.md": NOTE,
        f"knowledge/concepts/{LONG}.md": NADIA,
    }, [
        f"knowledge/concepts/{LONG}.md:1: S003 '{'a' * 20}...' is longer than 80 characters; shorten the slug",
        f"knowledge/people/Nadia Rahman.md:1: S003 'Nadia Rahman' {SLUG}; rename it to nadia-rahman",
        "knowledge/people/index.md:1: S003 'index' is a reserved name; rename the file (e.g. index-page.md)",
        f"notes/Nadia/x_y.md:1: S003 'Nadia' {SLUG}; rename it to nadia",
        f"notes/Nadia/x_y.md:1: S003 'x_y' {SLUG}; rename it to x-y",
    ]),
    ("bad-session-ids", {"sessions/raw/-bad.jsonl": "x", "sessions/summaries/a..b.md": SUMMARY}, [
        f"sessions/raw/-bad.jsonl:1: S004 '-bad' {SID}",
        f"sessions/summaries/a..b.md:1: S004 'a..b' {SID}",
    ]),
    ("case-and-normalisation-collisions", {"knowledge/people/Nadia-Rahman.md": NADIA, NFC: "x", NFD: "y"}, [
        f"knowledge/people/Nadia-Rahman.md:1: S003 'Nadia-Rahman' {SLUG}; rename it to nadia-rahman",
        "knowledge/people/Nadia-Rahman.md:1: S005 knowledge/people/Nadia-Rahman.md differs from knowledge/people/nadia-rahman.md "
        "only in case; macOS and Windows may see one file, rename one",
        "knowledge/people/nadia-rahman.md:1: S005 knowledge/people/nadia-rahman.md differs from knowledge/people/Nadia-Rahman.md "
        "only in case; macOS and Windows may see one file, rename one",
        f"{NFD}:1: S005 {NFD} differs from {NFC} only in Unicode normalisation (NFC/NFD); macOS and Windows may see one file, rename one",
        f"{NFC}:1: S005 {NFC} differs from {NFD} only in Unicode normalisation (NFC/NFD); macOS and Windows may see one file, rename one",
    ]),
    ("raw-session-problems", {RAW: SESSION + "not json\n" + '{"type":"turn","n":2,"role":"user","text":"dup"}\n'
                              + '{"type":"note"}\n' + '{"type":"turn","role":"user","text":"no n"}\n'}, [
        f"{RAW}:4: S008 malformed JSON (Expecting value); line skipped",
        f"{RAW}:5: S008 turn 2 appears twice; the later line is skipped",
        f"{RAW}:6: S008 unknown line type 'note'; expected 'session' or 'turn'; line skipped",
        f"{RAW}:7: S008 invalid turn line: n: Field required; line skipped",
    ]),
    ("raw-session-invalid-utf8", {RAW: SESSION.encode().replace(b"Noted", b"N\xffted")}, [
        f"{RAW}:3: S008 invalid UTF-8; undecodable bytes were replaced with U+FFFD",
    ]),
    ("raw-header-id", {RAW: SESSION.replace('"id":"2026-05-03-kyoto"', '"id":"kyoto"')}, [
        f"{RAW}:1: S009 header id 'kyoto' differs from the file name 2026-05-03-kyoto.jsonl; citations use the file name, make them agree",
    ]),
    ("uncited-raw-session-is-not-read", {"sessions/raw/other.jsonl": "not json\n"}, []),
]


@pytest.mark.parametrize("changes, expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_s_checks(lint, tmp_path, changes, expected):
    (tmp_path / "Probe").write_text("x")
    if NFC in changes and (tmp_path / "probe").exists():
        pytest.skip("case-insensitive file system")
    assert lint(brain_with(changes), select="S") == expected


def test_symlinks(make_tree, tmp_path):
    root = make_tree(brain_with({}))
    secret = tmp_path / "outside.txt"
    secret.write_text("not part of the Brain\n")
    os.symlink("nadia-rahman.md", root / "knowledge/people/nadia.md")
    os.symlink(secret, root / "knowledge/people/leak.md")
    os.symlink(tmp_path, root / "sources/escape")
    os.symlink("../knowledge", root / "notes/linked")
    lines = [f.lint_line() for f in run_checks(BrainView(DirTree(root)), select=["S006", "S007"])]
    assert lines == [
        f"knowledge/people/leak.md:1: S007 knowledge/people/leak.md is a symlink to {secret}, outside the Brain; "
        "remove it (it may expose other files)",
        "knowledge/people/nadia.md:1: S006 knowledge/people/nadia.md is a symlink; it is not read as a document, "
        "replace it with the file itself",
        "notes/linked:1: S006 notes/linked is a symlink; it is not read as a document, replace it with the file itself",
        f"sources/escape:1: S007 sources/escape is a symlink to {tmp_path}, outside the Brain; remove it (it may expose other files)",
    ]
    findings = run_checks(BrainView(DirTree(root)), select=["S006", "S007"])
    assert [f.severity for f in findings] == ["error", "warning", "warning", "error"]


def test_symlinked_document_is_not_parsed(make_tree, tmp_path):
    root = make_tree(brain_with({}))
    outside = tmp_path / "evil.md"
    outside.write_text("---\ntitle: x\n")
    os.symlink(outside, root / "knowledge/people/evil.md")
    assert "knowledge/people/evil.md" not in BrainView(DirTree(root)).docs

