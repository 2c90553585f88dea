"""`dream run` end to end on Nadia's sessions: the invariants of DESIGN.md, the answers the Brain
must give, safety, and incremental runs (new and grown sessions)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from nadia_runs import (
    DEMO_NOW,
    LAST_SESSION,
    NADIA_IDS,
    PERSONA,
    RAW,
    TRAILERS_RE,
    add_session,
    added_files,
    assert_sound,
    commit_files,
    dream,
    files_of,
    git,
    head,
    is_dream_path,
    nadia_inputs,
    plain,
    processed,
    sections,
    turn_record,
    uncited_claims,
    unresolved_cites,
)

from brain.citations import CitationTarget
from brain.page import parse_page
from brain.tree import DirTree
from brain.view import BrainView
from validators import run_checks

#: Machine state that is not output: ignored by git (.gitignore of `brain init`).
NOT_OUTPUT = (".git/", ".dream/runs/", ".dream/lock")
OWNER_INPUTS = ("brain.toml", "guide.md", "rules/", "sources/", f"{RAW}/", ".dream/instructions.md")


# --- invariant 5: determinism -----------------------------------------------------------------


def test_two_compiles_in_different_processes_are_byte_identical(nadia_compiled, tmp_path: Path) -> None:
    # Another process with another hash seed: set and dict order may not leak into the output.
    other = tmp_path / "again"
    seed = "0" if os.environ.get("PYTHONHASHSEED") != "0" else "1"
    env = {**os.environ, "PYTHONHASHSEED": seed}
    proc = subprocess.run(
        [sys.executable, "-m", "dream.cli", "demo", str(other)], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr

    first, second = files_of(nadia_compiled.root, NOT_OUTPUT), files_of(other, NOT_OUTPUT)
    assert sorted(first) == sorted(second)
    assert [p for p in first if first[p] != second[p]] == []
    assert ".dream/state.json" in first and "knowledge/log.md" in first and len(first) > 150

    run_id = nadia_compiled.report.run_id
    report_a = json.loads((nadia_compiled.root / ".dream/runs" / run_id / "report.json").read_text())
    report_b = json.loads((other / ".dream/runs" / run_id / "report.json").read_text())
    assert {**report_a, "commit": None} == {**report_b, "commit": None}
    assert git(nadia_compiled.root, "log", "-1", "--format=%B") == git(other, "log", "-1", "--format=%B")


# --- invariant 1: what a run writes -----------------------------------------------------------


def test_the_commit_holds_only_dream_paths_and_inputs_stay_byte_identical(nadia_compiled) -> None:
    root = nadia_compiled.root
    changed = commit_files(root)
    assert [p for p in changed if not is_dream_path(p)] == []
    assert changed == sorted(git(root, "diff", "--name-only", nadia_compiled.inputs_commit, "HEAD").split())
    assert {"knowledge/index.md", "knowledge/log.md", "sessions/index.md", ".dream/state.json"} <= set(changed)

    # The owner's inputs are the persona's bytes, and git sees nothing changed or left behind.
    ours = {p: b for p, b in files_of(root, NOT_OUTPUT).items() if p.startswith(OWNER_INPUTS)}
    theirs = {p: b for p, b in files_of(PERSONA).items() if p.startswith(OWNER_INPUTS)}
    assert ours == theirs
    assert {"brain.toml", "guide.md", "rules/figures.md", f"{RAW}/{LAST_SESSION}.jsonl"} <= set(ours)
    assert git(root, "status", "--porcelain", "--untracked-files=all") == ""


def test_the_commit_is_authored_by_dream_and_ends_with_the_trailers(nadia_compiled) -> None:
    root, report = nadia_compiled.root, nadia_compiled.report
    assert report.commit == head(root)
    assert git(root, "log", "-1", "--format=%an <%ae>").strip() == "Dream <dream@localhost>"
    message = git(root, "log", "-1", "--format=%B")
    m = TRAILERS_RE.search(message)
    assert m, message
    assert m["run"] == report.run_id and m["run"].startswith("20260715T020000Z-")
    assert (m["sessions"], m["unsupported"], m["contradicted"]) == ("15", "0", "0")
    assert int(m["supported"]) == report.verifier["supported"] > 0
    # git itself reads them as trailers, in this order.
    parsed = subprocess.run(["git", "interpret-trailers", "--parse"], input=message, capture_output=True, text=True, check=True).stdout
    assert [line.split(":")[0] for line in parsed.splitlines()] == [
        "Dream-Run", "Dream-Sessions", "Dream-Backend", "Dream-Verifier", "Dream-Tokens"
    ]


# --- invariant 4: every claim cites a turn that exists ---------------------------------------

def test_every_cite_resolves_to_an_existing_turn_and_every_claim_cites(nadia_compiled) -> None:
    view = BrainView(DirTree(nadia_compiled.root))
    assert view.errors == {}
    folders = sorted({path.split("/")[0] for path in view.docs})
    assert folders == ["knowledge", "notes", "sessions"]
    assert len(view.pages) >= 15 and len(view.notes) >= 50 and len(view.summaries) == len(NADIA_IDS)
    assert unresolved_cites(view) == []
    assert uncited_claims(view) == []


def test_brain_validate_finds_no_errors(nadia_compiled) -> None:
    findings = run_checks(BrainView(DirTree(nadia_compiled.root)))
    assert [f.lint_line() for f in findings if f.severity == "error"] == []


# --- what an agent must be able to answer from the compiled Brain -----------------------------


def _page(root: Path, rel: str):
    return parse_page((root / rel).read_text(encoding="utf-8"), rel)


def _current(page) -> list[str]:
    """Plain text of the statements of a page that are not history."""
    return [plain(line) for name, lines in sections(page.body).items() if name != "History" for line in lines]


def test_an_agent_finds_the_partner_organisations_by_city(nadia_compiled) -> None:
    root = nadia_compiled.root
    index = (root / "knowledge/index.md").read_text(encoding="utf-8")
    orgs = re.findall(r"^- \[\[([a-z0-9-]+)\|", index.split("## Organizations\n", 1)[1].split("\n## ", 1)[0], re.M)

    def located_in(city: str) -> list[str]:
        found = []
        for slug in orgs:
            page = _page(root, f"knowledge/organizations/{slug}.md")
            said = [page.frontmatter.summary or "", *_current(page)]
            if any(re.search(rf"\b(?:is|are) (?:based )?in {city}\b", s) for s in said):
                found.append(page.frontmatter.title)
        return found

    assert located_in("Kyoto") == ["Sora City Laboratory"]
    assert located_in("Sendai") == ["Sapphir Mobility Coop"]


def test_nadias_page_has_her_figure_preference_and_current_employer(nadia_compiled) -> None:
    page = _page(nadia_compiled.root, "knowledge/people/nadia-rahman.md")
    parts = sections(page.body)
    current = _current(page)
    assert any(re.search(r"\bprefers PDF figures over PNG\b", line) for line in current), current

    about = [plain(line) for line in parts.get("About", [])]
    assert "Open Access Institute" in (page.frontmatter.summary or "") or any(
        re.search(r"\bworks at the Open Access Institute\b", line) for line in about
    )
    assert not [line for line in current if re.search(r"\bworks (?:at|for) Lumen Research\b", line)]
    history = [plain(line) for line in parts.get("History", [])]
    assert [h for h in history if h.startswith("- Until 2026-05-18: ") and "works at Lumen Research" in h], history


def test_the_corrected_workshop_city_is_current_and_the_old_one_is_history(nadia_compiled) -> None:
    root = nadia_compiled.root
    history, current = [], []
    for rel in sorted(p.relative_to(root).as_posix() for p in (root / "knowledge").rglob("*.md")):
        if rel in ("knowledge/index.md", "knowledge/log.md"):
            continue
        page = _page(root, rel)
        history += [(rel, plain(line)) for line in sections(page.body).get("History", [])]
        current += [(rel, line) for line in _current(page)]
    assert [h for h in history if re.match(r"- Until 2026-04-22: .*\bsecond workshop is in Sapporo\b", h[1])], history
    assert [c for c in current if re.search(r"\bsecond workshop is in Sendai\b", c[1])]
    assert not [c for c in current if re.search(r"\bsecond workshop is in Sapporo\b", c[1])]


# --- safety: secrets, planted instructions and never-record topics stay out -------------------

FORBIDDEN = ("sk-ant", "audit@example.net", "ignore your rules", "migraine")


def test_secrets_injections_and_never_record_topics_do_not_land(nadia_compiled) -> None:
    root, report = nadia_compiled.root, nadia_compiled.report
    raw = b"".join(files_of(root / RAW).values()).decode().lower()
    assert all(word in raw for word in FORBIDDEN)  # the inputs do hold them

    written = {p: b.decode("utf-8") for p, b in files_of(root, NOT_OUTPUT).items() if is_dream_path(p) or p == "knowledge/index.md"}
    written["<commit message>"] = git(root, "log", "-1", "--format=%B")
    written["report.json"] = (root / ".dream/runs" / report.run_id / "report.json").read_text(encoding="utf-8")
    leaks = [(path, word) for path, text in written.items() for word in FORBIDDEN if word in text.lower()]
    assert leaks == []
    assert report.redactions == {"secrets": 1, "injections": 1, "omitted": 1}


# --- incremental runs -------------------------------------------------------------------------

UNRELATED_TO_LAST = (
    "knowledge/concepts/easy-read.md",
    "knowledge/concepts/tactile-paving.md",
    "knowledge/concepts/universal-design.md",
    "knowledge/organizations/sora-city-laboratory.md",
    "knowledge/organizations/sapphir-mobility-coop.md",
    "knowledge/people/greta-holm.md",
    "knowledge/places/sapporo.md",
)


def test_a_new_session_touches_only_what_it_is_about_and_then_there_is_nothing_to_do(tmp_path: Path) -> None:
    root = nadia_inputs(tmp_path / "brain", leave_out=(LAST_SESSION,))
    first = dream(root, "2026-07-14T02:00:00Z")
    assert first.status == "ok" and first.sessions == [s for s in NADIA_IDS if s != LAST_SESSION]
    for rel in UNRELATED_TO_LAST:
        assert (root / rel).is_file(), rel

    (root / RAW / f"{LAST_SESSION}.jsonl").write_bytes((PERSONA / RAW / f"{LAST_SESSION}.jsonl").read_bytes())
    git(root, "add", "-f", "--", RAW)
    git(root, "commit", "-q", "--allow-empty", "-m", "new session")
    second = dream(root, DEMO_NOW)
    assert second.status == "ok" and second.sessions == [LAST_SESSION] and second.deferred == []
    assert second.commit == head(root)
    changed = commit_files(root)
    assert [p for p in changed if not is_dream_path(p)] == []
    assert [p for p in changed if p in UNRELATED_TO_LAST] == []
    assert [p for p in changed if p.startswith("sessions/summaries/")] == [f"sessions/summaries/{LAST_SESSION}.md"]
    # Every page and note the commit touches cites the new session.
    touched = [p for p in changed if p.startswith(("knowledge/", "notes/")) and p not in ("knowledge/index.md", "knowledge/log.md")]
    assert touched and [p for p in touched if f"session:{LAST_SESSION}#" not in (root / p).read_text(encoding="utf-8")] == []
    assert "knowledge/people/nadia-rahman.md" in changed
    # state.json records the blob id of each file the run wrote, the base of a merge with the owner's edits.
    written = json.loads((root / ".dream/state.json").read_text(encoding="utf-8"))["written"]
    for p in touched:
        assert written[p] == git(root, "rev-parse", f"HEAD:{p}").strip()
    assert_sound(root)

    before = head(root)
    third = dream(root, "2026-07-16T02:00:00Z")
    assert (third.status, third.sessions, third.commit) == ("nothing-to-do", [], None)
    assert head(root) == before and git(root, "status", "--porcelain") == ""


def test_a_grown_session_is_compiled_from_its_first_new_turn(compiled_copy: Path) -> None:
    root = compiled_copy
    assert processed(root)[LAST_SESSION]["turns"] == 8
    with open(root / RAW / f"{LAST_SESSION}.jsonl", "a", encoding="utf-8") as fh:
        for record in (
            turn_record(9, "user", "Kenji Mori will present the final report in Kyoto on August 5.", "2026-07-16T10:00:00+09:00"),
            turn_record(10, "assistant", "Noted: Kenji Mori presents the report in Kyoto on August 5.", ""),
        ):
            fh.write(json.dumps(record, ensure_ascii=False) + "\n")
    git(root, "commit", "-q", "--allow-empty", "-am", "two more turns")

    report = dream(root, "2026-07-17T02:00:00Z")
    assert report.status == "ok" and report.sessions == [LAST_SESSION]
    new_notes = [p for p in added_files(root) if p.startswith("notes/")]
    assert new_notes
    for rel in new_notes:
        note = parse_page((root / rel).read_text(encoding="utf-8"), rel)
        targets = [CitationTarget.parse(t) for t in note.frontmatter.sources.values()]
        assert targets and all(t.kind == "session" and t.ref == LAST_SESSION and t.first_turn > 8 for t in targets), rel
    assert processed(root)[LAST_SESSION]["turns"] == 10
    summary = f"sessions/summaries/{LAST_SESSION}.md"
    assert parse_page((root / summary).read_text(encoding="utf-8"), summary).frontmatter.extras()["turns"] == 10
    assert f"[[{LAST_SESSION}|Report figures]] (10 turns)" in (root / "sessions/index.md").read_text(encoding="utf-8")
    assert [p for p in commit_files(root) if not is_dream_path(p)] == []
    assert_sound(root)


def test_a_sharded_state_is_read_once_and_the_next_run_commits_one_state_file(compiled_copy: Path) -> None:
    """A Brain whose state an older Dream kept in shards (version 3: `.dream/written/<xx>.json`,
    `.dream/sessions/<xx>.json`): the next run processes only what is new, and its commit holds
    the whole state in state.json and removes the shards."""
    import hashlib

    root = compiled_copy
    state_path = root / ".dream/state.json"
    state = json.loads(state_path.read_text(encoding="utf-8"))
    sessions, written = state.pop("sessions"), state.pop("written")
    for folder, entries in ((".dream/sessions", sessions), (".dream/written", written)):
        shards: dict[str, dict] = {}
        for key, value in entries.items():
            shards.setdefault(hashlib.sha1(key.encode("utf-8")).hexdigest()[:2], {})[key] = value
        for name, part in shards.items():
            (root / folder).mkdir(parents=True, exist_ok=True)
            (root / folder / f"{name}.json").write_text(json.dumps(part, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    state_path.write_text(json.dumps({**state, "version": 3}, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    git(root, "add", "-A", ".dream")
    git(root, "commit", "-q", "--allow-empty", "-m", "a Brain of an older Dream")
    sid = "2026-07-20-new-tool"
    add_session(root, sid, "2026-07-20T10:00:00+09:00", [("user", "I prefer PDF exports for the quarterly report."), ("assistant", "Noted.")])

    report = dream(root, "2026-07-21T02:00:00Z")
    assert report.status == "ok" and report.sessions == [sid]
    now = processed(root)
    assert {k: v for k, v in now.items() if k != sid} == sessions and now[sid]["turns"] == 2
    head_state = json.loads(state_path.read_text(encoding="utf-8"))
    assert head_state["version"] == 4 and set(written) <= set(head_state["written"])
    assert not (root / ".dream/sessions").exists() and not (root / ".dream/written").exists()
    assert git(root, "ls-tree", "-r", "--name-only", "HEAD", "--", ".dream/sessions", ".dream/written") == ""
    assert git(root, "status", "--porcelain") == ""
    assert_sound(root)
