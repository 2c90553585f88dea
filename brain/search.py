"""`brain search`: hybrid ranking of page statements, memory cards, session summaries and raw turns.

Lexical BM25 (SQLite FTS5) and dense cosine similarity (`brain.embed`) each rank the chunks;
reciprocal rank fusion merges them (with a third list for the members of a kind the query names,
`brain.thesaurus`), and the fused score is adjusted for confidence, who spoke, recency and the
conversation around a matching turn. docs/context.md gives every weight and what it was measured
on. Search degrades instead of failing: hybrid → dense (no FTS5, or no words to match) → lexical
(no embedding model) → recency (neither); `SearchResult.mode` says which ran.
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import ConfigDict, Field

from brain.chunks import KINDS, Chunk
from brain.model import Model, empty_list
from brain.search_index import IndexStats, Light, SearchIndex
from brain.thesaurus import members

if TYPE_CHECKING:
    from brain.embed import Embedder

Mode = Literal["hybrid", "dense", "lexical", "recency"]
RRF_K = 20
POOL = 200  # candidates taken from each ranker before fusion
RECENCY_WEIGHT = 0.10
DENSE_WEIGHT = 0.5
EXPANSION_WEIGHT = 0.5
REPLY_WEIGHT = 0.5
PROMPT_WEIGHT = 0.2
CONVERSATION_POOL = 100  # the best turns whose neighbours are raised
NEIGHBOUR_CAP = 0.99  # a turn raised only by its neighbour stays just below it
SUPERSEDED_FACTOR = 0.5
NAME_ONLY = 0.3  # a hit that matched only the names of the query's people
ASSISTANT_FACTOR = 0.5  # a Brain is memory of people: what they said outranks an assistant's reply
SPEAKER_FACTOR = 2.5  # a turn by a person the query names
OTHER_PERSON = 0.5  # a note or page about another person than the query names
_WORD_RE = re.compile(r"[^\W_]+(?:'[^\W_]+)?", re.UNICODE)
STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has have
    having he her here hers herself him himself his how i if in into is it its itself just me more most my
    myself no nor not now of off on once only or other our ours ourselves out over own same she should so
    some such than that the their theirs them themselves then there these they this those through to too
    under until up very was we were what when where which while who whom why will with would you your
    yours yourself yourselves ever also s t don didn doesn isn wasn weren won kind recently lately currently nowadays""".split()
)


class SearchHit(Model):
    """One ranked chunk, with the ranks and words that got it there."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    ref: str
    kind: str
    path: str
    title: str
    text: str
    cites: list[str]
    date: str | None
    confidence: float | None
    meta: dict
    score: float
    lexical_rank: int | None = None
    dense_rank: int | None = None
    matched: list[str] = Field(default_factory=empty_list)
    near: str | None = None  # the matching turn this one answers or prompts (conversation boost)

    def why(self) -> str:
        """A short reason: which rankers found it, at which rank, on which words."""
        parts = []
        if self.lexical_rank:
            words = f" on {', '.join(self.matched[:4])}" if self.matched else ""
            parts.append(f"bm25 #{self.lexical_rank}{words}")
        if self.dense_rank:
            parts.append(f"dense #{self.dense_rank}")
        if self.near:
            parts.append(f"next to {self.near.removeprefix('session:')}")
        return "; ".join(parts) or "recent"

    def brief(self) -> str:
        """`why()` in a few words, for a memory card's line: the words matched, `dense`, `next to t4`."""
        parts = [", ".join(self.matched[:3])] if self.matched else ["bm25"] if self.lexical_rank else []
        parts += ["dense"] if self.dense_rank else []
        parts += [f"next to {self.near.rpartition('#')[2]}"] if self.near else []
        return "; ".join(parts) or "recent"


class SearchResult(Model):
    model_config = ConfigDict(extra="forbid", frozen=True)
    query: str
    mode: Mode
    hits: list[SearchHit]
    notes: list[str] = Field(default_factory=empty_list)  # why the mode is not hybrid, index rebuilt, …
    index: IndexStats


