"""Streaming summarizer providers over one shared ``httpx.AsyncClient``.

* ``OpenAIChatSummarizer``: OpenAI-compatible ``POST {base_url}/chat/completions`` with
  ``stream: true`` (OpenAI, vLLM, llama.cpp server, Ollama, OpenRouter, ...).
* ``AnthropicSummarizer``: Anthropic Messages ``POST {base_url}/v1/messages`` with
  ``stream: true`` (events ``message_start`` / ``content_block_delta`` / ``message_delta`` /
  ``message_stop``).
* ``OfflineSummarizer`` (``summarize.offline``): no network, extractive, the default.

Both network providers parse Server-Sent Events with ``httpx-sse``, retry 429 / 5xx /
connection failures with exponential backoff (honouring ``Retry-After``) as long as no text has
been streamed, and turn every failure into a short ``SummarizeError``. The API key is read from
the environment for each request, sent only in a header, and redacted from every message.
"""

from __future__ import annotations

import asyncio
import email.utils
import functools
import json
import logging
import ssl
import threading
import time
import weakref
from collections.abc import AsyncIterator, Mapping
from typing import Any

import httpx
from httpx_sse import SSEError, aconnect_sse

from tui_compactor.config import ConfigError, Profile
from tui_compactor.summarize.base import Summarizer, SummaryRequest
from tui_compactor.summarize.errors import (
    AuthError,
    BadRequest,
    ConnectionFailed,
    ContextOverflow,
    MalformedStream,
    ProviderTimeout,
    RateLimited,
    ServerError,
    StreamDropped,
    SummarizeError,
    classify_http_error,
    redact,
)
from tui_compactor.textsafe import well_formed_value

__all__ = [
    "AnthropicSummarizer",
    "HttpSummarizer",
    "OpenAIChatSummarizer",
    "aclose_shared_clients",
    "make_summarizer",
    "shared_client",
]

log = logging.getLogger("tui_compactor.summarize")

ANTHROPIC_VERSION = "2023-06-01"
MAX_RETRY_AFTER_SECONDS = 60.0
"""Longest ``Retry-After`` we wait; longer asks fail with the rate-limit error instead."""

_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, httpx.AsyncClient] = (
    weakref.WeakKeyDictionary()
)


_ssl_lock = threading.Lock()


def _ssl_context() -> ssl.SSLContext:
    """One TLS context for every client: loading the CA bundle takes ~0.1 s, do it once (the
    lock: candidates starting together would each load it, on threads sharing the GIL with
    the UI)."""
    with _ssl_lock:
        return _load_ssl_context()


@functools.cache
def _load_ssl_context() -> ssl.SSLContext:
    import certifi

    return ssl.create_default_context(cafile=certifi.where())


@functools.cache
def _import_http_stack() -> None:
    """Import what a client and its first request import on first use: httpcore, h11 and
    anyio with its asyncio backend (~60 ms, on the caller's event loop otherwise: the app's
    UI froze while the first summary started)."""
    import anyio._backends._asyncio  # noqa: F401
    import anyio.lowlevel  # noqa: F401
    import anyio.streams.tls  # noqa: F401
    import anyio.to_thread  # noqa: F401
    import h11  # noqa: F401
    import httpcore  # noqa: F401


def shared_client() -> httpx.AsyncClient:
    """The one ``httpx.AsyncClient`` of the running event loop (created on first use)."""
    loop = asyncio.get_running_loop()
    client = _clients.get(loop)
    if client is None or client.is_closed:
        client = httpx.AsyncClient(
            limits=httpx.Limits(max_connections=32, max_keepalive_connections=8),
            follow_redirects=False,
            verify=_ssl_context(),
        )
        _clients[loop] = client
    return client


async def aclose_shared_clients() -> None:
    """Close the running loop's shared client (call at app / command shutdown)."""
    loop = asyncio.get_running_loop()
    client = _clients.pop(loop, None)
    if client is not None:
        await client.aclose()


def _display_url(url: str) -> str:
    """``url`` without user info, query or fragment (they may hold credentials)."""
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, TypeError):
        return "the configured base URL"
    port = f":{parsed.port}" if parsed.port else ""
    return f"{parsed.scheme}://{parsed.host}{port}{parsed.path}"


