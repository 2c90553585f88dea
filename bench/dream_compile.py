"""Dream's speed: a full offline compile of LoCoMo dev, of a synthetic corpus, and a nightly run
adding one session to it; with `brain index` and `brain search` on the compiled Brain.

  python bench/dream_compile.py [--sessions 10000] [--runs 3] [--code DIR] [--keep DIR] [--json FILE]

Every command runs as a subprocess of this interpreter with PYTHONPATH=CODE (default: this
checkout), so another checkout's code can be measured on the same machine in the same run
(bench/before_after.py does that). Prints medians; --json writes them too. --keep DIR compiles the
synthetic Brain into DIR once and reuses it while DIR holds one compiled by the same CODE.
"""

from __future__ import annotations

import argparse
import datetime as dt
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

LOCOMO = HERE.parent.parent / "shared" / "data" / "locomo-dev.json"
NOW = "2026-01-01T00:00:00Z"
MARK = ".git/bench-kept"  # which code compiled a --keep Brain (inside .git: not part of the Brain)


class Code:
    """The `brain` and `dream` of one checkout, run as `python -m` with it first on PYTHONPATH."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self.env = {**os.environ, "PYTHONPATH": str(self.root), "GIT_AUTHOR_NAME": "Bench", "GIT_AUTHOR_EMAIL": "bench@localhost",
                    "GIT_COMMITTER_NAME": "Bench", "GIT_COMMITTER_EMAIL": "bench@localhost"}
        import compileall  # as `pip install .` does: without .pyc files every process compiles the modules again

        for package in ("brain", "dream", "validators"):
            compileall.compile_dir(str(self.root / package), quiet=1)

    def timed(self, tool: str, *args: str, cwd: Path) -> float:
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", f"{tool}.cli", *args], cwd=cwd, env=self.env, check=True, capture_output=True)
        return time.perf_counter() - start


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout


def fresh_brain(code: Code, where: Path) -> Path:
    code.timed("brain", "init", str(where), cwd=where.parent)
    git(where, "config", "gc.auto", "0")  # no background repack while the bench copies the repository
    return where


def commit_all(root: Path, message: str) -> None:
    git(root, "add", "-A")
    git(root, "-c", "user.name=Bench", "-c", "user.email=bench@localhost", "commit", "-q", "--allow-empty", "-m", message)  # raw sessions are git-ignored


def turns_of(root: Path) -> int:
    return sum(sum(1 for line in p.open() if '"type":"turn"' in line) for p in (root / "sessions" / "raw").glob("*.jsonl"))


def full_compile(code: Code, where: Path, prepare) -> tuple[float, int]:
    """(seconds of the `dream run` that compiles every session, turns compiled)."""
    root = fresh_brain(code, where)
    prepare(root)
    commit_all(root, "sessions")
    seconds = code.timed("dream", "run", "--brain", str(root), "--now", NOW, cwd=root)
    return seconds, turns_of(root)


def incremental(code: Code, compiled: Path, runs: int, tmp: Path) -> list[float]:
    """Seconds of each `dream run` adding one new session to a copy of the compiled Brain."""
    out = []
    for i in range(runs):
        work = tmp / f"incremental-{i}"
        shutil.copytree(compiled, work, symlinks=True)
        make_corpus(work / "extra", 1, seed=1000 + i, start=dt.date(2030, 1, 1))
        for f in (work / "extra" / "sessions" / "raw").glob("*.jsonl"):
            shutil.move(str(f), work / "sessions" / "raw" / f.name)
        shutil.rmtree(work / "extra")
        commit_all(work, "one more session")
        os.sync()  # the copy's dirty pages are written back now, not during the timed run
        out.append(code.timed("dream", "run", "--brain", str(work), "--now", "2030-01-02T00:00:00Z", cwd=work))
        shutil.rmtree(work)
    return out


def reads(code: Code, root: Path, runs: int) -> dict[str, list[float]]:
    """Whole-process seconds of `brain index` and `brain search` (after one call that warms the search index)."""
    out = {}
    for label, args in (("brain index", ["index"]), ("brain search", ["search", "where does she work"])):
        code.timed("brain", *args, "--brain", str(root), cwd=root)
        out[label] = [code.timed("brain", *args, "--brain", str(root), cwd=root) for _ in range(runs)]
    return out


def measure(code: Code, sessions: int, runs: int, keep: Path | None, locomo: Path = LOCOMO) -> dict:
    with tempfile.TemporaryDirectory(prefix="dream-bench-") as name:
        tmp = Path(name)
        result: dict = {"code": str(code.root)}
        if locomo.is_file():
            times = []
            for i in range(runs):
                seconds, turns = full_compile(code, tmp / f"locomo-{i}",
                                              lambda r: code.timed("dream", "import", "locomo", str(locomo), "--brain", str(r), cwd=r))
                times.append(seconds)
            result["locomo"] = {"turns": turns, "seconds": statistics.median(times), "turns_per_s": turns / statistics.median(times)}
        mark = f"{sessions} sessions, code {code.root}"
        if keep is not None and (keep / MARK).is_file() and (keep / MARK).read_text() == mark:
            compiled = keep
        else:
            compiled = tmp / "synthetic"
            seconds, turns = full_compile(code, compiled, lambda r: make_corpus(r, sessions))
            result["synthetic"] = {"sessions": sessions, "turns": turns, "seconds": seconds, "turns_per_s": turns / seconds}
            if keep is not None:
                shutil.rmtree(keep, ignore_errors=True)
                shutil.copytree(compiled, keep, symlinks=True)
                (keep / MARK).write_text(mark)
                compiled = keep
        result["incremental"] = statistics.median(incremental(code, compiled, runs, tmp))
        result |= {label: statistics.median(times) for label, times in reads(code, compiled, max(runs, 5)).items()}
        return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sessions", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--code", type=Path, default=HERE.parent, help="the checkout whose code runs (default: this one)")
    ap.add_argument("--keep", type=Path, metavar="DIR", help="compile the synthetic Brain into DIR once; reuse it later")
    ap.add_argument("--json", type=Path, metavar="FILE", help="also write the figures here")
    ap.add_argument("--locomo", type=Path, default=LOCOMO, help="LoCoMo dev file (default: ../shared/data/locomo-dev.json)")
    args = ap.parse_args()
    result = measure(Code(args.code), args.sessions, args.runs, args.keep.resolve() if args.keep else None, args.locomo.resolve())
    for key, value in result.items():
        print(f"{key}: {value}")
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
