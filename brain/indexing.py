"""`brain index`: knowledge/index.md for an agent's first message, trimmed to a token budget.

Tokens are estimated as ceil(characters / 3.5) (DEPENDENCIES.md: no offline tokenizer matches
Claude's). When the index is over budget, whole lines are dropped, lowest value first; a line is
never shortened, so every line that is printed is as true as the file. Value, highest first:
  1. the page's type: person, project and preference pages before all others (they answer
     "who / what am I working on / how do I want it"); lines naming no page come last;
  2. backlinks: how many other documents link to the page (`BrainGraph.in_degree`);
  3. recency: the page's `updated` date, newest first;
  4. the slug, alphabetically (a total order, so trimming is deterministic).
Surviving lines keep their place in the file; a group whose lines were all dropped loses its
heading. A last line says what was cut. If even the headings exceed the budget, they are printed.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import ConfigDict, Field

from brain import layout
from brain.doccache import link_names
from brain.errors import BrainError
from brain.model import Model, empty_list
from brain.render import render_knowledge_index
from brain.scan import tree_folder
from brain.view import BrainView

if TYPE_CHECKING:
    from brain.scan import WorktreeScan
    from brain.tree import DirTree

TOKEN_CHARS = 3.5
PRIORITY_TYPES = frozenset({"person", "project", "preference"})
_ENTRY_RE = re.compile(r"^\s*[-*] \[\[([^\]|#]+)")
_HEADING_RE = re.compile(r"^#{2,6} ")


def estimate_tokens(text: str) -> int:
    return math.ceil(len(text) / TOKEN_CHARS)


class IndexResult(Model):
    """What `brain index` prints, and what it left out."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    text: str
    tokens: int
    budget: int
    total: int
    omitted: list[str] = Field(default_factory=empty_list)
    generated: bool = False  # True when knowledge/index.md was missing and rendered from pages

    @property
    def trimmed(self) -> bool:
        return bool(self.omitted)


def index_for_agent(view: BrainView, budget: int) -> IndexResult:
    """knowledge/index.md (rendered from the pages when missing), within `budget` tokens (0: all)."""
    generated = not view.tree.exists(layout.KNOWLEDGE_INDEX)
    if generated:
        text = render_knowledge_index(view.pages)
    else:
        text = view.tree.read_bytes(layout.KNOWLEDGE_INDEX).decode("utf-8", errors="replace")
    if text and not text.endswith("\n"):
        text += "\n"
    total = sum(1 for line in text.splitlines() if _ENTRY_RE.match(line))
    if budget <= 0 or estimate_tokens(text) <= budget:
        return IndexResult(text=text, tokens=estimate_tokens(text), budget=budget, total=total, generated=generated)
    trimmed, omitted = trim_index(text, budget, page_ranks(view))
    return IndexResult(text=trimmed, tokens=estimate_tokens(trimmed), budget=budget, total=total, omitted=omitted, generated=generated)


def page_ranks(view: BrainView, tallies: "LinkTallies | None" = None) -> dict[str, tuple]:
    """slug → sort key of its index line; smaller sorts first and is kept longest.

    The key is (person/project/preference pages first, more other documents linking to it, more
    recently updated, slug). Pages are counted from each one's link card (`BrainView.link_card`:
    with a persisted card cache, `cached_view`, only documents that changed are parsed); notes and
    session summaries, which are never ranked themselves, from their folders' LinkTallies
    (`tallies`: those of the view, for a caller that wants to see how each folder was counted).
    """
    import datetime as dt

    pages = view.page_paths
    is_page = frozenset(pages)
    cards = {path: view.link_card(path) for path in pages}
    linked: Counter[str] = Counter()

    def count(names: Iterable[str], n: int, source: str | None = None) -> None:
        targets: set[str] = set()
        for name in names:
            targets.update(view.resolve_pages(name))
        targets.discard(source)  # a page naming itself is not a backlink
        for target in targets:
            linked[target] += n

    for path, card in cards.items():
        if card is not None:
            count(card["links"], 1, path)
    tallies = tallies or LinkTallies(view)
    for folder, paths in _folders(view.doc_paths, is_page).items():
        for names, n in tallies.tally(folder, paths).items():
            count(names, n)
    tallies.keep()
    ranks: dict[str, tuple] = {}
    for path in pages:
        card = cards.get(path)
        if card is None:
            continue  # unreadable: validators report it
        page_type = layout.page_location(path)[0]
        updated = dt.date.fromisoformat(card["updated"]).toordinal() if card["updated"] else 0
        priority = 0 if page_type in PRIORITY_TYPES else 1
        slug = path.rsplit("/", 1)[1][:-3]
        ranks[slug] = (priority, -linked[path], -updated, slug)
    return ranks


