"""A small hand-made Brain for the brain/ tests, and a CliRunner helper."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner, Result

NADIA = """\
---
title: Nadia Rahman
type: person
aliases: [Nadia]
summary: Accessibility researcher in Tokyo.
created: 2026-05-03
updated: 2026-06-01
sources:
  1: session:s1#t1
---
# Nadia Rahman

Nadia leads [[juds|the sprint]] [cite:1].
"""

JUDS = """\
---
title: Japan Universal Design Sprint
type: project
aliases: [JUDS]
summary: Two-week sprint in Kyoto and Sendai.
created: 2026-05-03
updated: 2026-05-20
sources:
  1: session:s1#t1-t2
  2: source:cal/evt-1
---
# Japan Universal Design Sprint

Run by [[nadia-rahman]] [cite:1].
The venue is [[kyoto-station]] [cite:2].

`[[not-a-link]]` is code.
"""

DESIGN = """\
---
title: Universal design
type: concept
summary: Design usable by everyone.
created: 2026-05-03
updated: 2026-05-03
---
# Universal design

See [[JUDS]].
"""

NOTE = """\
---
title: Report due 2026-07-31
type: note
kind: project
topic: juds
confidence: 0.9
observed: 2026-05-03
sources:
  1: session:s1#t2
---
The final report of [[juds]] is due on 2026-07-31 [cite:1].
"""

SESSION = (
    '{"type":"session","id":"s1","started":"2026-05-03T10:02:00+09:00","participants":["Nadia","assistant"]}\n'
    '{"type":"turn","n":1,"role":"user","speaker":"Nadia","time":"2026-05-03T10:02:00+09:00","text":"I lead JUDS.\\nIt runs in June."}\n'
    '{"type":"turn","n":2,"role":"assistant","speaker":"assistant","text":"Noted."}\n'
)

CALENDAR = """\
BEGIN:VCALENDAR
BEGIN:VEVENT
UID:evt-1
SUMMARY:Kyoto workshop
DTSTART:20260610T090000
LOCATION:Kyoto Station
END:VEVENT
END:VCALENDAR
"""

SMALL_BRAIN = {
    "brain.toml": 'owner = "Nadia Rahman"\n',
    "knowledge/people/nadia-rahman.md": NADIA,
    "knowledge/projects/juds.md": JUDS,
    "knowledge/concepts/universal-design.md": DESIGN,
    "notes/juds/report-due.md": NOTE,
    "sessions/raw/s1.jsonl": SESSION,
    "sources/cal/calendar.ics": CALENDAR,
}


@pytest.fixture
def small_brain(make_tree) -> Path:
    """SMALL_BRAIN written to a folder (no index file: `brain index` renders it)."""
    return make_tree(dict(SMALL_BRAIN))


@pytest.fixture
def cli():
    """cli(*args, env=None) → click Result of `brain ARGS` (stdout and stderr apart)."""
    from brain.cli import main

    def _run(*args: str, env: dict[str, str] | None = None) -> Result:
        return CliRunner().invoke(main, [str(a) for a in args], env=env, catch_exceptions=False)

    return _run
