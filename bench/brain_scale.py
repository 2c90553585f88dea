"""Scale benchmark: `brain validate`, `brain index`, `brain search` and `brain context` on a large Brain.

Generates (seeded, so byte-identical for one seed) a Brain of PAGES pages across every type, with
wikilinks and session citations, and SESSIONS canonical sessions of ~10 turns, commits it in git,
then runs each command once to warm its caches and RUNS times as a subprocess, and prints the
median wall and CPU times next to `python -c pass` (CPU time is the steadier figure on a shared
machine). Usage:

    .venv/bin/python bench/brain_scale.py [--pages 5000] [--sessions 10000] [--runs 5] [--out DIR]
                                          [--seed 7] [--profile] [--brain DIR] [--code DIR]

--out keeps the generated Brain (an existing one with the same sizes and seed is reused);
--brain times an existing Brain instead, e.g. the Dream-compiled 10,000-session Brain that
`bench/dream_compile.py --keep DIR` leaves (its 46,000 notes are what the generated one lacks);
--code runs another checkout's code (e.g. `git worktree add /tmp/old <commit>`), to compare
versions on the same Brain (one after the other: each keeps caches the other does not trust);
--profile also runs `brain validate` once under cProfile and prints where the time goes.
"""

from __future__ import annotations

import argparse
import cProfile
import datetime as dt
import io
import json
import os
import pstats
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from brain import layout  # noqa: E402
from brain.render import render_knowledge_index  # noqa: E402
from brain.tree import DirTree  # noqa: E402
from brain.view import BrainView  # noqa: E402

TYPE_WEIGHTS = {"person": 30, "organization": 10, "place": 5, "project": 10, "concept": 25,
                "preference": 5, "learning": 10, "event": 5}
WORDS = (
    "station access ramp tactile paving signage audio guide workshop report figure survey interview "
    "budget partner schedule venue transit elevator platform gap wheelchair caption contrast font "
    "reader heading layout pilot review draft feedback study result method sample city lab coop "
    "route map ticket gate staff training policy standard guideline test prototype sensor bench"
).split()
NAMES = "Aiko Kenji Nadia Priya Samuel Greta Hana Ravi Lena Omar Yuki Mateo Sara Ivan Noor Tomas".split()
MARK = ".bench.json"


def sentence(rng: random.Random, n: int = 12) -> str:
    words = [rng.choice(WORDS) for _ in range(n)]
    return " ".join(words).capitalize() + "."


def session_ids(count: int) -> list[str]:
    start = dt.date(2024, 1, 1)
    return [f"{start + dt.timedelta(days=i * 730 // count)}-s{i:05d}" for i in range(count)]


def write_session(root: Path, sid: str, rng: random.Random) -> int:
    turns = rng.randint(6, 14)
    started = f"{sid[:10]}T09:00:00+09:00"
    who = rng.choice(NAMES)
    lines = [json.dumps({"type": "session", "id": sid, "started": started, "source": "chat",
                         "participants": [who, "assistant"]}, separators=(",", ":"))]
    for n in range(1, turns + 1):
        user = n % 2 == 1
        turn = {"type": "turn", "n": n, "role": "user" if user else "assistant",
                "speaker": who if user else "assistant", "text": " ".join(sentence(rng) for _ in range(rng.randint(1, 3)))}
        if user:
            turn["time"] = f"{sid[:10]}T09:{min(n, 59):02d}:00+09:00"
        lines.append(json.dumps(turn, separators=(",", ":")))
    path = root / layout.raw_session_path(sid)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return turns


def plan_pages(count: int, rng: random.Random) -> list[tuple[str, str, str]]:
    """(type, slug, title) for every page; slugs unique across types."""
    types = rng.choices(list(TYPE_WEIGHTS), weights=list(TYPE_WEIGHTS.values()), k=count)
    out = []
    for i, page_type in enumerate(types):
        words = [rng.choice(WORDS), rng.choice(WORDS)]
        title = f"{rng.choice(NAMES)} {words[0].capitalize()} {i}" if page_type == "person" else f"{words[0].capitalize()} {words[1]} {i}"
        out.append((page_type, layout.slugify(title), title))
    return out


