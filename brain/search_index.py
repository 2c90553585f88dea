"""The search index: chunks of the Brain in SQLite under `.dream/cache/`, FTS5 and vectors beside them.

`SearchIndex.open(root, embedder)` brings the index up to date before it answers: a folder of
notes or sessions that git vouches holds the tree it held when last indexed is skipped whole, a
file whose size and mtime are unchanged is skipped, any other is hashed and re-chunked only when
its content hash changed, and files that disappeared lose their chunks. Vectors are computed for chunks that
lack one for the current embedder. An index that cannot be read (corrupt, other schema) is
deleted and rebuilt, and `stats.rebuilt` says why. It is a cache: deleting it loses nothing.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import os
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from pydantic import ConfigDict

from brain import layout
from brain.chunks import Chunk, chunks_of, indexable
from brain.model import Model
from brain.repo import blob_id
from brain.scan import WorktreeScan, tree_folder
from brain.tree import DirTree, in_sorted

if TYPE_CHECKING:
    import numpy as np

    from brain.embed import Embedder

INDEX_FILE = f"{layout.CACHE}/search.sqlite3"
VECTORS_DIR = f"{layout.CACHE}/search-vectors"  # the vector matrix as .npy files, for one-shot calls (see matrix())
SCHEMA_VERSION = "4"
EMBED_BATCH = 512
CONTEXT_WEIGHT = 0.4  # bm25 weight of a turn's context column: the turn it answers (see _insert_chunks)
_SCHEMA = """
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE files(path TEXT PRIMARY KEY, hash TEXT NOT NULL, size INTEGER, mtime INTEGER);
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
_VECTOR_CACHE: dict[tuple[str, str], tuple] = {}
_MASK_CACHE: dict[tuple, "np.ndarray"] = {}
_NAME_CACHE: dict[tuple, frozenset[str]] = {}


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


def search_text(chunk: Chunk) -> str:
    """What lexical and dense search see of a chunk: its text, with the speaker of a turn."""
    from brain.chunks import plain

    if chunk.kind == "turn":
        return f"{chunk.meta.get('speaker', '')}: {chunk.text}"
    return plain(chunk.text)


