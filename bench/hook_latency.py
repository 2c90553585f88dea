"""Whole-process time of the SessionStart hook, as Claude Code runs it (JSON on stdin).

  python bench/hook_latency.py --brain DIR [--runs 10]

Prints the median and the slowest of the runs after one warm-up (limit: 300 ms on a
10,000-session Brain).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--brain", type=Path, required=True)
    ap.add_argument("--runs", type=int, default=10)
    args = ap.parse_args()
    payload = json.dumps({"session_id": "bench", "transcript_path": "/dev/null", "cwd": str(Path.cwd()), "source": "startup"})
    cmd = [sys.executable, "-m", "brain.cli", "hook", "session-start", "--brain", str(args.brain)]
    env = {**os.environ, "PYTHONPATH": str(HERE.parent)}
    times = []
    for i in range(args.runs + 1):
        start = time.perf_counter()
        out = subprocess.run(cmd, input=payload, capture_output=True, text=True, env=env, check=True)
        if i:
            times.append(time.perf_counter() - start)
        if not out.stdout:
            raise SystemExit(f"the hook printed nothing: {out.stderr}")
    print(f"SessionStart hook: median {statistics.median(times) * 1000:.0f} ms, slowest {max(times) * 1000:.0f} ms ({args.runs} runs)")


if __name__ == "__main__":
    main()
