"""ChatGPT data export (`conversations.json`) → one canonical session per conversation.

Each conversation is a tree of messages (`mapping`); edits and regenerations are branches.
The branch that the ChatGPT UI shows is the path from `current_node` back to the root, so that
is the transcript. Only visible user/assistant text is kept: system prompts, tool calls and tool
output, and reasoning are skipped.

Custom instructions (what the user told ChatGPT about themselves and how to answer) ride along
hidden in every conversation; each distinct version becomes one session of its own, dated by the
first conversation that carries it, so the owner's profile is cited like anything they said.
"""

from __future__ import annotations

import hashlib
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from brain.layout import slugify
from brain.sessions import Session, SessionHeader, Turn
from dream.importers.base import Parsed, checked_id, read_json

TEXT_TYPES = frozenset({"text", "multimodal_text"})
ROLES = frozenset({"user", "assistant"})


def epoch_to_iso(value: Any) -> str | None:
    """Unix seconds (ChatGPT's `create_time`) → ISO 8601 in UTC; None if absent or out of range."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        return datetime.fromtimestamp(value, tz=timezone.utc).isoformat(timespec="seconds")
    except (OverflowError, OSError, ValueError):
        return None


def conversation_id(conv: dict[str, Any]) -> str:
    """`chatgpt-<conversation id>`, or `chatgpt-<slug of title>-<date>` for exports without ids."""
    cid = conv.get("conversation_id") or conv.get("id")
    if isinstance(cid, str) and cid.strip():
        return f"chatgpt-{cid.strip()}"
    title = conv.get("title") if isinstance(conv.get("title"), str) else ""
    started = epoch_to_iso(conv.get("create_time"))
    return "chatgpt-" + slugify(f"{title} {started[:10] if started else ''}", fallback="untitled")


def read_chatgpt(path: Path) -> Parsed:
    """Read `conversations.json` (or the unzipped export folder that holds it)."""
    if path.is_dir():
        path = path / "conversations.json"
    display = str(path)
    problems: list[str] = []
    data = read_json(path, display, problems)
    if isinstance(data, dict) and "mapping" in data:
        data = [data]  # one conversation saved on its own (the share and single-chat exports)
    elif data is not None and not isinstance(data, list):
        problems.append(f"{display}: expected a JSON list of conversations or one conversation, got {type(data).__name__}; nothing imported")
        data = None
    if data is None:
        return Parsed(problems=problems)
    sessions = []
    profiles: dict[tuple[str, ...], str | None] = {}  # custom instructions → when first seen
    for index, conv in enumerate(data):
        where = f"{display}: conversation {index}"
        if not isinstance(conv, dict) or not isinstance(conv.get("mapping"), dict):
            problems.append(f"{where}: not an object with a 'mapping' of messages; conversation skipped")
            continue
        if isinstance(conv.get("title"), str):
            where += f" ({conv['title']!r})"
        nodes = _branch(conv, where, problems)
        for said in filter(None, (_custom_instructions(node.get("message")) for node in nodes)):
            started = epoch_to_iso(conv.get("create_time"))
            if said not in profiles or (started and (profiles[said] or "~") > started):
                profiles[said] = started
        turns = []
        for node in nodes:
            turn = _turn(node.get("message"), len(turns) + 1)
            if turn is not None:
                turns.append(turn)
        if not turns:
            problems.append(f"{where}: no visible user or assistant text; conversation skipped")
            continue
        header = SessionHeader(
            id=checked_id(conversation_id(conv), where, problems),
            started=epoch_to_iso(conv.get("create_time")) or turns[0].time,
            source="chatgpt",
            title=conv["title"] if isinstance(conv.get("title"), str) and conv["title"].strip() else None,
            participants=["user", "assistant"],
        )
        sessions.append(Session(header=header, turns=turns))
    sessions += [_profile_session(said, started) for said, started in profiles.items()]
    return Parsed(sessions=sessions, problems=problems)


def _custom_instructions(message: Any) -> tuple[str, ...] | None:
    """(about the user, how to answer) of a custom-instructions message, either left empty; None for other messages."""
    if not isinstance(message, dict):
        return None
    content = message.get("content") if isinstance(message.get("content"), dict) else {}
    metadata = message.get("metadata") if isinstance(message.get("metadata"), dict) else {}
    old = metadata.get("user_context_message_data") if isinstance(metadata.get("user_context_message_data"), dict) else {}
    if content.get("content_type") == "user_editable_context":
        said = (content.get("user_profile"), content.get("user_instructions"))
    elif old:
        said = (old.get("about_user_message"), old.get("about_model_message"))
    else:
        return None
    said = tuple(_unwrapped(x) if isinstance(x, str) else "" for x in said)
    return said if any(said) else None


_FENCED_RE = re.compile(r"```(?:[^\n`]*\n)?(.*?)```", re.S)


def _unwrapped(text: str) -> str:
    """The user's own words: newer exports wrap them in a preamble and a ``` fence."""
    fenced = _FENCED_RE.findall(text)
    return (fenced[-1] if fenced else text).strip()


