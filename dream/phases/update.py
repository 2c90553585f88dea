"""Update: compile the pages whose notes changed, then the generated files (indexes, log, state).

A page Dream wrote before is regenerated from its notes and 3-way merged with any edit the owner
made since; a page Dream never wrote (hand-written) only gets new facts appended, so no byte
Dream did not parse is rewritten. A page the owner deleted is recorded in forget.md, not re-made.
"""

from __future__ import annotations

import datetime as dt
import operator
import re

from brain import layout
from brain.page import Frontmatter, Page, new_page, render_page
from brain.errors import PageError
from dream.backends.base import PAGE_SECTION_FACTS, BackendError, PageFact, WritePageRequest
from dream.compile import Compilation
from dream.notes import Note
from dream.text.facts import is_subject_slot

by_observed = operator.attrgetter("observed", "path")
by_until = operator.attrgetter("until", "observed")


def by_event(note: Note) -> tuple:
    """A dated section's order: when it happened, then when it was said, then the path."""
    return (note.event_date or note.observed, note.observed, note.path)


def newest(notes: list[Note], key, reverse: bool = False, pin_slots: bool = False) -> list[Note]:
    """The notes that sort last by `key` (first, with `reverse`), PAGE_SECTION_FACTS in all, in their
    given order. `pin_slots`: a current employer, home or named relation is kept however old (a newer
    one would have replaced it), more than PAGE_SECTION_FACTS only when those are more."""
    if len(notes) <= PAGE_SECTION_FACTS:
        return notes
    held = {id(n) for n in notes if pin_slots and is_subject_slot(n.slot)}
    ranked = sorted((n for n in notes if id(n) not in held), key=key, reverse=reverse)
    room = max(PAGE_SECTION_FACTS - len(held), 0)
    keep = set(map(id, ranked[:room] if reverse else ranked[len(ranked) - room:])) | held
    return [n for n in notes if id(n) in keep]


def update_pages(comp: Compilation) -> None:
    """Write every touched page into the staged tree (forgotten pages were excluded at orient)."""
    for slug in sorted(comp.touched | comp.new_pages):
        if slug in comp.instructions.forget:
            continue
        path = comp.page_path(slug)
        if path is None:
            continue
        try:
            _update_page(comp, slug, path)
        except (PageError, BackendError) as exc:  # a model call failed: that page only (dream.run keeps its sessions pending)
            comp.failures[path] = str(exc)


#: A fact said again and again cites its first statement and its latest ones on the page; the note keeps all.
MAX_CITES = 3


def _shown_targets(note: Note) -> list[str]:
    sources = note.sources if len(note.sources) <= MAX_CITES else [note.sources[0], *note.sources[-(MAX_CITES - 1):]]
    return [*sources, *([note.superseded_by] if note.superseded_by else [])]


def _page_facts(notes: list[Note], numbers: dict[str, int]) -> list[PageFact]:
    """The notes as the page writer gets them; a target takes the next cite number at its first use."""
    # Plain construction: pydantic-core validates these keywords faster than model_construct assigns them.
    return [
        PageFact(
            kind=note.kind,
            statement=note.statement,
            cites=[numbers.setdefault(t, len(numbers) + 1) for t in _shown_targets(note)],
            observed=note.observed,
            event_date=note.event_date,
            until=note.until,
            slot=note.slot,
        )
        for note in notes
    ]


def _shown_notes(comp: Compilation, page_type: str, current: list[Note], history: list[Note],
                 mentioned: list[Note]) -> tuple[list[Note], list[Note], list[Note], dict[str, int]]:
    """What the page shows: per section (as the backend groups them) the newest PAGE_SECTION_FACTS
    facts and the current employer, home and relations; the newest of History and of Mentioned in;
    and how many each section leaves out. The page writer never sees the rest (they stay in their
    notes), so a page of 40,000 facts costs what a page of a few hundred does, for a model too."""
    hidden: dict[str, int] = {}

    def count_left_out(heading: str, total: int, shown: list) -> list:
        if total > len(shown):
            hidden[heading] = total - len(shown)
        return shown

    if len(current) > PAGE_SECTION_FACTS:
        groups: dict[str, tuple[bool, list[Note]]] = {}
        for note in current:
            heading, dated = comp.backend.page_section(page_type, note.kind, note.statement)
            groups.setdefault(heading, (dated, []))[1].append(note)
        keep: set[int] = set()
        for heading, (dated, notes) in groups.items():
            keep.update(map(id, count_left_out(heading, len(notes), newest(notes, by_event if dated else by_observed, pin_slots=True))))
        current = [n for n in current if id(n) in keep]
    history = count_left_out("History", len(history), newest(history, by_until, reverse=True))
    mentioned = count_left_out("Mentioned in", len(mentioned), newest(mentioned, by_observed))
    return current, history, mentioned, hidden


