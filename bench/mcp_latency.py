"""Warm tool-call latency of `brain mcp` (search and context), through the MCP SDK's client over stdio.

  python bench/mcp_latency.py --brain DIR [--calls 30]

DIR is a compiled Brain (e.g. the one `python bench/dream_compile.py --keep DIR` leaves). The
first call of each tool warms the server (imports, the embedding model, the search index) and is
not counted; the rest are timed end to end, as the client sees them. Prints p50 and p95 in ms.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters

HERE = Path(__file__).resolve().parent
QUERIES = ["where does she work", "what did we decide about the workshop", "figures as PDF", "who is the manager",
           "which city is the conference in", "what does she prefer", "the last trip", "project deadline"]


async def measure(brain: Path, calls: int) -> dict[str, list[float]]:
    params = StdioServerParameters(command=sys.executable, args=["-m", "brain.cli", "mcp", "--brain", str(brain)],
                                   cwd=str(HERE.parent), env={"PYTHONPATH": str(HERE.parent)})
    out: dict[str, list[float]] = {"search": [], "context": []}
    async with Client(params, read_timeout_seconds=600) as client:
        for tool in out:
            for i in range(calls + 1):
                q = QUERIES[i % len(QUERIES)]
                args = {"query": q, "limit": 10} if tool == "search" else {"question": q, "budget": 1500}
                start = time.perf_counter()
                result = await client.call_tool(tool, args)
                elapsed = time.perf_counter() - start
                if result.is_error:
                    raise SystemExit(f"{tool} failed: {result.content}")
                if i:
                    out[tool].append(elapsed * 1000)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--brain", type=Path, required=True)
    ap.add_argument("--calls", type=int, default=30)
    args = ap.parse_args()
    times = anyio.run(measure, args.brain.resolve(), args.calls)
    for tool, ms in times.items():
        p95 = statistics.quantiles(ms, n=20)[-1]
        print(f"{tool}: p50 {statistics.median(ms):.0f} ms, p95 {p95:.0f} ms ({len(ms)} warm calls)")


if __name__ == "__main__":
    main()
