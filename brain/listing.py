"""The listing of a large Brain's files, kept between `dream run`s and checked folder by folder.

`walk_sorted` (brain.tree) reads every folder: on the 10k Brain, 67,000 entries in 400 folders,
about 50 ms of the second core at the start of a nightly run, while the first imports the compiler
and git stats every file. Most folders have not changed since the last run, and a folder's entries
change only with its stat: adding, removing or renaming an entry sets the folder's mtime and ctime,
and nothing sets a ctime back (`utime`, which `cp -a`, rsync and tar use to restore an mtime, sets
the ctime to now; a folder made anew has a new inode). So each folder's entries are kept with its
stat (device, inode, mtime, ctime), and a run reads again only the folders whose stat changed.

A folder's entries are trusted only when its stat was the same before and after they were read,
and older than a probe file touched before the read, on the same file system: a change made after
the read then lands at a later time and shows in the stat, even within the clock's tick (git's
"racy git" rule, for folders). Entries not trusted are kept too, marked to be read again: the
listing is always what the folders held when last read.

`walk_cached` gives exactly what `walk_sorted` gives; a cache that is missing, damaged or written
by other code is read as empty. `dream run` saves the cache at its end (`refresh`), after its
own writes, so the next run reads again only what changed since: a new raw session's folder.
"""

from __future__ import annotations

import bisect
import marshal
import os
import stat
import struct
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple

from brain.forked import Forked, Helper, run_forked, start_helper
from brain.frames import frame_head, unframe
from brain.layout import document_runs
from brain.tree import _SKIP_DIRS, dream_files, in_sorted, read_folder

#: The cache file and its probe (brain.layout.CACHE).
LISTING = ".dream/cache/listing.bin"
PROBE = ".dream/cache/listing.probe"
#: What the listing takes depends on the skipped folders: other ones, another cache.
VERSION = "listing-1 " + ",".join(sorted(_SKIP_DIRS))
#: More changed paths than this and the listing is sorted anew instead of changed path by path.
SPLICE_MAX = 2_000
#: The stat of a folder whose entries must be read again (kept only for what they were).
_UNTRUSTED = (-1, -1, -1, -1)
#: How long a save waits for the file system's clock to pass the writes just made (seconds).
_TICK_WAIT = 0.05

# A folder's record: (dev, ino, mtime_ns, ctime_ns, its subfolders). Its files are the listing's
# paths right below it (a range of the sorted listing: `_names_in`).
Record = tuple
# What a listing is kept as: (folder → record, the files, the symlinks), both sorted, none of
# `.dream/` (dream_files: read each time, they are few).
Kept = tuple[dict[str, Record], list[str], list[str]]


def walk_cached(root: Path) -> tuple[list[str], list[str], Kept]:
    """Every file below root and which are symlinks, both sorted, as `walk_sorted` lists them, and
    what `refresh` starts from; folders whose stat matches the cache are not read. Nothing is
    saved: `refresh` does that."""
    root = Path(root)
    # Folders read are kept trusted if older than the probe: a run's refresh starts from them.
    kept, _ = _update(root, _load(root / LISTING), _probe(root))
    more, more_links = dream_files(root)
    return _with(kept[1], ".dream/", more), _with(kept[2], ".dream/", more_links), kept


class ForkedWalk:
    """`walk_cached` in a forked process, started before a run needs the listing:
    `result()` gives (files, symlinks) as DirTree takes a listing (None if the child failed: the
    tree then walks itself), and `kept` then what `refresh` starts from.

    Forked with `serve` (fork_walk), the process stays, small as it was forked, for the run's last
    write: `refresh(vouched)` keeps the listing there from what it read; `close()` waits for it.
    Else it leaves at once."""

    def __init__(self, forked: "Forked | Helper") -> None:
        self._forked = forked
        self._got: tuple[list[str], list[str], dict[str, Record], list[tuple[int, int]]] | None = None

    def result(self) -> tuple[list[str], list[str], list[tuple[int, int]]] | None:
        """(files, symlinks, where the documents are among the files: brain.layout.document_runs)."""
        got = self._forked.result()
        if not (isinstance(got, tuple) and len(got) == 4):
            return None
        self._got = got
        return got[0], got[1], got[3]

    @property
    def pid(self) -> int:
        return self._forked.pid

    @property
    def kept(self) -> Kept | None:
        if self._got is None:
            return None
        files, links, dirs, _ = self._got
        return dirs, _without(files, ".dream/"), _without(links, ".dream/")

    @property
    def serves(self) -> bool:
        """Whether the process stays for refresh() (its listing arrived, it is alive)."""
        return isinstance(self._forked, Helper) and self._got is not None and self._forked.pid != 0

    def refresh(self, vouched: "Vouched | None") -> bool:
        """`refresh(root, kept, vouched)` done there, from the listing it read; False when it
        cannot be (then do it here)."""
        return self.serves and self._forked.send(("refresh", vouched))

    def close(self) -> bool:
        """Wait for what it was sent; True when all of it was done."""
        return self._forked.close() if isinstance(self._forked, Helper) else False

    def discard(self) -> None:
        self._forked.discard()