def compile_page(comp: Compilation, slug: str, path: str) -> Page:
    """The page as Dream would write it from its notes (no owner edits applied)."""
    loc = layout.page_location(path)
    known = comp.resolver.by_slug[slug]
    notes = sorted(comp.topic(slug).notes.values(), key=by_observed)
    current = [n for n in notes if n.until is None]  # Note.current, without a call per note
    history = [n for n in notes if n.until is not None]
    mentioned: list[Note] = []
    for note_path in comp.state.mentions.get(slug, []):
        other = comp.topic(note_path.split("/")[1]).notes.get(note_path)
        if other is not None and other.current and other.topic != slug:
            mentioned.append(other)
    linked = sorted({m for n in [*notes, *mentioned] for m in n.mentions} | {n.topic for n in mentioned})
    dates = [d for n in notes for d in (n.observed, n.until) if d is not None] or [comp.settings.now.date()]
    current, history, mentioned, hidden = _shown_notes(comp, loc[0], current, history, mentioned)
    numbers: dict[str, int] = {}  # in order of first use: current, then history, then mentioned
    facts = [_page_facts(notes, numbers) for notes in (current, history, mentioned)]
    linked = [s for s in linked if s != slug and comp.page_path(s) and s not in comp.instructions.forget]
    # Only names a shown statement holds can be linked: the request stays the size of the page.
    said = "\n".join(n.statement for n in [*current, *history, *mentioned])
    names: dict[str, str] = {}
    for other in linked:
        k = comp.resolver.by_slug[other]
        for name in sorted(k.names | {k.title}):
            if len(name) > 2 and name.lower() != name and name in said:
                names.setdefault(name, other)
    if len(linked) > PAGE_SECTION_FACTS:
        hidden["Related"] = len(linked) - PAGE_SECTION_FACTS
    req = WritePageRequest(
        slug=slug,
        title=known.title,
        type=loc[0],
        aliases=sorted(a for a in known.names if a != known.title and (a.lower() != a or "/" in a)),  # a path: a project's folder
        current=facts[0],
        history=facts[1],
        mentioned=facts[2],
        related=[(s, comp.resolver.by_slug[s].title) for s in linked[:PAGE_SECTION_FACTS]],
        names=names,
        instructions=comp.instructions.text,
        hidden=hidden,
    )
    draft = comp.backend.write_page(req)
    live = comp.view.doc(path)
    fm = Frontmatter(
        title=known.title,
        type=loc[0],
        aliases=req.aliases,
        summary=draft.summary,
        created=(live.frontmatter.created if live and live.frontmatter.created else min(dates)),
        updated=max(dates),
        sources={n: t for t, n in numbers.items()},
    )
    body, sources = renumber(draft.body, fm.sources, live.frontmatter.sources if live else None)
    return new_page(path, fm.model_copy(update={"sources": sources}), body)


def renumber(body: str, sources: dict[int, str], previous: dict[int, str] | None = None) -> tuple[str, dict[int, str]]:
    """Sources numbered in order of first use in the body; unused ones dropped. A target the page
    cited before (`previous`: its sources) keeps its number and a new one takes a number above all
    of them, so an owner's edited line goes on citing what it cited, and an update touches only the
    lines whose facts changed."""
    was = {t: n for n, t in sorted((previous or {}).items(), reverse=True)}
    top = max(was.values(), default=0)
    order: dict[int, int] = {}

    def _new(m: re.Match) -> str:
        nonlocal top
        old = int(m.group(1))
        if old not in sources:
            return m.group(0)  # the C001 validator will name it
        if old not in order:
            target = sources[old]
            if target not in was:
                top += 1
            order[old] = was.get(target, top)
        return f"[cite:{order[old]}]"

    body = re.sub(r"\[cite:(\d+)\]", _new, body)
    return body, {new: sources[old] for old, new in sorted(order.items(), key=lambda kv: kv[1])}


def _update_page(comp: Compilation, slug: str, path: str) -> None:
    live = comp.view.doc(path)
    exists = comp.view.tree.exists(path)
    raw = comp.view.tree.read_if_exists(path) if exists and path not in comp.state.written else None
    if raw is not None:
        try:
            live_text = raw.decode("utf-8")
        except UnicodeDecodeError:  # appended to and written back, its other bytes would change
            comp.conflicts.append(f"{path}: the page is not valid UTF-8, so new facts were not added; save it as UTF-8 and run again")
            return
        text = _append_to_hand_written(comp, slug, path, live, live_text)
        if text is not None and text != live_text:
            comp.staged.write(path, text)
            comp.updated.append(path)
        return
    if comp.stage(path, render_page(compile_page(comp, slug, path))):
        (comp.updated if exists else comp.created).append(path)


def _append_to_hand_written(comp: Compilation, slug: str, path: str, live: Page | None, live_text: str) -> str | None:
    """New facts appended to a page Dream did not write: its own bytes stay as they are."""
    if live is None:
        comp.conflicts.append(f"{path}: the page cannot be parsed, so new facts were not added; fix it and run again")
        return None
    cited = set(live.frontmatter.sources.values())
    fresh = [
        n for n in sorted(comp.topic(slug).notes.values(), key=lambda n: (n.observed, n.path))  # those staged are read
        if comp.staged.has(n.path) and n.current and not set(n.sources) & cited
    ]
    if not fresh:
        return None
    sources = dict(live.frontmatter.sources)
    lines = []
    for note in fresh:
        numbers = []
        for target in note.sources:
            n = next((k for k, v in sources.items() if v == target), None)
            if n is None:
                n = max(sources, default=0) + 1
                sources[n] = target
            numbers.append(n)
        lines.append(f"- {note.observed.isoformat()}: {note.statement} " + "".join(f"[cite:{n}]" for n in numbers))
    body = live.body.rstrip("\n") + "\n"
    if "\n## Updates from Dream\n" not in "\n" + body:
        body += "\n## Updates from Dream\n"
    body += "\n".join(lines) + "\n"
    updated = max([live.frontmatter.updated or dt.date.min, *[n.observed for n in fresh]])
    fm = live.frontmatter.model_copy(update={"sources": sources, "updated": updated})
    return render_page(live.with_changes(frontmatter=fm, body=body))
