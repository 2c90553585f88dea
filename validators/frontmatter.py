"""F checks: front matter of pages, session summaries and notes (docs/FORMATS.md).

They read every document the BrainView found, parsed or not, and the raw YAML mapping of
those `parse_page` refused, so that one bad key is one precise finding.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterator
from typing import Any

from brain import layout
from brain.frontmatter import is_source_key
from brain.view import BrainView
from validators.documents import Document, documents, nearest
from validators.registry import Item, check

REQUIRED: dict[str, tuple[str, ...]] = {
    "page": ("title", "type", "summary", "created", "updated"),
    "summary": ("id", "title", "type", "started", "turns"),
    "note": ("title", "type", "kind", "topic", "confidence", "observed"),
}
NOTE_KINDS = ("preference", "identity", "relationship", "project", "event", "decision", "correction", "learning", "task", "command")
KIND_TYPE = {"summary": "session", "note": "note"}
KIND_WHERE = {"page": "a page", "summary": "a session summary", "note": "a note"}
_TEXT_KEYS = ("title", "type", "summary", "id", "kind", "topic")
_LIST_KEYS = ("aliases", "participants", "topics")
_DATE_KEYS = ("created", "updated", "observed")
_DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def _kind_name(value: Any) -> str:
    return {dict: "a mapping", list: "a list", bool: "true/false"}.get(type(value), type(value).__name__)


def _is_text(value: Any) -> bool:
    return isinstance(value, (str, int, float)) and not isinstance(value, bool)


def _str(value: Any) -> str | None:
    """A text value as the page model reads it (numbers become text); None for anything else."""
    return (str(value).strip() or None) if _is_text(value) else None


def _empty(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


# -- rules shared by the checks and by F001's fallback --------------------------------------
def missing_keys(doc: Document) -> list[tuple[int, str]]:
    out = []
    need = REQUIRED[doc.kind]
    names = ", ".join(need[:-1]) + " and " + need[-1]
    for key in need:
        if key not in doc.meta:
            out.append((1, f"front matter key '{key}' is missing; {KIND_WHERE[doc.kind]} needs {names}"))
        elif _empty(doc.meta[key]):
            out.append((doc.line(key), f"front matter key '{key}' is empty; give it a value"))
    return out


def wrong_types(doc: Document) -> list[tuple[int, str]]:
    meta = doc.meta
    out = []
    for key in meta:
        if not isinstance(key, str):
            out.append((1, f"front matter key {key!r} is not a name; keys are words such as title"))
    for key in _TEXT_KEYS:
        value = meta.get(key)
        if value is not None and not _is_text(value):
            out.append((doc.line(key), f"front matter key '{key}' must be text, not {_kind_name(value)}"))
    for key in _LIST_KEYS:
        value = meta.get(key)
        if value is None or isinstance(value, str) or (isinstance(value, list) and all(_is_text(v) for v in value)):
            continue
        out.append((doc.line(key), f"front matter key '{key}' must be a list of names, e.g. [a, b]"))
    sources = meta.get("sources")
    if sources is not None and not isinstance(sources, dict):
        out.append((doc.line("sources"), "front matter key 'sources' must be a mapping of numbers to citation targets"))
    elif isinstance(sources, dict):
        for k, v in sources.items():
            if not is_source_key(k):
                out.append((doc.line("sources"), f"sources key {k!r} must be a whole number (the N of [cite:N])"))
            elif not _is_text(v):
                out.append((doc.line("sources"), f"sources entry {k} must be one citation target, not {_kind_name(v)}"))
    if doc.kind == "summary" and "turns" in meta and meta["turns"] is not None:
        turns = meta["turns"]
        if isinstance(turns, bool) or not isinstance(turns, int) or turns < 0:
            out.append((doc.line("turns"), f"front matter key 'turns' must be a whole number, not {turns!r}"))
    return out


def _as_date(value: Any) -> dt.date | None:
    """The date a value names: one YAML read, or YYYY-MM-DD text; None when it names none."""
    if isinstance(value, dt.date):
        return value.date() if isinstance(value, dt.datetime) else value
    try:
        return dt.date.fromisoformat(value.strip()) if isinstance(value, str) and _DATE_RE.match(value.strip()) else None
    except ValueError:
        return None


def _is_timestamp(value: Any) -> bool:
    try:
        return isinstance(value, dt.date) or (isinstance(value, str) and bool(dt.datetime.fromisoformat(value.strip())))
    except ValueError:
        return False


def bad_dates(doc: Document) -> list[tuple[int, str]]:
    out = []
    for key in _DATE_KEYS:
        value = doc.meta.get(key)
        if not _empty(value) and _as_date(value) is None:
            out.append((doc.line(key), f"{key} {_show(value)} is not a date; write YYYY-MM-DD"))
    if doc.kind == "summary":
        value = doc.meta.get("started")
        if not _empty(value) and not _is_timestamp(value):
            out.append((doc.line("started"), f"started {_show(value)} is not a date and time; write e.g. 2026-05-03T10:02:00+09:00"))
    return out


def _show(value: Any) -> str:
    text = repr(value) if isinstance(value, str) else str(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _each(view: BrainView, rule) -> Iterator[Item]:
    for doc in documents(view):
        if doc.meta is not None:
            for line, message in rule(doc):
                yield doc.path, line, message


# -- checks -----------------------------------------------------------------------------------
@check("F001", "error", "document cannot be read: no or unclosed front matter, invalid YAML, anchors, not a mapping, not UTF-8")
def unreadable(view: BrainView) -> Iterator[Item]:
    """Documents `parse_page` refused whose front matter could not even be loaded, plus any
    refusal no more precise F check explains (so a refused document always has a finding)."""
    for doc in documents(view):
        err = doc.split_error
        if err is None and doc.error is not None and not (missing_keys(doc) or wrong_types(doc) or bad_dates(doc)):
            err = doc.error
        if err is not None:
            yield doc.path, err.line, f"{err.message} ({err.hint})" if err.hint else err.message


@check("F002", "error", "required front matter key missing or empty (page, session summary or note)")
def required_keys(view: BrainView) -> Iterator[Item]:
    yield from _each(view, missing_keys)


@check("F003", "error", "front matter value of the wrong shape (text, list, sources mapping, turn count)")
def value_types(view: BrainView) -> Iterator[Item]:
    yield from _each(view, wrong_types)


@check("F004", "error", "date that is not YYYY-MM-DD (created, updated, observed) or a bad `started` time")
def dates(view: BrainView) -> Iterator[Item]:
    yield from _each(view, bad_dates)


def _not_one_of(view: BrainView, kind: str, key: str, choices: tuple[str, ...]) -> Iterator[tuple[Document, str, str]]:
    """(document, value, did-you-mean hint) of each `kind` document whose `key` is none of `choices`."""
    for doc in documents(view):
        value = _str((doc.meta or {}).get(key))
        if doc.kind == kind and value is not None and value not in choices:
            guess = nearest(value.lower(), list(choices))
            yield doc, value, f" (did you mean '{guess}'?)" if guess else ""


@check("F005", "error", "page type is not one of the page types")
def unknown_type(view: BrainView) -> Iterator[Item]:
    for doc, value, hint in _not_one_of(view, "page", "type", layout.PAGE_TYPES):
        yield doc.path, doc.line("type"), f"type '{value}' is not a page type{hint}; use one of {', '.join(layout.PAGE_TYPES)}"


@check("F006", "error", "type does not match the folder (knowledge/<folder>/, sessions/summaries/, notes/)")
def type_folder(view: BrainView) -> Iterator[Item]:
    for doc in documents(view):
        value = _str((doc.meta or {}).get("type"))
        if value is None:
            continue
        if doc.kind == "page":
            location = layout.page_location(doc.path)
            if value in layout.PAGE_TYPES and location and location[0] != value:
                right = layout.folder_for(value)
                yield doc.path, doc.line("type"), (
                    f"type '{value}' does not match folder {doc.path.rsplit('/', 1)[0]}/; "
                    f"move the file to {right}/ or write type: {location[0]}"
                )
        elif value != KIND_TYPE[doc.kind]:
            folder = layout.SESSIONS_SUMMARIES if doc.kind == "summary" else layout.NOTES
            yield doc.path, doc.line("type"), f"type '{value}' does not belong in {folder}/; write type: {KIND_TYPE[doc.kind]}"


@check("F007", "error", "note kind is not one of the note kinds")
def note_kind(view: BrainView) -> Iterator[Item]:
    for doc, value, hint in _not_one_of(view, "note", "kind", NOTE_KINDS):
        yield doc.path, doc.line("kind"), f"note kind '{value}' is unknown{hint}; use one of {', '.join(NOTE_KINDS)}"


@check("F008", "error", "note confidence is not a number between 0 and 1")
def note_confidence(view: BrainView) -> Iterator[Item]:
    for doc in documents(view):
        if doc.kind != "note" or doc.meta is None or _empty(doc.meta.get("confidence")):
            continue
        value = doc.meta["confidence"]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
            yield doc.path, doc.line("confidence"), f"confidence {_show(value)} must be a number from 0 to 1, e.g. 0.8"


@check("F009", "error", "session summary id does not match its file name")
def summary_id(view: BrainView) -> Iterator[Item]:
    for doc in documents(view):
        value = (doc.meta or {}).get("id")
        if doc.kind == "summary" and _is_text(value) and str(value) != doc.stem:
            yield doc.path, doc.line("id"), f"id '{value}' does not match the file name {doc.stem}.md; they must be the same session id"


@check("F010", "warning", "updated is earlier than created")
def updated_before_created(view: BrainView) -> Iterator[Item]:
    for doc in documents(view):
        meta = doc.meta or {}
        c, u = _as_date(meta.get("created")), _as_date(meta.get("updated"))
        if c is not None and u is not None and u < c:
            yield doc.path, doc.line("updated"), f"updated {u.isoformat()} is earlier than created {c.isoformat()}; fix one of the dates"


@check("F011", "warning", "note topic does not match its folder notes/<topic>/")
def note_topic_folder(view: BrainView) -> Iterator[Item]:
    for doc in documents(view):
        value = _str((doc.meta or {}).get("topic"))
        folder = doc.path.split("/")[1]
        if doc.kind == "note" and value is not None and value != folder:
            yield doc.path, doc.line("topic"), f"topic '{value}' does not match the folder notes/{folder}/; move the note or fix the topic"

