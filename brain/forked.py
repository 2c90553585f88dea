"""Work handed to a forked process while this one goes on: the second core for a large run.

The child inherits everything parsed so far (copy-on-write), closes every descriptor but the one
its result goes to (the run lock above all: a run killed meanwhile must not leave its lock held),
writes the pickled result there and leaves by `os._exit`. On Linux that is an anonymous file
(memfd), so a large result (the listing of a large Brain: 4 MB) is written whole while the parent
is busy, not passed through a pipe 64 KB at a time once the parent asks for it; elsewhere a pipe.
Whatever goes wrong there — an exception, a kill, a result that does not unpickle — comes back as
None, and the caller does the work itself, so a child can only ever save time.

`run_forked` hands over one job and gives back its one result (the gate's verdicts);
`fork_map` works through a list in order and streams a result per item, so the caller uses the
first ones while the child works on the next (a run's sessions).
"""

from __future__ import annotations

import gc
import os
import pickle
import select
import signal
import struct
from collections.abc import Callable, Iterable, Iterator
from typing import Generic, TypeVar

T = TypeVar("T")


class Forked(Generic[T]):
    """A result being worked out by a forked process."""

    def __init__(self, pid: int, fd: int, file: bool = False) -> None:
        self.pid, self.fd, self.file = pid, fd, file  # file: `fd` is the child's result file, not a pipe

    def result(self) -> T | None:
        """The child's result, or None when it failed (then do the work here, as usual)."""
        if self.pid == 0:
            return None
        if self.file:
            _, status = os.waitpid(self.pid, 0)
            try:
                data = _read_all(self.fd)
            finally:
                os.close(self.fd)
        else:
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
    file = memory_file("dream-forked")
    read_end, write_end = (file, file) if file is not None else os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: work, send the result, exit without any cleanup of the parent's
        code = 1
        try:
            if file is None:
                os.close(read_end)
            os.closerange(3, write_end)
            os.closerange(write_end + 1, os.sysconf("SC_OPEN_MAX"))
            gc.disable()  # short-lived: collections would only copy the parent's pages
            out = fn()
            if out is not None:
                _write_all(write_end, pickle.dumps(out, protocol=pickle.HIGHEST_PROTOCOL))
                code = 0
        finally:
            os._exit(code)
    if file is None:
        os.close(write_end)
    return Forked(pid, read_end, file=file is not None)


class Helper(Generic[T]):
    """A forked process that works out one result, as run_forked's child does (`result()`), then
    stays and does what it is sent, in order (`send(message)`: `serve(message)` there), until
    `close()`, which waits for it to finish. For work late in a large run that a small process
    forked early can do: forking the run's process then (100 MB on the 10k Brain) costs more than
    the work (its page tables, the copy-on-write faults of both, reaping it).

    Messages go pickled through a pipe; the child inherited `serve` itself. A message `serve` fails
    on is skipped (its work is only ever a cache's); close() says whether every message was done."""

    def __init__(self, pid: int, ready: int, commands: int, file: int | None) -> None:
        self.pid, self._ready, self._commands, self._file = pid, ready, commands, file
        self._got = False

    def result(self) -> T | None:
        """The child's first result, or None when it failed (then do the work here, as usual)."""
        if self._got or self.pid == 0:
            return None
        self._got = True
        try:
            head = _read_exactly(self._ready, _FRAME.size)
            if head is None:
                return None
            size = _FRAME.unpack(head)[0]
            data = _read_all(self._file) if self._file is not None else _read_exactly(self._ready, size)
            if not data or len(data) != size:
                return None
            return pickle.loads(data)
        except Exception:  # noqa: BLE001 - a torn result is a failed child: the caller redoes the work
            return None
        finally:
            if self._file is not None:
                os.close(self._file)
                self._file = None

    def send(self, message: object) -> bool:
        """Have the child `serve(message)` (after what was sent before); False when it is gone."""
        if self.pid == 0 or self._commands < 0:
            return False
        data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
        try:
            _write_all(self._commands, _FRAME.pack(len(data)) + data)
        except OSError:  # the child has gone (EPIPE)
            return False
        return True

    def close(self) -> bool:
        """Wait for the child to do what it was sent and leave; True when it did all of it."""
        if self.pid == 0:
            return False
        pid, self.pid = self.pid, 0
        self._close_fds()
        _, status = os.waitpid(pid, 0)
        return os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0

    def discard(self) -> None:
        """Stop the child (nothing it would do is needed any more)."""
        if self.pid:
            pid, self.pid = self.pid, 0
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self._close_fds()
            os.waitpid(pid, 0)

    def _close_fds(self) -> None:
        for fd in (self._commands, self._ready, self._file):
            if fd is not None and fd >= 0:
                os.close(fd)
        self._commands = self._ready = -1
        self._file = None


