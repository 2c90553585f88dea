"""Model backends by name. Network backends are imported lazily (they pull in their SDKs)."""

from __future__ import annotations

from dream.backends.base import BackendError, ModelBackend


class UnknownBackendError(BackendError):
    pass


BACKENDS = ("offline",)


def get_backend(name: str) -> ModelBackend:
    """The backend called `name`; the only place backends are built."""
    if name == "offline":
        from dream.backends.offline import OfflineBackend

        return OfflineBackend()
    raise UnknownBackendError(f"unknown backend {name!r}; choose one of: {', '.join(BACKENDS)}")
