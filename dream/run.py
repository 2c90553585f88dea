"""run(settings, backend) -> RunReport: the pipeline, top to bottom.

orient → (per session: sanitise, summarise, attach) → update pages → generated files → gate →
sync. Everything before sync writes only into `.dream/runs/<run-id>/staged/`.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import json
from collections.abc import Collection
from pathlib import Path

from brain import layout
from brain.errors import BrainError
from brain.render import render_knowledge_index_lines, session_index_line
from brain.repo import BrainRepo, blob_id
from brain.scan import WALK_AHEAD_MIN_INDEX, GitKeys, HeadFacts, WorktreeScan, head_facts, index_size
from brain.page import Page
from brain.doccache import code_fingerprint
from brain.forked import run_forked
from brain.listing import ForkedWalk, Watch, fork_walk, refresh
from brain.tree import DirTree, MemTree, text_if_exists
from brain.view import BrainView, doc_kind, parse_cached
from dream.ahead import prepare, prepare_ahead
from dream.backends.base import BackendError, ModelBackend
from dream.compile import Compilation, DocCache, Landed, UnitFailure, cache_version, code_memo
from dream.gate import run_gate
from dream.instructions import parse_instructions
from dream.lock import run_lock
from dream.phases.attach import attach_session, stage_notes
from dream.phases.orient import RawSessions, RawSnapshot, next_snapshot, plan_sessions, raw_sessions
from dream.phases.summarize import summarize_session, write_summaries
from dream.phases.update import update_pages
from dream.report import RunReport
from dream.sessions_index import IndexLines, IndexSnapshot, entry_of
from dream.offline.facts import DEFAULT_OWNER
from dream.settings import DreamSettings
from dream.staging import StagedTree
from dream.state import SessionState, parse_state, shard_problem
from dream.timing import PhaseClock
from validators.safety import LINE_RECORDS, lines_clean
from dream.sync import EARLY_COMMIT_MIN_FILES, FAST_COMMIT_MAX, EarlyCommit, SyncPlan, apply_sync, fault, plan_sync, read_live, recover
from dream.backends.base import RunContext
from dream.calls import over_budget
from dream.claims import withdraw


def run(settings: DreamSettings, backend: ModelBackend, scan: WorktreeScan | None = None) -> RunReport:
    """Compile what is new into one commit. Raises BrainError only for what stops the whole run.

    `scan`: git's look at the working tree, started by the caller before this module was imported
    (`dream run` does); it is used unless a killed run's files had to be finished first."""
    root = settings.root
    if not (root / ".git").exists():
        raise BrainError(f"{root} is not a Brain (no git repository)", "run `brain init` or `dream demo`")
    clock = PhaseClock()
    clock.mark("orient")
    with run_lock(root) as stale, _gc_paused():
        report = _run_locked(settings, backend, clock, scan)
        if stale:
            report.problems.insert(0, stale)
    clock.mark(None)
    report.timings = clock
    clock.save(root / layout.RUNS / report.run_id)
    return report


