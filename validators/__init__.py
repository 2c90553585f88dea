"""Deterministic checks of a Brain with stable codes (F C L S X I), like a linter.

`run_checks(BrainView(tree))` reads the tree and returns sorted `Finding`s; it never changes
files. docs/validators.md lists every code (generated from `CHECKS`).
"""

# Importing the family modules registers their checks.
from validators import citations, frontmatter, index_fresh, links, safety, structure  # noqa: F401
from validators.registry import CHECKS, FAMILIES, Check, Finding, UnknownCheckError, check, run_checks, selected_checks

__all__ = ["CHECKS", "FAMILIES", "Check", "Finding", "UnknownCheckError", "check", "run_checks", "selected_checks"]
