"""`dream status`: the last runs (from git history) and the sessions waiting for the next run."""

from __future__ import annotations

from pathlib import Path

from pydantic import ConfigDict, Field

from brain import layout
from brain.model import Model, empty_list
from brain.repo import BrainRepo
from brain.tree import DirTree, text_if_exists
from dream.phases.orient import list_session_files, plan_sessions
from dream.state import legacy_files, parse_state


class RunLine(Model):
    model_config = ConfigDict(extra="forbid", frozen=True)
    run_id: str
    commit: str
    date: str
    subject: str


class Status(Model):
    model_config = ConfigDict(extra="forbid", frozen=True)
    runs: list[RunLine] = Field(default_factory=empty_list)
    pending: list[str] = Field(default_factory=empty_list)
    processed: int = 0
    problems: list[str] = Field(default_factory=empty_list)

    def text(self) -> str:
        out = [f"{self.processed} session(s) compiled, {len(self.pending)} pending"]
        out += [f"  pending: {sid}" for sid in self.pending[:20]]
        if len(self.pending) > 20:
            out.append(f"  … and {len(self.pending) - 20} more")
        out.append("last runs:" if self.runs else "no runs yet")
        out += [f"  {r.date[:19]} {r.run_id} {r.commit[:10]} {r.subject}" for r in self.runs]
        out += [f"  problem: {p}" for p in self.problems]
        return "\n".join(out)


def status(root: Path) -> Status:
    """What `dream status` prints; reads the Brain, writes nothing."""
    root = Path(root)
    tree = DirTree(root)
    state, problems = parse_state(text_if_exists(tree, layout.STATE), lambda rel: text_if_exists(tree, rel), legacy_files(root))
    files, file_problems = list_session_files(tree)
    plan = plan_sessions(files, state, None)
    runs = [
        RunLine(run_id=e.run_id, commit=e.sha, date=e.date, subject=e.subject)
        for e in BrainRepo(root).log(limit=200)
        if e.run_id
    ][:10]
    return Status(runs=runs, pending=[p.id for p in plan.pending], processed=len(state.sessions), problems=file_problems + problems)
