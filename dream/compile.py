"""Compilation: the state one run carries through its phases (what is known, what was staged).

Phases read the live tree through `view`, write only through `staged`, and record what they
did on `report`; nothing here touches the repository (sync does, after the gate).
"""

from __future__ import annotations

import bisect
import functools
import hashlib
import json
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import TypeAdapter
from typing import Callable

from brain import layout
from brain.doccache import DocCards, code_fingerprint
from brain.page import Page
from brain.repo import blob_id
from brain.tree import Tree
from brain.view import BrainView
from dream.backends.base import EntityRef, ModelBackend
from dream.digest import Section_of, TopicView, build_view, change, dump, load_view, topic_key
from dream.instructions import Instructions
from dream.merge import merge3
from dream.notes import Note, note_from_page
from dream.offline.entities import Resolver
from dream.offline.text import content_key, remember_key
from dream.settings import DreamSettings
from dream.staging import StagedTree
from dream.state import DreamState, content_hash


@dataclass
class UnitFailure:
    unit: str  # session id or page path
    reason: str


class DocCache(DocCards):
    """The run's cards, kept in `.dream/cache/cards/` (not committed): pages and summaries as
    their names and index lines (brain.doccache), notes as Note models, the content hash of each
    raw session (HASHES_FILE). An incremental run then parses (and, where git vouches for a file,
    reads) only what changed, so its cost follows the change, not the size of the Brain.
    """

    def note_card(self, path: str, tree: Tree, parse: Callable[[str], Page | None]) -> dict | None:
        """{'note': a Note's fields, 'key': its statement_key} (None when the card is not a note)."""

        def build() -> dict | None:
            page = parse(path)
            note = note_from_page(page) if page is not None else None
            return _note_card(note) if note is not None else None

        return self.checked(path, tree, build, lambda c: isinstance(c.get("note"), dict) and isinstance(c.get("key"), str))

    def note_cards(self, paths: list[str], tree: Tree, parse: Callable[[str], Page | None]) -> list[tuple[str, dict]]:
        """(path, card) of each note that has one: `note_card` for many paths, with the checks of
        a cache hit inlined (a topic may hold ~40,000 notes, nearly all of them unchanged)."""
        out = []
        key_of, entries_of = tree.key, self._entries
        for path in paths:
            key = key_of(path)
            hit = entries_of(path).get(path) if key is not None else None
            if type(hit) is list and len(hit) == 2 and hit[0] == key and type(card := hit[1]) is dict and type(card.get("note")) is dict and type(card.get("key")) is str:
                out.append((path, card))
            elif (card := self.note_card(path, tree, parse)) is not None:
                out.append((path, card))
        return out

    def remember_note(self, path: str, data: bytes, note: Note, blob: str | None = None) -> None:
        """A note Dream just wrote: the next run finds it without parsing the card."""
        self.remember(path, data, _note_card(note), blob)

    def _digest_file(self, topic: str) -> str:
        return "topics/" + hashlib.blake2b(topic.encode("utf-8"), digest_size=10).hexdigest() + ".json"

    def topic_digest(self, topic: str) -> dict | None:
        """The digest kept for a topic's notes (dream.digest), if this code wrote one."""
        raw = self.read_file(self._digest_file(topic))
        try:
            data = json.loads(raw) if raw else None
        except ValueError:
            return None
        if not isinstance(data, dict) or data.get("version") != self.version or data.get("topic") != topic:
            return None
        return data

    def keep_digest(self, topic: str, data: dict) -> None:
        self.keep_file(self._digest_file(topic), json.dumps({"version": self.version, "topic": topic, **data}, separators=(",", ":")).encode("utf-8"))

    def drop_digest(self, topic: str) -> None:
        self.keep_file(self._digest_file(topic), None)

    def _bucket_file(self, topic: str, bucket: int) -> str:
        return self._digest_file(topic)[: -len(".json")] + f"/{bucket}.json"

    def key_bucket(self, topic: str, bucket: int, gen: str) -> dict | None:
        """A bucket of a topic digest's key index as `keep_key_bucket` wrote it, when it is the
        generation `gen` the digest names (else None: rebuilt from the notes)."""
        raw = self.read_file(self._bucket_file(topic, bucket))
        try:
            data = json.loads(raw) if raw else None
        except ValueError:
            return None
        if not isinstance(data, dict) or [data.get(k) for k in ("version", "topic", "bucket", "gen")] != [self.version, topic, bucket, gen]:
            return None
        entries = data.get("entries")
        if not isinstance(entries, dict) or not all(isinstance(v, str) or (isinstance(v, list) and all(isinstance(p, str) for p in v))
                                                    for v in entries.values()):
            return None
        return entries

    def keep_key_bucket(self, topic: str, bucket: int, paths: dict[str, list[str]], was: str = "") -> str:
        """Write a bucket of a topic's key index (statement key → current paths) with the next
        save, unless it is the generation `was` already; returns its generation ("" when empty)."""
        body = json.dumps({k: v[0] if len(v) == 1 else v for k, v in sorted(paths.items()) if v}, separators=(",", ":"))
        if body == "{}":
            return ""
        gen = hashlib.blake2b(body.encode("utf-8"), digest_size=8).hexdigest()
        if gen != was:
            head = json.dumps({"version": self.version, "topic": topic, "bucket": bucket, "gen": gen}, separators=(",", ":"))
            self.keep_file(self._bucket_file(topic, bucket), (head[:-1] + ',"entries":' + body + "}").encode("utf-8"))
        return gen

    #: The content hash of each raw session, one line apiece (brain.doccache.LineStore): a run asks
    #: about every raw session (10,000 on the 10k Brain), and 64 JSON shards of them took 35 ms to load.
    HASHES_FILE = "raw-hashes.txt"

    #: Up to this many files (a nightly run's new sessions) are hashed from their bytes without
    #: loading the remembered hashes of every raw session (1.4 MB on the 10k Brain).
    HASH_DIRECT_MAX = 64

    def session_hashes(self, paths: list[str], tree: Tree, every: bool = True) -> dict[str, str]:
        """The content hash of each raw session (what `.dream/state.json` records): the remembered
        one where git vouches for the file and its blob id is the one remembered, else from its
        bytes. `every`: `paths` are all the raw sessions, and the lines of others are forgotten;
        else a few are asked (dream.phases.orient.raw_sessions), and a handful are just read."""
        if not every and len(paths) <= self.HASH_DIRECT_MAX:
            return {path: content_hash(tree.read_bytes(path)) for path in paths}
        store = self.store(self.HASHES_FILE, 1)
        if every:
            store.keep_only(paths)
        key_of, read, get = tree.key, tree.read_bytes, store.get
        out: dict[str, str] = {}
        for path in paths:
            key = key_of(path)
            hit = get(path, key) if key is not None else None
            if hit is not None and len(hit[0]) == 64:
                out[path] = hit[0]
                continue
            data = read(path)
            out[path] = digest = content_hash(data)
            store.put(path, key or blob_id(data), (digest,))
        return out