def query_terms(text: str) -> list[str]:
    """Content words of a query, lower case, in order, without duplicates or stopwords."""
    out: list[str] = []
    for w in _WORD_RE.findall(text.lower()):
        w = w.split("'")[0]  # "melanie's" → "melanie", as the FTS5 tokenizer splits it
        if (len(w) > 1 or w.isdigit()) and w not in STOPWORDS and w not in out:
            out.append(w)
    return out


def content_terms(terms: list[str], speakers: frozenset[str]) -> list[str]:
    """The query terms but the names of the people who speak (who said it is the speaker factor's
    part, not what is asked); all of them when nothing else is left ("Who is Melanie?")."""
    return [t for t in terms if t not in speakers] or terms


_ASKS_ASSISTANT_RE = re.compile(
    r"\byou (?:mentioned|said|recommended|suggested|told|gave|listed|provided|shared|explained|wrote|described|"
    r"came up with|proposed)\b|\bremind me\b|\bour (?:previous|last|earlier) (?:conversation|chat|discussion)\b",
    re.I,
)


def asks_what_the_assistant_said(query: str) -> bool:
    """"You mentioned some resources…", "Can you remind me…": the question is about the assistant's words."""
    return bool(_ASKS_ASSISTANT_RE.search(query))


def fts_query(terms: list[str]) -> str:
    """An FTS5 MATCH expression: any of the terms (each quoted, so no operator can sneak in)."""
    return " OR ".join(f'"{t}"' for t in terms)


def rrf(rankings: list[list[int]], k: int = RRF_K, weights: list[float] | None = None) -> dict[int, float]:
    """Reciprocal rank fusion: Σ w / (k + rank) over the lists an id appears in (rank from 1)."""
    scores: dict[int, float] = {}
    for i, ranking in enumerate(rankings):
        w = weights[i] if weights else 1.0
        for rank, cid in enumerate(ranking, start=1):
            scores[cid] = scores.get(cid, 0.0) + w / (k + rank)
    return scores


def adjust(score: float, chunk: Light, recency: float, role: str | None = None, named: bool = False, other: bool = False) -> float:
    """The fused score scaled by a card's confidence and superseded state, by who spoke a turn (`role`:
    the chunk's, or None when who spoke does not matter), and by recency (0..1).

    `named`: the turn's speaker is named in the query ("What did Melanie paint?": Melanie's own words first).
    `other`: a note or page about another of the Brain's people than the ones the query names
    (Caroline's card "Caroline shared a painting" when Melanie's painting is asked about).
    """
    if role == "assistant":
        score *= ASSISTANT_FACTOR
    if named:
        score *= SPEAKER_FACTOR
    if other:
        score *= OTHER_PERSON
    if chunk.kind == "note":
        score *= 0.6 + 0.4 * (chunk.confidence if chunk.confidence is not None else 0.5)
        if chunk.until:
            score *= SUPERSEDED_FACTOR
    return score * (1.0 + RECENCY_WEIGHT * recency)


