"""DocCards: what is derived from a document, remembered by the git blob id of its bytes.

A page's names and index line, a session summary's index line: a run and its validators need
these for every document of a large Brain, but only a few documents change per run. A card is
looked up by path and content key; the key comes from the tree without reading the file when git
vouches for it (`Tree.key`), else from the bytes. A stale entry (other key), a missing or corrupt
cache file all fall back to parsing, so a cache only ever saves time.
"""

from __future__ import annotations

import bisect
import functools
import hashlib
import json
import operator
import os
import re
import zlib
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable

from brain import layout
from brain.forked import Forked, run_forked
from brain.repo import blob_id
from brain.tree import Tree

if TYPE_CHECKING:
    from brain.page import Page

Parse = Callable[[str], Any]  # path → Page | None


class DocCards:
    """Cards by path, each kept with the content key it was built from.

    Persisted (when `folder` is set) as one JSON file per shard: pages, each sessions folder in
    BUCKETS shards, each topic's notes in NOTE_BUCKETS, loaded on first use and written only when
    they changed, so a run pays only for the parts of the Brain it touches (the owner's notes
    alone are ~20 MB of cards on a 10,000-session Brain; a run adds a few). What a run asks of
    every file of a folder (summary lines, raw session hashes) is kept in LineStores instead.
    """

    def __init__(self, folder: Path | None = None, version: str = "") -> None:
        """`version` names the code that builds the cards: shards written by other code are ignored."""
        self.folder = Path(folder) if folder is not None else None
        self.version = version
        self._shards: dict[str, dict[str, list]] = {}  # shard → path → [blob id, card]
        self._dirty: set[str] = set()
        self._files: dict[str, bytes | None] = {}  # other cache files to write (None: remove), by name under folder
        self._saver: Forked[bool] | None = None  # a background save
        self._stores: dict[str, LineStore] = {}  # by file name under folder
        #: name → [blob id, card] of the version of a file the entry no longer holds, in memory only:
        #: a run asks for both the live and the staged text of each file it stages, and neither
        #: version's card then evicts the other's (each would be parsed again, in each gate process).
        self._aside: dict[str, list] = {}

    def _entries(self, path: str) -> dict[str, list]:
        name = shard_of(path)
        entries = self._shards.get(name)
        if entries is None:
            entries = self._shards[name] = self._load(name)
        return entries

    def _file(self, name: str) -> Path:
        assert self.folder is not None
        return self.folder / (hashlib.blake2b(name.encode("utf-8"), digest_size=10).hexdigest() + ".json")

    def _load(self, name: str) -> dict[str, list]:
        if self.folder is None:
            return {}
        try:
            raw = json.loads(self._file(name).read_bytes())
        except (OSError, ValueError, UnicodeDecodeError):
            return {}
        if isinstance(raw, dict) and raw.get("version") == self.version and raw.get("shard") == name and isinstance(raw.get("entries"), dict):
            return raw["entries"]
        return {}

    def get(self, path: str) -> list | None:
        """The raw entry [blob id, card] of a path, if any (for tests and tools)."""
        return self._entries(path).get(path)

    def card(self, path: str, tree: Tree, build: Callable[[], dict | None], slot: str = "") -> dict | None:
        """The card of `path` as it is in `tree`: the cached one when its key matches, else `build()`.

        `slot` keeps a second kind of card for the same path apart (stored under "path#slot").
        """
        key = tree.key(path) or blob_id(tree.read_bytes(path))
        entries = self._entries(path)
        name = f"{path}#{slot}" if slot else path
        entry = entries.get(name)
        hit = _entry_card(entry, key)
        if hit is not None:
            return hit
        card = _entry_card(self._aside.get(name), key)
        if card is None:
            card = build()
            if card is None:
                return None
        if _well_formed(entry):
            self._aside[name] = entry  # the other version's card stays at hand
        entries[name] = [key, card]  # the one asked last is the one kept on disk
        self._dirty.add(shard_of(path))
        return card

    def drop(self, path: str, slot: str = "") -> None:
        """Forget a path's card (a corrupt one is dropped, then built again)."""
        name = f"{path}#{slot}" if slot else path
        self._aside.pop(name, None)
        if self._entries(path).pop(name, None) is not None:
            self._dirty.add(shard_of(path))

    def checked(self, path: str, tree: Tree, build: Callable[[], dict | None], valid: Callable[[dict], bool], slot: str = "") -> dict | None:
        """card(), with a cached entry of the wrong shape (corrupt, or written by a bug) dropped and built again."""
        card = self.card(path, tree, build, slot)
        if card is not None and not valid(card):
            self.drop(path, slot)
            card = self.card(path, tree, build, slot)
        return card

    def remember(self, path: str, data: bytes, card: dict[str, Any], blob: str | None = None) -> None:
        """A card for bytes this process is about to write: the next run finds it without parsing.
        `blob`: their git blob id, when the caller has it."""
        self._entries(path)[path] = [blob or blob_id(data), card]
        self._dirty.add(shard_of(path))

    def read_file(self, name: str) -> bytes | None:
        """Another file of the cache (`name` under its folder), as written by `keep_file`."""
        if name in self._files:
            return self._files[name]
        if self.folder is None:
            return None
        try:
            return (self.folder / name).read_bytes()
        except OSError:
            return None

    def keep_file(self, name: str, data: bytes | None) -> None:
        """Write (None: remove) another file of the cache with the next save()."""
        self._files[name] = data

    def page(self, path: str, tree: Tree, parse: Parse) -> dict | None:
        """{'title', 'aliases', 'line'} of a page: its names and its knowledge/index.md line."""

        def build() -> dict | None:
            from brain.render import index_line

            page = parse(path)
            if page is None:
                return None
            return {"title": page.frontmatter.title, "aliases": list(page.frontmatter.aliases), "line": index_line(page)}

        return self.checked(path, tree, build, lambda c: isinstance(c.get("title"), str) and isinstance(c.get("aliases"), list)
                            and isinstance(c.get("line"), str))

    def store(self, name: str, width: int) -> LineStore:
        """The LineStore kept in the file `name` under the cache folder (fields per path: `width`)."""
        found = self._stores.get(name)
        if found is None:
            found = self._stores[name] = LineStore(self.read_file(name), self.version, width)
        return found

    #: Summary cards, one line each in one file: every run renders sessions/index.md from all of
    #: them (10,000 on the 10k Brain), and 64 JSON shards of them took 35 ms to load.
    SUMMARIES_FILE = "summaries.txt"

    def summary(self, path: str, tree: Tree, parse: Parse) -> dict | None:
        """{'started', 'line'} of a session summary: its sessions/index.md line."""
        return self.summaries([path], tree, parse).get(path)

    def summaries(self, paths: Iterable[str], tree: Tree, parse: Parse, every: bool = False) -> dict[str, dict]:
        """summary() of many paths (those that parse), in one loop over the remembered lines.
        `every`: the paths are all the summaries there are; the lines of others are forgotten."""
        from brain.render import session_index_line

        out: dict[str, dict] = {}
        store = self.store(self.SUMMARIES_FILE, 2)
        if every:
            paths = list(paths)
            store.keep_only(paths)
        key_of, get = tree.key, store.get
        for path in paths:
            key = key_of(path) or blob_id(tree.read_bytes(path))
            hit = get(path, key)
            if hit is None:
                page = parse(path)
                if page is None:
                    continue
                hit = (str(page.frontmatter.extras().get("started") or ""), session_index_line(page))
                store.put(path, key, hit)
            out[path] = {"started": hit[0], "line": hit[1]}
        return out

    #: The turn numbers of each raw session a citation was checked against, one line apiece: a
    #: staged page cites dozens of sessions, and each was parsed to see that its turns exist.
    TURNS_FILE = "raw-turns.txt"

    def session_turns(self, path: str, key: str, build: Callable[[], str | None]) -> str | None:
        """The turn numbers of the raw session at `path` whose blob is `key`, as `turn_ranges` writes
        them: remembered, else `build()` (None: it cannot be read, and nothing is remembered)."""
        store = self.store(self.TURNS_FILE, 1)
        hit = store.get(path, key)
        if hit is not None:
            return hit[0]
        spec = build()
        if spec is not None:
            store.put(path, key, (spec,))
        return spec

    def links(self, path: str, tree: Tree, parse: Parse) -> dict | None:
        """{'links': the [[link]] targets a document names, 'updated': its front matter date or None}:
        what ranking index lines needs (brain.indexing.page_ranks), without parsing unchanged files."""

        def build() -> dict | None:
            page = parse(path)
            if page is None:
                return None
            updated = page.frontmatter.updated
            return {"links": link_names(page), "updated": updated.isoformat() if updated else None}

        return self.checked(path, tree, build, lambda c: isinstance(c.get("links"), list) and all(isinstance(t, str) for t in c["links"])
                            and (c.get("updated") is None or isinstance(c.get("updated"), str)), slot="links")

    def save(self, background: bool = False) -> None:
        """Write the shards that learned something (temp file + rename each).

        `background`: the caller will not hear of errors, and the files may be written by a forked
        process while it goes on (`wait()` reaps it): done so past BACKGROUND_MIN_FILES files (a full
        compile writes thousands); fewer (a nightly run's few dozen) are written here, since forking
        a large process and reaping it costs more. A file not written is only a cache miss for the
        next run, so those errors are not reported."""
        appends: dict[str, bytes] = {}
        for name, store in self._stores.items():
            if store.dirty:
                batch = store.batch()
                if batch is None:
                    self._files[name] = store.render()
                else:
                    appends[name] = batch
        if self.folder is None or not (self._dirty or self._files or appends):
            return
        self.wait()
        names, self._dirty = sorted(self._dirty), set()
        files, self._files = self._files, {}
        shards = {self._file(name).name: {"version": self.version, "shard": name, "entries": self._shards[name]} for name in names}
        job: SaveJob = (self.folder, appends, files, shards)
        if background and len(names) + len(files) + len(appends) >= BACKGROUND_MIN_FILES:
            # The child holds no descriptor of the parent's (the run lock) and leaves without cleanup.
            self._saver = run_forked(lambda: write_save(job) or True)
            if self._saver is not None:
                return
        elif background:
            try:
                write_save(job)
            except OSError:  # as in the child: only a cache miss for the next run
                pass
            return
        write_save(job)

    def wait(self) -> None:
        """Wait for a background save to finish (whatever its outcome)."""
        saver, self._saver = self._saver, None
        if saver is not None:
            saver.result()


