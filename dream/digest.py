"""Topic digests: what a run needs of a topic's notes, without reading every note.

A page is compiled from all of its topic's notes, but it shows only the newest PAGE_SECTION_FACTS
of each section (dream.phases.update). On a large Brain the owner's topic holds ~40,000 notes;
parsing them all for one new session cost most of a nightly run. A digest keeps, per topic:

- the indexes attach needs (current notes by statement key and by slot);
- for the page: each section's size, its pinned notes (current employer, home, relations: always
  shown) and its *candidates*, the newest CANDIDATES of the others (the true top of the section,
  so the page's newest PAGE_SECTION_FACTS are among them), the same for History, the slugs all
  notes mention, the first and last date;
- the candidates' and pins' notes themselves.

A note that changes updates the digest in place: it leaves the section it was in and joins the
one it is in now. When a section loses so many candidates that the page's top may no longer be
among them, the digest is dropped and the topic is read in full once (Compilation.topic_view).

A digest is trusted only for the exact notes it was built from: it is stored with a key over
every note's path and git blob id (the tree's keys, so checking it reads no note), and a run that
finds other notes (an owner's edit, a sync that did not land) reads the topic in full instead.
"""

from __future__ import annotations

import hashlib
import operator
from dataclasses import dataclass, field
from typing import Callable, Iterable

from dream.backends.base import PAGE_SECTION_FACTS
from dream.notes import Note
from dream.offline.facts import is_subject_slot

#: Candidates kept per section beyond the pins: twice what a page shows, so a night's superseded
#: notes rarely leave a section short (then the topic is read in full once).
CANDIDATES = 50

Section_of = Callable[[str, str, str], tuple[str, bool]]  # backend.page_section


def pinned(note: Note) -> bool:
    """A current employer, home or named relation: shown however old (a newer one would have replaced it)."""
    return is_subject_slot(note.slot)


by_observed = operator.attrgetter("observed", "path")
by_until = operator.attrgetter("until", "observed")


def by_event(note: Note) -> tuple:
    """A dated section's order: when it happened, then when it was said, then the path."""
    return (note.event_date or note.observed, note.observed, note.path)


def newest(notes: list[Note], key, limit: int = PAGE_SECTION_FACTS, reverse: bool = False,
           pinned: Callable[[Note], bool] | None = None) -> list[Note]:
    """Every `pinned` note and the others that sort last by `key` (first, with `reverse`), `limit`
    in all (more only when the pins are more), in their given order."""
    if len(notes) <= limit:
        return notes
    pins = [n for n in notes if pinned(n)] if pinned else []
    ranked = sorted((n for n in notes if not pinned or not pinned(n)), key=key, reverse=reverse)
    room = max(limit - len(pins), 0)
    keep = set(map(id, ranked[:room] if reverse else ranked[len(ranked) - room:])) | set(map(id, pins))
    return [n for n in notes if id(n) in keep]


def top(notes: Iterable[Note], dated: bool | None, limit: int) -> list[Note]:
    """The `limit` notes a page prefers, by the order `newest` ranks its section with (`dated`
    None: History, newest end first), in (observed, path) order. One total order for any limit,
    so the top `limit` holds the top of any smaller limit."""
    ordered = sorted(notes, key=by_observed)
    if dated is None:
        return newest(ordered, by_until, limit, reverse=True)
    return newest(ordered, by_event if dated else by_observed, limit)


@dataclass
class Section:
    """One section of the page (or History): how many notes, the pinned ones, the candidates."""

    dated: bool | None  # None: History
    count: int = 0
    pins: set[str] = field(default_factory=set)
    cands: set[str] = field(default_factory=set)

    @property
    def complete(self) -> bool:
        """Every note of the section is a pin or a candidate."""
        return self.count == len(self.pins) + len(self.cands)

    def deep_enough(self, need: int) -> bool:
        return self.complete or len(self.cands) >= need


@dataclass
class TopicView:
    """The digest's page part, for one backend's sections and one page type."""

    backend: str
    page_type: str
    current: int = 0  # current notes in all
    sections: dict[str, Section] = field(default_factory=dict)
    history: Section = field(default_factory=lambda: Section(dated=None))
    linked: set[str] = field(default_factory=set)  # slugs the notes mention
    first: object = None  # earliest observed/until date
    last: object = None

    def members(self) -> set[str]:
        out = set(self.history.cands)
        for s in self.sections.values():
            out |= s.pins | s.cands
        return out