class Searcher:
    """An open index and embedder answering many queries (the CLI, `brain context`, the eval)."""

    def __init__(self, index: SearchIndex, notes: list[str] | None = None) -> None:
        self.index = index
        self.notes = notes or []

    @classmethod
    def open(cls, root: Path, embedder: "Embedder | None | str" = "auto", fts: bool = True) -> "Searcher":
        """Open the Brain's index; `embedder` is a model, None (no dense vectors) or a name for `load_embedder`."""
        notes = []
        if isinstance(embedder, str):
            from brain.embed import load_embedder

            embedder, why = load_embedder(embedder)
            if why:
                notes.append(f"no dense vectors: {why}")
        index = SearchIndex.open(root, embedder, fts=fts)
        if index.stats.rebuilt:
            notes.append(index.stats.rebuilt)
        if not index.stats.lexical:
            notes.append("no lexical search: this SQLite has no FTS5")
        return cls(index, notes)

    def close(self) -> None:
        self.index.close()

    def search(self, query: str, k: int = 10, kinds: tuple[str, ...] = (), exclude: tuple[str, ...] = ()) -> SearchResult:
        """The k best chunks for `query`, of the given kinds (all when empty), outside the excluded top-level folders."""
        kinds = tuple(k_ for k_ in kinds if k_ in KINDS)
        terms = query_terms(query)
        notes = list(self.notes)
        has_lex = self.index.stats.lexical and bool(terms)
        has_dense = self.index.embedder is not None and bool(query.strip())
        if self.index.stats.lexical and not terms:
            notes.append("no words to match in the query")
        lexical = [cid for cid, _ in self.index.lexical(fts_query(terms), POOL, kinds, exclude)] if has_lex else []
        extra = members(terms) if has_lex else []
        widened = [cid for cid, _ in self.index.lexical(fts_query(extra), POOL, kinds, exclude)] if extra else []
        dense = self._dense(query, kinds, exclude) if has_dense else []
        mode: Mode = "hybrid" if has_lex and has_dense else "dense" if has_dense else "lexical" if has_lex else "recency"
        if mode == "recency":
            ranked = self.index.recent(k, kinds, exclude)
            chunks = self.index.chunks(ranked)
            hits = [_hit(chunks[c], 1.0 / (RRF_K + i), None, None, []) for i, c in enumerate(ranked, 1) if c in chunks]
            return SearchResult(query=query, mode=mode, hits=hits, notes=notes, index=self.index.stats)
        fused = rrf([lexical, dense, widened], weights=[1.0, DENSE_WEIGHT, EXPANSION_WEIGHT])
        light = self.index.light(list(fused))
        lex_rank = {cid: r for r, cid in enumerate(lexical, 1)}
        dense_rank = {cid: r for r, cid in enumerate(dense, 1)}
        dates = [_ordinal(c.date) for c in light.values() if c.date]
        lo, hi = (min(dates), max(dates)) if dates else (0, 0)
        recall_reply = asks_what_the_assistant_said(query)  # then its turns are the evidence, not restatements
        speakers = self.index.speakers()
        asked_of = set(terms) & speakers  # the people the query names
        content = [t for t in terms if t not in asked_of]
        texts = self.index.texts(list(lex_rank), context=True) if asked_of and content else {}
        scored = []
        for cid, base in fused.items():
            c = light.get(cid)
            if c is None:
                continue
            d = _ordinal(c.date) if c.date else None
            recency = (d - lo) / (hi - lo) if d is not None and hi > lo else 0.0
            about = _about(c)
            named = c.kind == "turn" and about in asked_of
            other = c.kind != "turn" and bool(asked_of) and about in speakers and about not in asked_of
            score = adjust(base, c, recency, None if recall_reply and c.role == "assistant" else c.role, named, other)
            if cid in texts and not _matched(content, texts[cid]):
                score *= NAME_ONLY  # it matched the query's people and none of what is asked about them
            scored.append((score, cid))
        via = self._conversation_boost(scored, light, exclude, terms)
        scored.sort(key=lambda s: (-s[0], s[1]))
        chunks = self.index.chunks([cid for _, cid in scored[:k]])
        hits = [
            _hit(chunks[cid], score, lex_rank.get(cid), dense_rank.get(cid), _matched(terms, chunks[cid]) if cid in lex_rank else [],
                 via.get(cid))
            for score, cid in scored[:k]
        ]
        return SearchResult(query=query, mode=mode, hits=hits, notes=notes, index=self.index.stats)

    def _conversation_boost(self, scored: list[tuple[float, int]], light: dict[int, Light], exclude: tuple[str, ...],
                            terms: list[str]) -> dict[int, str]:
        """Raise the neighbours of matching turns in a conversation between people (in place).

        When two people talk, the answer to a matching question is the next turn, and it often
        shares no word with the query: it gets REPLY_WEIGHT of the matching turn's score (the turn
        before gets PROMPT_WEIGHT). Only between turns of role `user` by different speakers: an
        assistant's reply restates, it is not the person's evidence. Returns id → the turn it follows.
        """
        turns = sorted(((score, cid) for score, cid in scored if light[cid].kind == "turn" and light[cid].role == "user"), reverse=True)
        turns = turns[:CONVERSATION_POOL]
        # A session's turns are indexed in order, so turn n ± 1 is id ± 1 (checked by ref and path).
        wanted = [cid + d for _, cid in turns for d in (1, -1)]
        known = self.index.light([i for i in wanted if i not in light])
        known.update(light)
        boost: dict[int, tuple[float, str, float]] = {}  # id → (added, the best neighbour's ref, its score)
        for score, cid in turns:
            mine = light[cid]
            for d, weight in ((1, REPLY_WEIGHT), (-1, PROMPT_WEIGHT)):
                other = known.get(cid + d)
                if (other is None or other.path != mine.path or other.ref != _neighbour(mine.ref, d) or other.role != "user"
                        or other.speaker == mine.speaker or any(other.path.startswith(p) for p in exclude)):
                    continue
                add, ref, top = boost.get(other.id, (0.0, mine.ref, score))
                boost[other.id] = (add + weight * score, ref, top)
                light.setdefault(other.id, other)
        index = {cid: i for i, (_, cid) in enumerate(scored)}
        texts = self.index.texts(list(boost)) if terms else {}
        for cid, (add, _, top) in boost.items():
            own = scored[index[cid]][0] if cid in index else 0.0
            raised = own + add
            if terms and not _matched(terms, texts.get(cid, "")):
                # Raised only by its neighbour (no query word of its own): it follows that turn, never overtakes it.
                raised = max(own, min(raised, top * NEIGHBOUR_CAP))
            if cid in index:
                scored[index[cid]] = (raised, cid)
            else:
                scored.append((raised, cid))
        return {cid: ref for cid, (_, ref, _) in boost.items()}

    def _dense(self, query: str, kinds: tuple[str, ...], exclude: tuple[str, ...]) -> list[int]:
        import numpy as np

        ids, mat, kind_arr, path_arr = self.index.matrix()
        if not len(ids):
            return []
        # Content words only: averaged word vectors of "when did … the" drown the few that matter,
        # and so do the names of the people who speak (who said it is the speaker factor's part).
        content = content_terms(query_terms(query), self.index.speakers())
        qv = self.index.embedder.embed([" ".join(content) or query])[0]
        sims = mat @ qv
        mask = self.index.mask(kinds, exclude)
        sims = np.where(mask, sims, -np.inf)
        n = min(POOL, int(mask.sum()))
        if n == 0:
            return []
        top = np.argpartition(-sims, n - 1)[:n]
        top = top[np.argsort(-sims[top], kind="stable")]
        return [int(ids[i]) for i in top]


