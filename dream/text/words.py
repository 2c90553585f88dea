"""Sentences, words and first-person → third-person rewriting for extractive compilation."""

from __future__ import annotations

import functools
import re

_SENT_SPLIT_RE = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])")
_WORD_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9'’-]*")
_ABBREV = ("Mr.", "Mrs.", "Ms.", "Dr.", "Prof.", "St.", "e.g.", "i.e.", "vs.", "etc.", "Inc.", "Ltd.", "Co.")

STOPWORDS = frozenset(
    """a about above after again against all also am an and any are aren't as at be because been before being
    below between both but by can can't cannot could couldn't did didn't do does doesn't doing don't down during each
    few for from further had hadn't has hasn't have haven't having he he'd he'll he's her here here's hers herself him
    himself his how how's i i'd i'll i'm i've if in into is isn't it it's its itself just let's me more most mustn't my
    myself no nor not now of off on once only or other ought our ours ourselves out over own really same shan't she
    she'd she'll she's should shouldn't so some such than that that's the their theirs them themselves then there
    there's these they they'd they'll they're they've this those through to too under until up very was wasn't we we'd
    we'll we're we've were weren't what what's when when's where where's which while who who's whom why why's will
    with won't would wouldn't yes you you'd you'll you're you've your yours yourself yourselves yeah oh ok okay
    hey hi hello thanks thank lot lots got get gets getting go going gone went much many well like also still
    one two three thing things something anything way really pretty quite sure""".split()
)


# Each turn is split by sanitize, summarize and attach (twice) in a row: one split serves all.
@functools.lru_cache(maxsize=8192)
def sentences(text: str) -> tuple[str, ...]:
    """Split prose into sentences; keeps abbreviations like 'Dr.' inside one sentence."""
    protected = text
    for i, abbr in enumerate(_ABBREV):
        protected = protected.replace(abbr, f"\x00{i}\x00")
    out = []
    for chunk in re.split(r"\n+", protected):
        for part in _SENT_SPLIT_RE.split(chunk.strip()):
            if "\x00" in part:  # only a protected abbreviation (or a NUL of the text) needs the loop
                for i, abbr in enumerate(_ABBREV):
                    part = part.replace(f"\x00{i}\x00", abbr)
            part = part.strip()
            if part:
                out.append(part)
    return tuple(out)


def words(text: str) -> list[str]:
    return _WORD_RE.findall(text)


