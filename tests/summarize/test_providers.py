"""Streaming providers against the loopback server: protocols, retries, errors, no key leaks."""

from __future__ import annotations

import logging
import time

import httpx
import pytest

from tests.support.llm_server import LLMServer
from tui_compactor.config import Profile
from tui_compactor.summarize.base import SummaryRequest
from tui_compactor.summarize.errors import (
    AuthError,
    ContextOverflow,
    MalformedStream,
    ModelNotFound,
    ProviderTimeout,
    RateLimited,
    ServerError,
    StreamDropped,
    SummarizeError,
)
from tui_compactor.summarize.providers import make_summarizer

PROVIDERS = ["openai", "anthropic"]
REQUEST = SummaryRequest(
    kind="summary",
    system="SYSTEM TEXT",
    prompt="<conversation>\nhello\n</conversation>\n\nINSTRUCTIONS",
    max_tokens=321,
)


def summarizer_for(server: LLMServer, provider: str, **profile: object):
    base = server.openai_base_url if provider == "openai" else server.anthropic_base_url
    settings = {
        "provider": provider,
        "base_url": base,
        "model": "test-model",
        "timeout": 5.0,
        **profile,
    }
    return make_summarizer(Profile(**settings), retry_base_delay=0.01)  # type: ignore[arg-type]


@pytest.mark.asyncio
@pytest.mark.parametrize("provider", PROVIDERS)
async def test_streams_in_pieces_and_sends_the_request(
    llm_server: LLMServer, fake_key: str, provider: str
) -> None:
    llm_server.behaviour.chunk_chars = 8
    summarizer = summarizer_for(llm_server, provider)
    pieces = [piece async for piece in summarizer.stream(REQUEST)]
    assert len(pieces) > 3
    assert "".join(pieces).startswith("## Goal\nsummary reply")
    (recorded,) = llm_server.requests
    assert recorded.body["stream"] is True
    assert recorded.body["max_tokens"] == 321
    assert recorded.body["model"] == "test-model"
    assert recorded.system == "SYSTEM TEXT"
    assert recorded.prompt == REQUEST.prompt
    if provider == "anthropic":
        assert recorded.path == "/v1/messages"
        assert recorded.headers["x-api-key"] == fake_key
        assert recorded.headers["anthropic-version"] == "2023-06-01"
    else:
        assert recorded.path == "/v1/chat/completions"
        assert recorded.headers["authorization"] == f"Bearer {fake_key}"


@pytest.mark.asyncio
async def test_max_output_tokens_caps_the_budget(llm_server: LLMServer) -> None:
    summarizer = summarizer_for(llm_server, "openai", max_output_tokens=100)
    await summarizer.complete(REQUEST)
    assert llm_server.requests[0].body["max_tokens"] == 100


