"""The base of every pydantic model in brain/, dream/ and validators/.

`defer_build`: a model's validator and serializer are built the first time it is used, not when
its module is imported. A command imports ~70 models and uses some of them: building all of them
at import took ~70 ms of `dream run`'s ~200 ms of imports; the ones a command uses are still built,
so it saves ~10-20 ms a command. What a model accepts and produces is the same either way.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


def empty_list() -> list:
    """`Field(default_factory=empty_list)`, for `list`: pydantic reads a default factory's signature
    when it builds a model; a Python function's takes microseconds, while `list`'s is parsed from
    its text signature by `inspect` (0.1 ms a field: 7.9 ms against 0.7 ms for the 43 such fields
    a nightly run on the 10k Brain builds)."""
    return []


class Model(BaseModel):
    """pydantic's BaseModel, built on first use; a subclass's own `model_config` adds to this one."""

    model_config = ConfigDict(defer_build=True)
