"""A coding agent's session (Claude Code), read as work: the request that opened it, the files it
changed and how it ended. Pure functions over a sanitised session (agent markup already gone)."""

from __future__ import annotations

import re
from collections import Counter

from brain.sessions import Session, Turn
from dream.text.words import clean_statement, sentences

_NOT_A_REQUEST_RE = re.compile(r"^(?:Caveat:|\[tool[:\]]|\[Request interrupted|<)")
_EDIT_RE = re.compile(r"^\[tool: (?:Edit|MultiEdit|Write|NotebookEdit) — (.+)\]$", re.M)  # the importer's tool line
_TOOL_LINE_RE = re.compile(r"^\[tool[:\]].*$", re.M)
REQUEST_CHARS = 200
FILES_SHOWN = 5


def request_of(text: str) -> str:
    """What the user asked: the turn's first sentences, up to REQUEST_CHARS ("" for none)."""
    said = text.strip()
    if not said or _NOT_A_REQUEST_RE.match(said):
        return ""
    out = ""
    for sentence in sentences(said):
        if out and len(out) + len(sentence) > REQUEST_CHARS:
            break
        out = f"{out} {sentence}".strip()
    return clean_statement(out, REQUEST_CHARS)


def first_request(session: Session, first_turn: int = 1) -> tuple[Turn, str] | None:
    """The first user turn from `first_turn` that asks something, and what it asks."""
    asked = ((t, request_of(t.text)) for t in session.turns if t.n >= first_turn and t.role == "user")
    return next(((t, r) for t, r in asked if r), None)


def changed_files(session: Session, first_turn: int = 1) -> tuple[list[tuple[str, int]], list[Turn]]:
    """(path, edits) of the files the agent changed, most edited first, paths below the session's
    folder made relative to it; and the turns that changed them."""
    cwd = (session.header.cwd or "").rstrip("/")
    counts: Counter = Counter()
    turns = []
    for turn in session.turns:
        if turn.n < first_turn or turn.role != "assistant":
            continue
        for m in _EDIT_RE.finditer(turn.text):
            path = m.group(1)
            counts[path[len(cwd) + 1 :] if cwd and path.startswith(cwd + "/") else path] += 1
            if not turns or turns[-1] is not turn:
                turns.append(turn)
    return counts.most_common(), turns


def changed_line(files: list[tuple[str, int]]) -> str:
    listed = ", ".join(f"`{path}`" for path, _ in files[:FILES_SHOWN])
    more = len(files) - FILES_SHOWN
    return clean_statement(f"Changed {listed}" + (f" and {more} more files" if more > 0 else ""))


def outcome(session: Session) -> tuple[str, Turn] | None:
    """How the session ended: the first sentence of the agent's last words that says something
    (not "Perfect!", not a heading or a lead-in such as "Here is the overview:")."""
    for turn in reversed(session.turns):
        if turn.role == "assistant" and _TOOL_LINE_RE.sub("", turn.text).strip():
            said = _said(turn)
            return (clean_statement(said, REQUEST_CHARS), turn) if said else None
    return None


_MARKDOWN_LEAD_RE = re.compile(r"^(?:#+\s*|[-*>]\s+|\d+[.)]\s+)+")


def tools_of(turn: Turn, key: str = "tools") -> list[dict]:
    """The turn's tool calls (`tools`) or the results it carries (`results`), as the importer recorded them."""
    found = (turn.model_extra or {}).get(key)
    return [t for t in found if isinstance(t, dict)] if isinstance(found, list) else []


def open_tasks(session: Session, first_turn: int = 1) -> tuple[list[str], Turn] | None:
    """The agent's task list as the session last wrote it (TodoWrite): the items not completed,
    and the turn that wrote it; None when the session kept no list."""
    for turn in reversed(session.turns):
        if turn.n < first_turn:
            return None
        lists = [t["todos"] for t in tools_of(turn) if t.get("name") == "TodoWrite" and isinstance(t.get("todos"), list)]
        if lists:
            return [str(t.get("content")) for t in lists[-1] if isinstance(t, dict) and t.get("status") != "completed"], turn
    return None


def tasks_line(items: list[str]) -> str:
    return clean_statement("; ".join(items)) if items else "All tasks completed."


#: A command that builds, tests or checks a project (the first word of a shell command, or the module run).
_BUILD_TEST_RE = re.compile(
    r"^(?:(?:uv run|poetry run|python3?(?:\.\d+)?(?: -m)?|npx|bunx)\s+)?"
    r"(?:pytest|tox|nox|make|ruff|mypy|pyright|cargo (?:build|test|check|clippy)|go (?:build|test|vet)"
    r"|(?:npm|pnpm|yarn|bun) (?:test|run \S+|build|ci)|uv (?:sync|build|pip install)|pip install|mvn|gradle|\./gradlew|just"
    r"|cmake|ctest|dotnet (?:build|test)|jest|vitest|eslint|tsc)\b")
