"""Running one summary part: events, folding over windows, overflow halving, restarts.

A *part* is one text the UI shows in its own pane: ``history``, ``turn_prefix``, ``short`` or
``branch``. Every part reports ``PartStarted`` (again for each fold window or restart: the pane
starts over), ``PartDelta`` pieces, then ``PartFinished`` or ``PartFailed``.

Folding (oh-my-pi's multi-window plan): with ``window`` the summarizer's context window,
``min_input = min(16384, max(1024, window // 8))`` and
``budget = max(min_input, floor(0.8 * window) - max_tokens - 16384)`` tokens of conversation per
request. A region over budget is split greedily on message boundaries; every window after the
first uses the update prompt with the running summary as ``<previous-summary>``. A split
turn's prefix folds the same way (its later windows merge into the running prefix summary), so
it is never cut to fit. A context-overflow error halves the window (``min(budget, sent) // 2``)
and re-plans it; below ``min_input`` the error is final.

A single message larger than a window is cut to fit: the history keeps its start (oh-my-pi's
rule); the turn prefix, a branch and a handoff keep their end, which is what the kept messages
and the next step depend on. Every cut is reported: in ``PartStarted.note`` (the stream panes)
and in the caller's ``notes`` list (the result's warnings and the JSON).
"""

from __future__ import annotations

import asyncio
import math
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from tui_compactor.summarize.base import PromptKind, Summarizer, SummaryRequest
from tui_compactor.summarize.errors import (
    ContextOverflow,
    ReplyTooLong,
    StreamDropped,
    SummarizeError,
    redact,
)
from tui_compactor.summarize.family import escape_harmony_tokens
from tui_compactor.summarize.prompts import (
    assemble_prompt,
    load_prompt,
    with_custom_instructions,
)
from tui_compactor.textsafe import sanitize, utf8_length, well_formed

__all__ = [
    "DEFAULT_SUMMARY_INPUT_WINDOW",
    "MAX_SUMMARY_TOKENS",
    "Event",
    "EventCallback",
    "Part",
    "PartDelta",
    "PartFailed",
    "PartFinished",
    "PartStarted",
    "SummaryWindow",
    "approx_tokens",
    "clamp_text",
    "fold_budget",
    "plan_windows",
    "run_part",
    "serialize_messages",
]

Part = Literal["history", "turn_prefix", "short", "branch"]
FOLDING_KINDS = ("summary", "turn_prefix")
"""Prompt kinds whose regions are split into windows instead of being cut."""
KEEP_END_KINDS = ("turn_prefix", "branch", "handoff")
"""Prompt kinds whose oversized text keeps its end (the newest part) when cut."""

MAX_SUMMARY_TOKENS = 16384
DEFAULT_SUMMARY_INPUT_WINDOW = 200_000
MIN_SUMMARY_INPUT_TOKENS = 16_384
REPLY_CAP_FACTOR = 4
"""A streamed reply longer than this many times its ``max_tokens`` is stopped (a server that
ignores ``max_tokens`` must not fill memory)."""
MIN_REPLY_CAP_TOKENS = 4096
MAX_STREAM_RESTARTS = 1
"""A part whose stream breaks after text arrived is started over this many times."""
STREAM_SLICE_S = 0.005
"""Longest stretch a stream's pieces are handled without giving the event loop a turn: pieces
that arrive together (a loop that was busy, a fast server) are handled in one go otherwise,
every delta drawn to its pane, while the screen waits."""


@dataclass(frozen=True, slots=True)
class PartStarted:
    """A part (or a new fold window / restart of it) began; the pane should start empty."""

    part: Part
    label: str
    window: int = 1
    windows: int = 1
    attempt: int = 1
    note: str | None = None
    """Something the user must know about this window, e.g. that its text was cut to fit."""


@dataclass(frozen=True, slots=True)
class PartDelta:
    """A piece of streamed text for ``part``."""

    part: Part
    text: str


@dataclass(frozen=True, slots=True)
class PartFinished:
    """``part`` is done; ``text`` is its whole output (after folding)."""

    part: Part
    text: str
    seconds: float
    requests: int = 1


@dataclass(frozen=True, slots=True)
class PartFailed:
    """``part`` failed (``error`` is short and user-facing) or was cancelled."""

    part: Part
    error: str
    cancelled: bool = False


Event = PartStarted | PartDelta | PartFinished | PartFailed
EventCallback = Callable[[Event], Any]


def approx_tokens(text: str) -> int:
    """oh-my-pi's approximate count: ceil(UTF-8 bytes / 4)."""
    return (utf8_length(text) + 3) // 4


def serialize_messages(messages: list[dict[str, Any]], *, drop_thinking: bool = False) -> str:
    """The transcript sent to the model (boundary tags escaped by the engine's serializer; lone
    surrogates replaced, so it can be encoded and sent)."""
    from tui_compactor.engine.serialize import serialize_native

    return well_formed(serialize_native(messages, drop_thinking=drop_thinking))


