"""A run's folder, `.dream/runs/<run-id>/`: its report, and the scratch only the newest runs keep."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from brain import layout
from dream.report import RunReport

#: How many of the newest runs keep their scratch (staged tree, blobs, git index) for inspection;
#: older runs keep only what is small and says what happened (report.json, message, calls.jsonl, record/).
KEEP_SCRATCH = 5
_SCRATCH = ("staged", "blobs", "index", "blob-list", "index-info")


def finish(root: Path, run_id: str, report: RunReport) -> RunReport:
    """Write the run's report.json and prune the scratch of older runs."""
    run_dir = root / layout.RUNS / run_id
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "report.json").write_text(report.model_dump_json(indent=2) + "\n", encoding="utf-8")
    prune_runs(root, run_id)
    return report


def prune_runs(root: Path, current: str) -> list[str]:
    """Delete the scratch of runs older than the newest KEEP_SCRATCH (never the current run's, nor the one a
    sync journal names); returns the runs pruned. Run ids start with their UTC time, so they sort."""
    runs = root / layout.RUNS
    try:  # a sync that has not finished its working tree keeps its run whole
        journaled = {json.loads((root / layout.JOURNAL).read_text(encoding="utf-8"))["run_id"]}
    except (OSError, ValueError, KeyError, TypeError):
        journaled = set()
    names = sorted(p.name for p in runs.iterdir() if p.is_dir()) if runs.is_dir() else []
    protected = set(names[-KEEP_SCRATCH:]) | {current} | journaled
    pruned = []
    for name in names:
        scratch = [runs / name / part for part in _SCRATCH if (runs / name / part).exists()]
        if name in protected or not scratch:
            continue
        for path in scratch:
            try:
                shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink()
            except OSError:
                continue  # a file we cannot remove is left; the run itself is not affected
        pruned.append(name)
    return pruned
