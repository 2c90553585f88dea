"""Files that ship with Dream but live outside the Python packages of a checkout: the skills
(skills/) and the demo's sessions (fixtures/nadia/). A checkout (or an editable install) reads them
where they are; `pip install .` copies them into dream/bundled/ (setup.py)."""

from __future__ import annotations

from pathlib import Path

_CHECKOUT = Path(__file__).resolve().parent.parent
_INSTALLED = Path(__file__).resolve().parent / "bundled"
_IN_CHECKOUT = {"skills": "skills", "nadia": "fixtures/nadia"}


def bundled(name: str) -> Path:
    """The folder `name` ("skills" or "nadia"), wherever this copy of Dream keeps it."""
    installed = _INSTALLED / name
    return installed if installed.is_dir() else _CHECKOUT / _IN_CHECKOUT[name]
