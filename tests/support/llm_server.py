"""A small OpenAI- and Anthropic-compatible streaming server for tests and benchmarks.

It listens on 127.0.0.1 (real sockets), speaks HTTP/1.1 with chunked transfer encoding and real
Server-Sent Events framing, and runs in its own thread with its own asyncio loop, so sync and
async tests can both use it. Routes:

* ``POST /v1/chat/completions`` — OpenAI chat completions (``stream: true``).
* ``POST /v1/messages`` — Anthropic Messages (``stream: true``).

Behaviour is set on ``server.behaviour`` (latency, per-chunk delay, reply text) and faults are
queued with ``server.add_faults(...)``; every request body is recorded in ``server.requests``.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["Fault", "LLMServer", "RecordedRequest", "ServerBehaviour"]

FAULTS = ("429", "500", "401", "404", "400", "hang", "stall", "drop", "malformed", "overflow")
"""Fault names ``add_faults`` accepts; each is consumed by one request."""


class _ClientGone(Exception):
    """The client closed the connection before the reply was complete."""


@dataclass
class Fault:
    """One queued fault: its name, and ``retry_after`` for 429 / 500 replies."""

    name: str
    retry_after: str | None = None


@dataclass
class RecordedRequest:
    """What the server received and when (``time.monotonic()`` on the server thread)."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    started: float
    finished: float | None = None
    fault: str | None = None

    @property
    def prompt(self) -> str:
        """The user message text, for either protocol."""
        messages = self.body.get("messages") or []
        return "".join(
            m.get("content", "")
            for m in messages
            if m.get("role") == "user" and isinstance(m.get("content"), str)
        )

    @property
    def system(self) -> str:
        """The system prompt, for either protocol."""
        if "system" in self.body:
            return str(self.body["system"])
        for message in self.body.get("messages") or []:
            if message.get("role") == "system":
                return str(message.get("content", ""))
        return ""


def default_reply(request: RecordedRequest) -> str:
    """A deterministic reply that says which prompt it answers and echoes anchors it saw."""
    prompt = request.prompt
    if "<previous-summary>" in prompt and "pull-request" in prompt:
        return "I changed the session as requested. I kept the recent work intact."
    if "## Original Request" in prompt:
        return "## Original Request\nturn prefix reply\n\n## Early Progress\n- prefix work\n"
    if "branch of the session" in prompt:
        return "## Goal\nbranch reply\n\n## Constraints & Preferences\n- (none)\n"
    marker = "update" if "<previous-summary>" in prompt else "fresh"
    return (
        f"## Goal\nsummary reply ({marker}, {len(prompt)} chars)\n\n"
        "## Progress\n### Done\n- [x] work\n\n## Next Steps\n1. continue\n"
    )


@dataclass
class ServerBehaviour:
    """How the server answers when no fault is queued."""

    latency: float = 0.0
    """Seconds before the response headers are sent."""
    chunk_delay: float = 0.0
    """Seconds between streamed chunks (the token rate)."""
    chunk_chars: int = 16
    reply: Callable[[RecordedRequest], str] = default_reply
    overflow_over_chars: int | None = None
    """Reply with a context-overflow error when the prompt is longer than this."""
    hang_seconds: float = 30.0
    reject_max_tokens: bool = False
    """Answer ``max_tokens`` like OpenAI's reasoning models: 400, use max_completion_tokens."""
    endless: bool = False
    """Ignore ``max_tokens``: repeat the reply for ever until the client hangs up (OpenAI route)."""
    error_message: str | None = None
    """Message of every fault's error body instead of the usual one (a hostile server)."""
    hold_until_in_flight: int = 0
    """Hold each response until this many requests have been in flight at once (proof, from
    the server's side, that a client sends them concurrently); a request still held after
    ``hold_seconds`` is answered anyway and counted in ``server.hold_timeouts``."""
    hold_seconds: float = 10.0


