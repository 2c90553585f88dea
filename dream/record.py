"""`dream run --record`: the run's settings and inputs kept beside its exchanges, for `dream replay`.

A recording lives in `.dream/runs/<id>/record/`: `record.json` (the run's settings and the commit
it started from), `inputs/` (files that differed from that commit: uncommitted sessions, edits),
and what the recorder of the backend wrote (dream.backends.recording).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

from pydantic import ConfigDict, Field

from brain import layout
from brain.errors import BrainError
from brain.model import Model, empty_list
from dream.backends.recording import RECORD_DIR

FORMAT = 1
#: Never snapshotted: machine state of runs (gitignored by `brain init`).
_SKIP = (layout.RUNS + "/", layout.CACHE + "/", layout.LOCK, ".git/")


class RecordMeta(Model):
    model_config = ConfigDict(extra="forbid")
    format: int = FORMAT
    run_id: str
    base: str | None  # HEAD when the run started
    settings: dict[str, Any]  # DreamSettings without root
    backend: str
    model: str | None
    deleted: list[str] = Field(default_factory=empty_list)  # tracked at `base`, missing from the working tree


def snapshot_inputs(root: Path, run_dir: Path, settings: Any, run_id: str, backend: Any, base: str | None) -> None:
    """Save what the run reads besides git: files of the working tree that differ from `base`, and
    the raw sessions (git-ignored)."""
    out = Path(run_dir) / RECORD_DIR
    inputs = out / "inputs"
    if inputs.exists():
        shutil.rmtree(inputs)
    inputs.mkdir(parents=True)
    changed = _git(root, "ls-files", "-z", "--modified", "--others", "--exclude-standard").split("\0")
    changed += _git(root, "ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--", layout.SESSIONS_RAW).split("\0")
    if base:
        changed += _git(root, "diff", "--name-only", "-z", base).split("\0")
    deleted = []
    for rel in sorted({p for p in changed if p and not p.startswith(_SKIP)}):
        src = Path(root) / rel
        if src.is_symlink() or not src.exists():
            if not src.exists():
                deleted.append(rel)
            continue
        dst = inputs / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dst)
    meta = RecordMeta(
        run_id=run_id, base=base, settings=settings.model_dump(mode="json", exclude={"root", "record"}),
        backend=backend.name, model=backend.model, deleted=deleted,
    )
    (out / "record.json").write_text(meta.model_dump_json(indent=2) + "\n", encoding="utf-8")


def _git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True)
    if done.returncode != 0:
        raise BrainError(f"git {' '.join(args[:2])} failed: {done.stderr.strip()}")
    return done.stdout


def load_meta(root: Path, run_id: str) -> RecordMeta:
    path = Path(root) / layout.RUNS / run_id / RECORD_DIR / "record.json"
    if not path.is_file():
        raise BrainError(f"run {run_id} has no recording ({path} is missing)", "record a run with `dream run --record`")
    return RecordMeta.model_validate_json(path.read_text(encoding="utf-8"))
