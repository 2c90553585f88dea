"""Dream compile speed: LoCoMo dev, a synthetic corpus, and an incremental run next to a bare git commit.

Prints medians of several runs and ratios against baselines measured in the same run:
  python bench/dream_compile.py                       # locomo-dev + 10,000 synthetic sessions
  python bench/dream_compile.py --sessions 2000 --runs 3
  python bench/dream_compile.py --sessions 10000 --skip-locomo --keep /tmp/brain-10k   # reuse a compiled Brain

--keep DIR compiles the synthetic corpus into DIR once and reuses it on later invocations (the same
--sessions, the same code), so only the incremental part is measured again. The caches under
.dream/cache/ are keyed by a digest of the code, so after a code change the kept Brain would be
measured cold: it is compiled again instead.

--small N (default 100) also times the incremental run on an N-session Brain: what any run costs
(starting Python, imports, compiling one session), against which the large Brain's figure shows
what grows with the Brain, next to what grows for git.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from corpus import make_corpus  # noqa: E402

from brain.listing import save_listing  # noqa: E402
from dream.compile import cache_version  # noqa: E402
from dream.timing import read_timings  # noqa: E402

BIN = Path(sys.executable).parent
LOCOMO = HERE.parent.parent / "shared" / "data" / "locomo-dev.json"
NOW = "2026-01-01T00:00:00Z"
MARK = ".dream/cache/bench-kept"  # what compiled a --keep Brain


def sh(*args: str, cwd: Path | None = None) -> str:
    return subprocess.run(args, cwd=cwd, check=True, capture_output=True, text=True).stdout


def timed(*args: str, cwd: Path, env: dict[str, str] | None = None) -> float:
    start = time.perf_counter()
    subprocess.run(args, cwd=cwd, env=env, check=True, capture_output=True)
    return time.perf_counter() - start


def fresh_brain(where: Path) -> Path:
    sh(str(BIN / "brain"), "init", str(where))
    # No background `git gc --auto`: it repacks while the bench copies the repository.
    sh("git", "config", "gc.auto", "0", cwd=where)
    return where


def commit_all(root: Path, message: str) -> None:
    sh("git", "add", "-A", cwd=root)
    sh("git", "commit", "-q", "-m", message, cwd=root)


def dream_run(root: Path, now: str = NOW) -> float:
    return timed(str(BIN / "dream"), "run", "--brain", str(root), "--now", now, cwd=root)


def newest_run(root: Path) -> Path:
    return max((root / ".dream" / "runs").iterdir(), key=lambda p: p.stat().st_mtime)


def report_of(root: Path) -> dict:
    return json.loads((newest_run(root) / "report.json").read_text())


def phases_line(runs: list[dict | None]) -> str:
    """Median seconds per phase over runs' timings.json (dream.timing), in the run's order."""
    runs = [r for r in runs if r]
    if not runs:
        return "  phases: (no timings.json)"
    names = list(runs[0]["phases"])
    med = {n: statistics.median(r["phases"].get(n, 0.0) for r in runs) for n in names}
    return "  phases (median s): " + ", ".join(f"{n} {med[n]:.2f}" for n in names)


def precompile() -> None:
    """Byte-compile the installed code, as `pip install .` does: this sandbox sets
    PYTHONDONTWRITEBYTECODE, and without .pyc files every `dream` process would compile its
    ~60 modules again (about 0.2 s), which no installed copy does."""
    import compileall

    for package in ("brain", "dream", "validators"):
        compileall.compile_dir(str(HERE.parent / package), quiet=1)


def count_turns(root: Path) -> int:
    return sum(sum(1 for line in p.open() if '"type":"turn"' in line) for p in (root / "sessions" / "raw").glob("*.jsonl"))


def full_compile(label: str, prepare, runs: int, tmp: Path) -> Path:
    times, last, timings = [], None, []
    for i in range(runs):
        root = fresh_brain(tmp / f"{label}-{i}")
        prepare(root)
        commit_all(root, "sessions")
        times.append(dream_run(root))
        timings.append(read_timings(newest_run(root)))
        last = root
    turns = count_turns(last)
    rep = report_of(last)
    errors = sh(str(BIN / "brain"), "validate", "--brain", str(last), "--format", "json")
    n_errors = sum(1 for f in json.loads(errors or "[]") if f["severity"] == "error")
    med = statistics.median(times)
    print(f"{label}: {turns} turns, median {med:.2f} s over {runs} runs ({turns / med:,.0f} turns/s); "
          f"{len(rep['pages_created'])} pages, {rep['facts']} facts, {rep['notes_written']} notes, "
          f"verifier {rep['verifier']}, validator errors {n_errors}")
    print(phases_line(timings))
    return last


def add_session(root: Path, seed: int, start) -> None:
    make_corpus(root / "extra", 1, seed=seed, start=start)
    for f in (root / "extra" / "sessions" / "raw").glob("*.jsonl"):
        shutil.move(str(f), root / "sessions" / "raw" / f.name)
    shutil.rmtree(root / "extra")


def incremental(compiled: Path, runs: int, tmp: Path, label: str = "incremental") -> tuple[float, float]:
    """One new session on the compiled Brain: `dream run` vs `git add && git commit` of the same files.
    Returns the two medians."""
    dream_times, git_times, timings = [], [], []
    for i in range(runs):
        work = tmp / f"incr-{i}"
        shutil.copytree(compiled, work, symlinks=True)
        # The copy's folders are all new to the listing the compile kept (their inodes and ctimes):
        # it is kept again, untimed, as the last nightly run would have left it on the owner's disk.
        # git's stat data is refreshed for the same reason below (commit_all, and for the baseline).
        save_listing(work)
        add_session(work, seed=1000 + i, start=__import__("datetime").date(2030, 1, 1))
        commit_all(work, "one more session")
        bare = tmp / f"bare-{i}"
        shutil.copytree(work, bare, symlinks=True)
        # The two copies are ~0.5 GB of dirty pages: written back now, not during the timed commands.
        os.sync()
        dream_times.append(dream_run(work, "2030-01-02T00:00:00Z"))
        timings.append(read_timings(newest_run(work)))
        changed = sh("git", "show", "--name-only", "--format=", "HEAD", cwd=work).split()
        for rel in changed:
            (bare / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(work / rel, bare / rel)
        # The copy has new inodes and ctimes: git would re-hash every file on the first command.
        # Dream's copy had that done by commit_all above, so the baseline gets it too, untimed.
        subprocess.run(["git", "update-index", "-q", "--refresh"], cwd=bare, capture_output=True)
        start = time.perf_counter()
        subprocess.run(["git", "add", "--", *changed], cwd=bare, check=True, capture_output=True)
        subprocess.run(["git", "commit", "-q", "-m", "bare"], cwd=bare, check=True, capture_output=True)
        git_times.append(time.perf_counter() - start)
        shutil.rmtree(bare)
        shutil.rmtree(work)
    d, g = statistics.median(dream_times), statistics.median(git_times)
    # Three decimals and a ratio to two: the aim is a threshold (incremental <= 2x the bare commit).
    print(f"{label} (1 new session, {len(changed)} files changed): dream run {d:.3f} s, "
          f"bare git add+commit of the same files {g:.3f} s, ratio {d / g:.2f}x (medians of {runs})")
    print(f"  each run (s): dream {' '.join(f'{t:.3f}' for t in dream_times)}; git {' '.join(f'{t:.3f}' for t in git_times)}")
    print(phases_line(timings))
    return d, g


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sessions", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--skip-locomo", action="store_true")
    ap.add_argument("--keep", type=Path, metavar="DIR", help="compile the synthetic Brain into DIR once; reuse it later")
    ap.add_argument("--small", type=int, default=100, metavar="N",
                    help="also time the incremental run on an N-session Brain, to split the large one's time into what any "
                         "run costs and what grows with the Brain (0: skip)")
    args = ap.parse_args()
    precompile()
    with tempfile.TemporaryDirectory(prefix="dream-bench-") as tmp_name:
        tmp = Path(tmp_name)
        start = time.perf_counter()
        timed(sys.executable, "-c", "pass", cwd=tmp)
        print(f"python -c pass: {time.perf_counter() - start:.3f} s")
        if LOCOMO.is_file() and not args.skip_locomo:
            full_compile("locomo-dev", lambda r: sh(str(BIN / "dream"), "import", "locomo", str(LOCOMO), "--brain", str(r)), args.runs, tmp)
        kept = args.keep.resolve() if args.keep else None
        made_by = f"{args.sessions} sessions, code {cache_version()}"
        if kept is not None and (kept / MARK).is_file() and (kept / MARK).read_text() == made_by:
            print(f"synthetic-{args.sessions}: reusing the Brain compiled in {kept}")
            compiled = kept
        else:
            compiled = full_compile(f"synthetic-{args.sessions}", lambda r: make_corpus(r, args.sessions), max(1, args.runs if args.sessions <= 2000 else 1), tmp)
            if kept is not None:
                shutil.rmtree(kept, ignore_errors=True)
                shutil.copytree(compiled, kept, symlinks=True)
                (kept / MARK).write_text(made_by)  # in the (ignored) cache folder: not part of the Brain
        d, g = incremental(compiled, args.runs, tmp)
        if 0 < args.small < args.sessions:
            small = full_compile(f"synthetic-{args.small}", lambda r: make_corpus(r, args.small), 1, tmp)
            d0, g0 = incremental(small, args.runs, tmp, label=f"incremental on {args.small} sessions")
            # What any run costs (start, imports, one session compiled) vs what grows with the Brain.
            print(f"from {args.small} to {args.sessions} sessions the incremental run grows by {d - d0:.2f} s "
                  f"(dream) and {g - g0:.2f} s (bare git); at {args.small} sessions dream takes {d0:.2f} s, "
                  f"so {2 * g:.2f} s (2x bare at {args.sessions}) leaves {2 * g - d0:.2f} s for what grows")


if __name__ == "__main__":
    main()
