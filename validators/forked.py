"""Work handed to a forked process while this one goes on: the second core for a large gate.

The child inherits everything parsed so far (copy-on-write), closes every descriptor but its
pipe (the run lock above all: a run killed meanwhile must not leave its lock held), sends back
the pickled result and leaves by `os._exit`. Whatever goes wrong there — an exception, a kill, a
result that does not unpickle — comes back as None, and the caller does the work itself, so a
child can only ever save time.
"""

from __future__ import annotations

import gc
import os
import pickle
import signal
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class Forked(Generic[T]):
    """A result being worked out by a forked process."""

    def __init__(self, pid: int, fd: int) -> None:
        self.pid, self.fd = pid, fd

    def result(self) -> T | None:
        """The child's result, or None when it failed (then do the work here, as usual)."""
        if self.pid == 0:
            return None
        with os.fdopen(self.fd, "rb") as fh:
            data = fh.read()
        _, status = os.waitpid(self.pid, 0)
        self.pid = 0
        if not data or not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
            return None
        try:
            return pickle.loads(data)
        except Exception:  # noqa: BLE001 - a torn result is a failed child: the caller redoes the work
            return None

    def discard(self) -> None:
        """Stop the process (its result is not needed any more)."""
        if self.pid:
            os.kill(self.pid, signal.SIGKILL)
            os.close(self.fd)
            os.waitpid(self.pid, 0)
            self.pid = 0


def run_forked(fn: Callable[[], T | None]) -> Forked[T] | None:
    """`fn()` in a forked process; None where this system cannot fork. `fn` returning None
    counts as a failure (the caller then does the work itself)."""
    if not hasattr(os, "fork"):
        return None
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: work, send the result, exit without any cleanup of the parent's
        code = 1
        try:
            os.close(read_end)
            os.closerange(3, write_end)
            os.closerange(write_end + 1, os.sysconf("SC_OPEN_MAX"))
            gc.disable()  # short-lived: collections would only copy the parent's pages
            out = fn()
            if out is not None:
                with os.fdopen(write_end, "wb") as fh:
                    fh.write(pickle.dumps(out, protocol=pickle.HIGHEST_PROTOCOL))
                code = 0
        finally:
            os._exit(code)
    os.close(write_end)
    return Forked(pid, read_end)
