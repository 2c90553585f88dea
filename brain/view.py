"""BrainView: a Brain read from a Tree — pages, summaries, notes, sessions, sources — and resolution.

Reading never raises for content: a document that cannot be parsed lands in `errors`, a bad
session line in `session_problems`; validators turn both into findings.
"""

from __future__ import annotations

import bisect
import hashlib
import heapq
from collections import defaultdict
from functools import cached_property
from typing import TYPE_CHECKING, Callable, Collection, Iterable
from weakref import WeakKeyDictionary

from brain import layout
from brain.citations import CitationError, CitationTarget
from brain.errors import PageError
from brain.page import Frontmatter, Page, parse_page, render_built
from brain.sessions import Session, SessionProblem, parse_session
from brain.sources import SourceRecord, records_of
from brain.tree import DirTree, OverlayTree, SortedLookup, Tree, in_sorted, insert_sorted, text_if_exists

if TYPE_CHECKING:
    from brain.doccache import DocCards


_PARSE_CACHE: dict[tuple[str, bytes], "Page | PageError"] = {}
_PARSE_CACHE_MAX = 250_000  # documents; keyed by a 16-byte digest of the content, not the content


def _content_key(rel: str, data: bytes) -> tuple[str, bytes]:
    """A per-content cache's key: the path and a 16-byte digest of the bytes (not the bytes)."""
    return rel, hashlib.blake2b(data, digest_size=16).digest()


def _keep(cache: dict, cap: int, key: tuple, value):
    """`cache[key] = value`, the cache emptied first when it holds `cap` entries; returns value."""
    if len(cache) >= cap:
        cache.clear()
    cache[key] = value
    return value


def _parse_cached(rel: str, data: bytes) -> "Page | PageError":
    """Parse a document once per content: a run builds several views of mostly the same files."""
    key = _content_key(rel, data)
    hit = _PARSE_CACHE.get(key)
    if hit is not None:
        return hit
    try:
        result: Page | PageError = parse_page(data.decode("utf-8"), rel)
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        result = PageError(rel, line, f"invalid UTF-8 at byte {exc.start}", "save the file as UTF-8")
    except PageError as exc:
        result = exc
    return _keep(_PARSE_CACHE, _PARSE_CACHE_MAX, key, result)


_SESSION_CACHE: dict[tuple[str, bytes], "tuple[Session | None, list[SessionProblem]]"] = {}
_SESSION_CACHE_MAX = 50_000  # sessions


def parse_session_cached(rel: str, data: bytes) -> "tuple[Session | None, list[SessionProblem]]":
    """parse_session once per content per process: a run reads each pending session, then its
    gate resolves their citations and the verifier their turns (do not modify the result)."""
    key = _content_key(rel, data)
    hit = _SESSION_CACHE.get(key)
    return hit if hit is not None else _keep(_SESSION_CACHE, _SESSION_CACHE_MAX, key, parse_session(data, rel))


_PAGE_ROOT, _NOTE_ROOT = layout.KNOWLEDGE + "/", layout.NOTES + "/"
_kind = layout.doc_kind  # "page", "note", "summary" or ""
_NONE: set[str] = set()
doc_kind = layout.doc_kind  # for callers that list documents themselves
_DOC_PATHS: "WeakKeyDictionary[Tree, list[str]]" = WeakKeyDictionary()


#: Names a view looks up folder by folder (BrainView.resolve) before it maps every stem instead:
#: a lookup probes the folders with a span of names that holds it (one of 415 on the 10k Brain; every
#: one, where all folders hold names alike), the map costs as much as ~250 lookups probing every folder.
#: A nightly run's gate asks about 200 names; a full compile's, tens of thousands.
RESOLVE_MAP_AFTER = 1000


#: Documents a view looks up in its sorted list (BrainView._is_doc) before it hashes them all:
#: a set of the 10k Brain's 57,000 paths costs as much as ~3,000 lookups by bisection (1.5 ms).
DOC_SET_AFTER = 3000