#: A topic digest's key index (statement key → current note paths) is kept inline up to this many
#: keys, else in KEY_BUCKETS files of its own: the owner's topic has 15,000 keys on the 10k Brain
#: (1.9 MB of JSON), and a run looks up the few its new facts have.
INLINE_KEYS = 2000
KEY_BUCKETS = 256


def key_bucket(key: str) -> int:
    return zlib.crc32(key.encode("utf-8")) % KEY_BUCKETS


class KeyIndex:
    """TopicNotes.key_paths of a topic from a digest with bucket files: a bucket is read when a key
    in it is first asked. `firsts` is TopicNotes.by_key over the same buckets (each key's first
    path as read). A bucket whose file is missing or of another generation is rebuilt from the
    topic's notes (`rebuild`: every bucket, as key → sorted paths of current notes)."""

    def __init__(self, gens: list[str], read: Callable[[int, str], dict | None], rebuild: Callable[[], list[dict[str, list[str]]]]) -> None:
        self.gens = gens
        self._read, self._rebuild = read, rebuild
        self._rebuilt: list[dict[str, list[str]]] | None = None
        self.buckets: dict[int, dict[str, list[str]]] = {}  # read so far (and so, maybe changed)
        self.firsts = FirstPaths(self)

    def bucket(self, i: int) -> dict[str, list[str]]:
        found = self.buckets.get(i)
        if found is None:
            raw = self._read(i, self.gens[i]) if self.gens[i] else {}
            if raw is None:
                if self._rebuilt is None:
                    self._rebuilt = self._rebuild()
                raw = self._rebuilt[i]
            found = self.buckets[i] = {k: [v] if isinstance(v, str) else list(v) for k, v in raw.items()}
            self.firsts.buckets[i] = {k: v[0] for k, v in found.items() if v}
        return found

    def get(self, key: str, default=None):
        return self.bucket(key_bucket(key)).get(key, default)

    def setdefault(self, key: str, default: list[str]) -> list[str]:
        return self.bucket(key_bucket(key)).setdefault(key, default)