class SearchIndex:
    """An open, up-to-date index of one Brain. Use `SearchIndex.open`."""

    def __init__(self, root: Path, conn: sqlite3.Connection, embedder: "Embedder | None", stats: IndexStats,
                 tree: DirTree | None = None) -> None:
        self.root = root
        self.conn = conn
        self.embedder = embedder
        self.stats = stats
        self.tree = tree or DirTree(root)  # the Brain as the index was brought in step with it

    @classmethod
    def open(cls, root: Path, embedder: "Embedder | None" = None, fts: bool = True, scan: WorktreeScan | None = None,
             tree: DirTree | None = None) -> "SearchIndex":
        """Open (or create) and update the index of the Brain at `root`; rebuilds it when unreadable.

        `fts=False` builds it without FTS5, as on a SQLite compiled without it (lexical search off).
        `scan`: git's scan of the Brain, started by the caller before its imports (brain.scan), or
        `tree`: the Brain's tree such a scan gave. The index keeps it (`brain context` ranks with it).
        """
        root = Path(root)
        db = root / INDEX_FILE
        db.parent.mkdir(parents=True, exist_ok=True)
        rebuilt = None
        for attempt in (1, 2):
            try:
                conn, reason = _connect(db, fts)
                rebuilt = rebuilt or reason
                tree = tree or (scan or WorktreeScan(root, walk=True)).tree()
                stats = _update(root, conn, embedder, rebuilt, tree)
                return cls(root, conn, embedder, stats, tree)
            except sqlite3.DatabaseError as exc:
                if attempt == 2:
                    raise
                rebuilt = f"the index could not be read ({exc}); rebuilt from the Brain's files"
                _remove(db)
        raise AssertionError("unreachable")

    def close(self) -> None:
        self.conn.close()

    @property
    def lexical_ready(self) -> bool:
        return self.stats.lexical

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
        """First names of everyone who speaks in a session, lower case (cached per index generation)."""
        key = ("speakers", str(self.root / INDEX_FILE), self._meta("generation"))
        if key not in _NAME_CACHE:
            rows = self.conn.execute("SELECT DISTINCT speaker FROM chunks WHERE speaker IS NOT NULL").fetchall()
            _NAME_CACHE.clear()
            _NAME_CACHE[key] = frozenset(r[0].split()[0].casefold() for r in rows if r[0] and r[0].split())
        return _NAME_CACHE[key]

    def light(self, ids: list[int]) -> dict[int, Light]:
        return {row[0]: Light(*row) for row in self._rows(_LIGHT, "id", ids)}

    def light_by_refs(self, refs: list[str]) -> dict[str, Light]:
        return {row[1]: Light(*row) for row in self._rows(_LIGHT, "ref", refs)}

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
        tops = [p.rstrip("/") for p in exclude if p.endswith("/") and p.count("/") == 1 and p[:-1].isalnum()]
        for top in tops:
            match += f" NOT facets : top{top.lower()}"
        rest = tuple(p for p in exclude if p.rstrip("/") not in tops)
        if rest:  # a deeper prefix: filter by path (slower, needs the join)
            where, params = _filters((), rest)
            sql = (f"SELECT c.id, bm25(chunks_fts, 0.3, 1.0, 0.0, {CONTEXT_WEIGHT}) AS s FROM chunks_fts JOIN chunks c ON c.id = chunks_fts.rowid "
                   f"WHERE chunks_fts MATCH ? {where} ORDER BY s LIMIT ?")
            return [(r[0], r[1]) for r in self.conn.execute(sql, [match, *params, limit])]
        sql = f"SELECT rowid, bm25(chunks_fts, 0.3, 1.0, 0.0, {CONTEXT_WEIGHT}) AS s FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY s LIMIT ?"
        return [(r[0], r[1]) for r in self.conn.execute(sql, [match, limit])]

    def recent(self, limit: int, kinds: tuple[str, ...], exclude: tuple[str, ...]) -> list[int]:
        where, params = _filters(kinds, exclude)
        sql = f"SELECT c.id FROM chunks c WHERE 1 {where} ORDER BY c.date DESC, c.id DESC LIMIT ?"
        return [r[0] for r in self.conn.execute(sql, [*params, limit])]

    def matrix(self) -> tuple["np.ndarray", "np.ndarray", "np.ndarray", "np.ndarray"]:
        """(ids, unit vectors, kinds, paths) of every embedded chunk; cached per index generation.

        Reading 100,000 vectors out of SQLite takes about a second, so a one-shot `brain search`
        would pay it on every call: the matrix is also kept as `.npy` files under VECTORS_DIR,
        named by the index's instance and generation, and memory-mapped from there. A snapshot
        that is missing, stale or unreadable is rebuilt from SQLite; it is a cache of a cache.
        """
        import numpy as np

        gen = self._meta("generation") or "0"
        name = f"{self._meta('instance') or 'legacy'}-{gen}-{hashlib.blake2b(str(self._meta('embedder')).encode(), digest_size=4).hexdigest()}"
        key = (str(self.root / INDEX_FILE), name)  # the snapshot's name: a rebuilt index is another instance
        hit = _VECTOR_CACHE.get(key)
        if hit is None:
            dim = self.embedder.dim if self.embedder else 0
            hit = _load_vectors(self.root / VECTORS_DIR / name, dim) or self._carried(name, dim)
            if hit is not None and not (self.root / VECTORS_DIR / name).exists():
                _save_vectors(self.root / VECTORS_DIR, name, hit)
            if hit is None:
                rows = self.conn.execute("SELECT c.id, c.kind, c.path FROM vectors v JOIN chunks c ON c.id = v.id ORDER BY v.id").fetchall()
                blob = b"".join(r[0] for r in self.conn.execute("SELECT vec FROM vectors ORDER BY id"))
                ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
                mat = np.frombuffer(blob, dtype=np.float32).reshape(len(rows), dim) if rows else np.zeros((0, dim), np.float32)
                kinds = np.array([r[1] for r in rows], dtype=object)
                paths = np.array([r[2] for r in rows], dtype=object)
                hit = (ids, mat, kinds, paths)
                _save_vectors(self.root / VECTORS_DIR, name, hit)
            _VECTOR_CACHE.clear()
            _MASK_CACHE.clear()
            _VECTOR_CACHE[key] = hit
        return hit

    #: More new vectors than this share of all and the matrix is read whole from SQLite instead.
    CARRY_MAX_NEW = 0.25

    def _carried(self, name: str, dim: int) -> tuple | None:
        """The matrix of snapshot `name`, from an earlier snapshot of this index and embedder: its
        rows whose chunks still have their vector, then the vectors added since (a nightly run adds a
        few hundred of 200,000; reading them all out of SQLite took a second). Only from a snapshot
        no chunk id was used twice since (`_chunk_ids`): then the ids kept name the same vectors,
        and every new id is larger than the snapshot's. None when there is none such."""
        import numpy as np

        parts = name.rsplit("-", 2)
        if len(parts) != 3 or not parts[1].isdigit():
            return None
        instance, gen, digest = parts
        ids_meta = _meta_json(self.conn, "ids")
        if ids_meta.get("at") != int(gen) or not isinstance(ids_meta.get("from"), int):
            return None
        earlier = []
        try:
            for entry in (self.root / VECTORS_DIR).iterdir():
                parts = entry.name.rsplit("-", 2)
                if len(parts) == 3 and parts[0] == instance and parts[2] == digest and parts[1].isdigit() \
                        and ids_meta["from"] <= int(parts[1]) < int(gen):
                    earlier.append((int(parts[1]), entry))
        except OSError:
            return None
        if not earlier:
            return None
        old = _load_vectors(max(earlier)[1], dim)
        if old is None:
            return None
        old_ids, old_mat, old_kinds, old_paths = old
        # Every vector's id, as one string SQLite joins and numpy parses (rows one by one cost 0.15 s).
        listed = self.conn.execute("SELECT group_concat(id, ' ') FROM (SELECT id FROM vectors ORDER BY id)").fetchone()[0]
        now = np.array(listed.split(), dtype=np.int64) if listed else np.zeros(0, dtype=np.int64)
        keep = np.isin(old_ids, now, assume_unique=True)
        new = np.setdiff1d(now, old_ids, assume_unique=True)
        if len(new) > self.CARRY_MAX_NEW * len(now) or (len(new) and len(old_ids) and new[0] <= old_ids[-1]):
            return None  # mostly new, or a vector added for an older chunk: read whole
        rows = []
        for i in range(0, len(new), 500):
            part = new[i : i + 500].tolist()
            rows += self.conn.execute(f"SELECT v.id, c.kind, c.path, v.vec FROM vectors v JOIN chunks c ON c.id = v.id "
                                      f"WHERE v.id IN ({','.join('?' * len(part))}) ORDER BY v.id", part).fetchall()
        if [r[0] for r in rows] != new.tolist():
            return None
        kept = int(keep.sum())
        mat = np.empty((kept + len(rows), dim), dtype=np.float32)  # filled once: the matrix is 200 MB on the 10k Brain
        np.compress(keep, old_mat, axis=0, out=mat[:kept])
        mat[kept:] = np.frombuffer(b"".join(r[3] for r in rows), dtype=np.float32).reshape(len(rows), dim)
        return (np.concatenate([old_ids[keep], new]), mat,
                np.concatenate([old_kinds[keep], np.array([r[1] for r in rows], dtype=object)]),
                np.concatenate([old_paths[keep], np.array([r[2] for r in rows], dtype=object)]))

    def mask(self, kinds: tuple[str, ...], exclude: tuple[str, ...]) -> "np.ndarray":
        """Which rows of `matrix()` are of the kinds (all when empty) and outside the excluded prefixes."""
        import numpy as np

        ids, _, kind_arr, path_arr = self.matrix()
        key = (str(self.root / INDEX_FILE), self._meta("generation"), kinds, exclude)
        hit = _MASK_CACHE.get(key)
        if hit is None:
            hit = np.isin(kind_arr, list(kinds)) if kinds else np.ones(len(ids), dtype=bool)
            for prefix in exclude:
                hit &= ~np.fromiter((p.startswith(prefix) for p in path_arr), dtype=bool, count=len(path_arr))
            if len(_MASK_CACHE) > 32:
                _MASK_CACHE.clear()
            _MASK_CACHE[key] = hit
        return hit

    def _meta(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None


def _codes(values: "np.ndarray") -> tuple[list[str], "np.ndarray"]:
    """Distinct strings and each value's index among them (how kinds and paths are stored as .npy)."""
    import numpy as np

    names = sorted(set(values.tolist()))
    where = {n: i for i, n in enumerate(names)}
    return names, np.fromiter((where[v] for v in values), dtype=np.int32, count=len(values))


def _save_vectors(folder: Path, name: str, matrix: tuple) -> None:
    """Write the matrix as a snapshot folder (written aside, then renamed into place); drop older ones.

    Best effort: a snapshot that cannot be written only costs the next call its second.
    """
    import shutil
    import tempfile

    import numpy as np

    ids, mat, kinds, paths = matrix
    try:
        folder.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=folder))
        kind_names, kind_codes = _codes(kinds)
        path_names, path_codes = _codes(paths)
        np.save(tmp / "ids.npy", ids)
        np.save(tmp / "vectors.npy", np.ascontiguousarray(mat, dtype=np.float32))
        np.save(tmp / "kinds.npy", kind_codes)
        np.save(tmp / "paths.npy", path_codes)
        (tmp / "names.json").write_text(json.dumps({"kinds": kind_names, "paths": path_names}))
        try:
            os.rename(tmp, folder / name)
        except OSError:  # another process wrote the same snapshot first
            shutil.rmtree(tmp, ignore_errors=True)
        for old in folder.iterdir():
            if old.name != name:
                shutil.rmtree(old, ignore_errors=True)
    except OSError:
        return


