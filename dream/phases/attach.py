"""Attach: facts of a session become notes on the pages of their subjects (newer wins).

Reads the sanitised session, the live notes of the subjects it touches and the state; writes
notes into the staged tree only. Entity resolution goes through the run's Resolver, so
"Sora City Lab" and "Sora City Laboratory" are one page.
"""

from __future__ import annotations

from brain import layout
from brain.citations import CitationTarget
from brain.sessions import Session
from dream.backends.base import Entity, ExtractRequest, Fact
from dream.compile import Compilation
from dream.notes import Note, note_slug, render_note
from dream.text.entities import fold_name
from dream.text.words import content_key
from dream.text.facts import is_subject_slot
from dream.state import MAX_ENTITY_SESSIONS, EntityState

#: Types that get a page as soon as they are named; others once people return to them.
STRONG_TYPES = frozenset({"organization", "project", "event", "concept"})
MAX_MENTIONS = 12


def attach_session(comp: Compilation, session: Session, first_turn: int) -> None:
    """The session's facts onto their subjects' notes; the backend is told the entities known so far."""
    batch = comp.backend.extract_facts(ExtractRequest(
        session=session,
        owner=comp.settings.owner,
        known=comp.known_refs(),
        instructions=comp.instructions.text,
        never_record=comp.instructions.never_record,
        first_turn=first_turn,
    ))
    entities = {e.name: e for e in batch.entities}
    for entity in batch.entities:
        _remember(comp, entity, session.id)
    for fact in batch.facts:
        subject = _slot_holder(comp, fact) or resolve(comp, fact.subject, entities.get(fact.subject), as_subject=True)
        if subject is None:
            continue
        mentions = sorted({s for name in fact.mentions if (s := resolve(comp, name, entities.get(name))) and s != subject})
        add_fact(comp, subject, fact, session.id, mentions)


def _slot_holder(comp: Compilation, fact: Fact) -> str | None:
    """A global slot ("where the second workshop is") stays on the page that first recorded it."""
    if not fact.slot or is_subject_slot(fact.slot):
        return None
    for path in comp.state.slots.get(fact.slot, []):
        topic = path.split("/")[1]
        if comp.page_path(topic) and topic not in comp.instructions.forget:
            return topic
    return None


def _remember(comp: Compilation, entity: Entity, session_id: str) -> None:
    key = fold_name(entity.name)
    seen = comp.state.entities.get(key)
    if seen is None:
        seen = comp.state.entities[key] = EntityState(name=entity.name, type=entity.type)
    if session_id not in seen.sessions and len(seen.sessions) < MAX_ENTITY_SESSIONS:
        seen.sessions.append(session_id)


def resolve(comp: Compilation, name: str, entity: Entity | None, as_subject: bool = False) -> str | None:
    """The page slug for a name, creating the page when the thing deserves one; None otherwise."""
    known = comp.resolver.lookup(name)
    if known is not None:
        if known.slug in comp.instructions.forget:
            return None
        _ensure_page(comp, known.slug)
        if entity is not None:
            for alias in entity.aliases:
                comp.resolver.alias(known, alias)
        return known.slug
    if entity is None:
        return None
    seen = comp.state.entities.get(fold_name(name))
    returned = seen is not None and len(seen.sessions) >= 2
    strong = entity.type in STRONG_TYPES and entity.description != "activity"
    if not (as_subject or strong or returned):
        return None
    slug = comp.resolver.slug_for(name)
    if slug in comp.instructions.forget:
        return None
    comp.resolver.add(slug, name, entity.type, entity.aliases)
    _ensure_page(comp, slug)
    if seen is not None:
        seen.slug = slug
    return slug


def _ensure_page(comp: Compilation, slug: str) -> None:
    """A page for `slug` is made by this run unless a live one parses."""
    path = comp.page_path(slug)
    if path is None or not comp.view.readable(path):
        comp.new_pages.add(slug)


def add_fact(comp: Compilation, topic: str, fact: Fact, session_id: str, mentions: list[str]) -> None:
    """A new note, or one more source on an equal note; superseded notes get `until`."""
    index = comp.topic(topic)
    target = str(CitationTarget.session(session_id, fact.first_turn, fact.last_turn))
    same = index.by_key.get(content_key(fact.statement))
    if same is None and fact.slot:
        same = next((p for p in sorted(index.by_slot.get(fact.slot, ())) if index.notes[p].value == fact.value), None)
    if same is not None:
        note = index.notes[same]
        if target not in note.sources:
            _write(comp, note.model_copy(update={"sources": [*note.sources, target]}))
        return
    for old in _superseded(comp, topic, fact):
        comp.facts_superseded += 1
        until = fact.event_date if fact.event_date and fact.event_date <= fact.observed else fact.observed
        _write(comp, old.model_copy(update={"until": until, "superseded_by": target}))
    path = layout.note_path(topic, note_slug(fact.statement, index.stems))
    note = Note(
        path=path,
        statement=fact.statement,
        kind=fact.kind,
        topic=topic,
        confidence=fact.confidence,
        observed=fact.observed,
        sources=[target],
        event_date=fact.event_date,
        slot=fact.slot,
        value=fact.value,
        mentions=mentions,
    )
    _write(comp, note)
    comp.facts += 1
    if fact.slot and not is_subject_slot(fact.slot):
        filled = comp.state.slots.setdefault(fact.slot, [])
        if path not in filled:
            filled.append(path)
    for slug in mentions:
        listed = comp.state.mentions.setdefault(slug, [])
        if path not in listed:
            listed.append(path)
            del listed[:-MAX_MENTIONS]
            comp.touched.add(slug)


def _superseded(comp: Compilation, topic: str, fact: Fact) -> list[Note]:
    """Current notes the fact replaces: same slot with another value (per subject, or global)."""
    if not fact.slot:
        return []
    if is_subject_slot(fact.slot):
        index = comp.topic(topic)
        candidates = [index.notes[p] for p in sorted(index.by_slot.get(fact.slot, ()))]
    else:  # a note the state lists may have been deleted since
        candidates = [comp.topic(path.split("/")[1]).notes.get(path) for path in comp.state.slots.get(fact.slot, [])]
    return [n for n in candidates if n is not None and n.current and n.slot == fact.slot and n.value != fact.value]


def _write(comp: Compilation, note: Note) -> None:
    """The note's new state; its file is rendered and staged once, by stage_notes."""
    comp.unstaged_notes[note.path] = note
    comp.topic(note.topic).put(note)
    comp.touched.add(note.topic)


def stage_notes(comp: Compilation) -> None:
    """Render and stage the notes attach changed, each once: a note restated by many sessions gains a
    source per session, and rendering it at each one would make a first compile quadratic in them."""
    for path, note in sorted(comp.unstaged_notes.items()):
        comp.stage(path, render_note(note))
    comp.unstaged_notes.clear()