def _folders(paths: list[str], pages: frozenset[str]) -> dict[str, list[str]]:
    """The documents that are not pages (`paths` sorted) by the folder that would hold a tree id
    of them (brain.scan.tree_folder; a file with none, by its top folder)."""
    out: dict[str, list[str]] = {}
    prefix, group = "\0", []  # no path starts with NUL
    for path in paths:
        if path in pages:
            continue
        if not path.startswith(prefix):
            folder = tree_folder(path)
            prefix = folder + "/" if folder else "\0"  # a file of the top folder: no subfolder follows it into its group
            group = out.setdefault(folder or path.split("/", 1)[0], [])
        group.append(path)
    return out


Tally = Counter  # (link target names, sorted) → how many documents name exactly those


class LinkTallies:
    """How many documents of a folder name each set of link targets, kept with the folder's tree.

    Ranking the index counts the documents that link to each page. On a 10,000-session Brain
    that is 57,000 documents, whose link cards sit in ~10,000 cache shards: about 1.5 s per
    `brain index` or `brain context`. Only pages are ranked, so a folder of notes or summaries
    needs just its tally. A tally is kept (`link-tallies.json` in the card cache) with the git
    tree id the folder had when it was counted, and used while git vouches that the folder holds
    exactly that tree (DirTree.folder_tree). When the folder's tree moved since (a commit, e.g.
    a nightly run), the tally follows `git diff-tree` from the old tree to the new one: the few
    files that changed are taken out as their old bytes were and put in as they are. Otherwise
    (files changed and not committed, no git, no tally yet) it is counted from the link cards.
    `how` says, per folder, which it was: "kept", "moved" or "counted".
    """

    FILE = "link-tallies.json"
    #: More changed files than this and the tally is counted again (reading them costs as much).
    MOVE_MAX = 2000

    def __init__(self, view: BrainView) -> None:
        self.view = view
        self.how: dict[str, str] = {}
        self._kept = self._load()
        self._dirty = False

    def tally(self, folder: str, paths: list[str]) -> Tally:
        tree = self.view.tree.folder_tree(folder, paths)
        old = self._kept.get(folder)
        if tree is not None and old is not None and old[0] == tree:
            self.how[folder] = "kept"
            return old[1]
        found = self._moved(folder, old, tree) if tree is not None and old is not None else None
        self.how[folder] = "moved" if found is not None else "counted"
        if found is None:
            found = Tally(tuple(card["links"]) for path in paths if (card := self.view.link_card(path)) is not None)
        if tree is not None:
            self._kept[folder] = (tree, found)
            self._dirty = True
        return found

    def _moved(self, folder: str, old: tuple[str, Tally], tree: str) -> Tally | None:
        """The tally counted at tree `old[0]`, moved to `tree` by what differs between the two."""
        from brain.repo import BrainRepo
        from brain.view import doc_kind, parse_bytes

        root = getattr(self.view.tree, "root", None)
        if root is None:
            return None
        repo = BrainRepo(root)
        try:
            changes = repo.tree_changes(old[0], tree)
            if changes is None or len(changes) > self.MOVE_MAX:
                return None
            changes = [c._replace(path=f"{folder}/{c.path}") for c in changes if doc_kind(f"{folder}/{c.path}")]
            before = repo.cat_blobs(sorted({c.old_blob for c in changes if c.old_blob and c.old_mode in _FILE_MODES}))
        except BrainError:
            return None
        if before is None:
            return None
        tally = Tally(old[1])
        for change in changes:
            if change.old_blob and change.old_mode in _FILE_MODES:
                data = before.get(change.old_blob)
                if data is None:
                    return None  # git lost it: count afresh
                page = parse_bytes(change.path, data)
                if page is not None:
                    tally[tuple(link_names(page))] -= 1
            if change.new_blob and change.new_mode in _FILE_MODES:  # a symlink is no document (doc_paths)
                card = self.view.link_card(change.path)
                if card is not None:
                    tally[tuple(card["links"])] += 1
        if any(n < 0 for n in tally.values()):
            return None  # the old tally was not of that tree after all
        return +tally

    def _load(self) -> dict[str, tuple[str, Tally]]:
        import json

        cards = self.view.cards
        data = cards.read_file(self.FILE)
        try:
            raw = json.loads(data) if data else {}
            if raw.get("version") != cards.version:
                return {}
            return {folder: (tree, Tally({tuple(names): n for names, n in counts}))
                    for folder, (tree, counts) in raw.get("folders", {}).items()
                    if isinstance(tree, str) and all(isinstance(n, int) and n > 0 and all(isinstance(t, str) for t in names)
                                                     for names, n in counts)}
        except (ValueError, TypeError, AttributeError):
            return {}  # unreadable or of another shape: counted again

    def keep(self) -> None:
        """Hand what changed to the card cache, written with its next save (save_cards); the
        tallies of folders that were not asked about (gone from the Brain) are dropped."""
        gone = set(self._kept) - set(self.how)
        for folder in gone:
            del self._kept[folder]
        if not (self._dirty or gone):
            return
        import json

        folders = {folder: [tree, sorted([list(names), n] for names, n in tally.items())] for folder, (tree, tally) in sorted(self._kept.items())}
        self.view.cards.keep_file(self.FILE, json.dumps({"version": self.view.cards.version, "folders": folders},
                                                        separators=(",", ":")).encode("utf-8"))
        self._dirty = False