class FirstPaths:
    """statement key → the first current path (TopicNotes.by_key), bucket by bucket of a KeyIndex."""

    def __init__(self, index: KeyIndex) -> None:
        self._index = index
        self.buckets: dict[int, dict[str, str]] = {}

    def _of(self, key: str) -> dict[str, str]:
        i = key_bucket(key)
        if i not in self.buckets:
            self._index.bucket(i)
        return self.buckets[i]

    def get(self, key: str, default=None):
        return self._of(key).get(key, default)

    def setdefault(self, key: str, default: str) -> str:
        return self._of(key).setdefault(key, default)

    def __delitem__(self, key: str) -> None:
        del self._of(key)[key]


def _note_card(note: Note) -> dict:
    # Without the fields left at None: the defaults give them back, and the owner's cards are megabytes.
    return {"note": note.model_dump(mode="json", exclude_none=True), "key": statement_key(note.statement)}


def cache_version(cards: Path | None = None) -> str:
    """Cards are built by brain's and dream's code: a change to either makes a cold cache. `cards`:
    the cards' folder, beside which the digest is kept by the sources' stat (code_memo)."""
    return code_fingerprint("brain", "dream", memo=code_memo(cards))


def code_memo(cards: Path | None) -> Path | None:
    """The file beside a Brain's cards folder keeping the digests of the code its caches were
    built by (brain.doccache.code_fingerprint's memo); None without a folder (nothing is kept)."""
    return cards.with_name("code-digests.txt") if cards is not None else None


_NOTE_LIST = TypeAdapter(list[Note])


def statement_key(statement: str) -> str:
    """Statements with the same content words say the same thing (cached: hot in attach)."""
    return content_key(statement)


#: A digest key that is a git tree id (the topic's folder as committed), not a digest of its notes.
_TREE_KEY = "tree:"


@dataclass(frozen=True)
class Landed:
    """What sync committed, for keying digests by folder (Compilation.save_digests)."""

    writes: dict[str, str]  # path → text committed
    base_folders: dict[str, str]  # topic folder → tree id in the commit the run started from
    folders: dict[str, str]  # topic folder → tree id in the new commit

    @functools.cached_property
    def by_folder(self) -> dict[str, list[str]]:
        """The written paths under each `notes/<topic>` folder, grouped in one pass: a first
        compile writes ~57,000 files into ~400 topics, and a scan of them all per topic was 10 s."""
        out: dict[str, list[str]] = {}
        for path in self.writes:
            first = path.find("/")
            second = path.find("/", first + 1) if first > 0 else -1
            if second > 0:
                out.setdefault(path[:second], []).append(path)
        return out


class TakenStems:
    """The note stems a topic's folder holds, asked one by one (`stem in taken`), without a set of
    them all: the owner's topic holds ~40,000 notes, and a run names a few new ones."""

    def __init__(self, folder: str = "", has_doc: Callable[[str], bool] = lambda path: False) -> None:
        self._folder, self._has_doc = folder, has_doc  # folder: "notes/<topic>/"
        self._added: set[str] = set()

    def __contains__(self, stem: object) -> bool:
        return stem in self._added or (isinstance(stem, str) and self._has_doc(f"{self._folder}{stem}.md"))

    def add(self, stem: str) -> None:
        self._added.add(stem)


