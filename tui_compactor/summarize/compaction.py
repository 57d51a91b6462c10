"""Compaction: from an engine ``CompactionPlan`` to summaries and a ``compaction`` entry.

``CompactionJob.run`` generates the history summary and the turn-prefix summary **at the same
time** (two asyncio tasks), merges them, then generates the short summary on the kept messages
with the new summary as ``<previous-summary>``. Budgets (``reserve`` = the raw setting or
16384): history ``min(floor(0.8 * reserve), 16384)``, turn prefix
``min(floor(0.5 * reserve), 16384)``, short ``min(512, floor(0.2 * reserve))``.

Which summaries are made (oh-my-pi's ``compact``):

* split turn with a non-empty prefix: history (or ``"No prior history."`` when there is neither
  history nor a previous summary) and prefix concurrently, merged as
  ``history + "\\n\\n---\\n\\n**Turn Context (split turn):**\\n\\n" + prefix``;
* else history when there are messages to summarize;
* else the previous summary unchanged; else ``"No prior history."``.

Every part runs through ``pipeline.SummaryPipeline`` (the one pipeline the branch summary
uses too: events, transcript rules, part failures, boundary-tag escaping). Then the file list
(``<files>`` or pi's legacy tags), the fidelity audit and the entry dict. Nothing is written
here (the front-ends propose and apply the entry through ``workbench.actions``); ``cancel()``
stops every request.

Methods (the entry's ``method``):

* ``soft``: the summaries above (``method`` written under oh-my-pi's rules only; pi writes
  none). ``preserveData`` is carried on from the previous compaction
  the plan continues from (oh-my-pi's rule: without provider-native payloads and without a
  snapcompact archive, whose source text is merged into the previous summary instead).
* ``handoff``: the summarizer reads the whole context at the leaf (what the agent's model
  sees) and writes a handoff document for its successor (``prompts/handoff.md``, custom
  instructions appended or replacing it). oh-my-pi commits it with the plan's
  ``firstKeptEntryId`` and ``tokensBefore``, the ``<files>`` block appended, no
  ``shortSummary`` and no ``preserveData``.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Coroutine
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from tui_compactor.engine.methods import (
    PRODUCIBLE_METHODS,
    archive_source_text,
    carried_preserve_data,
    method_info,
    snapcompact_archive,
)
from tui_compactor.summarize.audit import Audit, audit_summary
from tui_compactor.summarize.base import Summarizer
from tui_compactor.summarize.errors import SummarizeError
from tui_compactor.summarize.pipeline import SummaryPipeline, with_file_list
from tui_compactor.summarize.prompts import load_prompt
from tui_compactor.summarize.runner import (
    MAX_SUMMARY_TOKENS,
    Event,
    EventCallback,
    PartDelta,
    PartFailed,
    PartFinished,
    PartStarted,
    approx_tokens,
)

__all__ = [
    "DEFAULT_RESERVE_TOKENS",
    "fold_notes",
    "NO_PRIOR_HISTORY",
    "SPLIT_TURN_SEPARATOR",
    "CompactionCancelled",
    "CompactionJob",
    "CompactionResult",
    "Event",
    "PartDelta",
    "PartFailed",
    "PartFinished",
    "PartStarted",
    "compaction_budgets",
]

DEFAULT_RESERVE_TOKENS = 16384
NO_PRIOR_HISTORY = "No prior history."
SPLIT_TURN_SEPARATOR = "\n\n---\n\n**Turn Context (split turn):**\n\n"


class CompactionCancelled(SummarizeError):
    """The job was cancelled; nothing was written."""


def compaction_budgets(reserve_tokens: int | None) -> dict[str, int]:
    """``max_tokens`` per part for a raw reserve setting (None -> 16384)."""
    reserve = DEFAULT_RESERVE_TOKENS if reserve_tokens is None else reserve_tokens
    return {
        "history": min(math.floor(0.8 * reserve), MAX_SUMMARY_TOKENS),
        "turn_prefix": min(math.floor(0.5 * reserve), MAX_SUMMARY_TOKENS),
        "short": min(512, math.floor(0.2 * reserve)),
    }


def fold_notes(plan: Any, summarizer_window: int | None, reserve_tokens: int | None) -> list[str]:
    """What the plan tells the user before running: regions larger than the summarizer reads in
    one request are folded over several (never cut). Token figures are the plan's counter, so
    the request count is an estimate."""
    if not getattr(plan, "prepared", False) or not summarizer_window:
        return []
    from tui_compactor.summarize.runner import fold_budget

    budgets = compaction_budgets(reserve_tokens)
    regions = plan.region_tokens
    notes: list[str] = []
    for key, part, name in (
        ("summarize", "history", "history"),
        ("turn_prefix", "turn_prefix", "turn prefix"),
    ):
        tokens = regions.get(key, 0)
        budget, _ = fold_budget(summarizer_window, budgets[part])
        oversized = _oversized_prefix(plan, budget) if part == "turn_prefix" else 0
        if tokens > budget:
            requests = math.ceil(tokens / budget)
            notes.append(
                f"{name}: ~{tokens:,} tokens is more than the summarizer reads at once "
                f"({budget:,}); it is summarized in about {requests} requests, each updating "
                "the last" + ("" if oversized else " (nothing is cut)")
            )
        if oversized:
            notes.append(
                f"turn prefix: {oversized} message(s) alone are over one request "
                f"({budget:,} tokens): only the end of each is sent (the part the kept "
                "messages follow); a summarizer with a larger window sends them whole"
            )
    return notes


def _oversized_prefix(plan: Any, budget: int) -> int:
    """How many turn-prefix messages the runner will cut to fit one request (its own count,
    ``runner.request_tokens``). Only looked at when the prefix may exceed the budget at all."""
    from tui_compactor.summarize.runner import request_tokens

    if plan.region_tokens.get("turn_prefix", 0) * 2 <= budget:
        return 0
    return sum(1 for item in plan.turn_prefix_messages if request_tokens(item.message) > budget)


@dataclass
class CompactionResult:
    """What a compaction run produced. Nothing has been written yet."""

    summary: str
    """The text to write: merged summary plus the file list."""
    short_summary: str
    history_summary: str | None
    turn_prefix_summary: str | None
    audit: Audit
    entry: dict[str, Any]
    """The ``compaction`` record for the writer (no id/parentId/timestamp yet)."""
    label: str
    """``offline`` or ``provider:model``."""
    offline: bool
    read_files: list[str] = field(default_factory=list)
    modified_files: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)
    """Wall time per part and ``total``."""
    instructions: str | None = None
    method: str = "soft"
    """The entry's ``method``: ``soft`` or ``handoff`` (no short summary)."""


