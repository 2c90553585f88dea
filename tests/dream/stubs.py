"""Loopback stub servers speaking the real wire formats: Anthropic Messages and OpenAI chat completions.

By default the stub answers like a model that happens to be the offline backend: it reads the
request's prompt back (the transcript in <turn> tags, the page facts in JSON, the claims in
<claim> tags, the eval's question, packet, gold and generated answers in their tags), runs `dream.backends.offline` on it and replies in the server's format, with
usage figures estimated as ceil(chars / 3.5) and prompt caching simulated (the first request
with a given cached prefix writes it, later ones read it). `script(task, replies…)` makes the
next calls of a task (optionally only those whose prompt contains some text) get canned replies:
invalid answers, 429, 500, or a reply slower than the client's timeout.
"""

from __future__ import annotations

import hashlib
import html
import json
import re
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from brain.sessions import Session, SessionHeader, Turn
from brain.tokens import estimate_tokens
from dream.backends.base import AnswerRequest, EntityRef, JudgeRequest, VerifyRequest, WritePageRequest
from dream.backends.offline import OfflineBackend
from dream.text import facts as facts_mod
from dream.text.summarize import summarize as offline_summarize


@dataclass
class Reply:
    """A canned reply: a JSON body (or the answer object to wrap), a status, headers, a delay."""

    status: int = 200
    body: Any = None  # dict → sent as JSON as is; str → sent as text
    answer: Any = None  # the model's answer (tool input / message content), wrapped in the wire format
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    mangle: Any = None  # a function of the right answer: what the "model" sends instead


@dataclass
class Rule:
    task: str
    contains: str | None
    replies: list[Reply]


@dataclass
class Seen:
    path: str
    headers: dict[str, str]
    body: dict
    task: str
    reply: dict | None = None  # the JSON body sent back (200s)


