"""brain.search and its index: ranking, fusion, degradation, incremental updates, corruption."""

from __future__ import annotations

import json
import os
import shutil

import pytest

from brain.chunks import chunks_of
from brain.search import Searcher, adjust, fts_query, query_terms, rrf
from brain.search_index import Light
from brain.search_index import INDEX_FILE, VECTORS_DIR
from tests.brain.test_search_support import ConceptEmbedder, retrieval_brain


@pytest.fixture
def brain(tmp_path):
    return retrieval_brain(tmp_path)


def refs(result) -> list[str]:
    return [h.ref for h in result.hits]


# -- pure parts ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("query", "terms"),
    [
        ("When did Caroline go to the LGBTQ support group?", ["caroline", "go", "lgbtq", "support", "group"]),
        ("What is Melanie's hobby?", ["melanie", "hobby"]),
        ("the a of", []),
        ("Born in 1987, moved in 2020", ["born", "1987", "moved", "2020"]),
        ('NOT "quoted" NEAR -x*', ["quoted", "near"]),
    ],
)
def test_query_terms(query, terms):
    assert query_terms(query) == terms


def test_fts_query_quotes_every_term_so_operators_are_words():
    assert fts_query(["not", "near", "violin"]) == '"not" OR "near" OR "violin"'


def test_rrf_rewards_agreement_between_rankers():
    fused = rrf([[1, 2, 3], [3, 4]], k=10)
    assert fused[3] == pytest.approx(1 / 13 + 1 / 11)
    assert sorted(fused, key=lambda i: -fused[i]) == [3, 1, 2, 4]
    weighted = rrf([[1], [2]], k=10, weights=[1.0, 0.5])
    assert weighted[1] == pytest.approx(2 * weighted[2])


def _light(kind: str, confidence: float | None = None, until: str | None = None) -> Light:
    return Light(id=1, ref="r", kind=kind, path="p", date=None, confidence=confidence, until=until, speaker=None, role=None)


def test_adjust_by_confidence_superseded_and_recency():
    assert adjust(1.0, _light("note", 0.5), 0.0) == pytest.approx(0.8)
    assert adjust(1.0, _light("note", 0.5), 1.0) == pytest.approx(0.88)
    assert adjust(1.0, _light("note", 1.0, "2024-01-01"), 0.0) == pytest.approx(0.5)
    assert adjust(1.0, _light("page"), 0.0) == adjust(1.0, _light("summary"), 0.0) == pytest.approx(1.0)
    assert adjust(1.0, _light("turn"), 0.5) == pytest.approx(1.05)
    assert adjust(1.0, _light("turn"), 0.0, "assistant") == pytest.approx(0.5)
    assert adjust(1.0, _light("turn"), 0.0, "user", named=True) == pytest.approx(2.5)


def test_a_card_chunk_keeps_its_metadata():
    text = ("---\ntitle: A\ntype: note\nkind: event\ntopic: x\nconfidence: 0.7\nobserved: 2024-01-01\nevent_date: 2023-12-30\n"
            "until: 2024-02-01\nsources:\n  1: session:s#t1-t2\n---\nA fact. [cite:1]\n")
    (card,) = chunks_of("notes/x/a.md", text.encode())
    assert (card.kind, card.confidence, card.date, card.cites) == ("note", 0.7, "2023-12-30", ["session:s#t1", "session:s#t2"])
    assert card.meta == {"kind": "event", "topic": "x", "observed": "2024-01-01", "event_date": "2023-12-30", "until": "2024-02-01"}


def test_pages_and_summaries_are_cut_into_statements_with_their_own_cites(brain):
    page = chunks_of("knowledge/people/ana-lima.md", (brain / "knowledge/people/ana-lima.md").read_bytes())
    assert [(c.title, c.cites) for c in page] == [
        ("Ana Lima › About", ["session:2024-03-02-new-job#t1"]),
        ("Ana Lima › About", ["session:2024-01-10-intro#t3"]),
        ("Ana Lima › History", ["session:2024-01-10-intro#t1", "session:2024-03-02-new-job#t1"]),
    ]
    summary = chunks_of("sessions/summaries/2024-03-02-new-job.md", (brain / "sessions/summaries/2024-03-02-new-job.md").read_bytes())
    assert [c.cites for c in summary] == [["session:2024-03-02-new-job#t1"], ["session:2024-03-02-new-job#t2"]]
    assert {c.date for c in summary} == {"2024-03-02"}
    assert summary[0].ref == "sessions/summaries/2024-03-02-new-job.md#L15.1"


