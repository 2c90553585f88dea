"""Extracting facts from a session's turns, without a model.

A fact is one sentence said by a person (not the assistant) that states something durable: a
preference, a role, a relationship, a decision, an event with a date, a correction, a learning,
or a description of a named thing. First-person sentences are about the speaker and are
rewritten in the third person; others are about the named thing they start with, or else about
the session's main topic. Facts that fill the same slot (employer, home, a named relation,
where a thing takes place) supersede each other: newer wins.
"""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter
from dataclasses import dataclass

from brain.sessions import Session, Turn
from dream.backends.base import Entity, EntityRef, Fact
from dream.text.dates import parse_when, resolve_date
from dream.text.entities import Mention, find_mentions, fold_name
from dream.text.words import clean_statement, content_words, sentences, third_person

_FIRST_PERSON_RE = re.compile(r"\b(I|I'm|I’m|I've|I’ve|I'd|I'll|my|My|me|myself)\b")
_REQUEST_RE = re.compile(
    r"^(?:please|can you|could you|would you|will you|let's|let me|make|draft|write|send|add|use|keep|give|tell|show|"
    r"help|check|remind|remember|put|change|fix|try|do not|don't|thanks|thank you|ok|okay|sure|great|good|yes|no)\b",
    re.I,
)
_CORRECTION_RE = re.compile(r"(?:^|\b)(?:no\s*[—–,-]|actually|correction|i was wrong|that's wrong|not quite)", re.I)
_NAME = r"[A-Z][\w-]*(?:\s+[A-Z][\w-]*)*"
_X_NOT_Y_RE = re.compile(rf"\b(?:is|are|was|in|at|on)\s+(?:in\s+|at\s+|on\s+)?({_NAME}|\w+),?\s+not\s+(?:in\s+|at\s+|on\s+)?({_NAME}|\w+)")
_PREF_RE = re.compile(r"\b(prefer|prefers|preferred|favou?rite|rather|love|loves|like|likes|enjoy|enjoys|hate|hates|dislike|always use|never use|can't stand)\b", re.I)
_PREFER_OVER_RE = re.compile(r"\bprefers?\s+(.+?)\s+(?:over|to|rather than|instead of)\s+(.+?)(?:[.,;]|$)", re.I)
_EMPLOYER_RE = re.compile(rf"\b(?:work|works|working|worked)\s+(?:at|for)\s+(?:the\s+)?({_NAME})|\bjoined\s+(?:the\s+)?({_NAME})")
_HOME_RE = re.compile(rf"\b(?:live|lives|living|moved|moving|based|relocated)\s+(?:in|to)\s+({_NAME})")
_LOCATION_RE = re.compile(rf"^(?i:no\s*[—–,-]\s*|actually,?\s*)?(?i:the\s+)?([\w\s-]{{3,40}}?)\s+(?:is|will be|takes place)\s+(?:held\s+)?in\s+({_NAME})")
_PAST_PERSONAL_RE = re.compile(r"\b(?:was|were|had|used to|for \w+ years|previously|formerly)\b")
_DECISION_RE = re.compile(r"\b(decided|decide|agreed|we will|we'll|plan to|planning to|going to|chose|settled on)\b", re.I)
_LEARNING_RE = re.compile(r"\b(learned|learnt|realized|realised|turns out|lesson|insight|found that|noticed that|discovered)\b", re.I)
_IDENTITY_RE = re.compile(r"\b(I am an?|I'm an?|I’m an?|as (?:a|an|the|head|senior|lead|director)|my (?:job|role|career|title)|I work|I live|I'm from|I am from|my name)\b", re.I)
_PAST_RE = re.compile(r"\b(went|was|were|had|did|got|made|took|saw|came|met|visited|started|finished|joined|left|moved|bought|ran|won|attended|\w+ed)\b", re.I)
_DEFINITION_RE = re.compile(r"^([A-Z][\w-]*(?:\s+[a-z][\w-]*){0,2})\s+(?:is an?|is the|means|refers to|is short for)\s+(?!\d)", re.M)
_SECOND_PERSON_RE = re.compile(r"\b(?:you|your|yours|you're|you’re|you've|you’ve|you'll|ya|y'all|yourself)\b", re.I)
_IMAGE_RE = re.compile(r"\s*\[image: ([^\]]+)\]")
_ACTIVITY_RE = re.compile(
    r"\b(?:love|loves|loved|enjoy|enjoys|enjoyed|like|likes|liked|started|took up|into|doing|did|go|goes|went|tried|"
    r"signed up for|practice|practicing|practise|took)\s+(?:a\s+|some\s+|the\s+|my\s+|to\s+)?"
    r"([a-z]+ing|pottery|yoga|art|music|photography|karate|ballet|chess|guitar|piano|violin|tennis|soccer|"
    r"football|basketball|volleyball|golf|poetry|meditation|gardening)\b"
)
_NOT_ACTIVITIES = frozenset(
    """going doing being having thinking getting making looking feeling trying saying working living taking seeing
    coming talking spending giving putting keeping telling meeting learning starting helping using finding planning
    sharing checking waiting watching something anything nothing everything thing morning evening during bring
    wedding building ceiling sibling string spring king ring""".split()
)
_ALIAS_RE = re.compile(rf"\b([A-Z]{{2,8}})\s+(?:is\s+)?(?:short\s+for|stands\s+for)\s+(?:the\s+)?({_NAME})|\b({_NAME})\s+\(([A-Z]{{2,8}})\)")
_LEAD_ADVERB_RE = re.compile(r"^(?:also|and|so|but|then|now|oh|well|anyway|just),?\s+", re.I)
_ORPHAN_PRONOUN_RE = re.compile(r"^(?:he|she|they|it|this|that|these|those|there|here)\b", re.I)
_PLACEHOLDER_RE = re.compile(r"^\[[^\]]*\]$")
#: A line of code, markup or shell pasted into a turn: `import x`, `client = f(...)`, `}`, `<div>`, `~/p$ gh pr view 21 --web`.
_CODE_LINE_RE = re.compile(
    r"^\s*(?:(?:import|from\s+[\w.]+\s+import|def|class|return|const|let|var|function)\s|[A-Za-z_][\w.\[\]'\"]*\s*(?:=|\+=|:=|==)\s*\S"
    r"|[\w.]+\([^()]*\)\s*[;:]?\s*$|[{}\[\]<>$#|`]|\S+\s*(?:=>|->)\s"
    r"|\s*\"[^\"]+\"\s*:|.*(?:\s--?[a-z][\w-]*(?=\s|=|$)|&&|\|\||<<|\$\s|\s>\s*~?/|\w==\w))")  # a shell line: flags, &&, heredoc, prompt, redirection
