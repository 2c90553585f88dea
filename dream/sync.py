"""Sync: the staged tree becomes one git commit, merged with whatever the owner changed meanwhile.

`plan_sync` is pure: for each staged file it compares the live text now with the live text the
file was computed from; an owner's edit in between is merged (3-way), and on conflict the owner's
text stays and Dream's change is deferred. `apply_sync` writes atomically and commits once.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from brain import layout
from brain.repo import BrainRepo
from dream.merge import merge3

DREAM_AUTHOR = "Dream <dream@localhost>"


class SyncPlan(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    writes: dict[str, str] = Field(default_factory=dict)  # path → final text
    added: list[str] = Field(default_factory=list)
    modified: list[str] = Field(default_factory=list)
    conflicts: list[str] = Field(default_factory=list)
    merged: list[str] = Field(default_factory=list)  # written as a merge with the owner's edit, not as staged


def plan_sync(staged: dict[str, str], derived_from: dict[str, str | None], live_now: dict[str, str | None]) -> SyncPlan:
    writes, added, modified, conflicts, merged = {}, [], [], [], []
    for path, text in sorted(staged.items()):
        before, now = derived_from.get(path), live_now.get(path)
        if now != before and path != layout.STATE:
            if now is None:
                conflicts.append(f"{path}: deleted by the owner during the run; not re-created")
                continue
            text, clean = merge3(before or "", now, text)
            if not clean:
                conflicts.append(f"{path}: edited by the owner during the run; the owner's text was kept")
                continue
            merged.append(path)
        if text == now:
            continue
        writes[path] = text
        (modified if now is not None else added).append(path)
    return SyncPlan(writes=writes, added=added, modified=modified, conflicts=conflicts, merged=merged)


def read_live(root: Path, paths: list[str]) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for rel in paths:
        p = Path(root) / rel
        out[rel] = p.read_bytes().decode("utf-8", errors="replace") if p.is_file() and not p.is_symlink() else None
    return out


def write_atomic(path: Path, text: str) -> None:
    """Temp file in the same folder, then rename: a reader sees the old file or the new one, never a torn one.

    No fsync per file: the commit is the unit of durability (git writes its objects safely).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.dream-tmp")
    tmp.write_text(text, encoding="utf-8", newline="")
    os.replace(tmp, path)


def apply_sync(root: Path, plan: SyncPlan, message: str, staged_root: Path | None = None) -> str | None:
    """Put the plan's files in place and commit exactly them as Dream; returns the commit sha.

    A staged file that lands unchanged is renamed into place (atomic, no copy); a merged one is
    written through a temp file.
    """
    if not plan.writes:
        return None
    merged = set(plan.merged)
    made: set[Path] = set()
    for rel, text in plan.writes.items():
        target = Path(root) / rel
        source = Path(staged_root) / rel if staged_root else None
        if source is not None and rel not in merged and source.is_file():
            if target.parent not in made:
                target.parent.mkdir(parents=True, exist_ok=True)
                made.add(target.parent)
            os.replace(source, target)
        else:
            write_atomic(target, text)
    repo = BrainRepo(root)
    # Paths go through a file: a large run exceeds the command-line length limit.
    with tempfile.TemporaryDirectory(prefix="dream-sync-") as tmp:
        pathspec, message_file = Path(tmp) / "paths", Path(tmp) / "message"
        pathspec.write_text("\n".join(sorted(plan.writes)) + "\n", encoding="utf-8")
        message_file.write_text(message, encoding="utf-8")
        repo.git("add", f"--pathspec-from-file={pathspec}")
        repo.git("commit", "-q", "--no-verify", "--author", DREAM_AUTHOR, "-F", str(message_file), f"--pathspec-from-file={pathspec}")
    return repo.head()