# -- ranking ------------------------------------------------------------------------------------
def test_hybrid_ranks_the_current_fact_above_the_superseded_one(brain):
    result = Searcher.open(brain, embedder=ConceptEmbedder()).search("Where does Ana work?", k=20, kinds=("note",))
    assert result.mode == "hybrid"
    assert refs(result)[0] == "notes/ana-lima/ana-works-at-tidewater-studio.md"
    old = refs(result).index("notes/ana-lima/ana-works-at-harbor-labs.md")
    assert result.hits[old].lexical_rank == 1  # the words alone would put the old employer first
    top = result.hits[0]
    assert (top.lexical_rank, top.dense_rank, top.matched) == (2, 1, ["ana", "work"])
    assert top.why() == "bm25 #2 on ana, work; dense #1"


class RecordingEmbedder(ConceptEmbedder):
    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []

    def embed(self, texts):
        self.texts += texts
        return super().embed(texts)


@pytest.mark.parametrize(("query", "embedded"), [
    ("What pet does Ana have?", "pet"),  # Ana speaks in the Brain: the speaker factor weighs her turns
    ("Pepper and Ana", "pepper"),
    ("Ana", "ana"),  # nothing but a name: the name it is
    ("the of", "the of"),  # no content word at all: the query as asked
])
def test_the_dense_query_is_the_content_words_without_the_speakers_names(brain, query, embedded):
    embedder = RecordingEmbedder()
    searcher = Searcher.open(brain, embedder=embedder)
    embedder.texts.clear()  # what the index embedded when it was built
    searcher.search(query, k=3)
    assert embedder.texts == [embedded]


def test_dense_finds_a_paraphrase_that_shares_no_word(brain):
    searcher = Searcher.open(brain, embedder=ConceptEmbedder())
    hybrid = searcher.search("music", k=5, kinds=("turn",))
    assert "session:2024-01-10-intro#t5" in refs(hybrid)  # "learn the violin"
    lexical = Searcher.open(brain, embedder=None).search("music", k=5, kinds=("turn",))
    assert lexical.mode == "lexical" and lexical.hits == []


def test_the_reply_to_a_matching_question_is_found_in_a_conversation(brain):
    result = Searcher.open(brain, embedder=None).search("What did Ana do on the weekend?", k=3, kinds=("turn",))
    # Ana's answer first: her own words (she is named), found by the words of the question it answers.
    assert refs(result)[:2] == ["session:2024-01-10-intro#t3", "session:2024-01-10-intro#t2"]
    assert result.hits[0].near == "session:2024-01-10-intro#t2"
    assert "next to 2024-01-10-intro#t2" in result.hits[0].why()


def test_a_reply_is_indexed_with_the_words_of_what_it_answers(brain):
    # t4 ("Which instrument should I pick up this year?") follows "We adopted a puppy! Her name is Pepper."
    result = Searcher.open(brain, embedder=None).search("Pepper", k=10, kinds=("turn",))
    assert "session:2024-01-10-intro#t4" in refs(result)


def test_a_turn_raised_only_by_its_neighbour_never_overtakes_it(brain):
    result = Searcher.open(brain, embedder=None).search("Pepper", k=3)
    assert refs(result) == ["session:2024-01-10-intro#t3", "knowledge/people/ana-lima.md#L16", "session:2024-01-10-intro#t4"]
    assert result.hits[2].score < result.hits[0].score and result.hits[2].near == "session:2024-01-10-intro#t3"


def test_assistant_replies_are_not_raised_by_the_question_before_them(brain):
    result = Searcher.open(brain, embedder=None).search("export boards PDF", k=5, kinds=("turn",))
    assert all(h.near is None for h in result.hits)


def test_kinds_and_excluded_prefixes_filter_both_rankers(brain):
    searcher = Searcher.open(brain, embedder=ConceptEmbedder())
    result = searcher.search("Tidewater Studio Lisbon", k=50, exclude=("knowledge/",))
    assert result.hits and not any(h.path.startswith("knowledge/") for h in result.hits)
    assert {h.kind for h in searcher.search("Tidewater", k=50, kinds=("summary",)).hits} == {"summary"}