#: A header line of a pasted email or log: `Subject: Hall B booking`, `Accept-Encoding: gzip`.
_HEADER_LINE_RE = re.compile(r"^[A-Z][\w-]{0,30}:\s+.*[^.!?]$")
#: The greeting or the sign-off of a pasted letter: `Dear Ms Rahman,`, `Kind regards,`.
_LETTER_LINE_RE = re.compile(r"^(?:dear|hi|hello|kind regards|best regards|warm regards|regards|best wishes|cheers|sincerely)\b[^.!?]{0,40},$", re.I)
_REACTION_RE = re.compile(
    r"^(?:wow|woah|whoa|thanks|thank you|thx|congrats|congratulations|aww+|omg|haha\w*|lol|yay|yeah|yep|yes|nice|cool|"
    r"great|awesome|amazing|sounds|hey|hi|hello|glad|so glad|good luck|hope|oh my|sweet|lovely|hooray|ooh|yum)\b",
    re.I,
)
_QUANTIFIERS = frozenset("every each all most some several many few any no participants people users everyone".split())
_SUBJECT_SLOTS = ("employer", "home", "relation:")
MIN_WORDS = 4
ANSWER_RULES = 8  # of a ChatGPT profile's "how to answer": more is an essay, kept in its turn
#: Whose page first-person facts go to when brain.toml names no owner.
DEFAULT_OWNER = "User"
#: The speaker names a transcript gives its owner: their turns are the owner's.
OWNER_ALIASES = ("user", "human", "me")

