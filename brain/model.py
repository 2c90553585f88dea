"""The base of every pydantic model in brain/, dream/ and validators/.

`defer_build`: a model's validator and serializer are built the first time it is used, not when
its module is imported, so a command builds only the models it uses.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


def empty_list() -> list:
    """`Field(default_factory=empty_list)`, for `list`: pydantic reads a default factory's signature
    when it builds a model, and `inspect` parses `list`'s from its text, a hundred times slower."""
    return []


class Model(BaseModel):
    """pydantic's BaseModel, built on first use; a subclass's own `model_config` adds to this one."""

    model_config = ConfigDict(defer_build=True)


class Record(Model):
    """A frozen model that refuses unknown keys: the shape of nearly every type we pass around."""

    model_config = ConfigDict(extra="forbid", frozen=True)
