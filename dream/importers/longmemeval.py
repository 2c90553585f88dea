"""LongMemEval items → one canonical session per haystack session.

Id `<question_id>-<haystack_session_id>` (../shared/data/README.md): several questions share
haystack sessions, and the question prefix keeps them apart. Turns are numbered from 1 by
position, so `has_answer` evidence maps to turn index + 1; the label itself is not imported
(it is the benchmark's answer key, not something the person said).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from brain.sessions import Session, SessionHeader, Turn
from dream.importers.base import Parsed, checked_id, read_json_list

_DATE = re.compile(r"^\s*(\d{4})/(\d{1,2})/(\d{1,2})\s*(?:\([A-Za-z]+\))?\s*(\d{1,2}):(\d{2})\s*$")
_LISTS = ("haystack_session_ids", "haystack_sessions", "haystack_dates")


def session_id(question_id: str, haystack_session_id: str) -> str:
    return f"{question_id}-{haystack_session_id}"


def parse_date(text: str) -> str | None:
    """`"2023/05/20 (Sat) 02:21"` → `"2023-05-20T02:21:00"`; None if unreadable."""
    m = _DATE.match(text)
    if m is None:
        return None
    year, month, day, hour, minute = (int(g) for g in m.groups())
    if not (1 <= month <= 12 and 1 <= day <= 31 and hour < 24 and minute < 60):
        return None
    return f"{year:04d}-{month:02d}-{day:02d}T{hour:02d}:{minute:02d}:00"


def read_longmemeval(path: Path) -> Parsed:
    """Read a LongMemEval JSON list (oracle, s or m variant)."""
    display = str(path)
    problems: list[str] = []
    data = read_json_list(path, "LongMemEval items", problems)
    sessions: list[Session] = []
    for index, item in enumerate(data):
        where = f"{display}: item {index}"
        if not isinstance(item, dict) or not isinstance(item.get("question_id"), str):
            problems.append(f"{where}: not an object with a string 'question_id'; item skipped")
            continue
        where += f" ({item['question_id']})"
        lists = [item.get(k) for k in _LISTS]
        if not all(isinstance(v, list) for v in lists) or len({len(v) for v in lists}) != 1:
            problems.append(f"{where}: {', '.join(_LISTS)} must be lists of the same length; item skipped")
            continue
        for k, (hid, turns, date) in enumerate(zip(*lists)):
            if not isinstance(hid, str) or not isinstance(turns, list):
                problems.append(f"{where} session {k}: needs a string id and a list of turns; session skipped")
                continue
            sessions.append(_session(item["question_id"], hid, turns, date, f"{where} session {hid}", problems))
    return Parsed(sessions=sessions, problems=problems)


def _session(question_id: str, hid: str, items: list[Any], date: Any, where: str, problems: list[str]) -> Session:
    started = parse_date(date) if isinstance(date, str) else None
    if started is None:
        problems.append(f"{where}: date {date!r} is not like '2023/05/20 (Sat) 02:21'; imported without a time")
    turns = []
    for index, item in enumerate(items):
        # Numbers follow position even past a bad turn, so evidence indexes stay exact.
        if not isinstance(item, dict) or not isinstance(item.get("content"), str) or not isinstance(item.get("role"), str):
            problems.append(f"{where} turn {index + 1}: not a turn with string 'role' and 'content'; skipped")
            continue
        role = item["role"]
        turns.append(Turn(n=index + 1, role=role, speaker=role, text=item["content"]))
    header = SessionHeader(
        id=checked_id(session_id(question_id, hid), where, problems), started=started, source="longmemeval", participants=["user", "assistant"]
    )
    return Session(header=header, turns=turns)
