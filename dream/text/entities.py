"""Finding named things in text and resolving names to pages, without a model.

Names are runs of capitalised words; the type comes from the last word (Laboratory → organization,
Sprint → project, Workshop → event), from the words before the name ("in Kyoto" → place,
"my manager Greta Holm" → person), or from a known page. Resolution matches slugs, titles and
aliases after folding case and common abbreviations ("Sora City Lab" = "Sora City Laboratory").
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

from brain.layout import slugify
from dream.text.dates import MONTHS, WEEKDAYS

ORG_WORDS = frozenset(
    """laboratory lab labs coop co-op cooperative institute research university college school inc ltd llc gmbh corp
    corporation company foundation association agency council ministry department group studio studios bank hospital
    center centre museum library society network press club committee office team consultancy
    universidade universidad universität université università""".split()
)
PROJECT_WORDS = frozenset("sprint project program programme initiative study campaign pilot projekt projet proyecto progetto projeto".split())
EVENT_WORDS = frozenset("workshop conference summit meetup festival wedding party concert parade retreat hackathon".split())
PLACE_WORDS = frozenset("city station street park river mountain lake island prefecture county province region".split())
PLACE_PREPS = frozenset("in to from near visit visited visiting moved around across".split())
_QUOTES = frozenset("\"“”‘’'")
EMPLOY_WORDS = frozenset("job jobs work works working worked intern interns interned interning internship employed hired".split())
PERSON_CUES = re.compile(
    r"\b(?:[Mm]y|[Oo]ur|[Hh]is|[Hh]er|[Tt]heir)\s+(manager|boss|colleague|coworker|co-worker|friend|sister|brother|mother|father|mom|dad|"
    r"partner|husband|wife|son|daughter|cousin|aunt|uncle|grandma|grandpa|mentor|teacher|neighbou?r|roommate|"
    r"boyfriend|girlfriend|contact|director|supervisor|client)"
    r"(?:\s+(?:at|from|in|with)\s+(?:the\s+)?[A-Z][\w-]*(?:\s+[A-Z][\w-]*)*)?\s*(?:\bis\s+|,\s*)?([A-Z][a-z]+(?:\s+[A-Z][a-z]+)?)"
)
_NEVER_NAMES = frozenset(
    """i i'm i've i'll i'd we you he she they it my our your his her their this that these those yes no thanks thank
    hi hello hey ok okay sure dear mr mrs ms dr prof yeah yep yup nope wow oh omg lol haha aww awesome cool congrats
    gosh whoa ooh hmm ah ugh yay yesterday today tomorrow tonight""".split()
) | frozenset(MONTHS) | frozenset(WEEKDAYS)
_NOT_NAMES = _NEVER_NAMES | frozenset(  # and, at a sentence's start, words capitalised only for that
    """the a an its so and but or also can could would should will what how why when where who which let please great
    good nice well just then there here if as at on in of for to by with from after before congratulations sounds
    maybe perhaps done noted here's that's it's what's there's do does did is are was were have has had be been
    being not don't big new first second third next last one two three best regards sincerely cheers love hope glad
    sorry amazing absolutely exactly right true totally definitely really same make use keep send add write draft
    include remember mention give take am""".split()
    # German articles: a sentence starting "Die Besprechung …" names nothing (German capitalises every noun)
) | frozenset("der die das den dem des ein eine einen einem einer".split())
_CAP_RUN_RE = re.compile(r"\b([A-Z][\w’'&-]*(?:\s+(?:of|de|la|du|do|da|dos|del|di|von|van|for)\s+[A-Z][\w’'&-]*|\s+[A-Z][\w’'&-]*)*)")
_TYPE_WORDS = ORG_WORDS | PROJECT_WORDS
_NOT_PLACE_RE = re.compile(r"^(?:[A-Z]{2,5}|\w+(?:ese|ish|ian))$")
_ABBREV_FOLD = {"lab": "laboratory", "labs": "laboratory", "co-op": "coop", "cooperative": "coop", "univ": "university",
                "dept": "department", "inst": "institute", "intl": "international", "&": "and"}


@dataclass(frozen=True)
class Mention:
    name: str
    type: str | None  # page type, or None when only a weak guess
    start: int
    cue: str | None = None  # relationship cue for people ("manager")


@dataclass
class Known:
    """A known entity: its page slug, title, type and every name it goes by."""

    slug: str
    title: str
    type: str
    names: set[str] = field(default_factory=set)


@functools.lru_cache(maxsize=131072)
def fold_name(name: str) -> str:
    """Case-, punctuation- and abbreviation-folded key of a name ('Sora City Lab' → 'sora city laboratory')."""
    name = re.sub(r"^(?:the|a|an)\s+", "", name.strip(), flags=re.I)
    tokens = re.findall(r"[\w&-]+", name.lower().replace("’", "'").replace("'s", ""))
    return " ".join(_ABBREV_FOLD.get(t, t) for t in tokens)


def acronym(name: str) -> str:
    return "".join(w[0] for w in re.findall(r"[A-Za-z][\w-]*", name) if w[0].isupper() or len(w) > 3).upper()


def guess_type(name: str) -> str | None:
    last = fold_name(name).split(" ")[-1] if name else ""
    if last in ORG_WORDS or last in {_ABBREV_FOLD.get(w, w) for w in ORG_WORDS}:
        return "organization"
    if last in PROJECT_WORDS:
        return "project"
    if last in EVENT_WORDS:
        return "event"
    if last in PLACE_WORDS:
        return "place"
    first = fold_name(name).split(" ")[0] if " " in name else ""  # "Project Apollo", "Projekt Sonnenblume", "Universidade do Porto"
    if first in PROJECT_WORDS:
        return "project"
    return "organization" if first in ORG_WORDS else None


# Summarize and attach both scan every sentence of a session, one after the other.
@functools.lru_cache(maxsize=16384)
def find_mentions(text: str) -> tuple[Mention, ...]:
    """Capitalised names in a sentence with a type guess; sentence-initial stopwords are skipped."""
    out: list[Mention] = []
    cues = {m.group(2): m.group(1).lower() for m in PERSON_CUES.finditer(text)}
    for m in _CAP_RUN_RE.finditer(text):
        tokens = m.group(1).rstrip(".’'-").split()
        start = m.start(1)
        # Drop leading words that are capitalised only because they start a sentence (or never name).
        at_start = not text[:start].strip() or text[:start].rstrip()[-1:] in ".!?:;\"'(—–-"
        while tokens and tokens[0].lower().strip("’'") in (_NOT_NAMES if at_start else _NEVER_NAMES):
            start += len(tokens[0]) + 1
            tokens = tokens[1:]
        # A word that never names ("I'm", "Yeah") ends the name where it stands.
        cut = next((i for i, t in enumerate(tokens) if i and t.lower().strip("’'") in _NEVER_NAMES), len(tokens))
        tokens = tokens[:cut]
        while tokens and tokens[-1].lower() in ("of", "de", "and", "for", "&", "la", "du", "do", "da", "dos", "del", "di", "von", "van"):
            tokens = tokens[:-1]
        if not tokens:
            continue
        name = " ".join(tokens).removesuffix("'s").removesuffix("’s")
        if len(name) < 2 or name.isupper() and len(name) > 6:
            continue
        kind = guess_type(name)
        before = text[max(0, start - 12) : start].lower().split()
        if kind is None and name in cues:
            kind = "person"
        elif kind is None and len(before) >= 2 and before[-1] in ("at", "for", "by") and before[-2] in EMPLOY_WORDS:
            kind = "organization"  # "my job at Door Dash", "I intern at Blue Cedar": where one works
        elif kind is None and before and before[-1] in PLACE_PREPS and len(tokens) <= 2 and not _NOT_PLACE_RE.match(name):
            kind = "place"
        elif kind is None and text[start - 1 : start] in _QUOTES and text[start + len(name) : start + len(name) + 1] in _QUOTES:
            kind = "concept"  # a quoted name is a title: "Summer Sounds" (a band), "Becoming Nicole" (a book)
        elif kind is None and len(tokens) == 2 and all(t[0].isupper() and t[1:].islower() for t in tokens):
            kind = "person"
        out.append(Mention(name=name, type=kind, start=start, cue=cues.get(name)))
    return tuple(out)


class Resolver:
    """Maps names to known entities; learns new ones as the run goes (deterministically)."""

    def __init__(self) -> None:
        self.by_key: dict[str, Known] = {}
        self.by_slug: dict[str, Known] = {}
        self._acronyms: dict[str, Known] = {}
        self._stems: dict[str, Known] = {}  # "sapphir mobility" → the known "Sapphir Mobility Coop"
        self.version = 0  # bumped on every change, so callers can cache derived lists

    def add(self, slug: str, title: str, type_: str, aliases: list[str] | tuple[str, ...] = ()) -> Known:
        known = self.by_slug.get(slug)
        if known is None:
            known = Known(slug=slug, title=title, type=type_)
            self.by_slug[slug] = known
        for name in (title, slug.replace("-", " "), *aliases):
            self.alias(known, name)
        return known

    def alias(self, known: Known, name: str) -> None:
        key = fold_name(name)
        if key and key not in self.by_key:
            self.by_key[key] = known
            head, _, last = key.rpartition(" ")
            if len(head.split()) >= 2 and last in _TYPE_WORDS:
                self._stems.setdefault(head, known)
        if name not in known.names:
            known.names.add(name)
            self.version += 1
        acr = acronym(known.title)
        if len(acr) >= 3:
            self._acronyms.setdefault(acr, known)

    def lookup(self, name: str) -> Known | None:
        key = fold_name(name)
        if not key:
            return None
        if key in self.by_key:
            return self.by_key[key]
        if name.isupper() and name in self._acronyms:
            return self._acronyms[name]
        # "Sapphir Mobility" → "Sapphir Mobility Coop": a known name extending this one by a type word.
        return self._stems.get(key)

    def slug_for(self, name: str) -> str:
        """A fresh, unused slug for a new entity."""
        base = slugify(re.sub(r"^(?:the|a|an)\s+", "", name, flags=re.I), fallback="entity")
        slug, i = base, 2
        while slug in self.by_slug:
            slug, i = f"{base}-{i}", i + 1
        return slug
