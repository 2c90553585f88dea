"""Random SIGKILLs of `dream run` (and the run after each), checking the Brain after every kill.

  python bench/fault_kills.py --kills 200
Prints how many kills were checked, how many landed before/after the commit, and any failure.
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT)]  # the real packages first: tests/ has same-named folders
sys.path += [str(ROOT / "tests" / "dream"), str(ROOT / "tests")]
from crash_harness import git, prepare, problems_after_crash, run_and_kill_after, run_dream, snapshot  # noqa: E402
from nadia_runs import PERSONA, isolated_env  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kills", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rnd = random.Random(args.seed)
    with tempfile.TemporaryDirectory(prefix="dream-kills-") as tmp_name, isolated_env("2026-07-15T02:00:00+00:00"):
        tmp = Path(tmp_name)
        before = prepare(tmp / "before", PERSONA)
        reference = tmp / "reference"
        shutil.copytree(before, reference, symlinks=True)
        start = time.perf_counter()
        assert run_dream(reference) == 0
        full = time.perf_counter() - start
        expected = snapshot(reference)
        heads = {git(before, "rev-parse", "HEAD").strip(), git(reference, "rev-parse", "HEAD").strip()}
        outcomes = {"killed before the commit": 0, "killed after the commit": 0, "finished before the kill": 0}
        failures, delays = [], []
        for i in range(args.kills):
            work = tmp / f"k{i}"
            shutil.copytree(before, work, symlinks=True)
            delay = rnd.uniform(0.0, full * 1.1)
            delays.append(delay)
            code = run_and_kill_after(work, delay)
            landed = git(work, "rev-parse", "HEAD").strip() != git(before, "rev-parse", "HEAD").strip()
            key = "finished before the kill" if code == 0 else ("killed after the commit" if landed else "killed before the commit")
            outcomes[key] += 1
            problems = problems_after_crash(work, heads)
            if run_dream(work) != 0:
                problems.append("the next run failed")
            problems += problems_after_crash(work, heads)
            if snapshot(work) != expected:
                problems.append("the final tree differs from an uninterrupted run")
            if problems:
                failures.append((i, delay, problems))
            shutil.rmtree(work)
        print(f"uninterrupted run: {full:.2f} s; kills at uniform random moments in [0, {full * 1.1:.2f}] s "
              f"(median {statistics.median(delays):.2f} s)")
        print(f"{args.kills} kills: " + ", ".join(f"{v} {k}" for k, v in outcomes.items()))
        print(f"after each: git fsck, no torn file, owner's edit kept, next run → same tree: {args.kills - len(failures)} ok, {len(failures)} failed")
        for i, delay, problems in failures[:10]:
            print(f"  kill {i} at {delay:.2f} s: {'; '.join(problems)}")
        sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