def _retry_after_seconds(value: str | None) -> float | None:
    """Parse ``Retry-After`` (seconds or an HTTP date); None when absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, float(when.timestamp()) - time.time())


class HttpSummarizer(Summarizer):
    """Shared request / retry / error handling of the network providers."""

    provider = "http"

    def __init__(
        self,
        profile: Profile,
        *,
        client: httpx.AsyncClient | None = None,
        environ: Mapping[str, str] | None = None,
        retry_base_delay: float = 0.5,
        retry_max_delay: float = 20.0,
    ) -> None:
        self.profile = profile
        self.model = profile.model or ""
        self.label = profile.label
        self.context_window = profile.context_window
        self.offline = False
        self._client = client
        self._environ = environ
        self.retry_base_delay = retry_base_delay
        self.retry_max_delay = retry_max_delay

    # -- hooks for subclasses -------------------------------------------------
    def _url(self) -> str:
        raise NotImplementedError

    def _headers(self, key: str | None) -> dict[str, str]:
        raise NotImplementedError

    def _body(self, request: SummaryRequest) -> dict[str, Any]:
        raise NotImplementedError

    def _parse_events(self, events: AsyncIterator[Any]) -> AsyncIterator[str]:
        raise NotImplementedError

    def _encoded_body(self, request: SummaryRequest) -> bytes:
        """The body as sent: compact UTF-8 JSON (``_headers`` says so), every string made
        encodable whatever the session held."""
        body = well_formed_value(self._body(request))
        text = json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        return text.encode("utf-8")

    def _adapt_to(self, failure: SummarizeError) -> bool:
        """Adjust the request after a rejection that says how (once); True to resend."""
        return False

    # -- shared machinery ----------------------------------------------------
    def _max_tokens(self, request: SummaryRequest) -> int:
        """The request's budget, capped by the profile's ``max_output_tokens``."""
        if self.profile.max_output_tokens:
            return max(1, min(request.max_tokens, self.profile.max_output_tokens))
        return max(1, request.max_tokens)

    def secrets(self) -> list[str]:
        """The API key, so a server that echoes it cannot get it stored."""
        key = self._key()
        return [key] if key else []

    def _key(self) -> str | None:
        secret = self.profile.api_key(self._environ)
        return secret.get_secret_value() if secret is not None else None

    def _timeout(self) -> httpx.Timeout:
        seconds = self.profile.timeout
        return httpx.Timeout(seconds, connect=min(seconds, 15.0))

    def _backoff(self, attempt: int) -> float:
        delay: float = self.retry_base_delay * (2.0**attempt)
        return min(self.retry_max_delay, delay)

    async def stream(self, request: SummaryRequest) -> AsyncIterator[str]:  # type: ignore[override]
        """Yield text pieces; retry before the first piece, never after it."""
        attempt = 0
        while True:
            key = self._key()
            yielded = False
            try:
                async for piece in self._stream_once(request, key):
                    yielded = True
                    yield piece
                return
            except SummarizeError as error:
                failure: SummarizeError = error
            except httpx.TimeoutException:
                failure = ProviderTimeout(
                    f"no response from {self.label} within {self.profile.timeout:g}s"
                )
            except (httpx.TransportError, httpx.StreamError) as error:
                reason = type(error).__name__ + (f": {error}" if str(error) else "")
                reason = redact(reason, [key or ""])
                failure = ConnectionFailed(
                    f"connection to {_display_url(self.profile.resolved_base_url)} failed: {reason}"
                )
            if yielded and isinstance(failure, (ConnectionFailed, ProviderTimeout)):
                raise StreamDropped(f"{self.label}: stream interrupted: {failure}") from None
            if not yielded and self._adapt_to(failure):
                continue  # the request shape was adjusted; not counted as a retry
            if yielded or not failure.retryable or attempt >= self.profile.max_retries:
                if key and isinstance(failure, AuthError):
                    pass
                elif not key and isinstance(failure, AuthError) and self.profile.key_env:
                    note = f"{self.profile.key_env} is not set"
                    failure = AuthError(f"{failure} ({note})", status=401)
                raise failure from None
            retry_after = failure.retry_after
            if retry_after is not None and retry_after > MAX_RETRY_AFTER_SECONDS:
                raise failure from None
            delay = retry_after if retry_after is not None else self._backoff(attempt)
            attempt += 1
            log.info(
                "%s: %s; retry %d/%d in %.2fs",
                self.label,
                failure,
                attempt,
                self.profile.max_retries,
                delay,
            )
            await asyncio.sleep(delay)

    async def _stream_once(self, request: SummaryRequest, key: str | None) -> AsyncIterator[str]:
        # On a worker thread, not on the caller's event loop (the app's UI): the body, up to a
        # whole context window of transcript, and the CA bundle the shared client needs
        # (~0.1 s of frozen UI at the first summary otherwise).
        client = self._client

        def prepare() -> bytes:
            if client is None:  # the shared client's first request needs these
                _ssl_context()
                _import_http_stack()
            return self._encoded_body(request)

        body = await asyncio.to_thread(prepare)
        client = client or shared_client()
        async with aconnect_sse(
            client,
            "POST",
            self._url(),
            content=body,
            headers=self._headers(key),
            timeout=self._timeout(),
        ) as source:
            response = source.response
            if response.status_code != 200:
                raw = (await response.aread()).decode("utf-8", "replace")
                raise self._http_error(response, raw, key)
            content_type = response.headers.get("content-type", "")
            if "text/event-stream" not in content_type:
                raw = (await response.aread()).decode("utf-8", "replace")
                snippet = redact(" ".join(raw.split())[:120], [key or ""])
                raise MalformedStream(
                    f"{self.label}: expected an event stream, got {content_type or 'no type'}: "
                    f"{snippet}"
                )
            try:
                async for piece in self._parse_events(source.aiter_sse()):
                    yield piece
            except SSEError as error:
                raise MalformedStream(f"{self.label}: malformed event stream: {error}") from None

    def _http_error(self, response: httpx.Response, raw: str, key: str | None) -> SummarizeError:
        """A short error for a non-200 response, with ``retry_after`` for 429/5xx."""
        message, code = _error_text(raw)
        error = classify_http_error(
            response.status_code, redact(message, [key or ""]), code=code, model=self.model
        )
        if isinstance(error, (RateLimited, ServerError)):
            error.retry_after = _retry_after_seconds(response.headers.get("retry-after"))
        return error


def _error_text(raw: str) -> tuple[str, str | None]:
    """The message and code from an OpenAI / Anthropic style JSON error body (or the raw text)."""
    try:
        payload = json.loads(raw)
    except ValueError:
        return raw, None
    if isinstance(payload, dict):
        error = payload.get("error", payload)
        if isinstance(error, dict):
            message = error.get("message") or json.dumps(error)[:240]
            code = error.get("code") or error.get("type")
            return str(message), str(code) if code is not None else None
        if isinstance(error, str):
            return error, None
    return raw, None


def _stream_error(obj: Mapping[str, Any], label: str, key: str | None) -> SummarizeError:
    """An error object that arrived inside the stream."""
    error = obj.get("error")
    if not isinstance(error, dict):
        error = {"message": str(error)}
    message = redact(str(error.get("message") or "unknown error"), [key or ""])
    code = str(error.get("code") or error.get("type") or "")
    status = {
        "overloaded_error": 529,
        "rate_limit_error": 429,
        "api_error": 500,
        "authentication_error": 401,
        "permission_error": 403,
        "not_found_error": 404,
        "invalid_request_error": 400,
    }.get(code)
    if isinstance(error.get("code"), int):
        status = int(error["code"])
    mapped = classify_http_error(status or 400, message, code=code or None)
    if status is None and not isinstance(mapped, ContextOverflow):
        return MalformedStream(f"{label}: the stream reported an error: {message[:240]}")
    return mapped


class OpenAIChatSummarizer(HttpSummarizer):
    """OpenAI-compatible chat completions, streamed."""

    provider = "openai"
    use_max_completion_tokens = False
    """OpenAI's reasoning models reject ``max_tokens`` and want ``max_completion_tokens``."""

    def _adapt_to(self, failure: SummarizeError) -> bool:
        if (
            isinstance(failure, BadRequest)
            and "max_completion_tokens" in str(failure)
            and not self.use_max_completion_tokens
        ):
            self.use_max_completion_tokens = True
            return True
        return False

    def _url(self) -> str:
        return f"{self.profile.resolved_base_url}/chat/completions"

    def _headers(self, key: str | None) -> dict[str, str]:
        headers = {"content-type": "application/json"}
        if key:
            headers["authorization"] = f"Bearer {key}"
        return headers

    def _body(self, request: SummaryRequest) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [
                {"role": "system", "content": request.system},
                {"role": "user", "content": request.prompt},
            ],
            (
                "max_completion_tokens" if self.use_max_completion_tokens else "max_tokens"
            ): self._max_tokens(request),
            "stream": True,
        }
        effort = self.profile.reasoning_effort
        if effort is not None and effort != "off":
            body["reasoning_effort"] = effort
        return body

    async def _parse_events(self, events: AsyncIterator[Any]) -> AsyncIterator[str]:
        finished = False
        got_text = False
        async for event in events:
            data = event.data
            if not data:
                continue
            if data.strip() == "[DONE]":
                return
            try:
                obj = json.loads(data)
            except ValueError:
                raise MalformedStream(
                    f"{self.label}: malformed stream event (not JSON): {data[:80]!r}"
                ) from None
            if not isinstance(obj, dict):
                raise MalformedStream(f"{self.label}: malformed stream event: {data[:80]!r}")
            if "error" in obj:
                raise _stream_error(obj, self.label, None)
            choices = obj.get("choices")
            if not isinstance(choices, list):
                raise MalformedStream(f"{self.label}: stream event without choices")
            for choice in choices:
                if not isinstance(choice, dict):
                    continue
                delta = choice.get("delta") or {}
                text = delta.get("content") if isinstance(delta, dict) else None
                if isinstance(text, str) and text:
                    got_text = True
                    yield text
                if choice.get("finish_reason"):
                    finished = True
        if not finished:
            if got_text:
                raise StreamDropped(f"{self.label}: stream ended before it finished")
            raise MalformedStream(f"{self.label}: stream ended without any completion")


