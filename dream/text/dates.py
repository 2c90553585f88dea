"""Resolving dates in text to absolute dates, relative to when a turn was said."""

from __future__ import annotations

import datetime as dt
import re

MONTHS = {m: i for i, m in enumerate(
    ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"], 1)}
MONTHS.update({k[:3]: v for k, v in list(MONTHS.items())})
MONTHS["sept"] = 9
WEEKDAYS = {d: i for i, d in enumerate(["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"])}
_NUM_WORDS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
              "nine": 9, "ten": 10, "a couple of": 2, "a few": 3, "few": 3, "several": 3}
_MONTH = r"(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
_ISO_RE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_MONTH_DAY_RE = re.compile(_MONTH + r"\.?\s+(\d{1,2})(?:st|nd|rd|th)?(?:,?\s+(\d{4}))?\b", re.I)
_DAY_MONTH_RE = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?" + _MONTH + r"\b(?:,?\s+(\d{4}))?", re.I)
_DAY_OFFSETS = {"today": 0, "tonight": 0, "this morning": 0, "yesterday": -1, "last night": -1, "tomorrow": 1}
_REL_RE = re.compile(
    r"\b(yesterday|today|tonight|this morning|tomorrow|last night|"
    r"(last|next|this) (week|weekend|month|year|monday|tuesday|wednesday|thursday|friday|saturday|sunday)|"
    r"(a|an|one|two|three|four|five|six|seven|eight|nine|ten|a couple of|a few|few|several|\d+) (day|week|month|year)s? ago)\b",
    re.I,
)


def parse_when(text: str | None) -> dt.datetime | None:
    """An ISO 8601 time from a transcript (`2026-05-03T10:02:00+09:00`, or a date)."""
    if not text:
        return None
    try:
        return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        m = _ISO_RE.search(text)
        return dt.datetime(int(m.group(1)), int(m.group(2)), int(m.group(3))) if m else None


def _safe_date(y: int, m: int, d: int) -> dt.date | None:
    try:
        return dt.date(y, m, d)
    except ValueError:
        return None


def _shift_months(day: dt.date, months: int) -> dt.date:
    y, m = divmod(day.month - 1 + months, 12)
    return dt.date(day.year + y, m + 1, min(day.day, 28))


def resolve_date(text: str, ref: dt.date) -> tuple[dt.date, str] | None:
    """The first date the text mentions, made absolute against `ref`; with the matched phrase."""
    m = _ISO_RE.search(text)
    if m and (d := _safe_date(int(m.group(1)), int(m.group(2)), int(m.group(3)))):
        return d, m.group(0)
    for regex, month_group, day_group in ((_MONTH_DAY_RE, 1, 2), (_DAY_MONTH_RE, 2, 1)):
        m = regex.search(text)
        if m:
            name = m.group(month_group).lower().rstrip(".")
            month = MONTHS.get(name) or MONTHS[name[:3]]
            year = int(m.group(3)) if m.group(3) else ref.year
            d = _safe_date(year, month, int(m.group(day_group)))
            if d:
                return d, m.group(0)
    m = _REL_RE.search(text)
    if not m:
        return None
    phrase = m.group(0).lower()
    if phrase in _DAY_OFFSETS:
        return ref + dt.timedelta(days=_DAY_OFFSETS[phrase]), m.group(0)
    if m.group(2):
        which, unit = m.group(2).lower(), m.group(3).lower()
        step = {"last": -1, "next": 1, "this": 0}[which]
        if unit in WEEKDAYS:
            delta = WEEKDAYS[unit] - ref.weekday()
            if which == "last":
                delta = delta - 7 if delta >= 0 else delta
            elif which == "next":
                delta = delta + 7 if delta <= 0 else delta
            return ref + dt.timedelta(days=delta), m.group(0)
        if unit in ("week", "weekend"):
            return ref + dt.timedelta(days=7 * step), m.group(0)
        return _shift_months(ref, step * (12 if unit == "year" else 1)), m.group(0)
    count_word, unit = m.group(4).lower(), m.group(5).lower()
    count = int(count_word) if count_word.isdigit() else _NUM_WORDS.get(count_word, 1)
    if unit in ("day", "week"):
        return ref - dt.timedelta(days=count * (7 if unit == "week" else 1)), m.group(0)
    return _shift_months(ref, -count * (12 if unit == "year" else 1)), m.group(0)