_FILE_MODES = ("100644", "100755")


def cached_view(root: Path, scan: "WorktreeScan | None" = None, tree: "DirTree | None" = None) -> BrainView:
    """A view of the Brain at `root` whose cards persist in `.dream/cache/brain-cards/` (save them
    with `save_cards`): `brain index` and `brain context` then parse only documents that changed.

    `scan`: git's scan of the Brain, started by the caller before its imports (`brain index`);
    in a large Brain it walks the files in a forked process meanwhile (brain.scan). `tree`: the
    Brain's tree from such a scan, for a caller that has it (`brain context`: its search index's).
    """
    from brain.doccache import DocCards, code_fingerprint
    from brain.scan import WorktreeScan

    root = Path(root)
    cards = DocCards(root / layout.CACHE / "brain-cards", version=code_fingerprint("brain"))
    return BrainView(tree or (scan or WorktreeScan(root, walk=True)).tree(), cards=cards)


def save_cards(view: BrainView) -> None:
    """Persist what the view's cards learned; a cache that cannot be written only costs time."""
    try:
        view.cards.save()
    except OSError:
        pass


def trim_index(text: str, budget: int, ranks: dict[str, tuple]) -> tuple[str, list[str]]:
    """The most valuable lines of `text` that fit `budget` with the note; and the omitted slugs."""
    lines = text.splitlines()
    entries = [(i, m.group(1).strip()) for i, line in enumerate(lines) if (m := _ENTRY_RE.match(line))]
    order = sorted(entries, key=lambda e: ranks.get(e[1], (2, 0, 0, e[1])) + (e[0],))
    lo, hi = 0, len(order)  # the largest k whose render fits; render length grows with k
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if estimate_tokens(_render(lines, order, mid, budget)) <= budget:
            lo = mid
        else:
            hi = mid - 1
    omitted = sorted(slug for _, slug in order[lo:])
    return _render(lines, order, lo, budget), omitted


def _render(lines: list[str], order: list[tuple[int, str]], keep: int, budget: int) -> str:
    """The lines without the entries ranked after `keep`, and without sections left empty."""
    dropped = {i for i, _ in order[keep:]}
    entries = {i for i, _ in order}
    sections: list[list[int]] = [[]]  # line numbers: the preamble, then one list per heading
    for i, line in enumerate(lines):
        if _HEADING_RE.match(line):
            sections.append([])
        sections[-1].append(i)
    out: list[str] = []
    for n, section in enumerate(sections):
        had = [i for i in section if i in entries]
        if n and had and all(i in dropped for i in had):
            continue
        out += [lines[i] for i in section if i not in dropped]
    while out and not out[-1].strip():
        out.pop()
    note = (
        f"(index trimmed to {budget} tokens: {len(dropped)} of {len(order)} pages omitted"
        " — open knowledge/ or run `brain show NAME` for the rest)"
    )
    return "\n".join(out + ["", note]) + "\n"
