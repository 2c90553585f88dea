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
        redacted = clean_turn_text(turn.text)  # as read (brain.sessions); a Session built in memory too
        report.secrets += redacted.count("[REDACTED:")
        kept = []
        for sentence in sentences(redacted):
            if injection_spans(sentence):
                report.injections += 1
                kept.append(f"\n{INJECTION_PLACEHOLDER}\n")
            elif instructions.blocks(sentence):
                report.omitted += 1
                kept.append(f"\n{NEVER_RECORD_PLACEHOLDER}\n")
            else:
                kept.append(sentence)
        # Placeholders stand on lines of their own, so no sentence absorbs them.
        new_text = re.sub(r" ?\n ?", "\n", " ".join(kept)).strip() if len(kept) > 1 else "".join(kept).strip()
        turns.append(turn if new_text == turn.text else turn.model_copy(update={"text": new_text}))
    return session.model_copy(update={"turns": turns}), report