class LLMServer:
    """The server; use as a context manager or call ``start()`` / ``stop()``."""

    def __init__(self) -> None:
        self.behaviour = ServerBehaviour()
        self.requests: list[RecordedRequest] = []
        self._faults: deque[Fault] = deque()
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._server: asyncio.base_events.Server | None = None
        self._ready = threading.Event()
        self._stop_event: asyncio.Event | None = None
        self.port = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self.hold_timeouts = 0
        """Requests answered because ``hold_seconds`` passed, not because enough were in flight."""
        self.disconnects = 0
        """Requests whose client went away before the reply finished (cancelled / timed out)."""

    # -- public -----------------------------------------------------------------
    @property
    def openai_base_url(self) -> str:
        """Base URL for an OpenAI-compatible profile."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def anthropic_base_url(self) -> str:
        """Base URL for an Anthropic profile."""
        return f"http://127.0.0.1:{self.port}"

    def add_faults(self, *names: str, retry_after: str | None = None) -> None:
        """Queue faults; each of the next requests consumes one, in order."""
        with self._lock:
            for name in names:
                if name not in FAULTS:
                    raise ValueError(f"unknown fault {name!r}")
                self._faults.append(Fault(name, retry_after))

    def reset(self) -> None:
        """Forget recorded requests, queued faults and counters; restore default behaviour."""
        with self._lock:
            self.requests.clear()
            self._faults.clear()
            self.behaviour = ServerBehaviour()
            self.max_in_flight = 0
            self.hold_timeouts = 0
            self.disconnects = 0

    def start(self) -> LLMServer:
        """Start the server thread and wait until it listens."""
        self._thread = threading.Thread(target=self._run, name="llm-server", daemon=True)
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("llm test server did not start")
        return self

    def stop(self) -> None:
        """Stop the server and join its thread."""
        if self._loop is not None and self._stop_event is not None:
            self._loop.call_soon_threadsafe(self._stop_event.set)
        if self._thread is not None:
            self._thread.join(10)

    def __enter__(self) -> LLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- server thread ----------------------------------------------------------
    def _run(self) -> None:
        asyncio.run(self._main())

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop_event = asyncio.Event()
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        self._ready.set()
        await self._stop_event.wait()
        self._server.close()
        for task in [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]:
            task.cancel()
        await self._server.wait_closed()

    def _next_fault(self) -> Fault | None:
        with self._lock:
            return self._faults.popleft() if self._faults else None

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                keep_open = await self._handle_one(reader, writer)
                if not keep_open:
                    break
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    async def _handle_one(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        request_line = await reader.readline()
        if not request_line:
            return False
        method, path, _ = request_line.decode("latin-1").split(" ", 2)
        headers: dict[str, str] = {}
        while True:
            line = await reader.readline()
            if line in (b"\r\n", b"\n", b""):
                break
            name, _, value = line.decode("latin-1").partition(":")
            headers[name.strip().lower()] = value.strip()
        length = int(headers.get("content-length", "0"))
        raw = await reader.readexactly(length) if length else b""
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            body = {}
        record = RecordedRequest(path, headers, body, time.monotonic())
        with self._lock:
            self.requests.append(record)
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            return await self._respond(record, reader, writer, method)
        except _ClientGone:
            self.disconnects += 1
            return False
        except ConnectionError:
            self.disconnects += 1
            raise
        finally:
            self.in_flight -= 1
            record.finished = time.monotonic()

    async def _pause(self, reader: asyncio.StreamReader, seconds: float) -> None:
        """Sleep ``seconds``, raising ``_ClientGone`` as soon as the client closes."""
        if seconds <= 0:
            return
        try:
            data = await asyncio.wait_for(reader.read(1), seconds)
        except TimeoutError:
            return
        if not data:
            raise _ClientGone

    async def _hold(self, reader: asyncio.StreamReader, behaviour: ServerBehaviour) -> None:
        """Wait until ``behaviour.hold_until_in_flight`` requests were in flight at once."""
        deadline = time.monotonic() + behaviour.hold_seconds
        while self.max_in_flight < behaviour.hold_until_in_flight:
            if time.monotonic() >= deadline:
                self.hold_timeouts += 1
                return
            await self._pause(reader, 0.01)

    async def _respond(
        self,
        record: RecordedRequest,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        method: str,
    ) -> bool:
        anthropic = record.path.rstrip("/").endswith("/messages")
        if method != "POST" or not (anthropic or record.path.endswith("/chat/completions")):
            await self._send_json(writer, 404, {"error": {"message": "no such route"}})
            return False
        fault = self._next_fault()
        behaviour = self.behaviour
        if behaviour.reject_max_tokens and not anthropic and "max_tokens" in record.body:
            record.fault = "max_tokens"
            await self._send_json(
                writer,
                400,
                {
                    "error": {
                        "message": "Unsupported parameter: 'max_tokens' is not supported with this "
                        "model. Use 'max_completion_tokens' instead.",
                        "type": "invalid_request_error",
                        "param": "max_tokens",
                        "code": "unsupported_parameter",
                    }
                },
            )
            return False
        if fault is None and behaviour.overflow_over_chars is not None:
            if len(record.prompt) > behaviour.overflow_over_chars:
                fault = Fault("overflow")
        record.fault = fault.name if fault else None
        await self._hold(reader, behaviour)
        await self._pause(reader, behaviour.latency)
        if fault is not None and fault.name in ("429", "500", "401", "404", "400", "overflow"):
            await self._send_fault(writer, fault, anthropic, record)
            return False
        if fault is not None and fault.name == "hang":
            # Accept the request, then say nothing: the client must time out or cancel.
            await self._pause(reader, behaviour.hang_seconds)
            return False
        text = behaviour.reply(record)
        chunks = [
            text[i : i + behaviour.chunk_chars] for i in range(0, len(text), behaviour.chunk_chars)
        ] or [""]
        writer.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
            b"cache-control: no-cache\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n"
        )
        await writer.drain()
        model = str(record.body.get("model", "test-model"))
        if anthropic:
            await self._send_event(
                writer,
                "message_start",
                {
                    "type": "message_start",
                    "message": {
                        "id": "msg_test",
                        "type": "message",
                        "role": "assistant",
                        "model": model,
                        "content": [],
                        "stop_reason": None,
                        "usage": {"input_tokens": len(record.prompt) // 4, "output_tokens": 1},
                    },
                },
            )
            await self._send_event(
                writer,
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": 0,
                    "content_block": {"type": "text", "text": ""},
                },
            )
            await self._send_event(writer, "ping", {"type": "ping"})
        while behaviour.endless:
            for chunk in chunks:
                await self._send_event(
                    writer,
                    None,
                    {
                        "id": "chatcmpl-test",
                        "object": "chat.completion.chunk",
                        "model": model,
                        "choices": [
                            {"index": 0, "delta": {"content": chunk}, "finish_reason": None}
                        ],
                    },
                )
            # Raises _ClientGone once the client has hung up.
            await self._pause(reader, max(behaviour.chunk_delay, 0.001))
        for number, chunk in enumerate(chunks):
            if fault is not None and fault.name == "stall" and number == max(1, len(chunks) // 2):
                # Stop sending halfway, keep the connection open: the client must time out.
                await self._pause(reader, behaviour.hang_seconds)
                return False
            if fault is not None and fault.name == "drop" and number == max(1, len(chunks) // 2):
                # Break the connection mid-body: no terminating chunk.
                writer.transport.abort()
                return False
            if fault is not None and fault.name == "malformed" and number == 1:
                await self._send_raw_event(
                    writer, "content_block_delta" if anthropic else None, "{not json"
                )
            if anthropic:
                await self._send_event(
                    writer,
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": 0,
                        "delta": {"type": "text_delta", "text": chunk},
                    },
                )
            else:
                await self._send_event(
                    writer,
                    None,
                    {
                        "id": "chatcmpl-test",
                        "object": "chat.completion.chunk",
                        "model": model,
                        "choices": [
                            {"index": 0, "delta": {"content": chunk}, "finish_reason": None}
                        ],
                    },
                )
            await self._pause(reader, behaviour.chunk_delay)
        if anthropic:
            await self._send_event(
                writer, "content_block_stop", {"type": "content_block_stop", "index": 0}
            )
            await self._send_event(
                writer,
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": "end_turn"},
                    "usage": {"output_tokens": len(text) // 4},
                },
            )
            await self._send_event(writer, "message_stop", {"type": "message_stop"})
        else:
            await self._send_event(
                writer,
                None,
                {
                    "id": "chatcmpl-test",
                    "object": "chat.completion.chunk",
                    "model": model,
                    "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
                },
            )
            await self._send_raw_event(writer, None, "[DONE]")
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        return False

    async def _send_fault(
        self, writer: asyncio.StreamWriter, fault: Fault, anthropic: bool, record: RecordedRequest
    ) -> None:
        status = {"429": 429, "500": 500, "401": 401, "404": 404, "400": 400, "overflow": 400}[
            fault.name
        ]
        if fault.name == "overflow":
            message = (
                f"prompt is too long: {len(record.prompt) // 4} tokens > 1000 maximum"
                if anthropic
                else "This model's maximum context length is 1000 tokens. However, your "
                f"messages resulted in {len(record.prompt) // 4} tokens."
            )
            code = "invalid_request_error" if anthropic else "context_length_exceeded"
        else:
            message = {
                "429": "Rate limit reached, slow down",
                "500": "internal error",
                # Echo the key back, as some real servers do: the client must redact it.
                "401": "Incorrect API key provided: "
                + (record.headers.get("x-api-key") or record.headers.get("authorization", "")),
                "404": f"The model `{record.body.get('model')}` does not exist",
                "400": "bad request: max_tokens must be positive",
            }[fault.name]
            code = {
                "429": "rate_limit_exceeded",
                "401": "invalid_api_key",
                "404": "model_not_found",
                "500": "server_error",
                "400": "invalid_request_error",
            }[fault.name]
        if self.behaviour.error_message is not None:
            message = self.behaviour.error_message
        if anthropic:
            payload = {"type": "error", "error": {"type": code, "message": message}}
        else:
            payload = {"error": {"message": message, "type": code, "code": code}}
        extra = {"retry-after": fault.retry_after} if fault.retry_after is not None else {}
        await self._send_json(writer, status, payload, extra)

    async def _send_json(
        self,
        writer: asyncio.StreamWriter,
        status: int,
        payload: dict[str, Any],
        extra_headers: dict[str, str] | None = None,
    ) -> None:
        data = json.dumps(payload).encode()
        lines = [
            f"HTTP/1.1 {status} X",
            "content-type: application/json",
            f"content-length: {len(data)}",
            "connection: close",
        ]
        lines += [f"{k}: {v}" for k, v in (extra_headers or {}).items()]
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode() + data)
        await writer.drain()

    async def _send_event(
        self, writer: asyncio.StreamWriter, event: str | None, payload: dict[str, Any]
    ) -> None:
        await self._send_raw_event(writer, event, json.dumps(payload))

    async def _send_raw_event(
        self, writer: asyncio.StreamWriter, event: str | None, data: str
    ) -> None:
        frame = (f"event: {event}\n" if event else "") + f"data: {data}\n\n"
        encoded = frame.encode()
        writer.write(f"{len(encoded):x}\r\n".encode() + encoded + b"\r\n")
        await writer.drain()