def fork_walk(root: Path, serve: bool = False) -> ForkedWalk | None:
    """walk_cached(root) in a forked process; None where this system cannot fork. It does not save
    what it read again (its run saves it at the end, `refresh`): on the 10k Brain writing the
    listing takes ~15 ms of the second core while git stats every file. `serve`: the process stays
    to keep the listing at the run's end (ForkedWalk.refresh); the caller must close() or discard() it.
    On the 10k Brain that saved a nightly run ~11 ms (median of 8 paired runs) against forking the
    run's ~100 MB process for it then."""
    read: list[Kept] = []

    def walk() -> tuple[list[str], list[str], dict[str, Record], list[tuple[int, int]]]:
        files, links, kept = walk_cached(root)
        read.append(kept)
        # The rest of `kept` is in the listing: not sent twice. Where the documents are is found
        # here, on the second core: 10 ms of the run's own on the 10k Brain (brain.view.doc_paths_of).
        return files, links, kept[0], document_runs(files)

    def serve_message(message: tuple[str, object]) -> None:
        kind, payload = message
        if kind == "refresh":
            refresh(root, read[0], payload)  # type: ignore[arg-type]

    forked = start_helper(walk, serve_message) if serve else run_forked(walk)
    return ForkedWalk(forked) if forked is not None else None


def refresh(root: Path, kept: Kept, vouched: Vouched | None = None) -> None:
    """Save the listing again from `kept` (what `walk_cached` gave earlier), reading the folders
    whose stat changed since, but for those `vouched` (Watch.vouched: what changed in them is
    known): `dream run` calls it after writing its files, so that the next run reads none of them."""
    root = Path(root)
    probe = vouched.probe if vouched is not None else _probe(root, wait=True)
    kept, changed = _update(root, kept, probe, vouched.folders if vouched is not None else {})
    if changed:
        _save(root / LISTING, kept)


def save_listing(root: Path) -> None:
    """List the Brain and keep the listing, as a run leaves it at its end: for a Brain whose
    folders are all new to the kept listing (a copy of the Brain, as benchmarks make)."""
    root = Path(root)
    refresh(root, _load(root / LISTING))


