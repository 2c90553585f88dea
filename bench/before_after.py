"""The speed of two versions of the code, measured in one run on this machine (bench/dream_compile.py).

  python bench/before_after.py REV [--sessions 10000] [--runs 3] [--locomo FILE]

REV (a commit, tag or branch) is unpacked into a temporary folder with `git archive`; each version
compiles its own Brains, then the same nightly run and reads are timed on each. Prints a table of
medians: LoCoMo dev's full compile (turns/s), the synthetic full compile, a nightly run adding one
session, and `brain index` and `brain search` on the compiled Brain.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from dream_compile import LOCOMO, Code, measure  # noqa: E402

ROWS = (
    ("LoCoMo dev, full compile (turns/s)", lambda r: r["locomo"]["turns_per_s"], "{:,.0f}"),
    ("LoCoMo dev, full compile (s)", lambda r: r["locomo"]["seconds"], "{:.2f}"),
    ("synthetic corpus, full compile (s)", lambda r: r["synthetic"]["seconds"], "{:.1f}"),
    ("dream run adding 1 session (s)", lambda r: r["incremental"], "{:.2f}"),
    ("brain index, whole process (s)", lambda r: r["brain index"], "{:.3f}"),
    ("brain search, whole process (s)", lambda r: r["brain search"], "{:.3f}"),
)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("rev")
    ap.add_argument("--sessions", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--locomo", type=Path, default=LOCOMO, help="LoCoMo dev file (default: ../shared/data/locomo-dev.json)")
    args = ap.parse_args()
    if not args.locomo.is_file():
        ap.error(f"{args.locomo}: no LoCoMo file there; pass --locomo FILE")
    with tempfile.TemporaryDirectory(prefix="bench-before-") as before:
        archive = subprocess.run(["git", "archive", args.rev], cwd=HERE.parent, check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", before], input=archive, check=True)
        results = {name: measure(Code(path), args.sessions, args.runs, None, args.locomo.resolve()) for name, path in (("before", Path(before)), ("after", HERE.parent))}
    print(f"\n| {args.sessions:,}-session Brain, medians of {args.runs} | before ({args.rev}) | after | after / before |")
    print("|---|---:|---:|---:|")
    for label, get, fmt in ROWS:
        b, a = get(results["before"]), get(results["after"])
        print(f"| {label} | {fmt.format(b)} | {fmt.format(a)} | {a / b:.2f}× |")


if __name__ == "__main__":
    main()