def speaker_name(turn: Turn, owner: str | None) -> str | None:
    """Who said a turn, or None for the assistant/system/tools (their words are not the person's facts)."""
    if turn.role in ("assistant", "system", "tool"):
        return None
    name = (turn.speaker or "").strip()
    if not name or name.lower() in OWNER_ALIASES:
        return owner or DEFAULT_OWNER
    return name


def turn_date(turn: Turn, session: Session) -> dt.date:
    when = parse_when(turn.time) or parse_when(session.header.started)
    return when.date() if when else dt.date(1970, 1, 1)


_KNOWN_CACHE: list = [None, None]


def _known_types(known: list[EntityRef]) -> dict[str, str]:
    """Folded name → type of the known entities, rebuilt only when they changed.

    Each request gets a new list (pydantic copies it) holding the same EntityRef objects while the
    resolver learns nothing, so the key is the objects' ids; the cache keeps the old list alive, so
    no id can be reused by a new object while it is the key."""
    key = tuple(map(id, known))
    if _KNOWN_CACHE[0] != key:
        _KNOWN_CACHE[:] = [key, {fold_name(n): k.type for k in known for n in (k.title, *k.aliases)}, known]
    return _KNOWN_CACHE[1]


class _SessionScan:
    """Pass 1 over every turn: mention counts, types, aliases and defined concepts."""

    def __init__(self, session: Session, known: list[EntityRef]) -> None:
        self.types: dict[str, Counter] = {}
        self.counts: Counter = Counter()
        self.aliases: dict[str, set[str]] = {}
        self.concepts: set[str] = set()
        self.activities: set[str] = set()
        self.known = _known_types(known)
        participants = [p for p in session.header.participants if p.lower() not in ("assistant", "user")]
        for p in participants:
            self.types.setdefault(p, Counter())["person"] += 3
        self.mentions: dict[tuple[int, int], tuple[Mention, ...]] = {}
        for turn in session.turns:
            for i, sentence in enumerate(sentences(_IMAGE_RE.sub("", turn.text))):
                found = find_mentions(sentence)
                self.mentions[(turn.n, i)] = found
                for m in found:
                    self.counts[m.name] += 1
                    if m.type:
                        self.types.setdefault(m.name, Counter())[m.type] += 1
                for a in _ALIAS_RE.finditer(sentence):
                    short, full = (a.group(1), a.group(2)) if a.group(1) else (a.group(4), a.group(3))
                    self.aliases.setdefault(full, set()).add(short)
                for act in _ACTIVITY_RE.finditer(sentence):
                    if act.group(1) not in _NOT_ACTIVITIES:
                        self.activities.add(act.group(1))
                d = _DEFINITION_RE.match(sentence)
                if d and d.group(1).split()[0].lower() not in _QUANTIFIERS and not _FIRST_PERSON_RE.search(d.group(1)):
                    name = d.group(1)
                    if name not in self.types and len(name) > 3:
                        self.concepts.add(name)

    def type_of(self, name: str) -> str | None:
        if name in self.types:
            return self.types[name].most_common(1)[0][0]
        if name in self.concepts:
            return "concept"
        return self.known.get(fold_name(name))

    def primary_topic(self, exclude: set[str]) -> str | None:
        """The most mentioned organisation, project or event of the session (ties by name)."""
        weight = {"project": 2, "event": 2, "organization": 1}
        best = sorted(
            (n for n in self.counts if n not in exclude and self.type_of(n) in weight),
            key=lambda n: (-self.counts[n] * weight[self.type_of(n)], n),
        )
        return best[0] if best else None


