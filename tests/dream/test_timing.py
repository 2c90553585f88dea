"""Where a run's time goes: dream.timing's phase clock, timings.json, and `dream run --verbose`."""

from __future__ import annotations

import json
import re
from pathlib import Path

from click.testing import CliRunner
from nadia_runs import add_session

from dream.cli import main
from dream.timing import PHASES, PhaseClock

NOW = "2026-07-21T02:00:00Z"


class FakeClock:
    def __init__(self, *times: float) -> None:
        self.times = list(times)

    def __call__(self) -> float:
        return self.times.pop(0) if len(self.times) > 1 else self.times[0]  # then the clock stands still


def test_marks_split_the_time_into_consecutive_phases() -> None:
    clock = PhaseClock(FakeClock(10.0, 10.0, 10.5, 12.0, 13.25))
    clock.mark("orient")  # 10.0
    clock.mark("gate")  # 10.5: orient took 0.5
    clock.mark("orient")  # 12.0: a phase marked again adds up
    clock.mark(None)  # 13.25
    assert clock.as_dict() == {"total": 3.25, "phases": {"orient": 1.75, "gate": 1.5}}
    assert clock.line() == "time: 3.25 s (orient 1.75, gate 1.50)"


def test_a_run_saves_its_timings_beside_its_report_and_verbose_prints_them(compiled_copy: Path) -> None:
    root = compiled_copy
    add_session(root, "2026-07-20-kenji-book", "2026-07-20T10:00:00+09:00",
                [("user", "Kenji Mori is writing a book about tactile paving in Japanese stations."), ("assistant", "Noted.")], True)
    result = CliRunner().invoke(main, ["run", "--brain", str(root), "--now", NOW, "--verbose"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    line = result.stderr.strip()
    assert re.fullmatch(r"dream: time: \d+\.\d\d s \((?:\w+ \d+\.\d\d(?:, )?)+\)", line), line
    run_dir = max((root / ".dream/runs").iterdir(), key=lambda p: p.name)
    timings = json.loads((run_dir / "timings.json").read_text(encoding="utf-8"))
    assert list(timings["phases"]) == list(PHASES)
    assert all(s >= 0 for s in timings["phases"].values())
    assert sum(timings["phases"].values()) <= timings["total"] + 1e-3
    # The report stays what the inputs make it: no timings in it.
    assert "timings" not in json.loads((run_dir / "report.json").read_text(encoding="utf-8"))


def test_a_quiet_run_says_nothing_about_time(compiled_copy: Path) -> None:
    result = CliRunner().invoke(main, ["run", "--brain", str(compiled_copy), "--now", NOW], catch_exceptions=False)
    assert result.exit_code == 0 and result.stderr == ""

