"""BrainView: a Brain read from a Tree — pages, summaries, notes, sessions, sources — and resolution.

Reading never raises for content: a document that cannot be parsed lands in `errors`, a bad
session line in `session_problems`; validators turn both into findings. Each document and session
is parsed at most once per view, and only when asked (a page's body refs only when they are).
"""

from __future__ import annotations

from collections import defaultdict
from functools import cached_property
from typing import Iterable

from brain import layout
from brain.citations import CitationError, CitationTarget
from brain.errors import PageError
from brain.page import Page, parse_page
from brain.render import index_line, session_index_line
from brain.sessions import Session, SessionProblem, parse_session, turn_evidence
from brain.sources import SourceRecord, records_of
from brain.tree import OverlayTree, Tree, text_if_exists, under


def parse_bytes(rel: str, data: bytes) -> Page | PageError:
    """A document's bytes parsed, or why they cannot be."""
    try:
        return parse_page(data.decode("utf-8"), rel)
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        return PageError(rel, line, f"invalid UTF-8 at byte {exc.start}", "save the file as UTF-8")
    except PageError as exc:
        return exc


class BrainView:
    """Everything a reader needs from one tree, parsed lazily and kept for the view's life."""

    def __init__(self, tree: Tree, focus: Iterable[str] | None = None, below: "BrainView | None" = None) -> None:
        """`focus`, when given, limits `docs`/`errors`/`checked_files` to those paths (Dream's gate
        checks only what a run staged); names and resolution still see the whole tree. `below`: the
        live view a staged one's OverlayTree lies over (see `staged`): a file the overlay does not
        stage is the same file, and its parse is taken from there."""
        self.tree = tree
        self.focus = frozenset(focus) if focus is not None else None
        self.below = below
        self._parsed: dict[str, Page | PageError | None] = {}
        self._sessions: dict[str, Session | None] = {}
        self.session_problems: dict[str, list[SessionProblem]] = {}

    @classmethod
    def staged(cls, live: "BrainView", upper: Tree, focus: Iterable[str] | None = None) -> "BrainView":
        """The view of `upper` (a run's staged files) over the live view's tree."""
        return cls(OverlayTree(live.tree, upper), focus=focus, below=live)

    # -- documents --------------------------------------------------------------------------
    def _parse(self, rel: str) -> Page | PageError | None:
        if rel not in self._parsed:
            if self.below is not None and not self.tree.upper.exists(rel) and rel not in self.tree.deleted:
                self._parsed[rel] = self.below._parse(rel)
            else:
                data = self.tree.read_if_exists(rel)  # None: deleted since the tree was listed
                self._parsed[rel] = parse_bytes(rel, data) if data is not None else None
        return self._parsed[rel]

    def doc(self, path: str) -> Page | None:
        """One parsed document (None when absent or unreadable), without parsing the rest."""
        if not self.has_doc(path):
            return None
        found = self._parse(path)
        return found if isinstance(found, Page) else None

    def readable(self, path: str) -> bool:
        return self.doc(path) is not None

    def has_doc(self, path: str) -> bool:
        """True when `path` is a page, note or summary file of the tree (parsed or not)."""
        return path in self._doc_set

    @cached_property
    def files(self) -> list[str]:
        """Every file of the tree, sorted (listed once per view)."""
        return self.tree.files()

    @cached_property
    def doc_paths(self) -> list[str]:
        """Every page, note and summary file, sorted (not symlinks: S checks report those). A staged
        view's are the live view's with the staged documents in (listing the live tree once a run)."""
        tree = self.tree
        if self.below is not None:
            staged = {rel for rel in tree.upper.files() if layout.doc_kind(rel)}
            return sorted((set(self.below.doc_paths) | staged) - tree.deleted)
        links = set(tree.symlinks())
        return [rel for rel in self.files if layout.doc_kind(rel) and rel not in links]

    @cached_property
    def _doc_set(self) -> frozenset[str]:
        return frozenset(self.doc_paths)

    def paths_under(self, prefix: str) -> list[str]:
        """Document paths below a folder ("notes/x/"), without parsing them."""
        return under(self.doc_paths, prefix) if prefix else list(self.doc_paths)

    def _load(self, paths: Iterable[str]) -> dict[str, Page]:
        return {rel: page for rel in paths if isinstance(page := self._parse(rel), Page)}

    @cached_property
    def _focus_paths(self) -> list[str]:
        return self.doc_paths if self.focus is None else [p for p in self.doc_paths if p in self.focus]

    @cached_property
    def docs(self) -> dict[str, Page]:
        """Every parsed page, summary and note by path (sorted); only the focus when there is one."""
        return self._load(self._focus_paths)

    @property
    def errors(self) -> dict[str, PageError]:
        return {rel: e for rel in self._focus_paths if isinstance(e := self._parse(rel), PageError)}

    @cached_property
    def checked_files(self) -> list[str]:
        """The files per-file checks look at: all of them, or the focus."""
        return self.files if self.focus is None else [rel for rel in self.files if rel in self.focus]

    @cached_property
    def page_paths(self) -> list[str]:
        """Every file in a page location, parsed or not (the index must list them all)."""
        return [p for p in self.paths_under(layout.KNOWLEDGE + "/") if layout.doc_kind(p) == "page"]

    @cached_property
    def pages(self) -> dict[str, Page]:
        return self._load(self.page_paths)

    @cached_property
    def summaries(self) -> dict[str, Page]:
        """Session summaries by session id."""
        return {d.slug: d for d in self._load(self.paths_under(layout.SESSIONS_SUMMARIES + "/")).values()}

    @cached_property
    def notes(self) -> dict[str, Page]:
        return self._load(self.paths_under(layout.NOTES + "/"))

    def page_lines(self) -> dict[str, str]:
        """The index line of each page that parses (path → line), as knowledge/index.md lists it."""
        return {path: index_line(page) for path, page in self.pages.items()}

    def summary_entries(self) -> dict[str, tuple[str, str]]:
        """Session id → (started, index line) of each summary that parses, as sessions/index.md lists it."""
        return {sid: (str(s.frontmatter.extras().get("started") or ""), session_index_line(s)) for sid, s in self.summaries.items()}

    # -- names ------------------------------------------------------------------------------
    @cached_property
    def page_names(self) -> dict[str, set[str]]:
        """casefolded page slug or alias → the pages it names."""
        out: dict[str, set[str]] = defaultdict(set)
        for path in self.page_paths:
            out[path.rsplit("/", 1)[1][:-3].casefold()].add(path)
        for path, page in self.pages.items():
            for alias in page.frontmatter.aliases:
                out[alias.strip().casefold()].add(path)
        return out

    @cached_property
    def _stems(self) -> dict[str, list[str]]:
        """casefolded file stem → the notes and summaries of that name (documents named by their file)."""
        out: dict[str, list[str]] = defaultdict(list)
        for path in self.doc_paths:
            if layout.doc_kind(path) != "page":
                out[path.rsplit("/", 1)[1][:-3].casefold()].append(path)
        return out

    def resolve(self, name: str) -> list[str]:
        """Paths a link target or a user's query names (slug, alias, note stem, session id), sorted."""
        key = name.strip().casefold()
        hits = set(self.page_names.get(key, ()))
        if key and "/" not in key:
            hits.update(self._stems.get(key, ()))
        return sorted(hits)

    @cached_property
    def slugs(self) -> dict[str, list[str]]:
        """slug → page paths with that stem (more than one is a collision)."""
        out: dict[str, list[str]] = defaultdict(list)
        for path in self.page_paths:
            out[path.rsplit("/", 1)[1][:-3]].append(path)
        return dict(out)

    # -- sessions ---------------------------------------------------------------------------
    def session(self, session_id: str) -> Session | None:
        if session_id not in self._sessions:
            if self.below is not None:
                self._sessions[session_id] = self.below.session(session_id)  # never staged
                self.session_problems.update(self.below.session_problems)
                return self._sessions[session_id]
            rel = layout.raw_session_path(session_id)
            data = self.tree.read_if_exists(rel) if layout.is_session_id(session_id) else None
            session, problems = parse_session(data, rel) if data is not None else (None, None)
            self._sessions[session_id] = session
            if problems is not None:
                self.session_problems[session_id] = problems
        return self._sessions[session_id]

    # -- sources ----------------------------------------------------------------------------
    @cached_property
    def source_records(self) -> dict[str, SourceRecord]:
        """`<connector>/<record-id>` → record, over every export under sources/."""
        out: dict[str, SourceRecord] = {}
        for rel in under(self.files, layout.SOURCES + "/"):
            parts = rel.split("/")
            if len(parts) < 3 or self.tree.is_symlink(rel):
                continue
            text = text_if_exists(self.tree, rel)
            for rec in records_of(parts[1], rel, text) if text is not None else ():
                out.setdefault(f"{rec.connector}/{rec.record_id}", rec)
        return out

    # -- citations --------------------------------------------------------------------------
    def check_target(self, raw: str) -> str | None:
        """Why a citation target does not resolve (None when it does)."""
        try:
            target = CitationTarget.parse(raw)
        except CitationError as exc:
            return str(exc)
        if target.kind == "session":
            session = self.session(target.ref)
            if session is None:
                rel = layout.raw_session_path(target.ref)
                if layout.is_session_id(target.ref) and self.tree.exists(rel):
                    return f"session {target.ref!r} cannot be read: {rel} has no usable header line"
                return f"session {target.ref!r} does not exist under {layout.SESSIONS_RAW}/"
            missing = [n for n in target.turns if session.turn(n) is None]
            if missing:
                last = session.turns[-1].n if session.turns else 0
                return f"{target} cites turn {missing[0]}, but session {target.ref!r} has turns 1-{last}"
            return None
        if target.kind == "source":
            if target.ref not in self.source_records:
                return f"{target} names no record under {layout.SOURCES}/{target.connector}/"
            return None
        if not self.tree.exists(f"{layout.NOTES}/{target.ref}"):
            return f"{target}: no such note under {layout.NOTES}/"
        return None

    def cited_text(self, raw: str) -> list[str]:
        """The texts a target points at: each turn as 'speaker: text' (the speaker's first word, so
        that a name counts as support), or the record, or the note."""
        target = CitationTarget.parse(raw)
        if target.kind == "session":
            session = self.session(target.ref)
            turns = [session.turn(n) for n in target.turns] if session else []
            out = []
            for turn in filter(None, turns):
                who = (turn.speaker or turn.role).split(" ")[0]
                said = turn_evidence(turn)
                out.append(f"{who}: {said}" if who else said)
            return out
        if target.kind == "source":
            rec = self.source_records.get(target.ref)
            return [rec.text] if rec else []
        note = self.doc(f"{layout.NOTES}/{target.ref}")
        return [note.body.strip()] if note else []
