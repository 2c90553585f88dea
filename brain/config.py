"""BrainConfig: the optional `brain.toml` at the root of a Brain, read with tomllib.

Every key has a default, so a Brain without `brain.toml` is valid. Unknown keys and tables are
kept (`model_extra`), so settings other tools add survive a load. Errors name the file and line.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from pydantic import ConfigDict, Field, ValidationError

from brain import layout
from brain.errors import BrainError
from brain.model import Model

#: Default token budget of `brain index` (tokens estimated as ceil(chars / 3.5)); 0 = no limit.
DEFAULT_INDEX_BUDGET = 8000


class ConfigError(BrainError):
    """`brain.toml` cannot be read: invalid TOML or a value of the wrong kind."""


class DreamTable(Model):
    """`[dream]`: which model backend compiles the Brain. None = Dream's own default."""

    model_config = ConfigDict(extra="allow", frozen=True)
    backend: str | None = None
    model: str | None = None


class IndexTable(Model):
    """`[index]`: how much of knowledge/index.md `brain index` prints."""

    model_config = ConfigDict(extra="allow", frozen=True)
    budget: int = Field(default=DEFAULT_INDEX_BUDGET, ge=0)


class BrainConfig(Model):
    """Settings of one Brain. `path` is the file it was read from (None for defaults)."""

    model_config = ConfigDict(extra="allow", frozen=True)
    owner: str | None = None
    timezone: str | None = None
    dream: DreamTable = Field(default_factory=DreamTable)
    index: IndexTable = Field(default_factory=IndexTable)

    @classmethod
    def load(cls, root: Path) -> "BrainConfig":
        """`<root>/brain.toml`, or the defaults when the file does not exist."""
        path = Path(root) / layout.CONFIG
        if not path.is_file():
            return cls()
        try:
            text = path.read_bytes().decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ConfigError(f"{path}: invalid UTF-8 at byte {exc.start}", "save brain.toml as UTF-8") from None
        return cls.from_toml(text, str(path))

    @classmethod
    def from_toml(cls, text: str, path: str = layout.CONFIG) -> "BrainConfig":
        """Parse TOML text; ConfigError names `path`, the line and the key on any problem."""
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            # Python 3.11's TOMLDecodeError has no lineno; the message ends "(at line L, column C)".
            msg = str(exc)
            m = re.search(r"\(at line (\d+), column \d+\)$", msg)
            line = m.group(1) if m else "1"
            reason = msg[: m.start()].strip() if m else msg
            raise ConfigError(f"{path}:{line}: invalid TOML: {reason}", "fix the syntax; see the comments `brain init` writes") from None
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            err = exc.errors()[0]
            loc = [str(p) for p in err["loc"]]
            line = _key_line(text, loc)
            raise ConfigError(f"{path}:{line}: {'.'.join(loc)}: {err['msg']}", "see docs/cli.md for brain.toml keys") from None


def _key_line(text: str, loc: list[str]) -> int:
    """Best-effort line of `table.key` in TOML text (1 when not found)."""
    table, key = (loc[0], loc[-1]) if len(loc) > 1 else ("", loc[0] if loc else "")
    current = ""
    for n, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        header = re.match(r"^\[\s*([^\]]+?)\s*\]", line)
        if header:
            current = header.group(1)
            if current == table and not key:
                return n
            continue
        if current == table and re.match(rf"^\"?{re.escape(key)}\"?\s*=", line):
            return n
    return 1
