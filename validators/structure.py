"""S checks: where files are and what they are called — layout, names, case collisions,
symlinks, and the raw sessions the Brain cites.

They read the tree's file listing; S008/S009 read each cited raw session once (shared with
C004 through the BrainView cache). Uncited raw sessions are input that dream checks when it
reads them, so they are not opened here (10,000 transcripts would dominate a validate run).
"""

from __future__ import annotations

import re
import unicodedata
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

from brain import layout
from brain.tree import OverlayTree
from brain.view import BrainView
from validators.documents import parse_target, per_view
from validators.registry import Item, check


@check("S001", "warning", "file outside the Brain layout")
def outside_layout(view: BrainView) -> Iterator[Item]:
    for rel in view.checked_files:
        if not layout.known_location(rel):
            yield rel, 1, f"{rel} is outside the Brain layout and no tool reads it; move it (see docs/DESIGN.md) or remove it"


_PLAIN_PATH = re.compile(r"(?:[A-Za-z0-9_][A-Za-z0-9._-]*/)*[A-Za-z0-9_][A-Za-z0-9._-]*")


def unsafe_reason(rel: str) -> str | None:
    """`layout.unsafe_reason`, with a fast path for the plain names nearly every file has."""
    if _PLAIN_PATH.fullmatch(rel) and not rel.endswith(".") and "./" not in rel:
        if not any(part.split(".", 1)[0].lower() in layout.WINDOWS_RESERVED for part in rel.split("/")):
            return None
    return layout.unsafe_reason(rel)


@check("S002", "error", "unsafe path: reserved device name, control or special character, trailing dot or space")
def unsafe_path(view: BrainView) -> Iterator[Item]:
    for rel in view.checked_files:
        if rel.startswith(".obsidian/"):
            continue  # Obsidian's own settings; it names them
        reason = unsafe_reason(rel)
        if reason is not None:
            yield rel, 1, f"{reason}: this name cannot be checked out everywhere (Windows, macOS); rename the file"


def _slug_problem(stem: str) -> str | None:
    if stem.lower() in layout.RESERVED_STEMS:
        return f"'{stem}' is a reserved name; rename the file (e.g. {stem.lower()}-page.md)"
    if len(stem) > layout.SLUG_MAX:
        return f"'{stem[:20]}...' is longer than {layout.SLUG_MAX} characters; shorten the slug"
    if not layout.SLUG_RE.match(stem):
        return f"'{stem}' is not a valid slug (lower-case letters, digits, single hyphens); rename it to {layout.slugify(stem)}"
    return None


@check("S003", "error", "page or note file name (or note topic folder) that is not a valid slug, or a reserved name")
def bad_slug(view: BrainView) -> Iterator[Item]:
    for rel in view.checked_files:
        parts = rel.split("/")
        if layout.is_page_path(rel):
            names = [parts[2][:-3]]
        elif layout.is_note_path(rel):
            names = [parts[1], parts[2][:-3]]
        else:
            continue
        if unsafe_reason(rel):
            continue  # S002 already asks for a rename
        for name in dict.fromkeys(names):
            problem = _slug_problem(name)
            if problem:
                yield rel, 1, problem


@check("S004", "error", "session summary or raw session whose file name is not a valid session id")
def bad_session_id(view: BrainView) -> Iterator[Item]:
    for rel in view.checked_files:
        parts = rel.split("/")
        if layout.is_summary_path(rel):
            stem = parts[2][:-3]
        elif rel.startswith(layout.SESSIONS_RAW + "/") and len(parts) == 3 and rel.endswith(".jsonl"):
            stem = parts[2][:-6]
        else:
            continue
        if not layout.is_session_id(stem):
            yield rel, 1, (
                f"'{stem}' is not a valid session id (letters, digits, '.', '_', '-', starting with a letter or digit, "
                "no '..'); rename the file"
            )


@check("S005", "error", "paths that differ only in case or Unicode normalisation")
def case_collision(view: BrainView) -> Iterator[Item]:
    groups: dict[str, list[str]] = defaultdict(list)
    for rel in view.files:
        groups[unicodedata.normalize("NFC", rel).casefold()].append(rel)
    for paths in groups.values():
        if len(paths) > 1:
            for rel in paths:
                for other in paths:
                    if other != rel:
                        how = "case" if rel.casefold() == other.casefold() else "Unicode normalisation (NFC/NFD)"
                        yield rel, 1, f"{rel} differs from {other} only in {how}; macOS and Windows may see one file, rename one"


def _roots(view: BrainView) -> list[Path]:
    """The folders a symlink may point into: the tree's, and a staged tree's live Brain."""
    tree = view.tree
    return [Path(t.root).resolve() for t in ((tree, tree.base) if isinstance(tree, OverlayTree) else (tree,))]


@per_view
def _symlinks(view: BrainView) -> list[tuple[str, str | None, bool]]:
    """(path, resolved target, inside the Brain) of every symlink in the listing."""
    roots = _roots(view)
    out = []
    for rel in view.tree.symlinks():
        target = view.tree.symlink_target(rel)
        inside = target is not None and any(Path(target) == r or r in Path(target).parents for r in roots)
        out.append((rel, target, inside))
    return out


@check("S006", "warning", "symlink inside the Brain (git stores the link, not the file; tools may skip it)")
def symlink_inside(view: BrainView) -> Iterator[Item]:
    for rel, _target, inside in _symlinks(view):
        if inside:
            yield rel, 1, f"{rel} is a symlink; it is not read as a document, replace it with the file itself"


@check("S007", "error", "symlink whose target resolves outside the Brain")
def symlink_outside(view: BrainView) -> Iterator[Item]:
    for rel, target, inside in _symlinks(view):
        if not inside:
            yield rel, 1, f"{rel} is a symlink to {target}, outside the Brain; remove it (it may expose other files)"


@per_view
def _cited_sessions(view: BrainView) -> list[str]:
    """Session ids cited by any readable document, each loaded once through the view."""
    ids: set[str] = set()
    for page in view.docs.values():
        for raw in page.frontmatter.sources.values():
            target = parse_target(raw)
            if not isinstance(target, str) and target.kind == "session":
                ids.add(target.ref)
    for sid in sorted(ids):
        view.session(sid)
    return sorted(sid for sid in ids if sid in view.session_problems or view.session(sid) is not None)


@check("S008", "warning", "cited raw session with problems: malformed line, bad turn, missing header, invalid UTF-8")
def raw_session_problems(view: BrainView) -> Iterator[Item]:
    for sid in _cited_sessions(view):
        for problem in view.session_problems.get(sid, []):
            yield problem.path, problem.line, problem.message


@check("S009", "warning", "cited raw session whose header id differs from its file name")
def raw_session_id(view: BrainView) -> Iterator[Item]:
    for sid in _cited_sessions(view):
        session = view.session(sid)
        if session is not None and session.header.id != sid:
            yield layout.raw_session_path(sid), 1, (
                f"header id '{session.header.id}' differs from the file name {sid}.jsonl; citations use the file name, make them agree"
            )
