"""Compilation: the state one run carries through its phases (what is known, what was staged).

Phases read the live tree through `view`, write only through `staged`, and record what they
did on `report`; nothing here touches the repository (sync does, after the gate).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from brain import layout
from brain.page import Page
from brain.view import BrainView
from dream.backends.base import EntityRef, ModelBackend
from dream.instructions import Instructions
from dream.notes import Note, note_from_page
from dream.offline.entities import Resolver
from dream.settings import DreamSettings
from dream.staging import StagedTree
from dream.state import DreamState


@dataclass
class UnitFailure:
    unit: str  # session id or page path
    reason: str


@dataclass
class Compilation:
    settings: DreamSettings
    backend: ModelBackend
    view: BrainView  # the live tree (working tree: manual edits included)
    staged: StagedTree
    state: DreamState
    instructions: Instructions
    run_id: str
    resolver: Resolver = field(default_factory=Resolver)
    touched: set[str] = field(default_factory=set)  # page slugs whose notes changed
    new_pages: dict[str, tuple[str, str, list[str]]] = field(default_factory=dict)  # slug → (title, type, aliases)
    notes: dict[str, dict[str, Note]] = field(default_factory=dict)  # topic → path → note (loaded lazily)
    failures: list[UnitFailure] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    forgotten: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    processed: list[str] = field(default_factory=list)  # session ids summarised and attached
    read_blob: Callable[[str], str | None] = lambda blob: None  # git blob id → text (merge bases)
    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)

    def bump(self, key: str, n: int = 1) -> None:
        self.counts[key] = self.counts.get(key, 0) + n

    def seed_resolver(self) -> None:
        """Every existing page is a known entity (by slug, title and aliases)."""
        for path, page in self.view.pages.items():
            loc = layout.page_location(path)
            if loc:
                self.resolver.add(page.slug, page.frontmatter.title, loc[0], page.frontmatter.aliases)

    def known_refs(self) -> list[EntityRef]:
        return [
            EntityRef(slug=k.slug, title=k.title, type=k.type, aliases=sorted(k.names - {k.title}))
            for k in sorted(self.resolver.by_slug.values(), key=lambda k: k.slug)
        ]

    def page_path(self, slug: str) -> str | None:
        """Where the page with this slug lives (live or new in this run)."""
        known = self.resolver.by_slug.get(slug)
        if known is None:
            return None
        return layout.page_path(known.type, slug)

    def topic_notes(self, topic: str) -> dict[str, Note]:
        """All notes of a topic: the live ones (parsed once) and those staged in this run."""
        if topic not in self.notes:
            loaded: dict[str, Note] = {}
            prefix = f"{layout.NOTES}/{topic}/"
            for path, page in self.view.notes.items():
                if path.startswith(prefix):
                    note = note_from_page(page)
                    if note is not None:
                        loaded[path] = note
            self.notes[topic] = loaded
        return self.notes[topic]

    def live_page(self, slug: str) -> Page | None:
        path = self.page_path(slug)
        return self.view.docs.get(path) if path else None