#: What a DocCards save writes, under a folder: LineStore batches to append (name → bytes), files
#: to write whole (name → bytes; None: remove it), and card shards (file name → its JSON object,
#: dumped by the writer).
SaveJob = tuple[Path, dict[str, bytes], dict[str, "bytes | None"], dict[str, dict]]


def write_save(job: SaveJob) -> None:
    """Write what a DocCards save hands over (temp file + rename each); OSError as it comes."""
    folder, appends, files, shards = job
    folder.mkdir(parents=True, exist_ok=True)
    for name, data in sorted(appends.items()):
        # A LineStore's batch: a torn append fails its trailer's check and is ignored when read.
        with open(folder / name, "ab") as f:
            f.write(data)
    for name, data in sorted(files.items()):
        path = folder / name
        if data is None:
            path.unlink(missing_ok=True)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        _put(path, data)
    for name, shard in shards.items():
        data = {**shard, "entries": dict(sorted(shard["entries"].items()))}
        _put(folder / name, json.dumps(data, separators=(",", ":")).encode("utf-8"))


def _put(path: Path, data: bytes) -> None:
    """A cache file written whole: a temp file, renamed to the name once the old file is removed.
    Renamed over the old file, ext4 (auto_da_alloc, on by default) would start writing the new
    one's data out first: 0.66 ms for a 1.4 MB file here, against 0.23 ms for a name that is free;
    a nightly run writes ~40 such files. A crash between the two steps costs only that file, read
    as a cache miss."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    path.unlink(missing_ok=True)
    os.replace(tmp, path)


#: A background save (DocCards.save) of fewer files than this is written in the caller's process.
#: Measured on the 10k Brain's nightly run (~40 files, 3 MB): the forked writer cost the run ~20 ms
#: more than writing them there (forking a 100 MB process, its page faults, reaping it).
BACKGROUND_MIN_FILES = 200

#: Shards per sessions folder: a file is then written again only with the cards of its bucket, not
#: with all of a folder's.
BUCKETS = 64
#: Shards per topic's notes. A run reads (and writes back) only the buckets of the notes it changes:
#: the owner's topic holds ~40,000 notes on the 10k Brain, 20 MB of cards, and one session changes
#: a dozen of them, so small buckets (~80 cards) keep that to a few hundred kilobytes.
NOTE_BUCKETS = 512


def _well_formed(entry: object) -> bool:
    """A cached entry is `[blob id, card]` (what a cache file holds may be anything)."""
    return type(entry) is list and len(entry) == 2 and type(entry[1]) is dict


def _entry_card(entry: object, key: str) -> dict | None:
    """The card of a cached entry `[blob id, card]` when the blob id is `key`."""
    return entry[1] if _well_formed(entry) and entry[0] == key else None  # type: ignore[index]


def link_names(page: "Page") -> list[str]:
    """The [[link]] targets a document names, each once, sorted: its link card's "links"."""
    return sorted({link.target for link in page.links if link.target})