@contextlib.contextmanager
def _gc_paused():
    """A run builds millions of small acyclic objects (notes, cards, parsed pages) over a large
    Brain; the cyclic GC's full collections were a third of an incremental run on 10,000 sessions.
    Reference counting still frees them; the collector is restored afterwards."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _run_locked(settings: DreamSettings, backend: ModelBackend, clock: PhaseClock, scan: WorktreeScan | None) -> RunReport:
    root = settings.root
    recovered = recover(root)  # finish (or discard) what a killed run left
    if recovered is not None and scan is not None:
        scan.close()  # it may have looked at the files before the killed run's were finished
        scan = None
    # Files git vouches are unchanged carry their blob id: caches then need not read them.
    scan = scan or WorktreeScan(root)
    # The walk of every file (50 ms on the 10k Brain) is done by a forked process on the other core,
    # started with the scan (`dream run` does it before its imports) or here, while this one reads
    # git's scan and the state; a failed child leaves DirTree to walk here. It stays to keep the
    # listing at the run's end: forked while this process was small, it costs less than a fork then.
    walker = scan.take_walker()
    if walker is None and index_size(root) >= WALK_AHEAD_MIN_INDEX:
        walker = fork_walk(root, serve=True)
    try:
        return _run_walked(settings, backend, clock, scan, walker, recovered)
    except BaseException:
        if walker is not None:  # stopped early: nothing it would still do is needed
            walker.discard()
        raise
    finally:
        if walker is not None:
            walker.close()  # the next run (after the lock) finds the listing this one kept


def _run_walked(settings: DreamSettings, backend: ModelBackend, clock: PhaseClock, scan: WorktreeScan, walker: ForkedWalk | None,
                recovered: str | None) -> RunReport:
    root = settings.root
    repo = BrainRepo(root)
    cards = root / layout.CACHE / "cards"
    cache = DocCache(cards, version=cache_version(cards))
    # First what needs no word from git, which may still be statting every file (on the 10k Brain it
    # often is): the forked walk's listing, and what the last run kept of sessions/raw/ and
    # sessions/index.md (each checked against git's keys below before it is used).
    listing = walker.result() if walker is not None else None
    kept_raw = RawSnapshot.load(cache.read_file(RAW_SNAPSHOT), cache.version)
    index_snapshot = IndexSnapshot.load(cache.read_file(INDEX_SNAPSHOT), cache.version)
    keys = scan.keys()
    live = DirTree(root, keys=keys, folders=scan.folders, listing=(lambda: listing) if walker is not None else None)
    view = BrainView(live, cards=cache)
    records = _records(live, keys)
    snapshot = _raw_snapshot(kept_raw, _records_key(records))
    state, state_problem = parse_state(text_if_exists(live, layout.STATE), lambda rel: text_if_exists(live, rel))
    raw = raw_sessions(live, keys.vouched_entries(layout.SESSIONS_RAW + "/") if isinstance(keys, GitKeys) else None,
                       keys.named if isinstance(keys, GitKeys) else frozenset(), snapshot,
                       lambda rels, every: cache.session_hashes(rels, live, every))  # takes the listing
    files, problems = raw.files, raw.problems
    state_problem = "; ".join(p for p in (recovered, state_problem) if p) or None
    plan = plan_sessions(files, state, settings.max_sessions)
    run_id = settings.make_run_id([f"{p.id}:{p.hash}" for p in plan.pending])
    report = RunReport(run_id=run_id, backend=backend.name, deferred=plan.deferred, problems=problems + ([state_problem] if state_problem else []))
    if not plan.pending:
        report.status = "nothing-to-do"
        if not settings.dry_run:
            _keep_raw_snapshot(cache, raw, state, _records_key(records))
            cache.save()
        return report

    instructions = parse_instructions(text_if_exists(live, layout.INSTRUCTIONS) or "", text_if_exists(live, layout.FORGET) or "")
    facts = scan.head_facts() or head_facts(root)  # asked while the modules were imported, or now
    if facts is None:
        raise BrainError("git could not say what HEAD holds", "run `git status` in the Brain to see what is wrong")
    head = facts.head
    # Pages the owner deleted (committed or not) are forgotten before anything can link to them.
    deleted = _deleted_pages(facts, live, state)
    forgotten = [layout.page_location(p)[1] for p in deleted]
    already = set(instructions.forget)  # what forget.md lists now: those need no new line
    if forgotten:
        instructions = instructions.model_copy(update={"forget": sorted(set(instructions.forget) | set(forgotten))})
        for p in deleted:
            state.written.pop(p, None)
    staged = StagedTree(root / layout.RUNS / run_id / "staged", live)
    comp = Compilation(settings=settings, backend=backend, view=view, staged=staged, state=state, instructions=instructions, run_id=run_id)
    comp.forgotten = [s for s in forgotten if s not in already]
    comp.index_snapshot = index_snapshot
    comp.read_blob = lambda blob: _blob_text(repo, blob)
    comp.cache = cache
    comp.seed_resolver()
    _seed_owner(comp, settings.owner or DEFAULT_OWNER)
    run_dir = root / layout.RUNS / run_id
    backend.open_run(RunContext(run_dir=run_dir, index=text_if_exists(live, layout.KNOWLEDGE_INDEX) or "", instructions=instructions.text, record=settings.record))
    if settings.record:
        from dream.record import snapshot_inputs

        snapshot_inputs(root, run_dir, settings, run_id, backend, head)

    sessions = {}
    clock.mark("sessions")
    ahead = prepare_ahead(comp, live, plan.pending)
    try:
        for i, pending in enumerate(plan.pending):
            # Budgets stop the run at a session boundary; what is done lands, the rest waits.
            report.stopped = over_budget(backend.usage(), settings.max_tokens, settings.max_cost)
            if report.stopped:
                report.deferred = [p.id for p in plan.pending[i:]] + report.deferred
                break
            prepared = ahead.get(i) if ahead is not None else prepare(comp, live, pending)
            report.problems += prepared.problems
            if prepared.clean is None:
                report.session_failures[pending.id] = "unreadable session (see problems)"
                continue
            clean = prepared.clean
            for key, value in prepared.redactions.items():
                report.redactions[key] = report.redactions.get(key, 0) + value
            try:
                summary = prepared.summary or summarize_session(comp, clean)
                attach_session(comp, clean, pending.first_turn, prepared.facts)
            except BackendError as exc:
                report.session_failures[pending.id] = str(exc) + (f" ({exc.hint})" if exc.hint else "")
                if exc.fatal:  # e.g. no key: every other session would fail alike
                    report.stopped = f"{exc}"
                    break
                continue
            sessions[pending.id] = (pending, clean, summary)
    finally:
        if ahead is not None:
            ahead.stop()

    clock.mark("notes")
    stage_notes(comp)
    if not sessions:
        report.status, report.reason = "failed", report.stopped or "no pending session could be read (see problems)"
        _shard_problems(report, state)
        return _finish(root, run_id, report)
    clock.mark("update")
    # On a large Brain the staged files are committed as they come, while the run goes on
    # (dream.sync.EarlyCommit): the notes (their folders are the largest) while the pages
    # compile, then the rest on that tree while the gate runs.
    early = _early_commit(settings, staged, head, live)
    try:
        update_pages(comp)
        clock.mark("generate")
        for sid, path in withdraw(comp, sessions, [f.unit for f in comp.failures if layout.is_page_path(f.unit)]):
            # Its facts for that page are withdrawn too, so the next run makes them (and the page) again.
            sessions.pop(sid, None)
            report.session_failures[sid] = f"kept pending: the page {path} it feeds could not be written"
        write_summaries(comp, [(clean, summary) for _, clean, summary in sessions.values()])
        for sid, (pending, clean, summary) in sessions.items():
            state.sessions[sid] = SessionState(hash=pending.hash, turns=len(clean.turns), run=run_id)
        report.sessions = sorted(sessions)

        def regenerate(final: bool = False) -> None:
            _write_generated(comp, report, with_state=final)

        regenerate()
        staged.flush(background=True)  # written while the gate runs; the flush below waits for it
        # Not the log: the last regenerate writes its entry again with the gate's figures (on the
        # 10k Brain 190 KB that fast-import would store twice, the first copy for nothing).
        early = _early_commit(settings, staged, head, live, on=early, later={layout.KNOWLEDGE_LOG})
        fault("after-staging")
        clock.mark("gate")
        cleaned = _clean_record(cache)
        gate = run_gate(staged, backend, regenerate, settings.verifier, cards=comp.cache, summary_lines=lambda: _summary_lines(comp),
                        clean_lines=_clean_lines(live, cleaned))
        # The generated indexes as the gate scanned them, and whether it found them clean
        scanned = {rel: staged.read(rel) for rel in LINE_RECORDS if staged.has(rel)}
        flagged = {f.path for f in gate.findings if f.code.startswith("X")}
        fault("after-gate")
        report.claims_removed = [f"{v.path}: {v.claim} ({v.label}: {v.reason})" for v in gate.removed]
        report.claims_flagged = [f"{v.path}: {v.claim} ({v.label}: {v.reason})" for v in gate.flagged]
        for sid, path in withdraw(comp, sessions, gate.unverified):
            state.sessions.pop(sid, None)  # the final regenerate() below writes state.json without it
            report.session_failures[sid] = f"kept pending: {path} could not be verified"
            report.sessions = [s for s in report.sessions if s != sid]
        report.rejected = gate.rejected
        report.verifier = dict(sorted(gate.verdict_counts().items()))
        report.findings = [f.lint_line() for f in gate.findings]
        report.pages_created = sorted(p for p in comp.created if staged.has(p))
        report.pages_updated = sorted(p for p in comp.updated if staged.has(p))
        report.notes_written = sum(1 for p in staged.written if layout.is_note_path(p))
        report.facts = comp.counts.get("facts", 0)
        report.facts_superseded = comp.counts.get("facts_superseded", 0)
        report.conflicts = comp.conflicts
        report.forgotten = comp.forgotten
        report.kept = sorted(set(comp.kept))
        report.session_failures.update({f.unit: f.reason for f in comp.failures})
        usage = backend.usage()
        report.tokens_in, report.tokens_out = usage.input_tokens, usage.output_tokens
        report.cache_read_tokens, report.cache_write_tokens = usage.cache_read_tokens, usage.cache_write_tokens
        report.cost_usd, report.model_calls = usage.cost_usd, usage.calls
        report.model, report.backend_reason = backend.model, settings.backend_reason
        if sessions and not any(layout.is_summary_path(p) or layout.is_page_path(p) for p in staged.written):
            report.status, report.reason = "failed", "sessions were pending but nothing passed the gate"
        clock.mark("generate")
        regenerate(final=True)  # the log entry and state carry the final figures
        sync_plan = None
        if not settings.dry_run and report.status != "failed":
            sync_plan = plan_sync(staged.written, staged.derived_from, read_live(root, list(staged.written)))
            # What the last regenerate wrote (state.json, 0.5 MB on the 10k Brain, most of it) is committed early too,
            # while the staged files are written out and sync asks git who commits.
            early = _early_commit(settings, staged, head, live, on=early, plan=sync_plan)
        staged.flush()
        clock.mark("sync")

        landed, result, relister, watch = None, None, None, None
        trees: list = []  # the new commit's folder trees, being read (apply_sync's `landed`)
        try:
            if settings.dry_run:
                report.status = "dry-run"
                report.files = sorted(staged.written)
            elif sync_plan is not None:
                written = staged.written
                sync = sync_plan
                report.conflicts += sync.conflicts
                report.files = sorted(sync.writes)
                fault("after-plan")
                snapshots: dict[str, bytes | None] = {}

                def meanwhile() -> None:  # while git writes the commit: what the caches keep if it lands as planned
                    if layout.STATE in sync.writes:
                        snapshots[RAW_SNAPSHOT] = _raw_snapshot_data(cache, raw, state, _records_key(records, sync.writes))
                    snapshots[INDEX_SNAPSHOT] = _index_snapshot_data(comp, sync, keys)

                # What the run's writes do to the folders they go in is watched, so that the listing
                # is kept without reading those folders again (brain.listing.Watch).
                kept = walker.kept if walker is not None else None
                watch = Watch(root, {p.rpartition("/")[0] + "/" for p in sync.writes if "/" in p}, kept) if kept is not None else None
                try:
                    # git's index update runs on while the caches below learn what landed (result.finish()),
                    # and git lists the new commit's folder trees while the files are swapped (`trees`)
                    result = apply_sync(root, sync, report.commit_message(), run_id, head, root / layout.RUNS / run_id,
                                        staged=(staged.root, written), wait_index=False, early=early, meanwhile=meanwhile,
                                        landed=lambda commit: trees.append(repo.folder_trees_later(commit)))
                    if result.commit and watch is not None and watch.active:  # the listing kept for the next run, with this run's files
                        vouched = watch.vouched(sync.writes)
                        if not walker.refresh(vouched):  # the walker keeps it, else a process forked now
                            relister = run_forked(lambda: refresh(root, kept, vouched) or True)
                finally:
                    if watch is not None:
                        watch.stop()  # closed at the end: closing it now would wait on the kernel
                report.commit = result.commit
                report.conflicts += result.conflicts
                if result.commit and not result.rebased:
                    if snapshots.get(RAW_SNAPSHOT) is not None:
                        cache.keep_file(RAW_SNAPSHOT, snapshots[RAW_SNAPSHOT])
                    cache.keep_file(INDEX_SNAPSHOT, snapshots.get(INDEX_SNAPSHOT))
                    cache.keep_file(CLEAN_RECORD, _clean_record_data(cache, cleaned, scanned, flagged, sync.writes))
                if result.commit and head and not result.rebased:
                    before, after = facts.folders, trees[-1]() if trees else repo.folder_trees(result.commit)
                    if before is not None and after is not None:
                        landed = Landed(writes=sync.writes, base_folders=before, folders=after)
        finally:
            if not settings.dry_run:  # a dry run leaves only its run folder
                comp.save_digests(landed)
                comp.cache.save(background=True)  # a full compile's thousands of files are written while the report is
            if result is not None:
                result.finish()
        _shard_problems(report, state)
        try:
            return _finish(root, run_id, report)
        finally:
            comp.cache.wait()  # the next run (after the lock) finds every card this one learned
            if relister is not None:
                relister.result()
            if watch is not None:
                watch.close()
    finally:
        if early is not None:
            early.discard()


#: The cache file naming, per generated index, the blob of it a gate scanned line by line and
#: found clean (validators.safety.LINE_RECORDS): a line `version <code>`, then `path TAB blob id`.
CLEAN_RECORD = "clean-lines.txt"


def _clean_version(cache: DocCache) -> str:
    """The record holds for the code that scanned: the validators' patterns too, not only the cards'."""
    return f"{cache.version} {code_fingerprint('validators', memo=code_memo(cache.folder))}"


def _clean_record(cache: DocCache) -> dict[str, str]:
    """path → blob id of a generated index found clean, as the last runs left them (this code's)."""
    lines = (cache.read_file(CLEAN_RECORD) or b"").decode("utf-8", errors="replace").split("\n")
    if lines[0] != f"version {_clean_version(cache)}":
        return {}
    return dict(entry for line in lines[1:] if len(entry := line.split("\t")) == 2)


def _clean_lines(live: DirTree, record: dict[str, str]):
    """BrainView's clean_lines for the gate: the lines of a generated index as the working tree
    holds it, when those bytes are the blob the record names (found clean by an earlier gate)."""
    found: dict[str, frozenset[str] | None] = {}

    def clean_lines(rel: str) -> frozenset[str] | None:
        if rel not in found:
            raw = live.read_if_exists(rel) if rel in record else None
            found[rel] = frozenset(raw.decode("utf-8", errors="replace").split("\n")) if raw is not None and blob_id(raw) == record[rel] else None
        return found[rel]

    return clean_lines


def _clean_record_data(cache: DocCache, record: dict[str, str], scanned: dict[str, str], flagged: set[str],
                       writes: dict[str, str]) -> bytes:
    """The record after a run landed `writes`: a generated index the gate scanned with no X finding
    is named by the blob that landed, when that is the text scanned or its other lines are clean
    too (the last regenerate changes knowledge/log.md's figures: those lines are scanned here;
    else the next run would scan the whole log, whose first compile's line names every session);
    the other entries stay (a blob found clean stays clean: the next run compares it with the file)."""
    files = dict(record)
    for rel, text in scanned.items():
        if rel in writes:
            files.pop(rel, None)
            landed = writes[rel]
            if rel not in flagged and (landed == text or lines_clean(landed, frozenset(text.split("\n")))):
                files[rel] = blob_id(landed.encode("utf-8"))
    return "".join([f"version {_clean_version(cache)}\n"] + [f"{rel}\t{blob}\n" for rel, blob in sorted(files.items())]).encode("utf-8")


#: The cache file of what a run knew of sessions/raw/ (dream.phases.orient.RawSnapshot).
RAW_SNAPSHOT = "raw-snapshot.bin"


def _early_commit(settings: DreamSettings, staged: StagedTree, head: str | None, live: DirTree,
                  on: EarlyCommit | None = None, plan: SyncPlan | None = None, later: Collection[str] = ()) -> EarlyCommit | None:
    """On a large Brain, the staged files committed in the background as sync would write them now
    (dream.sync.EarlyCommit), on the tree of `on` (an earlier one) when given; None for a dry run, a
    first commit, a small tree, or a commit of more files than fast-import alone makes. `plan`:
    the sync planned of the staged files now (else it is planned here). `later`: files left to a
    later commit (they will be written again before it)."""
    if settings.dry_run or head is None or len(live.files()) < EARLY_COMMIT_MIN_FILES:
        return None
    written = staged.written
    if len(written) > FAST_COMMIT_MAX:
        return on
    if plan is None:
        plan = plan_sync(written, staged.derived_from, read_live(settings.root, list(written)))
    writes = {rel: text for rel, text in plan.writes.items() if rel not in later}
    return EarlyCommit(settings.root, writes, head, on=on) if writes else on


def _records(live: DirTree, keys) -> dict[str, str | None]:
    """state.json and each `.dream/sessions/` shard in the working tree → its blob id as git vouches
    for it (None: git cannot): what the raw sessions are measured against (_records_key)."""
    return {rel: keys.get(rel) if keys else None for rel in (layout.STATE, *live.under(layout.SESSION_RECORDS + "/"))}


def _records_key(records: dict[str, str | None], writes: dict[str, str] | None = None) -> str | None:
    """One id for the session records (`_records`) with `writes` (path → text) committed over them;
    None when git could not vouch for one of them (the raw snapshot then does not apply)."""
    blobs = dict(records)
    for rel, text in (writes or {}).items():
        if rel == layout.STATE or rel.startswith(layout.SESSION_RECORDS + "/"):
            blobs[rel] = blob_id(text.encode("utf-8"))
    if any(blob is None for blob in blobs.values()):
        return None
    return hashlib.sha1("".join(f"{rel} {blob}\n" for rel, blob in sorted(blobs.items())).encode("utf-8")).hexdigest()


def _raw_snapshot(kept: RawSnapshot | None, records_key: str | None) -> RawSnapshot | None:
    """The snapshot the last run left (`kept`), when it describes the session records the Brain holds now."""
    return kept if kept is not None and records_key is not None and kept.records == records_key else None


def _keep_raw_snapshot(cache: DocCache, raw: RawSessions, state, records_key: str | None) -> None:
    """Keep, with the next cache save, what this run knew of sessions/raw/ under the session records
    whose key is now `records_key` (None: git cannot say; the old snapshot no longer applies)."""
    data = _raw_snapshot_data(cache, raw, state, records_key)
    if data is not None:
        cache.keep_file(RAW_SNAPSHOT, data)


def _raw_snapshot_data(cache: DocCache, raw: RawSessions, state, records_key: str | None) -> bytes | None:
    """The snapshot `_keep_raw_snapshot` keeps; None: none to keep."""
    if records_key is not None and raw.entries:
        return next_snapshot(raw, state, records_key).dump(cache.version)
    return None


def _deleted_pages(facts: HeadFacts, live: DirTree, state) -> list[str]:
    """Pages gone from the working tree that HEAD has, or that Dream wrote and a commit since its
    last one deleted: the owner's deletions, committed or not.

    Asked of git (brain.scan.head_facts), not of `state.written` (57,000 paths on the 10k Brain,
    kept in shards that a run reads only as it needs them): a page Dream wrote is in its last
    commit, unless a run since saw it gone and dropped it from the map already."""
    gone = {p for p in facts.pages if not live.exists(p)}
    gone |= {p for p in facts.deleted if not live.exists(p) and p in state.written}
    return sorted(p for p in gone if layout.is_page_path(p))


def _shard_problems(report: RunReport, state) -> None:
    """Unreadable shards of state.json the run met (read as needed) go into its problems."""
    for shards in (state.sessions, state.written):
        problem = shard_problem(shards)
        if problem and problem not in report.problems:
            report.problems.append(problem)




def _finish(root: Path, run_id: str, report: RunReport) -> RunReport:
    run_dir = root / layout.RUNS / run_id
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "report.json").write_text(report.model_dump_json(indent=2) + "\n", encoding="utf-8")
    prune_runs(root, run_id)
    return report


