"""The `offline` backend: deterministic heuristics, no model, no network (dream/text/).

Extractive summaries, rule-based facts, templated pages and a lexical verifier; for `dream eval
--answer`, an extractive reader and a lexical judge. Same inputs give the same outputs byte for byte. What it cannot do is listed in docs/offline.md.
"""

from __future__ import annotations

import functools
import re
from typing import ClassVar

from dream.backends.base import (
    AnswerDraft,
    AnswerRequest,
    ExtractRequest,
    FactBatch,
    JudgeRequest,
    Judgement,
    SECTIONS,
    ModelBackend,
    PageDraft,
    PageFact,
    SessionSummary,
    SummarizeRequest,
    Verdict,
    VerifyRequest,
    WritePageRequest,
)
from dream.text import facts as facts_mod
from dream.text.summarize import summarize
from dream.text.themes import THEMES, theme_of
from dream.text.words import content_words, sentences

#: Share of a claim's content words that must appear in its cited turns (docs/offline.md).
SUPPORT_THRESHOLD = 0.5
_LINK_OR_CITE_RE = re.compile(r"\[\[[^\]]*\]\]|\[cite:\d+\]")


class OfflineBackend(ModelBackend):
    name: ClassVar[str] = "offline"

    def summarize(self, req: SummarizeRequest) -> SessionSummary:
        return summarize(req.session, req.owner, req.first_turn)

    def extract_facts(self, req: ExtractRequest) -> FactBatch:
        found, entities = facts_mod.extract(req.session, req.owner, req.first_turn, known=req.known)
        return FactBatch(facts=found, entities=entities)

    def write_page(self, req: WritePageRequest) -> PageDraft:
        # Dream sends at most PAGE_SECTION_FACTS facts per section (dream.phases.update): all are shown.
        names = {n: s for n, s in req.names.items() if s != req.slug}

        def bullet(when: str, f: PageFact) -> str:
            return f"- {when}: {link_names(f.statement, names)} {_cites(f)}"

        lines = [f"# {req.title}", ""]
        sections = self._sections(req)
        for heading, facts in sections:
            if heading in _BY_OBSERVED:
                shown = [bullet(f.observed.isoformat(), f) for f in sorted(facts, key=lambda f: f.observed)]
            else:
                dated = sorted(facts, key=lambda f: (f.event_date or f.observed, f.observed))
                shown = [bullet((f.event_date or f.observed).isoformat(), f) for f in dated]
            lines += [f"## {heading}", *shown, *_older(req, heading), ""]
        if req.history:
            history = sorted(req.history, key=lambda f: (f.until, f.observed), reverse=True)
            lines += ["## History", *(bullet(f"Until {f.until.isoformat()}", f) for f in history), *_older(req, "History"), ""]
        if req.mentioned:
            mentioned = [bullet(f.observed.isoformat(), f) for f in req.mentioned]
            lines += ["## Mentioned in", *mentioned, *_backlinks(req, "Mentioned in"), ""]
        if req.related:
            related = [f"- [[{slug}|{title}]]" if title != slug else f"- [[{slug}]]" for slug, title in req.related]
            lines += ["## Related", *related, *_backlinks(req, "Related"), ""]
        return PageDraft(summary=page_summary(req, sections), body="\n".join(lines).rstrip("\n") + "\n")

    def page_section(self, page_type: str, kind: str, statement: str) -> tuple[str, bool]:
        """A person's identity and event facts go under the life theme they are about (Family, Pets,
        Hobbies and activities, …) when they have one; themes are dated like the Timeline."""
        if page_type == "person" and kind in _THEMED_KINDS and not _SHARED_PHOTO_RE.search(statement):
            theme = theme_of(statement)
            if theme:
                return theme, True
        return super().page_section(page_type, kind, statement)

    def _sections(self, req: WritePageRequest) -> list[tuple[str, list[PageFact]]]:
        """(heading, facts) in page order: About, the life themes, then the other kinds' sections."""
        grouped: dict[str, list[PageFact]] = {}
        for f in req.current:
            grouped.setdefault(self.page_section(req.type, f.kind, f.statement)[0], []).append(f)
        return [(h, grouped[h]) for h in _SECTION_ORDER if h in grouped]

    def verify(self, req: VerifyRequest) -> Verdict:
        return lexical_verdict(req.claim, req.evidence)

    def answer(self, req: AnswerRequest) -> AnswerDraft:
        from dream.text.answer import answer  # the eval's reader: not loaded by Dream runs

        return answer(req)

    def judge(self, req: JudgeRequest) -> Judgement:
        from dream.text.answer import judge

        return judge(req)


