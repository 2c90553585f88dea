"""Errors that stop a command. Content problems are findings (validators), not exceptions."""

from __future__ import annotations


class BrainError(Exception):
    """Base of every error the CLI renders as one line: what is wrong and what to do."""

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.message} ({self.hint})" if self.hint else self.message


class NotABrainError(BrainError):
    """The folder is not a Brain (no knowledge/ nor brain.toml)."""


class PageError(BrainError):
    """A page could not be parsed; carries the path and line for a lint-style message."""

    def __init__(self, path: str, line: int, message: str, hint: str | None = None) -> None:
        super().__init__(message, hint)
        self.path = path
        self.line = line

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {super().__str__()}"


class NotFoundError(BrainError):
    """A page, session or citation that was asked for does not exist."""
