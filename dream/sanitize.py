"""Transcript text is data: secrets are redacted, planted instructions and never-record topics
removed, invisible characters stripped — before any backend (offline or a model) sees a turn."""

from __future__ import annotations

import re

from pydantic import ConfigDict

from brain.model import Model
from brain.sessions import Session, clean_turn_text
from dream.instructions import Instructions
from dream.text.words import sentences
from validators.injection import injection_spans

#: Markup a coding agent wraps around what the user typed: the editor's selection and open file,
#: reminders, slash commands and their output. It is neither speech nor a fact of the user's.
_AGENT_MARKUP_RE = re.compile(
    r"<(ide_selection|ide_opened_file|ide_diagnostics|system-reminder|command-name|command-message|command-args"
    r"|local-command-stdout|local-command-stderr|user-prompt-submit-hook)>.*?</\1>\s*", re.S)
INJECTION_PLACEHOLDER = "[untrusted instruction removed]"
NEVER_RECORD_PLACEHOLDER = "[omitted: a never-record topic]"


class SanitizeReport(Model):
    model_config = ConfigDict(extra="forbid")
    secrets: int = 0
    injections: int = 0
    omitted: int = 0


def sanitize_session(session: Session, instructions: Instructions) -> tuple[Session, SanitizeReport]:
    report = SanitizeReport()
    turns = []
    for turn in session.turns:
        redacted = strip_agent_markup(clean_turn_text(turn.text))  # cleaned as read (brain.sessions); a Session built in memory too
        report.secrets += redacted.count("[REDACTED:")
        new_text = redacted
        for sentence in sentences(redacted):
            if injection_spans(sentence):
                report.injections += 1
                new_text = new_text.replace(sentence, f"\n{INJECTION_PLACEHOLDER}\n", 1)
            elif instructions.blocks(sentence):
                report.omitted += 1
                new_text = new_text.replace(sentence, f"\n{NEVER_RECORD_PLACEHOLDER}\n", 1)
        if new_text != redacted:
            # Placeholders stand on lines of their own, so no sentence absorbs them; the rest keeps
            # its lines and paragraphs ("Note" above "See the guide" is no name "Note See").
            new_text = _AROUND_PLACEHOLDER_RE.sub(r"\n\1\n", new_text).strip()
        update = {"text": new_text} if new_text != turn.text else {}
        for key in ("tools", "results"):
            if (turn.model_extra or {}).get(key):
                update[key] = _clean_tools(turn.model_extra[key], report)
        turns.append(turn.model_copy(update=update) if update else turn)
    return session.model_copy(update={"turns": turns}), report


def _clean_tools(tools: object, report: SanitizeReport) -> list[dict]:
    """A turn's tool calls as a backend may read them: redacted, a field with a planted instruction
    dropped (the importer redacts too; a canonical file's `tools` come from anyone)."""
    out = []
    for tool in tools if isinstance(tools, list) else ():
        if not isinstance(tool, dict):
            continue
        kept = {}
        for key, value in tool.items():
            if key == "todos" and isinstance(value, list):
                value = [{**t, "content": _clean_field(str(t.get("content", "")), report)} for t in value if isinstance(t, dict)]
                kept[key] = [t for t in value if t["content"]]
            elif isinstance(value, str) and (value := _clean_field(value, report)):
                kept[key] = value
        out.append(kept)
    return out


def _clean_field(value: str, report: SanitizeReport) -> str:
    redacted = clean_turn_text(value)
    report.secrets += redacted.count("[REDACTED:") - value.count("[REDACTED:")
    if injection_spans(redacted):
        report.injections += 1
        return ""
    return redacted


def strip_agent_markup(text: str) -> str:
    """`text` without a coding agent's markup blocks (`<ide_selection>…</ide_selection>`, …)."""
    return _AGENT_MARKUP_RE.sub("", text).strip() if "</" in text else text


_AROUND_PLACEHOLDER_RE = re.compile(rf"\s*\n({re.escape(INJECTION_PLACEHOLDER)}|{re.escape(NEVER_RECORD_PLACEHOLDER)})\n\s*")