@functools.lru_cache(maxsize=1 << 17)  # a run asks it of every raw session and summary, some twice
def shard_of(path: str) -> str:
    """Which cache file holds a path's card: a bucket of a topic's notes, pages together, and so on."""
    parts = path.split("/", 2)
    if len(parts) == 3 and parts[0] == "notes":
        return f"notes/{parts[1]}/{zlib.crc32(parts[2].encode('utf-8')) % NOTE_BUCKETS}"
    if len(parts) == 3 and parts[0] == "sessions":
        return f"sessions/{parts[1]}/{zlib.crc32(parts[2].encode('utf-8')) % BUCKETS}"
    return parts[0]


_FINGERPRINTS: dict[tuple[str, ...], str] = {}
_STAT_KEYS: dict[tuple[str, ...], "tuple[str, bool] | None"] = {}  # packages → _stat_key(), once a process
#: A source file changed less than this long ago is not vouched for by its stat in the memo: a
#: change within the same tick of the clock would leave its stat as it was (git's "racy" files).
MEMO_SETTLED_NS = 2_000_000_000


def code_fingerprint(*packages: str, memo: Path | None = None) -> str:
    """A digest of the source of the given packages (their .py files and templates), so a cache
    built by other code (an upgrade, a local change) is not trusted.

    `memo`: a file keeping each digest with the stat of the files it was made from (path, size,
    times, inode); while none of them changed, the sources are not read again (each nightly run
    read and hashed ~1 MB of them, ~4 ms). A change to a file changes its ctime, which no one can
    set; a file changed in the last MEMO_SETTLED_NS is not vouched for. A memo lacking the digest
    is given it, whichever way this process found it."""
    digest = _FINGERPRINTS.get(packages)
    files: list[tuple[str, str]] | None = None
    stat = None
    if memo is not None:
        if packages not in _STAT_KEYS:
            files = _package_sources(packages)
            _STAT_KEYS[packages] = _stat_key(packages, files)
        stat = _STAT_KEYS[packages]
    kept = _memo_read(memo) if memo is not None and stat is not None else {}
    if digest is None:
        digest = kept.get(stat[0]) if stat is not None else None
        if digest is None:
            h = hashlib.blake2b(digest_size=16)
            for rel, file in files if files is not None else _package_sources(packages):
                with open(file, "rb") as f:
                    h.update(rel.encode() + b"\0" + f.read() + b"\0")
            digest = h.hexdigest()
        _FINGERPRINTS[packages] = digest
    if memo is not None and stat is not None and stat[1] and kept.get(stat[0]) != digest:
        _memo_write(memo, stat[0], digest)
    return digest


