"""run(settings, backend) -> RunReport: the pipeline, top to bottom.

orient → (per session: sanitise, summarise, attach) → update pages → generated files → gate →
sync. Everything before sync writes only into `.dream/runs/<run-id>/staged/`.
"""

from __future__ import annotations

from brain import layout
from brain.errors import BrainError
from brain.repo import BrainRepo
from brain.sessions import Session
from brain.tree import DirTree, text_if_exists
from brain.view import BrainView
from dream.backends.base import BackendError, ModelBackend, RunContext, SessionSummary
from dream.calls import over_budget
from dream.claims import withdraw
from dream.compile import Compilation
from dream.gate import GateResult, run_gate
from dream.generated import write_generated
from dream.instructions import parse_instructions
from dream.journal import fault, recover, require_free_index
from dream.lock import run_lock
from dream.text.facts import DEFAULT_OWNER
from dream.phases.attach import attach_session, stage_notes
from dream.phases.projects import attach_project
from dream.phases.orient import PendingSession, list_session_files, plan_sessions
from dream.phases.summarize import summarize_session, write_summaries
from dream.phases.update import update_pages
from dream.report import RunReport
from dream.runs import finish
from dream.sanitize import sanitize_session
from dream.settings import DreamSettings
from dream.staging import StagedTree
from dream.state import LEGACY_SHARDS, SessionState, legacy_files, parse_state
from dream.sync import apply_sync, plan_sync, read_live
from dream.timing import PhaseClock, Progress

Done = dict[str, tuple[PendingSession, Session, SessionSummary]]  # session id → what was compiled of it


def run(settings: DreamSettings, backend: ModelBackend, progress: Progress | None = None) -> RunReport:
    """Compile what is new into one commit. Raises BrainError only for what stops the whole run.
    `progress` hears each phase and each session begun (the CLI's bar on a terminal)."""
    root = settings.root
    if not (root / ".git").exists():
        raise BrainError(f"{root} is not a Brain (no git repository)", "run `brain init` or `dream demo`")
    busy = BrainRepo(root).unfinished()
    if busy:
        raise BrainError(f"{root}: {busy[0]}; Dream changed nothing", f"{busy[1]}, then run `dream run` again")
    clock = PhaseClock(progress=progress)
    clock.mark("orient")
    with run_lock(root) as stale:
        report = _run_locked(settings, backend, clock)
        if stale:
            report.problems.insert(0, stale)
    clock.mark(None)
    report.timings = clock
    clock.save(root / layout.RUNS / report.run_id)
    return report


def _run_locked(settings: DreamSettings, backend: ModelBackend, clock: PhaseClock) -> RunReport:
    root = settings.root
    require_free_index(root)  # a run that cannot update git's index must not move the branch
    recovered = recover(root)  # finish (or discard) what a killed run left
    live = BrainView(DirTree(root))
    shards = legacy_files(root)
    state, problems = parse_state(text_if_exists(live.tree, layout.STATE), lambda rel: text_if_exists(live.tree, rel), shards)
    files, file_problems = list_session_files(live.tree)
    plan = plan_sessions(files, state, settings.max_sessions)
    run_id = settings.make_run_id([f"{p.id}:{p.hash}" for p in plan.pending])
    report = RunReport(run_id=run_id, backend=backend.name, deferred=plan.deferred,
                       problems=file_problems + [p for p in (recovered, *problems) if p])
    if not plan.pending:
        report.status = "nothing-to-do"
        return report
    comp = _orient(settings, backend, live, state, run_id)
    for rel in shards:  # the state of an older layout goes with this run's state.json
        comp.staged.remove(rel)
    clock.mark("sessions")
    done = _compile_sessions(comp, plan.pending, report, clock)
    clock.mark("notes")
    stage_notes(comp)
    if not done:
        report.status, report.reason = "failed", report.stopped or "no pending session could be read (see problems)"
        return finish(root, run_id, report)
    clock.mark("update")
    update_pages(comp)
    clock.mark("generate")
    for sid, path in withdraw(comp, done, list(comp.failures)):
        # Its facts for that page are withdrawn too, so the next run makes them (and the page) again.
        done.pop(sid, None)
        report.session_failures[sid] = f"kept pending: the page {path} it feeds could not be written"
    write_summaries(comp, [(clean, summary) for _, clean, summary in done.values()])
    for sid, (pending, clean, _) in done.items():
        state.sessions[sid] = SessionState(hash=pending.hash, turns=len(clean.turns), run=run_id)
    report.sessions = sorted(done)
    write_generated(comp, report, with_state=False)
    fault("after-staging")
    clock.mark("gate")
    gate = run_gate(live, comp.staged, backend, lambda: write_generated(comp, report, with_state=False), settings.verifier, settings.owner)
    fault("after-gate")
    _take_gate(comp, report, gate, done)
    clock.mark("generate")
    write_generated(comp, report, with_state=True)  # the log entry and state carry the final figures
    clock.mark("sync")
    _sync(comp, report)
    return finish(root, run_id, report)


