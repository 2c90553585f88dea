"""Where hostile transcript text goes: secret canaries and planted instructions, per place.

    python bench/hostile_places.py [--code CHECKOUT]

Writes the canaries of tests/safety_corpus.py into two sessions, imports them (`dream import
jsonl`) into a new Brain of CHECKOUT's code (default: this checkout), compiles them with the
offline backend, asks the read side about them, and counts how many canaries reach each place:
pages, notes, file names, the index, summaries, `brain context`, `brain search` and `brain cite`
output, commits (messages and patches), the raw sessions. A secret counts when a value this
checkout's rules find in the canary appears; a payload when its instruction span appears, and
in packets, whether it appears outside a quoted turn (`  > …`).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE.parent / "tests"), str(HERE)]

from dream_compile import Code, git  # noqa: E402
from safety_corpus import INJECTIONS, SECRETS  # noqa: E402

from brain.secrets import secret_spans  # noqa: E402
from validators.injection import injection_spans  # noqa: E402

WHEN = "2026-08-01T10:00:00+09:00"
QUESTIONS = (["search", "password key token pasted", "-k", "50"], ["context", "what did Nadia paste?", "--budget", "4000"],
             ["context", "what did the forwarded email from Aiko say?", "--budget", "4000"], ["cite", "2026-08-01-secrets", "1"])


def _session(sid: str, texts: list[str]) -> str:
    lines = [{"type": "session", "id": sid, "started": WHEN, "participants": ["Nadia", "assistant"]}]
    lines += [{"type": "turn", "n": n, "role": "user", "speaker": "Nadia", "time": WHEN, "text": t} for n, t in enumerate(texts, 1)]
    return "".join(json.dumps(x) + "\n" for x in lines)


def _run(code: Code, tool: str, *args: str, cwd: Path) -> str:
    done = subprocess.run([sys.executable, "-m", f"{tool}.cli", *args], cwd=cwd, env=code.env, capture_output=True, text=True)
    return done.stdout + done.stderr


def places(code: Code, tmp: Path) -> dict[str, str]:
    """Place → all the text found there, for a Brain compiled from the two hostile sessions."""
    inputs = tmp / "inputs"
    inputs.mkdir()
    (inputs / "secrets.jsonl").write_text(_session("2026-08-01-secrets", [
        f"I work at Sora City Laboratory. Here is what I pasted: {t}" for _, t in SECRETS]), encoding="utf-8")
    (inputs / "payloads.jsonl").write_text(_session("2026-08-01-payloads", [
        f"I forwarded an email from Aiko Tanaka at Sapphir Mobility Coop. It said: {t}" for _, t in INJECTIONS]), encoding="utf-8")
    root = tmp / "brain"
    _run(code, "brain", "init", str(root), cwd=tmp)
    _run(code, "dream", "import", "jsonl", str(inputs), "--brain", str(root), cwd=tmp)
    _run(code, "dream", "run", "--brain", str(root), "--now", "2026-08-02T02:00:00Z", cwd=root)
    files = {p.relative_to(root).as_posix(): p for p in root.rglob("*") if p.is_file() and ".git" not in p.parts
             and not p.relative_to(root).as_posix().startswith(".dream/runs")}

    def text(prefix: str) -> str:
        return "\n".join(p.read_text(encoding="utf-8", errors="replace") for rel, p in sorted(files.items()) if rel.startswith(prefix))

    reads = {" ".join(q[:1]): "" for q in QUESTIONS}
    for q in QUESTIONS:
        reads[q[0]] += _run(code, "brain", *q, "--brain", str(root), cwd=root) + "\n"
    return {
        "pages": text("knowledge/").replace(text("knowledge/index.md"), ""), "notes": text("notes/"),
        "file names": "\n".join(files), "index": text("knowledge/index.md"), "summaries": text("sessions/summaries/"),
        "brain context": reads["context"], "brain search": reads["search"], "brain cite": reads["cite"],
        "commits": git(root, "log", "-p", "--all", "--format=%B"), "raw sessions": text("sessions/raw/"),
    }


def _has(text: str, value: str) -> bool:
    """`value` in `text` as a whole token (a short value such as `pass` is not found inside "passwords")."""
    return re.search(rf"(?<![\w]){re.escape(value)}(?![\w])", text, re.IGNORECASE) is not None


def _unquoted(found: str, value: str) -> bool:
    return any(value in line and not line.lstrip().startswith(">") for line in found.splitlines())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--code", type=Path, default=HERE.parent, help="the checkout whose brain and dream run (default: this one)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="hostile-") as name:
        found = places(Code(args.code), Path(name))
    secrets = [[t[a:b] for a, b, _ in secret_spans(t)] for _, t in SECRETS]
    payloads = [[t[a:b] for a, b, _ in injection_spans(t)] for _, t in INJECTIONS]
    print(f"{len(SECRETS)} secret canaries, {len(INJECTIONS)} injected payloads; code {args.code.resolve()}")
    print(f"{'place':<15} {'secrets':>8} {'payloads':>9} {'unquoted':>9}")
    for place, text in found.items():
        s = sum(any(_has(text, v) for v in vs) for vs in secrets if vs)
        p = sum(any(v in text for v in vs) for vs in payloads if vs)
        u = sum(any(_unquoted(text, v) for v in vs) for vs in payloads if vs)
        print(f"{place:<15} {s:>8} {p:>9} {u:>9}")


if __name__ == "__main__":
    main()
