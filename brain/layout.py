"""The only module that knows paths: type → folder, slug and id rules, what dream may write.

Every path rule of DESIGN.md and docs/FORMATS.md lives here, so validators, importers and
sync agree on what is inside the layout and what is an unsafe name.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import PurePosixPath

TYPE_FOLDERS: dict[str, str] = {
    "person": "people",
    "organization": "organizations",
    "place": "places",
    "project": "projects",
    "concept": "concepts",
    "preference": "preferences",
    "learning": "learnings",
    "event": "events",
}
FOLDER_TYPES: dict[str, str] = {v: k for k, v in TYPE_FOLDERS.items()}
PAGE_TYPES: tuple[str, ...] = tuple(TYPE_FOLDERS)

KNOWLEDGE = "knowledge"
NOTES = "notes"
SESSIONS_RAW = "sessions/raw"
SESSIONS_SUMMARIES = "sessions/summaries"
SESSIONS_INDEX = "sessions/index.md"
KNOWLEDGE_INDEX = "knowledge/index.md"
KNOWLEDGE_LOG = "knowledge/log.md"
SOURCES = "sources"
RULES = "rules"
GUIDE = "guide.md"
CONFIG = "brain.toml"
DREAM_DIR = ".dream"
STATE = ".dream/state.json"
INSTRUCTIONS = ".dream/instructions.md"
FORGET = ".dream/forget.md"
RUNS = ".dream/runs"
CACHE = ".dream/cache"
LOCK = ".dream/lock"
JOURNAL = ".dream/journal.json"

#: What dream may write (through sync only); invariant 1 of DESIGN.md.
DREAM_WRITE_ROOTS: tuple[str, ...] = (KNOWLEDGE + "/", NOTES + "/", SESSIONS_SUMMARIES + "/")
DREAM_WRITE_FILES: tuple[str, ...] = (SESSIONS_INDEX, STATE, FORGET, ".gitignore")  # .gitignore: appends, once (dream.generated)

SLUG_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
SLUG_MAX = 80
SESSION_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
RESERVED_STEMS = frozenset(
    {"index", "log", "con", "prn", "aux", "nul"}
    | {f"com{i}" for i in range(1, 10)}
    | {f"lpt{i}" for i in range(1, 10)}
)
#: Stems reserved on Windows only; any path component with one of these is unsafe.
WINDOWS_RESERVED = RESERVED_STEMS - {"index", "log"}
_UNSAFE_CHARS_RE = re.compile(r'[\x00-\x1f<>:"\\|?*]')
FORBIDDEN_COMPONENTS = frozenset({".git", ".obsidian", ".dream", "..", "."})
GENERATED = frozenset({KNOWLEDGE_INDEX, KNOWLEDGE_LOG, SESSIONS_INDEX})


def folder_for(page_type: str) -> str:
    """`knowledge/<folder>` for a page type; KeyError for an unknown type."""
    return f"{KNOWLEDGE}/{TYPE_FOLDERS[page_type]}"


def page_path(page_type: str, slug: str) -> str:
    return f"{folder_for(page_type)}/{slug}.md"


def summary_path(session_id: str) -> str:
    return f"{SESSIONS_SUMMARIES}/{session_id}.md"


def raw_session_path(session_id: str) -> str:
    return f"{SESSIONS_RAW}/{session_id}.jsonl"


def note_path(topic: str, slug: str) -> str:
    return f"{NOTES}/{topic}/{slug}.md"


def is_session_id(text: str) -> bool:
    return bool(SESSION_ID_RE.match(text)) and ".." not in text and not is_unsafe_component(text)


def slugify(text: str, fallback: str = "page") -> str:
    """A valid slug from any text: ASCII-folded, lower case, hyphens, at most SLUG_MAX chars."""
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    slug = re.sub(r"[^a-z0-9]+", "-", folded.lower()).strip("-")
    slug = slug[:SLUG_MAX].rstrip("-")
    if not slug:
        slug = fallback
    if slug in RESERVED_STEMS:
        slug = f"{slug}-page"
    return slug


def is_unsafe_component(part: str) -> bool:
    """A path component that must never be written: traversal, reserved device names, control chars."""
    return (
        part in FORBIDDEN_COMPONENTS
        or part == ""
        or part.split(".")[0].lower() in WINDOWS_RESERVED
        or bool(_UNSAFE_CHARS_RE.search(part))
        or part.endswith((" ", "."))
    )


def unsafe_reason(rel_path: str) -> str | None:
    """Why a relative POSIX path is unsafe to write, or None when it is safe."""
    if not rel_path or rel_path.startswith("/") or re.match(r"^[A-Za-z]:", rel_path):
        return "absolute path"
    if "\\" in rel_path:
        return "backslash in path"
    for i, part in enumerate(PurePosixPath(rel_path).parts):
        if i == 0 and part == DREAM_DIR:
            continue  # .dream/ at the root is the Brain's own folder (state.json, forget.md)
        if part in ("..", "."):
            return "path traversal"
        if part in (".git", ".obsidian"):
            return f"path inside {part}/"
        if is_unsafe_component(part):
            return f"unsafe name {part!r}"
    return None


def is_state_path(rel_path: str) -> bool:
    """`.dream/state.json`: Dream's record, never merged."""
    return rel_path == STATE