def _orient(settings: DreamSettings, backend: ModelBackend, live: BrainView, state, run_id: str) -> Compilation:
    """The compilation of this run: the owner's instructions, the pages they deleted (forgotten
    before anything can link to them), the names every page answers to."""
    root = settings.root
    instructions = parse_instructions(text_if_exists(live.tree, layout.INSTRUCTIONS) or "", text_if_exists(live.tree, layout.FORGET) or "")
    repo = BrainRepo(root)
    head = repo.head()
    deleted = _deleted_pages(repo, head, live, state)
    forgotten = [layout.page_location(p)[1] for p in deleted]
    already = set(instructions.forget)  # what forget.md lists now: those need no new line
    if forgotten:
        instructions = instructions.model_copy(update={"forget": sorted(already | set(forgotten))})
        for p in deleted:
            state.written.pop(p, None)
            state.merge_bases.pop(p, None)
    run_dir = root / layout.RUNS / run_id
    staged = StagedTree(run_dir / "staged", live.tree, removable=tuple(f + "/" for f in LEGACY_SHARDS.values()),
                        listed=frozenset(live.files))
    comp = Compilation(settings=settings, backend=backend, view=live, staged=staged, state=state, instructions=instructions,
                       run_id=run_id, read_blob=lambda blob: _blob_text(repo, blob), head=head)
    comp.forgotten = [s for s in forgotten if s not in already]
    comp.seed_resolver()
    comp.seed_owner(settings.owner or DEFAULT_OWNER)
    backend.open_run(RunContext(run_dir=run_dir, index=text_if_exists(live.tree, layout.KNOWLEDGE_INDEX) or "",
                                instructions=instructions.text, record=settings.record,
                                max_tokens=settings.max_tokens, max_cost=settings.max_cost))
    if settings.record:
        from dream.record import snapshot_inputs

        snapshot_inputs(root, run_dir, settings, run_id, backend, head)
    return comp


def _compile_sessions(comp: Compilation, pending: list[PendingSession], report: RunReport, clock: PhaseClock) -> Done:
    """Each pending session read, sanitised, summarised and attached, in order; budgets stop the
    run at a session boundary: what is done lands, the rest waits."""
    done: Done = {}
    for i, session in enumerate(pending):
        clock.count(i + 1, len(pending))  # at session i + 1 of them
        report.stopped = comp.backend.stopped or over_budget(comp.backend.usage(), comp.settings.max_tokens, comp.settings.max_cost)
        if report.stopped:
            report.deferred = [p.id for p in pending[i:]] + report.deferred
            break
        clean = _read_session(comp, session.id, report)
        if clean is None:
            report.session_failures[session.id] = "unreadable session (see problems)"
            continue
        try:
            summary = summarize_session(comp, clean)
            attach_session(comp, clean, session.first_turn)
            attach_project(comp, clean, session.first_turn)
        except BackendError as exc:
            report.session_failures[session.id] = str(exc) + (f" ({exc.hint})" if exc.hint else "")
            if exc.fatal:  # e.g. no key: every other session would fail alike
                report.stopped = f"{exc}"
                break
            continue
        done[session.id] = (session, clean, summary)
    return done


