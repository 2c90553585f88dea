"""Cache files of one piece: a JSON head line (the writer's version, the body's size and crc32),
then the body as it is. A module of its own, importing nothing heavy: the listing cache
(brain.listing) is read by a process forked before `dream run` imports the compiler."""

from __future__ import annotations

import json
import zlib


def frame(version: str, head: dict, body: bytes) -> bytes:
    """A cache file of one piece: a JSON line (`head`, plus the code `version` and the body's size
    and crc32), then `body` as it is."""
    return frame_head(version, head, body) + body


def frame_head(version: str, head: dict, body: bytes) -> bytes:
    """The JSON line `frame` puts before `body` (for a writer that writes the two apart: a body of
    megabytes is not copied)."""
    head = {**head, "version": version, "size": len(body), "crc": zlib.crc32(body)}
    return json.dumps(head, sort_keys=True, separators=(",", ":")).encode("utf-8") + b"\n"


def unframe(raw: bytes | None, version: str, view: bool = False) -> tuple[dict, bytes | memoryview] | None:
    """(head, body) of what `frame` wrote with this `version`; None when absent, written by other
    code, or damaged (a torn or edited body fails its size or crc32). `view`: the body as a view
    of `raw`, not a copy."""
    if not raw:
        return None
    cut = raw.find(b"\n")
    if cut < 0:
        return None
    body = memoryview(raw)[cut + 1 :] if view else raw[cut + 1 :]
    try:
        head = json.loads(raw[:cut])
    except ValueError:
        return None
    if not isinstance(head, dict) or head.get("version") != version or head.get("size") != len(body) or head.get("crc") != zlib.crc32(body):
        return None
    return head, body