def _update(root: Path, old: Kept, probe: int | None, vouched: dict[str, tuple[tuple, list[str]]] | None = None) -> tuple[Kept, bool]:
    """The listing of `root` from `old`, reading again each folder whose stat changed, but for one
    `vouched` to have that stat now and only the given files more; True when anything differs from
    `old`. Folders read are trusted when older than `probe`."""
    vouched = vouched or {}
    old_dirs, old_files, old_links = old
    dirs: dict[str, Record] = {}
    gone: list[str] = []
    added: list[str] = []
    gone_links: list[str] = []
    added_links: list[str] = []
    stack = [(os.fspath(root), "")]
    while stack:
        path, rel = stack.pop()
        try:
            st = os.stat(path)
        except OSError:
            continue
        stamp = (st.st_dev, st.st_ino, st.st_mtime_ns, st.st_ctime_ns)
        record = old_dirs.get(rel)
        known = vouched.get(rel)
        if known is not None and record is not None and known[0] == stamp:
            added += [rel + name for name in known[1]]
            record = (*stamp, record[4])
        elif record is None or record[:4] != stamp:
            try:
                names, linked, below = read_folder(path, rel == "")
                after = os.stat(path)
            except OSError:
                continue
            trusted = probe is not None and stamp == (after.st_dev, after.st_ino, after.st_mtime_ns, after.st_ctime_ns) \
                and st.st_mtime_ns < probe and st.st_ctime_ns < probe
            was, was_links = (_names_in(old_files, rel), _names_in(old_links, rel)) if record is not None else ((), ())
            _diff(rel, was, names, gone, added)
            _diff(rel, was_links, linked, gone_links, added_links)
            record = (*(stamp if trusted else _UNTRUSTED), tuple(below))
        dirs[rel] = record
        stack += [(f"{path}/{name}", f"{rel}{name}/") for name in record[4]]
    for rel in old_dirs.keys() - dirs.keys():  # folders gone (or unreadable now)
        gone += [rel + name for name in _names_in(old_files, rel)]
        gone_links += [rel + name for name in _names_in(old_links, rel)]
    edit = _spliced_anew if len(gone) + len(added) > SPLICE_MAX else _splice
    files, links = edit(old_files, gone, added), edit(old_links, gone_links, added_links)
    return (dirs, files, links), bool(gone or added or gone_links or added_links or dirs != old_dirs)


def _names_in(listing: list[str], rel: str) -> tuple[str, ...]:
    """The names of the files right in folder `rel` ("a/b/", "" for the root) in `listing` (sorted);
    each subfolder's paths are stepped over by bisection (notes/ holds 40,000 below it)."""
    if rel:
        lo, hi = bisect.bisect_left(listing, rel), bisect.bisect_left(listing, rel[:-1] + "0")  # "0" follows "/"
    else:
        lo, hi = 0, len(listing)
    cut, out, i = len(rel), [], lo
    while i < hi:
        path = listing[i]
        slash = path.find("/", cut)
        if slash < 0:
            out.append(path[cut:])
            i += 1
        else:
            i = bisect.bisect_left(listing, path[:slash] + "0", i, hi)
    return tuple(out)


def _diff(rel: str, was: tuple[str, ...], now: list[str], gone: list[str], added: list[str]) -> None:
    """The paths of folder `rel` that were listed (`was`) and are not (`gone`), and the other way round."""
    present = set(now)
    lost = [name for name in was if name not in present]
    gone += [rel + name for name in lost]
    if len(present) != len(was) - len(lost):
        added += [rel + name for name in present.difference(was)]


def _spliced_anew(listing: list[str], gone: list[str], added: list[str]) -> list[str]:
    """What _splice gives, for many changes: filtered and sorted whole."""
    drop = set(gone)
    return sorted([path for path in listing if path not in drop] + added)


def _splice(listing: list[str], gone: list[str], added: list[str]) -> list[str]:
    """`listing` (sorted) without `gone`, with `added`, still sorted."""
    if not gone and not added:
        return listing
    out = list(listing)
    for path in gone:
        i = bisect.bisect_left(out, path)
        if i < len(out) and out[i] == path:
            del out[i]
    for path in added:
        bisect.insort(out, path)
    return out


def _with(listing: list[str], prefix: str, more: list[str]) -> list[str]:
    """`listing` (sorted, nothing in it under `prefix`) with `more` (all under `prefix`): one block."""
    if not more:
        return listing
    i = bisect.bisect_left(listing, prefix)
    return listing[:i] + sorted(more) + listing[i:]


def _without(listing: list[str], prefix: str) -> list[str]:
    """`listing` (sorted) without the paths under `prefix` (what `_with` put in)."""
    i, j = bisect.bisect_left(listing, prefix), bisect.bisect_left(listing, prefix[:-1] + "0")
    return listing[:i] + listing[j:] if j > i else listing


def _load(cache: Path) -> Kept:
    try:
        found = unframe(cache.read_bytes(), VERSION, view=True)
        if found is not None:
            dirs, files, links = marshal.loads(found[1])
            if type(dirs) is dict and type(files) is list and type(links) is list:
                return dirs, files, links
    except (OSError, ValueError, EOFError, TypeError):
        pass
    return {}, [], []