def _package_sources(packages: tuple[str, ...]) -> list[tuple[str, str]]:
    """(path under its package's folder, file path) of each package's sources, package by package."""
    import importlib.util

    out = []
    for name in packages:
        spec = importlib.util.find_spec(name)
        for folder in list(spec.submodule_search_locations or []) if spec else []:
            out += _sources(folder)
    return out


def _stat_key(packages: tuple[str, ...], files: list[tuple[str, str]]) -> tuple[str, bool] | None:
    """(a digest of the packages' names and their files' paths and stat, whether every file has
    settled: changed more than MEMO_SETTLED_NS ago); None when a file cannot be stat'ed."""
    import time

    h = hashlib.blake2b(",".join(packages).encode(), digest_size=16)
    newest = 0
    try:
        for _rel, file in files:
            st = os.stat(file)
            h.update(f"{file}\0{st.st_size} {st.st_mtime_ns} {st.st_ctime_ns} {st.st_ino} {st.st_dev}\0".encode())
            newest = max(newest, st.st_mtime_ns, st.st_ctime_ns)
    except OSError:
        return None
    return h.hexdigest(), newest < time.time_ns() - MEMO_SETTLED_NS


def _memo_read(memo: Path) -> dict[str, str]:
    """stat key → digest, of the memo's lines `key TAB digest` (a missing or odd file: none)."""
    try:
        text = memo.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return {}
    pairs = (line.split("\t") for line in text.splitlines())
    return {p[0]: p[1] for p in pairs if len(p) == 2 and len(p[0]) == 32 and len(p[1]) == 32}


