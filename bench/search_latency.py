"""Search latency on a large Brain: index build, no-op update, and warm query times of `brain search`.

Generates (seeded) a Brain with ~100,000 raw turns — SESSIONS sessions of 6-14 turns between the
owner and a friend, words drawn from a Zipf-distributed vocabulary of 20,000 made-up words (as in
real text, a few words are in most turns and most words are rare) — plus PAGES pages from
bench/brain_scale.py's generator, then measures, in one process:
  * cold build of .dream/cache/search.sqlite3 (chunking, FTS5, wordllama vectors);
  * re-opening an up-to-date index (every file stat-ed, nothing re-read);
  * warm queries (index open, model loaded): p50 / p95 — hybrid, lexical only (no embedder), hybrid over turns only;
  * the baseline, measured in the same run: a linear scan of every turn's text for the query words
    (what grep over sessions/raw does), and `python -c pass`-style CLI start for one-shot calls;
  * one-shot `brain search`, `brain context` and `brain index` as subprocesses (start-up + model
    load + freshness check + the command), the first call apart: it builds the caches the others reuse.
Usage:

    .venv/bin/python bench/search_latency.py [--sessions 10000] [--pages 2000] [--queries 200] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import os
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

from bench.brain_scale import MARK, NAMES, generate  # noqa: E402
from brain.search import Searcher, query_terms  # noqa: E402


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def timed(fn):
    w, c = time.perf_counter(), cpu()
    out = fn()
    return out, time.perf_counter() - w, cpu() - c


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))]


SYLLABLES = "ka lo mi ne ru sa te vo zi ba de fu go hi ja ku le mo na pi ro su ta wu ye".split()
VOCAB_SIZE = 20_000


def vocabulary(rng: random.Random) -> tuple[list[str], list[float]]:
    """20,000 made-up words and their Zipf weights (rank r has weight 1 / r)."""
    words: set[str] = set()
    while len(words) < VOCAB_SIZE:
        words.add("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))))
    ordered = sorted(words)
    rng.shuffle(ordered)
    weights = [1.0 / r for r in range(1, VOCAB_SIZE + 1)]
    return ordered, list(__import__("itertools").accumulate(weights))


def write_sessions(root: Path, sessions: int, seed: int) -> None:
    """Replace the generated sessions with Zipf-worded conversations between two people."""
    rng = random.Random(seed)
    words, cum = vocabulary(rng)
    raw = root / "sessions" / "raw"
    for path in raw.glob("*.jsonl"):
        sid = path.stem
        me, friend = rng.sample(NAMES, 2)
        lines = [json.dumps({"type": "session", "id": sid, "started": f"{sid[:10]}T09:00:00", "source": "chat",
                             "participants": [me, friend]})]
        for n in range(1, rng.randint(6, 14) + 1):
            text = " ".join(rng.choices(words, cum_weights=cum, k=rng.randint(8, 40))).capitalize() + "."
            lines.append(json.dumps({"type": "turn", "n": n, "role": "user", "speaker": me if n % 2 else friend,
                                     "time": f"{sid[:10]}T09:{min(n, 59):02d}:00", "text": text}))
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def queries(n: int, seed: int) -> list[str]:
    """Questions of 2-5 content words from the same Zipf vocabulary, with a person's name half of the time.

    The 100 most frequent made-up words play English's function words, which the query parser
    drops as stopwords; content words are drawn from the ranks after them, still Zipf-weighted.
    """
    rng = random.Random(seed)
    words, cum = vocabulary(random.Random(seed))
    words, cum = words[100:], [c - cum[99] for c in cum[100:]]
    out = []
    for _ in range(n):
        picked = rng.choices(words, cum_weights=cum, k=rng.randint(2, 5))
        name = f"{rng.choice(NAMES)} " if rng.random() < 0.5 else ""
        out.append(f"What did {name}say about {' '.join(picked)}?")
    return out


def scan_baseline(root: Path, qs: list[str]) -> list[float]:
    """Linear scan: every turn's text, lower-cased once, checked for each query word."""
    texts = []
    for path in sorted((root / "sessions" / "raw").glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines()[1:]:
            texts.append(json.loads(line)["text"].lower())
    times = []
    for q in qs:
        terms = query_terms(q)
        t = time.perf_counter()
        scored = sorted(((sum(w in x for w in terms), i) for i, x in enumerate(texts)), reverse=True)[:10]
        times.append(time.perf_counter() - t)
        assert scored is not None
    return times


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sessions", type=int, default=10_000)
    ap.add_argument("--pages", type=int, default=2_000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--out", type=Path, default=None, help="keep (and reuse) the generated Brain here")
    args = ap.parse_args()
    tmp = tempfile.TemporaryDirectory(prefix="search-bench-")
    root = args.out or Path(tmp.name) / "brain"
    mark = root / ".git" / MARK
    want = {"pages": args.pages, "sessions": args.sessions, "seed": args.seed, "zipf": VOCAB_SIZE}
    if not (mark.is_file() and json.loads(mark.read_text()) == want):
        def make() -> None:
            generate(root, args.pages, args.sessions, args.seed)
            write_sessions(root, args.sessions, args.seed)
            mark.write_text(json.dumps(want), encoding="utf-8")

        _, wall, _ = timed(make)
        print(f"generated {args.sessions} sessions and {args.pages} pages in {wall:.1f} s")
    cache = root / ".dream" / "cache" / "search.sqlite3"
    if cache.exists():
        cache.unlink()
    for derived in ("search-vectors", "brain-cards"):  # cold: the one-shot rows measure their first build too
        shutil.rmtree(root / ".dream" / "cache" / derived, ignore_errors=True)

    searcher, wall, cpu_s = timed(lambda: Searcher.open(root, embedder="auto"))
    stats = searcher.index.stats
    turns = sum(1 for _ in searcher.index.conn.execute("SELECT 1 FROM chunks WHERE kind = 'turn'"))
    print(f"brain: {turns:,} turns, {stats.chunks:,} chunks, {stats.files:,} files; embedder {stats.embedder}")
    print(f"cold index build:    {wall:7.2f} s wall, {cpu_s:7.2f} s CPU  ({cache.stat().st_size / 1e6:.0f} MB)")
    searcher.close()
    reopen = [timed(lambda: Searcher.open(root, embedder="auto"))[1:] for _ in range(3)]
    print(f"no-op update (open): {statistics.median(w for w, _ in reopen):7.3f} s wall (median of 3)")

    searcher = Searcher.open(root, embedder="auto")
    lexical_only = Searcher.open(root, embedder=None)
    qs = queries(args.queries, args.seed)
    searcher.search(qs[0])  # loads the vector matrix once per process (cached by index generation)
    rows = {}
    for name, fn in (
        ("hybrid", lambda q: searcher.search(q, k=10)),
        ("lexical", lambda q: lexical_only.search(q, k=10)),
        ("hybrid, turns only", lambda q: searcher.search(q, k=10, kinds=("turn",))),
    ):
        times = []
        for q in qs:
            _, w, _ = timed(lambda: fn(q))
            times.append(w)
        rows[name] = times
    rows["baseline: linear scan"] = scan_baseline(root, qs)
    base = statistics.median(rows["baseline: linear scan"])
    print(f"\nwarm queries ({len(qs)}, k=10)        p50 ms   p95 ms   vs scan")
    for name, times in rows.items():
        p50 = statistics.median(times)
        print(f"  {name:<30} {1000 * p50:7.2f}  {1000 * pct(times, 0.95):7.2f}   {p50 / base:6.3f}x")

    env = {**os.environ, "PYTHONPATH": str(REPO)}
    t = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    start = time.perf_counter() - t
    print(f"\none-shot commands (subprocess, 6 calls; python -c pass: {start:.2f} s):")
    for label, argv in (
        ("brain search QUERY", lambda q: ["search", q]),
        ("brain context QUERY --budget 1000", lambda q: ["context", q, "--budget", "1000"]),
        ("brain index", lambda q: ["index"]),
    ):
        one_shot = []
        for q in qs[:6]:
            t = time.perf_counter()
            subprocess.run([sys.executable, "-m", "brain.cli", *argv(q), "--brain", str(root)], env=env, check=True, capture_output=True)
            one_shot.append(time.perf_counter() - t)
        # The first call of each builds what later calls reuse (vector snapshot, document cards).
        print(f"  {label:<36} first {one_shot[0]:5.2f} s, then median {statistics.median(one_shot[1:]):5.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