@pytest.mark.asyncio
@pytest.mark.parametrize("provider", PROVIDERS)
async def test_retry_honours_retry_after(
    llm_server: LLMServer, fake_key: str, provider: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    llm_server.add_faults("429", retry_after="1")
    summarizer = summarizer_for(llm_server, provider)
    started = time.monotonic()
    text = await summarizer.complete(REQUEST)
    elapsed = time.monotonic() - started
    assert text.startswith("## Goal")
    assert [r.fault for r in llm_server.requests] == ["429", None]
    gap = llm_server.requests[1].started - llm_server.requests[0].started
    assert gap >= 0.95 and elapsed >= 0.95
    assert "retry 1/3 in 1.00s" in caplog.text and fake_key not in caplog.text


@pytest.mark.asyncio
async def test_5xx_retried_then_reported(llm_server: LLMServer) -> None:
    llm_server.add_faults("500", "500")
    summarizer = summarizer_for(llm_server, "openai", max_retries=3)
    assert (await summarizer.complete(REQUEST)).startswith("## Goal")
    assert len(llm_server.requests) == 3
    llm_server.reset()
    llm_server.add_faults("500", "500", "500")
    with pytest.raises(ServerError, match="HTTP 500"):
        await summarizer_for(llm_server, "openai", max_retries=2).complete(REQUEST)
    assert len(llm_server.requests) == 3
    llm_server.reset()
    llm_server.add_faults("429", "429")
    with pytest.raises(RateLimited):
        await summarizer_for(llm_server, "anthropic", max_retries=1).complete(REQUEST)


@pytest.mark.asyncio
@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize(
    ("fault", "error", "words"),
    [
        ("401", AuthError, "authentication failed"),
        ("404", ModelNotFound, "'test-model'"),
        ("overflow", ContextOverflow, "context window"),
        ("malformed", MalformedStream, "malformed"),
        ("drop", StreamDropped, "interrupted"),
    ],
)
async def test_clear_errors(
    llm_server: LLMServer,
    fake_key: str,
    provider: str,
    fault: str,
    error: type[SummarizeError],
    words: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    llm_server.add_faults(fault)
    with pytest.raises(error) as caught:
        await summarizer_for(llm_server, provider).complete(REQUEST)
    message = str(caught.value)
    assert words in message
    assert len(message) < 400
    assert len(llm_server.requests) == 1  # none of these is retried
    assert fake_key not in message and fake_key not in repr(caught.value)
    assert fake_key not in caplog.text


@pytest.mark.asyncio
async def test_missing_key_is_named(llm_server: LLMServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    llm_server.add_faults("401")
    with pytest.raises(AuthError, match="OPENAI_API_KEY is not set"):
        await summarizer_for(llm_server, "openai").complete(REQUEST)


@pytest.mark.asyncio
async def test_hang_times_out(llm_server: LLMServer) -> None:
    llm_server.add_faults("hang", "hang")
    summarizer = summarizer_for(llm_server, "openai", timeout=0.3, max_retries=1)
    with pytest.raises(ProviderTimeout, match="within 0.3s"):
        await summarizer.complete(REQUEST)
    assert len(llm_server.requests) == 2  # a timeout is retried


@pytest.mark.asyncio
async def test_connection_refused_is_short_and_retried() -> None:
    with LLMServer() as server:
        port = server.port
    summarizer = make_summarizer(
        Profile(
            provider="openai", base_url=f"http://127.0.0.1:{port}/v1", model="m", max_retries=1
        ),
        retry_base_delay=0.01,
    )
    with pytest.raises(SummarizeError, match="connection to http://127.0.0.1"):
        await summarizer.complete(REQUEST)


@pytest.mark.asyncio
async def test_shared_client_is_reused(llm_server: LLMServer) -> None:
    from tui_compactor.summarize.providers import aclose_shared_clients, shared_client

    first = shared_client()
    await summarizer_for(llm_server, "openai").complete(REQUEST)
    assert shared_client() is first and isinstance(first, httpx.AsyncClient)
    await aclose_shared_clients()
    assert first.is_closed


@pytest.mark.asyncio
async def test_stall_mid_stream_is_a_dropped_stream_not_a_retry(llm_server: LLMServer) -> None:
    llm_server.behaviour.chunk_chars = 4
    llm_server.add_faults("stall")
    summarizer = summarizer_for(llm_server, "openai", timeout=0.3)
    pieces: list[str] = []
    with pytest.raises(StreamDropped, match="interrupted"):
        async for piece in summarizer.stream(REQUEST):
            pieces.append(piece)
    assert pieces  # text had arrived: retrying here would repeat it
    assert len(llm_server.requests) == 1


@pytest.mark.asyncio
async def test_text_arrives_while_the_reply_is_still_streaming(llm_server: LLMServer) -> None:
    llm_server.behaviour.chunk_chars = 4
    llm_server.behaviour.chunk_delay = 0.02  # the token rate: one chunk per 20 ms
    summarizer = summarizer_for(llm_server, "anthropic")
    arrivals: list[float] = []
    async for _ in summarizer.stream(REQUEST):
        arrivals.append(time.monotonic())
    assert len(arrivals) > 10
    # Pieces arrive spread over the reply, not all at once at the end.
    assert arrivals[-1] - arrivals[0] > 0.5 * 0.02 * (len(arrivals) - 1)


@pytest.mark.asyncio
async def test_credentials_in_the_base_url_stay_out_of_errors() -> None:
    with LLMServer() as server:
        port = server.port
    summarizer = make_summarizer(
        Profile(
            provider="openai",
            model="m",
            max_retries=0,
            base_url=f"http://user:hunter2pass@127.0.0.1:{port}/v1?api-key=querysecret",
        )
    )
    with pytest.raises(SummarizeError) as caught:
        await summarizer.complete(REQUEST)
    assert f"127.0.0.1:{port}/v1" in str(caught.value)
    assert "hunter2pass" not in str(caught.value) and "querysecret" not in str(caught.value)


@pytest.mark.asyncio
async def test_switches_to_max_completion_tokens_when_asked(llm_server: LLMServer) -> None:
    llm_server.behaviour.reject_max_tokens = True
    summarizer = summarizer_for(llm_server, "openai", max_retries=0)
    assert (await summarizer.complete(REQUEST)).startswith("## Goal")
    first, second = llm_server.requests
    assert first.fault == "max_tokens" and "max_tokens" in first.body
    assert second.body["max_completion_tokens"] == 321 and "max_tokens" not in second.body
    await summarizer.complete(REQUEST)  # remembered: no second rejection
    assert len(llm_server.requests) == 3


FIRST_STREAM_SCRIPT = """
import asyncio, json, sys, threading
sys.path.insert(0, {root!r})
from tests.support.llm_server import LLMServer
from tui_compactor.config import Profile
from tui_compactor.summarize.base import SummaryRequest
from tui_compactor.summarize.providers import aclose_shared_clients, make_summarizer

on_loop = []
watching = False

def hook(event, args):
    if watching and event == "import" and threading.current_thread() is threading.main_thread():
        on_loop.append(args[0])

sys.addaudithook(hook)
request = SummaryRequest(kind="summary", system="S", prompt="hello", max_tokens=50)
with LLMServer() as server:
    profile = Profile(provider={provider!r}, base_url=server.{base}, model="m", timeout=5.0)
    keys = {{"OPENAI_API_KEY": "k", "ANTHROPIC_API_KEY": "k"}}
    summarizer = make_summarizer(profile, environ=keys)

    async def first_summary():
        global watching
        watching = True
        text = "".join([piece async for piece in summarizer.stream(request)])
        watching = False
        await aclose_shared_clients()
        return text

    text = asyncio.run(first_summary())
print(json.dumps({{"text": text, "on_loop": on_loop}}))
"""


@pytest.mark.parametrize("provider", PROVIDERS)
def test_the_first_summary_imports_the_http_stack_off_the_event_loop(provider: str) -> None:
    """The first request of a fresh process (the app's first summary) imports httpcore, h11
    and anyio; that happens on the worker thread that encodes the body, not on the event loop
    (the app's UI, frozen meanwhile)."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    root = str(Path(__file__).resolve().parents[2])
    base = "openai_base_url" if provider == "openai" else "anthropic_base_url"
    script = FIRST_STREAM_SCRIPT.format(root=root, provider=provider, base=base)
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["text"].startswith("## Goal")
    stack = [
        name for name in result["on_loop"] if name.split(".")[0] in {"httpcore", "h11", "anyio"}
    ]
    assert stack == [], stack