#: Sections whose bullets carry the date a fact was observed (the others: the event's own date).
_BY_OBSERVED = frozenset(h for h, _ in SECTIONS if h != "Timeline")
#: Kinds a person's page sorts into life themes (THEMES); the rest keep their section.
_THEMED_KINDS = frozenset(("identity", "event"))
_THEME_HEADINGS = frozenset(h for h, _ in THEMES)
_SHARED_PHOTO_RE = re.compile(r"^\S.* shared a photo of ")  # what a picture showed, not what the person does
#: Page order: About, then the themes, then the sections of the kinds that are not themed.
_SECTION_ORDER: tuple[str, ...] = ("About", *(h for h, _ in THEMES), *(h for h, _ in SECTIONS[1:]))


def _older(req: WritePageRequest, heading: str) -> list[str]:
    """The bullet saying how many facts of a section are left out (they stay in the notes)."""
    hidden = req.hidden.get(heading, 0)
    return [f"- … {hidden} older fact(s) are in notes/{req.slug}/"] if hidden > 0 else []


def _backlinks(req: WritePageRequest, heading: str) -> list[str]:
    hidden = req.hidden.get(heading, 0)
    return [f"- … and {hidden} more (brain backlinks {req.slug})"] if hidden > 0 else []


def _cites(fact: PageFact) -> str:
    return "".join(f"[cite:{n}]" for n in fact.cites)


def page_summary(req: WritePageRequest, sections: list[tuple[str, list[PageFact]]]) -> str:
    """One line for the index: what the thing is ("X is a …"), else who they are now (employer, home),
    else — for a person — the life themes their page covers, else their newest fact."""
    names = (req.title, *req.aliases)
    about = [f for f in req.current if f.kind in ("identity", "correction")]
    defining = [f for f in req.current if re.search(r"\b(?:is an?|is the|are|means)\b", f.statement)]
    own = [f for f in defining if re.match(rf"(?:{'|'.join(map(re.escape, names))}) (?:is an?|is the|means)\b", f.statement)]
    if req.type == "person":  # "Melanie's kids are excited" does not define Melanie
        defining = []
    roles = [f for f in req.current if f.slot in ("employer", "home")]
    if req.type == "project":  # a coding project's latest request says what it is about now
        roles += sorted((f for f in req.current if f.kind == "event" and f.statement.startswith("Asked: ")), key=lambda f: f.observed)
    for pool, index in ((own, 0), (roles, -1), (defining, 0)):
        if pool:
            return _short(pool[index].statement)
    themes = [h.lower() for h, facts in sections if h in _THEME_HEADINGS and facts]
    if themes:  # a person known through many small facts: say what the page covers
        return _short(f"{req.title}: " + ", ".join(themes[:4]) + (" and more" if len(themes) > 4 else "") + ".")
    for pool in (about, req.current):
        if pool:
            return _short(pool[-1].statement)
    if req.mentioned:  # a page known only from others' facts: the newest says why it is here
        return _short(max(req.mentioned, key=lambda f: f.observed).statement)
    return f"{req.type.capitalize()} mentioned in sessions."


def _short(text: str) -> str:
    return text if len(text) <= 200 else text[:197].rsplit(" ", 1)[0] + " …"


def link_names(statement: str, names: dict[str, str]) -> str:
    """Turn the first mention of each known name into a wikilink (longest names win)."""
    if not names:
        return statement
    # Only names the statement holds can match.
    present = sorted((n for n in names if n in statement), key=lambda n: (-len(n), n))
    if not present:
        return statement
    out, last, seen = [], 0, set()
    for start, end in mentions(statement, present):
        name = statement[start:end]
        if name in seen:
            continue
        seen.add(name)
        out += [statement[last:start], f"[[{names[name]}|{name}]]"]
        last = end
    return "".join(out) + statement[last:] if out else statement


