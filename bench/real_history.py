"""#52's figures for Claude Code histories: is the Brain of a real project worth reading?

    python bench/real_history.py [--code CHECKOUT] [PROJECT_FOLDER ...]   (default: ../shared/data/claude-code/projects/*)

Per project folder (~/.claude/projects/<name>), in a new Brain with the offline backend: whether a
project page exists; how many of the 3 files the transcripts edit most that page names; the share
of sessions (with a request) whose summary carries the user's request; lines of transcript markup
in pages, summaries and `brain index`; placeholder pages; paths, URLs and code spans on pages that
are not verbatim in the sources; the share of code-like bullets.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent)]

from dream.sanitize import strip_agent_markup  # noqa: E402
from dream.text.coding import request_of  # noqa: E402

DATA = HERE.parent.parent / "shared" / "data" / "claude-code" / "projects"
MARKUP_RE = re.compile(r"<(?:command-|ide_|system-reminder|local-command)|\[tool: ")
PLACEHOLDER = "mentioned in sessions"
TOKEN_RE = re.compile(r"`([^`\n]+)`|(https?://\S+?)(?=[)\s,]|$)|((?:~|\.{0,2})/[\w./-]+)")
CODE_BULLET_RE = re.compile(r"^- (?:\d{4}-\d{2}-\d{2}: )?.*(?:[{};]|\(\)|=\s|\$ |<<|&&)")
EDIT_RE = re.compile(r'"name":"(?:Edit|MultiEdit|Write|NotebookEdit)","input":\{"file_path":"([^"]+)"')


CODE = HERE.parent


def cli(*args: str) -> str:
    """A `python -m` of CODE's brain or dream, run away from any checkout."""
    env = {**os.environ, "PYTHONPATH": str(CODE)}
    return subprocess.run([sys.executable, "-m", args[0], *args[1:]], capture_output=True, text=True, env=env,
                          cwd=tempfile.gettempdir()).stdout


def measure(folder: Path, tmp: Path) -> dict:
    root = tmp / folder.name.strip("-")[:40]
    cli("brain.cli", "init", str(root))
    cli("dream.cli", "import", "claude-code", str(folder), "--brain", str(root))
    cli("dream.cli", "run", "--brain", str(root), "--now", "2026-12-01T00:00:00Z")
    raw = "\n".join(p.read_text(encoding="utf-8") for p in (root / "sessions/raw").glob("*.jsonl"))
    sources = raw + "\n".join(p.read_text(encoding="utf-8", errors="replace") for p in folder.glob("*.jsonl"))
    pages = {p: p.read_text(encoding="utf-8") for p in (root / "knowledge").rglob("*.md") if p.name not in ("index.md", "log.md")}
    summaries = [p.read_text(encoding="utf-8") for p in (root / "sessions/summaries").glob("*.md")]
    project = next((t for p, t in pages.items() if p.parent.name == "projects"), "")
    edited = Counter(m.group(1) for f in folder.glob("*.jsonl") for m in EDIT_RE.finditer(f.read_text(encoding="utf-8", errors="replace")))
    top3 = [Path(path).name for path, _ in edited.most_common(3)]
    requests = carried = 0
    for p in (root / "sessions/raw").glob("*.jsonl"):
        turns = [json.loads(line) for line in p.read_text(encoding="utf-8").splitlines()[1:]]
        asked = next((r for t in turns if t.get("role") == "user" and (r := request_of(strip_agent_markup(t["text"])))), None)
        if asked:
            requests += 1
            summary = root / "sessions/summaries" / p.name.replace(".jsonl", ".md")
            carried += summary.is_file() and asked.rstrip(".?!")[:60] in " ".join(summary.read_text(encoding="utf-8").split())
    shown = [*pages.values(), *summaries, cli("brain.cli", "index", "--brain", str(root))]
    markup = sum(1 for text in shown for line in text.splitlines() if MARKUP_RE.search(line))
    tokens = [next(g for g in m.groups() if g) for text in pages.values() for m in TOKEN_RE.finditer(text.split("\n---\n", 1)[-1])]
    unfaithful = [t for t in tokens if not t.startswith("[") and t.strip(".") not in sources]
    bullets = [line for text in pages.values() for line in text.splitlines() if line.startswith("- ")]
    return {"project": folder.name, "sessions": len(list((root / "sessions/raw").glob("*.jsonl"))),
            "project page": bool(project), "top 3 files named": f"{sum(1 for f in top3 if f in project)} of {len(top3)}",
            "requests carried": f"{carried} of {requests}", "markup lines": markup,
            "placeholder pages": sum(1 for t in pages.values() if PLACEHOLDER in t),
            "unfaithful tokens": len(unfaithful), "code-like bullets": f"{sum(1 for b in bullets if CODE_BULLET_RE.match(b))} of {len(bullets)}",
            "pages": len(pages)}


def main() -> None:
    global CODE
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--code", type=Path, default=HERE.parent, help="the checkout whose brain and dream run (default: this one)")
    ap.add_argument("folders", nargs="*", type=Path)
    args = ap.parse_args()
    CODE = args.code.resolve()
    folders = [f.resolve() for f in args.folders] or sorted(p for p in DATA.iterdir() if p.is_dir())
    with tempfile.TemporaryDirectory(prefix="real-history-") as name:
        rows = [measure(f, Path(name)) for f in folders]
    keys = list(rows[0])
    print("| " + " | ".join(keys) + " |")
    print("|" + "---|" * len(keys))
    for row in rows:
        print("| " + " | ".join(str(row[k]) for k in keys) + " |")


if __name__ == "__main__":
    main()
