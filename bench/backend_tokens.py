"""Tokens a model-backed Dream run sends and receives, measured on the wire of a loopback stub.

Compiles the Nadia fixture (15 sessions) with `dream run --backend anthropic` (or openai) through
the real client, pointed at the stub server of tests/dream/stubs.py, which answers like the
offline backend. Then grows one session by two turns and runs again (the nightly steady state).
For every request it reads the request body and the reply body and estimates tokens with the
project's estimator, ceil(chars / 3.5) (brain/tokens.py):
  input   = tools JSON + system text + message contents the request carries
  prefix  = the part before the cache breakpoint (tools + system: skill, instructions, index)
  output  = the answer the reply carries (tool input JSON, or message text)
and prints them per request, per session and per new turn, with the cached-prefix share.

  python bench/backend_tokens.py                  # anthropic wire format, tables
  python bench/backend_tokens.py --backend openai
  python bench/backend_tokens.py --requests       # also one line per request
  python bench/backend_tokens.py --json           # everything as JSON

No real model is called: the stub runs on 127.0.0.1 and answers with the offline backend.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "dream")]

from brain.tokens import estimate_tokens  # noqa: E402
from stubs import Stub  # noqa: E402

NOW = ("2026-07-15T02:00:00Z", "2026-07-16T02:00:00Z")
GROWN = "2026-07-14-report-figures"
NEW_TURNS = [
    ("user", "Priya Natarajan reviewed the final JUDS report draft and asked for larger figure labels."),
    ("assistant", "Noted: Priya wants larger figure labels in the final JUDS report."),
]


def nadia_brain(dest: Path) -> Path:
    import shutil

    from brain.repo import BrainRepo
    from brain.scaffold import init_brain
    from dream.demo import INPUTS, persona_dir

    init_brain(dest)
    for rel in INPUTS:
        src, dst = persona_dir() / rel, dest / rel
        if src.is_dir():
            shutil.copytree(src, dst, dirs_exist_ok=True)
        elif src.is_file():
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, dst)
    BrainRepo(dest).commit_all("Nadia's inputs")
    return dest


def grow(root: Path) -> None:
    """Append two turns to the last session (turns are never renumbered; the session is 'grown')."""
    path = root / "sessions/raw" / f"{GROWN}.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    last = json.loads(lines[-1])["n"]
    for i, (role, text) in enumerate(NEW_TURNS, 1):
        turn = {"type": "turn", "n": last + i, "role": role, "speaker": "Nadia" if role == "user" else "assistant", "text": text}
        if role == "user":
            turn["time"] = "2026-07-15T21:00:00+09:00"
        lines.append(json.dumps(turn))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def measure(kind: str, seen: list, first: int) -> list[dict]:
    """One row per request from `first` on: task, unit, input/prefix/output tokens."""
    rows = []
    for s in seen[first:]:
        body, reply = s.body, s.reply or {}
        if kind == "anthropic":
            system = "".join(b["text"] for b in body["system"])
            prefix = json.dumps(body["tools"]) + system
            messages = "".join(m["content"] if isinstance(m["content"], str) else json.dumps(m["content"]) for m in body["messages"])
            answer = next((json.dumps(b["input"]) for b in reply.get("content", []) if b.get("type") == "tool_use"), "")
        else:
            prefix = body["messages"][0]["content"]  # the system message: OpenAI caches a repeated prefix itself
            messages = "".join(m["content"] for m in body["messages"][1:]) + json.dumps(body.get("response_format", ""))
            answer = reply["choices"][0]["message"]["content"] if reply else ""
        user = body["messages"][0 if kind == "anthropic" else 1]["content"]
        m = re.search(r'<session id="([^"]+)"', user) or re.search(r'"slug":"([^"]+)"', user) or re.search(r"<page>\n# ([^\n]+)", user)
        rows.append({
            "task": s.task,
            "unit": m.group(1) if m else "",
            "input": estimate_tokens(prefix + messages),
            "prefix": estimate_tokens(prefix),
            "output": estimate_tokens(answer),
            "turns": len(re.findall(r"<turn n=", user)),
        })
    return rows


def summarise(rows: list[dict], turns: dict[str, int]) -> dict:
    by_task: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        by_task[r["task"]].append(r)
    tasks = {}
    for task, rs in sorted(by_task.items()):
        shares = [r["prefix"] / r["input"] for r in rs]
        tasks[task] = {
            "requests": len(rs), "input": sum(r["input"] for r in rs), "output": sum(r["output"] for r in rs),
            "prefix": sum(r["prefix"] for r in rs), "prefix_share_median": statistics.median(shares),
            "prefix_share_min": min(shares), "prefix_share_max": max(shares),
        }
    sessions = {}
    for sid, n in sorted(turns.items()):
        rs = [r for r in rows if r["unit"] == sid and r["task"] in ("summarize", "extract_facts")]
        if not rs:
            continue
        inp, out, fresh = sum(r["input"] for r in rs), sum(r["output"] for r in rs), sum(r["input"] - r["prefix"] for r in rs)
        sessions[sid] = {"new_turns": n, "requests": len(rs), "input": inp, "output": out, "fresh_input": fresh,
                         "input_per_turn": inp / n, "fresh_input_per_turn": fresh / n, "output_per_turn": out / n}
    total_turns = sum(turns.values())
    total = {k: sum(r[k] for r in rows) for k in ("input", "output", "prefix")}
    total.update(requests=len(rows), new_turns=total_turns, input_per_turn=total["input"] / total_turns,
                 fresh_input_per_turn=(total["input"] - total["prefix"]) / total_turns, output_per_turn=total["output"] / total_turns,
                 prefix_share=total["prefix"] / total["input"])
    return {"tasks": tasks, "sessions": sessions, "total": total}


def compile_nadia(kind: str) -> dict:
    from dream.backends import get_backend
    from dream.run import run
    from dream.settings import RunFlags, load_settings

    stub = Stub(kind)
    work = Path(tempfile.mkdtemp(prefix="bench-backend-tokens-"))
    root = nadia_brain(work / "nadia")
    if kind == "anthropic":
        os.environ.update(ANTHROPIC_API_KEY="bench-key-not-real", ANTHROPIC_BASE_URL=stub.base_url)
    else:
        os.environ["OPENAI_API_KEY"] = "bench-key-not-real"
    results = []
    try:
        for label, now in zip(("first run (all 15 sessions new)", f"second run ({GROWN} grown by {len(NEW_TURNS)} turns)"), NOW):
            if results:
                grow(root)
            start = len(stub.seen)
            settings = load_settings(root, RunFlags(backend=kind, now=now))
            if kind == "openai":
                settings = settings.model_copy(update={"llm": settings.llm.model_copy(update={"base_url": stub.base_url, "model": "local-model"})})
            report = run(settings, get_backend(kind, settings.llm))
            rows = measure(kind, stub.seen, start)
            turns = {}
            for r in rows:
                if r["task"] == "extract_facts":  # its prompt shows the new turns (and up to 2 turns of context)
                    turns[r["unit"]] = r["turns"]
            if results:
                turns = {GROWN: len(NEW_TURNS)}
            results.append({"run": label, "report_tokens": [report.tokens_in, report.tokens_out, report.cache_read_tokens, report.cache_write_tokens],
                            "summary": summarise(rows, turns), "requests": rows})
    finally:
        stub.close()
    return {"backend": kind, "runs": results}


def print_tables(data: dict, show_requests: bool) -> None:
    print(f"Dream over the Nadia fixture, backend {data['backend']}, through a loopback stub (no real model was called).")
    print("Tokens are estimated from the request and reply bodies as ceil(chars / 3.5).\n")
    for run in data["runs"]:
        s = run["summary"]
        t = s["total"]
        print(f"== {run['run']}: {t['requests']} requests, {t['new_turns']} new turns")
        print(f"   total: {t['input']:,} in ({t['prefix']:,} = {t['prefix_share']:.0%} cached prefix), {t['output']:,} out")
        print(f"   per new turn: {t['input_per_turn']:,.0f} in, of which {t['fresh_input_per_turn']:,.0f} outside the cached prefix; {t['output_per_turn']:,.0f} out")
        print(f"   {'task':<14}{'requests':>9}{'input':>10}{'output':>9}{'prefix share (min/median/max)':>34}")
        for task, v in s["tasks"].items():
            share = f"{v['prefix_share_min']:.0%} / {v['prefix_share_median']:.0%} / {v['prefix_share_max']:.0%}"
            print(f"   {task:<14}{v['requests']:>9}{v['input']:>10,}{v['output']:>9,}{share:>34}")
        print(f"   {'session (summarize + extract_facts)':<38}{'turns':>6}{'in':>8}{'out':>7}{'in/turn':>9}{'fresh/turn':>11}{'out/turn':>9}")
        for sid, v in s["sessions"].items():
            print(f"   {sid:<38}{v['new_turns']:>6}{v['input']:>8,}{v['output']:>7,}{v['input_per_turn']:>9,.0f}{v['fresh_input_per_turn']:>11,.0f}{v['output_per_turn']:>9,.0f}")
        if show_requests:
            print(f"   {'#':>4} {'task':<14}{'unit':<38}{'in':>7}{'prefix':>8}{'share':>7}{'out':>6}")
            for i, r in enumerate(run["requests"], 1):
                print(f"   {i:>4} {r['task']:<14}{r['unit'][:37]:<38}{r['input']:>7,}{r['prefix']:>8,}{r['prefix'] / r['input']:>7.0%}{r['output']:>6,}")
        print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--backend", choices=("anthropic", "openai"), default="anthropic")
    parser.add_argument("--requests", action="store_true", help="also print one line per request")
    parser.add_argument("--json", action="store_true", help="print everything as JSON")
    args = parser.parse_args()
    for name in [n for n in os.environ if n.startswith(("ANTHROPIC_", "OPENAI_"))]:
        del os.environ[name]  # never a real key or server
    data = compile_nadia(args.backend)
    if args.json:
        print(json.dumps(data, indent=1))
    else:
        print_tables(data, args.requests)


if __name__ == "__main__":
    main()