def _load_vectors(folder: Path, dim: int) -> tuple | None:
    """A snapshot written by _save_vectors, or None when it is missing or does not hold together."""
    import numpy as np

    try:
        names = json.loads((folder / "names.json").read_text())
        ids = np.load(folder / "ids.npy")
        mat = np.load(folder / "vectors.npy", mmap_mode="r")
        kind_codes = np.load(folder / "kinds.npy")
        path_codes = np.load(folder / "paths.npy")
        n = len(ids)
        if mat.shape != (n, dim) or len(kind_codes) != n or len(path_codes) != n:
            return None
        kinds = np.array(names["kinds"], dtype=object)[kind_codes] if n else np.array([], dtype=object)
        paths = np.array(names["paths"], dtype=object)[path_codes] if n else np.array([], dtype=object)
        return ids, mat, kinds, paths
    except (OSError, ValueError, KeyError, IndexError, TypeError):
        return None


def _filters(kinds: tuple[str, ...], exclude: tuple[str, ...]) -> tuple[str, list]:
    where, params = "", []
    if kinds:
        where += f" AND c.kind IN ({','.join('?' * len(kinds))})"
        params += list(kinds)
    for prefix in exclude:
        where += " AND substr(c.path, 1, ?) != ?"
        params += [len(prefix), prefix]
    return where, params


