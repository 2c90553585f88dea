"""The gate: validators and the semantic verifier on the staged tree; failing files are dropped.

A dropped page's links in other staged files become plain text and the indexes are rebuilt, so
what lands is always consistent; every drop is reported with its reasons.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from brain import layout
from brain.view import BrainView
from dream.backends.base import ModelBackend
from dream.claims import judge_claims, remove_claims, unlink_everywhere
from dream.settings import VerifierPolicy
from validators import Finding, run_checks
from validators.verifier import ClaimVerdict

MAX_ROUNDS = 4
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


def run_gate(live: BrainView, staged, backend: ModelBackend, regenerate, policy: VerifierPolicy | None = None,
             owner: str | None = None) -> GateResult:
    """Check, drop, regenerate (indexes) until the staged tree passes; `regenerate()` rewrites indexes.

    The validators run on the staged files over `live` (the live view). New or changed claims are
    judged once each (dream.claims); what is done with the ones not supported is the verifier
    policy: remove the claim, reject the file, keep it, or flag it.
    """
    policy = policy or VerifierPolicy()
    result = GateResult()
    verified: dict[str, list[ClaimVerdict]] = {}
    for _ in range(MAX_ROUNDS):
        written = staged.written
        view = BrainView.staged(live, staged.tree(), focus=written)
        findings = [f for f in run_checks(view, ignore=NOT_ON_STAGED) if f.path in written]
        bad: dict[str, list[str]] = {}
        for f in findings:
            if f.severity == "error":
                bad.setdefault(f.path, []).append(f.lint_line())
        todo = [p for p in written if p not in bad and p not in verified and _judged(p)]
        verdicts, failed = judge_claims(view, staged, todo, backend, owner)
        verified.update(verdicts)
        for path, why in failed.items():
            bad[path] = [f"{path}: {why}"]
            result.unverified.append(path)
        edited = False
        for path in (p for p in todo if p in verdicts):
            edited |= _apply_policy(staged, path, verified[path], policy, result, bad)
        if not bad and not edited:
            result.findings = findings
            result.verdicts = [v for path, vs in sorted(verified.items()) if path in written for v in vs]
            result.removed = [v for v in result.removed if v.path in written]
            result.flagged = [v for v in result.flagged if v.path in written]
            return result
        _drop(staged, bad, verified, result)
        regenerate()
    view = BrainView.staged(live, staged.tree(), focus=staged.written)
    result.findings = [f for f in run_checks(view, ignore=NOT_ON_STAGED) if f.path in staged.written]
    return result


def _drop(staged, bad: dict[str, list[str]], verified: dict, result: GateResult) -> None:
    """Drop the files that failed; a new page takes its notes with it, and links to it become text."""
    written = staged.written
    for path, reasons in sorted(bad.items()):
        result.rejected.setdefault(path, []).extend(reasons)
        staged.drop(path)
        verified.pop(path, None)
        if layout.is_page_path(path) and not staged.base.exists(path):
            slug = path.rsplit("/", 1)[1][:-3]
            for note in [p for p in written if p.startswith(f"{layout.NOTES}/{slug}/")]:
                result.rejected.setdefault(note, []).append(f"{note}: its page {path} was rejected")
                staged.drop(note)
            unlink_everywhere(staged, slug)


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
