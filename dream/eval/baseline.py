"""The BM25 baseline: raw turns only, session date prepended, stemmed, filled to the budget.

What a retrieval system without a compiled Brain would hand the agent; measured in the same run
and at the same budgets as the packets, with the same token estimate and the same turn rendering.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from brain.chunks import Chunk, chunks_of
from brain.layout import SESSIONS_RAW
from brain.search import fts_query, query_terms
from brain.tokens import estimate_tokens

POOL = 300


@dataclass
class BaselineItem:
    ref: str
    text: str
    cites: list[str] = field(default_factory=list)


class TurnBM25:
    """An in-memory FTS5 index of one Brain's raw turns, `<date> <speaker>: <text>` each."""

    def __init__(self, root: Path) -> None:
        self.turns: list[Chunk] = []
        for path in sorted((Path(root) / SESSIONS_RAW).glob("*.jsonl")):
            self.turns += chunks_of(f"{SESSIONS_RAW}/{path.name}", path.read_bytes())
        self.conn = sqlite3.connect(":memory:")
        self.conn.execute("CREATE VIRTUAL TABLE t USING fts5(body, tokenize='porter unicode61 remove_diacritics 2')")
        self.conn.executemany("INSERT INTO t(rowid, body) VALUES (?, ?)",
                              [(i, f"{c.date or ''} {c.meta.get('speaker', '')}: {c.text}") for i, c in enumerate(self.turns)])

    def packet(self, question: str, budget: int) -> list[BaselineItem]:
        """The best-ranked whole turns that fit `budget` tokens, in rank order."""
        terms = query_terms(question)
        if not terms:
            return []
        rows = self.conn.execute("SELECT rowid FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT ?", (fts_query(terms), POOL))
        left, out = budget, []
        for (i,) in rows:
            c = self.turns[i]
            text = f"[{c.date or 'undated'} · {c.ref.removeprefix('session:')}] {c.meta.get('speaker', '?')}: {c.text}"
            need = estimate_tokens(text)
            if need <= left:
                out.append(BaselineItem(ref=c.ref, text=text, cites=[c.ref]))
                left -= need
        return out

    def close(self) -> None:
        self.conn.close()
