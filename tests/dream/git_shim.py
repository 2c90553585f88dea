"""A `git` on PATH that kills the process that called it at its Nth call, so a test can stop
`dream run` at every git call it makes; a call that writes the index leaves its lock behind."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

SHIM = """#!/bin/sh
count_file="{counter}"
n=$(( $(cat "$count_file" 2>/dev/null || echo 0) + 1 ))
echo "$n" > "$count_file"
if [ "$n" -eq "$KILL_AT_GIT_CALL" ]; then
  # A git killed while it writes the index leaves its lock behind, as a real kill would.
  case " $* " in
    *" update-index "*|*" read-tree "*|*" reset "*|*" add "*)
      index="${{GIT_INDEX_FILE:-$("{real}" rev-parse --absolute-git-dir 2>/dev/null)/index}}"
      : > "$index.lock" ;;
  esac
  kill -9 "$PPID"
  exit 137
fi
exec "{real}" "$@"
"""


def install(folder: Path) -> tuple[Path, Path]:
    """(bin folder to put first on PATH, counter file)."""
    real = shutil.which("git")
    assert real, "git is not installed"
    folder.mkdir(parents=True, exist_ok=True)
    counter = folder / "calls"
    shim = folder / "git"
    shim.write_text(SHIM.format(counter=counter, real=real), encoding="utf-8")
    shim.chmod(shim.stat().st_mode | stat.S_IEXEC)
    return folder, counter


def run_killed_at(cmd: list[str], call: int, shim: tuple[Path, Path], timeout: float = 300) -> int:
    """Run `cmd` with the shim first on PATH, killed at its `call`th git call; its exit code."""
    folder, counter = shim
    counter.write_text("0", encoding="utf-8")
    env = {**os.environ, "PATH": f"{folder}{os.pathsep}{os.environ.get('PATH', '')}", "KILL_AT_GIT_CALL": str(call)}
    return subprocess.run(cmd, env=env, capture_output=True, timeout=timeout).returncode


def calls_made(counter: Path) -> int:
    return int(counter.read_text(encoding="utf-8") or 0)