_CD_PREFIX_RE = re.compile(r"^cd \S+ && ")
COMMAND_CHARS = 100


def _shown_command(command: object) -> str:
    """A command as a page shows it in a code span, without the `cd <folder> &&` it ran behind;
    "" when it cannot stand there (too long, or holding a backtick)."""
    shown = _CD_PREFIX_RE.sub("", str(command or "")).strip()
    return shown if len(shown) <= COMMAND_CHARS and "`" not in shown else ""


def build_commands(session: Session, first_turn: int = 1) -> list[tuple[str, Turn]]:
    """The distinct commands that built or tested the project, in order, each with its first turn."""
    out: dict[str, Turn] = {}
    for turn in session.turns:
        if turn.n < first_turn:
            continue
        for tool in tools_of(turn):
            command = _shown_command(tool.get("command"))
            if tool.get("name") == "Bash" and command and _BUILD_TEST_RE.match(command):
                out.setdefault(command, turn)
    return list(out.items())


#: A call the user or the agent's permissions stopped, or that was malformed: not a problem of the project.
_NOT_A_FAILURE_RE = re.compile(
    r"requires approval|doesn't want to proceed|haven't granted|was blocked|permission|<tool_use_error>|not been read yet"
    r"|multiple operations|interrupted by the user", re.I)


def errors_met(session: Session, first_turn: int = 1) -> list[tuple[str, list[Turn]]]:
    """Each failed tool call with what the agent said next about it: (statement, the turns that show both)."""
    out = []
    for i, turn in enumerate(session.turns):
        if turn.n < first_turn:
            continue
        for result in tools_of(turn, "results"):
            error = str(result.get("error") or "").strip()
            if not error or _NOT_A_FAILURE_RE.search(error):
                continue
            command = _shown_command(result.get("command"))
            what = f"`{command}`" if command else str(result.get("name") or "A tool")
            first = (sentences(error) or [error])[0].rstrip(".")
            said = next(((t, s) for t in session.turns[i : i + 3] if t.role == "assistant" and (s := _said(t))), None)
            if said is None:  # what the agent made of it is the point; a bare failure is noise
                continue
            out.append((clean_statement(f"{what} failed: {first}. Then: {said[1]}", 2 * REQUEST_CHARS),
                        [turn, said[0]] if said[0] is not turn else [turn]))
    return out


def _said(turn: Turn) -> str:
    """The turn's first sentence of its own words that says something (its tool lines aside; not
    "Perfect!", not a lead-in such as "Let me check:")."""
    for sentence in sentences(_TOOL_LINE_RE.sub("", turn.text).strip()):
        sentence = _MARKDOWN_LEAD_RE.sub("", sentence).replace("**", "").strip()
        if len(sentence.split()) >= 4 and not sentence.endswith(":"):
            return sentence
    return ""


#: How a user corrects the agent ("No, use X", "That's wrong: …") and states a rule for the work.
_CORRECTION_RE = re.compile(r"^(?:no|nope|wrong|that'?s (?:not right|wrong)|that is (?:not right|wrong)|not like that)\b[\s,.:;!—-]*", re.I)
_RULE_RE = re.compile(
    r"^(?:please\s+)?(?:keep (?:it|this|the|them|everything)\b|no new\b|don'?t\b|do not\b|never\b|always\b|only use\b|stick to\b"
    r"|make sure\b|avoid\b|use \S+ (?:instead|rather)\b)|\b(?:must not|mustn'?t|no new dependenc)", re.I)
RULE_CHARS = 160
TYPED_CHARS = 600  # a longer user turn is mostly pasted (docs, logs): its sentences are not the user's rules


def stated_rules(session: Session, first_turn: int = 1) -> list[tuple[str, str, Turn]]:
    """(kind, statement, turn) for what the user told the agent to do or not do: a correction of
    the agent ("No, don't use pytz: use zoneinfo") is a learning, a rule ("no new dependencies")
    a decision. The user's own words, without the "No," that answered the agent."""
    out = []
    for turn in session.turns:
        if turn.n < first_turn or turn.role != "user" or len(turn.text) > TYPED_CHARS or _NOT_A_REQUEST_RE.match(turn.text.strip()):
            continue
        for i, sentence in enumerate(sentences(turn.text)):
            corrected = i == 0 and _CORRECTION_RE.match(sentence)
            said = sentence[corrected.end():] if corrected else sentence
            if not said or len(said) > RULE_CHARS or "\n" in said or not (corrected or _RULE_RE.search(said)):
                continue
            out.append(("learning" if corrected else "decision", clean_statement(said[0].upper() + said[1:]), turn))
    return out
