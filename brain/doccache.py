"""DocCards: what is derived from a document, remembered by the git blob id of its bytes.

A page's names and index line, a session summary's index line: a run and its validators need
these for every document of a large Brain, but only a few documents change per run. A card is
looked up by path and content key; the key comes from the tree without reading the file when git
vouches for it (`Tree.key`), else from the bytes. A stale entry (other key), a missing or corrupt
cache file all fall back to parsing, so a cache only ever saves time.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Callable

from brain.repo import blob_id
from brain.tree import Tree

Parse = Callable[[str], Any]  # path → Page | None


class DocCards:
    """Cards by path, each kept with the content key it was built from; persisted when `path` is set."""

    def __init__(self, path: Path | None = None, version: str = "") -> None:
        """`version` names the code that builds the cards: a cache written by other code is ignored."""
        self.path = path
        self.version = version
        self.entries: dict[str, list] = {}  # path → [blob id, card]
        self.dirty = False
        if path is not None and path.is_file():
            try:
                raw = json.loads(path.read_text(encoding="utf-8"))
            except (ValueError, UnicodeDecodeError):
                raw = None
            if isinstance(raw, dict) and raw.get("version") == version and isinstance(raw.get("entries"), dict):
                self.entries = raw["entries"]

    def card(self, path: str, tree: Tree, build: Callable[[], dict | None]) -> dict | None:
        """The card of `path` as it is in `tree`: the cached one when its key matches, else `build()`."""
        key = tree.key(path) or blob_id(tree.read_bytes(path))
        hit = self.entries.get(path)
        if type(hit) is list and len(hit) == 2 and hit[0] == key and type(hit[1]) is dict:
            return hit[1]
        card = build()
        if card is not None:
            self.entries[path] = [key, card]
            self.dirty = True
        return card

    def remember(self, path: str, data: bytes, card: dict[str, Any]) -> None:
        """A card for bytes this process is about to write: the next run finds it without parsing."""
        self.entries[path] = [blob_id(data), card]
        self.dirty = True

    def page(self, path: str, tree: Tree, parse: Parse) -> dict | None:
        """{'title', 'aliases', 'line'} of a page: its names and its knowledge/index.md line."""

        def build() -> dict | None:
            from brain.render import index_line  # jinja2: imported only when a card is built

            page = parse(path)
            if page is None:
                return None
            return {"title": page.frontmatter.title, "aliases": list(page.frontmatter.aliases), "line": index_line(page)}

        card = self.card(path, tree, build)
        if card is not None and not (isinstance(card.get("title"), str) and isinstance(card.get("aliases"), list) and isinstance(card.get("line"), str)):
            self.entries.pop(path, None)  # a corrupt entry: parse again
            return self.page(path, tree, parse)
        return card

    def summary(self, path: str, tree: Tree, parse: Parse) -> dict | None:
        """{'started', 'line'} of a session summary: its sessions/index.md line."""

        def build() -> dict | None:
            from brain.render import session_index_line

            page = parse(path)
            if page is None:
                return None
            return {"started": str(page.frontmatter.extras().get("started") or ""), "line": session_index_line(page)}

        card = self.card(path, tree, build)
        if card is not None and not (isinstance(card.get("started"), str) and isinstance(card.get("line"), str)):
            self.entries.pop(path, None)
            return self.summary(path, tree, parse)
        return card

    def save(self) -> None:
        """Write the cache (temp file + rename) when it learned something."""
        if self.path is None or not self.dirty:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(self.path.name + ".tmp")
        data = {"version": self.version, "entries": dict(sorted(self.entries.items()))}
        tmp.write_text(json.dumps(data, separators=(",", ":")), encoding="utf-8")
        os.replace(tmp, self.path)
        self.dirty = False


_FINGERPRINTS: dict[tuple[str, ...], str] = {}


def code_fingerprint(*packages: str) -> str:
    """A digest of the source of the given packages (their .py files and templates), so a cache
    built by other code (an upgrade, a local change) is not trusted."""
    if packages not in _FINGERPRINTS:
        import hashlib
        import importlib.util

        h = hashlib.blake2b(digest_size=16)
        for name in packages:
            spec = importlib.util.find_spec(name)
            folders = list(spec.submodule_search_locations or []) if spec else []
            for folder in folders:
                for file in sorted(Path(folder).rglob("*")):
                    if file.suffix in (".py", ".j2") and file.is_file():
                        h.update(file.relative_to(folder).as_posix().encode() + b"\0" + file.read_bytes() + b"\0")
        _FINGERPRINTS[packages] = h.hexdigest()
    return _FINGERPRINTS[packages]
