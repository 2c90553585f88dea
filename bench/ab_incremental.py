"""A/B of an incremental `dream run` between two checkouts of the code, each on a Brain it compiled.

    git archive <rev> | tar -x -C /tmp/ab-old                          # the other version, unpacked
    PYTHONPATH=/tmp/ab-old python /tmp/ab-old/bench/dream_compile.py --skip-locomo --runs 1 --keep /tmp/brain-old
    python bench/dream_compile.py --skip-locomo --runs 1 --keep /tmp/brain-new
    python bench/ab_incremental.py /tmp/ab-old /tmp/brain-old . /tmp/brain-new --runs 3

Each BRAIN is compiled by its CODE (`bench/dream_compile.py --keep BRAIN`, run in that checkout):
a run's caches are keyed by a digest of the code that built them, so a Brain compiled by the
other version is cold for this one wherever its warm-up run does not reach, and the figures would
favour the version that compiled it (a warning says so when the mark of --keep names other code).
For each version: a copy of its BRAIN gets one session and a warm-up run, then a second session,
committed; each timed run starts from a fresh copy of that base. Runs alternate between the
versions, so a change in the machine's load falls on both. Prints each version's median wall
time, the ratio, and whether both commit the same tree outside .dream/ (state files may differ
between versions).
"""

from __future__ import annotations

import argparse
import datetime
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from dream_compile import MARK, add_session, commit_all, timed  # noqa: E402


def dream_run(code: Path, brain: Path, now: str) -> float:
    """`dream run` by the code at `code` (run from outside any checkout, so only PYTHONPATH picks it)."""
    return timed(sys.executable, "-c", "from dream.cli import entry; entry()", "run", "--brain", str(brain), "--now", now,
                 cwd=Path(tempfile.gettempdir()), env={**os.environ, "PYTHONPATH": str(code)})


def fresh_copy(src: Path, dst: Path) -> None:
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(src, dst, symlinks=True)
    # New inodes and ctimes: refreshed untimed, as the bench does; the copy's dirty pages (half a
    # gigabyte) are written back now, not during the timed run.
    subprocess.run(["git", "update-index", "-q", "--refresh"], cwd=dst, check=False, capture_output=True)
    os.sync()


def tree_outside_dream(brain: Path) -> str:
    out = subprocess.run(["git", "ls-tree", "-r", "HEAD"], cwd=brain, check=True, capture_output=True, text=True).stdout
    return "".join(line + "\n" for line in out.splitlines() if "\t.dream/" not in line)


def code_digest(code: Path) -> str:
    """The cache version the code at `code` writes (brain.doccache.code_fingerprint)."""
    probe = "from brain.doccache import code_fingerprint; print(code_fingerprint('brain', 'dream'))"
    return subprocess.run([sys.executable, "-c", probe], cwd=Path(tempfile.gettempdir()), check=True, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(code)}).stdout.strip()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("code_a", type=Path)
    ap.add_argument("brain_a", type=Path)
    ap.add_argument("code_b", type=Path)
    ap.add_argument("brain_b", type=Path)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="dream-ab-"))
    try:
        bases = {}
        for name, code, brain in (("a", args.code_a, args.brain_a), ("b", args.code_b, args.brain_b)):
            mark = brain / MARK
            if not mark.is_file() or not mark.read_text().endswith(f"code {code_digest(code.resolve())}"):
                print(f"warning: {brain} was not compiled by {code} (see {MARK}): its caches are cold for it, "
                      "and the figures favour the other version")
            base = work / f"base-{name}"
            fresh_copy(brain, base)
            add_session(base, 999, datetime.date(2029, 12, 31))
            commit_all(base, "s999")
            dream_run(code.resolve(), base, "2030-01-02T00:00:00Z")
            add_session(base, 1000, datetime.date(2030, 1, 1))
            commit_all(base, "s1000")
            bases[name] = (code.resolve(), base)
        times, trees = {"a": [], "b": []}, {}
        for _ in range(args.runs):
            for name, (code, base) in bases.items():
                brain = work / "w"
                fresh_copy(base, brain)
                times[name].append(dream_run(code, brain, "2030-01-03T00:00:00Z"))
                trees[name] = tree_outside_dream(brain)
        a, b = statistics.median(times["a"]), statistics.median(times["b"])
        print(f"A {args.code_a}: {', '.join(f'{t:.2f}' for t in times['a'])} s, median {a:.2f} s")
        print(f"B {args.code_b}: {', '.join(f'{t:.2f}' for t in times['b'])} s, median {b:.2f} s")
        print(f"B/A {b / a:.2f}; same tree outside .dream/: {'yes' if trees['a'] == trees['b'] else 'NO'}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