def fold_budget(context_window: int | None, max_tokens: int) -> tuple[int, int]:
    """(budget, min_input) in tokens of conversation per request for a summarizer window."""
    window = (
        context_window if context_window and context_window > 0 else (DEFAULT_SUMMARY_INPUT_WINDOW)
    )
    min_input = min(MIN_SUMMARY_INPUT_TOKENS, max(1024, window // 8))
    budget = max(min_input, math.floor(window * 0.8) - max_tokens - MAX_SUMMARY_TOKENS)
    return budget, min_input


def request_tokens(
    message: dict[str, Any],
    *,
    drop_thinking: bool = False,
    count: Callable[[str], int] = approx_tokens,
) -> int:
    """Tokens one message takes in a summary request (the unit folding packs into windows; one
    over the budget is a window alone and is cut to fit)."""
    return count(serialize_messages([message], drop_thinking=drop_thinking))


@dataclass(slots=True)
class SummaryWindow:
    """Messages summarized in one request, and the token budget they were planned for."""

    messages: list[dict[str, Any]]
    budget: int
    text: str | None = None


def plan_windows(
    messages: list[dict[str, Any]],
    budget: int,
    *,
    drop_thinking: bool = False,
    count: Callable[[str], int] = approx_tokens,
) -> list[SummaryWindow]:
    """Greedy split on message boundaries; a message over budget forms its own window."""
    windows: list[SummaryWindow] = []
    current: list[dict[str, Any]] = []
    used = 0
    for message in messages:
        tokens = request_tokens(message, drop_thinking=drop_thinking, count=count)
        if current and used + tokens > budget:
            windows.append(SummaryWindow(current, budget))
            current, used = [], 0
        current.append(message)
        used += tokens
    if current:
        windows.append(SummaryWindow(current, budget))
    return windows


def clamp_text(
    text: str,
    budget: int,
    count: Callable[[str], int] = approx_tokens,
    *,
    keep_end: bool = False,
) -> str:
    """Cut ``text`` that is over ``budget`` tokens, saying how much was cut.

    The start is kept (oh-my-pi's rule); ``keep_end`` keeps the end instead, for branch
    summaries whose newest messages matter most.
    """
    tokens = count(text)
    if tokens <= budget:
        return text
    keep = max(1024, math.floor(len(text) * budget * 0.95 / tokens))
    if keep >= len(text):
        return text
    if keep_end:
        return f"[... {len(text) - keep} earlier characters truncated]\n\n{text[-keep:]}"
    return f"{text[:keep]}\n\n[... {len(text) - keep} more characters truncated]"


async def _stream_request(
    summarizer: Summarizer,
    request: SummaryRequest,
    part: Part,
    emit: EventCallback,
    *,
    window: int,
    windows: int,
    note: str | None = None,
) -> str:
    """One request, streamed as events; restarted once if the stream breaks midway."""
    attempt = 1
    cap = reply_cap_bytes(request.max_tokens)
    while True:
        emit(PartStarted(part, summarizer.label, window, windows, attempt, note))
        pieces: list[str] = []
        received = 0
        slice_started = time.perf_counter()
        try:
            stream = summarizer.stream(request)
            try:
                async for piece in stream:
                    received += utf8_length(piece)
                    if received > cap:
                        raise ReplyTooLong(
                            f"{summarizer.label}: the reply passed {cap // 4} tokens, "
                            f"{REPLY_CAP_FACTOR}× its budget of {request.max_tokens} (the "
                            "server ignores max_tokens); stopped, nothing was written"
                        )
                    pieces.append(piece)
                    emit(PartDelta(part, piece))
                    if time.perf_counter() - slice_started > STREAM_SLICE_S:
                        await asyncio.sleep(0)  # the loop's other callbacks (the UI) run
                        slice_started = time.perf_counter()
            finally:
                # Close the response now (not when the generator is collected).
                close = getattr(stream, "aclose", None)
                if close is not None:
                    await close()
        except StreamDropped:
            if attempt > MAX_STREAM_RESTARTS:
                raise
            attempt += 1
            continue
        text = clean_summary("".join(pieces), summarizer.secrets())
        if not text:
            raise SummarizeError(f"{summarizer.label} returned an empty summary")
        return text


def reply_cap_bytes(max_tokens: int) -> int:
    """Most UTF-8 bytes one streamed reply may carry: ``REPLY_CAP_FACTOR`` times its token
    budget at 4 bytes a token (at least ``MIN_REPLY_CAP_TOKENS`` tokens)."""
    return max(MIN_REPLY_CAP_TOKENS, REPLY_CAP_FACTOR * max(0, max_tokens)) * 4


def clean_summary(text: str, secrets: list[str]) -> str:
    """A model's reply as it may be stored: no terminal escapes or controls (line breaks and
    tabs kept, ``\\r\\n`` read as a line break), no lone surrogates, no secret it echoed."""
    text = text.replace("\r\n", "\n")
    return redact(sanitize(text), secrets).strip()


async def run_part(
    summarizer: Summarizer,
    part: Part,
    messages: list[dict[str, Any]],
    *,
    kind: PromptKind,
    max_tokens: int,
    emit: EventCallback,
    previous_summary: str | None = None,
    instructions: str | None = None,
    replace_instructions: bool = False,
    extra_context: list[str] | None = None,
    fold: bool = True,
    drop_thinking: bool = False,
    count: Callable[[str], int] = approx_tokens,
    notes: list[str] | None = None,
    escape_harmony: bool = False,
) -> str:
    """Summarize ``messages`` as ``part`` and return the text; see the module doc for folding.

    ``kind`` is ``summary`` (becoming ``update`` when a summary is carried), ``turn_prefix``,
    ``short``, ``branch`` or ``handoff``. ``summary`` and ``turn_prefix`` fold; the others are
    one window, clamped to the budget and, on overflow, retried at half the size. Every cut
    is appended to ``notes``. ``escape_harmony`` escapes Harmony control tokens in the
    transcript (gpt-oss-style summarizers). Emits ``PartFinished`` on success; the caller
    emits ``PartFailed``.
    """
    started = time.monotonic()
    system = load_prompt("system")
    budget, min_input = fold_budget(summarizer.context_window, max_tokens)

    def serialize(part_messages: list[dict[str, Any]]) -> str:
        text = serialize_messages(part_messages, drop_thinking=drop_thinking)
        return escape_harmony_tokens(text) if escape_harmony else text

    def first_windows() -> deque[SummaryWindow]:
        whole = serialize(messages)
        if count(whole) <= budget or not fold or kind not in FOLDING_KINDS:
            return deque([SummaryWindow(messages, budget, whole)])
        return deque(plan_windows(messages, budget, drop_thinking=drop_thinking, count=count))

    # Serializing a long region (and sizing its messages to fold it) takes tens of ms of CPU:
    # done on a worker thread, so the caller's event loop (the app's UI) keeps running.
    queue = await asyncio.to_thread(first_windows)

    def window_text(window: SummaryWindow) -> tuple[int, str]:
        """The window's transcript length, and the transcript cut to its budget (counting
        tokens costs as much as serializing: on the worker thread too)."""
        text = window.text if window.text is not None else serialize(window.messages)
        return len(text), clamp_text(text, window.budget, count, keep_end=kind in KEEP_END_KINDS)

    carried = previous_summary
    done_windows = 0
    requests = 0
    while queue:
        window = queue.popleft()
        full_length, text = await asyncio.to_thread(window_text, window)
        note = None
        if len(text) < full_length:
            kept = "end" if kind in KEEP_END_KINDS else "start"
            note = (
                f"{part}: {full_length:,} characters are over the summarizer's "
                f"{window.budget:,}-token budget for one request; only the {kept} was sent"
            )
            if notes is not None:
                notes.append(note)
        window_kind: PromptKind = kind
        if kind == "summary":
            window_kind = "update" if carried is not None else "summary"
            default = load_prompt("update-summary" if carried is not None else "compaction-summary")
            prompt_instructions = with_custom_instructions(
                default, instructions, replace=replace_instructions
            )
            prompt = assemble_prompt(
                text, prompt_instructions, previous_summary=carried, extra_context=extra_context
            )
        elif kind == "turn_prefix":
            if carried is None:
                prompt = assemble_prompt(text, load_prompt("turn-prefix"))
            else:
                prompt = assemble_prompt(
                    text,
                    load_prompt("turn-prefix") + "\n\n" + load_prompt("turn-prefix-update"),
                    previous_summary=carried,
                )
        elif kind == "short":
            prompt = assemble_prompt(
                text, load_prompt("short-summary"), previous_summary=previous_summary
            )
        elif kind == "handoff":
            prompt = assemble_prompt(
                text,
                with_custom_instructions(
                    load_prompt("handoff"), instructions, replace=replace_instructions
                ),
            )
        else:  # branch
            prompt = assemble_prompt(
                text,
                with_custom_instructions(
                    load_prompt("branch-summary"), instructions, replace=replace_instructions
                ),
            )
        request = SummaryRequest(
            kind=window_kind,
            system=system,
            prompt=prompt,
            max_tokens=max_tokens,
            messages=window.messages,
            previous_summary=carried if kind in FOLDING_KINDS else previous_summary,
            focus=instructions if kind != "short" else None,
        )
        requests += 1
        try:
            result = await _stream_request(
                summarizer,
                request,
                part,
                emit,
                window=done_windows + 1,
                windows=done_windows + 1 + len(queue),
                note=note,
            )
        except ContextOverflow:
            sent = count(text)
            halved = min(window.budget, sent) // 2
            if halved < min_input:
                raise
            if kind not in FOLDING_KINDS:
                # One window only: retry it cut to half the size.
                queue.appendleft(SummaryWindow(window.messages, halved))
                continue
            replanned = await asyncio.to_thread(
                plan_windows, window.messages, halved, drop_thinking=drop_thinking, count=count
            )
            # A single message over the halved budget gets clamped to it on the next try.
            for replacement in reversed(replanned):
                queue.appendleft(replacement)
            continue
        done_windows += 1
        carried = result
    emit(PartFinished(part, carried or "", time.monotonic() - started, requests))
    return carried or ""
