"""What every importer shares: the report, safe ids, and the plan/apply pair that writes raw sessions.

A format module only parses its input into canonical `Session`s (`Parsed`); this module decides
what to write (`plan_import`, pure) and writes it (`apply_import`, temp file + os.replace).
Importers add new sessions and append turns; they never rewrite a turn (DESIGN, invariant 1).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import unicodedata
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import Field

from brain.layout import SESSIONS_RAW, is_session_id, raw_session_path
from brain.model import Record, empty_list
from brain.sessions import MAX_TURN_CHARS, Session, Turn, clean_turn_text, parse_session, render_session
from dream.timing import Progress

#: Largest input file an importer reads whole (a ChatGPT export of years is a few hundred MB).
MAX_INPUT_BYTES = 1_000_000_000


class Parsed(Record):
    """What a format reader found: canonical sessions (ids made safe by `checked_id`) and problems."""

    sessions: list[Session] = Field(default_factory=empty_list)
    problems: list[str] = Field(default_factory=empty_list)


class GrownSession(Record):
    id: str
    turns_before: int
    turns_added: int


class ImportReport(Record):
    """The outcome of one `dream import`: what was created, what grew, what stayed, what went wrong."""

    format: str
    source: str
    created: list[str] = Field(default_factory=empty_list)
    grown: list[GrownSession] = Field(default_factory=empty_list)
    unchanged: int = 0
    problems: list[str] = Field(default_factory=empty_list)

    def summary(self) -> str:
        added = sum(g.turns_added for g in self.grown)
        line = (
            f"{self.format} import from {self.source}: {len(self.created)} new, "
            f"{len(self.grown)} grown (+{added} turns), {self.unchanged} unchanged"
        )
        if self.problems:
            n = len(self.problems)
            rest = "nothing was imported" if self.read_nothing else "everything else was imported"
            line += f"\n{n} problem{'s' if n != 1 else ''} found; {rest}"
        return line

    @property
    def read_nothing(self) -> bool:
        """True when there were problems and no session could be read at all."""
        return bool(self.problems) and not (self.created or self.grown or self.unchanged)


class SessionWrite(Record):
    """One planned file write; `expected` is the file's content when planned (None: must not exist)."""

    id: str
    data: bytes
    expected: bytes | None


# --- helpers for format readers --------------------------------------------------------------


def safe_session_id(raw: str) -> str:
    """`raw` when it is a valid id, else a readable ASCII form plus a hash of `raw` (stable, distinct)."""
    if is_session_id(raw):
        return raw
    folded = unicodedata.normalize("NFKD", raw).encode("ascii", "ignore").decode("ascii")
    body = re.sub(r"[^A-Za-z0-9._-]+", "-", folded)
    body = re.sub(r"\.{2,}", ".", body).strip("._-")[:100].rstrip("._-")
    digest = hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    candidate = f"{body}-{digest}" if body else f"session-{digest}"
    return candidate if is_session_id(candidate) else f"session-{digest}"


def checked_id(raw: str, where: str, problems: list[str]) -> str:
    """A safe id for `raw`, with a problem naming the input when it had to change."""
    safe = safe_session_id(raw)
    if safe != raw:
        problems.append(f"{where}: session id {raw!r} is not a safe file name; imported as {safe!r}")
    return safe


def clean_text(text: str) -> str:
    """Text that survives a UTF-8 round trip (lone surrogates from JSON escapes become U+FFFD)."""
    return text.encode("utf-8", "replace").decode("utf-8")


def read_input(path: Path, display: str, problems: list[str], limit: int) -> bytes | None:
    """A regular file's bytes, or None with the problem said: a FIFO, device or socket is never
    opened (reading one would wait forever), nor a file over `limit` bytes."""
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):
            problems.append(f"{display}: not a regular file (a pipe, device or socket); pass a file")
            return None
        if st.st_size > limit:
            problems.append(f"{display}: file is larger than {limit // 1_000_000} MB; split it and import the parts")
            return None
        return path.read_bytes()
    except OSError as exc:
        problems.append(f"{display}: cannot read ({exc.strerror}); check the path and permissions")
        return None


