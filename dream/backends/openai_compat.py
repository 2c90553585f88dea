"""The `openai` backend: any server speaking OpenAI's chat completions (Ollama, llama.cpp, vLLM, OpenAI).

Plain `urllib` (stdlib): one POST per call, so no SDK is needed and nothing new is installed.
Structured output uses `response_format: json_schema` where the server supports it; a server
that refuses it (HTTP 400) is asked again with `json_object`, then with the schema in the prompt.
Small local models often answer with fenced, truncated or comma-broken JSON: it is repaired when
that is mechanical, otherwise LLMBackend's one retry shows the model its error, then the unit fails.
"""

from __future__ import annotations

import json
import re
import socket
import urllib.error
import urllib.request
from typing import Any, ClassVar

from dream.backends.base import (
    BackendHTTPError,
    BackendRateLimited,
    BackendTimeout,
    BackendUnavailable,
    CallUsage,
    NeedsKeyError,
    parse_retry_after,
    scrub,
)
from dream.backends.llm import Completion, LLMBackend, Prompt, render, schema
from dream.settings import LLMOptions

DEFAULT_BASE_URL = "https://api.openai.com/v1"
MODES = ("json_schema", "json_object", "prompt")
_FENCE_RE = re.compile(r"^\s*```(?:json)?\s*\n(.*?)\n\s*```\s*$", re.S)
_TRAILING_COMMA_RE = re.compile(r",\s*([}\]])")


class OpenAICompatBackend(LLMBackend):
    name: ClassVar[str] = "openai"

    def __init__(self, base_url: str, options: LLMOptions, api_key: str | None = None) -> None:
        super().__init__(options.model or "", options)
        self.base_url = base_url.rstrip("/")
        self._key, self.timeout, self.mode = api_key, options.timeout, options.structured

    def request_body(self, prompt: Prompt) -> dict:
        user = prompt.user
        if self.mode != "json_schema":
            user += "\nThe JSON schema of the answer:\n" + json.dumps(schema(prompt.task), separators=(",", ":")) + "\n"
        messages = [{"role": "system", "content": prompt.system}, {"role": "user", "content": user}]
        if prompt.repair is not None:
            previous, error = prompt.repair
            messages.append({"role": "assistant", "content": previous.raw or "(no answer)"})
            messages.append({"role": "user", "content": render("repair.j2", task=prompt.task, error=error, how="as one JSON object and nothing else")})
        body: dict[str, Any] = {"model": self.model, "messages": messages, "max_tokens": self.max_tokens_for(prompt.task), "temperature": 0}
        if self.mode == "json_schema":
            body["response_format"] = {"type": "json_schema", "json_schema": {"name": prompt.task, "schema": schema(prompt.task), "strict": False}}
        elif self.mode == "json_object":
            body["response_format"] = {"type": "json_object"}
        return body

    def _complete(self, prompt: Prompt) -> Completion:
        while True:
            try:
                return self._post(prompt)
            except BackendHTTPError as exc:
                # A 400 in a structured mode: the server may not know it; ask again in the next mode.
                if exc.status == 400 and self.mode != "prompt":
                    self.mode = MODES[MODES.index(self.mode) + 1]
                    continue
                raise

    def _post(self, prompt: Prompt) -> Completion:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._key:
            headers["Authorization"] = f"Bearer {self._key}"
        data = json.dumps(self.request_body(prompt), ensure_ascii=False).encode("utf-8")
        request = urllib.request.Request(f"{self.base_url}/chat/completions", data=data, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                status, text = response.status, response.read().decode("utf-8", errors="replace")
        except urllib.error.HTTPError as exc:
            body = scrub(exc.read().decode("utf-8", errors="replace"), self._key)
            if exc.code in (401, 403):
                raise NeedsKeyError(f"the server at {self.base_url} refused the key (HTTP {exc.code})", env="OPENAI_API_KEY") from None
            if exc.code == 429:
                raise BackendRateLimited(body, parse_retry_after(dict(exc.headers.items()))) from None
            raise BackendHTTPError(exc.code, body) from None
        except (TimeoutError, socket.timeout):
            raise BackendTimeout(self.timeout) from None
        except urllib.error.URLError as exc:
            if isinstance(exc.reason, (TimeoutError, socket.timeout)):
                raise BackendTimeout(self.timeout) from None
            raise BackendUnavailable(f"cannot reach {self.base_url}: {exc.reason}") from None
        try:
            reply = json.loads(text)
            choice = reply["choices"][0]
            content = choice["message"].get("content") or ""
        except (ValueError, KeyError, IndexError, TypeError):
            raise BackendHTTPError(status, text[:500], f"the server at {self.base_url} did not answer as chat completions do") from None
        return Completion(raw=content, data=parse_json_object(content), usage=_usage(reply.get("usage") or {}), stop_reason=choice.get("finish_reason"))


def _usage(u: dict) -> CallUsage:
    details = u.get("prompt_tokens_details") or {}
    return CallUsage(
        input_tokens=int(u.get("prompt_tokens") or 0),
        output_tokens=int(u.get("completion_tokens") or 0),
        cache_read_tokens=int(details.get("cached_tokens") or 0),
    )


def parse_json_object(text: str) -> dict | None:
    """The JSON object in a model's answer, repaired where that is mechanical; None if there is none.

    Repairs: a ```json fence around it, prose before or after it, commas before a closing bracket.
    Nothing is guessed: a truncated or otherwise broken object stays None (the unit is retried).
    """
    text = text.strip()
    fenced = _FENCE_RE.match(text)
    if fenced:
        text = fenced.group(1).strip()
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end < start:
        return None
    candidate = text[start : end + 1]
    for attempt in (candidate, _TRAILING_COMMA_RE.sub(r"\1", candidate)):
        try:
            value = json.loads(attempt)
        except ValueError:
            continue
        return value if isinstance(value, dict) else None
    return None


def build(options: LLMOptions, api_key: str | None) -> OpenAICompatBackend:
    base_url = options.base_url or DEFAULT_BASE_URL
    if not options.model:
        raise BackendUnavailable("the openai backend needs a model: set [dream] model in brain.toml or pass --model")
    if api_key is None and base_url.rstrip("/") == DEFAULT_BASE_URL:
        raise NeedsKeyError("no OPENAI_API_KEY for the OpenAI API", env="OPENAI_API_KEY")
    return OpenAICompatBackend(base_url, options, api_key)