#: How many of the newest runs keep their scratch (staged tree; the private git index and blob lists
#: of runs made before sync used fast-import) for inspection; older runs keep only what is small and
#: says what happened (report.json, message, calls.jsonl, record/).
KEEP_SCRATCH = 5
_SCRATCH = ("staged", "blobs", "index", "blob-list", "index-info")


def prune_runs(root: Path, current: str, keep: int = KEEP_SCRATCH) -> list[str]:
    """Delete the scratch of runs older than the newest `keep` (never the current run's, nor the one a
    sync journal names); returns the runs pruned. Run ids start with their UTC time, so they sort."""
    import shutil

    runs = root / layout.RUNS
    try:  # a sync that has not finished its working tree keeps its run whole
        journaled = {json.loads((root / layout.JOURNAL).read_text(encoding="utf-8"))["run_id"]}
    except (OSError, ValueError, KeyError, TypeError):
        journaled = set()
    names = sorted(p.name for p in runs.iterdir() if p.is_dir()) if runs.is_dir() else []
    protected = set(names[-keep:]) | {current} | journaled
    pruned = []
    for name in names:
        scratch = [runs / name / part for part in _SCRATCH if (runs / name / part).exists()]
        if name in protected or not scratch:
            continue
        for path in scratch:
            try:
                shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink()
            except OSError:
                continue  # a file we cannot remove is left; the run itself is not affected
        pruned.append(name)
    return pruned


