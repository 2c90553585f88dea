"""Personal data an agent rarely needs: phone numbers, e-mail and street addresses, birth dates.

A page may hold them (the Brain is its owner's), but the index goes into every agent's prompt and
a packet into the prompt of whatever question was asked: there they are withheld, unless the
question asks for that kind ("what is Ana's phone number?"). Secrets (keys, cards, IBANs, national
IDs, passwords) are another matter: brain.secrets redacts them everywhere.
"""

from __future__ import annotations

import re

from brain.patterns import Span, disjoint, replace_spans

_EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b")
# Digits in groups with separators, or after a +: "+351 912 345 678", "(555) 123-4567", "030 1234 5678".
_PHONE = re.compile(r"(?<![\w+-])(?:\+\d{1,3}[\s.-]?)?(?:\(\d{1,4}\)[\s.-]?)?\d{2,4}(?:[\s.-]\d{2,4}){1,4}(?![\w-])")
_STREET = re.compile(
    r"\b\d{1,5}[A-Za-z]?,?\s+(?:[A-Z][\w'-]*\s+){1,4}(?:Street|St|Avenue|Ave|Road|Rd|Boulevard|Blvd|Lane|Ln|Drive|Dr|Way|Court|Ct"
    r"|Place|Pl|Terrace|Square|Sq)\b\.?"
    r"|\b(?:Rua|Avenida|Calle|Via|Rue|Strasse|Straße)\s+(?:[A-Z][\w'-]*\s+|d[aeo]s?\s+|de\s+la\s+){1,4}\d{1,5}[a-z]?\b")
_DATE = r"(?:\d{4}-\d{2}-\d{2}|\d{1,2}[./]\d{1,2}[./]\d{2,4}|(?:\d{1,2}(?:st|nd|rd|th)?\s+)?[A-Z][a-z]{2,8}\.?\s+\d{1,2}(?:st|nd|rd|th)?,?\s+\d{4}|\d{1,2}\s+[A-Z][a-z]{2,8}\s+\d{4})"
_DATE_ONLY = re.compile(r"\d{4}[-./]\d{1,2}[-./]\d{1,2}|\d{1,2}[./]\d{1,2}[./]\d{2,4}")  # digits in groups that are a date, not a phone
_BIRTH = re.compile(rf"\b(?:born(?:\s+on)?|date of birth(?:\s+is)?|DOB|birthday(?:\s+is)?)[:\s]+({_DATE})", re.I)

#: The words of a question that asks for each kind.
_ASKS = {
    "phone": re.compile(r"\b(?:phone|call|number|mobile|cell|whatsapp|contact)\b", re.I),
    "email": re.compile(r"\b(?:e-?mail|address|contact|write to)\b", re.I),
    "address": re.compile(r"\b(?:address|street|mailing|postal|deliver|ship to)\b", re.I),  # "where" wants the city, not the door
    "birth date": re.compile(r"\b(?:birth|born|birthday|age|old)\b", re.I),
}


def personal_spans(text: str) -> list[Span]:
    """(start, end, kind) of each phone number, e-mail address, street address and birth date."""
    spans: list[Span] = [(m.start(), m.end(), "email") for m in _EMAIL.finditer(text)]
    spans += [(m.start(), m.end(), "address") for m in _STREET.finditer(text)]
    spans += [(m.start(1), m.end(1), "birth date") for m in _BIRTH.finditer(text)]
    for m in _PHONE.finditer(text):
        digits = sum(c.isdigit() for c in m.group())
        if 8 <= digits <= 15 and not _DATE_ONLY.fullmatch(m.group()):
            spans.append((m.start(), m.end(), "phone"))
    return disjoint(spans)


def asked_kinds(question: str) -> frozenset[str]:
    """The kinds of personal data a question asks for (none: every kind is withheld)."""
    return frozenset(kind for kind, words in _ASKS.items() if words.search(question))


def withhold(text: str, asked: frozenset[str] = frozenset()) -> str:
    """`text` with each personal datum not asked for replaced by `[phone withheld]` and the like."""
    if not any(c in text for c in "@0123456789"):
        return text
    spans = [s for s in personal_spans(text) if s[2] not in asked]
    return replace_spans(text, spans, lambda kind: f"[{kind} withheld]") if spans else text