# -- degradation --------------------------------------------------------------------------------
def test_degrades_hybrid_dense_lexical_recency(brain):
    q = "Pepper the puppy"
    assert Searcher.open(brain, embedder=ConceptEmbedder()).search(q).mode == "hybrid"
    dense = Searcher.open(brain, embedder=ConceptEmbedder(), fts=False).search(q, k=3)
    assert dense.mode == "dense" and "no lexical search: this SQLite has no FTS5" in dense.notes
    assert dense.hits[0].dense_rank == 1 and dense.hits[0].lexical_rank is None
    lexical = Searcher.open(brain, embedder=None).search(q, k=3)
    assert lexical.mode == "lexical" and lexical.hits[0].dense_rank is None
    recency = Searcher.open(brain, embedder=None, fts=False).search(q, k=3)
    assert recency.mode == "recency"
    assert [h.date for h in recency.hits] == sorted((h.date for h in recency.hits), reverse=True)


def test_unknown_embedder_name_degrades_with_the_reason(brain):
    searcher = Searcher.open(brain, embedder="none")
    assert searcher.search("Pepper").mode == "lexical"
    assert searcher.notes == ["no dense vectors: dense vectors are turned off (--embedder none)"]


def test_a_query_without_words_falls_back_to_dense_then_recency(brain):
    assert Searcher.open(brain, embedder=ConceptEmbedder()).search("the of ?").mode == "dense"
    result = Searcher.open(brain, embedder=None).search("the of ?")
    assert result.mode == "recency" and "no words to match in the query" in result.notes


# -- the index ----------------------------------------------------------------------------------
def test_index_updates_incrementally_by_content_hash(brain):
    embedder = ConceptEmbedder()
    first = Searcher.open(brain, embedder=embedder).index.stats
    assert (first.changed, first.embedded) == (10, first.chunks)  # README, guide, rule and the generated index are not
    again = Searcher.open(brain, embedder=embedder).index.stats
    assert (again.changed, again.removed, again.embedded) == (0, 0, 0)
    session = brain / "sessions/raw/2024-03-02-new-job.jsonl"
    session.write_text(session.read_text() + json.dumps({"type": "turn", "n": 3, "role": "user", "speaker": "Ana", "text": "Pepper loves the studio."}) + "\n")
    os.utime(brain / "knowledge/people/ben-okafor.md")  # touched, same content: re-hashed, not re-chunked
    (brain / "notes/ana-lima/ana-prefers-pdf-exports.md").unlink()
    grown = Searcher.open(brain, embedder=embedder)
    assert (grown.index.stats.changed, grown.index.stats.removed, grown.index.stats.embedded) == (1, 1, 3)
    assert "session:2024-03-02-new-job#t3" in refs(grown.search("Pepper loves the studio", k=3))


def test_a_corrupt_index_is_rebuilt_and_says_so(brain):
    Searcher.open(brain, embedder=None).close()
    (brain / INDEX_FILE).write_bytes(b"this is not a database" * 100)
    searcher = Searcher.open(brain, embedder=None)
    assert searcher.index.stats.rebuilt and "rebuilt" in searcher.notes[0]
    assert searcher.search("Pepper").hits


def _fresh_process() -> None:
    """A new `brain search` process: each opens the index anew, and keeps nothing between calls."""


def _dense_refs(brain, query: str = "my puppy") -> list[str]:
    searcher = Searcher.open(brain, embedder=ConceptEmbedder())
    try:
        return [searcher.index.chunks([cid])[cid].ref for cid in searcher._dense(query, (), ())]
    finally:
        searcher.close()


def test_the_vector_matrix_is_kept_as_a_snapshot_that_later_calls_map(brain):
    before = _dense_refs(brain)
    snapshots = list((brain / VECTORS_DIR).iterdir())
    assert len(snapshots) == 1 and sorted(p.name for p in snapshots[0].iterdir()) == [
        "ids.npy", "kinds.npy", "names.json", "paths.npy", "vectors.npy"]
    _fresh_process()
    import sqlite3

    with sqlite3.connect(brain / INDEX_FILE) as conn:  # vectors gone from SQLite, generation unchanged:
        conn.execute("DELETE FROM vectors")  # only the snapshot can answer now
    assert _dense_refs(brain) == before


