"""Connector exports under `sources/<connector>/`: iCalendar events, vCards, documents.

A record is addressed as `source:<connector>/<record-id>`: the UID of a VEVENT or VCARD, or the
path of a document below the connector folder.
"""

from __future__ import annotations

from pydantic import Field

from brain.model import Record


class SourceRecord(Record):
    """One record of a connector export, flattened to properties and readable text."""

    connector: str
    record_id: str
    kind: str  # "event", "contact" or "document"
    path: str
    fields: dict[str, str] = Field(default_factory=dict)
    text: str


def unfold(text: str) -> list[str]:
    """RFC 5545/6350 content lines: a line starting with space or tab continues the previous one."""
    out: list[str] = []
    for line in text.replace("\r\n", "\n").split("\n"):
        if line[:1] in (" ", "\t") and out:
            out[-1] += line[1:]
        elif line:
            out.append(line)
    return out


def _unescape(value: str) -> str:
    return value.replace("\\n", "\n").replace("\\N", "\n").replace("\\,", ",").replace("\\;", ";").replace("\\\\", "\\")


def parse_components(text: str, component: str) -> list[dict[str, str]]:
    """Each BEGIN:<component> … END:<component> block as {PROPERTY: value} (parameters dropped)."""
    blocks: list[dict[str, str]] = []
    current: dict[str, str] | None = None
    for line in unfold(text):
        upper = line.upper()
        if upper == f"BEGIN:{component}":
            current = {}
        elif upper == f"END:{component}":
            if current is not None:
                blocks.append(current)
            current = None
        elif current is not None and ":" in line:
            name, _, value = line.partition(":")
            key = name.split(";", 1)[0].upper()
            current.setdefault(key, _unescape(value))
    return blocks


_EVENT_FIELDS = ("SUMMARY", "DTSTART", "DTEND", "LOCATION", "DESCRIPTION")
_CARD_FIELDS = ("FN", "ORG", "TITLE", "EMAIL", "TEL", "NOTE")


def records_of(connector: str, rel_path: str, text: str) -> list[SourceRecord]:
    """The records of one export file (`rel_path` is relative to the Brain)."""
    inner = rel_path.split("/", 2)[2] if rel_path.count("/") >= 2 else rel_path
    lower = rel_path.lower()
    if lower.endswith(".ics"):
        return [_record(connector, rel_path, "event", b, _EVENT_FIELDS) for b in parse_components(text, "VEVENT") if b.get("UID")]
    if lower.endswith(".vcf"):
        return [_record(connector, rel_path, "contact", b, _CARD_FIELDS) for b in parse_components(text, "VCARD") if b.get("UID")]
    if lower.endswith((".md", ".txt")):
        return [SourceRecord(connector=connector, record_id=inner, kind="document", path=rel_path, text=text)]
    return []


def _record(connector: str, path: str, kind: str, block: dict[str, str], keys: tuple[str, ...]) -> SourceRecord:
    fields = {k: block[k] for k in keys if k in block}
    text = "\n".join(f"{k.title()}: {v}" for k, v in fields.items())
    return SourceRecord(connector=connector, record_id=block["UID"], kind=kind, path=path, fields=fields, text=text)
