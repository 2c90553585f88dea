"""brain.forked: a forked child's result comes back, and any failure of the child is None."""

from __future__ import annotations

import os
import time

from brain.forked import Shared, fork_map, run_forked, start_helper


def test_the_child_result_comes_back() -> None:
    data = {"a": [1, 2, 3]}  # inherited from the parent, as a parsed view is
    child = run_forked(lambda: {**data, "b": sum(data["a"])})
    assert child is not None and child.result() == {"a": [1, 2, 3], "b": 6}
    assert child.result() is None  # reaped: asked twice, nothing more


def test_a_large_result_is_written_whole_before_it_is_asked_for() -> None:
    """A child's result goes to a file (Linux): it ends with 4 MB written, not blocked on a pipe
    until the parent reads; the result is the same either way."""
    big = [f"notes/owner/{i:06d}.md" for i in range(200_000)]
    child = run_forked(lambda: big)
    assert child is not None
    if child.file:
        deadline = time.monotonic() + 30
        # WNOWAIT: seen to have ended, left for result() to reap
        while os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None:
            assert time.monotonic() < deadline, "the child waited for its result to be read"
            time.sleep(0.01)
    assert child.result() == big


def test_a_failing_or_empty_child_is_none() -> None:
    def boom():
        raise RuntimeError("the child fails")

    assert run_forked(boom).result() is None
    assert run_forked(lambda: None).result() is None


def test_a_discarded_child_is_stopped() -> None:
    child = run_forked(lambda: time.sleep(60) or 1)
    start = time.monotonic()
    child.discard()
    assert time.monotonic() - start < 10 and child.pid == 0


def test_fork_map_streams_the_results_in_order() -> None:
    stream = fork_map(lambda n: {"n": n, "square": n * n}, range(50))
    assert stream is not None
    got = []
    for _ in range(50):
        while not stream.ready():
            time.sleep(0.001)
        got.append(stream.next())
    assert got == [{"n": n, "square": n * n} for n in range(50)]
    stream.discard()
    assert stream.pid == 0 and stream.next() is None and not stream.ready()


def test_fork_map_stops_at_the_first_item_that_fails() -> None:
    def work(n: int) -> int:
        if n == 3:
            raise RuntimeError("the child fails on this item")
        return n

    stream = fork_map(work, range(10))
    assert [stream.next() for _ in range(3)] == [0, 1, 2]
    assert stream.next() is None  # the caller does item 3 (and raises) itself, and the rest
    assert stream.next() is None and stream.pid == 0


def test_a_discarded_stream_stops_its_child() -> None:
    stream = fork_map(lambda n: time.sleep(60) or n, range(3))
    assert not stream.ready()
    start = time.monotonic()
    stream.discard()
    assert time.monotonic() - start < 10 and stream.pid == 0


def test_shared_gives_every_result_in_order_whoever_works_it_out() -> None:
    parent = os.getpid()

    def slow_in_the_child(n: int) -> tuple[int, int]:
        if os.getpid() != parent:
            time.sleep(0.02)  # the caller, not waiting, takes the last items itself
        return n, n * n

    shared = Shared(slow_in_the_child, list(range(40)))
    assert [shared.get(i) for i in range(40)] == [(n, n * n) for n in range(40)]
    assert shared.stolen == {} and shared.stream.pid == 0  # every stolen result was handed out; the child is gone


def test_shared_does_the_rest_itself_when_the_child_fails() -> None:
    parent = os.getpid()
    seen = []

    def fails_in_the_child(n: int) -> int:
        if os.getpid() != parent and n == 2:
            raise RuntimeError("the child fails here")
        return n + 100

    shared = Shared(fails_in_the_child, list(range(6)), delivered=lambda i, r: seen.append(i))
    assert [shared.get(i) for i in range(6)] == [100, 101, 102, 103, 104, 105]
    assert set(seen) <= {0, 1}  # only what the child sent is "delivered"
    shared.stop()


def test_the_streaming_child_holds_no_descriptor_of_the_parent(tmp_path) -> None:
    # The run lock above all: a run killed while its child works must not leave the lock held.
    with open(tmp_path / "lock", "w") as lock:
        fd = lock.fileno()

        def open_in_child(_: int) -> bool:
            try:
                os.fstat(fd)
            except OSError:
                return False
            return True

        stream = fork_map(open_in_child, [0])
        assert stream.next() is False
        stream.discard()


# -- Helper: one result, then the messages it is sent, in order ------------------------------------

def test_a_helper_gives_its_result_then_does_what_it_is_sent_in_order(tmp_path) -> None:
    log = tmp_path / "log.txt"

    def serve(message) -> None:
        with open(log, "a", encoding="utf-8") as fh:
            fh.write(f"{message}\n")

    helper = start_helper(lambda: {"listed": 3}, serve)
    assert helper is not None and helper.result() == {"listed": 3}
    assert helper.result() is None  # asked twice, nothing more
    for i in range(200):  # more than a pipe holds: send() waits for the child to read
        assert helper.send(("write", i, "x" * 1000))
    assert helper.close() is True  # waited for all of it
    assert log.read_text(encoding="utf-8").splitlines() == [str(("write", i, "x" * 1000)) for i in range(200)]
    assert helper.pid == 0 and helper.send("late") is False and helper.close() is False


def test_a_message_the_helper_fails_on_is_skipped_and_reported(tmp_path) -> None:
    done = tmp_path / "done"

    def serve(message) -> None:
        if message == "boom":
            raise RuntimeError("fails")
        (done / message).touch()

    done.mkdir()
    helper = start_helper(lambda: 1, serve)
    assert helper.send("a") and helper.send("boom") and helper.send("b")
    assert helper.close() is False  # one was not done
    assert sorted(p.name for p in done.iterdir()) == ["a", "b"]


def test_a_helper_that_fails_its_result_is_none_and_one_not_asked_still_ends() -> None:
    def boom():
        raise RuntimeError("the child fails")

    failed = start_helper(boom, lambda message: None)
    assert failed.result() is None
    failed.close()
    unasked = start_helper(lambda: list(range(100_000)), lambda message: None)
    start = time.monotonic()
    assert unasked.close() is True and time.monotonic() - start < 10  # its result is never read
    stuck = start_helper(lambda: time.sleep(60) or 1, lambda message: None)
    stuck.discard()
    assert stuck.pid == 0 and stuck.result() is None


def test_the_helper_holds_no_descriptor_of_the_parent(tmp_path) -> None:
    with open(tmp_path / "lock", "w") as lock:
        fd = lock.fileno()

        def held() -> bool:
            try:
                os.fstat(fd)
            except OSError:
                return False
            return True

        helper = start_helper(held, lambda message: None)
        assert helper.result() is False
        assert helper.close() is True
