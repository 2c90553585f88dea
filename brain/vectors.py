"""The search index's vectors: computed for the chunks that lack one, and read as one matrix.

Reading every vector out of SQLite would cost each one-shot `brain search` more than the search
(docs/context.md), so the matrix is kept under `.dream/cache/search-vectors/<name>/`, named by
the index's instance and generation, and memory-mapped from there. A snapshot that is missing or
unreadable is made again from SQLite; older ones are removed.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

    from brain.embed import Embedder

EMBED_BATCH = 512

Matrix = tuple["np.ndarray", "np.ndarray", "np.ndarray", "np.ndarray"]  # ids, unit vectors, kinds, paths


def load_matrix(conn: sqlite3.Connection, folder: Path, name: str, dim: int) -> Matrix:
    """The matrix of snapshot `name` from its files, else from SQLite (and then kept)."""
    found = _load(folder / name, dim)
    if found is None:
        found = _from_sqlite(conn, dim)
        _save(folder, name, found)
    return found


def _from_sqlite(conn: sqlite3.Connection, dim: int) -> Matrix:
    import numpy as np

    rows = conn.execute("SELECT c.id, c.kind, c.path FROM vectors v JOIN chunks c ON c.id = v.id ORDER BY v.id").fetchall()
    blob = b"".join(r[0] for r in conn.execute("SELECT vec FROM vectors ORDER BY id"))
    ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
    mat = np.frombuffer(blob, dtype=np.float32).reshape(len(rows), dim) if rows else np.zeros((0, dim), np.float32)
    return ids, mat, np.array([r[1] for r in rows], dtype=object), np.array([r[2] for r in rows], dtype=object)


def _codes(values: "np.ndarray") -> tuple[list[str], "np.ndarray"]:
    """Distinct strings and each value's index among them (how kinds and paths are stored as .npy)."""
    import numpy as np

    names = sorted(set(values.tolist()))
    where = {n: i for i, n in enumerate(names)}
    return names, np.fromiter((where[v] for v in values), dtype=np.int32, count=len(values))


def _save(folder: Path, name: str, matrix: Matrix) -> None:
    """Write the snapshot aside, rename it into place, drop older ones. A snapshot that cannot be
    written only costs the next call its second."""
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


def _load(folder: Path, dim: int) -> Matrix | None:
    """A snapshot `_save` wrote, or None when it is missing or does not hold together."""
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
        return ids, mat, np.array(names["kinds"], dtype=object)[kind_codes], np.array(names["paths"], dtype=object)[path_codes]
    except (OSError, ValueError, KeyError, IndexError, TypeError):
        return None


def embed_missing(conn: sqlite3.Connection, embedder: "Embedder", added: list[str], complete: bool) -> int:
    """Vectors for chunks that have none for this embedder (all of them when the embedder changed).

    `added`: the files whose chunks this update inserted; `complete`: every other chunk had its
    vector before, so only those files' chunks are looked at, not every chunk of the index."""
    missing = "SELECT c.id, c.title, c.body, c.kind FROM chunks c LEFT JOIN vectors v ON v.id = c.id WHERE v.id IS NULL"
    row = conn.execute("SELECT value FROM meta WHERE key = 'embedder'").fetchone()
    if row is None or row[0] != embedder.name:
        conn.execute("DELETE FROM vectors")
        conn.execute("INSERT OR REPLACE INTO meta VALUES ('embedder', ?)", (embedder.name,))
    elif complete:
        todo = []
        for i in range(0, len(added), 500):
            part = added[i : i + 500]
            todo += conn.execute(f"{missing} AND c.path IN ({','.join('?' * len(part))})", part).fetchall()
        return _embed(conn, embedder, sorted(todo))
    return _embed(conn, embedder, conn.execute(f"{missing} ORDER BY c.id").fetchall())


def _embed(conn: sqlite3.Connection, embedder: "Embedder", todo: list) -> int:
    """Embed the chunks (id, title, body, kind) in batches, in the order given, into the vectors table."""
    for i in range(0, len(todo), EMBED_BATCH):
        part = todo[i : i + EMBED_BATCH]
        texts = [body if kind == "turn" else f"{title}: {body}" for _, title, body, kind in part]
        vecs = embedder.embed(texts)
        conn.executemany("INSERT INTO vectors VALUES (?, ?)", [(cid, vecs[j].astype("float32").tobytes()) for j, (cid, *_) in enumerate(part)])
    return len(todo)
