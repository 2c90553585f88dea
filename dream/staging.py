"""The staged tree: every file a run writes lands under `.dream/runs/<run-id>/staged/` first.

Writes outside the paths Dream may write (invariant 1) or with unsafe names are refused here,
so no backend output can reach `.git/`, `guide.md`, raw sessions or anything else.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from brain.errors import BrainError
from brain.layout import dream_may_write, unsafe_reason
from brain.tree import MemTree, OverlayTree, Tree, text_if_exists


class StagingError(BrainError):
    """A write the layout does not allow."""


#: Fewer files than this are written in process: starting the writer would cost more.
BACKGROUND_MIN_FILES = 200


class StagedTree:
    """Files written by this run, over the live tree they will replace."""

    def __init__(self, root: Path, base: Tree) -> None:
        self.root = Path(root)
        if self.root.exists():
            shutil.rmtree(self.root)
        self.root.mkdir(parents=True)
        self.base = base
        self._written: dict[str, str] = {}
        self._dirs: set[Path] = set()
        self._unflushed: set[str] = set()  # written or dropped since the last flush()
        self._writer: subprocess.Popen | None = None  # a background flush still writing
        self.derived_from: dict[str, str | None] = {}  # live text each staged file was computed from

    def write(self, rel: str, text: str) -> None:
        if not dream_may_write(rel):
            reason = unsafe_reason(rel) or "outside the paths Dream may write"
            raise StagingError(f"refused to stage {rel!r}: {reason}")
        # Kept in memory and written to the folder once, by flush(): a note gains sources many
        # times in one run, and the folder is only for people inspecting a run.
        self._unflushed.add(rel)
        if rel not in self.derived_from:
            self.derived_from[rel] = text_if_exists(self.base, rel)
        self._written[rel] = text

    def drop(self, rel: str) -> None:
        """Remove a staged file (a rejected page): the live version, if any, stays."""
        self._written.pop(rel, None)
        self._unflushed.add(rel)

    def flush(self, background: bool = False) -> None:
        """Bring the staged folder in line with what is staged (private to the run: plain writes).

        Nothing in a run reads the folder back (it is for people inspecting the run), so with
        `background` a helper process writes it while the run goes on; the next flush() or
        wait() waits for it. A full compile stages one file per note, summary and page.
        """
        self.wait()
        jobs = [(rel, self._written.get(rel)) for rel in sorted(self._unflushed)]
        self._unflushed.clear()
        if background and len(jobs) >= BACKGROUND_MIN_FILES:
            self._writer = _start_writer(self.root, jobs)
            return
        for rel, text in jobs:
            path = self.root / rel
            if text is None:
                path.unlink(missing_ok=True)
                continue
            if path.parent not in self._dirs:
                path.parent.mkdir(parents=True, exist_ok=True)
                self._dirs.add(path.parent)
            path.write_bytes(text.encode("utf-8"))

    def wait(self) -> None:
        """Wait for a background flush; raises StagingError when its writer failed."""
        writer, self._writer = self._writer, None
        if writer is None:
            return
        with writer.stderr:
            err = writer.stderr.read()
        if writer.wait() != 0:
            why = err.decode("utf-8", errors="replace").strip().splitlines()
            raise StagingError(f"writing the staged folder {self.root} failed: {why[-1] if why else f'exit {writer.returncode}'}")

    def read(self, rel: str) -> str | None:
        """The staged text, else the live text, else None."""
        if rel in self._written:
            return self._written[rel]
        return text_if_exists(self.base, rel)

    @property
    def written(self) -> dict[str, str]:
        """Staged path → text, sorted by path (a fresh copy: callers may drop files while iterating)."""
        return dict(sorted(self._written.items()))

    def has(self, rel: str) -> bool:
        return rel in self._written

    def overlay(self) -> OverlayTree:
        """The staged files over the live tree; staged files are read from memory (they mirror
        the staged folder: every write and drop goes through this class)."""
        return OverlayTree(self.base, MemTree(self._written, self.root))


# The background writer: a bare interpreter (no site, no imports of ours) that reads every file
# first, so the run never waits on the pipe, then writes them. Records: b"<path bytes> <data
# bytes>\n" + path + data, with -1 data bytes for a file to remove.
_WRITER = r"""
import os, sys
root, data, pos, made = os.fsencode(sys.argv[1]), sys.stdin.buffer.read(), 0, set()
while pos < len(data):
    nl = data.index(b"\n", pos)
    plen, dlen = map(int, data[pos:nl].split())
    path = os.path.join(root, data[nl + 1 : nl + 1 + plen])
    pos = nl + 1 + plen
    if dlen < 0:
        if os.path.lexists(path):
            os.unlink(path)
        continue
    folder = os.path.dirname(path)
    if folder not in made:
        os.makedirs(folder, exist_ok=True)
        made.add(folder)
    with open(path, "wb") as fh:
        fh.write(data[pos : pos + dlen])
    pos += dlen
"""


def _start_writer(root: Path, jobs: list[tuple[str, str | None]]) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-I", "-S", "-c", _WRITER, str(root)], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    chunks = []
    for rel, text in jobs:
        path = os.fsencode(rel)
        data = text.encode("utf-8") if text is not None else b""
        chunks += [b"%d %d\n" % (len(path), len(data) if text is not None else -1), path, data]
    try:
        proc.stdin.write(b"".join(chunks))
        proc.stdin.close()
    except BrokenPipeError:
        pass  # the writer died: wait() reports why
    return proc