def write_page(root: Path, plan: list, i: int, sessions: list[tuple[str, int]], rng: random.Random) -> None:
    page_type, slug, title = plan[i]
    created = dt.date(2024, 1, 1) + dt.timedelta(days=rng.randint(0, 600))
    updated = created + dt.timedelta(days=rng.randint(0, 120))
    sources: dict[int, str] = {}
    paragraphs = [f"# {title}", ""]
    for _ in range(rng.randint(3, 8)):
        sid, turns = rng.choice(sessions)
        first = rng.randint(1, turns)
        last = min(turns, first + rng.randint(0, 2))
        n = len(sources) + 1
        sources[n] = f"session:{sid}#t{first}" + (f"-t{last}" if last != first else "")
        # Preferential attachment: earlier pages collect more links, like hubs in a real Brain.
        target = plan[min(int(rng.paretovariate(1.2)) - 1, len(plan) - 1) if rng.random() < 0.5 else rng.randrange(len(plan))]
        link = f" with [[{target[1]}|{target[2]}]]" if target[1] != slug else ""
        paragraphs.append(f"{sentence(rng, 10)[:-1]}{link} [cite:{n}].")
    paragraphs.append("")
    aliases = f"aliases: [{title.upper()}]\n" if rng.random() < 0.1 else ""
    fm = (f"---\ntitle: {title}\ntype: {page_type}\n{aliases}summary: {sentence(rng, 8)}\n"
          f"created: {created}\nupdated: {updated}\nsources:\n"
          + "".join(f"  {n}: {t}\n" for n, t in sources.items()) + "---\n")
    path = root / layout.page_path(page_type, slug)
    path.write_text(fm + "\n".join(paragraphs), encoding="utf-8")


def generate(root: Path, pages: int, sessions: int, seed: int) -> None:
    """A committed Brain with `pages` pages and `sessions` sessions; deterministic for a seed."""
    rng = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True)
    for folder in [layout.SESSIONS_RAW, layout.SESSIONS_SUMMARIES, layout.DREAM_DIR, *map(layout.folder_for, layout.PAGE_TYPES)]:
        (root / folder).mkdir(parents=True, exist_ok=True)
    ids = session_ids(sessions)
    turns = [(sid, write_session(root, sid, rng)) for sid in ids]
    plan = plan_pages(pages, rng)
    for i in range(pages):
        write_page(root, plan, i, turns, rng)
    (root / layout.CONFIG).write_text('owner = "Bench Owner"\n', encoding="utf-8")
    (root / layout.GUIDE).write_text("# Guide\n\nA generated Brain for benchmarks.\n", encoding="utf-8")
    (root / layout.KNOWLEDGE_LOG).write_text("# Log\n", encoding="utf-8")
    (root / layout.SESSIONS_INDEX).write_text("# Sessions\n", encoding="utf-8")
    (root / ".gitignore").write_text(".dream/runs/\n.dream/cache/\n.dream/lock\n", encoding="utf-8")
    (root / layout.KNOWLEDGE_INDEX).write_text(render_knowledge_index(BrainView(DirTree(root)).pages), encoding="utf-8")
    env = {**os.environ, "GIT_AUTHOR_NAME": "Bench", "GIT_AUTHOR_EMAIL": "bench@localhost",
           "GIT_COMMITTER_NAME": "Bench", "GIT_COMMITTER_EMAIL": "bench@localhost",
           "GIT_AUTHOR_DATE": "2026-01-01T00:00:00+00:00", "GIT_COMMITTER_DATE": "2026-01-01T00:00:00+00:00"}
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "bench Brain"]):
        subprocess.run(["git", *args], cwd=root, env=env, check=True)
    (root / ".git" / MARK).write_text(json.dumps({"pages": pages, "sessions": sessions, "seed": seed}), encoding="utf-8")