def _memo_write(memo: Path, key: str, digest: str) -> None:
    """Keep `key → digest` in the memo, with the other packages' lines (a temp file, renamed)."""
    kept = [(k, v) for k, v in _memo_read(memo).items() if k != key][-15:] + [(key, digest)]  # the newest 16
    try:
        memo.parent.mkdir(parents=True, exist_ok=True)
        tmp = memo.with_name(memo.name + f".{os.getpid()}.tmp")
        tmp.write_text("".join(f"{k}\t{v}\n" for k, v in kept), encoding="utf-8")
        os.replace(tmp, memo)
    except OSError:  # a read-only cache: the sources are read again next time
        pass


def _sources(folder: str) -> list[tuple[str, str]]:
    """(posix path under `folder`, file path) of its .py and .j2 files, sorted; bytecode folders
    are not entered (a walk of them was most of the fingerprint's time)."""
    out = []
    for top, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        base = os.path.relpath(top, folder).replace(os.sep, "/")
        for name in files:
            if name.endswith((".py", ".j2")):
                out.append((name if base == "." else f"{base}/{name}", os.path.join(top, name)))
    return sorted(out)


class LineStore:
    """path → (git blob id, fields…) kept as text: a version line, then one line per path,
    `path TAB blob TAB field…`, with backslash, tab and newline escaped in fields. For what a run
    asks of every file of a large folder: splitting lines is several times faster than loading
    the same entries as JSON. A line of the wrong shape is ignored (its file is read again).

    The lines come in batches, each closed by a trailer line `TAB end TAB <lines> TAB <crc32>`. A
    run that only adds or changes a few entries appends them as one batch (`batch()`) instead of
    writing the 10,000 lines again; a later line for a path wins. A batch whose trailer is missing
    or does not match (a torn append) is ignored with everything after it, and the file is written
    whole next time, as it is once MAX_BATCHES have been appended or an entry was removed.

    A line is split into its fields when its path is first asked: a nightly gate asks the turns of
    a few hundred of the 10,000 raw sessions. The first batch, when sorted (as render() writes the file),
    is searched by bisection; the other batches' lines are mapped by path when read. A line not
    of the store's shape is found out when asked, and counts as no entry; a later line for the
    same path still wins over an earlier one (only a hand edit makes such a line)."""

    #: Appended batches after which the next save writes the file whole again.
    MAX_BATCHES = 64

    def __init__(self, raw: bytes | None, version: str, width: int) -> None:
        self.width, self.version = width, version
        self._entries: dict[str, tuple[str, ...]] = {}  # path → (blob id, fields…), split
        self._unsplit: dict[str, str] = {}  # path → the rest of its line (not in _entries), of the later batches
        self._first: list[str] | None = None  # the first batch's lines (sorted: render() wrote them), not split yet
        self._later: frozenset[str] = frozenset()  # paths the later batches hold a line of (theirs wins)
        self._added: dict[str, tuple[str, ...]] = {}  # entries put since the file was read or saved
        self._filed: set[str] = set()  # paths of `_added` that the file holds a line of too
        self._whole = True  # the next save writes the whole file (none readable yet, a removal, a torn batch)
        self._removed = False
        self._batches = 0
        head, _, body = (raw or b"").partition(b"\n")
        if head != f"version {self.version}".encode("utf-8"):
            return
        end = 0
        for m in _trailers(body):
            segment = body[end : m.start()]
            if zlib.crc32(segment) != int(m.group(2), 16) or segment.count(b"\n") != int(m.group(1)):
                break
            end = m.end()
            self._batches += 1
            lines = segment.decode("utf-8", errors="replace").split("\n")[:-1]
            if self._batches == 1 and lines == sorted(lines):  # as render() writes it: not a hand edit
                # Looked up by bisection when asked. A nightly gate on the 10k Brain asks 578 of
                # the 10,000 raw sessions' lines: reading the store took 7.0 ms with a map of every
                # path and takes 3.8 ms so (the order checked), the lookups 0.6 ms and 0.9 ms.
                self._first = lines
                continue
            # path → the rest of its line (a later line for a path wins), split when it is asked.
            self._unsplit.update(_unsplit_lines(lines))
        if self._first is not None:
            self._later = frozenset(self._unsplit)
        self._whole = end != len(body) or self._batches > self.MAX_BATCHES

    @property
    def entries(self) -> dict[str, tuple[str, ...]]:
        """path → (blob id, fields…) of every entry (each line split now, if not yet)."""
        if self._first is not None:
            first, self._first = self._first, None
            unsplit = _unsplit_lines(first)
            # What was asked or put since wins, as does a later batch's line (even one of the wrong shape).
            for path in (*self._entries, *self._later):
                unsplit.pop(path, None)
            unsplit.update(self._unsplit)
            self._unsplit = unsplit
        if self._unsplit:
            for path, rest in self._unsplit.items():
                if (entry := self._split(rest)) is not None:
                    self._entries[path] = entry
            self._unsplit = {}
        return self._entries

    def _entry(self, path: str) -> tuple[str, ...] | None:
        entry = self._entries.get(path)
        if entry is not None:
            return entry
        rest = self._unsplit.pop(path, None)
        if rest is None and self._first is not None and path not in self._later and "\t" not in path:
            rest = _sorted_rest(self._first, path)
        if rest is not None:
            entry = self._split(rest)
            if entry is not None:
                self._entries[path] = entry
        return entry

    def _split(self, rest: str) -> tuple[str, ...] | None:
        """(blob id, fields…) of a line's rest; None when the line is not of the store's shape (it
        is ignored: its file is read again). Unescaped only where it has a backslash (most have none)."""
        parts = rest.split("\t")
        if len(parts) != self.width + 1 or len(parts[0]) != 40:
            return None
        return tuple(map(_unescape, parts) if "\\" in rest else parts)

    @property
    def dirty(self) -> bool:
        """Something changed since the file was read: the next save writes it."""
        return bool(self._added) or self._removed

    def get(self, path: str, key: str) -> tuple[str, ...] | None:
        """The fields remembered for `path` when they were built from the blob `key`."""
        entry = self._entry(path)
        return entry[1:] if entry is not None and entry[0] == key else None

    def put(self, path: str, key: str, fields: tuple[str, ...]) -> None:
        if "\t" in path or "\n" in path or len(fields) != self.width:
            return  # not kept: asked again, it is built again
        entry = (key, *fields)
        was = self._entry(path)
        if was != entry:
            if was is not None and path not in self._added:
                self._filed.add(path)
            self._entries[path] = entry
            self._added[path] = entry

    def keep_only(self, paths: Iterable[str]) -> None:
        """Forget the paths not in `paths` (files that are gone)."""
        keep = set(paths)
        gone = [p for p in self.entries if p not in keep]
        for path in gone:
            del self.entries[path]
            # Only a line the file holds makes it be written whole; one put since is just not appended.
            if self._added.pop(path, None) is None or path in self._filed:
                self._removed = True

    def batch(self) -> bytes | None:
        """The entries changed since the file was read, as one batch to append to it; None when the
        file must be written whole (`render`). The store counts as saved."""
        if self._whole or self._removed or self._batches >= self.MAX_BATCHES:
            return None
        added, self._added, self._filed = self._added, {}, set()
        self._batches += 1
        return _batch(sorted(added.items()))

    def render(self) -> bytes:
        """The whole file: the version line and every entry as one batch. The store counts as saved."""
        self._added, self._filed, self._removed, self._whole, self._batches = {}, set(), False, False, 1
        return f"version {self.version}\n".encode("utf-8") + _batch(sorted(self.entries.items()))