def _chunk(row: tuple) -> Chunk:
    ref, kind, path, title, text, cites, date, confidence, meta = row
    return Chunk(ref=ref, kind=kind, path=path, title=title, text=text, cites=cites.split() if cites else [],
                 date=date, confidence=confidence, meta=json.loads(meta) if meta else {})


def _remove(db: Path) -> None:
    for suffix in ("", "-journal", "-wal", "-shm"):
        try:
            os.remove(f"{db}{suffix}")
        except FileNotFoundError:
            pass


def _connect(db: Path, fts: bool) -> tuple[sqlite3.Connection, str | None]:
    """An open index with our schema; recreated (with the reason) when it is another version."""
    reason = None
    if db.exists():
        conn = sqlite3.connect(db, timeout=30)
        try:
            version = conn.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
            has_fts = conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'chunks_fts'").fetchone() is not None
        except sqlite3.DatabaseError as exc:
            conn.close()
            version, has_fts, reason = None, False, f"the index could not be read ({exc}); rebuilt from the Brain's files"
        if version and version[0] == SCHEMA_VERSION and has_fts == fts:
            return conn, None
        if reason is None:
            conn.close()
            reason = "the index was made by another version; rebuilt"
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


def _update(root: Path, conn: sqlite3.Connection, embedder: "Embedder | None", rebuilt: str | None,
            tree: DirTree | None = None) -> IndexStats:
    """Bring the index in step with the files; one transaction.

    A folder of notes or sessions whose git tree is the one it had when the index was last brought
    in step with it, and which git vouches holds exactly that tree (DirTree.folder_tree), is
    skipped whole: on a 10,000-session Brain those are 67,000 of its 68,000 files, and a stat of
    each (with the listing of the index's rows) took most of a second per call. A folder git
    vouches holds another tree than it was indexed at (a commit since: a nightly run) is looked
    at only where the two trees differ (`git diff-tree`). The others are compared by size and
    mtime as before.
    """
    tree = tree or WorktreeScan(root, walk=True).tree()
    listing = tree.files()
    then = _meta_json(conn, "trees")
    vouched: dict[str, str] = {}  # folder → the tree git vouches it holds
    skipped: list[str] = []  # folders ("a/b/") in step with their tree, or moved: neither listed nor stat'ed whole
    moved: list[str] = []  # the paths that differ between the tree a moved folder was indexed at and its tree now
    for folder, tree_id in sorted(tree.folders.items()):
        lo, hi = bisect.bisect_left(listing, folder + "/"), bisect.bisect_left(listing, folder + "0")
        if tree.folder_tree(folder, listing[lo:hi]) != tree_id:
            continue
        vouched[folder] = tree_id
        before = then.get(folder)
        if before == tree_id:
            skipped.append(folder + "/")
        elif isinstance(before, str) and (changes := _tree_changes(root, before, tree_id)) is not None:
            skipped.append(folder + "/")
            moved += [f"{folder}/{c.path}" for c in changes if indexable(f"{folder}/{c.path}")]
    listed = [rel for rel in moved if in_sorted(listing, rel)]
    files = sorted([rel for rel in _outside(listing, skipped) if indexable(rel)] + listed)
    known = {r[0]: (r[1], r[2], r[3]) for lo, hi in _gaps(skipped)
             for r in conn.execute("SELECT path, hash, size, mtime FROM files WHERE path >= ? AND path < ?", (lo, hi))}
    for i in range(0, len(moved), 500):
        part = moved[i : i + 500]
        known.update((r[0], (r[1], r[2], r[3])) for r in conn.execute(
            f"SELECT path, hash, size, mtime FROM files WHERE path IN ({','.join('?' * len(part))})", part))
    changed = removed = embedded = 0
    added: list[str] = []  # the files whose chunks were inserted
    unsure: set[str | None] = set()  # folders not to remember as in step: a file unread, or not as git has it
    with conn:
        ids = _chunk_ids(conn)
        kept_ids = dict(ids)
        for rel in files:
            full = os.path.join(root, rel)
            try:
                st = os.stat(full)
            except OSError:
                unsure.add(tree_folder(rel))
                continue
            old = known.get(rel)
            if old and old[1] == st.st_size and old[2] == st.st_mtime_ns:
                continue
            try:
                with open(full, "rb") as f:
                    data = f.read()
            except OSError:
                unsure.add(tree_folder(rel))
                continue
            key = tree.key(rel)
            if key is None or key != blob_id(data):  # git does not vouch for it, or it changed since git's look
                unsure.add(tree_folder(rel))
            digest = hashlib.blake2b(data, digest_size=16).hexdigest()
            conn.execute("INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?)", (rel, digest, st.st_size, st.st_mtime_ns))
            if old and old[0] == digest:
                continue
            changed += 1
            added.append(rel)
            _delete_chunks(conn, rel)
            _insert_chunks(conn, chunks_of(rel, data), ids)
        for rel in set(known) - set(files):
            removed += 1
            conn.execute("DELETE FROM files WHERE path = ?", (rel,))
            _delete_chunks(conn, rel)
        # Only folders git vouches for now are remembered: a folder indexed while it held changes git
        # did not vouch for has no tree to follow a diff from (a change undone later would be missed).
        trees = {folder: tree_id for folder, tree_id in vouched.items() if folder not in unsure}
        if trees != then:
            conn.execute("INSERT OR REPLACE INTO meta VALUES ('trees', ?)", (json.dumps(trees, sort_keys=True),))
        if embedder is not None:
            embedded = _embed_missing(conn, embedder, added)
        if changed or removed or embedded:
            conn.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'generation'")
        # The counts, kept per generation: counting 100,000 rows costs a one-shot call ~0.07 s.
        gen = conn.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()[0]
        ids["at"] = int(gen)
        if ids != kept_ids or _meta_json(conn, "ids") != ids:
            conn.execute("INSERT OR REPLACE INTO meta VALUES ('ids', ?)", (json.dumps(ids, sort_keys=True),))
        counts = _meta_json(conn, "counts")
        if counts.get("generation") != gen:
            count = lambda sql: conn.execute(sql).fetchone()[0]  # noqa: E731
            counts = {"generation": gen, "files": count("SELECT count(*) FROM files"), "chunks": count("SELECT count(*) FROM chunks"),
                      "vectors": count("SELECT count(*) FROM vectors"),
                      "lexical": count("SELECT count(*) FROM sqlite_master WHERE name = 'chunks_fts'") > 0}
            conn.execute("INSERT OR REPLACE INTO meta VALUES ('counts', ?)", (json.dumps(counts),))
    return IndexStats(
        path=INDEX_FILE, files=counts["files"], chunks=counts["chunks"], vectors=counts["vectors"], changed=changed,
        removed=removed, embedded=embedded, lexical=counts["lexical"], embedder=embedder.name if embedder else None, rebuilt=rebuilt,
    )


