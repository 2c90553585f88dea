"""Record and replay: `dream run --record` keeps every model exchange; `dream replay RUN_ID` re-runs it.

A recording lives in `.dream/runs/<id>/record/`: `record.json` (the run's settings and the commit
it started from), `inputs/` (files that differed from that commit: uncommitted sessions, edits),
`exchanges.jsonl` (each request's prompt and the server's final answer or error) and the system
prompts it used. Replay clones the Brain at that commit into a scratch folder, restores the
inputs, and runs the same pipeline with a backend that answers from the exchanges, with the
network disabled; the tree it commits must be the recorded commit's tree, byte for byte.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import shutil
import socket
import subprocess
import tempfile
from collections import defaultdict, deque
from pathlib import Path
from typing import Any, ClassVar, Iterator

from pydantic import ConfigDict, Field

from brain import layout
from brain.errors import BrainError
from brain.model import Model, empty_list
from dream.backends.base import BackendError
from dream.backends.llm import Completion, LLMBackend, Prompt
from dream.calls import CallUsage

RECORD_DIR = "record"
FORMAT = 1
#: Never snapshotted: machine state of runs (gitignored by `brain init`).
_SKIP = (layout.RUNS + "/", layout.CACHE + "/", layout.LOCK, ".git/")


class RecordMeta(Model):
    model_config = ConfigDict(extra="forbid")
    format: int = FORMAT
    run_id: str
    base: str | None  # HEAD when the run started
    settings: dict[str, Any]  # DreamSettings without root
    backend: str
    model: str | None
    deleted: list[str] = Field(default_factory=empty_list)  # tracked at `base`, missing from the working tree


class ReplayMissError(BackendError):
    """The replayed run asked something the recording has no answer for: inputs or prompts changed."""

    def __init__(self, task: str) -> None:
        super().__init__(f"{task}: no recorded answer for this request (the prompt or the inputs changed since the recording)")


class RecordedError(BackendError):
    """A failure that happened in the recorded run, raised again at the same point."""

    def __init__(self, message: str, fatal: bool) -> None:
        super().__init__(message)
        self.fatal = fatal


class Recorder:
    """Appends each exchange's final outcome to `record/exchanges.jsonl` (retries are in calls.jsonl)."""

    def __init__(self, run_dir: Path) -> None:
        self.dir = Path(run_dir) / RECORD_DIR
        self.dir.mkdir(parents=True, exist_ok=True)
        self.path = self.dir / "exchanges.jsonl"
        self.path.write_text("", encoding="utf-8")
        self.seq = 0
        self._systems: set[str] = set()

    def add(self, prompt: Prompt, key: str, unit: str, completion: Completion | None = None, error: BackendError | None = None) -> None:
        system = hashlib.sha256(prompt.system.encode("utf-8")).hexdigest()[:16]
        if system not in self._systems:
            (self.dir / f"system-{system}.md").write_text(prompt.system, encoding="utf-8")
            self._systems.add(system)
        self.seq += 1
        entry: dict[str, Any] = {"seq": self.seq, "task": prompt.task, "unit": unit, "key": key, "system": system, "user": prompt.user}
        if prompt.repair is not None:
            entry["repair"] = {"previous": prompt.repair[0].raw, "error": prompt.repair[1]}
        if completion is not None:
            entry["completion"] = {
                "raw": completion.raw, "data": completion.data, "usage": completion.usage.model_dump(),
                "stop_reason": completion.stop_reason, "tool_id": completion.tool_id,
            }
        if error is not None:
            entry["error"] = {"type": type(error).__name__, "message": str(error), "fatal": error.fatal}
        with self.path.open("a", encoding="utf-8") as f:
            f.write(json.dumps(entry, ensure_ascii=False) + "\n")


