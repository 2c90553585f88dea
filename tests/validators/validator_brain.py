"""The small clean Brain the validator tests break one file at a time."""

from __future__ import annotations

NADIA = """\
---
title: Nadia Rahman
type: person
aliases: [Nadia]
summary: Accessibility researcher.
created: 2026-05-03
updated: 2026-06-01
sources:
  1: session:2026-05-03-kyoto#t1-t2
---
# Nadia Rahman

Nadia leads [[japan-sprint|the sprint]] [cite:1].
"""

SPRINT = """\
---
title: Japan Sprint
type: project
aliases: [JUDS]
summary: Two-week sprint.
created: 2026-05-03
updated: 2026-05-03
sources:
  1: session:2026-05-03-kyoto#t2
  2: source:calendar/evt-88
---
# Japan Sprint

Run by [[nadia-rahman]] [cite:1]; the workshop is on 2026-06-10 [cite:2].

## History
- Until 2026-04-01: planned for Osaka only [cite:1]
"""

SUMMARY = """\
---
id: 2026-05-03-kyoto
type: session
title: Kyoto planning
started: 2026-05-03T10:02:00+09:00
participants: [Nadia, assistant]
turns: 2
topics: [japan-sprint]
sources:
  1: session:2026-05-03-kyoto#t1-t2
---
# Kyoto planning

Nadia plans the [[japan-sprint]] [cite:1].
"""

NOTE = """\
---
title: Nadia prefers PDF figures
type: note
kind: preference
topic: nadia-rahman
confidence: 0.9
observed: 2026-05-03
sources:
  1: session:2026-05-03-kyoto#t1
---
Nadia wants figures as PDF, not PNG [cite:1].
"""

SESSION = (
    '{"type":"session","id":"2026-05-03-kyoto","started":"2026-05-03T10:02:00+09:00","participants":["Nadia","assistant"]}\n'
    '{"type":"turn","n":1,"role":"user","speaker":"Nadia","text":"I lead the Japan sprint."}\n'
    '{"type":"turn","n":2,"role":"assistant","speaker":"assistant","text":"Noted; the workshop is on 2026-06-10."}\n'
)

CALENDAR = """\
BEGIN:VCALENDAR
BEGIN:VEVENT
UID:evt-88
SUMMARY:Kyoto workshop
DTSTART:20260610T090000
END:VEVENT
END:VCALENDAR
"""

KNOWLEDGE_INDEX = """\
# Index

## People
- [[nadia-rahman|Nadia Rahman]]: Accessibility researcher.

## Projects
- [[japan-sprint|Japan Sprint]]: Two-week sprint.
"""

SESSIONS_INDEX = """\
# Sessions

- 2026-05-03 [[2026-05-03-kyoto|Kyoto planning]] (2 turns)
"""

BRAIN: dict[str, str | bytes] = {
    "brain.toml": 'owner = "Nadia Rahman"\n',
    "guide.md": "# Guide\n",
    "knowledge/index.md": KNOWLEDGE_INDEX,
    "knowledge/people/nadia-rahman.md": NADIA,
    "knowledge/projects/japan-sprint.md": SPRINT,
    "notes/nadia-rahman/prefers-pdf.md": NOTE,
    "sessions/index.md": SESSIONS_INDEX,
    "sessions/raw/2026-05-03-kyoto.jsonl": SESSION,
    "sessions/summaries/2026-05-03-kyoto.md": SUMMARY,
    "sources/calendar/cal.ics": CALENDAR,
}


def brain_with(changes: dict[str, str | bytes | None]) -> dict[str, str | bytes]:
    """BRAIN with files replaced or added, or removed (None)."""
    files = dict(BRAIN)
    for path, value in changes.items():
        if value is None:
            files.pop(path, None)
        else:
            files[path] = value
    return files