def test_a_stale_or_broken_snapshot_is_not_used(brain):
    before = _dense_refs(brain)
    (name,) = [p.name for p in (brain / VECTORS_DIR).iterdir()]
    _fresh_process()
    (brain / VECTORS_DIR / name / "vectors.npy").write_bytes(b"garbage")
    assert _dense_refs(brain) == before  # read from SQLite again, and the snapshot rewritten
    _fresh_process()
    session = brain / "sessions/raw/2024-03-02-new-job.jsonl"
    session.write_text(session.read_text() + json.dumps({"type": "turn", "n": 3, "role": "user", "speaker": "Ana", "text": "my puppy Pepper"}) + "\n")
    after = _dense_refs(brain)
    assert "session:2024-03-02-new-job#t3" in after[:3]
    assert [p.name for p in (brain / VECTORS_DIR).iterdir()] != [name]  # a new generation, the old one removed


def test_a_rebuilt_index_does_not_take_the_snapshot_of_the_one_it_replaces(brain):
    _dense_refs(brain)
    (old,) = [p.name for p in (brain / VECTORS_DIR).iterdir()]
    _fresh_process()
    (brain / INDEX_FILE).write_bytes(b"this is not a database" * 100)  # rebuilt: generation 1 again,
    rebuilt = _dense_refs(brain)
    (new,) = [p.name for p in (brain / VECTORS_DIR).iterdir()]
    assert new.split("-")[1:] == old.split("-")[1:] and new != old  # but another instance
    _fresh_process()
    shutil.rmtree(brain / VECTORS_DIR)
    assert _dense_refs(brain) == rebuilt


def test_changing_the_embedder_recomputes_every_vector(brain):
    Searcher.open(brain, embedder=ConceptEmbedder()).close()
    other = ConceptEmbedder()
    other.name = "test-concepts-16-v2"
    stats = Searcher.open(brain, embedder=other).index.stats
    assert stats.embedded == stats.chunks == stats.vectors


def test_a_hit_that_matches_only_the_people_named_is_scored_down(brain):
    session = [
        {"type": "session", "id": "2024-04-01-chat", "started": "2024-04-01T10:00:00", "source": "chat", "participants": ["Ana", "Ben"]},
        {"type": "turn", "n": 1, "role": "user", "speaker": "Ben", "text": "Ana, Ana, Ana! Good to see you Ana."},
        {"type": "turn", "n": 2, "role": "assistant", "speaker": "assistant", "text": "Noted."},
        {"type": "turn", "n": 3, "role": "user", "speaker": "Ben", "text": "Last spring I walked around Kyoto and Nara."},
    ]
    (brain / "sessions/raw/2024-04-01-chat.jsonl").write_text("".join(json.dumps(t) + "\n" for t in session))
    searcher = Searcher.open(brain, embedder=None)
    assert searcher.index.speakers() == {"ana", "ben", "assistant"}

    ranked = refs(searcher.search("Which cities has Ana walked around?", k=50, kinds=("turn",)))
    says_ana_four_times, walked_around = "session:2024-04-01-chat#t1", "session:2024-04-01-chat#t3"
    assert ranked[0] == walked_around
    name_only = [r for r in ranked if r.startswith("session:2024-01-10-intro")]  # Ana's own turns match "Ana" once
    assert ranked.index(says_ana_four_times) > ranked.index(name_only[-1])


def test_a_pages_pointer_lines_are_not_statements(brain):
    path = brain / "knowledge/people/ana-lima.md"
    text = path.read_text().replace("- Ana has a dog", "- … 4 older fact(s) are in notes/ana-lima/\n- Ana has a dog")
    chunks = chunks_of("knowledge/people/ana-lima.md", text.encode())
    assert len(chunks) == 3 and not any("older fact" in c.text for c in chunks)


def test_a_query_that_names_a_kind_also_finds_its_members(brain):
    from brain.thesaurus import members

    assert members(["pets", "ana"])[:4] == ["dog", "dogs", "puppy", "cat"]
    assert members(["violin"]) == []  # members are not widened back to kinds
    searcher = Searcher.open(brain, embedder=None)
    puppy = "session:2024-01-10-intro#t3"  # "We adopted a puppy! Her name is Pepper.": no word of the query but "Ana"
    asked_for_pets = refs(searcher.search("What pets does Ana have?", k=20, kinds=("turn",)))
    asked_for_nothing = refs(searcher.search("What does Ana have?", k=20, kinds=("turn",)))
    assert asked_for_pets[0] == puppy and asked_for_nothing[0] != puppy


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("I'm going back to our previous conversation about music theory. You mentioned some resources.", True),
        ("Can you remind me what sealant you recommended?", True),
        ("Can you recommend some recent publications?", False),  # asks for something new
        ("What format does Ana want her boards in?", False),
    ],
)
def test_a_question_about_what_the_assistant_said_is_recognised(query, expected):
    from brain.search import asks_what_the_assistant_said

    assert asks_what_the_assistant_said(query) is expected