#: A folder whose tree moved by more files than this is compared whole (a diff would not be shorter).
MOVED_MAX = 5000


def _tree_changes(root: Path, before: str, now: str) -> "list | None":
    """What differs between two trees of a folder (brain.repo.TreeChange), None when git cannot say
    (a tree it no longer has) or when that is more than MOVED_MAX files."""
    from brain.errors import BrainError
    from brain.repo import BrainRepo

    try:
        changes = BrainRepo(root).tree_changes(before, now)
    except BrainError:
        return None
    return changes if changes is not None and len(changes) <= MOVED_MAX else None


def _meta_json(conn: sqlite3.Connection, key: str) -> dict:
    """A JSON object kept in the meta table ({} when absent or unreadable: it is then made again)."""
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    try:
        value = json.loads(row[0]) if row else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _outside(listing: list[str], prefixes: list[str]) -> list[str]:
    """The paths of the sorted `listing` below none of the sorted folder `prefixes` ("a/b/")."""
    out, at = [], 0
    for prefix in prefixes:
        lo = bisect.bisect_left(listing, prefix, at)
        out += listing[at:lo]
        at = bisect.bisect_left(listing, prefix[:-1] + "0", lo)
    return out + listing[at:]


def _gaps(prefixes: list[str]) -> list[tuple[str, str]]:
    """The ranges [lo, hi) of paths between the sorted folder `prefixes` ("a/b/"): in SQLite's
    order of text (its bytes, UTF-8) as in Python's, so the two agree on what is below a folder."""
    out, lo = [], ""
    for prefix in prefixes:
        out.append((lo, prefix))
        lo = prefix[:-1] + "0"  # "0" follows "/"
    return out + [(lo, "\U0010ffff")]  # above every path