def _seed_owner(comp: Compilation, owner: str | None) -> None:
    """First-person facts go to the owner's page, found by full name or by the first name speakers use."""
    if not owner:
        return
    first = owner.split()[0]
    known = comp.resolver.lookup(owner)
    if known is None:
        comp.resolver.add(layout.slugify(owner), owner, "person", [first] if first != owner else [])
    elif first != owner and comp.resolver.lookup(first) is None:
        comp.resolver.alias(known, first)


def _blob_text(repo: BrainRepo, blob: str) -> str | None:
    data = repo.cat_blob(blob)
    return data.decode("utf-8", errors="replace") if data is not None else None


def _write_generated(comp: Compilation, report: RunReport, with_state: bool) -> None:
    """knowledge/index.md, sessions/index.md, knowledge/log.md, forget.md from the staged view, and
    state.json and its changed shards `with_state` (the final time only: no check reads them)."""
    staged = comp.staged
    knowledge_index, sessions_index = _index_texts(comp)
    staged.write(layout.KNOWLEDGE_INDEX, knowledge_index)
    staged.write(layout.SESSIONS_INDEX, sessions_index)
    staged.write(layout.KNOWLEDGE_LOG, _log_text(comp, report))
    if comp.forgotten:
        forget = staged.read(layout.FORGET) or "# Forget\n\n"
        for slug in comp.forgotten:
            line = f"- {comp.settings.now.date().isoformat()}: {slug} — deleted by the owner"
            if f": {slug} " not in forget:
                forget = forget.rstrip("\n") + "\n" + line + "\n"
        staged.write(layout.FORGET, forget)
    if with_state:
        written = {path: blob_id(text.encode("utf-8")) for path, text in staged.written.items() if not layout.is_state_path(path)}
        for path, text in comp.state.render(last_run=comp.run_id, written=written).items():
            staged.write(path, text)


