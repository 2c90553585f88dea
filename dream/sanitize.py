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
        turns.append(turn if new_text == turn.text else turn.model_copy(update={"text": new_text}))
    return session.model_copy(update={"turns": turns}), report


def strip_agent_markup(text: str) -> str:
    """`text` without a coding agent's markup blocks (`<ide_selection>…</ide_selection>`, …)."""
    return _AGENT_MARKUP_RE.sub("", text).strip() if "</" in text else text


_AROUND_PLACEHOLDER_RE = re.compile(rf"\s*\n({re.escape(INJECTION_PLACEHOLDER)}|{re.escape(NEVER_RECORD_PLACEHOLDER)})\n\s*")