def _delete_chunks(conn: sqlite3.Connection, rel: str) -> None:
    conn.execute("DELETE FROM vectors WHERE id IN (SELECT id FROM chunks WHERE path = ?)", (rel,))
    conn.execute("DELETE FROM chunks WHERE path = ?", (rel,))


def _insert_chunks(conn: sqlite3.Connection, chunks: list[Chunk], ids: dict[str, int]) -> None:
    """Insert one file's chunks, numbered from ids["next"] on (never an id used before: see
    `_chunk_ids`). A turn's `context` is the turn before it in the session: a reply ("It taught
    me self-acceptance") is found by the words of what it answers ("Becoming Nicole")."""
    rows, before = [], ""
    for c in chunks:
        body = search_text(c)
        context = before if c.kind == "turn" else ""
        before = c.text if c.kind == "turn" else ""  # without its speaker: a name there would match every reply
        rows.append((ids["next"], c.ref, c.kind, c.path, c.title, c.text, body, " ".join(c.cites), c.date, c.confidence,
                     json.dumps(c.meta, sort_keys=True) if c.meta else None, c.meta.get("speaker"), c.meta.get("role"),
                     c.meta.get("until"), f"kind{c.kind} top{c.path.split('/', 1)[0].lower()}", context))
        ids["next"] += 1
    conn.executemany(
        "INSERT INTO chunks(id, ref, kind, path, title, text, body, cites, date, confidence, meta, speaker, role, until, facets, "
        "context) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        rows,
    )