def _save(cache: Path, kept: Kept) -> None:
    """Written aside and renamed into place: a reader sees the old cache or the new one. Any
    failure leaves the old one (a cache is only ever a shortcut)."""
    tmp = cache.with_name(f"{cache.name}.{os.getpid()}.tmp")
    try:
        body = marshal.dumps(kept)
        with open(tmp, "wb") as out:
            out.write(frame_head(VERSION, {}, body))
            out.write(body)
        os.replace(tmp, cache)
    except OSError:
        tmp.unlink(missing_ok=True)


def _probe(root: Path, wait: bool = False, past: int | None = None) -> int | None:
    """The file system's time now (ns), from a file touched for it: a folder whose stat is older
    can be trusted. `wait`: (briefly) until it is past its own first reading and `past`: then it is
    past the time of anything written before the call (a file system may hand out one time twice,
    as a coarse clock does), so the folders just written can be trusted. None when the probe cannot
    be written: then nothing is trusted."""
    path = root / PROBE
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch()
        now = os.stat(path).st_ctime_ns
        bar = max(now, past if past is not None else now) if wait else None
        deadline = time.monotonic() + _TICK_WAIT
        while bar is not None and now <= bar and time.monotonic() < deadline:
            time.sleep(0.0001)
            os.utime(path)
            now = os.stat(path).st_ctime_ns
        return now
    except OSError:
        return None


# -- what a run's own writes did to the folders it wrote in (Linux: inotify) ---------------------
_IN_MOVED_FROM, _IN_MOVED_TO, _IN_CREATE, _IN_DELETE = 0x40, 0x80, 0x100, 0x200
_IN_DELETE_SELF, _IN_MOVE_SELF, _IN_UNMOUNT, _IN_Q_OVERFLOW, _IN_IGNORED = 0x400, 0x800, 0x2000, 0x4000, 0x8000
_IN_ONLYDIR, _IN_ISDIR = 0x01000000, 0x40000000
_ARRIVE, _LEAVE = _IN_CREATE | _IN_MOVED_TO, _IN_DELETE | _IN_MOVED_FROM
_LOST = _IN_DELETE_SELF | _IN_MOVE_SELF | _IN_UNMOUNT | _IN_IGNORED | _IN_ISDIR
_EVENT = struct.Struct("iIII")  # struct inotify_event: wd, mask, cookie, len; then the name


class Vouched(NamedTuple):
    """What Watch.vouched found: the probe time, and per folder its stat and the files it gained."""
    probe: int | None
    folders: dict[str, tuple[tuple, list[str]]]