def read_json(path: Path, display: str, problems: list[str]) -> Any | None:
    """Whole-file JSON, or None with a problem naming the file, line and column."""
    data = read_input(path, display, problems, MAX_INPUT_BYTES)
    if data is None:
        return None
    try:
        return json.loads(data.decode("utf-8-sig"))
    except UnicodeDecodeError:
        problems.append(f"{display}: not UTF-8 text; export the file again as JSON")
    except json.JSONDecodeError as exc:
        problems.append(f"{display}:{exc.lineno}:{exc.colno}: malformed JSON ({exc.msg}); fix or re-export the file")
    except RecursionError:
        problems.append(f"{display}: JSON nested too deeply to read; re-export the file")
    return None


def read_json_list(path: Path, what: str, problems: list[str]) -> list:
    """A whole-file JSON list of `what` (e.g. "LoCoMo samples"), or no items with the problem noted."""
    display = str(path)
    data = read_json(path, display, problems)
    if data is not None and not isinstance(data, list):
        problems.append(f"{display}: expected a JSON list of {what}, got {type(data).__name__}; nothing imported")
    return data if isinstance(data, list) else []


# --- plan: pure ------------------------------------------------------------------------------


def assign_ids(sessions: list[Session], existing_ids: list[str]) -> tuple[list[Session], list[str]]:
    """Sessions with distinct ids, and a problem for each id that had to change.

    Ids are already safe (each reader calls `checked_id`). They are compared case-insensitively (a Brain cloned on macOS or Windows would merge
    `A.jsonl` and `a.jsonl`); a later duplicate gets `-2`, `-3`, … in input order.
    """
    problems: list[str] = []
    existing = {i.casefold(): i for i in existing_ids}
    taken: set[str] = set()
    out: list[Session] = []
    for session in sessions:
        base = session.header.id
        sid, k = base, 1
        while sid.casefold() in taken or existing.get(sid.casefold(), sid) != sid:
            k += 1
            sid = f"{base[:120]}-{k}"
        if sid != base:
            problems.append(f"session id {base!r} is already used by another session; imported as {sid!r}")
        taken.add(sid.casefold())
        out.append(session if sid == base else _with_id(session, sid))
    return out, problems


def _with_id(session: Session, sid: str) -> Session:
    return session.model_copy(update={"header": session.header.model_copy(update={"id": sid})})


def normalize_turns(session: Session) -> tuple[Session, list[str]]:
    """Turns as `parse_session` would read them back (cut to MAX_TURN_CHARS, one per number)."""
    problems: list[str] = []
    turns: dict[int, Turn] = {}
    for turn in session.turns:
        if turn.n in turns:
            problems.append(f"session {session.id}: turn {turn.n} appears twice; the later one was skipped")
            continue
        text = clean_text(turn.text)
        if len(text) > MAX_TURN_CHARS:
            problems.append(f"session {session.id}: turn {turn.n} is longer than {MAX_TURN_CHARS} characters; it was cut")
            text = text[:MAX_TURN_CHARS]
        text = clean_turn_text(text)  # what parse_session reads back: a re-import finds the same turns
        turns[turn.n] = turn if text == turn.text else turn.model_copy(update={"text": text})
    ordered = [turns[n] for n in sorted(turns)]
    header = session.header
    if header.title and (title := clean_turn_text(header.title)) != header.title:
        header = header.model_copy(update={"title": title})
    return session.model_copy(update={"turns": ordered, "header": header}), problems


def plan_session(incoming: Session, existing: bytes | None) -> tuple[SessionWrite | None, GrownSession | None, list[str]]:
    """Create, append to, or leave one raw session; existing turns are never rewritten.

    When an existing turn's text differs from the input, nothing is appended either: new turns
    after a changed history would make an incoherent transcript (e.g. a switched ChatGPT branch).
    """
    rel = raw_session_path(incoming.id)
    if existing is None:
        if not incoming.turns:
            return None, None, [f"session {incoming.id}: no turns; nothing to import"]
        return SessionWrite(id=incoming.id, data=render_session(incoming).encode("utf-8"), expected=None), None, []
    old, _ = parse_session(existing, rel)
    if old is None:
        return None, None, [f"{rel}: the existing file has no readable header; left unchanged, run `brain validate` and fix it"]
    old_turns = {t.n: t for t in old.turns}
    last = max(old_turns, default=0)
    problems: list[str] = []
    conflicts = 0
    for turn in incoming.turns:
        before = old_turns.get(turn.n)
        if before is not None and before.text != turn.text:
            conflicts += 1
            problems.append(
                f"{rel}: turn {turn.n} differs from the input; kept the existing text (turns are never rewritten); "
                "import the changed conversation under a new id to keep both"
            )
        elif before is None and turn.n <= last:
            problems.append(f"{rel}: turn {turn.n} is missing here but new turns can only be appended after turn {last}; skipped")
    new = [t for t in incoming.turns if t.n > last]
    if conflicts:
        if new:
            problems.append(f"{rel}: {len(new)} new turn(s) were not appended because earlier turns differ")
        return None, None, problems
    if not new:
        return None, None, problems
    tail = render_session(Session(header=old.header, turns=new)).split("\n", 1)[1]
    sep = b"" if existing.endswith(b"\n") else b"\n"
    data = existing + sep + tail.encode("utf-8")
    grown = GrownSession(id=incoming.id, turns_before=len(old.turns), turns_added=len(new))
    return SessionWrite(id=incoming.id, data=data, expected=existing), grown, problems