def snapshot_inputs(root: Path, run_dir: Path, settings: Any, run_id: str, backend: Any, base: str | None) -> None:
    """Save what the run reads besides git: files of the working tree that differ from `base`."""
    out = Path(run_dir) / RECORD_DIR
    inputs = out / "inputs"
    if inputs.exists():
        shutil.rmtree(inputs)
    inputs.mkdir(parents=True)
    changed = _git(root, "ls-files", "-z", "--modified", "--others", "--exclude-standard").split("\0")
    if base:
        changed += _git(root, "diff", "--name-only", "-z", base).split("\0")
    deleted = []
    for rel in sorted({p for p in changed if p and not p.startswith(_SKIP)}):
        src = Path(root) / rel
        if src.is_symlink() or not src.exists():
            if not src.exists():
                deleted.append(rel)
            continue
        dst = inputs / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dst)
    meta = RecordMeta(
        run_id=run_id, base=base, settings=settings.model_dump(mode="json", exclude={"root", "record"}),
        backend=backend.name, model=backend.model, deleted=deleted,
    )
    (out / "record.json").write_text(meta.model_dump_json(indent=2) + "\n", encoding="utf-8")


def _git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True)
    if done.returncode != 0:
        raise BrainError(f"git {' '.join(args[:2])} failed: {done.stderr.strip()}")
    return done.stdout


class ReplayBackend(LLMBackend):
    """Answers from a recording; never touches the network. Prompts are built exactly as the recorded backend did."""

    name: ClassVar[str] = "replay"
    needs_network: ClassVar[bool] = False

    def __init__(self, record_dir: Path, meta: RecordMeta) -> None:
        from dream.calls import price_for

        options = meta.settings.get("llm", {})
        super().__init__(meta.model or "", retries=0, max_output_tokens=options.get("max_output_tokens", 4096),
                         price=price_for(meta.model or "", options.get("price_in"), options.get("price_out")))
        self.name = meta.backend  # the trailers and log name the recorded backend
        self._answers: dict[str, deque[dict]] = defaultdict(deque)
        for line in (Path(record_dir) / "exchanges.jsonl").read_text(encoding="utf-8").splitlines():
            if line.strip():
                entry = json.loads(line)
                self._answers[entry["key"]].append(entry)
        self.misses = 0
        self._original = _backend_class(meta.backend)

    def answer_line(self, task: str) -> str:
        return self._original.answer_line(self, task)

    def _complete(self, prompt: Prompt) -> Completion:
        queue = self._answers.get(prompt.key(self.model or ""))
        if not queue:
            self.misses += 1
            raise ReplayMissError(prompt.task)
        entry = queue.popleft()
        if "error" in entry:
            raise RecordedError(entry["error"]["message"], entry["error"]["fatal"])
        c = entry["completion"]
        return Completion(raw=c["raw"], data=c["data"], usage=CallUsage(**c["usage"]), stop_reason=c["stop_reason"], tool_id=c["tool_id"])


def _backend_class(name: str) -> type[LLMBackend]:
    if name == "anthropic":
        from dream.backends.anthropic import AnthropicBackend

        return AnthropicBackend
    if name == "openai":
        from dream.backends.openai_compat import OpenAICompatBackend

        return OpenAICompatBackend
    return LLMBackend


@contextlib.contextmanager
def network_disabled() -> Iterator[None]:
    """No model request and no socket to anything but a local (AF_UNIX) address."""
    from dream import backends

    real_connect, allowed = socket.socket.connect, backends.ALLOW_NETWORK

    def refuse(sock, address):
        if sock.family == socket.AF_UNIX:
            return real_connect(sock, address)
        raise ConnectionRefusedError(f"dream replay runs with networking disabled (tried {address!r})")

    backends.ALLOW_NETWORK = False
    socket.socket.connect = refuse
    try:
        yield
    finally:
        socket.socket.connect = real_connect
        backends.ALLOW_NETWORK = allowed


