"""A page shows the newest facts of each section; the writer (offline or a model) is sent only those.

A person talked to for months has tens of thousands of facts: the page must stay readable and the
request that writes it bounded, while every fact stays in its note.
"""

from __future__ import annotations

import re
from pathlib import Path

from nadia_runs import add_session

from dream.backends.base import PAGE_SECTION_FACTS, WritePageRequest
from dream.backends.offline import OfflineBackend
from dream.run import run
from dream.settings import RunFlags, load_settings

NADIA = "knowledge/people/nadia-rahman.md"
POOLS = """amber azure beige black bronze cedar cherry cobalt copper coral cream denim ebony emerald
    golden granite hazel indigo ivory jade khaki lemon lilac maroon mint navy ochre olive orchid pearl
    plum ruby rust sage salmon sand scarlet silver teal violet""".split()


class Recording(OfflineBackend):
    def __init__(self) -> None:
        super().__init__()
        self.pages: dict[str, WritePageRequest] = {}

    def write_page(self, req: WritePageRequest):
        self.pages[req.slug] = req
        return super().write_page(req)


def swims(root: Path) -> None:
    """Forty swims, one a day: forty hobby facts for Nadia's page."""
    turns = []
    for day, colour in enumerate(POOLS, 1):
        turns += [("user", f"I went swimming at the {colour} pool on 2026-06-{day % 28 + 1:02d} with my aunt."), ("assistant", "Nice.")]
    add_session(root, "2026-07-01-swims", "2026-07-01T09:00:00+09:00", turns)


def test_a_section_shows_its_newest_facts_and_the_writer_gets_only_those(compiled_copy: Path) -> None:
    root = compiled_copy
    swims(root)
    backend = Recording()
    report = run(load_settings(root, RunFlags(now="2026-07-21T02:00:00Z")), backend)
    assert report.status == "ok"

    req = backend.pages["nadia-rahman"]
    sections: dict[str, int] = {}
    for f in req.current:
        heading = backend.page_section(req.type, f.kind, f.statement)[0]
        sections[heading] = sections.get(heading, 0) + 1
    assert max(sections.values()) == PAGE_SECTION_FACTS == sections["Hobbies and activities"]
    hidden = req.hidden["Hobbies and activities"]
    assert hidden >= len(POOLS) - PAGE_SECTION_FACTS

    said = " ".join(f.statement for f in [*req.current, *req.history, *req.mentioned])
    assert req.names and all(name in said for name in req.names)  # only names the page can link
    assert len(req.related) <= PAGE_SECTION_FACTS

    notes = list((root / "notes" / "nadia-rahman").glob("*.md"))
    pool_notes = [p for p in notes if "swimming" in p.read_text(encoding="utf-8")]
    assert len(pool_notes) == len(POOLS)  # every fact keeps its note

    page = (root / NADIA).read_text(encoding="utf-8")
    hobbies = page.split("## Hobbies and activities\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert len(hobbies) == PAGE_SECTION_FACTS + 1
    assert hobbies[-1] == f"- … {hidden} older fact(s) are in notes/nadia-rahman/"
    shown_dates = [line[2:12] for line in hobbies[:-1]]
    assert shown_dates == sorted(shown_dates) and shown_dates[-1] == "2026-06-28"  # the newest, oldest first
    assert len(re.findall(r"\[cite:\d+\]", "\n".join(hobbies))) >= PAGE_SECTION_FACTS


def test_the_request_says_what_it_left_out_to_a_model() -> None:
    from dream.backends.llm import render

    req = WritePageRequest(slug="ana", title="Ana", type="person", current=[], hidden={"Timeline": 3})
    prompt = render("write_page.j2", req=req, page_json=req.model_dump_json(), answer="")
    assert "`- … N older fact(s) are in notes/ana/`" in prompt and '"hidden":{"Timeline":3}' in prompt
    plain = render("write_page.j2", req=req.model_copy(update={"hidden": {}}), page_json="{}", answer="")
    assert "hidden" not in plain


def test_the_current_employer_stays_on_the_page_however_many_newer_facts_come(compiled_copy: Path) -> None:
    root = compiled_copy
    turns = []
    for day, colour in enumerate(POOLS[:30], 1):
        turns += [("user", f"I went to the {colour} office for a planning meeting on 2026-06-{day % 28 + 1:02d}."), ("assistant", "Noted.")]
    add_session(root, "2026-07-01-offices", "2026-07-01T09:00:00+09:00", turns)
    assert run(load_settings(root, RunFlags(now="2026-07-21T02:00:00Z")), OfflineBackend()).status == "ok"

    page = (root / NADIA).read_text(encoding="utf-8")
    work = page.split("## Work and studies\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert len(work) == PAGE_SECTION_FACTS + 1 and work[-1].startswith("- … ") and work[-1].endswith(" older fact(s) are in notes/nadia-rahman/")
    employer = [line for line in work if "works at the [[open-access-institute|Open Access Institute]]" in line]
    assert len(employer) == 1 and employer[0].startswith("- 2026-05-18: As of May 18 Nadia")  # older than every office visit
    offices = [line for line in work if "office for a planning meeting" in line]
    assert len(offices) == PAGE_SECTION_FACTS - 2  # the employer and one later fact (2026-07-03) take the rest
    assert offices[-1].startswith("- 2026-06-28: ") and work[-1] == "- … 16 older fact(s) are in notes/nadia-rahman/"
