"""`brain init`: lay out a new Brain in a folder, `git init` it and commit what was created.

Only the files below are written, and an existing file is never overwritten (the owner's
guide.md or brain.toml stays as it is). Type folders under knowledge/ are created lazily by sync.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

from brain import layout
from brain.errors import BrainError
from brain.model import Record
from brain.render import render_knowledge_index, render_sessions_index
from brain.repo import BrainRepo

#: Empty folders an owner or an importer fills; git does not track them until they hold a file.
FOLDERS = (layout.KNOWLEDGE, layout.SESSIONS_RAW, layout.RULES, layout.DREAM_DIR)


def _template(name: str) -> str:
    return (resources.files("brain") / "templates" / name).read_text(encoding="utf-8")


def initial_files() -> dict[str, str]:
    """Path → text of every file `brain init` writes, in creation order."""
    return {
        layout.CONFIG: _template("init_brain.toml.j2"),
        layout.GUIDE: _template("init_guide.md.j2"),
        layout.KNOWLEDGE_INDEX: render_knowledge_index({}),
        layout.KNOWLEDGE_LOG: "# Log\n",
        layout.SESSIONS_INDEX: render_sessions_index({}),
        layout.INSTRUCTIONS: _template("init_instructions.md.j2"),
        layout.FORGET: _template("init_forget.md.j2"),
        ".gitignore": _template("init_gitignore.j2"),
    }


class InitReport(Record):
    """What `brain init` did."""

    root: str
    created: list[str]
    kept: list[str]
    updated: list[str]
    new_repo: bool
    commit: str | None


def init_brain(root: Path, owner: str | None = None) -> InitReport:
    """Create the layout in `root` (made if missing); refuses a folder that already has knowledge/.
    `owner`: whose Brain it is, written into a new brain.toml ("I" and "me" in the sessions)."""
    root = Path(root).resolve()
    if root.exists() and not root.is_dir():
        raise BrainError(f"{root} is a file, not a folder", "pass a folder to `brain init`")
    if (root / layout.KNOWLEDGE).exists():
        raise BrainError(f"{root} is already a Brain (it has {layout.KNOWLEDGE}/)", f"use it with --brain {root}")
    created: list[str] = []
    kept: list[str] = []
    updated: list[str] = []
    for folder in FOLDERS:
        (root / folder).mkdir(parents=True, exist_ok=True)
    for rel, text in initial_files().items():
        if rel == layout.CONFIG and owner:
            text = text.replace('# owner = "Your Name"', f"owner = {json.dumps(owner, ensure_ascii=False)}", 1)
        path = root / rel
        if rel == ".gitignore" and path.is_file() and (merged := merged_ignore(path.read_text(encoding="utf-8"), text)):
            path.write_text(merged, encoding="utf-8")
            updated.append(rel)
        elif path.exists():
            kept.append(rel)
        else:
            path.write_text(text, encoding="utf-8")
            created.append(rel)
    repo = BrainRepo(root)
    new_repo = not repo.is_repo()
    if new_repo:
        repo = BrainRepo.init(root)
    commit = repo.commit_all("Initialise Brain", paths=created + updated) if created or updated else None
    return InitReport(root=str(root), created=created, kept=kept, updated=updated, new_repo=new_repo, commit=commit)


def merged_ignore(text: str, template: str | None = None) -> str | None:
    """`text` (a .gitignore) with the patterns of `brain init`'s it lacks appended; None when it has them all."""
    have = {line.strip() for line in text.splitlines()}
    template = _template("init_gitignore.j2") if template is None else template
    missing = [line for line in template.splitlines() if line and not line.startswith("#") and line not in have]
    if not missing:
        return None
    sep = "" if text.endswith("\n") or not text else "\n"
    return text + sep + "\n".join(missing) + "\n"