def _profile_session(said: tuple[str, ...], started: str | None) -> Session:
    digest = hashlib.sha256("\0".join(said).encode("utf-8")).hexdigest()[:12]
    turns = [Turn(n=n, role="user", speaker="user", time=started, text=text, kind=kind)
             for n, (kind, text) in enumerate(((k, t) for k, t in zip(("about-me", "how-to-answer"), said) if t), start=1)]
    header = SessionHeader(id=f"chatgpt-profile-{digest}", started=started, source="chatgpt", title="ChatGPT custom instructions",
                           participants=["user"])
    return Session(header=header, turns=turns)


def _branch(conv: dict[str, Any], where: str, problems: list[str]) -> list[dict[str, Any]]:
    """Nodes from the root to `current_node` (falls back to the last child at each fork)."""
    mapping: dict[str, Any] = conv["mapping"]
    node_id = conv.get("current_node")
    if not isinstance(node_id, str) or not isinstance(mapping.get(node_id), dict):
        problems.append(f"{where}: 'current_node' is missing or unknown; followed the newest branch instead")
        node_id = _newest_leaf(mapping)
    path: list[dict[str, Any]] = []
    seen: set[str] = set()
    while isinstance(node_id, str) and node_id in mapping and node_id not in seen:
        seen.add(node_id)
        node = mapping[node_id]
        if not isinstance(node, dict):
            problems.append(f"{where}: node {node_id!r} is not an object; the branch was cut there")
            break
        path.append(node)
        node_id = node.get("parent")
    if node_id in seen:
        problems.append(f"{where}: the message tree has a cycle at {node_id!r}; the branch was cut there")
    path.reverse()
    return path


def _newest_leaf(mapping: dict[str, Any]) -> str | None:
    roots = sorted(k for k, v in mapping.items() if isinstance(v, dict) and v.get("parent") not in mapping)
    node_id = roots[0] if roots else None
    seen: set[str] = set()
    while node_id is not None and node_id not in seen:
        seen.add(node_id)
        children = [c for c in mapping[node_id].get("children") or [] if isinstance(mapping.get(c), dict)]
        if not children:
            break
        node_id = children[-1]
    return node_id


def _turn(message: Any, n: int) -> Turn | None:
    """A turn for a visible user/assistant text message, else None."""
    if not isinstance(message, dict):
        return None
    author = message.get("author") if isinstance(message.get("author"), dict) else {}
    role = author.get("role")
    content = message.get("content") if isinstance(message.get("content"), dict) else {}
    metadata = message.get("metadata") if isinstance(message.get("metadata"), dict) else {}
    if role not in ROLES or content.get("content_type") not in TEXT_TYPES:
        return None
    if metadata.get("is_visually_hidden_from_conversation") or metadata.get("is_user_system_message"):
        return None
    if message.get("recipient") not in (None, "all"):  # an assistant call to a tool (browser, python, …)
        return None
    parts = content.get("parts") if isinstance(content.get("parts"), list) else []
    text = "\n".join(t for t in map(_part_text, parts) if t).strip()
    if not text:
        return None
    return Turn(n=n, role=role, speaker=role, time=epoch_to_iso(message.get("create_time")), text=text)


def _part_text(part: Any) -> str:
    if isinstance(part, str):
        return part
    if isinstance(part, dict) and str(part.get("content_type", "")).startswith("image"):
        return "[image]"
    if isinstance(part, dict) and isinstance(part.get("text"), str):
        return part["text"]
    return ""
