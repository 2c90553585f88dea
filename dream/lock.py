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


@contextmanager
def run_lock(root: Path) -> Iterator[None]:
    path = Path(root) / LOCK
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "unknown"
            raise LockedError(f"another dream run is in progress (pid {holder})", "wait for it to finish") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield
    finally:
        os.close(fd)
