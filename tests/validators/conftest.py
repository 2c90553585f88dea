"""Fixtures for the validator tests: `view_of(files)` and `lint(files, select)` → lint lines."""

from __future__ import annotations

from pathlib import Path

import pytest
from validator_brain import BRAIN

from brain.tree import DirTree
from brain.view import BrainView


@pytest.fixture
def view_of(make_tree):
    """view_of(files) → BrainView over a fresh folder holding exactly `files`."""
    counter = iter(range(10_000))

    def _view(files: dict[str, str | bytes]) -> BrainView:
        return BrainView(DirTree(make_tree(files, name=f"brain{next(counter)}")))

    return _view


@pytest.fixture
def lint(view_of):
    """lint(files, select=None) → the lint lines run_checks reports for that Brain."""
    from validators import run_checks

    def _lint(files: dict[str, str | bytes], select=None, ignore=None) -> list[str]:
        return [f.lint_line() for f in run_checks(view_of(files), select=select, ignore=ignore)]

    return _lint


@pytest.fixture
def brain_dir(make_tree) -> Path:
    return make_tree(dict(BRAIN))
