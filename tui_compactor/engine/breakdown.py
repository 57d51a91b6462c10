"""What fills the window at a node: the context split by kind, its largest entries, and what a
compaction there would free.

Every message of the context (``build_context``) is counted once with the session's counter
(the ``TokenCache``), so the parts add up to the context's local estimate exactly
(``estimate_context_tokens(...).local_estimate``). Inside one message the count is shared out
among its blocks (user text, assistant text, thinking, each tool call, images...) in proportion
to the counter's count of each block, largest remainder first; for ``cl100k`` and ``bytes``,
which count block by block, the shares are the blocks' own counts.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from tui_compactor.engine.context import (
    ContextItem,
    build_context,
    estimate_context_tokens,
    items_tokens,
)
from tui_compactor.engine.jstext import js_stringify, utf16_len
from tui_compactor.engine.messages import dict_blocks
from tui_compactor.engine.plan import prepare_compaction
from tui_compactor.engine.settings import CompactionSettings
from tui_compactor.engine.tokens import IMAGE_TOKENS, PI_IMAGE_CHARS, TokenCache, TokenCounter

__all__ = [
    "BreakdownPart",
    "LargeEntry",
    "TokenBreakdown",
    "token_breakdown",
    "KIND_LABELS",
    "SHORT_KIND_LABELS",
]

KIND_LABELS: dict[str, str] = {
    "user": "user text",
    "assistant": "assistant text",
    "thinking": "thinking",
    "tool_call": "tool calls",
    "tool_result": "tool results",
    "image": "images",
    "bash": "bash executions",
    "bash_excluded": "bash executions (not sent)",
    "compaction_summary": "compaction summary",
    "branch_summary": "branch summaries",
    "custom": "custom messages",
    "other": "other",
}
"""Part kind -> what the user reads. Tool calls and results are also split per tool name."""

SHORT_KIND_LABELS: dict[str, str] = {
    "user": "user",
    "assistant": "assistant",
    "tool_call": "call",
    "tool_result": "result",
    "bash": "bash",
    "bash_excluded": "bash unsent",
    "compaction_summary": "compaction",
    "branch_summary": "branch summ.",
    "custom": "custom",
}
"""The same names in a few cells, for a narrow pane (the Window tab at 80x24): a tool's
part keeps its tool name whole and shortens the kind (``result: read``), so two tools' parts
stay told apart (both read ``tool resu…`` when cut)."""

LARGEST = 10
"""How many of the largest entries a breakdown lists."""


@dataclass(frozen=True, slots=True)
class BreakdownPart:
    """Tokens of one kind (``tool`` set for a tool's share of calls or results)."""

    kind: str
    tool: str | None
    tokens: int
    entries: int
    """Context entries contributing to this part."""

    @property
    def label(self) -> str:
        """``tool results: read`` or ``thinking``."""
        base = KIND_LABELS.get(self.kind, self.kind)
        return f"{base}: {self.tool}" if self.tool is not None else base

    @property
    def short_label(self) -> str:
        """``result: read`` or ``thinking`` (``SHORT_KIND_LABELS``)."""
        base = SHORT_KIND_LABELS.get(self.kind) or KIND_LABELS.get(self.kind, self.kind)
        return f"{base}: {self.tool}" if self.tool is not None else base

    def to_json(self, window: int | None) -> dict[str, Any]:
        """One JSON row."""
        return {
            "kind": self.kind,
            "tool": self.tool,
            "label": self.label,
            "tokens": self.tokens,
            "entries": self.entries,
            "windowShare": round(self.tokens / window, 4) if window else None,
        }


@dataclass(frozen=True, slots=True)
class LargeEntry:
    """One of the largest entries of the context."""

    entry_index: int
    entry_id: str
    role: str
    tokens: int
    tool: str | None


@dataclass(slots=True)
class TokenBreakdown:
    """The context at ``leaf`` split by kind."""

    leaf: int
    counter_name: str
    window: int | None
    total: int
    """Sum of the parts: the context's local estimate."""
    context_tokens: int
    """pi's ``estimateContextTokens`` (last usage + what follows)."""
    usage_tokens: int | None
    """The provider's count at the last valid usage (None without one)."""
    parts: list[BreakdownPart] = field(default_factory=list)
    """Per kind (tool calls and results per tool), largest first."""
    largest: list[LargeEntry] = field(default_factory=list)
    compaction_prepared: bool = False
    compaction_reason: str | None = None
    tokens_kept: int = 0
    """Local tokens a compaction at this node keeps verbatim (the summary comes on top)."""
    tokens_freed: int = 0
    """Local tokens a compaction at this node would take out of the window."""

    def kind_totals(self) -> dict[str, int]:
        """Tokens per kind, tools added up."""
        totals: dict[str, int] = {}
        for part in self.parts:
            totals[part.kind] = totals.get(part.kind, 0) + part.tokens
        return totals

    def to_json(self, session: Any) -> dict[str, Any]:
        """``context --breakdown --json``."""
        window = self.window
        return {
            "leafIndex": self.leaf,
            "leafId": session.entries[self.leaf].id,
            "tokens": self.counter_name,
            "window": window,
            "total": self.total,
            "windowShare": round(self.total / window, 4) if window else None,
            "contextTokens": self.context_tokens,
            "usageTokens": self.usage_tokens,
            "unattributed": self.context_tokens - self.total if self.usage_tokens else None,
            "kinds": self.kind_totals(),
            "parts": [part.to_json(window) for part in self.parts],
            "largest": [
                {
                    "entryIndex": item.entry_index,
                    "entryId": item.entry_id,
                    "role": item.role,
                    "tool": item.tool,
                    "tokens": item.tokens,
                }
                for item in self.largest
            ],
            "compaction": {
                "prepared": self.compaction_prepared,
                "reason": self.compaction_reason,
                "tokensKept": self.tokens_kept,
                "tokensFreed": self.tokens_freed,
            },
        }


Block = tuple[str, str | None, "str | None | int"]
"""(kind, tool name, text to count | None for an image | an int: a fixed count)."""


def _s(value: Any) -> str:
    return value if isinstance(value, str) else ""


def message_blocks(message: dict[str, Any], tool_names: dict[str, str]) -> Iterator[Block]:
    """The countable pieces of one message, each with its kind (the counters' fragments)."""
    role = message.get("role")
    if role in ("user", "custom", "hookMessage", "developer", "toolResult"):
        kind = {"user": "user", "toolResult": "tool_result"}.get(str(role), "custom")
        tool = None
        if role == "toolResult":
            tool = _s(message.get("toolName")) or tool_names.get(
                _s(message.get("toolCallId")), "tool"
            )
        content = message.get("content")
        if isinstance(content, str):
            yield kind, tool, content
            return
        for block in dict_blocks(content):
            if block.get("type") == "text":
                yield kind, tool, _s(block.get("text"))
            elif block.get("type") == "image":
                yield "image", None, None
    elif role == "assistant":
        for block in dict_blocks(message.get("content")):
            block_type = block.get("type")
            if block_type == "text":
                yield "assistant", None, _s(block.get("text"))
            elif block_type == "thinking":
                yield "thinking", None, _s(block.get("thinking"))
                yield "thinking", None, _s(block.get("thinkingSignature"))
            elif block_type == "redactedThinking":
                yield "thinking", None, _s(block.get("data"))
            elif block_type == "toolCall":
                name = _s(block.get("name")) or "tool"
                yield "tool_call", name, name
                yield "tool_call", name, js_stringify(block.get("arguments")) or ""
            elif block_type == "anthropicServerTool":
                yield "tool_call", "server tool", js_stringify(block) or ""
    elif role == "bashExecution":
        kind = "bash_excluded" if message.get("excludeFromContext") else "bash"
        yield kind, None, _s(message.get("command"))
        yield kind, None, _s(message.get("output"))
    elif role == "compactionSummary":
        yield "compaction_summary", None, _s(message.get("summary"))
    elif role == "branchSummary":
        yield "branch_summary", None, _s(message.get("summary"))


def _weights(
    counter: TokenCounter,
    messages: list[tuple[Any, list[Block]]],
) -> list[list[int]]:
    """The weights of each message's pieces (``messages``: its role and pieces) that share out
    its count, the texts of all of them counted in one call of the counter."""
    texts = [
        piece
        for _, pieces in messages
        for _, _, piece in pieces
        if isinstance(piece, str) and counter.name != "pi"
    ]
    counted = iter(counter.count_texts(texts) if texts else [])
    weights: list[list[int]] = []
    for role, pieces in messages:
        shares: list[int] = []
        for _, _, piece in pieces:
            if isinstance(piece, int):
                shares.append(piece)
            elif piece is None:  # an image
                if counter.name == "pi":
                    shares.append(0 if role == "user" else PI_IMAGE_CHARS)
                else:
                    shares.append(IMAGE_TOKENS)
            elif counter.name == "pi":
                shares.append(utf16_len(piece))  # pi counts characters; shares follow them
            else:
                shares.append(next(counted))
        weights.append(shares)
    return weights


def _share(total: int, weights: list[int]) -> list[int]:
    """``total`` split in proportion to ``weights`` (largest remainder), summing exactly."""
    whole = sum(weights)
    if whole <= 0:
        shares = [0] * len(weights)
        if shares and total:
            shares[0] = total
        return shares
    exact = [total * w / whole for w in weights]
    shares = [int(x) for x in exact]
    order = sorted(range(len(weights)), key=lambda i: exact[i] - shares[i], reverse=True)
    for i in order[: total - sum(shares)]:
        shares[i] += 1
    return shares


def token_breakdown(
    session: Any,
    leaf: int,
    counter: TokenCounter,
    settings: CompactionSettings,
    cache: TokenCache | None = None,
) -> TokenBreakdown:
    """The context at ``leaf`` split by kind, its largest entries, and what a compaction with
    ``settings`` at ``leaf`` would free."""
    if cache is None or cache.counter is not counter or cache.session is not session:
        cache = TokenCache(session, counter)
    ctx = build_context(session, leaf, rules=settings.rules)
    counts = items_tokens(ctx.items, counter, cache)  # what is sent (omp may rewrite it)
    context = estimate_context_tokens(ctx, counter, cache, local=False)  # counted: in the cache
    totals: dict[tuple[str, str | None], list[int]] = {}
    tool_names: dict[str, str] = {}
    sized: list[LargeEntry] = []
    total = 0
    entries = session.entries
    every: list[tuple[ContextItem, int, Any, list[Block]]] = []
    for item, tokens in zip(ctx.items, counts, strict=True):
        message = item.message
        role = message.get("role")
        if role == "assistant":
            for block in dict_blocks(message.get("content")):
                if block.get("type") == "toolCall":
                    tool_names[_s(block.get("id"))] = _s(block.get("name")) or "tool"
        pieces = list(message_blocks(message, tool_names)) if tokens else []
        every.append((item, tokens, role, pieces or [("other", None, tokens)]))
    # The pieces' texts are counted in one call of the counter (one request, not one each).
    weights = iter(_weights(counter, [(role, pieces) for _, _, role, pieces in every]))
    for item, tokens, role, pieces in every:
        total += tokens
        shares = _share(tokens, next(weights))
        seen: set[tuple[str, str | None]] = set()
        for (kind, tool, _), share in zip(pieces, shares, strict=True):
            if not share:
                continue
            slot = totals.setdefault((kind, tool), [0, 0])
            slot[0] += share
            if (kind, tool) not in seen:
                seen.add((kind, tool))
                slot[1] += 1
        main_tool = next((tool for kind, tool, _ in pieces if tool is not None), None)
        sized.append(
            LargeEntry(item.entry_index, entries[item.entry_index].id, str(role), tokens, main_tool)
        )
    parts = [
        BreakdownPart(kind, tool, tokens, count)
        for (kind, tool), (tokens, count) in totals.items()
        if tokens
    ]
    parts.sort(key=lambda part: (-part.tokens, part.kind, part.tool or ""))
    sized.sort(key=lambda item: (-item.tokens, item.entry_index))
    result = TokenBreakdown(
        leaf=leaf,
        counter_name=counter.name,
        window=settings.context_window,
        total=total,
        context_tokens=context.tokens,
        usage_tokens=context.usage_tokens if context.last_usage_index is not None else None,
        parts=parts,
        largest=sized[:LARGEST],
    )
    plan = prepare_compaction(session, leaf, settings, counter, cache=cache)
    result.compaction_prepared = plan.prepared
    result.compaction_reason = plan.reason
    if plan.prepared:
        result.tokens_kept = plan.tokens_after
        result.tokens_freed = max(0, total - plan.tokens_after)
    return result
