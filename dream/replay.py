"""`dream replay RUN_ID`: re-run a recorded run from its exchanges, network off, and compare the trees.

Replay clones the Brain at the commit the run started from into a scratch folder, restores the
inputs, and runs the same pipeline with a backend that answers from the exchanges; the tree it
commits must be the recorded commit's tree, byte for byte.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import socket
import tempfile
from collections import defaultdict, deque
from pathlib import Path
from typing import ClassVar, Iterator

from pydantic import ConfigDict, Field

from brain import layout
from brain.errors import BrainError
from brain.model import Model, empty_list
import dream.backends.base as backend_base
from dream.backends.base import BackendError, CallUsage
from dream.backends.llm import Completion, LLMBackend, Prompt
from dream.record import RECORD_DIR, RecordMeta, _git, load_meta
from dream.settings import LLMOptions


class ReplayMissError(BackendError):
    """The replayed run asked something the recording has no answer for: inputs or prompts changed."""

    def __init__(self, task: str) -> None:
        super().__init__(f"{task}: no recorded answer for this request (the prompt or the inputs changed since the recording)")


class RecordedError(BackendError):
    """A failure that happened in the recorded run, raised again at the same point."""

    def __init__(self, message: str, fatal: bool) -> None:
        super().__init__(message)
        self.fatal = fatal


class ReplayBackend(LLMBackend):
    """Answers from a recording; never touches the network. Prompts are built exactly as the recorded backend did."""

    name: ClassVar[str] = "replay"
    needs_network: ClassVar[bool] = False

    def __init__(self, record_dir: Path, meta: RecordMeta) -> None:
        options = LLMOptions.model_validate(meta.settings.get("llm", {}))
        super().__init__(meta.model or "", options.model_copy(update={"retries": 0}))
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
    real_connect, allowed = socket.socket.connect, backend_base.ALLOW_NETWORK

    def refuse(sock, address):
        if sock.family == socket.AF_UNIX:
            return real_connect(sock, address)
        raise ConnectionRefusedError(f"dream replay runs with networking disabled (tried {address!r})")

    backend_base.ALLOW_NETWORK = False
    socket.socket.connect = refuse
    try:
        yield
    finally:
        socket.socket.connect = real_connect
        backend_base.ALLOW_NETWORK = allowed


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
