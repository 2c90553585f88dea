"""The check registry: `@check(code, severity, summary)`, `run_checks(view)` and the `Finding`s it returns.

A check is a function `fn(view: BrainView)` yielding `Finding`s or `(path, line, message)`
tuples; the registry stamps code and severity on the tuples. Checks only read the view.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal

from brain.errors import BrainError
from brain.model import Record
from brain.view import BrainView

Severity = Literal["error", "warning"]

FAMILIES: dict[str, str] = {
    "F": "front matter",
    "C": "citations",
    "L": "links",
    "S": "structure and paths",
    "X": "safety: secrets and injected instructions",
    "I": "index freshness",
    "E": "internal",
}
_CODE_RE = re.compile(r"^[A-Z]\d{3}$")

CheckFn = Callable[[BrainView], Iterable[Any]]
Item = tuple[str, int, str]  # (path, line, message): what a check yields, stamped with its code


@dataclass(frozen=True)
class Check:
    code: str
    severity: Severity
    summary: str
    fn: CheckFn

    @property
    def family(self) -> str:
        return self.code[0]


CHECKS: dict[str, Check] = {}


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


class UnknownCheckError(BrainError):
    """`select`/`ignore` named a code or family that does not exist."""


def check(code: str, severity: Severity, summary: str) -> Callable[[CheckFn], CheckFn]:
    """Register `fn` under a stable code; codes are never reused for another meaning."""
    if not _CODE_RE.match(code) or code[0] not in FAMILIES:
        raise ValueError(f"check code {code!r} must be a family letter ({''.join(FAMILIES)}) and three digits")
    if severity not in ("error", "warning"):
        raise ValueError(f"severity of {code} must be 'error' or 'warning'")

    def register(fn: CheckFn) -> CheckFn:
        if code in CHECKS and CHECKS[code].fn is not fn:
            raise ValueError(f"check code {code} is registered twice ({CHECKS[code].fn.__qualname__}, {fn.__qualname__})")
        CHECKS[code] = Check(code, severity, summary, fn)
        return fn

    return register


@check("E000", "error", "a check failed with an unexpected error (a validator bug; the other checks still ran)")
def _internal(view: BrainView) -> Iterable[Any]:
    """Never yields: run_checks reports E000 itself when a check raises."""
    return ()


def _expand(names: Iterable[str] | str | None) -> set[str] | None:
    if names is None:
        return None
    if isinstance(names, str):
        names = [names]
    out: set[str] = set()
    for raw in names:
        for name in str(raw).replace(",", " ").split():
            name = name.strip().upper()
            matched = {c for c in CHECKS if c.startswith(name)}
            if not matched:
                raise UnknownCheckError(f"unknown check code or family {name!r}", "see docs/validators.md for the codes")
            out |= matched
    return out


def selected_checks(select: Iterable[str] | str | None = None, ignore: Iterable[str] | str | None = None) -> list[Check]:
    """The registered checks `run_checks` would run, in code order (the package imports every family)."""
    chosen = _expand(select)
    dropped = _expand(ignore) or set()
    return [CHECKS[c] for c in sorted(CHECKS) if (chosen is None or c in chosen) and c not in dropped]


def run_checks(
    view: BrainView, select: Iterable[str] | str | None = None, ignore: Iterable[str] | str | None = None
) -> list[Finding]:
    """Every finding of the selected checks, sorted by (path, line, code, message), duplicates dropped.

    `select`/`ignore` take codes (`C001`), family letters (`C`) or any code prefix (`C00`), as a
    list or a comma/space separated string; an unknown one raises UnknownCheckError. A check
    that raises becomes one E000 finding; the others still run.
    """
    found: set[Finding] = set()
    for chk in selected_checks(select, ignore):
        _run_one(chk, view, found)
    return sorted(found, key=Finding.sort_key)


def _run_one(chk: Check, view: BrainView, found: set[Finding]) -> None:
    try:
        for item in chk.fn(view):
            if isinstance(item, Finding):
                found.add(item)
                continue
            path, line, message = item  # an Item: stamped with the check's code and severity
            found.add(Finding(code=chk.code, path=str(path), line=int(line), message=str(message), severity=chk.severity))
    except Exception as exc:  # noqa: BLE001 - a validator bug must not hide the other checks
        found.add(
            Finding(
                code="E000",
                path=".",
                line=0,
                message=f"check {chk.code} ({chk.fn.__name__}) failed: {type(exc).__name__}: {_one_line(exc)}; "
                "its other findings may be missing, please report this validator bug",
                severity="error",
            )
        )


def _one_line(exc: BaseException, limit: int = 200) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."

