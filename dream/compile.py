"""Compilation: the state one run carries through its phases (what is known, what was staged).

Phases read the live tree through `view`, write only through `stage` (into `staged`), and record
what they did on the compilation; nothing here touches the repository (sync does, after the gate).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from brain import layout
from brain.page import Page, render_page
from brain.repo import blob_id
from brain.view import BrainView, parse_bytes
from dream.backends.base import EntityRef, ModelBackend
from dream.instructions import Instructions
from dream.merge import merge3
from dream.notes import Note, note_from_page
from dream.text.entities import Resolver
from dream.text.words import content_key
from dream.settings import DreamSettings
from dream.staging import StagedTree
from dream.state import DreamState


@dataclass
class TopicNotes:
    """Every note of a topic, with the indexes attach needs (equal statements, slots), kept in step."""

    notes: dict[str, Note] = field(default_factory=dict)
    by_key: dict[str, str] = field(default_factory=dict)  # statement key → path (current notes)
    by_slot: dict[str, set[str]] = field(default_factory=dict)  # slot → paths (current notes)
    stems: set[str] = field(default_factory=set)  # the file stems in use (note_slug)

    def put(self, note: Note) -> None:
        key = content_key(note.statement)  # statements with the same content words say the same thing
        old = self.notes.get(note.path)
        if old is not None and old.slot:
            self.by_slot.get(old.slot, set()).discard(note.path)
        if self.by_key.get(key) == note.path:
            del self.by_key[key]
        self.notes[note.path] = note
        self.stems.add(note.path.rsplit("/", 1)[1][:-3])
        if note.current:
            self.by_key.setdefault(key, note.path)
            if note.slot:
                self.by_slot.setdefault(note.slot, set()).add(note.path)


@dataclass
class Compilation:
    settings: DreamSettings
    backend: ModelBackend
    view: BrainView  # the live tree (working tree: manual edits included)
    staged: StagedTree
    state: DreamState
    instructions: Instructions
    run_id: str
    read_blob: Callable[[str], str | None]  # git blob id → text (merge bases)
    head: str | None  # the commit the run started from
    resolver: Resolver = field(default_factory=Resolver)
    touched: set[str] = field(default_factory=set)  # page slugs whose notes changed
    new_pages: set[str] = field(default_factory=set)  # slugs of the pages this run makes
    topics: dict[str, TopicNotes] = field(default_factory=dict)  # topic → its notes (read when first asked)
    failures: dict[str, str] = field(default_factory=dict)  # page path → why it could not be written
    conflicts: list[str] = field(default_factory=list)
    forgotten: list[str] = field(default_factory=list)
    facts: int = 0  # notes made
    facts_superseded: int = 0
    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)  # hand-written files Dream left as they are
    unstaged_notes: dict[str, Note] = field(default_factory=dict)  # path → note attach changed (dream.phases.attach)
    own: dict[str, str | None] = field(default_factory=dict)  # path → Dream's text under the owner's edits (None: no edits)
    _bases: dict[str, str | None] = field(default_factory=dict)  # blob id → text, for merges
    _refs: tuple[int, list[EntityRef]] = (-1, [])  # (resolver version, known_refs) as last built

    def seed_resolver(self) -> None:
        """Every existing page is a known entity (by slug, title and aliases)."""
        for path, page in self.view.pages.items():
            loc = layout.page_location(path)
            self.resolver.add(loc[1], page.frontmatter.title, loc[0], page.frontmatter.aliases)

    def seed_owner(self, owner: str) -> None:
        """First-person facts go to the owner's page, found by full name or by the first name speakers use."""
        first = owner.split()[0]
        known = self.resolver.lookup(owner)
        if known is None:
            self.resolver.add(layout.slugify(owner), owner, "person", [first] if first != owner else [])
        elif first != owner and self.resolver.lookup(first) is None:
            self.resolver.alias(known, first)

    def known_refs(self) -> list[EntityRef]:
        """Known entities for the backend, built again only when the resolver learned something
        (a first compile asks once per session)."""
        if self._refs[0] != self.resolver.version:
            refs = [EntityRef(slug=k.slug, title=k.title, type=k.type, aliases=sorted(k.names - {k.title}))
                    for k in sorted(self.resolver.by_slug.values(), key=lambda k: k.slug)]
            self._refs = (self.resolver.version, refs)
        return self._refs[1]

    def page_path(self, slug: str) -> str | None:
        """Where the page with this slug lives (live or new in this run)."""
        known = self.resolver.by_slug.get(slug)
        return layout.page_path(known.type, slug) if known is not None else None

    def topic(self, topic: str) -> TopicNotes:
        """A topic's notes: every note of its folder, read when the topic is first asked, with
        those staged in this run since. The parsed files are not kept (the owner's topic may hold
        40,000 notes): only their Notes."""
        found = self.topics.get(topic)
        if found is None:
            paths = self.view.paths_under(f"{layout.NOTES}/{topic}/")
            found = self.topics[topic] = TopicNotes(stems={p.rsplit("/", 1)[1][:-3] for p in paths})
            for path in paths:
                data = self.view.tree.read_if_exists(path)
                page = parse_bytes(path, data) if data is not None else None
                note = note_from_page(page) if isinstance(page, Page) else None
                if note is not None:
                    found.put(note)
        return found

    def stage(self, path: str, text: str) -> bool:
        """Stage a file Dream owns, protecting the owner's text; True when something was staged.

        A file Dream wrote before and the owner edited since is 3-way merged: the base is Dream's
        own text under the owner's edits (state.json's `merge_bases`), else Dream's last write.
        Where both changed the same lines the owner's lines stay (a conflict, reported) and
        Dream's other changes land. A file Dream never wrote (hand-written) is kept.
        """
        # The run's one reading of the file: the gate compares with it too (C006: which lines are new),
        # and an edit the owner saves after it is merged at sync, from `derived_from`.
        page = self.view.doc(path)
        raw = page.source_text.encode("utf-8") if page is not None and page.source_text is not None else self.view.tree.read_if_exists(path)
        live = raw.decode("utf-8", errors="replace") if raw is not None else None
        blob = self.state.written.get(path) if live is not None else None
        if live is not None and blob is None and not self.staged.has(path):
            self.kept.append(path)
            return False
        # Every write of the run is merged, not only the first: a note that gains two sources in one
        # run is staged twice, and the owner's edit must be in the text that lands.
        base = self.state.merge_bases.get(path) if live is not None else None
        if base is None and blob is not None and blob_id(raw) != blob:
            if blob not in self._bases:  # Dream's last write, read once per run
                self._bases[blob] = self.read_blob(blob)
            base = self._bases[blob]
        merged = text
        if base is not None and live != base:
            merged, clean = merge3(base, live, text)
            if not clean:
                conflict = f"{path}: the owner's edit and Dream's update changed the same lines; the owner's lines were kept"
                if conflict not in self.conflicts:
                    self.conflicts.append(conflict)
            merged = keep_cited_sources(merged, self.view.doc(path), path)
        self.own[path] = text if merged != text else None
        if merged == live:
            self.staged.drop(path)  # an earlier write of this run does not land alone
            return False
        self.staged.computed_from(path, live)
        self.staged.write(path, merged)
        return True


def keep_cited_sources(merged: str, before: Page | None, path: str) -> str:
    """The merged document with the sources its body cites but its front matter lost (an owner's
    kept line cites what Dream's update stopped citing) taken back from `before`, the live page."""
    if before is None or not layout.doc_kind(path):
        return merged
    page = parse_bytes(path, merged.encode("utf-8"))
    if not isinstance(page, Page):
        return merged
    sources = page.frontmatter.sources
    back = {c.n: before.frontmatter.sources[c.n] for c in page.cites if c.n not in sources and c.n in before.frontmatter.sources}
    if not back:
        return merged
    return render_page(page.with_changes(frontmatter=page.frontmatter.model_copy(update={"sources": {**sources, **back}})))
