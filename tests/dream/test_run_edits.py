"""Manual edits meet `dream run` (invariant 3): committed, uncommitted, during the run, conflicting,
and pages the owner deleted (never re-created, recorded in .dream/forget.md)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from nadia_runs import (
    LAST_SESSION,
    PERSONA,
    RAW,
    add_session,
    commit_files,
    dream,
    git,
    head,
    is_dream_path,
    isolated_env,
    turn_record,
)

from brain.page import parse_page

from dream.backends.base import VerifyRequest
from dream.backends.offline import OfflineBackend
from dream.run import run
from dream.settings import RunFlags, load_settings

KENJI = "knowledge/people/kenji-mori.md"
NADIA = "knowledge/people/nadia-rahman.md"
BOOK = "Kenji Mori is writing a book about tactile paving in Japanese stations."


def kenji_session(root: Path, commit: bool = True) -> str:
    sid = "2026-07-20-kenji-book"
    add_session(root, sid, "2026-07-20T10:00:00+09:00", [("user", BOOK), ("assistant", "That sounds like a useful book.")], commit)
    return sid


def test_a_committed_hand_edit_survives_and_the_new_fact_lands(compiled_copy: Path) -> None:
    root = compiled_copy
    page = root / KENJI
    hand = "Kenji prefers green tea at meetings (added by hand)."
    page.write_text(page.read_text(encoding="utf-8") + f"\n{hand}\n", encoding="utf-8")
    git(root, "commit", "-q", "--allow-empty", "-am", "a note of my own")
    sid = kenji_session(root)

    report = dream(root, "2026-07-21T02:00:00Z")
    assert report.status == "ok" and report.sessions == [sid] and report.conflicts == []
    assert KENJI in report.pages_updated and KENJI in commit_files(root)
    text = page.read_text(encoding="utf-8")
    assert text.count(hand) == 1 and text.endswith(f"\n{hand}\n")
    assert [line for line in text.splitlines() if BOOK.rstrip(".") in line and "[cite:" in line]
    assert f"session:{sid}#t1" in text
    assert git(root, "status", "--porcelain") == ""


def test_an_uncommitted_edit_to_a_page_dream_updates_survives(compiled_copy: Path) -> None:
    root = compiled_copy
    page = root / KENJI
    mine = "Owner's note: Kenji likes night trains."
    page.write_text(page.read_text(encoding="utf-8").replace("\n## Related\n", f"\n{mine}\n\n## Related\n"), encoding="utf-8")
    kenji_session(root)

    report = dream(root, "2026-07-21T02:00:00Z")
    assert report.status == "ok" and report.conflicts == []
    text = page.read_text(encoding="utf-8")
    assert text.count(mine) == 1 and f"{mine}\n\n## Related\n" in text
    assert BOOK.rstrip(".") in text


class OwnerEditsDuringTheGate(OfflineBackend):
    """The owner saves a page while the run checks its staged tree (after the page was compiled)."""

    def __init__(self, path: Path, line: str) -> None:
        super().__init__()
        self.path, self.line, self.done = path, line, False

    def verify(self, req: VerifyRequest):
        if not self.done:
            self.done = True
            self.path.write_text(self.path.read_text(encoding="utf-8") + self.line, encoding="utf-8")
        return super().verify(req)


def test_an_edit_made_while_the_run_goes_on_is_merged_not_lost(compiled_copy: Path) -> None:
    root = compiled_copy
    kenji_session(root)
    line = "\nWritten by the owner during the run.\n"
    report = run(load_settings(root, RunFlags(now="2026-07-21T02:00:00Z")), OwnerEditsDuringTheGate(root / KENJI, line))
    assert report.status == "ok" and report.conflicts == []
    text = (root / KENJI).read_text(encoding="utf-8")
    assert text.endswith(line) and BOOK.rstrip(".") in text


def test_a_conflicting_owner_rewrite_is_kept_reported_once_and_the_page_goes_on_receiving_updates(compiled_copy: Path) -> None:
    root = compiled_copy
    page = root / NADIA
    dreams = "- 2026-05-18: As of May 18 Nadia works at the [[open-access-institute|Open Access Institute]] as head of inclusive design research."
    text = page.read_text(encoding="utf-8")
    assert dreams in text
    rewritten = "- 2026-05-19: Nadia heads inclusive design research at the [[open-access-institute|Open Access Institute]] since 2026-05-18."
    owners = text.replace(dreams, rewritten)
    page.write_text(owners, encoding="utf-8")
    git(root, "commit", "-q", "--allow-empty", "-am", "my wording")
    # A new employer: Dream moves the employer bullet the owner rewrote to History.
    add_session(root, "2026-08-01-new-job", "2026-08-01T10:00:00+09:00", [
        ("user", "I work at Kyoto University as a professor of inclusive design."),
        ("assistant", "Congratulations on the new role."),
    ])

    report = dream(root, "2026-08-02T02:00:00Z")
    assert report.status == "ok" and report.sessions == ["2026-08-01-new-job"]
    assert [c for c in report.conflicts if c.startswith(f"{NADIA}: ")], report.conflicts
    assert f"\nConflict: {NADIA}: " in git(root, "log", "-1", "--format=%B")
    text = page.read_text(encoding="utf-8")
    assert rewritten in text and dreams not in text.partition("## History")[0]
    # The rest of Dream's update lands: the new employer, the old one in History.
    assert NADIA in commit_files(root) and NADIA in report.pages_updated
    assert "[[kyoto-university|Kyoto University]] as a professor of inclusive design. [cite:" in text
    assert "- Until 2026-08-01: As of May 18 Nadia works at the [[open-access-institute" in text
    # Dream did mean to change that bullet: the fact behind it is superseded.
    [old] = [p for p in commit_files(root) if p.startswith("notes/nadia-rahman/") and "works-at-the-open-access-institute" in p]
    assert "until: 2026-08-01" in (root / old).read_text(encoding="utf-8")
    assert [p for p in commit_files(root) if not is_dream_path(p)] == []
    assert git(root, "status", "--porcelain") == ""

    again = dream(root, "2026-08-03T02:00:00Z")
    assert again.status == "nothing-to-do" and again.conflicts == []
    add_session(root, "2026-08-05-koto", "2026-08-05T10:00:00+09:00", [("user", "I started learning the koto."), ("assistant", "Nice.")])
    later = dream(root, "2026-08-06T02:00:00Z")
    assert later.conflicts == [] and NADIA in later.pages_updated
    text = page.read_text(encoding="utf-8")
    assert rewritten in text and "koto" in text


@pytest.mark.parametrize("nth", [0, 3, 7, -1])
def test_an_owner_edit_to_a_cited_line_stays_through_the_next_three_runs_which_all_land(compiled_copy: Path, nth: int) -> None:
    root = compiled_copy
    page = root / KENJI
    before = parse_page(page.read_text(encoding="utf-8"), KENJI)
    lines = page.read_text(encoding="utf-8").splitlines()
    cited = [i for i, line in enumerate(lines) if line.startswith("- ") and "[cite:" in line]
    i = cited[nth]
    targets = [before.frontmatter.sources[int(n)] for n in re.findall(r"\[cite:(\d+)\]", lines[i])]
    lines[i] = lines[i].replace("- ", "- (as I recall) ", 1)
    mine = lines[i]
    page.write_text("\n".join(lines) + "\n", encoding="utf-8")
    git(root, "commit", "-q", "-am", "my wording")
    for k, fact in enumerate(["is writing a book about tactile paving", "started cycling to work in July", "is learning the shakuhachi"]):
        add_session(root, f"2026-07-2{k}-kenji", f"2026-07-2{k}T10:00:00+09:00", [("user", f"Kenji Mori {fact}."), ("assistant", "Noted.")])
        report = dream(root, f"2026-07-2{k}T23:00:00Z")
        assert report.status == "ok" and report.conflicts == [] and KENJI in report.pages_updated
        text = page.read_text(encoding="utf-8")
        assert text.count(mine) == 1 and fact in text
        # The edited line still cites what it cited: existing sources keep their numbers.
        after = parse_page(text, KENJI)
        assert [after.frontmatter.sources[int(n)] for n in re.findall(r"\[cite:(\d+)\]", mine)] == targets
    assert git(root, "status", "--porcelain") == ""


def kenji_and_nadia_session(root: Path) -> str:
    """A session about Kenji that also adds to Nadia's page (which links Kenji's)."""
    sid = "2026-07-20-kenji-book"
    add_session(root, sid, "2026-07-20T10:00:00+09:00", [
        ("user", BOOK),
        ("assistant", "That sounds like a useful book."),
        ("user", "I sent Kenji Mori the photos of the Kyoto Station gates."),
        ("assistant", "Good."),
    ])
    return sid


def _assert_forgotten(root: Path, report, slug: str, rel: str) -> None:
    assert report.status == "ok", report.reason
    assert slug in report.forgotten
    assert not (root / rel).exists() and rel not in commit_files(root)
    forget = (root / ".dream/forget.md").read_text(encoding="utf-8")
    assert [line for line in forget.splitlines() if line.startswith("- ") and f" {slug} " in f"{line} "], forget
    assert ".dream/forget.md" in commit_files(root)
    assert report.rejected == {}


def test_a_page_deleted_and_committed_by_the_owner_is_recorded_and_never_recreated(compiled_copy: Path) -> None:
    root = compiled_copy
    git(root, "rm", "-q", KENJI)
    git(root, "commit", "-q", "--allow-empty", "-m", "I do not want a page about Kenji")
    kenji_and_nadia_session(root)

    report = dream(root, "2026-07-21T02:00:00Z")
    _assert_forgotten(root, report, "kenji-mori", KENJI)

    add_session(root, "2026-07-22-kenji-again", "2026-07-22T10:00:00+09:00", [
        ("user", "Kenji Mori moved to Osaka for a new job at a design lab."), ("assistant", "Noted."),
    ])
    again = dream(root, "2026-07-23T02:00:00Z")
    assert again.status == "ok" and not (root / KENJI).exists()
    assert again.rejected == {} and KENJI not in again.pages_created


def test_a_page_deleted_commits_ago_is_found_in_the_history_since_dreams_last_commit(compiled_copy: Path) -> None:
    root = compiled_copy
    git(root, "rm", "-q", KENJI)
    git(root, "commit", "-q", "--allow-empty", "-m", "I do not want a page about Kenji")
    (root / "guide.md").write_text((root / "guide.md").read_text(encoding="utf-8") + "\nMy own note.\n", encoding="utf-8")
    git(root, "commit", "-q", "--allow-empty", "-am", "an unrelated commit on top")
    kenji_and_nadia_session(root)

    report = dream(root, "2026-07-21T02:00:00Z")
    _assert_forgotten(root, report, "kenji-mori", KENJI)


def test_a_page_deleted_but_not_yet_committed_is_recorded_and_not_recreated(compiled_copy: Path) -> None:
    root = compiled_copy
    (root / KENJI).unlink()
    kenji_and_nadia_session(root)

    report = dream(root, "2026-07-21T02:00:00Z")
    _assert_forgotten(root, report, "kenji-mori", KENJI)
    assert f"sessions/summaries/{report.sessions[0]}.md" in commit_files(root)
    assert NADIA in commit_files(root) and "[[kenji-mori" not in (root / NADIA).read_text(encoding="utf-8")
    assert git(root, "status", "--porcelain", "--", RAW) == ""
    assert head(root) == report.commit


# --- owner edits to the other files Dream writes: summaries and notes ---------------------------



def test_an_owner_edit_to_a_summary_survives_when_its_session_grows(compiled_copy: Path) -> None:
    root = compiled_copy
    summary = root / f"sessions/summaries/{LAST_SESSION}.md"
    mine = "Owner: the report went out on time."
    summary.write_text(summary.read_text(encoding="utf-8") + f"\n{mine}\n", encoding="utf-8")
    git(root, "commit", "-q", "--allow-empty", "-am", "my line in the summary")
    with open(root / RAW / f"{LAST_SESSION}.jsonl", "a", encoding="utf-8") as fh:
        line = turn_record(9, "user", "Kenji Mori will present the final report in Kyoto on August 5.", "2026-07-16T10:00:00+09:00")
        fh.write(json.dumps(line) + "\n")
    git(root, "commit", "-q", "--allow-empty", "-am", "one more turn")

    report = dream(root, "2026-07-17T02:00:00Z")
    assert report.status == "ok" and report.sessions == [LAST_SESSION]
    text = summary.read_text(encoding="utf-8")
    assert mine in text or [c for c in report.conflicts if c.startswith(f"sessions/summaries/{LAST_SESSION}.md")]


def test_an_owner_edit_to_a_note_survives_when_dream_supersedes_it(compiled_copy: Path) -> None:
    root = compiled_copy
    notes = sorted((root / "notes/nadia-rahman").glob("*works-at-the-open-access-institute*.md"))
    assert len(notes) == 1
    note, mine = notes[0], "Owner: she started on a Monday."
    note.write_text(note.read_text(encoding="utf-8") + f"\n{mine}\n", encoding="utf-8")
    git(root, "commit", "-q", "--allow-empty", "-am", "my line in a note")
    add_session(root, "2026-08-01-new-job", "2026-08-01T10:00:00+09:00", [
        ("user", "I work at Kyoto University as a professor of inclusive design."),
        ("assistant", "Congratulations on the new role."),
    ])

    report = dream(root, "2026-08-02T02:00:00Z")
    assert report.status == "ok"
    rel = note.relative_to(root).as_posix()
    assert rel in commit_files(root)  # Dream did update the note: it is superseded now
    assert "until: 2026-08-01" in note.read_text(encoding="utf-8")
    assert mine in note.read_text(encoding="utf-8")


def test_an_owner_edit_to_a_note_survives_when_dream_writes_it_twice_in_one_run(compiled_copy: Path) -> None:
    """Two turns restate a note's fact: the run adds two sources to it. The owner's edit, merged into
    the first write, must be in the last one too (it was lost when only the first was merged)."""
    root = compiled_copy
    note = root / "notes/nadia-rahman/nadia-prefers-pdf-figures-over-png.md"
    text = note.read_text(encoding="utf-8")
    note.write_text(text.replace("title: Nadia prefers PDF figures over PNG", "title: PDF figures, not PNG (checked by me)"), encoding="utf-8")
    git(root, "commit", "-q", "--allow-empty", "-am", "my title for the note")
    sid = "2026-07-20-figures-again"
    add_session(root, sid, "2026-07-20T10:00:00+09:00", [
        ("user", "For the record: I prefer PDF figures over PNG."), ("assistant", "Noted."),
        ("user", "And again, I prefer PDF figures over PNG."), ("assistant", "Understood."),
    ])

    report = dream(root, "2026-07-21T02:00:00Z")
    assert report.status == "ok" and report.conflicts == []
    text = note.read_text(encoding="utf-8")
    assert "title: PDF figures, not PNG (checked by me)" in text
    assert f"session:{sid}#t1" in text and f"session:{sid}#t3" in text
    assert git(root, "status", "--porcelain") == ""


# --- a Brain written by hand (fixtures/nadia: pages, notes, summaries, no state) ----------------


@pytest.fixture(scope="module")
def hand_brain(tmp_path_factory: pytest.TempPathFactory):
    """The hand-compiled Nadia Brain in git, then one `dream run` over all its sessions."""
    root = tmp_path_factory.mktemp("hand") / "nadia"
    shutil.copytree(PERSONA, root)
    with isolated_env():
        git(root, "init", "-q", "-b", "main")
        git(root, "add", "-A")
        git(root, "commit", "-q", "--allow-empty", "-m", "written by hand")
        report = dream(root, "2026-07-15T02:00:00Z")
    return root, report


def _before(root: Path, rel: str) -> str | None:
    try:
        return git(root, "show", f"HEAD~1:{rel}")
    except subprocess.CalledProcessError:  # not there before the run
        return None


def test_hand_written_pages_keep_their_bytes_and_get_new_facts_appended(hand_brain) -> None:
    root, report = hand_brain
    assert report.status == "ok" and report.rejected == {}
    generated = ("knowledge/index.md", "knowledge/log.md")
    updated = [p for p in commit_files(root) if p.startswith("knowledge/") and p not in generated and _before(root, p)]
    assert updated
    for rel in updated:
        old, new = parse_page(_before(root, rel), rel), parse_page((root / rel).read_text(encoding="utf-8"), rel)
        assert new.body.startswith(old.body.rstrip("\n") + "\n"), rel
        added = new.body[len(old.body.rstrip("\n")):].strip("\n").splitlines()
        assert added[0] == "## Updates from Dream", rel
        assert all(line.startswith("- ") and "[cite:" in line for line in added[1:]), rel
        for key in ("title", "type", "aliases", "summary", "created"):
            assert getattr(new.frontmatter, key) == getattr(old.frontmatter, key), (rel, key)
        assert {n: t for n, t in new.frontmatter.sources.items() if n in old.frontmatter.sources} == old.frontmatter.sources




def test_first_person_facts_go_to_the_owners_existing_page(hand_brain) -> None:
    root, _ = hand_brain
    assert not (root / "knowledge/people/nadia.md").exists()
    assert not (root / "notes/nadia").exists()
    assert [p for p in (root / "notes/nadia-rahman").glob("*.md") if "prefers PDF figures over PNG" in p.read_text(encoding="utf-8")]




def test_hand_written_summaries_keep_the_owners_text(hand_brain) -> None:
    root, _ = hand_brain
    lost = []
    for rel in sorted(p for p in commit_files(root) if p.startswith("sessions/summaries/")):
        old = _before(root, rel)
        if old is not None and parse_page(old, rel).body.strip() not in (root / rel).read_text(encoding="utf-8"):
            lost.append(rel)
    assert lost == []


def test_a_hand_written_page_that_is_not_utf8_keeps_its_bytes_and_the_run_says_why(compiled_copy: Path) -> None:
    """New facts are appended to a hand-written page as bytes kept whole; a page whose bytes are
    not UTF-8 cannot be (decoded and written back, its other bytes would change): it stays as it
    is, the run says so among its conflicts, and the rest of the run lands."""
    root = compiled_copy
    rel = "knowledge/people/rosa-lind.md"
    raw = b"---\ntitle: Rosa Lind\ntype: person\n---\n# Rosa Lind\n\nMet at the caf\xe9 in Sendai.\n"
    (root / rel).write_bytes(raw)
    git(root, "add", rel)
    git(root, "commit", "-q", "--allow-empty", "-m", "a page of my own, saved as Latin-1")
    sid = "2026-07-20-rosa-book"
    add_session(root, sid, "2026-07-20T10:00:00+09:00",
                [("user", "Rosa Lind is writing a book about tactile paving in Japanese stations."), ("assistant", "Good.")])

    report = dream(root, "2026-07-21T02:00:00Z")
    assert report.status == "ok" and report.sessions == [sid]
    assert f"{rel}: the page is not valid UTF-8, so new facts were not added; save it as UTF-8 and run again" in report.conflicts
    assert (root / rel).read_bytes() == raw
    assert rel not in commit_files(root)


def test_a_page_the_owner_broke_is_reported_left_alone_and_updated_once_fixed(compiled_copy: Path) -> None:
    root = compiled_copy
    page = root / "knowledge/people/nadia-rahman.md"
    good = page.read_text(encoding="utf-8")
    broken = good.replace("title: Nadia Rahman", "title: [Nadia Rahman", 1)  # an unclosed [ in the YAML
    page.write_text(broken, encoding="utf-8")
    git(root, "commit", "-q", "--allow-empty", "-am", "my edit")
    add_session(root, "2026-08-01-new-job", "2026-08-01T10:00:00+09:00", [
        ("user", "I work at Kyoto University as a professor of inclusive design."), ("assistant", "Congratulations.")])
    report = dream(root, "2026-08-02T02:00:00Z")
    assert report.status == "ok" and report.commit
    assert page.read_text(encoding="utf-8") == broken  # left as the owner saved it
    assert list(report.rejected) == ["knowledge/people/nadia-rahman.md"]
    assert any("F001 invalid YAML" in why for why in report.rejected["knowledge/people/nadia-rahman.md"])
    assert "knowledge/index.md" in commit_files(root)  # the rest of the run went on: the index too
    page.write_text(good, encoding="utf-8")
    git(root, "commit", "-q", "--allow-empty", "-am", "fixed")
    add_session(root, "2026-08-05-more", "2026-08-05T10:00:00+09:00", [
        ("user", "I prefer morning meetings."), ("assistant", "Noted.")])
    again = dream(root, "2026-08-06T02:00:00Z")
    assert again.status == "ok" and again.rejected == {}
    assert "Kyoto University" in page.read_text(encoding="utf-8")  # the fact held back lands once the page reads