def _kind_of(sentence: str, first_person: bool, mentions: tuple[Mention, ...], dated: bool, located: bool) -> tuple[str, float] | None:
    if _CORRECTION_RE.search(sentence) and _X_NOT_Y_RE.search(sentence):
        return "correction", 0.9
    if _PREF_RE.search(sentence) and (first_person or re.search(r"\bnot\b", sentence)):
        return "preference", 0.85
    if first_person and (_EMPLOYER_RE.search(sentence) or _HOME_RE.search(sentence) or _IDENTITY_RE.search(sentence)):
        return "identity", 0.85
    if any(m.cue for m in mentions):
        return "relationship", 0.8
    if _DECISION_RE.search(sentence):
        return "decision", 0.7
    if _LEARNING_RE.search(sentence):
        return "learning", 0.7
    if located:
        return ("event", 0.75) if dated else ("identity", 0.7)
    if any(m.type == "project" for m in mentions):
        return "project", 0.7
    if dated and (_PAST_RE.search(sentence) or any(m.type == "event" for m in mentions)):
        return "event", 0.75
    if first_person:
        return ("event", 0.6) if _PAST_RE.search(sentence) else ("identity", 0.6)
    return "identity", 0.6


#: "Aiko is the coordinator of the sprint", and its correction "Aiko is not the coordinator, she is the director of the sprint".
_ROLE = r"(?:the|our|their|a|an)\s+((?:[a-z]+\s+)?[a-z]+)"
_ROLE_OF = rf"\s+(?:of|at|for)\s+(?:the\s+)?({_NAME}|[a-z]+)"
_ROLE_RE = re.compile(rf"^({_NAME})\s+(?:is|has become|became)\s+{_ROLE}{_ROLE_OF}")
_ROLE_FIX_RE = re.compile(rf"^({_NAME})\s+is\s+not\s+{_ROLE}\s*[,;—–-]+\s*(?:but\s+)?(?:she|he|they)\s+(?:is|are)\s+{_ROLE}{_ROLE_OF}")


def _slot(sentence: str, kind: str, mentions: tuple[Mention, ...]) -> tuple[str | None, str | None, str | None]:
    """(slot, value, replaces) for facts that supersede one another."""
    fix = _ROLE_FIX_RE.match(sentence)
    if fix:  # the slot names the person: a page holds others' roles too
        return f"role:{fold_name(fix.group(1))}:{fold_name(fix.group(4))}", fold_name(fix.group(3)), fold_name(fix.group(2))
    role = _ROLE_RE.match(sentence)
    if role and kind != "preference":
        return f"role:{fold_name(role.group(1))}:{fold_name(role.group(3))}", fold_name(role.group(2)), None
    m = _X_NOT_Y_RE.search(sentence)
    loc = _LOCATION_RE.search(sentence)
    if loc and not _FIRST_PERSON_RE.search(loc.group(1)):
        replaces = fold_name(m.group(2)) if m and kind == "correction" else None
        return f"location:{fold_name(loc.group(1))}", fold_name(loc.group(2)), replaces
    if kind == "correction" and m:
        return None, fold_name(m.group(1)), fold_name(m.group(2))
    if kind == "identity":
        emp = _EMPLOYER_RE.search(sentence)
        if emp and not _PAST_PERSONAL_RE.search(sentence):
            return "employer", fold_name(emp.group(1) or emp.group(2)), None
        home = _HOME_RE.search(sentence)
        if home and not _PAST_PERSONAL_RE.search(sentence):
            return "home", fold_name(home.group(1)), None
    if kind == "relationship":
        cue = next((mm for mm in mentions if mm.cue), None)
        if cue and cue.cue in ("manager", "boss", "supervisor", "director", "partner", "husband", "wife", "boyfriend", "girlfriend"):
            return f"relation:{cue.cue}", fold_name(cue.name), None
    if kind == "preference":
        pm = _PREFER_OVER_RE.search(sentence)
        if pm:
            obj = content_words(pm.group(1))
            head = obj[-1] if obj else fold_name(pm.group(1))
            return f"preference:{head}", fold_name(pm.group(1)), fold_name(pm.group(2))
    return None, None, None


