"""`dream status`: the last runs (from git history) and the sessions waiting for the next run."""

from __future__ import annotations

from pathlib import Path

from pydantic import ConfigDict, Field

from brain import layout
from brain.model import Model, empty_list
from brain.repo import BrainRepo
from brain.tree import DirTree, text_if_exists
from dream.phases.orient import list_session_files, plan_sessions
from dream.state import parse_state, shard_problem


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


def status(root: Path, limit: int = 10) -> Status:
    from brain.repo import worktree_keys
    from dream.compile import DocCache, cache_version

    root = Path(root)
    # As `dream run` does: sessions git vouches for are hashed from the run's cache, not read again
    # (the cache is only read here: status writes nothing).
    tree = DirTree(root, keys=worktree_keys(root))
    cache = DocCache(root / layout.CACHE / "cards", version=cache_version())  # no memo: status writes nothing
    state, problem = parse_state(text_if_exists(tree, layout.STATE), lambda rel: text_if_exists(tree, rel))
    files, problems = list_session_files(tree, lambda rels: cache.session_hashes(rels, tree))
    plan = plan_sessions(files, state, None)
    runs = [
        RunLine(run_id=e.run_id, commit=e.sha, date=e.date, subject=e.subject)
        for e in BrainRepo(Path(root)).log(limit=200)
        if e.run_id
    ][:limit]
    return Status(runs=runs, pending=[p.id for p in plan.pending], processed=len(state.sessions),
                  problems=problems + ([problem] if problem else []) + ([p] if (p := shard_problem(state.sessions)) else []))
