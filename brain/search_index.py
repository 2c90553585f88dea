"""The search index: chunks of the Brain in SQLite under `.dream/cache/`, FTS5 and vectors beside them.

It is the read side's one cache, brought up to date by `SearchIndex.open(root, embedder)` before it
answers (docs/context.md: what is skipped, re-chunked and rebuilt; symlinks are not followed).
Beside its chunks, each document keeps the link targets it names, its aliases and date
(`documents()`: `brain index` ranks pages by backlinks with them). Deleting it loses nothing.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from pydantic import ConfigDict

from brain import layout
from brain.chunks import Chunk, DocInfo, indexable, plain, read_document
from brain.model import Model
from brain.tree import DirTree
from brain.vectors import Matrix, embed_missing, load_matrix

if TYPE_CHECKING:
    import numpy as np

    from brain.embed import Embedder

INDEX_FILE = f"{layout.CACHE}/search.sqlite3"
VECTORS_DIR = f"{layout.CACHE}/search-vectors"  # the vector matrix as .npy files, for one-shot calls (see matrix())
SCHEMA_VERSION = "7"
CONTEXT_WEIGHT = 0.4  # bm25 weight of a turn's context column: the turn it answers (see _insert_chunks)
_SCHEMA = """
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE files(path TEXT PRIMARY KEY, hash TEXT NOT NULL, size INTEGER, mtime INTEGER, links TEXT, aliases TEXT, updated TEXT);
CREATE TABLE chunks(id INTEGER PRIMARY KEY, ref TEXT NOT NULL, kind TEXT NOT NULL, path TEXT NOT NULL,
  title TEXT, text TEXT, body TEXT, cites TEXT, date TEXT, confidence REAL, meta TEXT,
  speaker TEXT, role TEXT, until TEXT, facets TEXT, context TEXT);
CREATE INDEX chunks_path ON chunks(path);
CREATE INDEX chunks_ref ON chunks(ref);
CREATE TABLE vectors(id INTEGER PRIMARY KEY, vec BLOB NOT NULL);
"""
# External-content FTS5 kept in step by triggers; porter stemming over unicode61 tokens. `facets`
# holds `kind<kind>` and `top<folder>` tokens so that kind and folder filters are part of the match
# (a join to filter 50,000 matches cost more than the match itself); bm25 weighs it 0.
_FTS = """
CREATE VIRTUAL TABLE chunks_fts USING fts5(title, body, facets, context, content='chunks', content_rowid='id',
  tokenize='porter unicode61 remove_diacritics 2');
CREATE TRIGGER chunks_ai AFTER INSERT ON chunks BEGIN
  INSERT INTO chunks_fts(rowid, title, body, facets, context) VALUES (new.id, new.title, new.body, new.facets, new.context); END;
CREATE TRIGGER chunks_ad AFTER DELETE ON chunks BEGIN
  INSERT INTO chunks_fts(chunks_fts, rowid, title, body, facets, context)
  VALUES ('delete', old.id, old.title, old.body, old.facets, old.context); END;
"""
_COLUMNS = "id, ref, kind, path, title, text, cites, date, confidence, meta"
_LIGHT = "id, ref, kind, path, date, confidence, until, speaker, role"


class Light(NamedTuple):
    """What ranking needs of a chunk, without its text (fetched for the final hits only)."""

    id: int
    ref: str
    kind: str
    path: str
    date: str | None
    confidence: float | None
    until: str | None
    speaker: str | None
    role: str | None


class IndexStats(Model):
    """What opening the index did, for `brain search --json` and the bench."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    path: str
    files: int
    chunks: int
    vectors: int
    changed: int
    removed: int
    embedded: int
    lexical: bool
    embedder: str | None
    rebuilt: str | None = None  # why the index was rebuilt from scratch, None when it was not


