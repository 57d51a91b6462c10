"""What every summarizer takes and gives: a request in, streamed text out."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["PromptKind", "SummaryRequest", "Summarizer"]

PromptKind = Literal["summary", "update", "turn_prefix", "short", "branch", "handoff"]
"""Which template a request was built from (the offline summarizer builds the same shape)."""


@dataclass(frozen=True, slots=True)
class SummaryRequest:
    """One summarizer call.

    Network providers send ``system`` + ``prompt``; the offline summarizer works from
    ``messages`` and ``previous_summary`` directly and builds the section layout of ``kind``.
    """

    kind: PromptKind
    system: str
    prompt: str
    max_tokens: int
    messages: list[dict[str, Any]] = field(default_factory=list)
    previous_summary: str | None = None
    focus: str | None = None
    """Custom instructions (the offline summarizer lists matching anchors first)."""


class Summarizer:
    """Base class: ``stream(request)`` yields text pieces as they arrive.

    Attributes:
        label: ``offline`` or ``provider:model``; shown in the UI and written to the entry.
        context_window: the summarizer model's input window, used to plan folding.
        offline: True for the extractive summarizer that calls no model.
    """

    label: str = "summarizer"
    context_window: int = 128000
    offline: bool = False

    def stream(self, request: SummaryRequest) -> AsyncIterator[str]:
        """Yield the summary text in pieces; raise ``SummarizeError`` subclasses on failure."""
        raise NotImplementedError

    async def complete(self, request: SummaryRequest) -> str:
        """The whole text of ``stream(request)``."""
        pieces = [piece async for piece in self.stream(request)]
        return "".join(pieces)

    def secrets(self) -> list[str]:
        """Values that must never be stored or shown (the API key), for ``redact``."""
        return []

    async def aclose(self) -> None:
        """Release resources this summarizer owns (not the shared HTTP client)."""