class Stub:
    """A stub server; `kind` is "anthropic" or "openai"."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.seen: list[Seen] = []
        self.rules: list[Rule] = []
        self._cached: set[str] = set()
        self._lock = threading.Lock()
        self._counter = 0
        self.refuse_formats: set[str] = set()  # response_format types answered with 400 (openai)
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.server.daemon_threads = True
        self.server.block_on_close = False
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        self.base_url = self.url if kind == "anthropic" else self.url + "/v1"
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def script(self, task: str, *replies: Reply, contains: str | None = None) -> None:
        """The next calls of `task` (whose prompt contains `contains`, if given) get these replies."""
        self.rules.append(Rule(task, contains, list(replies)))

    def requests(self, task: str | None = None) -> list[Seen]:
        return [s for s in self.seen if task is None or s.task == task]

    # --- answering ------------------------------------------------------------------------------

    def handle(self, path: str, headers: dict[str, str], body: dict) -> Reply:
        prompt = _user_text(body, self.kind)
        task = _task(prompt)
        seen = Seen(path, headers, body, task)
        with self._lock:
            self.seen.append(seen)
            rule = next((r for r in self.rules if r.task in (task, "*") and r.replies and (r.contains is None or r.contains in prompt)), None)
            canned = rule.replies.pop(0) if rule else None
        if canned is not None and (canned.status != 200 or canned.body is not None):
            return canned
        if body.get("response_format", {}).get("type") in self.refuse_formats:
            return error_reply(self.kind, 400, f"response_format {body['response_format']['type']} is not supported")
        if canned is not None and canned.answer is not None:
            answer = canned.answer
        else:
            answer = offline_answer(task, body, self.kind)
            answer = canned.mangle(answer) if canned is not None and canned.mangle else answer
        reply = self.wrap(body, task, answer)
        seen.reply = reply
        return Reply(200, reply, delay=canned.delay if canned else 0.0)

    def wrap(self, body: dict, task: str, answer: Any) -> dict:
        with self._lock:
            self._counter += 1
            n = self._counter
        if self.kind == "anthropic":
            prefix = _anthropic_prefix(body)
            total = estimate_tokens(_anthropic_chars(body))
            key = hashlib.sha256(prefix.encode()).hexdigest()
            cached = estimate_tokens(prefix) if prefix else 0
            with self._lock:
                hit = key in self._cached
                self._cached.add(key)
            out = json.dumps(answer) if not isinstance(answer, str) else answer
            content = [{"type": "tool_use", "id": f"toolu_{n:04d}", "name": task, "input": answer}] if isinstance(answer, dict) else [{"type": "text", "text": answer}]
            return {
                "id": f"msg_{n:04d}", "type": "message", "role": "assistant", "model": body.get("model"),
                "content": content, "stop_reason": "tool_use" if isinstance(answer, dict) else "end_turn", "stop_sequence": None,
                "usage": {
                    "input_tokens": total - cached, "output_tokens": estimate_tokens(out),
                    "cache_read_input_tokens": cached if hit else 0, "cache_creation_input_tokens": 0 if hit else cached,
                },
            }
        text = answer if isinstance(answer, str) else json.dumps(answer)
        system = next((m["content"] for m in body["messages"] if m["role"] == "system"), "")
        key = hashlib.sha256(system.encode()).hexdigest()
        with self._lock:
            hit = key in self._cached
            self._cached.add(key)
        prompt_tokens = estimate_tokens("".join(m["content"] for m in body["messages"]) + json.dumps(body.get("response_format", "")))
        return {
            "id": f"chatcmpl-{n:04d}", "object": "chat.completion", "created": 0, "model": body.get("model"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {
                "prompt_tokens": prompt_tokens, "completion_tokens": estimate_tokens(text), "total_tokens": prompt_tokens + estimate_tokens(text),
                "prompt_tokens_details": {"cached_tokens": estimate_tokens(system) if hit else 0},
            },
        }


def _handler(stub: Stub):
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's naming
            data = self.rfile.read(int(self.headers.get("content-length") or 0))
            reply = stub.handle(self.path, {k.lower(): v for k, v in self.headers.items()}, json.loads(data))
            if reply.delay:
                time.sleep(reply.delay)
            payload = reply.body if reply.body is not None else {}
            raw = payload.encode() if isinstance(payload, str) else json.dumps(payload).encode()
            try:
                self.send_response(reply.status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(raw)))
                for k, v in reply.headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(raw)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (timeout tests)

        def log_message(self, *args) -> None:
            pass

    return Handler


# --- canned replies ---------------------------------------------------------------------------------


def error_reply(kind: str, status: int, message: str = "stub error", headers: dict | None = None) -> Reply:
    if kind == "anthropic":
        error_type = {429: "rate_limit_error", 401: "authentication_error", 500: "api_error", 529: "overloaded_error"}.get(status, "invalid_request_error")
        body = {"type": "error", "error": {"type": error_type, "message": message}}
    else:
        body = {"error": {"message": message, "type": "server_error" if status >= 500 else "invalid_request_error", "code": None}}
    return Reply(status=status, body=body, headers=headers or {})


# --- reading the prompt back -------------------------------------------------------------------------


def _user_text(body: dict, kind: str) -> str:
    messages = [m for m in body.get("messages", []) if m.get("role") == "user"]
    content = messages[0]["content"] if messages else ""
    if isinstance(content, list):
        content = "".join(b.get("text", "") for b in content if isinstance(b, dict))
    return content


def _task(prompt: str) -> str:
    m = re.match(r"Task: (\w+)", prompt)
    return m.group(1) if m else "unknown"


def _system_text(body: dict, kind: str) -> str:
    if kind == "anthropic":
        system = body.get("system", "")
        return system if isinstance(system, str) else "".join(b["text"] for b in system)
    return next((m["content"] for m in body["messages"] if m["role"] == "system"), "")


def _anthropic_prefix(body: dict) -> str:
    """Tools and system up to the last block marked cache_control (Anthropic's cache order)."""
    system = body.get("system", [])
    blocks = system if isinstance(system, list) else []
    marked = [i for i, b in enumerate(blocks) if b.get("cache_control")]
    if not marked:
        return ""
    return json.dumps(body.get("tools", [])) + "".join(b["text"] for b in blocks[: marked[-1] + 1])


def _anthropic_chars(body: dict) -> str:
    parts = [json.dumps(body.get("tools", [])), _system_text(body, "anthropic")]
    for m in body.get("messages", []):
        c = m["content"]
        parts.append(c if isinstance(c, str) else json.dumps(c))
    return "".join(parts)


_SESSION_RE = re.compile(r'<session id="([^"]*)" started="([^"]*)" participants="([^"]*)" new_from="(\d+)">')
_TURN_RE = re.compile(r'<turn n="(\d+)" role="([^"]*)" speaker="([^"]*)"(?: time="([^"]*)")?>(.*?)</turn>', re.S)
_OWNER_RE = re.compile(r'^Owner of the Brain \(the user who says "I"\): (.+)$', re.M)
_INDEX_LINE_RE = re.compile(r"^- \[\[([^\]|]+)\|([^\]]+)\]\]", re.M)
_FOLDER_TYPES = {"People": "person", "Organizations": "organization", "Places": "place", "Projects": "project",
                 "Concepts": "concept", "Preferences": "preference", "Learnings": "learning", "Events": "event"}


def _session(prompt: str) -> tuple[Session, int]:
    m = _SESSION_RE.search(prompt)
    header = SessionHeader(id=html.unescape(m.group(1)), started=html.unescape(m.group(2)) or None,
                           participants=[p for p in html.unescape(m.group(3)).split(", ") if p])
    turns = [
        Turn(n=int(t.group(1)), role=html.unescape(t.group(2)), speaker=html.unescape(t.group(3)),
             time=html.unescape(t.group(4)) if t.group(4) else None, text=html.unescape(t.group(5)))
        for t in _TURN_RE.finditer(prompt)
    ]
    return Session(header=header, turns=turns), int(m.group(4))


def _owner(prompt: str) -> str | None:
    m = _OWNER_RE.search(prompt)
    return None if m is None or m.group(1) == "unknown" else m.group(1).strip()


def _known(system: str, prompt: str) -> list[EntityRef]:
    known, group = [], None
    for line in system.split("# The Brain at the start of this run", 1)[-1].splitlines():
        if line.startswith("## "):
            group = _FOLDER_TYPES.get(line[3:].strip())
        m = _INDEX_LINE_RE.match(line)
        if m and group:
            known.append(EntityRef(slug=m.group(1), title=m.group(2), type=group))
    block = re.search(r"<known>\n(.*?)</known>", prompt, re.S)
    for line in (block.group(1).splitlines() if block else []):
        e = json.loads(line)
        known.append(EntityRef(slug=e["slug"], title=e["name"], type=e["type"], aliases=e.get("aliases", [])))
    return known


def offline_answer(task: str, body: dict, kind: str) -> dict:
    """The answer the offline backend gives to the request this prompt describes."""
    prompt = _user_text(body, kind)
    if task == "summarize":
        session, first = _session(prompt)
        return offline_summarize(session, _owner(prompt), first).model_dump(mode="json")
    if task == "extract_facts":
        session, first = _session(prompt)
        found, entities = facts_mod.extract(session, _owner(prompt), first, known=_known(_system_text(body, kind), prompt))
        return {"facts": [f.model_dump(mode="json") for f in found], "entities": [e.model_dump(mode="json") for e in entities]}
    if task == "write_page":
        data = json.loads(re.search(r"<page>\n(.*?)\n</page>", prompt, re.S).group(1))
        return OfflineBackend().write_page(WritePageRequest.model_validate(data)).model_dump(mode="json")
    if task == "verify":
        verdicts = []
        for m in re.finditer(r'<claim n="(\d+)">\n<text>(.*?)</text>\n(.*?)</claim>', prompt, re.S):
            evidence = [html.unescape(e) for e in re.findall(r"<evidence>(.*?)</evidence>", m.group(3), re.S)]
            v = OfflineBackend().verify(VerifyRequest(claim=html.unescape(m.group(2)), evidence=evidence))
            verdicts.append({"n": int(m.group(1)), "label": v.label, "reason": v.reason})
        return {"verdicts": verdicts}
    if task in ("answer", "judge"):
        tag = {name: html.unescape(m.group(1)) for name in ("question", "packet", "gold", "generated")
               if (m := re.search(rf"<{name}>\n?(.*?)\n?</{name}>", prompt, re.S))}
        if task == "judge":
            return OfflineBackend().judge(JudgeRequest(question=tag["question"], gold=tag["gold"], answer=tag["generated"])).model_dump()
        asked = re.search(r"^The question is asked on (\d{4}-\d{2}-\d{2})\.$", prompt, re.M)
        req = AnswerRequest(question=tag["question"], packet=tag["packet"], asked=asked.group(1) if asked else None)
        return OfflineBackend().answer(req).model_dump()
    raise ValueError(f"the stub does not know the task {task!r}")


# --- Brains and runs for the backend tests ------------------------------------------------------------

#: Three short Nadia sessions: enough for one to fail while the others land.
SMALL = ("2026-03-04-job-search", "2026-03-11-sprint-kickoff", "2026-04-06-workshop-dates")
NOW = "2026-07-15T02:00:00Z"


def small_brain(dest, keep=SMALL):
    """Nadia's inputs with only the sessions in `keep`, committed."""
    from nadia_runs import NADIA_IDS, nadia_inputs

    return nadia_inputs(dest, leave_out=tuple(s for s in NADIA_IDS if s not in keep))


def set_dream(root, table: str = "dream", **values) -> None:
    """Append a brain.toml table (e.g. [dream] timeout, retries) and commit it, as an owner would."""
    from nadia_runs import git

    lines = [f"\n[{table}]"] + [f"{k} = {json.dumps(v)}" for k, v in values.items()]
    path = root / "brain.toml"
    path.write_text(path.read_text(encoding="utf-8") + "\n".join(lines) + "\n", encoding="utf-8")
    git(root, "commit", "-q", "--allow-empty", "-am", f"brain.toml: [{table}]")


def dream_run(root, *args: str, env: dict | None = None):
    """`dream run --brain ROOT --now NOW ARGS…` through click, with `env` set for the call."""
    from click.testing import CliRunner

    from dream.cli import main

    return CliRunner().invoke(main, ["run", "--brain", str(root), "--now", NOW, *args], env=env or {}, catch_exceptions=False)


def run_report(root, result=None) -> dict:
    """The report.json of the last run (from `dream status`' point of view: the newest run folder)."""
    runs = sorted((root / ".dream" / "runs").iterdir(), key=lambda p: p.stat().st_mtime)
    return json.loads((runs[-1] / "report.json").read_text(encoding="utf-8"))


def pending(root) -> list[str]:
    """Sessions the state does not record (what the next run will process)."""
    from nadia_runs import RAW, processed

    done = processed(root)
    return sorted(p.stem for p in (root / RAW).glob("*.jsonl") if p.stem not in done)
