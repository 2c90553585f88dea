"""`dream run --record`: each model exchange's final outcome, and the run's settings and inputs, for `dream replay`.

A recording lives in `.dream/runs/<id>/record/`: `exchanges.jsonl` (each request's prompt and the
server's final answer or error; retries are in calls.jsonl), the system prompts it used,
`record.json` (the run's settings and the commit it started from), and `inputs/` (files that
differed from that commit: uncommitted sessions, edits).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

from pydantic import ConfigDict, Field

from brain import layout
from brain.errors import BrainError
from brain.model import Model, empty_list

RECORD_DIR = "record"
FORMAT = 1
#: Never snapshotted: machine state of runs (gitignored by `brain init`).
_SKIP = (layout.RUNS + "/", layout.CACHE + "/", layout.LOCK, ".git/")


class Recorder:
    """Appends each exchange's final outcome to `record/exchanges.jsonl`."""

    def __init__(self, run_dir: Path) -> None:
        self.dir = Path(run_dir) / RECORD_DIR
        self.dir.mkdir(parents=True, exist_ok=True)
        self.path = self.dir / "exchanges.jsonl"
        self.path.write_text("", encoding="utf-8")
        self.seq = 0
        self._systems: set[str] = set()

    def add(self, prompt: Any, key: str, unit: str, completion: Any = None, error: Any = None) -> None:
        """One exchange: `prompt` a dream.backends.llm.Prompt, `completion` its Completion, or the BackendError `error`."""
        system = hashlib.sha256(prompt.system.encode("utf-8")).hexdigest()[:16]
        if system not in self._systems:
            (self.dir / f"system-{system}.md").write_text(prompt.system, encoding="utf-8")
            self._systems.add(system)
        self.seq += 1
        entry: dict[str, Any] = {"seq": self.seq, "task": prompt.task, "unit": unit, "key": key, "system": system, "user": prompt.user}
        if prompt.repair is not None:
            entry["repair"] = {"previous": prompt.repair[0].raw, "error": prompt.repair[1]}
        if completion is not None:
            entry["completion"] = {
                "raw": completion.raw, "data": completion.data, "usage": completion.usage.model_dump(),
                "stop_reason": completion.stop_reason, "tool_id": completion.tool_id,
            }
        if error is not None:
            entry["error"] = {"type": type(error).__name__, "message": str(error), "fatal": error.fatal}
        with self.path.open("a", encoding="utf-8") as f:
            f.write(json.dumps(entry, ensure_ascii=False) + "\n")


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
