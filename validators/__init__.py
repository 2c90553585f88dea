"""Deterministic checks of a Brain with stable codes (F C L S X I), like a linter.

`run_checks(BrainView(tree))` reads the tree and returns sorted `Finding`s; it never changes
files. docs/validators.md lists every code (generated from `CHECKS`).
"""

from validators.finding import Finding
from validators.registry import CHECKS, Check, UnknownCheckError, check, run_checks, selected_checks
from validators.registry import _load_all

_load_all()

__all__ = ["CHECKS", "Check", "Finding", "UnknownCheckError", "check", "run_checks", "selected_checks"]
