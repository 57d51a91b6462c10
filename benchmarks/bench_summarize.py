"""Summaries: concurrent vs sequential compaction against the loopback server, offline speed.

Cases:

* ``split-turn concurrent (L=...)``: a real ``CompactionJob`` on a split-turn plan, every
  request answered after latency L by the loopback OpenAI-compatible server. History and turn
  prefix run at the same time, then the short summary: expected ≈ 2L.
* ``split-turn sequential (L=...)``: the same job with the summarizer forced to one request at a
  time (an ``asyncio.Lock`` around ``stream``): expected ≈ 3L. ``ratio`` on the concurrent row
  is concurrent / sequential.
* ``offline compaction``: the extractive summarizer on the bundled 2.4 MB refactor session.
* ``stream 4000 SSE events``: one streamed reply of 4000 events with no latency (server and
  client together: the per-event cost of a long stream).
"""

from __future__ import annotations

import asyncio
import shutil
import statistics
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from tests.summarize.helpers import plan_for, split_turn_session
from tests.support.llm_server import LLMServer
from tui_compactor.config import Profile
from tui_compactor.summarize.base import Summarizer, SummaryRequest
from tui_compactor.summarize.compaction import CompactionJob
from tui_compactor.summarize.providers import aclose_shared_clients, make_summarizer


class _OneAtATime(Summarizer):
    """Wraps a summarizer so that only one request is in flight (the sequential baseline)."""

    def __init__(self, inner: Summarizer) -> None:
        self.inner = inner
        self.label = inner.label
        self.context_window = inner.context_window
        self.offline = inner.offline
        self._lock = asyncio.Lock()

    async def stream(self, request: SummaryRequest) -> AsyncIterator[str]:  # type: ignore[override]
        async with self._lock:
            async for piece in self.inner.stream(request):
                yield piece


def _compact_once(path: Path, base_url: str, sequential: bool) -> dict[str, float]:
    async def go() -> dict[str, float]:
        session, plan, settings = plan_for(path, keep_recent=1500)
        summarizer: Summarizer = make_summarizer(
            Profile(provider="openai", base_url=base_url, model="bench", timeout=30)
        )
        if sequential:
            summarizer = _OneAtATime(summarizer)
        try:
            result = await CompactionJob(plan, session, summarizer, settings).run()
        finally:
            await aclose_shared_clients()
        return result.seconds

    return asyncio.run(go())


def run(ctx: Any) -> list[dict[str, Any]]:
    """Rows for the benchmark table."""
    rows: list[dict[str, Any]] = []
    latency = 0.25 if ctx.quick else 0.5
    runs = 3 if ctx.quick else 5
    with tempfile.TemporaryDirectory() as scratch, LLMServer() as server:
        work = Path(scratch)
        path = split_turn_session(work / "split.jsonl")
        server.behaviour.latency = latency
        # The job's own wall time (``seconds["total"]``): summaries only, not load and plan.
        concurrent_runs = [
            _compact_once(path, server.openai_base_url, False)["total"] for _ in range(runs)
        ]
        sequential_runs = [
            _compact_once(path, server.openai_base_url, True)["total"] for _ in range(runs)
        ]
        concurrent_s = statistics.median(concurrent_runs)
        sequential_s = statistics.median(sequential_runs)
        rows.append(
            {
                "bench": "summarize",
                "case": f"split-turn concurrent (L={latency}s)",
                "median_s": concurrent_s,
                "ratio": concurrent_s / sequential_s,
                "target": f"≈ L + short = {2 * latency:.2f}s",
                "notes": "history ∥ turn prefix, then short; ratio = concurrent / sequential",
            }
        )
        rows.append(
            {
                "bench": "summarize",
                "case": f"split-turn sequential (L={latency}s)",
                "median_s": sequential_s,
                "target": f"≈ 2L + short = {3 * latency:.2f}s",
                "notes": "same job, one request at a time",
            }
        )

        server.behaviour.latency = 0.0
        server.behaviour.chunk_chars = 1
        server.behaviour.reply = lambda request: "abcd" * 1000

        def stream_once() -> None:
            async def go() -> None:
                summarizer = make_summarizer(
                    Profile(provider="openai", base_url=server.openai_base_url, model="b")
                )
                request = SummaryRequest(kind="summary", system="s", prompt="p", max_tokens=10)
                try:
                    text = await summarizer.complete(request)
                finally:
                    await aclose_shared_clients()
                assert len(text) == 4000

            asyncio.run(go())

        parse_s, _ = ctx.time(stream_once, runs=runs)
        rows.append(
            {
                "bench": "summarize",
                "case": "stream 4000 SSE events",
                "median_s": parse_s,
                "notes": "one event per character, no latency; loopback server included",
            }
        )

        sample = ctx.root / "tests" / "fixtures" / "sessions" / "refactor-session-v3.jsonl"
        copy = work / "refactor.jsonl"
        shutil.copy(sample, copy)

        def offline_once() -> None:
            async def go() -> None:
                session, plan, settings = plan_for(copy, keep_recent=20000)
                await CompactionJob(plan, session, make_summarizer(None), settings).run()

            asyncio.run(go())

        offline_s, _ = ctx.time(offline_once, runs=runs)
        rows.append(
            {
                "bench": "summarize",
                "case": "offline compaction (2.4 MB session)",
                "median_s": offline_s,
                "notes": "load + plan + extractive summaries + audit",
            }
        )
    return rows
