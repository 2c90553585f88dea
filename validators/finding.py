"""Finding: one problem a validator reports, printed like a linter or dumped as JSON."""

from __future__ import annotations

from typing import Literal

from brain.model import Record

Severity = Literal["error", "warning"]


class Finding(Record):
    """`path:line: CODE message` — path is relative to the Brain, lines count from 1.

    Line 0 means the finding is about the Brain as a whole (E000: a check itself failed).
    JSON is `model_dump()` / `model_dump_json()`: {code, path, line, message, severity}.
    """

    code: str
    path: str
    line: int
    message: str
    severity: Severity

    def lint_line(self) -> str:
        return f"{self.path}:{self.line}: {self.code} {self.message}"

    def sort_key(self) -> tuple[str, int, str, str]:
        return (self.path, self.line, self.code, self.message)