def _index_texts(comp: Compilation) -> tuple[str, str]:
    """knowledge/index.md and sessions/index.md of the staged tree over the live one. A run renders
    them before its gate and after it; they are rendered again only when a staged document's line
    changed meanwhile (the gate dropped or edited it), not sorted and joined anew (10,000 lines)."""
    staged = _staged_lines(comp)
    key = (sorted(staged[0].items()), sorted(staged[1].items()))
    if comp.index_memo is not None and comp.index_memo[0] == key:
        return comp.index_memo[1]
    sessions = _session_lines(comp, staged[1])
    comp.index_lines = sessions
    texts = (render_knowledge_index_lines(_page_lines(comp, staged[0])), sessions.text())
    comp.index_memo = (key, texts)
    return texts


def _summary_lines(comp: Compilation) -> dict[str, str]:
    """Session id → index line of each summary of the staged tree over the live one: the lines
    sessions/index.md was last rendered from (`_index_texts`)."""
    return comp.index_lines.lines_by_id()


def _index_entries(comp: Compilation, staged: tuple[dict, dict] | None = None) -> tuple[dict[str, str], dict[str, tuple[str, str]]]:
    """Index lines of every page (path → line) and summary (session id → (started, line)) of the
    staged tree over the live one (what the two indexes list). `staged`: `_staged_lines(comp)`."""
    staged_pages, staged_summaries = staged or _staged_lines(comp)
    entries = _session_lines(comp, staged_summaries).entries()
    return _page_lines(comp, staged_pages), dict(sorted(entries.items()))


