"""Fixtures for the `dream run` tests: Nadia compiled once per test session, and private copies of it."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import pytest
from nadia_runs import DEMO_NOW, copy_brain, git, isolated_env

from dream.demo import make_demo
from dream.report import RunReport

#: Git dates of every commit of the shared compile, so `dream status` prints a known date.
GIT_DATE = "2026-07-15T02:00:00+00:00"


class Compiled(NamedTuple):
    root: Path
    report: RunReport
    inputs_commit: str  # the commit before Dream's


@pytest.fixture(scope="session")
def nadia_compiled(tmp_path_factory: pytest.TempPathFactory) -> Compiled:
    """`dream demo` on the bundled Nadia sessions, once; tests that only read it share it.

    Session-scoped, so it runs before the function-scoped safety net of tests/conftest.py and
    sets the same environment itself.
    """
    dest = tmp_path_factory.mktemp("compiled") / "nadia"
    with isolated_env(GIT_DATE):
        report = make_demo(dest, DEMO_NOW)
    return Compiled(dest, report, git(dest, "rev-parse", "HEAD~1").strip())


@pytest.fixture
def compiled_copy(nadia_compiled: Compiled, tmp_path: Path) -> Path:
    """A private copy of the compiled Nadia Brain (git history included) for tests that change it."""
    return copy_brain(nadia_compiled.root, tmp_path / "brain")