@dataclass
class TopicNotes:
    """A topic's notes with the indexes attach needs (equal statements, slots), kept in step.

    `complete`: every note is in `notes` (the topic was read in full). Else the topic came from its
    digest (dream.digest): `notes` holds the notes read so far, `note()` reads others on demand,
    and `view` (the page's part of the digest) is changed in place by each `put`.
    """

    notes: dict[str, Note] = field(default_factory=dict)
    by_key: dict[str, str] | FirstPaths = field(default_factory=dict)  # statement key → path (current notes)
    by_slot: dict[str, set[str]] = field(default_factory=dict)  # slot → paths (current notes)
    stems: TakenStems = field(default_factory=TakenStems)  # the file stems in use (note_slug)
    complete: bool = True
    view: TopicView | None = None
    stale: bool = False  # the view lost track (dream.digest.change): read the topic in full
    load: Callable[[str], Note | None] = lambda path: None  # a note not read yet (incomplete topics)
    paths: set[str] = field(default_factory=set)  # every note path (incomplete topics)
    key_paths: dict[str, list[str]] | KeyIndex | None = None  # statement key → current paths (incomplete topics)
    section_of: Section_of | None = None  # backend.page_section
    put_paths: set[str] = field(default_factory=set)  # notes this run changed
    blobs: dict[str, tuple[str, str]] = field(default_factory=dict)  # path → (blob id, text) rendered for it (stage_notes)
    tree: str | None = None  # the folder's git tree id at HEAD, when the live folder is just that

    def note(self, path: str) -> Note | None:
        found = self.notes.get(path)
        if found is None and not self.complete and path in self.paths:
            found = self.load(path)
            if found is not None:
                self.notes[path] = found
        return found

    def put(self, note: Note, key: str) -> None:
        old = self.note(note.path)
        if old is not None and old.slot and note.path in self.by_slot.get(old.slot, set()):
            self.by_slot[old.slot].discard(note.path)
        if self.by_key.get(key) == note.path:
            del self.by_key[key]
        self.notes[note.path] = note
        self.put_paths.add(note.path)
        self.stems.add(note.path.rsplit("/", 1)[1][:-3])
        if note.current:
            self.by_key.setdefault(key, note.path)
            if note.slot:
                self.by_slot.setdefault(note.slot, set()).add(note.path)
        if self.complete:
            self.view = None  # built again from every note when the page is compiled
            return
        self.paths.add(note.path)
        assert self.key_paths is not None
        if old is not None and old.current:
            listed = self.key_paths.get(statement_key(old.statement), [])
            if note.path in listed:
                listed.remove(note.path)
        if note.current:
            listed = self.key_paths.setdefault(key, [])
            if note.path not in listed:
                bisect.insort(listed, note.path)
        if self.view is not None and not self.stale and self.section_of is not None:
            self.stale = not change(self.view, old, note, self.section_of, self.note)