def start_helper(first: Callable[[], T | None], serve: Callable[[object], None]) -> Helper[T] | None:
    """A Helper working out `first()`, then serving messages; None where this system cannot fork.
    `first` returning None counts as a failure (result() is None); the child still serves."""
    if not hasattr(os, "fork"):
        return None
    file = memory_file("dream-helper")
    ready_r, ready_w = os.pipe()
    commands_r, commands_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: work, say so, serve until the parent closes the pipe, exit without cleanup
        code = 1
        try:
            keep = {ready_w, commands_r} | ({file} if file is not None else set())
            for fd in range(3, max(keep)):
                if fd not in keep:
                    try:
                        os.close(fd)
                    except OSError:
                        pass
            os.closerange(max(keep) + 1, os.sysconf("SC_OPEN_MAX"))
            gc.disable()  # collections would only copy the parent's pages
            out = first()
            data = pickle.dumps(out, protocol=pickle.HIGHEST_PROTOCOL) if out is not None else b""
            try:
                if file is not None:
                    _write_all(file, data)
                    _write_all(ready_w, _FRAME.pack(len(data)))
                else:
                    _write_all(ready_w, _FRAME.pack(len(data)) + data)
            except OSError:  # the parent closed its end: it does not want the result, only the messages
                pass
            os.close(ready_w)
            code = 0
            while (head := _read_exactly(commands_r, _FRAME.size)) is not None:
                body = _read_exactly(commands_r, _FRAME.unpack(head)[0])
                if body is None:
                    code = 1  # a torn message: the parent died while sending
                    break
                try:
                    serve(pickle.loads(body))
                except Exception:  # noqa: BLE001 - skipped; close() reports it
                    code = 1
        finally:
            os._exit(code)
    os.close(ready_w)
    os.close(commands_r)
    return Helper(pid, ready_r, commands_w, file)