def _live_lines(comp: Compilation) -> tuple[dict[str, str], IndexLines]:
    """The index lines of the live pages (path → line) and summaries, looked up once per run: a run
    regenerates the indexes several times, and only the few staged files change between. The
    summaries' lines are the live sessions/index.md's when the snapshot the last run left vouches
    for them (`_vouched_index`), else each summary's card."""
    if comp.live_index is None:
        pages = {p: c["line"] for p in comp.view.page_paths if (c := comp.view.page_card(p)) is not None}
        summaries = _vouched_index(comp)
        if summaries is None:
            cards = comp.view.summary_cards(comp.view.paths_under(layout.SESSIONS_SUMMARIES + "/"), every=True)
            summaries = IndexLines.of({p.rsplit("/", 1)[1][:-3]: (c["started"], c["line"]) for p, c in cards.items()})
        comp.live_index = (pages, summaries)
    return comp.live_index


def _page_lines(comp: Compilation, staged: dict[str, str | None]) -> dict[str, str]:
    pages = dict(_live_lines(comp)[0])
    for path, line in staged.items():
        _put(pages, path, line)
    return {p: pages[p] for p in sorted(pages)}


#: Past this many staged summaries the index lines are sorted anew rather than spliced one by one.
SPLICE_MAX = 32


