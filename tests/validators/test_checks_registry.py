"""Finding, the registry, select/ignore, determinism, and E000 for a check that raises."""

from __future__ import annotations

import json

import pytest
from validator_brain import BRAIN, brain_with

from validators import CHECKS, Finding, UnknownCheckError, run_checks, selected_checks
from validators.registry import FAMILIES, Check, check


def test_finding_lint_line_and_json():
    f = Finding(code="C001", path="knowledge/projects/x.md", line=12, message="[cite:7] has no source", severity="error")
    assert f.lint_line() == "knowledge/projects/x.md:12: C001 [cite:7] has no source"
    assert f.model_dump() == {
        "code": "C001",
        "path": "knowledge/projects/x.md",
        "line": 12,
        "message": "[cite:7] has no source",
        "severity": "error",
    }
    assert json.loads(f.model_dump_json()) == f.model_dump()


def test_finding_is_frozen_and_strict():
    f = Finding(code="C001", path="a.md", line=1, message="m", severity="warning")
    with pytest.raises(Exception):
        f.line = 2  # type: ignore[misc]
    with pytest.raises(Exception):
        Finding(code="C001", path="a.md", line=1, message="m", severity="fatal")  # type: ignore[arg-type]
    with pytest.raises(Exception):
        Finding(code="C001", path="a.md", line=1, message="m", severity="error", hint="x")  # type: ignore[call-arg]


def test_every_check_has_code_family_severity_summary_and_docstring_or_summary():
    assert CHECKS, "importing validators registers the checks"
    for code, chk in CHECKS.items():
        assert chk.code == code
        assert code[0] in FAMILIES
        assert chk.severity in ("error", "warning")
        assert chk.summary and "\n" not in chk.summary
    for family in "FCLSXI":
        assert any(c.startswith(family) for c in CHECKS), family


def test_check_rejects_bad_codes_and_duplicates():
    with pytest.raises(ValueError):
        check("Q001", "error", "no such family")
    with pytest.raises(ValueError):
        check("C1", "error", "too short")
    with pytest.raises(ValueError):
        check("C999", "fatal", "bad severity")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        check("C001", "error", "taken")(lambda view: ())


BROKEN = brain_with(
    {
        # C001 and L001 on the same page, an S001 stray file
        "knowledge/people/nadia-rahman.md": BRAIN["knowledge/people/nadia-rahman.md"].replace(
            "[cite:1].", "[cite:1] and [[nowhere]] [cite:7]."
        ),
        "stray.txt": "hello\n",
    }
)


def test_select_and_ignore_take_codes_families_and_prefixes(lint):
    everything = lint(BROKEN)
    assert everything == [
        "knowledge/people/nadia-rahman.md:13: C001 [cite:7] has no source",
        "knowledge/people/nadia-rahman.md:13: L001 [[nowhere]] does not resolve to a page, alias, note or session",
        "stray.txt:1: S001 stray.txt is outside the Brain layout and no tool reads it; move it (see docs/DESIGN.md) or remove it",
    ]
    assert lint(BROKEN, select=["C"]) == everything[:1]
    assert lint(BROKEN, select="C001,L001") == everything[:2]
    assert lint(BROKEN, select=["l00"]) == everything[1:2]
    assert lint(BROKEN, ignore=["S", "C001"]) == everything[1:2]
    assert lint(BROKEN, select=["C", "L"], ignore="L001") == everything[:1]


def test_unknown_select_code_is_an_error(view_of):
    with pytest.raises(UnknownCheckError, match="unknown check code or family 'Z9'"):
        run_checks(view_of(BRAIN), select=["Z9"])


def test_selected_checks_are_in_code_order():
    codes = [c.code for c in selected_checks()]
    assert codes == sorted(CHECKS)
    assert [c.code for c in selected_checks(select="F00", ignore="F001")][:2] == ["F002", "F003"]


def test_findings_are_sorted_deduplicated_and_deterministic(view_of):
    files = brain_with(
        {"knowledge/people/nadia-rahman.md": BRAIN["knowledge/people/nadia-rahman.md"].replace("[cite:1].", "[cite:9] [cite:9] [cite:3].")}
    )
    first = run_checks(view_of(files), select="C001")
    assert [f.lint_line() for f in first] == [
        "knowledge/people/nadia-rahman.md:13: C001 [cite:3] has no source",
        "knowledge/people/nadia-rahman.md:13: C001 [cite:9] has no source",
    ]
    assert first == run_checks(view_of(files), select="C001")


def test_a_check_that_raises_becomes_one_E000_and_the_others_still_run(monkeypatch, view_of):
    def explode(view):
        yield ("knowledge/people/nadia-rahman.md", 1, "found before the crash")
        raise ZeroDivisionError("boom\nsecond line")

    monkeypatch.setitem(CHECKS, "C990", Check("C990", "warning", "test check that crashes", explode))
    findings = run_checks(view_of(BROKEN), select=["C"])
    assert [f.lint_line() for f in findings] == [
        ".:0: E000 check C990 (explode) failed: ZeroDivisionError: boom second line; "
        "its other findings may be missing, please report this validator bug",
        "knowledge/people/nadia-rahman.md:1: C990 found before the crash",
        "knowledge/people/nadia-rahman.md:13: C001 [cite:7] has no source",
    ]
    assert findings[0].severity == "error"
    assert findings[1].severity == "warning"


def test_checks_may_yield_findings(monkeypatch, view_of):
    made = Finding(code="C991", path="a.md", line=3, message="as is", severity="error")
    monkeypatch.setitem(CHECKS, "C991", Check("C991", "warning", "yields a Finding", lambda view: [made]))
    assert run_checks(view_of({}), select="C991") == [made]