def build_view(notes: Iterable[Note], section_of: Section_of, backend: str, page_type: str) -> TopicView:
    """The view of all of a topic's notes."""
    view = TopicView(backend=backend, page_type=page_type)
    members: dict[str, list[Note]] = {}
    history: list[Note] = []
    for note in notes:
        _span(view, note)
        view.linked.update(note.mentions)
        if note.until is not None:
            history.append(note)
            continue
        view.current += 1
        heading, dated = section_of(page_type, note.kind, note.statement)
        section = view.sections.get(heading)
        if section is None:
            section = view.sections[heading] = Section(dated=dated)
        section.count += 1
        if pinned(note):
            section.pins.add(note.path)
        else:
            members.setdefault(heading, []).append(note)
    for heading, listed in members.items():
        section = view.sections[heading]
        section.cands = {n.path for n in top(listed, section.dated, CANDIDATES)}
    view.history.count = len(history)
    view.history.cands = {n.path for n in top(history, None, CANDIDATES)}
    return view


def _span(view: TopicView, note: Note) -> None:
    for d in (note.observed, note.until):
        if d is not None:
            view.first = d if view.first is None or d < view.first else view.first
            view.last = d if view.last is None or d > view.last else view.last


def change(view: TopicView, old: Note | None, new: Note, section_of: Section_of, note: Callable[[str], Note]) -> bool:
    """Apply one note's change (`old` None: a new note) in place; False when a section would be left
    without enough candidates to know the page's top (the caller then reads the topic in full).
    `note(path)` gives a candidate's note (to rank a section's candidates)."""
    if old is not None:
        section = _section_of(view, old, section_of)
        section.count -= 1
        section.pins.discard(old.path)
        section.cands.discard(old.path)
        if old.until is None:
            view.current -= 1
            if section.count == 0:  # as a view of every note has it: no such section
                view.sections = {h: s for h, s in view.sections.items() if s is not section}
    _span(view, new)
    view.linked.update(new.mentions)
    if new.until is None:
        view.current += 1
    section = _section_of(view, new, section_of, create=True)
    # The candidates are the section's top len(cands) (all of it when complete): with the new note
    # among them, the lowest one goes, unless every note fits.
    room = CANDIDATES if section.complete else len(section.cands)
    section.count += 1
    if new.until is None and pinned(new):
        section.pins.add(new.path)
    else:
        section.cands.add(new.path)
        if len(section.cands) > room:
            section.cands = {n.path for n in top((note(p) for p in section.cands), section.dated, room)}
    return all(s.deep_enough(PAGE_SECTION_FACTS) for s in (*view.sections.values(), view.history))


def _section_of(view: TopicView, note: Note, section_of: Section_of, create: bool = False) -> Section:
    if note.until is not None:
        return view.history
    heading, dated = section_of(view.page_type, note.kind, note.statement)
    section = view.sections.get(heading)
    if section is None:
        section = Section(dated=dated)
        if create:
            view.sections[heading] = section
    return section


def topic_key(entries: Iterable[tuple[str, str]]) -> str:
    """The key of a topic's notes: a digest of each (path, git blob id), in path order."""
    h = hashlib.blake2b(digest_size=16)
    h.update("\n".join([path + " " + blob for path, blob in sorted(entries)]).encode("utf-8"))  # 36,000 notes: no f-string each
    return h.hexdigest()


def dump(key: str, by_key: dict[str, str] | None, by_slot: dict[str, set[str]], view: TopicView | None,
         cards: dict[str, dict], gens: list[str] | None = None) -> dict:
    """The digest as JSON data (`cards`: the note cards of the view's members). The key index is
    `by_key` inline, or, when `by_key` is None, the generation of each of its bucket files (`gens`,
    dream.compile.KeyIndex)."""
    data: dict = {"key": key, **({"by_key": by_key} if by_key is not None else {"keys": gens}),
                  "by_slot": {s: sorted(p) for s, p in sorted(by_slot.items()) if p}}
    if view is not None:
        data["view"] = {
            "backend": view.backend,
            "page_type": view.page_type,
            "current": view.current,
            "sections": {h: [s.dated, s.count, sorted(s.pins), sorted(s.cands)] for h, s in sorted(view.sections.items())},
            "history": [view.history.count, sorted(view.history.cands)],
            "linked": sorted(view.linked),
            "span": [view.first.isoformat(), view.last.isoformat()] if view.first is not None else [],
        }
        data["cards"] = cards
    return data


def load_view(data: dict) -> TopicView:
    """The view of a digest written by `dump` (raises KeyError/TypeError/ValueError when malformed)."""
    import datetime as dt

    v = data["view"]
    view = TopicView(backend=str(v["backend"]), page_type=str(v["page_type"]), current=int(v["current"]))
    for heading, (dated, count, pins, cands) in v["sections"].items():
        view.sections[heading] = Section(dated=bool(dated), count=int(count), pins=set(pins), cands=set(cands))
    count, cands = v["history"]
    view.history = Section(dated=None, count=int(count), cands=set(cands))
    view.linked = set(v["linked"])
    if v["span"]:
        view.first, view.last = (dt.date.fromisoformat(d) for d in v["span"])
    return view
