"""One run at a time: an exclusive `flock` on `.dream/lock` (released by the kernel if a run dies)."""

from __future__ import annotations

import fcntl
import os
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from brain.errors import BrainError
from brain.layout import LOCK


class LockedError(BrainError):
    """Another dream run holds the lock."""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@contextmanager
def run_lock(root: Path) -> Iterator[str | None]:
    """Hold `.dream/lock` for the run; yields a note when a killed run had left its pid behind.

    flock is released by the kernel when its holder dies, so a stale lock never blocks a run; the
    pid a killed run wrote is detected, reported and overwritten.
    """
    path = Path(root) / LOCK
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "unknown"
            raise LockedError(f"another dream run is in progress (pid {holder})", "wait for it to finish") from None
        previous = os.pread(fd, 64, 0).decode(errors="replace").strip()
        stale = None
        if previous.isdigit() and int(previous) != os.getpid() and not _alive(int(previous)):
            stale = f"{LOCK}: cleared the lock of run pid {previous}, which ended without releasing it (killed?)"
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        try:
            yield stale
        finally:
            os.ftruncate(fd, 0)  # a clean exit leaves no pid behind
    finally:
        os.close(fd)
