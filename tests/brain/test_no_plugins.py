"""brain.no_plugins: the CLIs build their models without pydantic looking for plugins."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def _python(code: str, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env)


def test_models_are_built_without_importing_importlib_metadata() -> None:
    code = (
        "import sys\n"
        "from brain.no_plugins import skip_pydantic_plugins\n"
        "skip_pydantic_plugins()\n"
        "from pydantic import BaseModel\n"
        "class A(BaseModel):\n"
        "    x: int\n"
        "assert A.model_validate({'x': '3'}).x == 3\n"
        "import dream.run\n"
        "assert 'importlib.metadata' not in sys.modules, 'importlib.metadata was imported'\n"
        "import pydantic.plugin._loader as loader\n"
        "assert tuple(loader.get_plugins()) == ()\n"
        # Anything else pydantic may ask of its loader comes from the real module.
        "assert loader.PYDANTIC_ENTRY_POINT_GROUP == 'pydantic'\n"
        "from brain.no_plugins import _real_loader\n"
        "assert _real_loader() is _real_loader() and _real_loader().get_plugins is not loader.get_plugins\n"
    )
    done = _python(code)
    assert done.returncode == 0, done.stderr


def test_without_the_skip_pydantic_still_looks_for_plugins() -> None:
    """The measure above means something: pydantic does import importlib.metadata by itself."""
    code = (
        "import sys\n"
        "from pydantic import BaseModel\n"
        "class A(BaseModel):\n"
        "    x: int\n"
        "assert 'importlib.metadata' in sys.modules\n"
    )
    done = _python(code)
    assert done.returncode == 0, done.stderr


def test_dream_run_never_imports_importlib_metadata(nadia: Path) -> None:
    env = {**os.environ, "PYTHONPROFILEIMPORTTIME": "1"}
    done = _python("from dream.cli import entry; entry()", "run", "--brain", str(nadia), "--dry-run", env=env)
    assert done.returncode == 0, done.stderr
    imported = [line.rsplit("|", 1)[1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")]
    assert "pydantic" in imported and "dream.run" in imported
    assert "importlib.metadata" not in imported
