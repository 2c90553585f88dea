"""RunReport: what a run did, as text for people, JSON for tools, and the commit message."""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, Field

from brain.model import Model, empty_list


class RunReport(Model):
    model_config = ConfigDict(extra="forbid")

    run_id: str
    backend: str
    status: str = "ok"  # ok | nothing-to-do | failed | dry-run
    reason: str | None = None
    sessions: list[str] = Field(default_factory=empty_list)
    deferred: list[str] = Field(default_factory=empty_list)
    session_failures: dict[str, str] = Field(default_factory=dict)
    pages_created: list[str] = Field(default_factory=empty_list)
    pages_updated: list[str] = Field(default_factory=empty_list)
    notes_written: int = 0
    facts: int = 0
    facts_superseded: int = 0
    rejected: dict[str, list[str]] = Field(default_factory=dict)
    conflicts: list[str] = Field(default_factory=empty_list)
    forgotten: list[str] = Field(default_factory=empty_list)
    kept: list[str] = Field(default_factory=empty_list)  # hand-written files Dream did not rewrite
    problems: list[str] = Field(default_factory=empty_list)
    findings: list[str] = Field(default_factory=empty_list)  # warnings left on landed files
    verifier: dict[str, int] = Field(default_factory=dict)
    redactions: dict[str, int] = Field(default_factory=dict)
    tokens_in: int = 0
    tokens_out: int = 0
    model: str | None = None  # network backends
    backend_reason: str = ""  # why this backend (flag, brain.toml, default)
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost_usd: float | None = 0.0  # None: the model has no known price
    model_calls: int = 0
    stopped: str | None = None  # a budget stopped the run before its last session
    claims_removed: list[str] = Field(default_factory=empty_list)  # unsupported claims cut from staged files
    claims_flagged: list[str] = Field(default_factory=empty_list)  # contradicted claims, kept for the owner to judge
    commit: str | None = None
    files: list[str] = Field(default_factory=empty_list)
    # Where the time went (dream.timing.PhaseClock): never serialised, so the report stays the
    # same for the same inputs; the run folder's timings.json has it.
    timings: Any = Field(default=None, exclude=True)

    @property
    def ok(self) -> bool:
        return self.status in ("ok", "nothing-to-do", "dry-run")

    def verifier_line(self) -> str:
        v = self.verifier
        return f"{v.get('supported', 0)} supported, {v.get('unsupported', 0)} unsupported, {v.get('contradicted', 0)} contradicted"

    def tokens_line(self) -> str:
        """`N in, M out`, and for model runs the cache and cost: `…; 900 cached; $0.0123`."""
        line = f"{self.tokens_in} in, {self.tokens_out} out"
        if self.cache_read_tokens or self.cache_write_tokens:
            line += f"; cache {self.cache_read_tokens} read, {self.cache_write_tokens} written"
        if self.model_calls:
            line += f"; {self.model_calls} calls" + (f"; ${self.cost_usd:.4f}" if self.cost_usd is not None else "; cost unknown")
        return line

    def headline(self) -> str:
        if self.status == "nothing-to-do":
            return "dream: nothing new; no commit"
        if self.status == "failed":
            return f"dream: failed: {self.reason}"
        verb = "would write" if self.status == "dry-run" else "compiled"
        return (
            f"dream: {verb} {len(self.sessions)} session(s): {len(self.pages_created)} page(s) created, "
            f"{len(self.pages_updated)} updated, {len(self.rejected)} file(s) rejected"
        )

    def commit_message(self) -> str:
        lines = [self.headline().removeprefix("dream: ").capitalize(), ""]
        lines.append("Sessions: " + (", ".join(self.sessions) or "none"))
        if self.pages_created:
            lines.append("Created: " + ", ".join(self.pages_created))
        if self.pages_updated:
            lines.append("Updated: " + ", ".join(self.pages_updated))
        for path, reasons in sorted(self.rejected.items()):
            lines.append(f"Rejected: {path}: {reasons[0]}")
        for conflict in self.conflicts:
            lines.append(f"Conflict: {conflict}")
        lines += [f"Removed claim: {c}" for c in self.claims_removed]
        lines += [f"Flagged claim: {c}" for c in self.claims_flagged]
        if self.stopped:
            lines.append(f"Stopped: {self.stopped}")
        for slug in self.forgotten:
            lines.append(f"Forgotten: {slug} (deleted by the owner; recorded in .dream/forget.md)")
        lines += [
            "",
            f"Dream-Run: {self.run_id}",
            f"Dream-Sessions: {len(self.sessions)}",
            f"Dream-Backend: {self.backend}",
            f"Dream-Verifier: {self.verifier_line()}",
            f"Dream-Tokens: {self.tokens_line()}",
        ]
        return "\n".join(lines) + "\n"

    def text(self, verbose: bool = False) -> str:
        out = [self.headline()]
        if self.commit:
            out.append(f"commit {self.commit[:12]} (run {self.run_id})")
        if verbose:
            out += [f"  session: {s}" for s in self.sessions]
            out += [f"  created: {p}" for p in self.pages_created]
            out += [f"  updated: {p}" for p in self.pages_updated]
            out.append(f"  facts: {self.facts} new, {self.facts_superseded} superseded; verifier: {self.verifier_line()}")
        out += [f"  rejected: {p}: {r[0]}" for p, r in sorted(self.rejected.items())]
        out += [f"  conflict: {c}" for c in self.conflicts]
        out += [f"  session failed: {s}: {r}" for s, r in sorted(self.session_failures.items())]
        out += [f"  removed claim: {c}" for c in self.claims_removed]
        out += [f"  flagged claim: {c}" for c in self.claims_flagged]
        if self.stopped:
            out.append(f"  stopped: {self.stopped}")
        if verbose and self.model_calls:
            out.append(f"  backend: {self.backend} ({self.model}); tokens: {self.tokens_line()}")
        out += [f"  problem: {p}" for p in self.problems]
        if self.deferred:
            why = "the budget above" if self.stopped else "--max-sessions"
            out.append(f"  {len(self.deferred)} session(s) left for the next run ({why})")
        return "\n".join(out)
