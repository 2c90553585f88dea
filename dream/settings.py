"""DreamSettings: the one composition root — brain folder, backend, clock, run id, limits."""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import tomllib
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from brain.errors import BrainError
from brain.layout import CONFIG
from brain.model import Model


class LLMOptions(Model):
    """How a network backend talks to its server ([dream] in brain.toml; --model). Never holds a key."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    model: str | None = None  # default: the backend's own
    base_url: str | None = None  # anthropic: $ANTHROPIC_BASE_URL or the API; openai: the server, e.g. http://localhost:11434/v1
    timeout: float = 120.0  # seconds per request
    retries: int = 2  # after 429 (honouring retry-after), 5xx and timeouts
    max_wait: float = 60.0  # longest retry-after honoured; longer fails the unit
    max_output_tokens: int = 4096
    structured: Literal["json_schema", "json_object", "prompt"] = "json_schema"  # openai backend
    price_in: float | None = None  # USD per million tokens, overriding dream.calls.PRICES
    price_out: float | None = None


class VerifierPolicy(Model):
    """What the gate does with claims the verifier does not find supported ([dream.verifier])."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    unsupported: Literal["remove", "reject", "keep"] = "remove"  # remove the claim | drop the file | keep it
    contradicted: Literal["flag", "remove", "reject"] = "flag"  # keep and list it for the owner | …


class DreamSettings(Model):
    model_config = ConfigDict(extra="forbid", frozen=True)

    root: Path
    backend: str = "offline"
    backend_reason: str = ""  # why this backend: a flag, brain.toml, or the default
    now: dt.datetime
    run_id: str | None = None
    max_sessions: int | None = None
    dry_run: bool = False
    owner: str | None = None
    llm: LLMOptions = LLMOptions()
    verifier: VerifierPolicy = VerifierPolicy()
    max_tokens: int | None = None  # budget: stop before the next session once spent
    max_cost: float | None = None  # budget in USD, likewise
    record: bool = False  # keep every model exchange for `dream replay`

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


def choose_backend(flag: str | None, configured: object) -> tuple[str, str]:
    """(backend, why): the flag, else brain.toml, else anthropic when ANTHROPIC_API_KEY is set, else offline."""
    if flag:
        return flag, "--backend"
    if isinstance(configured, str) and configured:
        return configured, f"{CONFIG} [dream] backend"
    if os.environ.get("ANTHROPIC_API_KEY"):
        return "anthropic", "default: ANTHROPIC_API_KEY is set"
    return "offline", "default: no ANTHROPIC_API_KEY"


def _table(cfg: dict, cls: type[BaseModel], where: str, **flags) -> BaseModel:
    values = {k: v for k, v in cfg.items() if k in cls.model_fields}
    values.update({k: v for k, v in flags.items() if v is not None})
    try:
        return cls.model_validate(values)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        key = ".".join(str(p) for p in first["loc"])
        raise BrainError(f"{CONFIG}: {where}.{key}: {first['msg']}", "fix the value in brain.toml") from None


class RunFlags(Model):
    """What the command line says of a run; None: not said (brain.toml or the default decides)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    backend: str | None = None
    now: str | None = None
    run_id: str | None = None
    max_sessions: int | None = None
    dry_run: bool = False
    model: str | None = None
    max_tokens: int | None = None
    max_cost: float | None = None
    record: bool = False


def load_settings(root: Path, flags: RunFlags | None = None) -> DreamSettings:
    """Settings from flags, then brain.toml's [dream] table, then defaults (flags never default to values)."""
    f = flags or RunFlags()
    config = read_brain_toml(root)
    dream_cfg = config.get("dream", {}) if isinstance(config.get("dream"), dict) else {}
    if any("key" in k.lower() or "token" == k.lower() for k in dream_cfg):
        # brain.toml is committed: a key there would be in git history for good.
        raise BrainError(f"{CONFIG}: [dream] must not hold an API key", "remove it and set ANTHROPIC_API_KEY or OPENAI_API_KEY in the environment")
    chosen, why = choose_backend(f.backend, dream_cfg.get("backend"))
    owner = config.get("owner") if isinstance(config.get("owner"), str) else None
    verifier_cfg = dream_cfg.get("verifier") if isinstance(dream_cfg.get("verifier"), dict) else {}
    limits = {k: v if (v := getattr(f, k)) is not None else dream_cfg.get(k) for k in ("max_sessions", "max_tokens", "max_cost")}
    return DreamSettings(
        root=Path(root).resolve(),
        backend=chosen,
        backend_reason=why,
        now=parse_now(f.now),
        run_id=f.run_id,
        dry_run=f.dry_run,
        owner=owner,
        llm=_table(dream_cfg, LLMOptions, "[dream]", model=f.model),
        verifier=_table(verifier_cfg, VerifierPolicy, "[dream.verifier]"),
        record=f.record,
        **limits,
    )
