"""Extractive session summaries: the most salient sentences people said, in order, each citing its turn."""

from __future__ import annotations

import re
from collections import Counter

from brain.sessions import Session
from dream.backends.base import SessionSummary, SummarySentence
from dream.text.coding import changed_files, changed_line, first_request, outcome
from dream.text.entities import find_mentions
from dream.text.facts import listeners_of, skippable, small_talk, speaker_name
from dream.text.words import clean_statement, content_words, sentences, third_person

_DATE_PREFIX_RE = re.compile(r"^\d{4}-\d{2}-\d{2}-")


def title_of(session: Session) -> str:
    """The header's title, else the id's words after a date prefix, else the first words said."""
    if session.header.title:
        return session.header.title.strip()
    tail = _DATE_PREFIX_RE.sub("", session.id)
    if tail != session.id and re.search(r"[a-z]", tail):
        return tail.replace("_", " ").replace("-", " ").capitalize()
    said = (s for t in session.turns if t.role not in ("assistant", "system", "tool") for s in sentences(t.text))
    first = next((s for s in said if not skippable(s)), session.id)
    return clean_statement(" ".join(first.split()[:8]), 80).rstrip(".")


def coding_summary(session: Session) -> SessionSummary | None:
    """A coding agent's session as work: what was asked, the files changed, how it ended; None
    when the session has no request (only commands, or nothing the user typed)."""
    found = first_request(session)
    if found is None:
        return None
    asked, request = found
    out = [SummarySentence(text=f"Asked: {request}", first_turn=asked.n, last_turn=asked.n)]
    files, turns = changed_files(session)
    if files:
        out.append(SummarySentence(text=changed_line(files), first_turn=turns[0].n, last_turn=turns[-1].n))
    ended = outcome(session)
    if ended is not None and ended[1].n > asked.n:
        out.append(SummarySentence(text=f"Outcome: {ended[0]}", first_turn=ended[1].n, last_turn=ended[1].n))
    title = (session.header.title or "").strip() or clean_statement(" ".join(request.split()[:8]), 80).rstrip(".?!")
    return SessionSummary(title=title, sentences=out, topics=[session.header.project] if session.header.project else [])


def summarize(session: Session, owner: str | None, first_turn: int = 1) -> SessionSummary:
    """Up to six sentences, chosen by how many of the session's frequent words and names they carry;
    a coding agent's session (its header names a project) is summarised as work instead."""
    if session.header.project and (coded := coding_summary(session)) is not None:
        return coded
    candidates: list[tuple[int, int, str, str]] = []  # (turn, position, speaker, sentence)
    freq: Counter = Counter()
    names: Counter = Counter()
    listeners = listeners_of(session, owner)
    for turn in session.turns:
        if turn.n < first_turn:
            continue
        for sentence in sentences(turn.text):
            words = content_words(sentence)
            freq.update(set(words))
            names.update(m.name for m in find_mentions(sentence))
            who = speaker_name(turn, owner)
            if (who and not sentence.endswith("?") and len(words) >= 3 and not skippable(sentence)
                    and not small_talk(sentence, listeners.get(who, ()))):
                candidates.append((turn.n, len(candidates), who, sentence))
    if not candidates:
        return SessionSummary(title=title_of(session), sentences=[], topics=[])
    span = len({c[0] for c in candidates})
    limit = min(6, max(3, span // 2))

    def score(c: tuple[int, int, str, str]) -> tuple[float, int]:
        words = set(content_words(c[3]))
        value = sum(freq[w] for w in words) / (1 + len(words) ** 0.5)
        value += 2.0 * sum(1 for m in find_mentions(c[3]) if names[m.name] > 1)
        return (-value, c[1])

    # The opening statement usually says what the session is for: always keep it.
    rest = sorted(candidates[1:], key=score)[: limit - 1]
    chosen = sorted([candidates[0], *rest], key=lambda c: c[1])
    out = []
    for n, _, who, sentence in chosen:
        text = third_person(sentence, who) if re.search(r"\b(I|my|me|I'm|I've)\b", sentence) else f"{who}: {sentence}"
        out.append(SummarySentence(text=clean_statement(text, 240), first_turn=n, last_turn=n))
    topics = [name for name, count in sorted(names.items(), key=lambda kv: (-kv[1], kv[0])) if count > 1][:8]
    return SessionSummary(title=title_of(session), sentences=out, topics=topics)
