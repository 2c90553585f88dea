"""Three-way text merge (git merge-file): how Dream's changes meet the owner's edits.

On a conflict the owner's text wins whole; Dream's change is deferred and reported.
"""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path


def merge3(base: str, ours: str, theirs: str) -> tuple[str, bool]:
    """(merged text, clean). `ours` is the owner's text, `theirs` Dream's new text."""
    if ours == base or ours == theirs:
        return theirs, True
    if theirs == base:
        return ours, True
    with tempfile.TemporaryDirectory(prefix="dream-merge-") as tmp:
        paths = []
        for name, text in (("ours", ours), ("base", base), ("theirs", theirs)):
            p = Path(tmp) / name
            p.write_text(text, encoding="utf-8", newline="")
            paths.append(str(p))
        proc = subprocess.run(["git", "merge-file", "-p", *paths], capture_output=True, check=False)
    if proc.returncode == 0:
        return proc.stdout.decode("utf-8"), True
    return ours, False
