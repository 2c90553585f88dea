"""What a user pastes into a chat (an email, code, a shell session, JSON, a doc page) is not speech:
the offline backend makes no fact, summary sentence or page of its lines, and keeps the real facts."""

from __future__ import annotations

from brain.sessions import Session, SessionHeader, Turn
from dream.backends import get_backend
from dream.backends.base import ExtractRequest, SummarizeRequest
from dream.instructions import parse_instructions
from dream.sanitize import sanitize_session

PASTED = """Please summarise this email about the venue:

From: bookings@civic-hall.example
Subject: Hall B booking for 24 June

Dear Ms Lima,
Hall B is booked for 24 June from 9:00 to 18:00.

Kind regards,
Civic Hall bookings"""
SHELL = """Here is what I ran:

~/Projects/my-project$ gh pr view 21 --web
uv tool install ruff==0.5.0
cat > ~/.extractor << 'EOF'
import anthropic
client = anthropic.Anthropic(timeout=30)
{"url": "https://example.com/pull/278"}
  "branch": "main",

Note

See the tools guide for an introduction to working with the tools interface."""


def _session() -> Session:
    header = SessionHeader(id="2024-06-01-venue", started="2024-06-01T10:00:00", participants=["Ana", "assistant"])
    turns = [Turn(n=1, role="user", speaker="Ana", text=PASTED), Turn(n=2, role="user", speaker="Ana", text=SHELL),
             Turn(n=3, role="user", speaker="Ana", text="I work at Harbor Labs in Porto.")]
    clean, _ = sanitize_session(Session(header=header, turns=turns), parse_instructions("", ""))
    return clean


def test_sanitising_keeps_a_turns_lines_and_paragraphs():
    assert _session().turns[1].text == SHELL


def test_no_summary_sentence_or_fact_is_made_of_pasted_lines():
    backend = get_backend("offline")
    session = _session()
    said = [s.text for s in backend.summarize(SummarizeRequest(session=session)).sentences]
    facts = backend.extract_facts(ExtractRequest(session=session, known=[])).facts
    out = " ".join(said + [f.statement for f in facts] + [f.subject for f in facts])
    for pasted in ("From:", "Subject:", "Dear Ms", "Kind regards", "gh pr view", "ruff==", "<<", "import anthropic",
                   "client =", '"url"', '"branch"', "Note See"):
        assert pasted not in out, pasted
    assert "Harbor Labs" in out and "Hall B is booked for 24 June" in out
