"""Model backends by name. Network backends are imported lazily (they pull in their SDKs)."""

from __future__ import annotations

import os

from dream.backends.base import BackendError, ModelBackend, NeedsKeyError
from dream.settings import LLMOptions


class UnknownBackendError(BackendError):
    fatal = True


BACKENDS = ("offline", "anthropic", "openai")


def get_backend(name: str, options: LLMOptions | None = None) -> ModelBackend:
    """The backend called `name`; the only place backends are built and API keys are read."""
    if name == "offline":
        from dream.backends.offline import OfflineBackend

        return OfflineBackend()
    options = options or LLMOptions()
    if name == "anthropic":
        from dream.backends.anthropic import build

        key = os.environ.get("ANTHROPIC_API_KEY")
        if not key:
            raise NeedsKeyError("the anthropic backend needs an API key, and ANTHROPIC_API_KEY is not set")
        return build(options, key)
    if name == "openai":
        from dream.backends.openai_compat import build

        return build(options, os.environ.get("OPENAI_API_KEY") or None)
    raise UnknownBackendError(f"unknown backend {name!r}; choose one of: {', '.join(BACKENDS)}")