class SearchIndex:
    """An open, up-to-date index of one Brain. Use `SearchIndex.open`."""

    def __init__(self, root: Path, conn: sqlite3.Connection, embedder: "Embedder | None", stats: IndexStats) -> None:
        self.root = root
        self.conn = conn
        self.embedder = embedder
        self.stats = stats
        self._matrix: Matrix | None = None
        self._masks: dict[tuple, "np.ndarray"] = {}
        self._speakers: frozenset[str] | None = None

    @classmethod
    def open(cls, root: Path, embedder: "Embedder | None" = None, fts: bool = True, tree: DirTree | None = None) -> "SearchIndex":
        """Open (or create) and update the index of the Brain at `root`; rebuilds it when unreadable.

        `fts=False` builds it without FTS5, as on a SQLite compiled without it (lexical search off).
        `tree`: the Brain's DirTree, for a caller that reads it too (listed once)."""
        root = Path(root)
        db = root / INDEX_FILE
        db.parent.mkdir(parents=True, exist_ok=True)
        tree = tree or DirTree(root)
        try:
            conn, rebuilt = _connect(db, fts)
            return cls(root, conn, embedder, _update(root, conn, embedder, rebuilt, tree))
        except sqlite3.DatabaseError as exc:  # damaged past what _connect reads: made again, once
            rebuilt = f"the index could not be read ({exc}); rebuilt from the Brain's files"
            _remove(db)
        conn, _ = _connect(db, fts)
        return cls(root, conn, embedder, _update(root, conn, embedder, rebuilt, tree))

    def close(self) -> None:
        self.conn.close()

    # -- reading ----------------------------------------------------------------------------
    def chunks(self, ids: list[int]) -> dict[int, Chunk]:
        """Chunks by id (ids that no longer exist are left out)."""
        return {row[0]: _chunk(row[1:]) for row in self._rows(_COLUMNS, "id", ids)}

    def texts(self, ids: list[int], context: bool = False) -> dict[int, str]:
        """id → the text of those chunks (a turn's words, without its speaker; with `context`, then the turn before it)."""
        if context:
            return {r[0]: f"{r[1] or ''} {r[2] or ''}" for r in self._rows("id, text, context", "id", ids)}
        return {r[0]: r[1] or "" for r in self._rows("id, text", "id", ids)}

    def speakers(self) -> frozenset[str]:
        """First names of everyone who speaks in a session, lower case."""
        if self._speakers is None:
            names = _counts(self.conn).get("speakers", [])
            self._speakers = frozenset(name.split()[0].casefold() for name in names if isinstance(name, str) and name.split())
        return self._speakers

    def documents(self) -> dict[str, DocInfo]:
        return documents_in(self.conn)

    def light(self, ids: list[int]) -> dict[int, Light]:
        return {row[0]: Light(*row) for row in self._rows(_LIGHT, "id", ids)}

    def by_refs(self, refs: list[str]) -> dict[str, tuple[int, Chunk]]:
        """(id, chunk) by ref, for refs that exist (e.g. the turns a page cites)."""
        return {row[1]: (row[0], _chunk(row[1:])) for row in self._rows(_COLUMNS, "ref", refs)}

    def _rows(self, columns: str, key: str, values: list) -> list[tuple]:
        out: list[tuple] = []
        for i in range(0, len(values), 500):
            part = values[i : i + 500]
            out += self.conn.execute(f"SELECT {columns} FROM chunks WHERE {key} IN ({','.join('?' * len(part))})", part).fetchall()
        return out

    def lexical(self, match: str, limit: int, kinds: tuple[str, ...], exclude: tuple[str, ...]) -> list[tuple[int, float]]:
        """(id, bm25) of the best FTS5 matches, best first (bm25 is negative: lower is better)."""
        match = f"{{title body context}} : ({match})"
        if kinds:
            match += " AND facets : (" + " OR ".join(f"kind{k}" for k in kinds) + ")"
        for top in exclude:  # top-level folders ("knowledge/"): each chunk has a facet token of its own
            match += f" NOT facets : top{top.strip('/').lower()}"
        sql = f"SELECT rowid, bm25(chunks_fts, 0.3, 1.0, 0.0, {CONTEXT_WEIGHT}) AS s FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY s LIMIT ?"
        return [(r[0], r[1]) for r in self.conn.execute(sql, [match, limit])]

    def recent(self, limit: int, kinds: tuple[str, ...], exclude: tuple[str, ...]) -> list[int]:
        where, params = "", []
        if kinds:
            where += f" AND c.kind IN ({','.join('?' * len(kinds))})"
            params += list(kinds)
        for prefix in exclude:
            where += " AND substr(c.path, 1, ?) != ?"
            params += [len(prefix), prefix]
        sql = f"SELECT c.id FROM chunks c WHERE 1 {where} ORDER BY c.date DESC, c.id DESC LIMIT ?"
        return [r[0] for r in self.conn.execute(sql, [*params, limit])]

    def matrix(self) -> Matrix:
        """(ids, unit vectors, kinds, paths) of every embedded chunk (brain.vectors: kept as .npy
        files by the index's generation, so a one-shot `brain search` does not read them all out
        of SQLite)."""
        if self._matrix is None:
            name = f"{self._meta('instance') or 'legacy'}-{self._meta('generation') or '0'}-" + \
                hashlib.blake2b(str(self._meta("embedder")).encode(), digest_size=4).hexdigest()
            self._matrix = load_matrix(self.conn, self.root / VECTORS_DIR, name, self.embedder.dim if self.embedder else 0)
        return self._matrix

    def mask(self, kinds: tuple[str, ...], exclude: tuple[str, ...]) -> "np.ndarray":
        """Which rows of `matrix()` are of the kinds (all when empty) and outside the excluded prefixes."""
        import numpy as np

        ids, _, kind_arr, path_arr = self.matrix()
        key = (kinds, exclude)
        if key not in self._masks:
            hit = np.isin(kind_arr, list(kinds)) if kinds else np.ones(len(ids), dtype=bool)
            for prefix in exclude:
                hit &= ~np.fromiter((p.startswith(prefix) for p in path_arr), dtype=bool, count=len(path_arr))
            self._masks[key] = hit
        return self._masks[key]

    def _meta(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None


def _chunk(row: tuple) -> Chunk:
    ref, kind, path, title, text, cites, date, confidence, meta = row
    return Chunk(ref=ref, kind=kind, path=path, title=title, text=text, cites=cites.split() if cites else [],
                 date=date, confidence=confidence, meta=json.loads(meta) if meta else {})


def _remove(db: Path) -> None:
    for suffix in ("", "-journal", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)


def _connect(db: Path, fts: bool) -> tuple[sqlite3.Connection, str | None]:
    """An open index with our schema; recreated (with the reason) when it is another version."""
    reason = None
    if db.exists():
        conn = sqlite3.connect(db, timeout=30)
        try:
            version = conn.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
            has_fts = conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'chunks_fts'").fetchone() is not None
            if version == (SCHEMA_VERSION,) and has_fts == fts:
                return conn, None
            reason = "the index was made by another version; rebuilt"
        except sqlite3.DatabaseError as exc:
            reason = f"the index could not be read ({exc}); rebuilt from the Brain's files"
        conn.close()
        _remove(db)
    conn = sqlite3.connect(db, timeout=30)
    with conn:
        conn.executescript(_SCHEMA)
        if fts:
            try:
                conn.executescript(_FTS)
            except sqlite3.OperationalError:  # SQLite built without FTS5: lexical search is off
                pass
        conn.execute("INSERT INTO meta VALUES ('schema', ?), ('generation', '0'), ('instance', ?)",
                     (SCHEMA_VERSION, os.urandom(8).hex()))
    return conn, reason


def documents_in(conn: sqlite3.Connection) -> dict[str, DocInfo]:
    """path → what ranking pages needs of each readable page, and of each other readable document
    that names a link (brain.indexing.page_ranks)."""
    rows = conn.execute("SELECT path, links, aliases, updated FROM files WHERE links != '' OR (links IS NOT NULL AND path LIKE 'knowledge/%')")
    return {path: DocInfo(links.split("\n") if links else [], aliases.split("\n") if aliases else [], updated)
            for path, links, aliases, updated in rows}


def _update(root: Path, conn: sqlite3.Connection, embedder: "Embedder | None", rebuilt: str | None, tree: DirTree) -> IndexStats:
    """Bring the index in step with the files, in one transaction: a file whose size and mtime are
    those it was indexed at is skipped; another is read, and re-chunked when its content changed."""
    generation = conn.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()[0]
    stats = tree.stats()
    links = set(tree.symlinks())  # not followed: a link may point out of the Brain
    files = [rel for rel in tree.files() if rel in stats and rel not in links and indexable(rel)]
    known = {r[0]: (r[1], r[2]) for r in conn.execute("SELECT path, size, mtime FROM files")}
    embedded = 0
    added: list[str] = []  # the files whose chunks were inserted
    with conn:
        for rel in [rel for rel in files if known.get(rel) != stats[rel]]:
            data = tree.read_if_exists(rel)
            if data is None:
                continue
            size, mtime = stats[rel]
            digest = hashlib.blake2b(data, digest_size=16).hexdigest()
            if rel in known and conn.execute("SELECT hash FROM files WHERE path = ?", (rel,)).fetchone()[0] == digest:
                conn.execute("UPDATE files SET size = ?, mtime = ? WHERE path = ?", (size, mtime, rel))
                continue
            chunks, info = read_document(rel, data)
            conn.execute("INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?, ?, ?, ?)",
                         (rel, digest, size, mtime, *(("\n".join(info.links), "\n".join(info.aliases), info.updated) if info else (None,) * 3)))
            added.append(rel)
            _delete_chunks(conn, rel)
            _insert_chunks(conn, chunks)
        removed = set(known) - set(files)
        for rel in removed:
            conn.execute("DELETE FROM files WHERE path = ?", (rel,))
            _delete_chunks(conn, rel)
        if embedder is not None:
            before = _meta_json(conn, "counts")  # the counts of the generation this update started from
            complete = before.get("generation") == generation and before.get("vectors") == before.get("chunks")
            embedded = embed_missing(conn, embedder, added, complete)
        if added or removed or embedded:
            conn.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'generation'")
        counts = _counts(conn)
    return IndexStats(
        path=INDEX_FILE, files=counts["files"], chunks=counts["chunks"], vectors=counts["vectors"], changed=len(added),
        removed=len(removed), embedded=embedded, lexical=counts["lexical"], embedder=embedder.name if embedder else None, rebuilt=rebuilt,
    )


def _counts(conn: sqlite3.Connection) -> dict:
    """How many files, chunks and vectors the index holds, and who speaks in its sessions, kept per
    generation: counting a large index's rows would be a good part of a one-shot call."""
    gen = conn.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()[0]
    counts = _meta_json(conn, "counts")
    if counts.get("generation") != gen:
        count = lambda sql: conn.execute(sql).fetchone()[0]  # noqa: E731
        counts = {"generation": gen, "files": count("SELECT count(*) FROM files"), "chunks": count("SELECT count(*) FROM chunks"),
                  "vectors": count("SELECT count(*) FROM vectors"),
                  "lexical": count("SELECT count(*) FROM sqlite_master WHERE name = 'chunks_fts'") > 0,
                  "speakers": sorted(r[0] for r in conn.execute("SELECT DISTINCT speaker FROM chunks WHERE speaker IS NOT NULL"))}
        conn.execute("INSERT OR REPLACE INTO meta VALUES ('counts', ?)", (json.dumps(counts),))
    return counts


def _meta_json(conn: sqlite3.Connection, key: str) -> dict:
    """A JSON object kept in the meta table ({} when absent or unreadable: it is then made again)."""
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    try:
        value = json.loads(row[0]) if row else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _delete_chunks(conn: sqlite3.Connection, rel: str) -> None:
    conn.execute("DELETE FROM vectors WHERE id IN (SELECT id FROM chunks WHERE path = ?)", (rel,))
    conn.execute("DELETE FROM chunks WHERE path = ?", (rel,))


def _insert_chunks(conn: sqlite3.Connection, chunks: list[Chunk]) -> None:
    """Insert one file's chunks. A turn's `context` is the turn before it in the session: a reply
    ("It taught me self-acceptance") is found by the words of what it answers ("Becoming Nicole")."""
    rows, before = [], ""
    for c in chunks:
        body = f"{c.meta.get('speaker', '')}: {c.text}" if c.kind == "turn" else plain(c.text)  # what lexical and dense see
        context = before if c.kind == "turn" else ""
        before = c.text if c.kind == "turn" else ""  # without its speaker: a name there would match every reply
        rows.append((c.ref, c.kind, c.path, c.title, c.text, body, " ".join(c.cites), c.date, c.confidence,
                     json.dumps(c.meta, sort_keys=True) if c.meta else None, c.meta.get("speaker"), c.meta.get("role"),
                     c.meta.get("until"), f"kind{c.kind} top{c.path.split('/', 1)[0].lower()}", context))
    conn.executemany(
        "INSERT INTO chunks(ref, kind, path, title, text, body, cites, date, confidence, meta, speaker, role, until, facets, "
        "context) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        rows,
    )
