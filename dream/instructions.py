"""The owner's standing instructions (`.dream/instructions.md`) and deletion log (`.dream/forget.md`).

Only two parts change what Dream does mechanically: bullets under a "Never record" heading
(topics whose sentences are dropped before any backend sees them) and the names in forget.md
(pages Dream must never re-create). The whole text also goes to model backends as guidance.
"""

from __future__ import annotations

import re

from pydantic import ConfigDict, Field

from brain.layout import slugify
from brain.model import Model, empty_list
from dream.text.words import STOPWORDS, stem

#: A never-record topic word brings its everyday vocabulary along.
TOPIC_WORDS: dict[str, tuple[str, ...]] = {
    "health": ("health", "migraine", "headache", "illness", "ill", "sick", "sickness", "doctor", "diagnosis", "diagnosed",
               "medication", "medicine", "prescription", "hospital", "surgery", "therapy", "therapist", "symptom",
               "pregnant", "pregnancy", "cancer", "depression", "anxiety", "disease", "injury", "covid", "flu", "fever"),
    "medical": ("medical", "doctor", "diagnosis", "medication", "hospital", "surgery", "symptom"),
    "money": ("salary", "debt", "loan", "mortgage", "bank", "income"),
    "salary": ("salary", "pay", "income", "wage"),
    "religion": ("religion", "religious", "church", "mosque", "temple", "faith", "prayer"),
    "politics": ("politics", "political", "vote", "voted", "election", "party"),
    "sister": ("sister",), "brother": ("brother",), "family": ("family", "mother", "father", "sister", "brother", "parents"),
}
_HANDLED_ELSEWHERE = re.compile(r"\b(instruction|secret|password|api key|token|credential)", re.I)
_GENERIC = frozenset(
    "detail details private matter matters anyone anything else information info thing things stuff record personal "
    "topic topics about her his their own such even when pasted session sessions owner owners user people".split()
)
_FORGET_LINE_RE = re.compile(r"^\s*[-*]\s+(?:\d{4}-\d{2}-\d{2}:?\s+)?(?:\[\[)?([^\]|#\n]+?)(?:\|[^\]]*)?(?:\]\])?(?:\s+[—–(:-].*)?\s*$")


class Instructions(Model):
    model_config = ConfigDict(extra="forbid", frozen=True)
    text: str = ""
    never_record: list[str] = Field(default_factory=empty_list)  # stemmed trigger words
    forget: list[str] = Field(default_factory=empty_list)  # slugs never to re-create

    def blocks(self, sentence: str) -> bool:
        """True when a sentence touches a never-record topic."""
        if not self.never_record:
            return False
        words = {stem(w) for w in re.findall(r"[A-Za-z]+", sentence.lower())}
        return any(w in words for w in self.never_record)


def _section(text: str, heading: str) -> list[str]:
    lines, inside = [], False
    for line in text.splitlines():
        if line.startswith("#"):
            inside = line.lstrip("#").strip().lower().startswith(heading)
            continue
        if inside and line.strip().startswith(("-", "*")):
            lines.append(line.strip()[1:].strip())
    return lines


def parse_instructions(text: str, forget_text: str = "") -> Instructions:
    triggers: set[str] = set()
    for bullet in _section(text, "never record"):
        if _HANDLED_ELSEWHERE.search(bullet):
            continue  # secrets are redacted and planted instructions quarantined by the safety pass
        for word in re.findall(r"[A-Za-z]+", bullet):
            if word[0].isupper() and word.lower() not in TOPIC_WORDS and not word.isupper() and bullet.index(word) > 0:
                continue  # names inside a bullet ("Nadia's") are not topics
            low = word.lower()
            if low in _GENERIC or low in STOPWORDS or len(low) < 3:
                continue
            triggers.add(stem(low))
            triggers.update(stem(w) for w in TOPIC_WORDS.get(low, ()))
    forget = []
    for line in forget_text.splitlines():
        m = _FORGET_LINE_RE.match(line)
        if m:
            forget.append(slugify(m.group(1).strip()))
    return Instructions(text=text, never_record=sorted(triggers), forget=sorted(set(forget)))