class Watch:
    """The folders a run is about to write files into, watched (inotify) while it does, so that
    the listing kept afterwards (refresh) need not read them again: notes/<owner>/ of the 10k Brain
    holds 36,000 notes, and a nightly run writes a few more into it.

    A folder is vouched for only when what happened in it is exactly what the run did: each name
    that is there now and was not before arrived once, is one of the run's files and is a regular
    file; no listed name left; no folder came or went; the watch lost nothing (queue overflow, the
    folder moved). Anything else, the owner's work included, leaves the folder to be read again.
    The listing it starts from must be the folder's when the watch began (the same stat as kept,
    and trusted), and its stat afterwards older than a probe taken before the events are read: a
    change after that shows in the stat. Where inotify is not available, nothing is vouched for.
    """

    def __init__(self, root: Path, folders: Iterable[str], kept: Kept) -> None:
        self.root = Path(root)
        self._fd: int | None = None
        self._watched: dict[int, str] = {}  # watch descriptor → folder ("a/b/")
        self._added: list[int] = []  # every watch descriptor, for stop()
        self._kept = kept
        self._libc = libc = _libc()
        if libc is None:
            return
        fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if fd < 0:
            return
        self._fd = fd
        mask = _ARRIVE | _LEAVE | _IN_DELETE_SELF | _IN_MOVE_SELF | _IN_ONLYDIR
        for rel in sorted(set(folders)):
            record = kept[0].get(rel)
            if record is None or record[:4] == _UNTRUSTED:
                continue
            path = os.fspath(self.root / rel) if rel else os.fspath(self.root)
            wd = libc.inotify_add_watch(fd, os.fsencode(path), mask)
            if wd < 0:
                continue
            self._added.append(wd)
            try:
                st = os.stat(path)
            except OSError:
                continue
            if record[:4] == (st.st_dev, st.st_ino, st.st_mtime_ns, st.st_ctime_ns):
                self._watched[wd] = rel  # unchanged since it was listed: what happens from now is seen

    def vouched(self, written: Iterable[str]) -> Vouched:
        """After the run's writes (`written`: the paths it wrote): the folders whose changes are
        exactly those, with their stat now and the files they gained. Ends the watch."""
        if not self.active:
            return Vouched(None, {})
        try:
            stamps = {}
            for rel in self._watched.values():
                try:
                    st = os.stat(self.root / rel if rel else self.root)
                except OSError:
                    continue
                stamps[rel] = (st.st_dev, st.st_ino, st.st_mtime_ns, st.st_ctime_ns)
            # Past the folders' stat, before the events are read: a change after that shows in the stat.
            probe = _probe(self.root, wait=True, past=max((max(s[2], s[3]) for s in stamps.values()), default=None))
            events = _read_events(self._fd)
        finally:
            self.stop()
        if probe is None or events is None:
            return Vouched(probe, {})
        ours: dict[str, set[str]] = {}
        for path in written:
            folder, _, name = path.rpartition("/")
            ours.setdefault(folder + "/" if folder else "", set()).add(name)
        arrived: dict[str, dict[str, int]] = {}
        spoiled: set[str] = set()
        for wd, mask, name in events:
            rel = self._watched.get(wd)
            if rel is None:
                continue
            if mask & _LOST:
                spoiled.add(rel)
            elif mask & _ARRIVE:
                counts = arrived.setdefault(rel, {})
                counts[name] = counts.get(name, 0) + 1
            elif mask & _LEAVE:
                counts = arrived.setdefault(rel, {})
                counts[name] = counts.get(name, 0) - 1
        out: dict[str, tuple[tuple, list[str]]] = {}
        files, links = self._kept[1], self._kept[2]
        for rel, stamp in stamps.items():
            if rel in spoiled or stamp[2] >= probe or stamp[3] >= probe:
                continue
            mine = ours.get(rel, set())
            new: list[str] = []
            for name, count in arrived.get(rel, {}).items():
                listed = in_sorted(files, rel + name)
                if count == 0 and not listed:  # came and went: a temporary file
                    continue
                if count != 1 or name not in mine or in_sorted(links, rel + name) or not _is_plain_file(self.root / (rel + name)):
                    break
                if not listed:
                    new.append(name)
            else:
                out[rel] = (stamp, sorted(new))
        return Vouched(probe, out)

    @property
    def active(self) -> bool:
        """Whether it is watching (inotify is there, and it was not stopped)."""
        return self._fd is not None and self._libc is not None

    def stop(self) -> None:
        """Stop watching. The kernel releases the watches in the background: closing the descriptor
        right away would wait for that (an RCU grace period, 15-20 ms here); close() it later."""
        if self.active:
            for wd in self._added:
                self._libc.inotify_rm_watch(self._fd, wd)
            self._libc = None

    def close(self) -> None:
        """Stop watching and close the descriptor (at the end of a run: stop() was done long before)."""
        self.stop()
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def _read_events(fd: int) -> list[tuple[int, int, str]] | None:
    """The events queued on the inotify descriptor: (wd, mask, name); None when the queue overflowed."""
    out = []
    while True:
        try:
            data = os.read(fd, 1 << 16)
        except BlockingIOError:
            return out
        except OSError:
            return None
        at = 0
        while at + _EVENT.size <= len(data):
            wd, mask, _cookie, size = _EVENT.unpack_from(data, at)
            name = data[at + _EVENT.size : at + _EVENT.size + size].split(b"\0", 1)[0]
            at += _EVENT.size + size
            if mask & _IN_Q_OVERFLOW:
                return None
            out.append((wd, mask, os.fsdecode(name)))


def _is_plain_file(path: Path) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def _libc():
    """libc with inotify, or None (not Linux, or no such calls)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.inotify_init1.argtypes = [ctypes.c_int]
        libc.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
        libc.inotify_rm_watch.argtypes = [ctypes.c_int, ctypes.c_int]
        return libc
    except (OSError, AttributeError):
        return None