class FolderSpans:
    """Which folders may hold a file of a given name: a span of a folder's names (the first and
    last of a run of them, sorted) can hold a name only if it falls between the two. Where each
    span covers names alike (a topic's notes that begin with its slug) a name falls in one or two;
    where spans overlap, in each of them (so never fewer folders than hold it).

    The spans' ends cut the names into intervals; each interval keeps the folders with a span
    that covers its start (a sweep over the ends), and a lookup is one bisection."""

    def __init__(self, spans: list[tuple[str, str, str]]) -> None:
        """`spans`: (first name, last name, folder), first <= last; a folder's spans do not overlap."""
        self._bounds = sorted({end for first, last, _ in spans for end in (first, last)})
        self._open: list[tuple[str, ...]] = []  # at each bound: the folders with a span that holds it
        starts = sorted((first, last, n, folder) for n, (first, last, folder) in enumerate(spans))
        closing: list[tuple[str, int]] = []  # (last name, span) of the spans open, a heap
        current: dict[int, str] = {}  # span → its folder (one span of a folder is open at a time)
        at = 0
        for bound in self._bounds:
            while at < len(starts) and starts[at][0] <= bound:
                _, last, n, folder = starts[at]
                current[n] = folder
                heapq.heappush(closing, (last, n))
                at += 1
            while closing and closing[0][0] < bound:
                del current[heapq.heappop(closing)[1]]
            self._open.append(tuple(current.values()))

    def holding(self, name: str) -> tuple[str, ...]:
        """The folders with a span that holds `name` (and any whose span ends at the bound just below it)."""
        i = bisect.bisect_right(self._bounds, name) - 1
        return self._open[i] if i >= 0 else ()


def doc_paths_of(tree: Tree) -> list[str]:
    """The tree's page, note and summary files that are not symlinks (sorted; do not modify).

    Remembered per tree: a run makes several views of its staged files over one live tree, and
    classifying the live tree's ~100,000 files is done once, then only the staged ones are added."""
    found = _DOC_PATHS.get(tree)
    if found is None:
        if isinstance(tree, OverlayTree):
            upper, docs, hidden = tree.upper, [], set(tree.deleted)
            for rel in upper.files():  # an upper file hides the base's, symlink or not
                if _kind(rel) and upper.is_symlink(rel):
                    hidden.add(rel)
                elif _kind(rel):
                    docs.append(rel)
            found = insert_sorted(doc_paths_of(tree.base), docs)
            if hidden:
                found = [rel for rel in found if rel not in hidden]
        else:
            files = tree.files()
            found = _documents(files, tree.document_runs() if isinstance(tree, DirTree) else None)
            if links := set(tree.symlinks()):
                found = [rel for rel in found if rel not in links]
        _DOC_PATHS[tree] = found
    return found


def _documents(files: list[str], runs: list[tuple[int, int]] | None = None) -> list[str]:
    """`[rel for rel in files if _kind(rel)]` of a sorted listing (67,000 files on the 10k Brain),
    from where layout.document_runs finds them; `runs`: those ranges, found by whoever listed the
    files (DirTree.document_runs)."""
    out: list[str] = []
    for start, end in runs if runs is not None else layout.document_runs(files):
        out += files[start:end]
    return out


def _sorted_among(listing: list[str], wanted: Collection[str]) -> list[str]:
    """`[p for p in listing if p in wanted]` of a sorted listing, by bisection for each of `wanted`."""
    return [rel for rel in sorted(wanted) if in_sorted(listing, rel)]


def _after(prefix: str) -> str:
    """The first string past every one that starts with `prefix` ("notes0" for "notes/")."""
    return prefix[:-1] + chr(ord(prefix[-1]) + 1)


def remember_built(rel: str, frontmatter: Frontmatter, body: str) -> str:
    """render_new(frontmatter, body), remembered with its parse when that is known without parsing
    (brain.page.render_built): the views a run builds of what it stages then parse less."""
    text, page = render_built(rel, frontmatter, body)
    return remember_parsed(rel, text, page)


def remember_parsed(rel: str, text: str, page: "Page | None") -> str:
    """`text` remembered with its parse `page` (from render_built, maybe in another process); returns text."""
    if page is not None:
        _keep(_PARSE_CACHE, _PARSE_CACHE_MAX, _content_key(rel, text.encode("utf-8")), page)
    return text


def parse_cached(rel: str, text: str) -> "Page | None":
    """A document parsed once per content per process (None when it cannot be parsed)."""
    return parse_bytes(rel, text.encode("utf-8"))


def parse_bytes(rel: str, data: bytes) -> "Page | None":
    """parse_cached() of a file's bytes, as a view reads them (None when they cannot be parsed)."""
    result = _parse_cached(rel, data)
    return None if isinstance(result, PageError) else result


def doc_kind(rel: str) -> str:
    """"page", "note" or "summary" when a file at `rel` is that kind of document, else ""."""
    return _kind(rel)