def skippable(sentence: str) -> bool:
    """Requests to the assistant, placeholders, pasted code and header lines, and sentences whose
    subject is an unresolved pronoun."""
    if _PLACEHOLDER_RE.match(sentence.strip()) or _CODE_LINE_RE.match(sentence):
        return True
    if (_HEADER_LINE_RE.match(sentence) and len(sentence.split()) <= 12) or _LETTER_LINE_RE.match(sentence.strip()):
        return True
    bare = _LEAD_ADVERB_RE.sub("", sentence)
    if _REQUEST_RE.match(bare) and not _CORRECTION_RE.match(sentence):
        return True
    return bool(_ORPHAN_PRONOUN_RE.match(bare))


def small_talk(sentence: str, listeners: tuple[str, ...]) -> bool:
    """A sentence said to someone ("Wow, Caroline, that's gorgeous!", "Melanie, that photo's amazing!")
    or a bare reaction ("Thanks so much!"), with nothing in the first person: not a fact about anyone."""
    if _FIRST_PERSON_RE.search(sentence):
        return False
    if any(re.search(rf"(?:^|,\s*)\b{re.escape(name)}\b\s*(?:[,!.]+|$)", sentence) for name in listeners):
        return True
    return bool(_REACTION_RE.match(_LEAD_ADVERB_RE.sub("", sentence.strip(" ,"))))


#: Words of a reaction, not of a fact: "Melanie totally agrees, Caroline." says nothing to remember.
_REACTION_WORDS = frozenset(content_words(
    """wow woah yeah yep agree agrees agreed totally absolutely definitely awesome amazing great cool nice
    stoked glad sounds sound wonderful fantastic incredible lovely sweet thanks thank congrats""" ))


def substance(sentence: str, names: frozenset[str]) -> list[str]:
    """The sentence's content words without the people's names (who speaks, who is spoken to) and
    without words of a bare reaction: what a fact would have to say."""
    return [w for w in content_words(sentence) if w not in names and w not in _REACTION_WORDS]


def listeners_of(session: Session, owner: str | None) -> dict[str, tuple[str, ...]]:
    """Speaker → the names (full and first) of the others in the session: who a vocative can address."""
    people = sorted({w for t in session.turns if (w := speaker_name(t, owner))}
                    | {p for p in session.header.participants if p.lower() not in ("assistant", "user")})
    return {who: tuple(n for p in people if p != who for n in dict.fromkeys((p, p.split()[0]))) for who in people}


def is_subject_slot(slot: str | None) -> bool:
    """Slots that belong to one subject (employer, home, relations); others are global (locations)."""
    return bool(slot) and slot.startswith(_SUBJECT_SLOTS)


@dataclass
class _Speaker:
    """What one speaker's sentences are read against (extract)."""

    scan: _SessionScan
    who: str
    names: frozenset[str]  # content words of the names of the speaker and the listeners
    listeners: tuple[str, ...]
    topic: str | None  # the session's primary topic