def _about(c: Light) -> str:
    """Who a chunk is by or about, as a query would name them: a turn's speaker, the subject of a
    note (its topic folder) or of a page ("melanie" of notes/melanie/… and knowledge/people/melanie.md)."""
    if c.kind == "turn":
        return c.speaker.split()[0].casefold() if c.speaker else ""
    if c.kind in ("note", "page"):
        parts = c.path.split("/")
        slug = parts[1] if c.kind == "note" and len(parts) > 2 else parts[-1].removesuffix(".md")
        return slug.split("-")[0]
    return ""


def _ordinal(date: str) -> int:
    try:
        return dt.date.fromisoformat(date[:10]).toordinal()
    except ValueError:
        return 0


def _matched(terms: list[str], chunk: Chunk | str) -> list[str]:
    """Query terms found in the chunk or text (a prefix match stands in for the stemmer)."""
    text = (chunk if isinstance(chunk, str) else f"{chunk.title} {chunk.text}").lower()
    return [t for t in terms if (t[:5] if len(t) > 5 else t) in text]


def _neighbour(ref: str, delta: int) -> str:
    head, _, n = ref.rpartition("#t")
    return f"{head}#t{int(n) + delta}"


def _hit(chunk: Chunk, score: float, lex: int | None, dense: int | None, matched: list[str], near: str | None = None) -> SearchHit:
    fields = {name: getattr(chunk, name) for name in Chunk.__slots__}
    return SearchHit(**fields, score=round(score, 6), lexical_rank=lex, dense_rank=dense, matched=matched, near=near)
