"""Where a run's time goes: wall seconds by phase, kept in `.dream/runs/<run-id>/timings.json`.

Not part of the run report: report.json (and `dream run --json`) is the same for the same inputs,
timings never are. `dream run --verbose` prints them on stderr; `bench/dream_compile.py` reads the
file to say where a compile's time went.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

TIMINGS_FILE = "timings.json"
#: The phases of a run, in order (dream.run marks them): what each one covers.
PHASES = {
    "orient": "lock, crash recovery, listing sessions against state.json, loading the Brain's cards",
    "sessions": "reading, sanitising, summarising and attaching each pending session",
    "notes": "rendering and staging the notes attach changed",
    "update": "compiling the pages whose notes changed",
    "generate": "summaries, indexes and log written into the staged tree",
    "gate": "validators and the semantic verifier on the staged tree",
    "sync": "the commit, the branch update and the working tree",
}


#: Where long work is, for a progress bar: (phase, done, total); total 0 when only the phase changed.
Progress = Callable[[str, int, int], None]


class PhaseClock:
    """Splits a run's wall time into consecutive phases: `mark(name)` ends the current one. Each
    mark and `count` is also told to `progress` (the CLI's bar on a terminal), when there is one."""

    def __init__(self, clock: Callable[[], float] = time.perf_counter, progress: Progress | None = None) -> None:
        self._clock = clock
        self.progress = progress
        self._start = clock()
        self._phase: str | None = None
        self._since = self._start
        self.seconds: dict[str, float] = {}

    def mark(self, phase: str | None) -> None:
        """Start `phase` (None: stop), charging the time since the last mark to the current phase."""
        now = self._clock()
        if self._phase is not None:
            self.seconds[self._phase] = self.seconds.get(self._phase, 0.0) + now - self._since
        self._phase, self._since = phase, now
        if phase is not None and self.progress is not None:
            self.progress(phase, 0, 0)

    def count(self, done: int, total: int) -> None:
        """How far the current phase is: `done` of `total` (sessions, for `sessions`)."""
        if self._phase is not None and self.progress is not None:
            self.progress(self._phase, done, total)

    def as_dict(self) -> dict:
        self.mark(self._phase)  # charge the phase still open up to now
        return {"total": round(self._since - self._start, 4), "phases": {p: round(s, 4) for p, s in self.seconds.items()}}

    def line(self) -> str:
        """`time: 4.21 s (orient 0.61, sessions 1.03, …)`."""
        data = self.as_dict()
        parts = ", ".join(f"{p} {s:.2f}" for p, s in data["phases"].items())
        return f"time: {data['total']:.2f} s ({parts})"

    def save(self, run_dir: Path) -> None:
        """Write timings.json into an existing run folder (nothing when the run made none)."""
        if Path(run_dir).is_dir():
            (Path(run_dir) / TIMINGS_FILE).write_text(json.dumps(self.as_dict(), indent=1) + "\n", encoding="utf-8")

