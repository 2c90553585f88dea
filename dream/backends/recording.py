"""The recorder of `dream run --record`: each model exchange's final outcome, kept for `dream replay`.

It lives in `.dream/runs/<id>/record/`: `exchanges.jsonl` (each request's prompt and the server's
final answer or error) and the system prompts it used (dream.record adds the run's inputs).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

RECORD_DIR = "record"


class Recorder:
    """Appends each exchange's final outcome to `record/exchanges.jsonl` (retries are in calls.jsonl)."""

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
