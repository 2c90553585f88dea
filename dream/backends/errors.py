"""Errors of network backends, mapped at the boundary from SDK or HTTP failures (never parsed from text).

All are `BackendError`s: the unit (session or page) fails and the run goes on, except `fatal`
ones (no key, a refused key), which would fail every unit alike and so stop the run.
"""

from __future__ import annotations

import email.utils
import time
from collections.abc import Mapping

from dream.backends.base import BackendError

OFFLINE_HINT = "run `dream run --backend offline`"


class NeedsKeyError(BackendError):
    """No API key, or the server refused it (401/403)."""

    fatal = True

    def __init__(self, message: str, env: str = "ANTHROPIC_API_KEY") -> None:
        super().__init__(message)
        self.env = env
        self.hint = f"set {env} or {OFFLINE_HINT}"


class BackendHTTPError(BackendError):
    """The server answered with an error status."""

    def __init__(self, status: int, body: str, message: str | None = None) -> None:
        super().__init__(message or f"HTTP {status} from the model server: {body[:200]}")
        self.status, self.body = status, body
        self.hint = "the server failed; the unit stays pending and is retried by the next run" if status >= 500 else None


class BackendRateLimited(BackendHTTPError):
    """429: too many requests; `retry_after` is what the server asked us to wait (seconds), if it said."""

    def __init__(self, body: str, retry_after: float | None) -> None:
        wait = f"; retry after {retry_after:g} s" if retry_after is not None else ""
        super().__init__(429, body, f"rate limited by the model server (HTTP 429){wait}")
        self.retry_after = retry_after
        self.hint = "lower the pace (--max-sessions) or raise [dream] max_wait in brain.toml"


class BackendTimeout(BackendError):
    def __init__(self, seconds: float | None) -> None:
        after = f" after {seconds:g} s" if seconds else ""
        super().__init__(f"the model server did not answer{after}")
        self.hint = "raise [dream] timeout in brain.toml, or try again later"


class BackendUnavailable(BackendError):
    """The server cannot be reached (refused, DNS, TLS)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.hint = f"check [dream] base_url and the network, or {OFFLINE_HINT}"


class BackendOutputError(BackendError):
    """The model's answer did not validate, twice (the second time after seeing the error)."""

    def __init__(self, task: str, unit: str, error: str) -> None:
        super().__init__(f"{task} for {unit}: the model's answer was invalid twice: {error}")
        self.hint = "the unit stays pending; try another model (--model) or `--backend offline`"


class BudgetReached(BackendError):
    """The next call could take the run past --max-cost or --max-tokens: it is not sent."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.hint = "what is done lands; the rest stays pending for the next run"


def retry_wait(exc: BackendError, retry: int, retries: int, max_wait: float) -> float | None:
    """Seconds to wait before trying a failed call again, or None to give up."""
    if retry >= retries or exc.fatal:
        return None
    if isinstance(exc, BackendRateLimited):
        wait = exc.retry_after if exc.retry_after is not None else 2.0**retry
        return wait if wait <= max_wait else None
    if isinstance(exc, BackendHTTPError) and exc.status < 500:
        return None
    if isinstance(exc, (BackendHTTPError, BackendTimeout, BackendUnavailable)):
        return min(2.0**retry, max_wait)
    return None


class NetworkDisabledError(BackendError):
    fatal = True

    def __init__(self) -> None:
        super().__init__("networking is disabled (dream.backends.base.ALLOW_NETWORK is False)")


def parse_retry_after(headers: Mapping[str, str] | None, now: float | None = None) -> float | None:
    """Seconds to wait from `retry-after-ms`, `retry-after` (seconds or an HTTP date); None if absent."""
    if not headers:
        return None
    lower = {k.lower(): v for k, v in headers.items()}
    for key, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = lower.get(key)
        if value is None:
            continue
        try:
            return max(0.0, float(value) * scale)
        except ValueError:
            pass
        when = email.utils.parsedate_tz(value) if key == "retry-after" else None
        if when is not None:
            return max(0.0, email.utils.mktime_tz(when) - (now if now is not None else time.time()))
    return None


def scrub(text: str, secret: str | None) -> str:
    """The text with the API key cut out: error bodies are written to reports and logs."""
    return text.replace(secret, "[REDACTED:api-key]") if secret else text