def _read_session(comp: Compilation, sid: str, report: RunReport) -> Session | None:
    """A pending session read and sanitised; None when it cannot be read (its problems are reported)."""
    rel = layout.raw_session_path(sid)
    session = comp.view.session(sid)  # parsed once a run: the gate's citation checks read it from this view
    report.problems += [str(p) for p in comp.view.session_problems.get(sid, [])]
    if session is None:
        return None
    if session.header.id != sid:
        # Citations name the file (sessions/raw/<id>.jsonl), whatever its header says.
        report.problems.append(f"{rel}:1: header id {session.header.id!r} differs from the file name; cited as {sid!r}")
        session = session.model_copy(update={"header": session.header.model_copy(update={"id": sid})})
    clean, counts = sanitize_session(session, comp.instructions)
    for key, value in counts.model_dump().items():
        report.redactions[key] = report.redactions.get(key, 0) + value
    return clean


def _take_gate(comp: Compilation, report: RunReport, gate: GateResult, done: Done) -> None:
    """What the gate decided, into the report (and out of the state: sessions it could not verify stay pending)."""
    state, staged = comp.state, comp.staged
    report.claims_removed = [f"{v.path}: {v.claim} ({v.label}: {v.reason})" for v in gate.removed]
    report.claims_flagged = [f"{v.path}: {v.claim} ({v.label}: {v.reason})" for v in gate.flagged]
    for sid, path in withdraw(comp, done, gate.unverified):
        state.sessions.pop(sid, None)  # the final write_generated writes state.json without it
        report.session_failures[sid] = f"kept pending: {path} could not be verified"
        report.sessions = [s for s in report.sessions if s != sid]
    report.rejected = gate.rejected
    report.verifier = dict(sorted(gate.verdict_counts().items()))
    report.findings = [f.lint_line() for f in gate.findings]
    report.pages_created = sorted(p for p in comp.created if staged.has(p))
    report.pages_updated = sorted(p for p in comp.updated if staged.has(p))
    report.notes_written = sum(1 for p in staged.written if layout.is_note_path(p))
    report.facts, report.facts_superseded = comp.facts, comp.facts_superseded
    report.conflicts = comp.conflicts
    report.forgotten = comp.forgotten
    report.kept = sorted(set(comp.kept))
    report.session_failures.update(comp.failures)
    usage = comp.backend.usage()
    report.tokens_in, report.tokens_out = usage.input_tokens, usage.output_tokens
    report.cache_read_tokens, report.cache_write_tokens = usage.cache_read_tokens, usage.cache_write_tokens
    report.cost_usd, report.model_calls = usage.cost_usd, usage.calls
    report.model, report.backend_reason = comp.backend.model, comp.settings.backend_reason
    if done and not any(layout.is_summary_path(p) or layout.is_page_path(p) for p in staged.written):
        report.status, report.reason = "failed", "sessions were pending but nothing passed the gate"


def _sync(comp: Compilation, report: RunReport) -> None:
    """The staged tree as one commit. A dry run, or a run that failed, commits nothing and leaves
    what it staged in its run folder for the owner to read."""
    settings, staged = comp.settings, comp.staged
    if settings.dry_run or report.status == "failed":
        staged.flush()
        if settings.dry_run:
            report.status, report.files = "dry-run", sorted(staged.written)
        return
    written = staged.written
    plan = plan_sync(written, staged.derived_from, read_live(settings.root, [*written, *sorted(staged.removed)]), frozenset(staged.removed),
                     frozenset(staged.vanished))
    report.conflicts += plan.conflicts
    report.files = sorted(plan.writes)
    fault("after-plan")
    result = apply_sync(settings.root, plan, report.commit_message(), comp.run_id, comp.head, settings.root / layout.RUNS / comp.run_id)
    report.commit = result.commit
    report.conflicts += result.conflicts


def _deleted_pages(repo: BrainRepo, head: str | None, live: BrainView, state) -> list[str]:
    """Pages gone from the working tree that HEAD has, or that Dream wrote: the owner's deletions,
    committed or not (a page Dream wrote leaves the state once a run saw it gone)."""
    at_head = repo.git("ls-tree", "-r", "--name-only", head, "--", layout.KNOWLEDGE).splitlines() if head else []
    gone = {p for p in [*at_head, *state.written] if layout.is_page_path(p) and not live.tree.exists(p)}
    return sorted(gone)


def _blob_text(repo: BrainRepo, blob: str) -> str | None:
    data = repo.cat_blob(blob)
    return data.decode("utf-8", errors="replace") if data is not None else None
