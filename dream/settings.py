"""DreamSettings: the one composition root — brain folder, backend, clock, run id, limits."""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import tomllib
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from brain.errors import BrainError
from brain.layout import CONFIG


class DreamSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    root: Path
    backend: str = "offline"
    now: dt.datetime
    run_id: str | None = None
    max_sessions: int | None = None
    dry_run: bool = False
    owner: str | None = None

    def make_run_id(self, inputs: list[str]) -> str:
        """`YYYYMMDDTHHMMSSZ-<6 hex of the inputs>`: unique per run, reproducible for the same clock and inputs."""
        if self.run_id:
            return self.run_id
        digest = hashlib.sha256("\n".join(sorted(inputs)).encode()).hexdigest()[:6]
        return self.now.astimezone(dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ") + f"-{digest}"


def read_brain_toml(root: Path) -> dict:
    path = Path(root) / CONFIG
    if not path.is_file():
        return {}
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise BrainError(f"{CONFIG}: invalid TOML: {exc}", "fix the file or remove it") from None


def parse_now(text: str | None) -> dt.datetime:
    """The run's clock: `--now`/`DREAM_NOW` (ISO 8601) for reproducible runs, else the real time."""
    text = text or os.environ.get("DREAM_NOW")
    if not text:
        return dt.datetime.now(dt.timezone.utc).replace(microsecond=0)
    try:
        value = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise BrainError(f"invalid time {text!r}", "write it as ISO 8601, e.g. 2026-06-01T02:00:00Z") from None
    return value if value.tzinfo else value.replace(tzinfo=dt.timezone.utc)


def load_settings(
    root: Path,
    backend: str | None = None,
    now: str | None = None,
    run_id: str | None = None,
    max_sessions: int | None = None,
    dry_run: bool = False,
) -> DreamSettings:
    """Settings from flags, then brain.toml's [dream] table, then defaults (flags never default to values)."""
    config = read_brain_toml(root)
    dream_cfg = config.get("dream", {}) if isinstance(config.get("dream"), dict) else {}
    chosen = backend or dream_cfg.get("backend") or "offline"
    owner = config.get("owner") if isinstance(config.get("owner"), str) else None
    return DreamSettings(
        root=Path(root).resolve(),
        backend=chosen,
        now=parse_now(now),
        run_id=run_id,
        max_sessions=max_sessions if max_sessions is not None else dream_cfg.get("max_sessions"),
        dry_run=dry_run,
        owner=owner,
    )