class BrainView:
    """Everything a reader needs from one tree, parsed lazily and cached."""

    def __init__(self, tree: Tree, focus: "Iterable[str] | None" = None, cards: "DocCards | None" = None,
                 summary_lines: "Callable[[], dict[str, str]] | None" = None,
                 clean_lines: "Callable[[str], Collection[str] | None] | None" = None) -> None:
        """`focus`, when given, limits `docs`/`errors`/`checked_files` to those paths (dream's gate
        checks only what a run staged); names and resolution still see the whole tree. `cards`
        remembers index lines and names by content across views and runs (dream passes its own).
        `summary_lines`: session id → index line of every session summary of the tree, for a
        caller that has them already (dream's gate: the lines it rendered sessions/index.md
        from, each a summary's card), so summary_lines() looks none up. `clean_lines`: what
        clean_lines() answers, from a caller that knows (dream's gate)."""
        self.tree = tree
        self.focus = frozenset(focus) if focus is not None else None
        self._cards = cards
        self._summary_lines = summary_lines
        self._clean_lines = clean_lines
        self._sessions: dict[str, Session | None] = {}
        self._resolved: dict[str, list[str]] = {}  # casefolded name → what resolve() found
        self.session_problems: dict[str, list[SessionProblem]] = {}

    # -- documents --------------------------------------------------------------------------
    @cached_property
    def _doc_paths(self) -> list[str]:
        """Every page, note and summary file (not symlinks: S checks report those)."""
        return list(doc_paths_of(self.tree))

    def _load(self, paths: list[str]) -> dict[str, Page]:
        """Parse the given documents (once per view, and once per content per process)."""
        if not hasattr(self, "_docs"):
            self._docs: dict[str, Page] = {}
            self._errors: dict[str, PageError] = {}
            self._seen: set[str] = set()
        for rel in paths:
            if rel in self._seen:
                continue
            self._seen.add(rel)
            data = self.tree.read_if_exists(rel)
            if data is None:  # deleted since the tree was listed: not a document any more
                continue
            parsed = _parse_cached(rel, data)
            if isinstance(parsed, PageError):
                self._errors[rel] = parsed
            else:
                self._docs[rel] = parsed
        return {rel: self._docs[rel] for rel in paths if rel in self._docs}

    def doc(self, path: str) -> Page | None:
        """One parsed document (None when absent or unreadable), without parsing the rest."""
        if not self._is_doc(path):
            return None
        return self._load([path]).get(path)

    def _is_doc(self, path: str) -> bool:
        """Whether `path` is one of the view's documents: by bisection of the sorted list until the
        view has been asked DOC_SET_AFTER times (a full compile's gate asks about every document),
        then in a set of them: a view asked about a few does not hash the 57,000 paths of the 10k Brain."""
        return path in self._doc_lookup

    @cached_property
    def _doc_lookup(self) -> SortedLookup:
        return SortedLookup(self._doc_paths, DOC_SET_AFTER)

    def paths_under(self, prefix: str) -> list[str]:
        """Document paths below a folder, without parsing them (a range of the sorted listing)."""
        if not prefix:
            return list(self._doc_paths)
        paths = self._doc_paths
        return paths[bisect.bisect_left(paths, prefix) : bisect.bisect_left(paths, _after(prefix))]

    def docs_under(self, prefix: str) -> dict[str, Page]:
        """Parsed documents whose path starts with `prefix` (parses only those)."""
        return self._load([p for p in self._doc_paths if p.startswith(prefix)])

    @cached_property
    def _focus_doc_paths(self) -> list[str]:
        # The focus (a run's few dozen files) looked up in the sorted listing, not the 57,000
        # documents of a large Brain tested against the focus.
        return self._doc_paths if self.focus is None else _sorted_among(self._doc_paths, self.focus)

    @cached_property
    def docs(self) -> dict[str, Page]:
        """Every parsed page, summary and note by path (sorted); only the focus when there is one."""
        return self._load(self._focus_doc_paths)

    @property
    def errors(self) -> dict[str, PageError]:
        self._load(self._focus_doc_paths)
        wanted = set(self._focus_doc_paths)
        return {p: e for p, e in sorted(self._errors.items()) if p in wanted}

    @cached_property
    def checked_files(self) -> list[str]:
        """The files per-file checks look at: all of them, or the focus."""
        files = self.tree.files()
        return files if self.focus is None else _sorted_among(files, self.focus)

    @cached_property
    def pages(self) -> dict[str, Page]:
        return self._load([p for p in self._doc_paths if _kind(p) == "page"])

    @cached_property
    def summaries(self) -> dict[str, Page]:
        """Session summaries by session id."""
        loaded = self._load([p for p in self._doc_paths if _kind(p) == "summary"])
        return {d.slug: d for d in loaded.values()}

    @cached_property
    def notes(self) -> dict[str, Page]:
        return self._load([p for p in self._doc_paths if _kind(p) == "note"])

    @cached_property
    def page_paths(self) -> list[str]:
        """Every file in a page location, parsed or not (the index must list them all)."""
        files, is_symlink = self.tree.files(), self.tree.is_symlink
        # Listings are sorted and pages live under knowledge/: only that range is classified, not
        # the ~60,000 notes and sessions of a large Brain ("knowledge0" sorts right after "knowledge/…").
        start, end = bisect.bisect_left(files, _PAGE_ROOT), bisect.bisect_left(files, _PAGE_ROOT[:-1] + "0")
        return [f for f in files[start:end] if _kind(f) == "page" and not is_symlink(f)]

    # -- cards: what the indexes need, without parsing unchanged documents -------------------
    @property
    def cards(self) -> "DocCards":
        if self._cards is None:
            from brain.doccache import DocCards

            self._cards = DocCards()
        return self._cards

    def page_card(self, path: str) -> dict | None:
        """{'title', 'aliases', 'line'} of a page (None when it cannot be parsed)."""
        return self.cards.page(path, self.tree, self.doc)

    def readable(self, path: str) -> bool:
        """True when the document parses (pages are asked their card: no parse when unchanged)."""
        if _kind(path) == "page" and self._is_doc(path):
            return self.page_card(path) is not None
        return self.doc(path) is not None

    def link_card(self, path: str) -> dict | None:
        """{'links', 'updated'} of any document (None when it cannot be parsed)."""
        return self.cards.links(path, self.tree, self.doc)

    def has_doc(self, path: str) -> bool:
        """True when `path` is a page, note or summary file of the tree (parsed or not)."""
        return self._is_doc(path)

    @property
    def doc_paths(self) -> list[str]:
        """Every page, note and summary path (the focus does not apply), without parsing."""
        return self._doc_paths

    def summary_card(self, path: str) -> dict | None:
        """{'started', 'line'} of a session summary (None when it cannot be parsed)."""
        return self.cards.summary(path, self.tree, self.doc)

    def summary_cards(self, paths: Iterable[str], every: bool = False) -> dict[str, dict]:
        """summary_card() of many paths, those that parse (one loop over the cached cards);
        `every`: they are all the tree's summaries (the cache forgets others)."""
        return self.cards.summaries(paths, self.tree, self.doc, every)

    def summary_lines(self, named: dict[str, str]) -> dict[str, str]:
        """The index line of each summary of `named` (session id → its path, a `summary_path`)
        that parses, by session id: summary_cards()' lines, or the caller's (`summary_lines`):
        then the caller's dict itself when it holds just `named` (not to be changed)."""
        if self._summary_lines is not None:
            known = self._summary_lines()
            if known.keys() == named.keys():  # every summary (the I checks ask so): not copied
                return known
            return {sid: known[sid] for sid in named if sid in known}
        cards = self.summary_cards(named.values())
        return {sid: cards[p]["line"] for sid, p in named.items() if p in cards}

    def clean_lines(self, rel: str) -> "Collection[str] | None":
        """The lines a generated index held when the gate last found none of them holding a secret
        or an instruction (validators.safety.LINE_RECORDS), while the file still holds them; None:
        nobody knows (every line is scanned)."""
        return self._clean_lines(rel) if self._clean_lines is not None else None

    # -- names ------------------------------------------------------------------------------
    @cached_property
    def _page_names(self) -> dict[str, set[str]]:
        """casefolded page slug or alias → the pages it names."""
        out: dict[str, set[str]] = defaultdict(set)
        for path in self.page_paths:
            out[path.rsplit("/", 1)[1][:-3].casefold()].add(path)
        for path in self.page_paths:  # aliases from the cards: unchanged pages are not parsed
            card = self.page_card(path)
            for alias in card["aliases"] if card is not None else ():
                out[alias.strip().casefold()].add(path)
        return out

    @cached_property
    def _stem_folders(self) -> tuple["FolderSpans", list[tuple[str, str]]]:
        """(the folders of notes and summaries, "notes/<topic>/", by the spans of file names each
        holds; (casefolded stem, path) of the documents there whose path casefolding changes). A
        name is then looked up as a file in the folders with a span that holds it: 56,700 notes
        and summaries on the 10k Brain in 415 folders, a run resolves a few hundred names; a map
        of every stem cost 40 ms of each run, a probe of every folder for each name 8 ms. A span
        per folder was not enough: an organisation's folder holds "blue-coop-..." and "we-..."
        notes, so a name fell in 57 of them on average; a span per first letter, in one."""
        paths = self._doc_paths
        spans: list[tuple[str, str, str]] = []

        def add(folder: str, i: int, end: int) -> None:
            """The spans of paths[i:end], the files of `folder`: one per first letter of their
            names (an organisation's notes begin with its slug, or with "we-decided-...")."""
            n = len(folder)
            while i < end:
                letter = ord(paths[i][n])
                j = bisect.bisect_left(paths, paths[i][:n] + chr(letter + 1), i, end) if letter < 0x10FFFF else end
                spans.append((paths[i][n:], paths[j - 1][n:], folder))
                i = j

        i = bisect.bisect_left(paths, _NOTE_ROOT)
        while i < len(paths) and paths[i].startswith(_NOTE_ROOT):
            folder = paths[i][: paths[i].index("/", len(_NOTE_ROOT)) + 1]
            end = bisect.bisect_left(paths, _after(folder), i)
            add(folder, i, end)
            i = end
        summaries = layout.SESSIONS_SUMMARIES + "/"
        start = bisect.bisect_left(paths, summaries)
        add(summaries, start, bisect.bisect_left(paths, _after(summaries), start))
        rest = self._named_docs
        joined = "\0".join(rest)
        odd = []
        if joined.casefold() != joined:  # a name with capitals (an owner's file): found by its folded stem
            odd = [(p.casefold().rpartition("/")[2][:-3], p) for p in rest if p.casefold() != p]
        return FolderSpans(spans), odd

    @cached_property
    def _named_docs(self) -> list[str]:
        """The notes and summaries: the documents named by their file stem (every one but pages)."""
        paths = self._doc_paths
        return paths[: bisect.bisect_left(paths, _PAGE_ROOT)] + paths[bisect.bisect_left(paths, _after(_PAGE_ROOT)) :]

    @cached_property
    def _stem_map(self) -> dict[str, list[str]]:
        """casefolded stem → the notes and summaries of that name, for a view asked many names (a
        full compile checks every document's links). Casefolded once, joined, then cut: a path holds
        no NUL and every document's ends in .md (`_kind`), so the cut gives one stem per path."""
        rest = self._named_docs
        stems = [part.rpartition("/")[2] for part in ("\0".join(rest) + "\0").casefold().split(".md\0")[:-1]]
        out: dict[str, list[str]] = defaultdict(list)
        for stem, path in zip(stems, rest):
            out[stem].append(path)
        return out

    def resolve_pages(self, name: str) -> set[str]:
        """The pages among what resolve(name) finds (by slug, alias or title), without looking
        the name up among notes and summaries (do not modify)."""
        return self._page_names.get(name.strip().casefold(), _NONE)

    def resolve(self, name: str) -> list[str]:
        """Paths a link target or a user's query names (slug, alias, note stem, session id), sorted.

        A name is looked up in the folders of notes whose span of names holds it until the view has
        been asked RESOLVE_MAP_AFTER names; then a map of every stem is built once (the two give the
        same answers)."""
        key = name.strip().casefold()
        found = self._resolved.get(key)
        if found is None:
            hits = set(self._page_names.get(key, ()))
            if key and "/" not in key and "\0" not in key:
                if len(self._resolved) >= RESOLVE_MAP_AFTER:
                    hits.update(self._stem_map.get(key, ()))
                else:
                    spans, odd = self._stem_folders
                    name = key + ".md"
                    hits.update(p for p in (folder + name for folder in spans.holding(name)) if self._is_doc(p))
                    hits.update(p for stem, p in odd if stem == key)
            found = self._resolved[key] = sorted(hits)
        return list(found)

    @cached_property
    def slugs(self) -> dict[str, list[str]]:
        """slug → page paths with that stem (more than one is a collision)."""
        out: dict[str, list[str]] = defaultdict(list)
        for path in self.page_paths:
            out[path.rsplit("/", 1)[1][:-3]].append(path)
        return dict(out)

    def find_page(self, query: str) -> Page | None:
        """A page by slug, alias or title (case-insensitive); None when unknown or ambiguous."""
        hits = [p for p in self.resolve(query) if p in self.docs]
        if not hits:
            folded = query.strip().casefold()
            hits = [p for p, d in self.docs.items() if d.frontmatter.title.casefold() == folded]
        return self.docs[hits[0]] if len(hits) == 1 else None

    # -- sessions ---------------------------------------------------------------------------
    @cached_property
    def session_ids(self) -> list[str]:
        prefix = layout.SESSIONS_RAW + "/"
        return [f[len(prefix) : -6] for f in self.tree.files() if f.startswith(prefix) and f.endswith(".jsonl") and f.count("/") == 2]

    def session(self, session_id: str) -> Session | None:
        if session_id not in self._sessions:
            rel = layout.raw_session_path(session_id)
            data = self.tree.read_if_exists(rel) if layout.is_session_id(session_id) else None
            if data is None:
                self._sessions[session_id] = None
            else:
                session, problems = parse_session_cached(rel, data)
                self._sessions[session_id] = session
                self.session_problems[session_id] = problems
        return self._sessions[session_id]

    # -- sources ----------------------------------------------------------------------------
    @cached_property
    def source_records(self) -> dict[str, SourceRecord]:
        """`<connector>/<record-id>` → record, over every export under sources/."""
        out: dict[str, SourceRecord] = {}
        for rel in self.tree.files():
            parts = rel.split("/")
            if parts[0] != layout.SOURCES or len(parts) < 3 or self.tree.is_symlink(rel):
                continue
            text = text_if_exists(self.tree, rel)
            if text is None:  # deleted since the tree was listed
                continue
            for rec in records_of(parts[1], rel, text):
                out.setdefault(f"{rec.connector}/{rec.record_id}", rec)
        return out

    # -- citations --------------------------------------------------------------------------
    def check_target(self, raw: str) -> str | None:
        """Why a citation target does not resolve (None when it does)."""
        try:
            target = CitationTarget.parse(raw)
        except CitationError as exc:
            return str(exc)
        if target.kind == "session":
            if self._turns_exist(target.ref, target.turns):
                return None
            session = self.session(target.ref)
            if session is None:
                rel = layout.raw_session_path(target.ref)
                if layout.is_session_id(target.ref) and self.tree.exists(rel):
                    return f"session {target.ref!r} cannot be read: {rel} has no usable header line"
                return f"session {target.ref!r} does not exist under {layout.SESSIONS_RAW}/"
            missing = [n for n in target.turns if session.turn(n) is None]
            if missing:
                last = session.turns[-1].n if session.turns else 0
                return f"{target} cites turn {missing[0]}, but session {target.ref!r} has turns 1-{last}"
            return None
        if target.kind == "source":
            if target.ref not in self.source_records:
                return f"{target} names no record under {layout.SOURCES}/{target.connector}/"
            return None
        if not self.tree.exists(f"{layout.NOTES}/{target.ref}"):
            return f"{target}: no such note under {layout.NOTES}/"
        return None

    def _turns_exist(self, session_id: str, turns: Iterable[int]) -> bool:
        """True when the raw session has each of `turns`, as its remembered turn numbers say (a
        file git vouches for, by blob id: not opened); False when that cannot be told so."""
        from brain.doccache import in_ranges, turn_ranges

        if self._cards is None or not layout.is_session_id(session_id):
            return False
        rel = layout.raw_session_path(session_id)
        key = self.tree.key(rel)
        if key is None:
            return False

        def build() -> str | None:
            session = self.session(session_id)
            return turn_ranges(t.n for t in session.turns) if session is not None else None

        spec = self._cards.session_turns(rel, key, build)
        return spec is not None and all(in_ranges(n, spec) for n in turns)

    def cited_text(self, raw: str) -> list[tuple[str, str]]:
        """(label, text) of what a target points at: each turn with speaker and time, or the record."""
        target = CitationTarget.parse(raw)
        if target.kind == "session":
            session = self.session(target.ref)
            out = []
            for n in target.turns:
                turn = session.turn(n) if session else None
                if turn is not None:
                    who = turn.speaker or turn.role
                    when = f" {turn.time}" if turn.time else ""
                    out.append((f"session:{target.ref}#t{n} {who}{when}", turn.text))
            return out
        if target.kind == "source":
            rec = self.source_records.get(target.ref)
            return [(str(target), rec.text)] if rec else []
        rel = f"{layout.NOTES}/{target.ref}"
        note = self.docs.get(rel)
        return [(str(target), note.body.strip())] if note else []