def dream_may_write(rel_path: str) -> bool:
    """True when invariant 1 lets dream write this path (and it is a safe name)."""
    return not unsafe_reason(rel_path) and (rel_path in DREAM_WRITE_FILES or rel_path.startswith(DREAM_WRITE_ROOTS))


def page_location(rel_path: str) -> tuple[str, str] | None:
    """(type, slug) for a path `knowledge/<folder>/<slug>.md`, else None."""
    if not rel_path.startswith(KNOWLEDGE + "/"):  # most paths of a Brain are notes: no split for them
        return None
    parts = rel_path.split("/")
    if len(parts) != 3 or not parts[2].endswith(".md"):
        return None
    page_type = FOLDER_TYPES.get(parts[1])
    if page_type is None:
        return None
    return page_type, parts[2][:-3]


def is_page_path(rel_path: str) -> bool:
    return page_location(rel_path) is not None


def is_note_path(rel_path: str) -> bool:
    return doc_kind(rel_path) == "note"


def is_summary_path(rel_path: str) -> bool:
    return doc_kind(rel_path) == "summary"


#: A document's path: a page, a note or a session summary (the generated indexes are none of them).
DOCUMENT_RE = re.compile(
    rf"(?P<page>{KNOWLEDGE}/(?:{'|'.join(FOLDER_TYPES)})/[^/]*\.md)|(?P<note>{NOTES}/[^/]*/[^/]*\.md)"
    rf"|(?P<summary>{SESSIONS_SUMMARIES}/[^/]*\.md)"
)


def doc_kind(rel: str) -> str:
    """"page", "note", "summary" or "" for a path: what kind of document a file there is."""
    m = DOCUMENT_RE.fullmatch(rel)
    return m.lastgroup if m is not None and rel not in GENERATED else ""


def known_location(rel_path: str) -> bool:
    """True when a tracked file belongs to the Brain layout (S001 flags the rest)."""
    parts = rel_path.split("/")
    return (
        rel_path in GENERATED
        or rel_path in (CONFIG, GUIDE, STATE, INSTRUCTIONS, FORGET, ".gitignore", ".gitattributes", "README.md")
        or bool(doc_kind(rel_path))
        or (rel_path.startswith(SESSIONS_RAW + "/") and len(parts) == 3 and parts[2].endswith(".jsonl"))
        or parts[0] in (SOURCES, RULES, ".obsidian")
        or rel_path.startswith(DREAM_DIR + "/")
    )
