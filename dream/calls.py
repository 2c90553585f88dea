"""The call log of a run (`.dream/runs/<id>/calls.jsonl`), model prices, and budgets.

Every model call appends one CallRecord: task, unit, model, a hash of its input, token usage
(cache reads and writes included), cost, duration and error. Request and response bodies are not
logged here (they go to the record, `dream run --record`), and no header is: the key never is.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ConfigDict

from brain.model import Model
from dream.backends.base import CallUsage, Usage


class CallRecord(Model):
    model_config = ConfigDict(extra="forbid", frozen=True)
    seq: int
    task: str
    unit: str  # session id, page slug or file path
    backend: str
    model: str
    input_hash: str
    attempt: int  # 1 = the question, 2 = the repair call after an invalid answer
    retry: int = 0  # retries after 429/5xx/timeouts within that attempt
    usage: CallUsage = CallUsage()
    cost_usd: float | None = None
    duration_ms: int = 0
    error: str | None = None
    replayed: bool = False


class Price(Model):
    """US dollars per million tokens."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    input: float
    output: float
    cache_read: float
    cache_write: float


def _anthropic(inp: float, out: float) -> Price:
    # Anthropic bills cache writes (5-minute TTL) at 1.25x and cache reads at 0.1x of input.
    return Price(input=inp, output=out, cache_read=inp * 0.1, cache_write=inp * 1.25)


def _openai(inp: float, out: float, cached: float) -> Price:
    return Price(input=inp, output=out, cache_read=cached, cache_write=inp)


#: Public list prices (USD per million tokens) of models whose price we know; longest prefix wins.
#: Unknown models cost None ("cost unknown"): --max-cost then needs [dream] price_in/price_out.
#: Override for any model with `[dream] price_in` / `price_out` in brain.toml.
PRICES: dict[str, Price] = {
    "claude-opus-4-6": _anthropic(5.0, 25.0),
    "claude-opus-4-5": _anthropic(5.0, 25.0),
    "claude-opus-4-1": _anthropic(15.0, 75.0),
    "claude-opus-4-0": _anthropic(15.0, 75.0),
    "claude-opus-4-2025": _anthropic(15.0, 75.0),
    "claude-sonnet-4-6": _anthropic(3.0, 15.0),
    "claude-sonnet-4-5": _anthropic(3.0, 15.0),
    "claude-sonnet-4-0": _anthropic(3.0, 15.0),
    "claude-sonnet-4-2025": _anthropic(3.0, 15.0),
    "claude-haiku-4-5": _anthropic(1.0, 5.0),
    "claude-3-5-haiku": _anthropic(0.8, 4.0),
    "gpt-4.1-mini": _openai(0.4, 1.6, 0.1),
    "gpt-4.1": _openai(2.0, 8.0, 0.5),
    "gpt-4o-mini": _openai(0.15, 0.6, 0.075),
    "gpt-4o": _openai(2.5, 10.0, 1.25),
}


def price_for(model: str, price_in: float | None = None, price_out: float | None = None) -> Price | None:
    """The price of `model`: brain.toml's override, else the table; None when unknown."""
    if price_in is not None and price_out is not None:  # cache reads and writes priced as Anthropic's
        return _anthropic(price_in, price_out)
    matches = [key for key in PRICES if model.startswith(key)]
    return PRICES[max(matches, key=len)] if matches else None


def cost(price: Price | None, usage: CallUsage) -> float | None:
    if price is None:
        return None
    fresh = max(0, usage.input_tokens - usage.cache_read_tokens - usage.cache_write_tokens)
    total = (
        fresh * price.input
        + usage.cache_read_tokens * price.cache_read
        + usage.cache_write_tokens * price.cache_write
        + usage.output_tokens * price.output
    )
    return round(total / 1_000_000, 6)


def add_usage(total: Usage, call: CallUsage, call_cost: float | None) -> Usage:
    tokens = {name: getattr(total, name) + getattr(call, name) for name in CallUsage.model_fields}
    cost_usd = None if total.cost_usd is None or call_cost is None else round(total.cost_usd + call_cost, 6)
    return Usage(**tokens, cost_usd=cost_usd, calls=total.calls + 1)


class CallLog:
    """Appends CallRecords to `<run_dir>/calls.jsonl` (a fresh file per run)."""

    def __init__(self, run_dir: Path) -> None:
        self.path = Path(run_dir) / "calls.jsonl"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text("", encoding="utf-8")
        self.seq = 0

    def append(self, **fields: Any) -> None:
        """One CallRecord of `fields`, numbered in the order of the run's calls."""
        self.seq += 1
        with self.path.open("a", encoding="utf-8") as f:
            f.write(CallRecord(seq=self.seq, **fields).model_dump_json() + "\n")


def call_over_budget(usage: Usage, price: "Price | None", worst: CallUsage, max_tokens: int | None,
                     max_cost: float | None) -> str | None:
    """Why a call must not be sent: at its `worst` (its input as estimated, the most output it may
    write) it could take the run past a budget; None when it fits."""
    spent = usage.input_tokens + usage.output_tokens
    if max_tokens is not None and spent + worst.input_tokens + worst.output_tokens > max_tokens:
        return f"token budget: {spent} of {max_tokens} tokens spent, and the next call could take up to " \
               f"{worst.input_tokens + worst.output_tokens} more (--max-tokens)"
    extra = cost(price, worst)
    if max_cost is not None and usage.cost_usd is not None and extra is not None and usage.cost_usd + extra > max_cost:
        return f"cost budget: ${usage.cost_usd:.4f} of ${max_cost:.4f} spent, and the next call could cost up to ${extra:.4f} (--max-cost)"
    return None


def over_budget(usage: Usage, max_tokens: int | None, max_cost: float | None) -> str | None:
    """Why the run must stop before its next session, or None (checked at session boundaries)."""
    spent = usage.input_tokens + usage.output_tokens
    if max_tokens is not None and spent >= max_tokens:
        return f"token budget reached: {spent} of {max_tokens} tokens spent (--max-tokens)"
    if max_cost is not None and usage.cost_usd is not None and usage.cost_usd >= max_cost:
        return f"cost budget reached: ${usage.cost_usd:.4f} of ${max_cost:.4f} spent (--max-cost)"
    return None