class CompactionJob:
    """One compaction from a plan. Async; reports progress through an event callback.

    Args:
        plan: a prepared engine ``CompactionPlan``.
        session: the loaded session the plan came from.
        summarizer: from ``make_summarizer``.
        settings: the engine ``CompactionSettings`` (its raw ``reserve_tokens`` sets budgets).
        instructions: custom instructions for the history summary.
        replace_instructions: replace the default prompt instead of appending ``Additional
            focus``.
        files_format: ``files`` (``<files>`` block) or ``legacy`` (pi's tags).
        method: ``soft`` (summaries) or ``handoff`` (a handoff document).
    """

    def __init__(
        self,
        plan: Any,
        session: Any,
        summarizer: Summarizer,
        settings: Any = None,
        *,
        instructions: str | None = None,
        replace_instructions: bool = False,
        files_format: Literal["files", "legacy"] = "files",
        extra_context: list[str] | None = None,
        method: Literal["soft", "handoff"] = "soft",
    ) -> None:
        if method not in PRODUCIBLE_METHODS:
            raise ValueError(f"cannot write a {method!r} compaction: {method_info(method).note}")
        if not getattr(plan, "prepared", False):
            reason = getattr(plan, "reason", None) or "the plan is not prepared"
            raise ValueError(f"cannot compact: {reason}")
        self.plan = plan
        self.session = session
        self.summarizer = summarizer
        self.settings = settings
        self.instructions = instructions
        self.replace_instructions = replace_instructions
        self.files_format = files_format
        self.extra_context = extra_context
        self.method = method
        reserve = getattr(settings, "reserve_tokens", None) if settings is not None else None
        self.budgets = compaction_budgets(reserve)
        self.rules = getattr(plan, "rules", None) or getattr(settings, "rules", "pi") or "pi"
        self._tasks: set[asyncio.Task[Any]] = set()
        self._main: asyncio.Task[Any] | None = None
        self._cancel_requested = False
        self.result: CompactionResult | None = None

    # -- control ---------------------------------------------------------------------------
    def cancel(self) -> None:
        """Stop every in-flight request of this job; ``run`` raises ``CompactionCancelled``."""
        self._cancel_requested = True
        # Cancel only the top task: it cancels its children exactly once. A second cancel
        # arriving while httpx closes a connection would interrupt that close and leave the
        # request running on the server.
        if self._main is not None and not self._main.done():
            self._main.cancel()

    @property
    def cancelled(self) -> bool:
        """Whether ``cancel()`` was called."""
        return self._cancel_requested

    def _spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    # -- running ---------------------------------------------------------------------------
    async def run(self, on_event: EventCallback | None = None) -> CompactionResult:
        """Generate every summary; returns the result (nothing is written).

        Raises:
            CompactionCancelled: ``cancel()`` was called.
            SummarizeError: a part failed (its ``PartFailed`` event was sent first).
        """
        pipeline = SummaryPipeline(self.summarizer, on_event)
        self._cancel_requested = False
        self.result = None
        main = self._main = self._spawn(self._run(pipeline))
        try:
            result: CompactionResult = await main
        except asyncio.CancelledError:
            if self._cancel_requested:
                raise CompactionCancelled("compaction cancelled; nothing was written") from None
            raise
        finally:
            for task in list(self._tasks):
                if not task.done():
                    task.cancel()
        self.result = result
        return result

    async def regenerate(
        self, on_event: EventCallback | None = None, focus: str | None = None
    ) -> CompactionResult:
        """Run again with the audit's missing anchors (or ``focus``) added to the instructions."""
        if focus is None and self.result is not None:
            focus = self.result.audit.focus_instructions()
        base = self.instructions
        if focus:
            self.instructions = f"{base}\n\n{focus}" if base else focus
        try:
            return await self.run(on_event)
        finally:
            self.instructions = base

    def _inputs(
        self,
    ) -> tuple[
        list[dict[str, Any]],
        list[dict[str, Any]],
        list[dict[str, Any]],
        dict[str, Any] | None,
        str | None,
    ]:
        """The messages to summarize, of the turn prefix and kept; the previous compaction's
        record and summary. The plan's file operations are made too (from the same messages)."""
        plan = self.plan
        history = [item.message for item in plan.messages_to_summarize]
        prefix = [item.message for item in plan.turn_prefix_messages]
        recent = [item.message for item in plan.recent_messages]
        previous_record = self._previous_compaction()
        plan.file_ops  # noqa: B018 - made here from the messages, read after the summaries
        return history, prefix, recent, previous_record, self._previous_summary(previous_record)

    def _previous_compaction(self) -> dict[str, Any] | None:
        """The record of the compaction this plan continues from (None if there is none)."""
        plan = self.plan
        position = getattr(plan, "previous_compaction_index", -1)
        branch = getattr(plan, "branch", None)
        if not isinstance(position, int) or position < 0 or not branch or position >= len(branch):
            return None
        entry = self.session.entries[branch[position]]
        return entry.data if entry.type == "compaction" else None

    def _previous_summary(self, previous: dict[str, Any] | None) -> str | None:
        """The plan's previous summary, with a snapcompact archive's source text merged in."""
        summary = self.plan.previous_summary
        archive = snapcompact_archive(previous) if previous is not None else None
        text = archive_source_text(archive) if archive is not None else None
        if not text:
            return cast("str | None", summary)
        block = f"{load_prompt('archive-context')}\n\n{text}"
        return f"{summary}\n\n{block}" if summary else block

    async def _run(self, pipeline: SummaryPipeline) -> CompactionResult:
        plan = self.plan
        started = time.monotonic()
        seconds: dict[str, float] = {}
        # A big, lazily read session re-reads each message's record from the file (tens of
        # ms per thousand): on a worker thread, so the caller's event loop (the app) runs on.
        (
            history_messages,
            prefix_messages,
            recent_messages,
            previous_record,
            previous,
        ) = await asyncio.to_thread(self._inputs)

        def history_part() -> Coroutine[Any, Any, str]:
            return pipeline.part(
                "history", history_messages, kind="summary", max_tokens=self.budgets["history"],
                previous_summary=previous, instructions=self.instructions,
                replace_instructions=self.replace_instructions, extra_context=self.extra_context,
            )  # fmt: skip

        def prefix_part() -> Coroutine[Any, Any, str]:
            # The turn-prefix prompt takes no instructions; the offline summarizer uses them
            # (as ``SummaryRequest.focus``) to keep what matches.
            return pipeline.part(
                "turn_prefix",
                prefix_messages,
                kind="turn_prefix",
                max_tokens=self.budgets["turn_prefix"],
                instructions=self.instructions,
            )

        history_text: str | None = None
        prefix_text: str | None = None
        if self.method == "handoff":
            from tui_compactor.engine.context import build_context

            def live_messages() -> list[dict[str, Any]]:
                context = build_context(self.session, plan.leaf, rules=self.rules)
                return [item.message for item in context.items if not item.excluded]

            live = await asyncio.to_thread(live_messages)
            history_text = await self._timed(seconds, "history", pipeline.part(
                "history", live, kind="handoff", max_tokens=self.budgets["history"],
                instructions=self.instructions, replace_instructions=self.replace_instructions,
            ))  # fmt: skip
            body = history_text
        elif plan.is_split_turn and prefix_messages:
            tasks: dict[str, asyncio.Task[Any]] = {}
            if history_messages or previous:
                tasks["history"] = self._spawn(self._timed(seconds, "history", history_part()))
            tasks["turn_prefix"] = self._spawn(self._timed(seconds, "turn_prefix", prefix_part()))
            await _gather_or_cancel(list(tasks.values()))
            history_text = tasks["history"].result() if "history" in tasks else NO_PRIOR_HISTORY
            prefix_text = tasks["turn_prefix"].result()
            body = f"{history_text}{SPLIT_TURN_SEPARATOR}{prefix_text}"
        elif history_messages:
            history_text = await self._timed(seconds, "history", history_part())
            body = history_text
        elif previous:
            body = previous
        else:
            body = NO_PRIOR_HISTORY
        body = pipeline.escape_tags(body)

        short: str | None = None
        if self.method == "soft":
            short = await self._timed(seconds, "short", pipeline.part(
                "short", recent_messages, kind="short", max_tokens=max(1, self.budgets["short"]),
                previous_summary=body,
            ))  # fmt: skip
            short = pipeline.escape_tags(" ".join(short.split()), "short summary")

        summary, read_files, modified_files = with_file_list(
            body, plan.file_ops, self.rules, self.files_format
        )
        # Anchors of every summarized message (tens of ms on a long region): off the loop.
        audit = await asyncio.to_thread(audit_summary, history_messages + prefix_messages, summary)
        preserve = carried_preserve_data(previous_record) if self.method == "soft" else None
        entry = self._entry(summary, short, read_files, modified_files, preserve)
        seconds["total"] = time.monotonic() - started
        return CompactionResult(
            summary=summary,
            short_summary=short or "",
            history_summary=history_text,
            turn_prefix_summary=prefix_text,
            audit=audit,
            entry=entry,
            label=self.summarizer.label,
            offline=bool(getattr(self.summarizer, "offline", False)),
            read_files=read_files,
            modified_files=modified_files,
            warnings=list(pipeline.warnings),
            seconds=seconds,
            instructions=self.instructions,
            method=self.method,
        )

    @staticmethod
    async def _timed(seconds: dict[str, float], part: str, coro: Any) -> Any:
        started = time.monotonic()
        try:
            return await coro
        finally:
            seconds[part] = time.monotonic() - started

    def _entry(
        self,
        summary: str,
        short: str | None,
        read_files: list[str],
        modified_files: list[str],
        preserve_data: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        from tui_compactor.session.writer import make_compaction_entry

        plan = self.plan
        tokens_after = getattr(plan, "tokens_after", None)
        if isinstance(tokens_after, int):
            # The kept messages plus the new summary message itself.
            tokens_after += approx_tokens(summary)
        return make_compaction_entry(
            summary=summary,
            first_kept_entry_id=plan.first_kept_entry_id,
            tokens_before=plan.tokens_before,
            tokens_after=tokens_after,
            short_summary=short,
            read_files=read_files,
            modified_files=modified_files,
            summarizer=self.summarizer.label,
            # pi writes no method: a pi session stays a pi session (its rules are detected
            # from what is in it).
            method=None if self.method == "soft" and self.rules != "omp" else self.method,
            preserve_data=preserve_data,
        )


async def _gather_or_cancel(tasks: list[asyncio.Task[Any]]) -> None:
    """Wait for all ``tasks``; on the first failure cancel the rest and re-raise it."""
    try:
        done, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
    except asyncio.CancelledError:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
    # Ask every finished task for its exception, so a second failure is not reported later
    # as "Task exception was never retrieved"; the first one (in task order) is raised.
    failures = [task.exception() for task in tasks if task in done]
    first = next((failure for failure in failures if failure is not None), None)
    if first is not None:
        for other in pending:
            other.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        raise first
