"""Regenerate docs/validators.md from the check registry: `python scripts/gen_validators_doc.py [--check]`.

A test compares the committed file with `render_doc()`, so a new or changed check must come
with a regenerated page.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from validators import CHECKS, FAMILIES, selected_checks  # noqa: E402 - after the path fix, so it runs from a checkout

DOC_PATH = Path(__file__).resolve().parent.parent / "docs" / "validators.md"

_INTRO = """\
# Validators

Generated from the check registry by `python scripts/gen_validators_doc.py`; do not edit by hand.

`brain validate` runs these checks on the live Brain, and dream runs them on its staged tree.
Each finding has a stable code, a file, a line, a message and a severity, printed like a linter
(`knowledge/projects/x.md:12: C001 [cite:7] has no source`) or as JSON
(`{"code", "path", "line", "message", "severity"}`). Errors make `brain validate` exit 1 and
make dream reject the page; warnings only do so with `--strict`.

```python
from validators import run_checks
findings = run_checks(BrainView(tree), select=["C", "L001"], ignore=["S001"])
```
`select` and `ignore` take codes, family letters or code prefixes. A check that fails with an
unexpected error is reported as one E000 finding (path `.`, line 0) and the others still run.

Quoted material: text inside a blockquote callout that starts with `> [!untrusted]` is quoted
and flagged, so X002/X003 skip it; X001 (secrets) and X004/X005 (invisible characters) never do.
The generated indexes (`knowledge/index.md`, `knowledge/log.md`, `sessions/index.md`) are scanned
whole, like every other file. The same rules clean transcript text as it is read:
`brain.secrets.redact_secrets` and `brain.invisible.strip_invisible` (`validators.injection` finds instructions).
"""


def _cell(text: str) -> str:
    """Markdown table cell: `|` would end the cell and `<folder>` would read as an HTML tag."""
    return text.replace("|", "\\|").replace("<", "\\<")


def render_doc() -> str:
    """The whole page: the intro, then one table per family in FAMILIES order."""
    checks = selected_checks()
    parts = [_INTRO]
    for family, title in FAMILIES.items():
        rows = [c for c in checks if c.family == family]
        if not rows:
            continue
        parts.append(f"\n## {family}: {title}\n\n| code | severity | summary |\n|---|---|---|\n")
        parts.append("".join(f"| {c.code} | {c.severity} | {_cell(c.summary)} |\n" for c in rows))
    return "".join(parts)


def main(argv: list[str] | None = None) -> int:
    """Write docs/validators.md; with --check, exit 1 when the file is stale instead."""
    args = sys.argv[1:] if argv is None else argv
    text = render_doc()
    if "--check" in args:
        current = DOC_PATH.read_text(encoding="utf-8") if DOC_PATH.exists() else ""
        if current != text:
            print(f"{DOC_PATH} is stale; run python scripts/gen_validators_doc.py", file=sys.stderr)
            return 1
        return 0
    DOC_PATH.write_text(text, encoding="utf-8")
    print(f"wrote {DOC_PATH} ({len(CHECKS)} checks)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