_TRAILER = re.compile(rb"\tend\t(\d+)\t([0-9a-f]{8})\n")


def _trailers(body: bytes):
    """The batch trailers of a LineStore body, in order: lines that start with TAB end TAB (no entry
    line does: its path is not empty). Found with bytes.find, not a multiline regex (10 ms on the
    10,000 lines of the 10k Brain's summaries)."""
    at = 0
    while (i := body.find(b"\tend\t", at)) >= 0:
        m = _TRAILER.match(body, i) if i == 0 or body[i - 1] == 10 else None
        if m is not None:
            yield m
            at = m.end()
        else:
            at = i + 1


def _unsplit_lines(lines: list[str]) -> dict[str, str]:
    """path → the rest of its line, of LineStore lines (a later line for a path wins; a line with
    no tab is no entry)."""
    try:
        return dict(map(_path_and_rest, lines))
    except ValueError:
        return dict(line.split("\t", 1) for line in lines if "\t" in line)


def _sorted_rest(lines: list[str], path: str) -> str | None:
    """The rest of `path`'s last line among sorted `lines` (None: none holds it)."""
    head = path + "\t"
    i = bisect.bisect_left(lines, head)
    if i == len(lines) or not lines[i].startswith(head):
        return None
    while i + 1 < len(lines) and lines[i + 1].startswith(head):  # a later line for the path wins
        i += 1
    return lines[i][len(head) :]


