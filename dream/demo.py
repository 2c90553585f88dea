"""`dream demo DIR`: a Brain made from the bundled Nadia sessions, compiled by Dream (offline)."""

from __future__ import annotations

import shutil
from pathlib import Path

from brain import layout
from brain.errors import BrainError
from brain.repo import BrainRepo
from brain.scaffold import init_brain
from dream.backends import get_backend
from dream.bundled import bundled
from dream.report import RunReport
from dream.run import run
from dream.settings import RunFlags, load_settings

#: What the demo copies from the persona: the owner's inputs, never the hand-compiled wiki.
INPUTS = (layout.CONFIG, layout.GUIDE, layout.RULES, layout.SESSIONS_RAW, layout.SOURCES, layout.INSTRUCTIONS, layout.FORGET)


def persona_dir() -> Path:
    """The bundled example's folder (fixtures/nadia in a checkout)."""
    here = bundled("nadia")
    if not (here / layout.SESSIONS_RAW).is_dir():
        raise BrainError(f"the bundled example is missing ({here})", "reinstall: `pip install .` from a checkout")
    return here


def copy_inputs(source: Path, dest: Path) -> None:
    """A new Brain at `dest` holding the owner's inputs of the Brain at `source` (not committed)."""
    init_brain(dest)
    for rel in INPUTS:
        src, dst = source / rel, dest / rel
        if src.is_dir():
            shutil.copytree(src, dst, dirs_exist_ok=True)
        elif src.is_file():
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, dst)


def make_demo(dest: Path, now: str) -> RunReport:
    dest = Path(dest)
    if dest.exists() and any(dest.iterdir()):
        raise BrainError(f"{dest} is not empty", "choose a new folder for the demo")
    copy_inputs(persona_dir(), dest)
    BrainRepo(dest).commit_all("Add Nadia's sessions, sources and instructions")
    settings = load_settings(dest, RunFlags(backend="offline", now=now))
    return run(settings, get_backend("offline"))
