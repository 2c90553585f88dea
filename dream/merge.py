"""Three-way text merge (git merge-file): how Dream's changes meet the owner's edits.

Lines are claims. Where git sees both sides change the same place, a hunk in which Dream only
added lines around the owner's edited ones is resolved by keeping both; in any other overlap the
owner's lines win, that hunk of Dream's change is dropped (a conflict, reported), and Dream's
other hunks still land.
"""

from __future__ import annotations

import subprocess
import tempfile
from difflib import SequenceMatcher
from pathlib import Path

_SIZE = 32  # conflict markers longer than any line a page holds
_OURS, _BASE, _THEIRS, _END = ("<" * _SIZE, "|" * _SIZE, "=" * _SIZE, ">" * _SIZE)


def merge3(base: str, ours: str, theirs: str) -> tuple[str, bool]:
    """(merged text, clean). `ours` is the owner's text, `theirs` Dream's new text; not clean:
    some of Dream's changes overlapped the owner's, and the owner's side of them is in the text."""
    if ours == base or ours == theirs:
        return theirs, True
    if theirs == base:
        return ours, True
    if not base:  # a file both created: nothing says how the two go together
        return ours, False
    with tempfile.TemporaryDirectory(prefix="dream-merge-") as tmp:
        paths = []
        for name, text in (("ours", ours), ("base", base), ("theirs", theirs)):
            p = Path(tmp) / name
            p.write_text(text, encoding="utf-8", newline="")
            paths.append(str(p))
        proc = subprocess.run(["git", "merge-file", "-p", "--diff3", f"--marker-size={_SIZE}", *paths],
                              capture_output=True, check=False)
    if proc.returncode < 0 or proc.returncode > 127:  # git could not merge at all
        return ours, False
    return _resolve(proc.stdout.decode("utf-8").splitlines(keepends=True))


def _resolve(lines: list[str]) -> tuple[str, bool]:
    """The text of a diff3 merge with each conflict hunk resolved (see the module docstring)."""
    out: list[str] = []
    clean = True
    hunk: dict[str, list[str]] | None = None
    side = ""
    for line in lines:
        marker = line[:_SIZE]
        if hunk is None and marker == _OURS:
            hunk, side = {"ours": [], "base": [], "theirs": []}, "ours"
        elif hunk is not None and marker in (_BASE, _THEIRS):
            side = "base" if marker == _BASE else "theirs"
        elif hunk is not None and marker == _END:
            resolved = _both(hunk["base"], hunk["ours"], hunk["theirs"])
            clean &= resolved is not None
            out += resolved if resolved is not None else hunk["ours"]
            hunk = None
        elif hunk is not None:
            hunk[side].append(line)
        else:
            out.append(line)
    return "".join(out), clean


def _both(base: list[str], ours: list[str], theirs: list[str]) -> list[str] | None:
    """Ours with Dream's added lines around it, when Dream kept the hunk's base lines as they were
    (in one run) and only added lines before or after them; None otherwise."""
    if not base:  # both added lines at one place: the owner's first
        return ours + [line for line in theirs if line not in ours]
    kept = [b for b in SequenceMatcher(None, base, theirs, autojunk=False).get_matching_blocks() if b.size]
    if len(kept) != 1 or kept[0].size != len(base):
        return None
    start = kept[0].b
    return theirs[:start] + ours + theirs[start + len(base):]