def precompile(code: Path) -> None:
    """Byte-compile the code that runs, as `pip install .` does: this sandbox sets
    PYTHONDONTWRITEBYTECODE, and without .pyc files every command would compile its modules
    again (about 0.2 s), which no installed copy does."""
    import compileall

    for package in ("brain", "dream", "validators"):
        compileall.compile_dir(str(code / package), quiet=1)


def median_time(cmd: list[str], runs: int, env: dict[str, str], cwd: Path = REPO) -> tuple[float, float, int]:
    """Median wall time, median CPU time (user + sys, steadier on a busy machine), last exit code.
    `cwd`: where the command runs (`python -m` imports from there first)."""
    walls, cpus, code = [], [], 0
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        code = subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
        walls.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return statistics.median(walls), statistics.median(cpus), code


def profile_validate(root: Path, top: int = 30) -> str:
    from validators import run_checks  # noqa: PLC0415

    prof = cProfile.Profile()
    prof.enable()
    findings = run_checks(BrainView(DirTree(root)))
    prof.disable()
    out = io.StringIO()
    stats = pstats.Stats(prof, stream=out).strip_dirs().sort_stats("cumulative")
    stats.print_stats(top)
    stats.sort_stats("tottime").print_stats(top)
    return f"{len(findings)} findings\n" + out.getvalue()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=5000)
    parser.add_argument("--sessions", type=int, default=10000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", type=Path, default=None, help="keep the Brain here (reused when it matches)")
    parser.add_argument("--profile", action="store_true", help="also profile brain validate in-process")
    parser.add_argument("--brain", type=Path, default=None, help="time this existing Brain instead of a generated one")
    parser.add_argument("--code", type=Path, default=REPO, help="the checkout whose code runs (default: this one)")
    args = parser.parse_args()

    tmp = None
    root = (args.brain or args.out).resolve() if (args.brain or args.out) else Path(tmp := tempfile.mkdtemp(prefix="brain-bench-")) / "brain"
    want = {"pages": args.pages, "sessions": args.sessions, "seed": args.seed}
    mark = root / ".git" / MARK
    try:
        if args.brain:
            print(f"timing {root}")
        elif mark.is_file() and json.loads(mark.read_text()) == want:
            print(f"reusing {root}")
        else:
            if root.exists():
                shutil.rmtree(root)
            start = time.perf_counter()
            generate(root, args.pages, args.sessions, args.seed)
            print(f"generated {args.pages} pages and {args.sessions} sessions in {root} ({time.perf_counter() - start:.1f} s)")
        code_dir = args.code.resolve()
        precompile(code_dir)
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(code_dir), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
        brain = [sys.executable, "-m", "brain.cli"]
        rows = [("python -c pass", [sys.executable, "-c", "pass"]),
                ("brain --help", [*brain, "--help"]),
                ("brain validate", [*brain, "validate", "--brain", str(root)]),
                ("brain index", [*brain, "index", "--brain", str(root)]),
                ("brain index --budget 0", [*brain, "index", "--budget", "0", "--brain", str(root)]),
                ("brain search", [*brain, "search", "where does she work", "--brain", str(root)]),
                ("brain context", [*brain, "context", "where does she work", "--budget", "1500", "--brain", str(root)])]
        subprocess.run(["git", "update-index", "-q", "--refresh"], cwd=root, capture_output=True)  # a copied Brain: git's stat cache
        base = None
        print(f"code: {code_dir}")
        print(f"\n{'command':<24}{'wall':>9}{'× python':>10}{'cpu':>9}{'× python':>10}  exit   (medians of {args.runs} runs, after one to warm caches)")
        for label, cmd in rows:
            median_time(cmd, 1, env, code_dir)
            wall, cpu, code = median_time(cmd, args.runs, env, code_dir)
            base = base or (wall, cpu)
            print(f"{label:<24}{wall:>8.3f}s{wall / base[0]:>9.1f}×{cpu:>8.3f}s{cpu / base[1]:>9.1f}×  {code}")
        if args.profile:
            print("\n" + profile_validate(root))
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