def plan_import(fmt: str, source: str, sessions: list[Session], existing: Mapping[str, bytes]) -> tuple[list[SessionWrite], ImportReport]:
    """What to write for `sessions` (ids already distinct) given the current raw files' bytes by id,
    and the report if every write succeeds."""
    writes: list[SessionWrite] = []
    created: list[str] = []
    grown: list[GrownSession] = []
    unchanged = 0
    problems: list[str] = []
    for session in sorted(sessions, key=lambda s: s.id):
        session, found = normalize_turns(session)
        problems += found
        write, grew, found = plan_session(session, existing.get(session.id))
        problems += found
        if write is None:
            unchanged += session.id in existing
        elif grew is None:
            writes.append(write)
            created.append(session.id)
        else:
            writes.append(write)
            grown.append(grew)
    return writes, ImportReport(format=fmt, source=source, created=created, grown=grown, unchanged=unchanged, problems=problems)


# --- apply: short and atomic -----------------------------------------------------------------


def apply_import(writes: list[SessionWrite], brain_root: Path, progress: Progress | None = None) -> tuple[set[str], list[str]]:
    """Write the planned files (sorted by id), each via a temp file and os.replace.

    A file that changed since it was planned is left alone and reported (another import or
    an editor wrote it meanwhile); the next import sees the new content.
    """
    raw_dir = brain_root / SESSIONS_RAW
    written: set[str] = set()
    problems: list[str] = []
    for i, write in enumerate(sorted(writes, key=lambda w: w.id)):
        if progress is not None:
            progress("writing", i + 1, len(writes))
        target = brain_root / raw_session_path(write.id)
        if not is_session_id(write.id) or target.parent != raw_dir:  # ids come from checked_id
            problems.append(f"{raw_session_path(write.id)}: unsafe target path; skipped")
            continue
        raw_dir.mkdir(parents=True, exist_ok=True)
        if _current(target) != write.expected:
            problems.append(f"{raw_session_path(write.id)}: changed while importing; skipped, import again")
            continue
        tmp = raw_dir / f".{write.id}.jsonl.tmp-{os.getpid()}"
        try:
            with open(tmp, "wb") as fh:
                fh.write(write.data)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, target)
            written.add(write.id)
        except OSError as exc:
            tmp.unlink(missing_ok=True)
            problems.append(f"{raw_session_path(write.id)}: cannot write ({exc.strerror}); nothing written for this session")
    return written, problems


def _current(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def existing_ids(brain_root: Path) -> list[str]:
    raw_dir = brain_root / SESSIONS_RAW
    if not raw_dir.is_dir():
        return []
    return sorted(p.name[: -len(".jsonl")] for p in raw_dir.iterdir() if p.name.endswith(".jsonl") and p.is_file())


def import_sessions(fmt: str, source: Path, parsed: Parsed, brain_root: Path, progress: Progress | None = None) -> ImportReport:
    """Give parsed sessions safe ids, plan against the raw files on disk, write, and report."""
    on_disk = existing_ids(brain_root)
    sessions, problems = assign_ids(parsed.sessions, on_disk)
    present = set(on_disk)
    existing = {s.id: (brain_root / raw_session_path(s.id)).read_bytes() for s in sessions if s.id in present}
    writes, planned = plan_import(fmt, str(source), sessions, existing)
    written, failed = apply_import(writes, brain_root, progress)
    return planned.model_copy(update={
        "created": [i for i in planned.created if i in written],
        "grown": [g for g in planned.grown if g.id in written],
        "problems": [*parsed.problems, *problems, *planned.problems, *failed],
    })