def extract(session: Session, owner: str | None, first_turn: int = 1, known: list[EntityRef] | None = None) -> tuple[list[Fact], list[Entity]]:
    """Facts of the turns from `first_turn` on, and the typed entities they name; `known` types
    the names this session does not."""
    scan = _SessionScan(session, known or [])
    speakers = {speaker_name(t, owner) for t in session.turns} - {None}
    topic = scan.primary_topic(exclude=set(speakers))
    listeners = listeners_of(session, owner)
    facts: list[Fact] = []
    used: set[str] = set()
    for turn in session.turns:
        who = speaker_name(turn, owner)
        if turn.n < first_turn or who is None:
            continue
        observed = turn_date(turn, session)
        for image in _IMAGE_RE.finditer(turn.text):
            caption = clean_statement(image.group(1).strip().removeprefix("a photo of ").removeprefix("a photography of "))
            facts.append(Fact(kind="event", subject=who, statement=f"{who} shared a photo of {caption[0].lower()}{caption[1:]}",
                              first_turn=turn.n, last_turn=turn.n, observed=observed, confidence=0.6))
            used.add(who)
        if (turn.model_extra or {}).get("kind") == "how-to-answer":  # ChatGPT custom instructions: each one a preference
            facts += [Fact(kind="preference", subject=who, statement=clean_statement(f"{who}'s custom instructions on how to answer: {s}"),
                           first_turn=turn.n, last_turn=turn.n, observed=observed, confidence=0.9) for s in sentences(turn.text)[:ANSWER_RULES]]
            used.add(who)
            continue
        speaker = _Speaker(scan, who, frozenset(content_words(" ".join((who, *listeners[who])))), listeners[who], topic)
        for i, sentence in enumerate(sentences(_IMAGE_RE.sub("", turn.text))):
            mentions = scan.mentions[(turn.n, i)]
            fact = _sentence_fact(speaker, sentence, mentions, turn.n, observed)
            if fact is not None:
                used.add(fact.subject)
                used.update(m.name for m in mentions if scan.type_of(m.name))
                facts.append(fact)
    entities = [
        Entity(name=name, type=scan.type_of(name), aliases=sorted(scan.aliases.get(name, ())))
        for name in sorted(used)
        if scan.type_of(name)
    ]
    entities += [Entity(name=a.capitalize(), type="concept", description="activity") for a in sorted(scan.activities)]
    return facts, entities


_REMEMBER_RE = re.compile(r"^(?:please\s+)?(?:remember|note|keep in mind|don't forget|for the record|fyi)(?:\s+that)?[,:]?\s+(?=I\b|I'|my\b|we\b)", re.I)


def _sentence_fact(speaker: _Speaker, sentence: str, mentions: tuple[Mention, ...], turn_n: int, observed) -> Fact | None:
    """The fact one sentence states, or None (a question, small talk, nothing named, dated or placed)."""
    scan, who = speaker.scan, speaker.who
    sentence = _REMEMBER_RE.sub("", sentence)  # "Please remember I prefer pytest -q": the request is the fact
    if "?" in sentence or len(sentence.split()) < MIN_WORDS or _SECOND_PERSON_RE.search(sentence):
        return None
    if skippable(sentence) or small_talk(sentence, speaker.listeners):
        return None
    first_person = bool(_FIRST_PERSON_RE.search(sentence))
    dated = resolve_date(sentence, observed)
    located = bool(_LOCATION_RE.search(sentence))
    kind, confidence = _kind_of(sentence, first_person, mentions, dated is not None, located) or (None, 0.0)
    if kind is None:
        return None
    slot, value, replaces = _slot(sentence, kind, mentions)
    if len(substance(sentence, speaker.names)) < (2 if kind == "preference" or slot in ("home", "employer") else 3):
        return None  # "I live in Lisbon" says enough; "I have been there for four years" does not
    lead = next((m.name for m in mentions if m.start <= 4 and scan.type_of(m.name)), None)
    defined = _DEFINITION_RE.match(sentence)
    if first_person:
        subject, statement = who, third_person(sentence, who)
    elif lead:
        subject, statement = lead, sentence
    elif defined and defined.group(1) in scan.concepts:
        subject, statement = defined.group(1), sentence
    elif located or dated or any(scan.type_of(m.name) for m in mentions):
        subject, statement = (speaker.topic or who), sentence
    else:
        return None  # no named subject, nothing dated or placed: small talk, not a fact
    return Fact(
        kind=kind, subject=subject, statement=clean_statement(statement), first_turn=turn_n, last_turn=turn_n,
        observed=observed, event_date=dated[0] if dated else None, confidence=confidence, slot=slot, value=value,
        replaces=replaces,
        mentions=sorted({m.name for m in mentions if m.name != subject and scan.type_of(m.name)}
                        | {a.capitalize() for a in scan.activities if re.search(rf"\b{a}\b", sentence)}),
    )
