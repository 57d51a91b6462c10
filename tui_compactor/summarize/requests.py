"""The request inspector: the exact requests a compaction or a branch summary would send.

The real pipeline runs (``CompactionJob`` / ``run_branch_summary``: prompts, folding into
windows, budgets, boundary-tag escaping) with a recording stand-in for the summarizer that
calls no model: each request is recorded as the provider would send it (URL and JSON body for
an HTTP provider; system prompt, user prompt and ``max_tokens`` for the offline one) and
answered with a placeholder. So the first window of each part is exactly what would be sent;
a later window (folding) and the short summary contain the placeholder where the previous
model answer would be. Headers are never recorded, so no API key can appear.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from tui_compactor.summarize.base import Summarizer, SummaryRequest

__all__ = ["InspectedRequest", "RecordingSummarizer", "compaction_requests", "branch_requests"]

PART_OF_KIND = {
    "summary": "history",
    "update": "history",
    "turn_prefix": "turn_prefix",
    "short": "short",
    "branch": "branch",
}
"""Prompt kind -> the part of the job that sends it."""


@dataclass(frozen=True, slots=True)
class InspectedRequest:
    """One request as it would be sent."""

    part: str
    """``history``, ``turn_prefix``, ``short`` or ``branch``."""
    window: int
    """1 for the first request of the part, 2... for later folding windows."""
    kind: str
    summarizer: str
    model: str | None
    url: str | None
    """The endpoint (None for the offline summarizer)."""
    system: str
    prompt: str
    max_tokens: int
    body: dict[str, Any]
    """The JSON body an HTTP provider posts (system, prompt, model, limits, options)."""

    def to_json(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "part": self.part,
            "window": self.window,
            "kind": self.kind,
            "summarizer": self.summarizer,
            "model": self.model,
            "url": self.url,
            "maxTokens": self.max_tokens,
            "system": self.system,
            "prompt": self.prompt,
            "body": self.body,
        }


def _placeholder(request: SummaryRequest, window: int) -> str:
    part = PART_OF_KIND.get(request.kind, request.kind)
    return f"[the {part} summary of window {window} would be here]"


class RecordingSummarizer(Summarizer):
    """Stands in for ``inner``: records every request, calls nothing, answers a placeholder."""

    def __init__(self, inner: Summarizer) -> None:
        self.inner = inner
        self.label = inner.label
        self.context_window = inner.context_window
        self.offline = inner.offline
        self.recorded: list[InspectedRequest] = []
        self._windows: dict[str, int] = {}

    def __getattr__(self, name: str) -> Any:
        # ``provider`` and the like decide prompt details (thinking dropped for Anthropic).
        return getattr(self.inner, name)

    def _record(self, request: SummaryRequest) -> int:
        part = PART_OF_KIND.get(request.kind, request.kind)
        window = self._windows.get(part, 0) + 1
        self._windows[part] = window
        inner = self.inner
        body_of = getattr(inner, "_body", None)
        url_of = getattr(inner, "_url", None)
        if callable(body_of) and not inner.offline:
            body = body_of(request)
            max_tokens = int(
                body.get("max_tokens") or body.get("max_completion_tokens") or request.max_tokens
            )
        else:
            body = {"system": request.system, "prompt": request.prompt,
                    "max_tokens": request.max_tokens}  # fmt: skip
            max_tokens = request.max_tokens
        self.recorded.append(
            InspectedRequest(
                part=part,
                window=window,
                kind=request.kind,
                summarizer=self.label,
                model=getattr(inner, "model", None),
                url=url_of() if callable(url_of) and not inner.offline else None,
                system=request.system,
                prompt=request.prompt,
                max_tokens=max_tokens,
                body=body,
            )
        )
        return window

    async def stream(self, request: SummaryRequest) -> AsyncIterator[str]:  # type: ignore[override]
        """Record ``request`` and answer the placeholder."""
        window = self._record(request)
        yield _placeholder(request, window)


async def compaction_requests(
    plan: Any,
    session: Any,
    summarizer: Summarizer,
    settings: Any,
    *,
    instructions: str | None = None,
    replace_instructions: bool = False,
    files_format: Any = "files",
    method: Any = "soft",
) -> list[InspectedRequest]:
    """The requests a compaction of ``plan`` with ``summarizer`` would send, in order (the
    options are ``CompactionJob``'s)."""
    from tui_compactor.summarize.compaction import CompactionJob

    recorder = RecordingSummarizer(summarizer)
    job = CompactionJob(
        plan, session, recorder, settings, instructions=instructions,
        replace_instructions=replace_instructions, files_format=files_format, method=method,
    )  # fmt: skip
    await job.run()
    return _ordered(recorder.recorded)


async def branch_requests(
    nav_plan: Any,
    summarizer: Summarizer,
    *,
    instructions: str | None = None,
    replace_instructions: bool = False,
) -> list[InspectedRequest]:
    """The requests a branch summary of ``nav_plan`` with ``summarizer`` would send."""
    from tui_compactor.summarize.branch import run_branch_summary

    recorder = RecordingSummarizer(summarizer)
    await run_branch_summary(
        nav_plan, recorder, instructions=instructions, replace_instructions=replace_instructions
    )
    return _ordered(recorder.recorded)


def _ordered(recorded: list[InspectedRequest]) -> list[InspectedRequest]:
    """History, turn prefix, short, branch; windows in order (parts run concurrently)."""
    order = {"history": 0, "turn_prefix": 1, "short": 2, "branch": 3}
    return sorted(recorded, key=lambda item: (order.get(item.part, 9), item.window))


def format_requests(requests: list[InspectedRequest]) -> str:
    """The requests as readable text (system prompt, user prompt, limits, endpoint)."""
    if not requests:
        return "no request would be sent (nothing to summarize)\n"
    lines = []
    for item in requests:
        lines.append(f"=== {item.part} · request {item.window} · {item.kind} · {item.summarizer}")
        where = item.url or "offline (no network)"
        lines.append(f"endpoint: {where}")
        options = {k: v for k, v in item.body.items() if k not in ("messages", "system", "prompt")}
        lines.append(f"max_tokens: {item.max_tokens}; options: {options}")
        lines.append("--- system prompt")
        lines.append(item.system)
        lines.append("--- user prompt")
        lines.append(item.prompt)
        lines.append("")
    return "\n".join(lines) + "\n"