def _session_lines(comp: Compilation, staged: dict[str, tuple[str, str] | None]) -> IndexLines:
    live = _live_lines(comp)[1]
    if len(staged) <= SPLICE_MAX:
        out = live.copy()
        for path, entry in sorted(staged.items()):
            out.put(path.rsplit("/", 1)[1][:-3], entry)
        return out
    entries = live.entries()
    for path, entry in staged.items():
        _put(entries, path.rsplit("/", 1)[1][:-3], entry)
    return IndexLines.of(entries)


#: The cache file of the last committed sessions/index.md's line keys (dream.sessions_index).
INDEX_SNAPSHOT = "sessions-index.bin"


def _vouched_index(comp: Compilation) -> IndexLines | None:
    """The live sessions/index.md's lines with their sort keys, when the snapshot the last run left
    says they are the live summaries' lines: the index is the blob it committed, and the summaries
    folder holds the entries it expected, each vouched for by git, none untracked."""
    snapshot = getattr(comp, "index_snapshot", None)
    tree = comp.view.tree
    keys = getattr(tree, "keys", None)
    if snapshot is None or not isinstance(keys, GitKeys) or keys.get(layout.SESSIONS_INDEX) != snapshot.index:
        return None
    prefix = layout.SESSIONS_SUMMARIES + "/"
    if tree.vouched_count(prefix) != len(snapshot.entries) or frozenset(keys.entries(prefix)) != snapshot.entries:
        return None
    return snapshot.lines(tree.read_text(layout.SESSIONS_INDEX))


