"""validators.forked: a forked child's result comes back, and any failure of the child is None."""

from __future__ import annotations

import time

from validators.forked import run_forked


def test_the_child_result_comes_back() -> None:
    data = {"a": [1, 2, 3]}  # inherited from the parent, as a parsed view is
    child = run_forked(lambda: {**data, "b": sum(data["a"])})
    assert child is not None and child.result() == {"a": [1, 2, 3], "b": 6}
    assert child.result() is None  # reaped: asked twice, nothing more


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
