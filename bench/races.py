"""Owner edits and commits racing `dream run`: nothing the owner wrote may be lost.

  python bench/races.py --races 100 [--deletions 20]

--deletions N also runs N races in which the owner deletes a page Dream is updating, at a random
moment of the run: the page must stay deleted through that run and the next.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT)]  # the real packages first: tests/ has same-named folders
sys.path += [str(ROOT / "tests" / "dream"), str(ROOT / "tests")]
from crash_harness import git, prepare  # noqa: E402
from nadia_runs import PERSONA, isolated_env  # noqa: E402
from test_races import deletion_race, race  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--races", type=int, default=100)
    ap.add_argument("--deletions", type=int, default=0)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="dream-races-") as tmp_name, isolated_env("2026-07-15T02:00:00+00:00"):
        tmp = Path(tmp_name)
        before = prepare(tmp / "before", PERSONA)
        failures, rebased = [], 0
        for seed in range(args.races):
            work = tmp / f"r{seed}"
            problems = race(before, work, seed)
            # Dream's commit on top of the owner's means the owner committed mid-run and Dream rebased.
            top = git(work, "log", "-2", "--format=%an|%s").splitlines()
            rebased += len(top) == 2 and top[0].startswith("Dream|") and top[1].endswith("|owner edit")
            if problems:
                failures.append((seed, problems))
        print(f"{args.races} races (owner commits at a random moment of the run): {args.races - len(failures)} ok, "
              f"{len(failures)} failed; Dream committed on top of the owner's mid-run commit in {rebased}")
        for seed, problems in failures[:10]:
            print(f"  race {seed}: {'; '.join(problems)}")
        lost = [(seed, p) for seed in range(args.deletions) if (p := deletion_race(before, tmp / f"d{seed}", seed))]
        if args.deletions:
            print(f"{args.deletions} deletion races: {args.deletions - len(lost)} stayed deleted, {len(lost)} brought back")
            for seed, problems in lost[:10]:
                print(f"  deletion {seed}: {'; '.join(problems)}")
        sys.exit(1 if failures or lost else 0)


if __name__ == "__main__":
    main()