ANTHROPIC_THINKING_BUDGETS: dict[str, int] = {
    "minimal": 1024,
    "low": 2048,
    "medium": 8192,
    "high": 16384,
    "xhigh": 32768,
}
"""Thinking tokens per reasoning effort on the Messages API (its minimum is 1024)."""


def anthropic_thinking_budget(effort: str | None) -> int | None:
    """``budget_tokens`` for ``effort``; None when no thinking is asked for (``off``/unset)."""
    return ANTHROPIC_THINKING_BUDGETS.get(effort or "")


class AnthropicSummarizer(HttpSummarizer):
    """Anthropic Messages API, streamed."""

    provider = "anthropic"

    def _url(self) -> str:
        base = self.profile.resolved_base_url
        return f"{base}/messages" if base.endswith("/v1") else f"{base}/v1/messages"

    def _headers(self, key: str | None) -> dict[str, str]:
        headers = {"content-type": "application/json", "anthropic-version": ANTHROPIC_VERSION}
        if key:
            headers["x-api-key"] = key
        return headers

    def _body(self, request: SummaryRequest) -> dict[str, Any]:
        max_tokens = self._max_tokens(request)
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": max_tokens,
            "system": request.system,
            "messages": [{"role": "user", "content": request.prompt}],
            "stream": True,
        }
        budget = anthropic_thinking_budget(self.profile.reasoning_effort)
        if budget is not None:
            # Thinking counts against max_tokens: add it, so the summary keeps its budget.
            body["thinking"] = {"type": "enabled", "budget_tokens": budget}
            body["max_tokens"] = max_tokens + budget
        return body

    async def _parse_events(self, events: AsyncIterator[Any]) -> AsyncIterator[str]:
        started = False
        got_text = False
        async for event in events:
            name = event.event
            if name == "ping":
                continue
            try:
                obj = json.loads(event.data) if event.data else {}
            except ValueError:
                raise MalformedStream(
                    f"{self.label}: malformed stream event {name!r}: {event.data[:80]!r}"
                ) from None
            if not isinstance(obj, dict):
                raise MalformedStream(f"{self.label}: malformed stream event {name!r}")
            kind = obj.get("type", name)
            if kind == "error":
                raise _stream_error(obj, self.label, None)
            if kind == "message_start":
                started = True
            elif kind == "content_block_delta":
                delta = obj.get("delta")
                if not isinstance(delta, dict):
                    raise MalformedStream(f"{self.label}: content_block_delta without delta")
                if delta.get("type") == "text_delta":
                    text = delta.get("text")
                    if not isinstance(text, str):
                        raise MalformedStream(f"{self.label}: text_delta without text")
                    if text:
                        got_text = True
                        yield text
            elif kind == "message_stop":
                return
        if got_text:
            raise StreamDropped(f"{self.label}: stream ended before message_stop")
        if not started:
            raise MalformedStream(f"{self.label}: stream ended without message_start")
        raise MalformedStream(f"{self.label}: stream ended before message_stop")


def make_summarizer(
    profile: Profile | None = None,
    *,
    client: httpx.AsyncClient | None = None,
    environ: Mapping[str, str] | None = None,
    retry_base_delay: float = 0.5,
) -> Summarizer:
    """The summarizer for ``profile`` (offline when None or ``provider = "offline"``).

    ``client`` replaces the per-loop shared client (tests, the UI's own client);
    ``environ`` replaces ``os.environ`` when reading the key.

    Raises:
        ConfigError: a network profile without a model.
    """
    if profile is None or profile.provider == "offline":
        from tui_compactor.summarize.offline import OfflineSummarizer

        return OfflineSummarizer()
    if not profile.model:
        raise ConfigError(
            f'profile {profile.name!r} ({profile.provider}) names no model: set model = "..." '
            f"in [profiles.{profile.name}] or pass --model"
        )
    if profile.provider == "openai":
        return OpenAIChatSummarizer(
            profile, client=client, environ=environ, retry_base_delay=retry_base_delay
        )
    if profile.provider == "anthropic":
        return AnthropicSummarizer(
            profile, client=client, environ=environ, retry_base_delay=retry_base_delay
        )
    raise ValueError(f"unknown provider {profile.provider!r}")