@dataclass
class Compilation:
    settings: DreamSettings
    backend: ModelBackend
    view: BrainView  # the live tree (working tree: manual edits included)
    staged: StagedTree
    state: DreamState
    instructions: Instructions
    run_id: str
    resolver: Resolver = field(default_factory=Resolver)
    touched: set[str] = field(default_factory=set)  # page slugs whose notes changed
    new_pages: dict[str, tuple[str, str, list[str]]] = field(default_factory=dict)  # slug → (title, type, aliases)
    topics: dict[str, TopicNotes] = field(default_factory=dict)  # topic → its notes (loaded lazily)
    failures: list[UnitFailure] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    forgotten: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    processed: list[str] = field(default_factory=list)  # session ids summarised and attached
    read_blob: Callable[[str], str | None] = lambda blob: None  # git blob id → text (merge bases)
    created: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)  # hand-written files Dream left as they are
    cache: DocCache = field(default_factory=DocCache)
    _refs: list[EntityRef] = field(default_factory=list)
    _refs_version: int = -1
    updated: list[str] = field(default_factory=list)
    live_index: tuple[dict, dict] | None = None  # index lines of the live pages and summaries (dream.run)
    index_memo: tuple | None = None  # the staged lines the indexes were last rendered for, and the texts (dream.run)
    index_lines: object = None  # sessions/index.md's lines as last rendered (dream.sessions_index.IndexLines)
    index_snapshot: object = None  # what the last run left of sessions/index.md (dream.sessions_index.IndexSnapshot)
    _bases: dict[str, str | None] = field(default_factory=dict)  # blob id → text, for merges
    unstaged_notes: dict[str, Note] = field(default_factory=dict)  # path → note attach changed (dream.phases.attach)
    # path → (a note's sources list, the same as a set): a note restated by 700 sessions is asked
    # 700 times whether it has a source (dream.phases.attach)
    note_sources: dict[str, tuple[list[str], set[str]]] = field(default_factory=dict)

    def bump(self, key: str, n: int = 1) -> None:
        self.counts[key] = self.counts.get(key, 0) + n

    def seed_resolver(self) -> None:
        """Every existing page is a known entity (by slug, title and aliases)."""
        for path in self.view.page_paths:
            loc = layout.page_location(path)
            card = self.cache.page(path, self.view.tree, self.view.doc) if loc else None
            if card is not None:
                self.resolver.add(loc[1], card["title"], loc[0], card["aliases"])

    def known_refs(self) -> list[EntityRef]:
        """Known entities for the backend, rebuilt only when the resolver learned something."""
        if self._refs_version != self.resolver.version:
            self._refs = [
                EntityRef(slug=k.slug, title=k.title, type=k.type, aliases=sorted(k.names - {k.title}))
                for k in sorted(self.resolver.by_slug.values(), key=lambda k: k.slug)
            ]
            self._refs_version = self.resolver.version
        return self._refs

    def page_path(self, slug: str) -> str | None:
        """Where the page with this slug lives (live or new in this run)."""
        known = self.resolver.by_slug.get(slug)
        if known is None:
            return None
        return layout.page_path(known.type, slug)

    def topic(self, topic: str) -> TopicNotes:
        """A topic's notes: from its digest when it is the digest of these notes, else read in full
        (only that folder); with those staged in this run."""
        found = self.topics.get(topic)
        if found is None:
            paths = self.view.paths_under(f"{layout.NOTES}/{topic}/")
            tree = self.view.tree.folder_tree(f"{layout.NOTES}/{topic}", paths) if paths else None
            found = self.topics[topic] = self._from_digest(topic, paths, tree) or TopicNotes()
            found.tree = tree
            found.section_of = self.backend.page_section
            found.stems = TakenStems(f"{layout.NOTES}/{topic}/", self.view.has_doc)
            if found.complete:
                self._read_all(found, paths)
        return found

    def _read_all(self, found: TopicNotes, paths: list[str]) -> None:
        """Every note of the topic into `found`: a new topic is filled by `put`; one from a digest
        keeps the notes it holds (read, or changed by this run) and its indexes (kept in step)."""
        cards = self.cache.note_cards(paths, self.view.tree, self.view.doc)
        try:  # one validation call for the whole topic (the owner's may hold ~40,000 notes)
            pairs = zip(_NOTE_LIST.validate_python([card["note"] for _, card in cards]), (card["key"] for _, card in cards))
        except ValueError:
            pairs = (self._note_or_rebuild(path, card) for path, card in cards)
        filling = found.complete
        for note, key in pairs:
            if note is None or note.path in found.notes:
                continue
            if filling:
                found.put(note, key)
            else:
                found.notes[note.path] = note
            remember_key(note.statement, key)  # the page writer themes them by it
        if filling:
            found.put_paths.clear()  # read, not changed
        found.complete, found.key_paths, found.paths, found.view = True, None, set(), None

    def _tree_keys(self, paths: list[str]) -> list[tuple[str, str]]:
        """(path, git blob id) of each path in the live tree, read only where git did not vouch for
        it (a topic has 36,000 notes on a large Brain: one loop)."""
        tree = self.view.tree
        key_of, read = tree.key, tree.read_bytes
        return [(p, key_of(p) or blob_id(read(p))) for p in paths]

    def _from_digest(self, topic: str, paths: list[str], tree: str | None) -> TopicNotes | None:
        """The topic as its digest has it, when the digest is of exactly these notes (else None).

        A digest is keyed by the folder's git tree id when its notes are a commit's (`tree`: the
        live folder is HEAD's; no note is looked at), else by a digest of each note's blob id."""
        data = self.cache.topic_digest(topic)
        if data is None or not paths:
            return None
        key = data.get("key")
        if tree is None or key != _TREE_KEY + tree:
            if not isinstance(key, str) or key.startswith(_TREE_KEY) or key != topic_key(self._tree_keys(paths)):
                return None
        try:
            key_paths: dict[str, list[str]] | KeyIndex
            by_key: dict[str, str] | FirstPaths
            if "keys" in data:  # the index in bucket files
                gens = data["keys"]
                if not isinstance(gens, list) or len(gens) != KEY_BUCKETS or not all(isinstance(g, str) for g in gens):
                    raise ValueError("malformed key index")
                key_paths = KeyIndex(list(gens), lambda i, gen: self.cache.key_bucket(topic, i, gen), lambda: self._key_buckets(paths))
                by_key = key_paths.firsts
            else:
                raw = data["by_key"]
                key_paths = {k: [v] if isinstance(v, str) else list(v) for k, v in raw.items()}
                by_key = {k: v[0] for k, v in key_paths.items() if v}
            by_slot = {s: set(v) for s, v in data["by_slot"].items()}
            view, notes = None, {}
            loc = layout.page_location(self.page_path(topic) or "")
            if "view" in data and loc is not None:
                view = load_view(data)
                if view.backend != self.backend.name or view.page_type != loc[0]:
                    view = None
                else:
                    cards = list(data["cards"].values())
                    for note, card in zip(_NOTE_LIST.validate_python([c["note"] for c in cards]), cards):
                        notes[note.path] = note
                        remember_key(note.statement, card["key"])
                    if set(notes) != view.members():
                        view, notes = None, {}
        except (KeyError, TypeError, ValueError, AttributeError):
            self.cache.drop_digest(topic)
            return None
        return TopicNotes(notes=notes, by_key=by_key, by_slot=by_slot, complete=False, view=view, load=self._load_note,
                          paths=set(paths), key_paths=key_paths)

    def _key_buckets(self, paths: list[str]) -> list[dict[str, list[str]]]:
        """The key index of a topic's notes as they are in the live tree, by bucket: statement key →
        sorted paths of the current notes (a digest's bucket file was lost or damaged)."""
        out: list[dict[str, list[str]]] = [{} for _ in range(KEY_BUCKETS)]
        for path, card in self.cache.note_cards(sorted(paths), self.view.tree, self.view.doc):
            if card["note"].get("until") is None:
                out[key_bucket(card["key"])].setdefault(card["key"], []).append(path)
        return out

    def _load_note(self, path: str) -> Note | None:
        page = self.view.doc(path)
        return note_from_page(page) if page is not None else None

    def topic_view(self, topic: str, page_type: str) -> tuple[TopicNotes, TopicView]:
        """The topic and its page's view (dream.digest): the digest's, or built from every note."""
        found = self.topic(topic)
        name = self.backend.name
        if not found.complete and (found.view is None or found.stale or found.view.page_type != page_type):
            self._read_all(found, self.view.paths_under(f"{layout.NOTES}/{topic}/"))
        if found.view is None or found.view.page_type != page_type or found.view.backend != name:
            found.view = build_view(found.notes.values(), self.backend.page_section, name, page_type)
        return found, found.view

    def save_digests(self, landed: Landed | None = None) -> None:
        """Keep the digest of each topic whose page this run compiled or whose notes it read in
        full, for the notes as they land.

        A note this run changed counts with the blob id of the text staged for it; where that is not
        what the staged tree holds now (a conflict kept the owner's text, the gate dropped it), the
        topic gets no digest and the next run reads it in full. `landed`: the commit sync made; a
        topic whose folder in it is exactly the digest's notes is keyed by that folder's tree id
        (the next run then knows it unchanged without looking at its notes)."""
        for topic, found in self.topics.items():
            if found.view is None and found.complete:
                # read in full for another page (a note it mentions): kept too, or each run that
                # needs one of its notes would read the whole folder again
                loc = layout.page_location(self.page_path(topic) or "")
                if loc is not None and found.notes:
                    self.topic_view(topic, loc[0])
            if found.view is None or found.stale:
                continue
            tree = self._landed_tree(topic, found, landed) if landed is not None else None
            if tree is not None:
                self._keep_digest(topic, found, _TREE_KEY + tree)
                continue
            entries = dict(self._tree_keys(self.view.paths_under(f"{layout.NOTES}/{topic}/")))
            ok = True
            for path in found.put_paths:
                blob, text = found.blobs.get(path, (None, None))
                if self.staged.has(path):
                    now = self.staged.read(path)
                    ok = now is text or (now is not None and blob_id(now.encode("utf-8")) == blob)
                else:  # not staged: the live file must be the very text (a rewrite that changed nothing)
                    ok = blob is not None and entries.get(path) == blob
                if not ok:
                    break
                entries[path] = blob
            if not ok:
                self.cache.drop_digest(topic)
                continue
            self._keep_digest(topic, found, topic_key(entries.items()))

    def _landed_tree(self, topic: str, found: TopicNotes, landed: Landed) -> str | None:
        """The tree id of the topic's folder in the new commit, when that folder holds exactly the
        notes the digest describes: the live folder was the base commit's (or there was none, in the
        working tree or in that commit: a topic this run began), and each note this run changed
        landed as the text its digest counts (or was already that text), nothing else."""
        folder = f"{layout.NOTES}/{topic}"
        prefix = folder + "/"
        if found.tree is None:
            if folder in landed.base_folders or self.view.paths_under(prefix):
                return None
        elif landed.base_folders.get(folder) != found.tree:
            return None
        if not found.put_paths.issuperset(landed.by_folder.get(folder, ())):
            return None
        for path in found.put_paths:
            blob = found.blobs.get(path, (None, None))[0]
            if blob is None:
                return None
            text = landed.writes.get(path)
            if (blob_id(text.encode("utf-8")) if text is not None else self.view.tree.key(path)) != blob:
                return None
        return landed.folders.get(folder)

    def _keep_digest(self, topic: str, found: TopicNotes, key: str) -> None:
        assert found.view is not None
        index = found.key_paths if not found.complete else None
        gens: list[str] | None = None
        if isinstance(index, KeyIndex):  # only the buckets read can have changed
            gens = list(index.gens)
            for i, bucket in index.buckets.items():
                gens[i] = self.cache.keep_key_bucket(topic, i, bucket, was=index.gens[i])
            key_paths: dict[str, list[str]] = {}
        elif found.complete:
            key_paths = {}
            for path in sorted(found.notes):
                note = found.notes[path]
                if note.current:
                    key_paths.setdefault(statement_key(note.statement), []).append(path)
        else:
            key_paths = index or {}
        if gens is None and len(key_paths) > INLINE_KEYS:
            buckets: list[dict[str, list[str]]] = [{} for _ in range(KEY_BUCKETS)]
            for k, v in key_paths.items():
                buckets[key_bucket(k)][k] = v
            gens = [self.cache.keep_key_bucket(topic, i, b) for i, b in enumerate(buckets)]
        by_key = {k: v[0] if len(v) == 1 else v for k, v in sorted(key_paths.items()) if v} if gens is None else None
        cards = {p: _note_card(found.note(p)) for p in sorted(found.view.members())}
        self.cache.keep_digest(topic, dump(key, by_key, found.by_slot, found.view, cards, gens))

    def _note_or_rebuild(self, path: str, card: dict) -> tuple[Note | None, str]:
        """A card's note and statement key; a corrupt card is built again from the note's file."""
        try:
            return Note.model_validate(card["note"]), card["key"]
        except ValueError:  # a corrupt cached card: parse the note itself
            self.cache.drop(path)
            fresh = self.cache.note_card(path, self.view.tree, self.view.doc)
            return (Note.model_validate(fresh["note"]), fresh["key"]) if fresh is not None else (None, "")


    def stage(self, path: str, text: str) -> bool:
        """Stage a file Dream owns, protecting the owner's text; True when something was staged.

        A file Dream wrote before and the owner edited since is 3-way merged (base: Dream's last
        write); on conflict the owner's text stays. A file Dream never wrote (hand-written) is kept.
        """
        tree = self.view.tree
        raw = tree.read_if_exists(path)
        live = raw.decode("utf-8", errors="replace") if raw is not None else None
        blob = self.state.written.get(path) if live is not None else None
        if live is not None and blob is None and not self.staged.has(path):
            self.kept.append(path)
            return False
        # Every write of the run is merged, not only the first: a note that gains two sources in one
        # run is staged twice, and the owner's edit must be in the text that lands. A file still as
        # Dream wrote it has nothing to merge (its last write is not read back from git then).
        base = self._base(blob) if blob is not None and blob_id(raw) != blob else None
        if base is not None and live != base:
            text, clean = merge3(base, live, text)
            if not clean:
                conflict = f"{path}: the owner's edit and Dream's update overlap; the owner's text was kept"
                if conflict not in self.conflicts:
                    self.conflicts.append(conflict)
                self.staged.drop(path)  # an earlier write of this run, merged cleanly, does not land alone
                return False
        if text == live:
            return False
        self.staged.write(path, text)
        return True

    def _base(self, blob: str) -> str | None:
        """The text of Dream's last write (a git blob), read once per run."""
        if blob not in self._bases:
            self._bases[blob] = self.read_blob(blob)
        return self._bases[blob]

    def live_page(self, slug: str) -> Page | None:
        path = self.page_path(slug)
        return self.view.doc(path) if path else None
