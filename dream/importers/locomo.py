"""LoCoMo benchmark conversations → one canonical session per `session_<n>`.

The mapping is fixed so gold evidence can be checked (../shared/data/README.md): conversation
`conv-26` session 3 → id `conv-26-s3`, dia_id `D3:7` → turn 7. Turn numbers come from dia_id,
never from position, so a gap in the input stays a gap and citations stay exact.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from brain.citations import CitationTarget
from brain.sessions import Session, SessionHeader, Turn
from dream.importers.base import Parsed, checked_id, read_json_list

_SESSION_KEY = re.compile(r"^session_(\d+)$")
_DIA_ID = re.compile(r"^D(\d+):(\d+)$")
_DATE_TIME = re.compile(r"^\s*(\d{1,2}):(\d{2})\s*([ap]m)\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})\s*$", re.I)
_MONTHS = {m: i for i, m in enumerate(["january", "february", "march", "april", "may", "june", "july", "august",
                                         "september", "october", "november", "december"], start=1)}


def session_id(sample_id: str, session_n: int) -> str:
    return f"{sample_id}-s{session_n}"


def parse_date_time(text: str) -> str | None:
    """`"1:56 pm on 8 May, 2023"` → `"2023-05-08T13:56:00"` (no zone: LoCoMo gives none); None if unreadable."""
    m = _DATE_TIME.match(text)
    month = _MONTHS.get(m.group(5).lower()) if m else None
    if m is None or month is None:
        return None
    hour, minute, ampm, day, year = int(m.group(1)), int(m.group(2)), m.group(3).lower(), int(m.group(4)), int(m.group(6))
    if not (1 <= hour <= 12 and minute < 60 and 1 <= day <= 31):
        return None
    hour = hour % 12 + (12 if ampm == "pm" else 0)
    return f"{year:04d}-{month:02d}-{day:02d}T{hour:02d}:{minute:02d}:00"


def evidence_targets(sample_id: str, evidence: str) -> list[CitationTarget]:
    """Citation targets for one LoCoMo evidence entry; tolerates the malformed `"D8:6; D9:17"` kind."""
    targets = []
    for part in re.split(r"[;,\s]+", evidence.strip()):
        m = _DIA_ID.match(part)
        if m:
            n, t = int(m.group(1)), int(m.group(2))
            targets.append(CitationTarget(kind="session", ref=session_id(sample_id, n), first_turn=t, last_turn=t))
    return targets


def read_locomo(path: Path) -> Parsed:
    """Read a LoCoMo JSON list (e.g. `locomo10.json`); each sample's sessions become sessions."""
    display = str(path)
    problems: list[str] = []
    data = read_json_list(path, "LoCoMo samples", problems)
    sessions: list[Session] = []
    for index, sample in enumerate(data):
        where = f"{display}: sample {index}"
        if not isinstance(sample, dict) or not isinstance(sample.get("sample_id"), str):
            problems.append(f"{where}: not an object with a string 'sample_id'; sample skipped")
            continue
        conv = sample.get("conversation")
        where = f"{display}: {sample['sample_id']}"
        if not isinstance(conv, dict):
            problems.append(f"{where}: 'conversation' is missing or not an object; sample skipped")
            continue
        sessions += _sessions(sample["sample_id"], conv, where, problems)
    return Parsed(sessions=sessions, problems=problems)


def _sessions(sample_id: str, conv: dict[str, Any], where: str, problems: list[str]) -> list[Session]:
    speakers = [s for s in (conv.get("speaker_a"), conv.get("speaker_b")) if isinstance(s, str)]
    numbers = sorted(int(m.group(1)) for k, v in conv.items() if (m := _SESSION_KEY.match(k)) and isinstance(v, list))
    out = []
    for n in numbers:
        raw_time = conv.get(f"session_{n}_date_time")
        started = parse_date_time(raw_time) if isinstance(raw_time, str) else None
        if started is None:
            problems.append(f"{where} session {n}: date {raw_time!r} is not like '1:56 pm on 8 May, 2023'; imported without a time")
        turns = _turns(conv[f"session_{n}"], n, started, f"{where} session {n}", problems)
        header = SessionHeader(
            id=checked_id(session_id(sample_id, n), f"{where} session {n}", problems), started=started, source="locomo",
            title=f"{sample_id} session {n}", participants=speakers,
        )
        out.append(Session(header=header, turns=turns))
    return out


def _turns(items: list[Any], session_n: int, time: str | None, where: str, problems: list[str]) -> list[Turn]:
    turns: list[Turn] = []
    seen: set[int] = set()
    for index, item in enumerate(items):
        if not isinstance(item, dict) or not isinstance(item.get("text"), str) or not isinstance(item.get("speaker"), str):
            problems.append(f"{where} item {index}: not a turn with string 'speaker' and 'text'; skipped")
            continue
        dia_id = item.get("dia_id")
        m = _DIA_ID.match(dia_id) if isinstance(dia_id, str) else None
        if m is None or int(m.group(2)) < 1:
            n = max(seen, default=0) + 1
            problems.append(f"{where} item {index}: dia_id {dia_id!r} is not like 'D{session_n}:7'; numbered it turn {n}")
        else:
            n = int(m.group(2))
            if int(m.group(1)) != session_n:
                problems.append(f"{where}: dia_id {dia_id} belongs to session {m.group(1)}; kept as turn {n} of session {session_n}")
        if n in seen:
            problems.append(f"{where}: dia_id {dia_id!r} repeats turn {n}; the later turn was skipped")
            continue
        seen.add(n)
        text = item["text"]
        caption = item.get("blip_caption")
        if isinstance(caption, str) and caption.strip():
            # 38 % of gold evidence turns are image turns: the caption is what the turn says.
            text = f"{text} [image: {caption.strip()}]"
        turns.append(Turn(n=n, role="user", speaker=item["speaker"], time=time, text=text))
    missing = sorted(set(range(1, max(seen, default=0) + 1)) - seen)
    if missing:
        shown = ", ".join(str(n) for n in missing[:10]) + (", …" if len(missing) > 10 else "")
        problems.append(f"{where}: no turn {shown} (dia_id gap); other turns keep their dia_id numbers")
    turns.sort(key=lambda t: t.n)
    return turns