def test_the_assistants_turns_are_not_scored_down_when_the_question_is_about_them(brain):
    reply = "session:2022-01-05-exports#t2"  # assistant: "Done: the boards are exported as PDF files."
    searcher = Searcher.open(brain, embedder=None)

    request = "session:2022-01-05-exports#t1"  # Ana: "Please export my design boards as PDF, not PNG."
    asked_of_the_assistant = searcher.search("Can you remind me how you exported the boards?", k=50, kinds=("turn",)).hits
    asked = searcher.search("How were the boards exported?", k=50, kinds=("turn",)).hits
    ratio = {label: next(h.score for h in hits if h.ref == reply) / next(h.score for h in hits if h.ref == request)
             for label, hits in (("of the assistant", asked_of_the_assistant), ("plain", asked))}
    assert ratio["of the assistant"] > 0.9 and ratio["plain"] < 0.6  # the two turns match the same two words


def _card_score(brain, query: str) -> float:
    hits = Searcher.open(brain, embedder=None).search(query, k=50, kinds=("note",)).hits
    return next(h.score for h in hits if h.path == "notes/ana-lima/ana-works-at-tidewater-studio.md")


def test_cards_about_another_person_than_the_one_asked_about_rank_lower(brain):
    # Ben speaks in the Brain: "Where does Ben work?" is about him, and Ana's card is not (× OTHER_PERSON).
    asked_of_ben = _card_score(brain, "Where does Ben work at Tidewater?")
    asked_of_ana = _card_score(brain, "Where does Ana work at Tidewater?")
    asked_of_nobody = _card_score(brain, "Who works at Tidewater?")
    assert asked_of_ana == asked_of_nobody  # the card ranks first for both, on the words the two share
    assert asked_of_ben < 0.6 * asked_of_nobody


def test_words_asking_for_recency_are_not_matched_as_content():
    assert query_terms("What did Melanie paint recently, and lately?") == ["melanie", "paint"]


def _contents(db) -> tuple[list, list]:
    import sqlite3

    with sqlite3.connect(db) as conn:
        files = sorted(conn.execute("SELECT path, hash FROM files"))
        chunks = sorted(conn.execute("SELECT path, ref, kind, title, text, body, cites, date, meta, context FROM chunks"))
        vectors = sorted(conn.execute("SELECT c.path, c.ref, v.vec FROM chunks c LEFT JOIN vectors v ON v.id = c.id"))
    return files, chunks, vectors


def test_an_update_reads_only_files_whose_size_or_mtime_changed(brain):
    """The index is brought in step by each file's size and mtime; what it then holds is what an
    index built from nothing holds."""
    embedder = ConceptEmbedder()
    assert Searcher.open(brain, embedder=embedder).index.stats.changed == 10

    def opened():
        stats = Searcher.open(brain, embedder=embedder).index.stats
        fresh = brain.parent / "fresh"
        shutil.rmtree(fresh, ignore_errors=True)
        shutil.copytree(brain, fresh, ignore=shutil.ignore_patterns(".git", ".dream"))
        Searcher.open(fresh, embedder=embedder).close()
        assert _contents(brain / INDEX_FILE) == _contents(fresh / INDEX_FILE)
        return stats.changed, stats.removed

    assert opened() == (0, 0)
    note = brain / "notes/ana-lima/ana-prefers-pdf-exports.md"
    note.write_text(note.read_text().replace("PDF", "SVG"))
    assert opened() == (1, 0)
    os.utime(note, ns=(0, 0))  # touched, the same bytes: read, not chunked again
    assert opened() == (0, 0)
    session = brain / "sessions/raw/2024-03-02-new-job.jsonl"
    later = brain / "sessions/raw/2024-04-01-later.jsonl"
    later.write_text(session.read_text().replace("new job", "later job"))
    assert opened() == (1, 0)
    note.unlink()
    assert opened() == (0, 1)
    assert opened() == (0, 0)