class ReplayResult(Model):
    model_config = ConfigDict(extra="forbid")
    run_id: str
    identical: bool
    recorded_commit: str | None
    replayed_commit: str | None
    recorded_tree: str | None
    replayed_tree: str | None
    differences: list[str] = Field(default_factory=empty_list)
    misses: int = 0
    folder: str | None = None  # the scratch Brain, when kept

    def text(self) -> str:
        if self.identical:
            return f"dream replay {self.run_id}: identical tree {(self.replayed_tree or '')[:12]} (no network used)"
        lines = [f"dream replay {self.run_id}: the replayed tree differs from the recorded one"]
        lines += [f"  differs: {p}" for p in self.differences]
        if self.misses:
            lines.append(f"  {self.misses} request(s) had no recorded answer (prompts or inputs changed)")
        if self.folder:
            lines.append(f"  replayed Brain kept at {self.folder}")
        return "\n".join(lines)


def load_meta(root: Path, run_id: str) -> RecordMeta:
    path = Path(root) / layout.RUNS / run_id / RECORD_DIR / "record.json"
    if not path.is_file():
        raise BrainError(f"run {run_id} has no recording ({path} is missing)", "record a run with `dream run --record`")
    return RecordMeta.model_validate_json(path.read_text(encoding="utf-8"))


def replay(root: Path, run_id: str, into: Path | None = None) -> ReplayResult:
    """Re-run a recorded run from its exchanges in a scratch clone; compare the trees it commits."""
    from dream.backends import get_backend
    from dream.run import run
    from dream.settings import DreamSettings

    root = Path(root).resolve()
    meta = load_meta(root, run_id)
    record_dir = root / layout.RUNS / run_id / RECORD_DIR
    report_path = root / layout.RUNS / run_id / "report.json"
    recorded = json.loads(report_path.read_text(encoding="utf-8")).get("commit") if report_path.is_file() else None
    scratch = Path(into) if into else Path(tempfile.mkdtemp(prefix=f"dream-replay-{run_id}-"))
    result: ReplayResult | None = None
    try:
        _checkout(root, scratch, meta, record_dir)
        settings = DreamSettings.model_validate({**meta.settings, "root": scratch, "run_id": run_id})
        backend = get_backend("offline") if meta.backend == "offline" else ReplayBackend(record_dir, meta)
        with network_disabled():
            report = run(settings, backend)
        recorded_tree = _tree(root, recorded)
        replayed_tree = _tree(scratch, report.commit)
        identical = recorded_tree == replayed_tree and (recorded_tree is not None or report.commit is None)
        differences = []
        if not identical and recorded and report.commit:
            differences = _git(scratch, "diff", "--name-only", recorded, report.commit).split()
        result = ReplayResult(
            run_id=run_id, identical=identical, recorded_commit=recorded, replayed_commit=report.commit,
            recorded_tree=recorded_tree, replayed_tree=replayed_tree, differences=differences,
            misses=getattr(backend, "misses", 0), folder=str(scratch) if (into or not identical) else None,
        )
        return result
    finally:
        # A differing replay's folder is kept for inspection (its path is in the result).
        if not into and (result is None or result.identical):
            shutil.rmtree(scratch, ignore_errors=True)


def _checkout(root: Path, scratch: Path, meta: RecordMeta, record_dir: Path) -> None:
    if scratch.exists() and any(scratch.iterdir()):
        raise BrainError(f"{scratch} is not empty", "choose a new folder for the replay")
    if meta.base:
        _git(root.parent, "clone", "-q", "--no-checkout", str(root), str(scratch))
        _git(scratch, "checkout", "-q", "-B", "dream-replay", meta.base)
    else:
        scratch.mkdir(parents=True, exist_ok=True)
        _git(scratch, "init", "-q")
    inputs = record_dir / "inputs"
    for src in sorted(inputs.rglob("*")) if inputs.is_dir() else []:
        if src.is_file():
            dst = scratch / src.relative_to(inputs)
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, dst)
    for rel in meta.deleted:
        (scratch / rel).unlink(missing_ok=True)


def _tree(root: Path, commit: str | None) -> str | None:
    return _git(root, "rev-parse", f"{commit}^{{tree}}").strip() if commit else None
