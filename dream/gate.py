"""The gate: validators and the semantic verifier on the staged tree; failing files are dropped.

A dropped page's links in other staged files become plain text and the indexes are rebuilt, so
what lands is always consistent; every drop is reported with its reasons.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Collection
from dataclasses import dataclass, field

from brain import layout
from brain.doccache import DocCards
from brain.forked import run_forked
from brain.view import BrainView
from dream.backends.base import ModelBackend, VerifyRequest
from dream.claims import judge_ahead, judge_claims, remove_claims
from dream.settings import VerifierPolicy
from validators import Finding, run_checks
from validators.verifier import ClaimVerdict

MAX_ROUNDS = 4
#: Fewer staged files than this are judged in process (a nightly run): forking would cost more.
AHEAD_MIN_FILES = 200
#: A tree of at least this many files has its checks split over two processes (`_checks`): on
#: the 10k Brain they are a sixth of a nightly run; on a small one the fork would cost more.
SPLIT_MIN_FILES = 5_000
CHILD_FAMILIES = "X,I"
#: Checks whose findings are only ever on raw sessions (S008 problems of a cited session, S009 its
#: header id), which Dream never stages: the gate keeps findings on staged files only, so these
#: would open and parse every session a staged page cites for nothing. `brain validate` runs them.
NOT_ON_STAGED = ("S008", "S009")


@dataclass
class GateResult:
    findings: list[Finding] = field(default_factory=list)  # on staged files, after drops
    verdicts: list[ClaimVerdict] = field(default_factory=list)
    rejected: dict[str, list[str]] = field(default_factory=dict)  # path → reasons
    removed: list[ClaimVerdict] = field(default_factory=list)  # claims cut from staged files (policy)
    flagged: list[ClaimVerdict] = field(default_factory=list)  # claims kept but listed for the owner
    unverified: list[str] = field(default_factory=list)  # files the verifier could not judge (rejected)

    def verdict_counts(self) -> Counter:
        return Counter(v.label for v in self.verdicts)


class BackendJudge:
    """Adapts a backend's typed `verify` call to the verifier's Judge protocol."""

    def __init__(self, backend: ModelBackend) -> None:
        self.backend = backend

    def judge(self, claim: str, evidence: list[str]) -> tuple[str, float, str]:
        verdict = self.backend.verify(VerifyRequest(claim=claim, evidence=evidence))
        return verdict.label, verdict.score, verdict.reason


def run_gate(staged, backend: ModelBackend, regenerate, policy: VerifierPolicy | None = None, cards: DocCards | None = None,
             summary_lines: Callable[[], dict[str, str]] | None = None,
             clean_lines: Callable[[str], Collection[str] | None] | None = None) -> GateResult:
    """Check, drop, regenerate (indexes) until the staged tree passes; `regenerate()` rewrites indexes.

    New or changed claims are judged once each (dream.claims); what is done with the ones not
    supported is the verifier policy: remove the claim, reject the file, keep it, or flag it.
    `cards` (the run's cache) spares the index checks parsing documents that did not change;
    `summary_lines()`, session id → line of every summary of the staged tree as `regenerate()`
    last rendered sessions/index.md from them, spares them looking up 10,000 (BrainView);
    `clean_lines(path)`, the lines of a generated index found clean before, spares the X checks
    scanning them again (validators.safety.LINE_RECORDS).
    """
    policy = policy or VerifierPolicy()
    result = GateResult()
    verified: dict[str, list[ClaimVerdict]] = {}
    for round_ in range(MAX_ROUNDS):
        written = staged.written
        view = BrainView(staged.overlay(), focus=written, cards=cards, summary_lines=summary_lines, clean_lines=clean_lines)
        # The first round judges (nearly) every staged file: a pure backend's verdicts are worked
        # out by a forked process while this one runs the validators. Both need every staged
        # document parsed: that is done first, here, so the child inherits it.
        ahead = None
        candidates = [p for p in written if _judged(p)] if round_ == 0 and backend.pure else []
        if len(candidates) >= AHEAD_MIN_FILES:
            view.docs  # noqa: B018 - parses the staged documents (cached on the view and by content)
            ahead = judge_ahead(view, staged, candidates, backend)
        # With the checks split, a pure backend's verdicts are worked out here while the child checks
        # (on the files this process found nothing wrong with: a few more than needed, at most).
        judged_meanwhile: tuple[set[str], tuple[dict, dict]] | None = None  # (files asked, judge_claims' answer)

        def judge_meanwhile(found_here: list[Finding]) -> None:
            nonlocal judged_meanwhile
            wrong = {f.path for f in found_here if f.severity == "error"}
            asked = [p for p in written if p not in wrong and p not in verified and _judged(p)]
            judged_meanwhile = (set(asked), judge_claims(view, staged, asked, backend))

        split = ahead is None and len(view.tree.files()) >= SPLIT_MIN_FILES
        try:
            findings = [f for f in _checks(view, split=split, meanwhile=judge_meanwhile if backend.pure else None) if f.path in written]
        except BaseException:
            if ahead is not None:
                ahead.discard()
            raise
        bad: dict[str, list[str]] = {}
        for f in findings:
            if f.severity == "error":
                bad.setdefault(f.path, []).append(f.lint_line())
        todo = [p for p in written if p not in bad and p not in verified and _judged(p)]
        found = ahead.result() if ahead is not None else None
        if found is not None:  # verdicts of a pure backend do not depend on which files are asked
            verdicts, failed = {p: found[p] for p in todo}, {}
        elif judged_meanwhile is not None and set(todo) <= judged_meanwhile[0]:
            judged, why = judged_meanwhile[1]
            verdicts, failed = {p: judged[p] for p in todo if p in judged}, {p: why[p] for p in todo if p in why}
        else:
            verdicts, failed = judge_claims(view, staged, todo, backend)
        verified.update(verdicts)
        for path, why in failed.items():
            bad[path] = [f"{path}: {why}"]
            result.unverified.append(path)
        todo = [p for p in todo if p in verdicts]
        edited = False
        for path in todo:
            edited |= _apply_policy(staged, path, verified[path], policy, result, bad)
        if not bad and not edited:
            result.findings = findings
            result.verdicts = [v for path, vs in sorted(verified.items()) if path in written for v in vs]
            result.removed = [v for v in result.removed if v.path in written]
            result.flagged = [v for v in result.flagged if v.path in written]
            return result
        for path, reasons in sorted(bad.items()):
            result.rejected.setdefault(path, []).extend(reasons)
            staged.drop(path)
            verified.pop(path, None)
            if layout.is_page_path(path) and not staged.base.exists(path):
                slug = path.rsplit("/", 1)[1][:-3]
                for note in [p for p in written if p.startswith(f"{layout.NOTES}/{slug}/")]:
                    result.rejected.setdefault(note, []).append(f"{note}: its page {path} was rejected")
                    staged.drop(note)
                _unlink_everywhere(staged, slug)
        regenerate()
    result.findings = [f for f in run_checks(BrainView(staged.overlay(), focus=staged.written, cards=cards, summary_lines=summary_lines, clean_lines=clean_lines), ignore=NOT_ON_STAGED)
                       if f.path in staged.written]
    return result


def _checks(view: BrainView, split: bool, meanwhile: Callable[[list[Finding]], None] | None = None) -> list[Finding]:
    """run_checks(view); `split`: on two cores, the families that scan whole indexes for secrets
    and instructions (X) and compare them with every document (I) in a forked child, the rest
    here, then `meanwhile(what was found here)` while the child finishes (it takes longer). A
    child that fails costs only time: its checks are run here."""
    if not split:
        return run_checks(view, ignore=NOT_ON_STAGED)
    child = run_forked(lambda: run_checks(view, select=CHILD_FAMILIES))
    found = run_checks(view, ignore=(CHILD_FAMILIES, *NOT_ON_STAGED))
    if meanwhile is not None:
        meanwhile(found)
    theirs = child.result() if child is not None else None
    if theirs is None:
        theirs = run_checks(view, select=CHILD_FAMILIES)
    return sorted(set(found).union(theirs), key=Finding.sort_key)


def _judged(path: str) -> bool:
    """Files whose claims the verifier judges: documents Dream writes, not the generated indexes."""
    return path.endswith(".md") and path not in layout.GENERATED


def _apply_policy(staged, path: str, verdicts: list[ClaimVerdict], policy: VerifierPolicy, result: GateResult, bad: dict) -> bool:
    """Act on one file's claims that are not supported; True when its staged text was edited."""
    failing = [v for v in verdicts if v.label != "supported"]
    action = {v.claim: policy.unsupported if v.label == "unsupported" else policy.contradicted for v in failing}
    if "reject" in action.values():
        bad[path] = [f"{v.path}:{v.line}: {v.label}: {v.reason}" for v in failing]
        return False
    result.flagged += [v for v in failing if action[v.claim] == "flag"]
    remove = [v for v in failing if action[v.claim] == "remove"]
    if not remove:
        return False
    text = remove_claims(staged.read(path), path, [v.claim for v in remove])
    if text is None:
        bad[path] = [f"{v.path}:{v.line}: {v.label}: {v.reason}" for v in remove] + [f"{path}: no supported claim is left"]
        return False
    result.removed += remove
    staged.write(path, text)
    return True


def _unlink_everywhere(staged, slug: str) -> None:
    """Links to a page that will not exist become their text."""
    pattern = re.compile(r"\[\[" + re.escape(slug) + r"(?:#[^\]|]*)?(?:\|([^\]]*))?\]\]")
    for path, text in staged.written.items():
        if path.endswith(".md") and f"[[{slug}" in text:
            staged.write(path, pattern.sub(lambda m: m.group(1) or slug, text))
