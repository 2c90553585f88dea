"""Server time of `brain serve`'s views on a large Brain, in process (starlette's TestClient, no socket).

  python bench/serve_latency.py --brain DIR [--runs 5] [--page SLUG] [--session ID]

DIR is a compiled Brain (e.g. the one `python bench/dream_compile.py --keep DIR` leaves). Each view is
timed twice: `first`, the first request of a new server (nothing kept: the pages' link graph is built,
as after a `dream run` moves HEAD), and `warm`, later requests (the graph kept per HEAD). Prints the
median and the slowest in ms. Read-only: search and context are left out, as they bring the search
index in .dream/cache/ up to date (bench/mcp_latency.py times those).
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from starlette.testclient import TestClient

from brain.web.app import build_app


def timed(client: TestClient, url: str) -> tuple[float, int]:
    start = time.perf_counter()
    response = client.get(url)
    elapsed = (time.perf_counter() - start) * 1000
    if response.status_code != 200:
        raise SystemExit(f"{url}: HTTP {response.status_code}: {response.text[:300]}")
    return elapsed, len(response.content)


def measure(brain: Path, urls: list[str], runs: int) -> dict[str, dict[str, list[float] | int]]:
    out: dict[str, dict[str, list[float] | int]] = {url: {"first": [], "warm": []} for url in urls}
    for url in urls:
        for _ in range(runs):
            with TestClient(build_app(brain, "none", hosts=("testserver",))) as client:
                ms, size = timed(client, url)
                out[url]["first"].append(ms)
                out[url]["bytes"] = size
    with TestClient(build_app(brain, "none", hosts=("testserver",))) as client:
        timed(client, urls[0])  # the graph of this HEAD is built once
        for url in urls:
            out[url]["warm"] = [timed(client, url)[0] for _ in range(runs)]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--brain", type=Path, required=True)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--page", default="owner", help="A page with many citations (the owner's, on bench/corpus.py's Brain).")
    ap.add_argument("--small-page", default="kyoto", help="A page of ordinary size.")
    ap.add_argument("--session", default=None, help="A session id (default: the first under sessions/raw/).")
    args = ap.parse_args()
    brain = args.brain.resolve()
    session = args.session or sorted((brain / "sessions" / "raw").glob("*.jsonl"))[0].stem
    urls = ["/graph.json", f"/page/{args.page}", f"/page/{args.small_page}", f"/session/{session}?turns=t1-t2", "/"]
    for url, times in measure(brain, urls, args.runs).items():
        first, warm = times["first"], times["warm"]
        print(f"{url}: first {statistics.median(first):.0f} ms (slowest {max(first):.0f}), "
              f"warm {statistics.median(warm):.0f} ms (slowest {max(warm):.0f}), {times['bytes']:,} bytes")


if __name__ == "__main__":
    main()
