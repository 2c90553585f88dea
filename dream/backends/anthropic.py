"""The `anthropic` backend: the Messages API through the official SDK (the only module importing it).

Structured output is one forced tool. Every request of a run carries all four task tools and
the same system block, with `cache_control` on that block, so the prefix tools → system (the
Dream skill, standing instructions, index) is written to the cache once and read by every later
call of the run; only `tool_choice` and the user message change between calls, and they come
after it. The eval's `answer` and `judge` calls carry their own tool and system prompt.
The SDK's own retries are off (`max_retries=0`): LLMBackend retries, logs and honours retry-after.
"""

from __future__ import annotations

import functools
import json
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
from dream.backends.llm import DESCRIPTIONS, TASKS, Completion, LLMBackend, Prompt, render, schema
from dream.settings import LLMOptions

DEFAULT_MODEL = "claude-sonnet-4-6"  # not on the SDK's deprecation list (claude-sonnet-4-5 is)


def _sdk():
    try:
        import anthropic
    except ImportError as exc:  # pragma: no cover - it is a dependency of the package
        raise BackendUnavailable("the anthropic package is not installed: pip install 'anthropic>=2.14,<3'") from exc
    return anthropic


@functools.lru_cache(maxsize=None)
def tools(task: str | None = None) -> tuple[dict, ...]:
    """Dream's four task tools (every run request carries all of them: a stable prefix); an eval task's own tool alone."""
    names = TASKS if task is None or task in TASKS else (task,)
    return tuple({"name": t, "description": DESCRIPTIONS[t], "input_schema": schema(t)} for t in names)


class AnthropicBackend(LLMBackend):
    """Takes a ready `anthropic.Anthropic` client (key, base_url, timeout are the caller's business)."""

    name: ClassVar[str] = "anthropic"

    def __init__(self, client: Any, options: LLMOptions) -> None:
        super().__init__(options.model or DEFAULT_MODEL, options)
        self.client = client

    def answer_line(self, task: str) -> str:
        return f"Answer by calling the `{task}` tool once, with the complete answer."

    def request_body(self, prompt: Prompt) -> dict:
        """The Messages API request for `prompt` (what the stub in the tests receives as JSON)."""
        messages: list[dict] = [{"role": "user", "content": prompt.user}]
        if prompt.repair is not None:
            previous, error = prompt.repair
            how = f"by calling the `{prompt.task}` tool again"
            fix = render("repair.j2", task=prompt.task, error=error, how=how)
            if previous.tool_id is not None and isinstance(previous.data, dict):
                messages.append({"role": "assistant", "content": [{"type": "tool_use", "id": previous.tool_id, "name": prompt.task, "input": previous.data}]})
                messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": previous.tool_id, "is_error": True, "content": fix}]})
            else:
                messages.append({"role": "assistant", "content": previous.raw or "(no answer)"})
                messages.append({"role": "user", "content": fix})
        return {
            "model": self.model,
            "max_tokens": self.max_tokens_for(prompt.task),
            "system": [{"type": "text", "text": prompt.system, "cache_control": {"type": "ephemeral"}}],
            "tools": list(tools(prompt.task)),
            "tool_choice": {"type": "tool", "name": prompt.task},
            "messages": messages,
        }

    def _complete(self, prompt: Prompt) -> Completion:
        sdk = _sdk()
        key = getattr(self.client, "api_key", None)
        try:
            message = self.client.messages.create(**self.request_body(prompt))
        except TypeError:
            # The SDK raises TypeError when it finds no credentials at all (DEPENDENCIES.md).
            if key is None and getattr(self.client, "auth_token", None) is None:
                raise NeedsKeyError("no Anthropic API key") from None
            raise
        except sdk.APITimeoutError:
            raise BackendTimeout(_timeout_of(self.client)) from None
        except sdk.APIConnectionError as exc:
            raise BackendUnavailable(f"cannot reach the Anthropic API at {self.client.base_url}: {type(exc.__cause__ or exc).__name__}") from None
        except (sdk.AuthenticationError, sdk.PermissionDeniedError) as exc:
            raise NeedsKeyError(f"the Anthropic API refused the key (HTTP {exc.status_code})") from None
        except sdk.RateLimitError as exc:
            raise BackendRateLimited(scrub(_body(exc), key), parse_retry_after(exc.response.headers)) from None
        except sdk.APIStatusError as exc:
            raise BackendHTTPError(exc.status_code, scrub(_body(exc), key)) from None
        return _completion(message, prompt.task)


def _body(exc: Any) -> str:
    body = getattr(exc, "body", None)
    return json.dumps(body, ensure_ascii=False) if body is not None else str(getattr(exc, "message", ""))


def _timeout_of(client: Any) -> float | None:
    timeout = getattr(client, "timeout", None)
    return timeout if isinstance(timeout, (int, float)) else getattr(timeout, "read", None)


def _completion(message: Any, task: str) -> Completion:
    u = message.usage
    read = getattr(u, "cache_read_input_tokens", None) or 0
    write = getattr(u, "cache_creation_input_tokens", None) or 0
    # The API's input_tokens counts only the uncached part; ours counts all input.
    usage = CallUsage(input_tokens=u.input_tokens + read + write, output_tokens=u.output_tokens, cache_read_tokens=read, cache_write_tokens=write)
    block = next((b for b in message.content if b.type == "tool_use" and b.name == task), None)
    if block is not None:
        data = block.input if isinstance(block.input, dict) else None
        return Completion(raw=json.dumps(block.input, ensure_ascii=False), data=data, usage=usage, stop_reason=message.stop_reason, tool_id=block.id)
    text = "".join(getattr(b, "text", "") for b in message.content)
    return Completion(raw=text, data=None, usage=usage, stop_reason=message.stop_reason)


def build(options: LLMOptions, api_key: str) -> AnthropicBackend:
    """The backend `get_backend("anthropic")` returns: a client with our timeout and no SDK retries."""
    client = _sdk().Anthropic(api_key=api_key, base_url=options.base_url, max_retries=0, timeout=options.timeout)
    return AnthropicBackend(client, options)