def _index_snapshot_data(comp: Compilation, sync, keys) -> bytes | None:
    """What to keep after a commit of `sync` (made without a rebase): the line keys of the
    sessions/index.md it holds and the summaries' entries git will list, when every staged summary
    and the index land as staged and the summaries folder was all vouched for when the run began;
    else None: no snapshot, and the next run looks up every summary's card."""
    lines = getattr(comp, "index_lines", None)
    prefix = layout.SESSIONS_SUMMARIES + "/"
    written = comp.staged.written
    index_text = written.get(layout.SESSIONS_INDEX)
    if lines is None or index_text is None or lines.text() != index_text or not isinstance(keys, GitKeys):
        return None
    staged = [p for p in written if p.startswith(prefix)]

    def landed(path: str) -> bool:
        if path in sync.writes:
            return sync.writes[path] == written[path]
        return not any(c.startswith(path + ":") for c in sync.conflicts)

    if not all(landed(p) for p in [*staged, layout.SESSIONS_INDEX]) or comp.view.tree.vouched_count(prefix) is None:
        return None
    new = {p: entry_of(p, blob_id(written[p].encode("utf-8"))) for p in staged}
    expected = (set(keys.entries(prefix)) - keys.entries_of(new)) | set(new.values())
    snapshot = IndexSnapshot(blob_id(index_text.encode("utf-8")), frozenset(expected), lines.keys)
    return snapshot.dump(comp.cache.version)


def _staged_lines(comp: Compilation) -> tuple[dict[str, str | None], dict[str, tuple[str, str] | None]]:
    """The index line of each staged page, and (started, line) of each staged summary; None for
    one that does not parse (it has no line, whatever the live one had)."""
    written = comp.staged.written
    # Staged files as a view of the staged tree would see them (kinds, content keys, parses).
    upper = MemTree(written, comp.staged.root)

    def parse(path: str) -> Page | None:
        return parse_cached(path, written[path])

    pages: dict[str, str | None] = {}
    summaries: dict[str, tuple[str, str] | None] = {}
    prefix = layout.SESSIONS_SUMMARIES + "/"
    for path in written:
        kind = doc_kind(path)
        if kind == "page":
            card = comp.cache.page(path, upper, parse)
            pages[path] = card["line"] if card is not None else None
        elif kind and path.startswith(prefix):  # new text: its card is built, not looked up among 10,000
            page = parse(path)
            summaries[path] = (str(page.frontmatter.extras().get("started") or ""), session_index_line(page)) if page is not None else None
    return pages, summaries


def _put(entries: dict, path: str, value) -> None:
    if value is None:
        entries.pop(path, None)  # a staged file that does not parse has no line, whatever the live one had
    else:
        entries[path] = value


def _log_text(comp: Compilation, report: RunReport) -> str:
    previous = text_if_exists(comp.staged.base, layout.KNOWLEDGE_LOG) or "# Log\n"
    head, _, rest = previous.partition("\n")
    sessions = report.sessions or sorted(comp.processed)
    entry = [
        f"## {comp.settings.now.date().isoformat()} · run {comp.run_id}",
        f"- sessions: {len(sessions)} ({', '.join(sessions)})" if sessions else "- sessions: 0",
        f"- pages: {len(report.pages_created)} created, {len(report.pages_updated)} updated, {len(report.rejected)} rejected",
        f"- verifier: {report.verifier_line()}",
        f"- backend: {report.backend}{f' ({report.model})' if report.model else ''}; tokens: {report.tokens_line()}",
    ]
    entry += [f"- conflict: {c}" for c in comp.conflicts]
    body = rest.lstrip("\n")
    return f"{head or '# Log'}\n\n" + "\n".join(entry) + "\n" + (f"\n{body}" if body else "")
