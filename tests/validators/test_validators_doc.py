"""docs/validators.md is generated from the registry and must not be stale."""

from __future__ import annotations

from validators import CHECKS
from scripts.gen_validators_doc import DOC_PATH, main, render_doc


def test_committed_doc_is_up_to_date():
    assert DOC_PATH.read_text(encoding="utf-8") == render_doc(), "run: python scripts/gen_validators_doc.py"


def test_doc_lists_every_code_once():
    text = render_doc()
    for code, chk in CHECKS.items():
        assert text.count(f"| {code} | {chk.severity} |") == 1, code


def test_check_mode_passes_on_the_committed_file(capsys):
    assert main(["--check"]) == 0


def test_every_code_has_a_lint_line_test():
    """Each registered code appears as `: CODE ` in an expected lint line of some test."""
    from pathlib import Path

    here = Path(__file__).parent
    text = "".join(p.read_text(encoding="utf-8") for p in here.glob("test_*.py"))
    missing = [code for code in CHECKS if f": {code} " not in text]
    assert missing == []