def _batch(items: list[tuple[str, tuple[str, ...]]]) -> bytes:
    """Lines of entries and their trailer (line count, crc32 of the lines' bytes)."""
    body = "".join("\t".join((path, *(_escape(f) for f in entry))) + "\n" for path, entry in items).encode("utf-8")
    return body + f"\tend\t{len(items)}\t{zlib.crc32(body):08x}\n".encode("ascii")


def turn_ranges(numbers: Iterable[int]) -> str:
    """Turn numbers as ranges, "1-10,12" ("" for none)."""
    out: list[tuple[int, int]] = []
    for n in sorted(set(numbers)):
        if out and out[-1][1] == n - 1:
            out[-1] = (out[-1][0], n)
        else:
            out.append((n, n))
    return ",".join(f"{a}-{b}" if a != b else str(a) for a, b in out)


def in_ranges(n: int, spec: str) -> bool:
    """True when turn `n` is among the ranges `turn_ranges` wrote."""
    for part in spec.split(",") if spec else ():
        a, _, b = part.partition("-")
        if int(a) <= n <= int(b or a):
            return True
    return False


#: A LineStore line → [path, the rest] (ValueError for a line with no tab).
_path_and_rest = operator.methodcaller("split", "\t", 1)


def _escape(field: str) -> str:
    if "\\" in field or "\t" in field or "\n" in field:
        return field.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")
    return field


def _unescape(field: str) -> str:
    return re.sub(r"\\(.)", lambda m: {"t": "\t", "n": "\n"}.get(m.group(1), m.group(1)), field)