def _chunk_ids(conn: sqlite3.Connection) -> dict[str, int]:
    """{"next": the id the next chunk gets, "from": the generation since which no id was used
    twice, "at": the generation the index had when this was last kept}.

    SQLite would give a new chunk the largest id plus one, so a file whose chunks were the last
    ones would get the same ids again for other text. A vector snapshot taken at a generation at
    or after "from" can then be carried forward by ids (`SearchIndex.matrix`). When the index was
    changed by code that does not keep these ("at" is not its generation), they start afresh."""
    gen = int(conn.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()[0])
    ids = _meta_json(conn, "ids")
    if all(isinstance(ids.get(k), int) for k in ("next", "from", "at")) and ids["at"] == gen:
        return ids
    top = conn.execute("SELECT max(id) FROM chunks").fetchone()[0] or 0
    return {"next": top + 1, "from": gen, "at": gen}


def _embed_missing(conn: sqlite3.Connection, embedder: "Embedder", added: list[str] | None = None) -> int:
    """Vectors for chunks that have none for this embedder (all of them when the embedder changed).

    `added`: the files whose chunks this update inserted. When the counts kept for the generation
    before it say every chunk had its vector then, only those files' chunks are looked at, not
    all 200,000 (the join cost 0.1-0.2 s per call)."""
    row = conn.execute("SELECT value FROM meta WHERE key = 'embedder'").fetchone()
    if row is None or row[0] != embedder.name:
        conn.execute("DELETE FROM vectors")
        conn.execute("INSERT OR REPLACE INTO meta VALUES ('embedder', ?)", (embedder.name,))
    elif added is not None:
        gen = conn.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()[0]
        counts = _meta_json(conn, "counts")
        if counts.get("generation") == gen and counts.get("vectors") == counts.get("chunks"):
            todo = []
            for i in range(0, len(added), 500):
                part = added[i : i + 500]
                todo += conn.execute(
                    "SELECT c.id, c.title, c.body, c.kind FROM chunks c LEFT JOIN vectors v ON v.id = c.id WHERE v.id IS NULL "
                    f"AND c.path IN ({','.join('?' * len(part))})", part).fetchall()
            return _embed(conn, embedder, sorted(todo))
    todo = conn.execute(
        "SELECT c.id, c.title, c.body, c.kind FROM chunks c LEFT JOIN vectors v ON v.id = c.id WHERE v.id IS NULL ORDER BY c.id"
    ).fetchall()
    return _embed(conn, embedder, todo)


def _embed(conn: sqlite3.Connection, embedder: "Embedder", todo: list) -> int:
    """Embed the chunks (id, title, body, kind) in batches, in the order given, into the vectors table."""
    for i in range(0, len(todo), EMBED_BATCH):
        part = todo[i : i + EMBED_BATCH]
        texts = [body if kind == "turn" else f"{title}: {body}" for _, title, body, kind in part]
        vecs = embedder.embed(texts)
        conn.executemany("INSERT INTO vectors VALUES (?, ?)", [(cid, vecs[j].astype("float32").tobytes()) for j, (cid, *_) in enumerate(part)])
    return len(todo)