def _write_all(fd: int, data: bytes) -> None:
    """All of `data` to `fd` (a pipe takes it in parts)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _read_exactly(fd: int, n: int) -> bytes | None:
    """`n` bytes from the pipe `fd`, or None at its end before them."""
    parts, left = [], n
    while left:
        chunk = os.read(fd, left)
        if not chunk:
            return None
        parts.append(chunk)
        left -= len(chunk)
    return b"".join(parts)


def memory_file(name: str) -> int | None:
    """The descriptor of a new anonymous file in memory (Linux's memfd_create; not inherited by
    programs this process runs), None where there is none: a child's result, git's output."""
    make = getattr(os, "memfd_create", None)
    if make is None:
        return None
    try:
        return make(name, getattr(os, "MFD_CLOEXEC", 0))
    except OSError:
        return None


def _read_all(fd: int) -> bytes:
    """The whole of the file at `fd`, from its start."""
    size = os.fstat(fd).st_size
    parts, at = [], 0
    while at < size:
        chunk = os.pread(fd, size - at, at)
        if not chunk:
            break
        parts.append(chunk)
        at += len(chunk)
    return b"".join(parts)


_FRAME = struct.Struct("<Q")  # the byte length of the pickled result that follows


class ForkedStream(Generic[T]):
    """Results of `fn(item)` for each item, in order, worked out ahead by a forked process."""

    def __init__(self, pid: int, fd: int) -> None:
        self.pid, self.fd = pid, fd
        self._buf = bytearray()

    def ready(self) -> bool:
        """Whether `next()` would not wait for the child (a result, or its end, has arrived)."""
        if self.pid == 0:
            return False
        if len(self._buf) >= _FRAME.size and len(self._buf) >= _FRAME.size + _FRAME.unpack_from(self._buf)[0]:
            return True
        return bool(select.select([self.fd], [], [], 0)[0])

    def next(self) -> T | None:
        """The next item's result, or None from the first item the child did not deliver on (it
        failed, was killed or sent a torn frame): the caller does that item and the rest itself."""
        if self.pid == 0:
            return None
        head = self._read(_FRAME.size)
        data = self._read(_FRAME.unpack(head)[0]) if head is not None else None
        try:
            if data:
                return pickle.loads(data)
        except Exception:  # noqa: BLE001 - a torn result is a failed child: the caller redoes the work
            pass
        self.discard()
        return None

    def _read(self, n: int) -> bytes | None:
        while len(self._buf) < n:
            chunk = os.read(self.fd, max(1 << 16, n - len(self._buf)))
            if not chunk:
                return None
            self._buf += chunk
        out = bytes(self._buf[:n])
        del self._buf[:n]
        return out

    def discard(self) -> None:
        """Stop the process (the results not read yet are not needed)."""
        if self.pid:
            pid, self.pid = self.pid, 0
            os.close(self.fd)  # a child blocked on a full pipe gets EPIPE and leaves
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            os.waitpid(pid, 0)


def fork_map(fn: Callable[[object], T], items: Iterable[object]) -> ForkedStream[T] | None:
    """`fn(item)` for each item in a forked process, results streamed back in order; None where
    this system cannot fork. The child stops at the first item `fn` raises on (or returns None
    for): `next()` is None from there, so the caller does it (and raises) itself."""
    if not hasattr(os, "fork"):
        return None
    items = list(items)
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(read_end)
            os.closerange(3, write_end)
            os.closerange(write_end + 1, os.sysconf("SC_OPEN_MAX"))
            gc.disable()
            with os.fdopen(write_end, "wb", buffering=1 << 16) as fh:
                for item in items:
                    out = fn(item)
                    if out is None:
                        break
                    data = pickle.dumps(out, protocol=pickle.HIGHEST_PROTOCOL)
                    fh.write(_FRAME.pack(len(data)))
                    fh.write(data)
                    fh.flush()
        finally:
            os._exit(0)
    os.close(write_end)
    return ForkedStream(pid, read_end)


class Shared(Generic[T]):
    """`fn(item)` for each item on two cores, asked for in order (`get(0)`, `get(1)`, …).

    A forked child works through the items from the front and streams its results back; whenever
    `get` would wait for it, the caller works out the last item nobody has taken yet itself (work
    stealing from the tail), so neither core idles while the other works. Where the child fails
    (or cannot be forked), the caller works out what is left. `fn` must be a pure function of its
    item and of what the child inherited: then which process did an item never shows.
    `delivered(i, result)` runs in the caller for each result the child sent (to warm a cache
    of the caller's with what the child computed apart).
    """

    def __init__(self, fn: Callable[[object], T], items: list, delivered: Callable[[int, T], None] | None = None) -> None:
        self.fn, self.items, self.delivered = fn, items, delivered
        self.stream = fork_map(fn, items)
        self.tail = len(items) - 1  # the last position nobody has taken yet, from the end
        self.stolen: dict[int, T] = {}

    def get(self, i: int) -> T:
        if i in self.stolen:  # from here on every item is the caller's: the child is not needed
            self.stop()
            return self.stolen.pop(i)
        stream = self.stream
        while stream is not None and stream.pid and self.tail > i and not stream.ready():
            self.stolen[self.tail] = self.fn(self.items[self.tail])
            self.tail -= 1
        got = stream.next() if stream is not None else None
        if got is None:
            return self.fn(self.items[i])
        if self.delivered is not None:
            self.delivered(i, got)
        return got

    def stop(self) -> None:
        """Stop the child (the results not asked for are not needed)."""
        if self.stream is not None:
            self.stream.discard()


def in_chunks(fn: Callable[[object], T], items: list, per_chunk: int) -> Iterator[T]:
    """`fn(item)` for each item, in order, worked out on two cores (`Shared`) `per_chunk` items per
    result the child sends (one frame per item would cost more than many small items are worth)."""
    chunks = [items[i : i + per_chunk] for i in range(0, len(items), per_chunk)]
    shared = Shared(lambda chunk: [fn(item) for item in chunk], chunks)
    try:
        for k in range(len(chunks)):
            yield from shared.get(k)
    finally:
        shared.stop()