@functools.lru_cache(maxsize=65536)  # a pure function of a word; conversations reuse few words a lot
def stem(word: str) -> str:
    """A light suffix stripper, enough to match 'workshops'/'workshop', 'prefers'/'prefer'."""
    w = word.lower().replace("’", "'").removesuffix("'s")
    for suffix in ("ies", "ing", "ed", "es", "s"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            w = w[: -len(suffix)] + ("y" if suffix == "ies" else "")
            break
    return w


# Each sentence is weighed by summarize twice and by attach once, and each claim and turn by the
# verifier: one pass over a text serves them all.
@functools.lru_cache(maxsize=65536)
def content_words(text: str) -> tuple[str, ...]:
    """Lower-cased, stemmed words that carry meaning (stopwords and one-letter words dropped)."""
    return tuple(stem(w) for w in words(text) if w.lower() not in STOPWORDS and len(w) > 1)


def content_key(text: str) -> str:
    """`content_words` joined by spaces: statements with the same key say the same thing."""
    return " ".join(content_words(text))


_IRREGULAR_3RD = {"have": "has", "do": "does", "go": "goes", "be": "is", "am": "is"}
_NO_AGREEMENT = frozenset("was were will would can could should might must may shall did had".split())
_ADVERBS = frozenset(
    """just also still really never always recently finally already often usually sometimes actually only even now
    totally definitely truly honestly absolutely kinda sorta probably seriously literally currently mostly""".split()
)
_SLANG_3RD = {"wanna": "wants to", "gotta": "has to", "gonna": "is going to"}
_PAST_IRREGULAR = frozenset(
    """went was were had did got made took saw came felt thought said told found gave left met began bought brought
    ran wrote read kept knew heard lost sold sent spent built won taught caught fell led paid put set sat stood
    understood became chose drove ate flew forgot grew hung hid held hurt let lit meant rode rang rose shook shot
    shut sang slept spoke stole swam threw tore wore woke""".split()
)


_CONTRACTIONS_3RD = {"don't": "doesn't", "haven't": "hasn't", "aren't": "isn't", "am": "is", "'m": "is"}


def _third_person_verb(verb: str) -> str:
    low = verb.lower().replace("’", "'")
    if low in _SLANG_3RD:
        return _SLANG_3RD[low]
    if "'" in low:
        return _CONTRACTIONS_3RD.get(low, verb)
    if low in _NO_AGREEMENT or low in _PAST_IRREGULAR or not low.isalpha():
        return verb
    if low.endswith("ed") and not low.endswith("eed"):
        return verb
    if low in _IRREGULAR_3RD:
        return _IRREGULAR_3RD[low]
    if low.endswith(("s", "sh", "ch", "x", "z", "o")):
        return verb + "es"
    if low.endswith("y") and len(low) > 2 and low[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


_MY_X_AND_RE = re.compile(r"\b(?:[Mm]y|[Oo]ur)\s+\w+(?:\s+\w+)?\s+(?:and|&)\s+$")
_THEY_VERB = {"am": "are", "was": "were", "wasn't": "weren't", "wasn’t": "weren’t"}
_CONTRACTED = {"m": ("is", "'re"), "ve": ("has", "'ve"), "ll": ("will", "'ll"), "d": ("would", "'d")}


_FIRST_PERSON_RE = re.compile(
    rf"\bI['’](?P<contracted>m|ve|ll|d)\b"
    rf"|\bI (?P<adverb>(?:{'|'.join(sorted(_ADVERBS))}) )?(?P<verb>\w+(?:['’]t)?)"
    r"|\b(?P<i>I)\b|\b(?P<my>[Mm]y)\b|\b(?P<myself>myself)\b|\b(?P<me>me)\b"
)


def third_person(sentence: str, subject: str) -> str:
    """Rewrite a first-person sentence about `subject`: 'I work at X' → 'Nadia works at X'.

    The first reference names the subject; later ones are "they", "their", "them" ('Losing my job
    gave me the push I needed' → 'Losing Jon's job gave them the push they needed'), so a page line
    does not repeat a name five times. Only the speaker's own pronouns change; 'we'/'our' are kept
    (they include others).
    """
    named = False

    def _swap(m: re.Match) -> str:
        nonlocal named
        # "my kids and I went": "they" would be the kids; the subject is named again.
        first, named = not named or bool(_MY_X_AND_RE.search(m.string[: m.start()])), True
        if m.group("contracted"):
            full, short = _CONTRACTED[m.group("contracted")]
            return f"{subject} {full}" if first else f"they{short}"
        if m.group("verb"):
            adverb, verb = m.group("adverb") or "", m.group("verb")
            if first:
                return f"{subject} {adverb}{_third_person_verb(verb)}"
            return f"they {adverb}{_THEY_VERB.get(verb.lower(), verb)}"
        if m.group("i"):
            return subject if first else "they"
        if m.group("my"):
            return f"{subject}'s" if first else "their"
        if m.group("myself"):
            return "themself"
        return subject if first else "them"

    kept: list[str] = []

    def _mask(m: re.Match) -> str:
        kept.append(m.group(0))
        return f"\x00{len(kept) - 1}\x00"

    # URLs, paths, addresses and code are quoted as written: "example.me" stays, it is no pronoun.
    masked = _TECHNICAL_RE.sub(_mask, sentence)
    text = _FIRST_PERSON_RE.sub(_swap, masked)
    text = re.sub(r"\x00(\d+)\x00", lambda m: kept[int(m.group(1))], text)
    return text[0].upper() + text[1:] if text else text


_TECHNICAL_RE = re.compile(r"`[^`]*`|\S*(?:://|[/\\@]|\w\.\w)\S*")


def clean_statement(text: str, limit: int = 300) -> str:
    """One line, trimmed to `limit` characters at a word boundary, ending with a full stop."""
    text = " ".join(text.split()).strip()
    if len(text) > limit:
        text = text[:limit].rsplit(" ", 1)[0].rstrip(",;:") + " …"
    if text and text[-1] not in ".!?…":
        text += "."
    return text