def mentions(text: str, names: list[str]) -> list[tuple[int, int]]:
    """Where `names` (longest first) are mentioned in `text`, as the regex
    `(?<![\\w\\[|])(?:name1|name2|…)(?![\\w\\]])` would find them, left to right without overlap: not
    inside a word, nor inside a `[[link]]`. Found with str.find: compiling that alternation afresh
    for each statement's names cost more than the rest of the offline backend's page writing."""
    starts = sorted({i for name in names for i in _find_all(text, name)})
    found, pos = [], 0
    for i in starts:
        if i < pos or (i and _blocks_before(text[i - 1])):
            continue
        for name in names:
            end = i + len(name)
            if text.startswith(name, i) and not (end < len(text) and _blocks_after(text[end])):
                found.append((i, end))
                pos = end
                break
    return found


def _find_all(text: str, name: str):
    i = text.find(name)
    while i >= 0:
        yield i
        i = text.find(name, i + 1)


def _blocks_before(ch: str) -> bool:
    return ch.isalnum() or ch in "_[|"  # \w (str.isalnum is exactly re's \w, bar "_"), or a link's inside


def _blocks_after(ch: str) -> bool:
    return ch.isalnum() or ch in "_]"


_NEGATION_RE = re.compile(r"^(?:not|no|never|neither|nor|nobody|nothing|none|cannot|\w+n[’']t)$", re.I)
_ANSWER_NO_RE = re.compile(r"^\s*(?:[^:\n]{1,40}:\s+)?(?:no|nope)\s*[,.!:;—–-]+\s*", re.I)  # "Nadia: No — …" answers, denies nothing
NEGATION_REACH = 3  # words after "not", "never", "don't" that it denies


def _negated_words(sentence: str) -> frozenset[str]:
    """The content words a negation in the sentence denies ("I no longer work at X": longer, work),
    within its clause ("Can't wait! [image: …]" denies nothing of the image)."""
    out = set()
    for clause in re.split(r"[.,;:!?()\[\]—–]+", _ANSWER_NO_RE.sub("", sentence)):
        tokens = re.findall(r"[\w’'-]+", clause)
        out.update(w for i, t in enumerate(tokens) if _NEGATION_RE.match(t) for w in content_words(" ".join(tokens[i + 1 : i + 1 + NEGATION_REACH])))
    return frozenset(out)


@functools.lru_cache(maxsize=16384)  # the notes of a topic cite the same turns again and again
def _evidence_words(text: str) -> frozenset[str]:
    return frozenset(content_words(text))


def lexical_verdict(claim: str, evidence: list[str]) -> Verdict:
    """Supported when at least SUPPORT_THRESHOLD of the claim's content words occur in the evidence."""
    text = _LINK_OR_CITE_RE.sub(lambda m: m.group(0).split("|")[-1].strip("[]") if m.group(0).startswith("[[") else "", claim)
    words = set(content_words(text))
    if not evidence:
        return Verdict(label="unsupported", score=0.0, reason="no evidence text: the citation does not resolve")
    if not words:
        return Verdict(label="supported", score=1.0, reason="no content words to check")
    found = set().union(*(_evidence_words(e) for e in evidence))  # words never span the " " of a join
    score = len(words & found) / len(words)
    missing = sorted(words - found)
    if score >= SUPPORT_THRESHOLD:
        said = max((x for e in evidence for x in sentences(e)), key=lambda x: len(words & _evidence_words(x)), default="")
        flipped = sorted((_negated_words(text) ^ _negated_words(said)) & words & _evidence_words(said))
        if flipped:
            return Verdict(label="contradicted", score=round(score, 3),
                           reason=f"the cited turn and the claim differ on a negation of {', '.join(flipped[:3])}: {said[:80]!r}")
        return Verdict(label="supported", score=round(score, 3), reason=f"{len(words & found)}/{len(words)} content words in the cited turns")
    return Verdict(label="unsupported", score=round(score, 3), reason=f"only {len(words & found)}/{len(words)} content words in the cited turns; missing: {', '.join(missing[:6])}")
