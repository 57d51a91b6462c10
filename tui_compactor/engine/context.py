"""What the model sees at a node: ``buildSessionContext`` for any leaf, and its token count.

The path root..leaf is walked once. The **latest** compaction on it wins: its summary comes
first, then the entries from its ``firstKeptEntryId`` up to the compaction (nothing, with a
warning, when that id is not found before it), then everything after it. ``message`` entries,
``custom_message`` entries and ``branch_summary`` entries with a non-empty summary contribute;
bash executions excluded from context stay in the list (marked ``excluded``) and are dropped
later by ``convert_to_llm``. The model is the last ``model_change`` or assistant message on
the path, the thinking level the last ``thinking_level_change`` (default ``"off"``).

Under ``rules="omp"`` two oh-my-pi behaviours are added: a ``reset_boundary`` after the
latest compaction restarts the context after it, and assistant turns that ended ``aborted``
or ``error`` are dropped together with their tool results.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tui_compactor.engine.messages import (
    branch_summary_message,
    compaction_message,
    custom_message,
)
from tui_compactor.engine.tokens import TokenCache, TokenCounter

__all__ = [
    "ContextItem",
    "SessionContext",
    "ContextTokens",
    "build_context",
    "estimate_context_tokens",
    "usage_tokens",
    "last_assistant_usage",
]


@dataclass(slots=True)
class ContextItem:
    """One message of the context and the entry it came from."""

    role: str
    """Agent message role (``user``, ``assistant``, ``toolResult``, ``bashExecution``,
    ``custom``, ``branchSummary``, ``compactionSummary``)."""
    entry_index: int
    kind: str
    """Type of the source entry: ``message``, ``custom_message``, ``branch_summary`` or
    ``compaction`` (the summary of the compaction that wins)."""
    message: dict[str, Any]
    excluded: bool = False
    """A bash execution the user ran with ``!!``: listed, but never sent to the model."""


@dataclass(slots=True)
class SessionContext:
    """The context at ``leaf``."""

    leaf: int | None
    path: list[int]
    """Entry indices root..leaf."""
    items: list[ContextItem] = field(default_factory=list)
    thinking_level: str = "off"
    model: dict[str, Any] | None = None
    compaction_index: int | None = None
    """Entry index of the compaction that shaped this context, if any."""
    warnings: list[str] = field(default_factory=list)

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The agent messages in order."""
        return [item.message for item in self.items]


@dataclass(frozen=True, slots=True)
class ContextTokens:
    """pi's ``estimateContextTokens`` plus the pure local estimate."""

    tokens: int
    """Last valid assistant usage + estimates of the messages after it."""
    usage_tokens: int
    trailing_tokens: int
    last_usage_index: int | None
    """Index into the context items of the assistant message whose usage was used."""
    local_estimate: int | None
    """Sum of the counter over every message (no provider usage); None when not asked for."""

    def to_json(self) -> dict[str, Any]:
        """The reference's field names, plus ``localEstimate``."""
        return {
            "tokens": self.tokens,
            "usageTokens": self.usage_tokens,
            "trailingTokens": self.trailing_tokens,
            "lastUsageIndex": self.last_usage_index,
            "localEstimate": self.local_estimate,
        }


def _append(ctx: SessionContext, entry: Any, index: int) -> None:
    kind = entry.type
    if kind == "message":
        message = entry.message
        if message is None:
            return
        role = message.get("role")
        role_text = role if isinstance(role, str) else "unknown"
        excluded = role == "bashExecution" and bool(message.get("excludeFromContext"))
        ctx.items.append(ContextItem(role_text, index, kind, message, excluded))
    elif kind == "custom_message":
        ctx.items.append(ContextItem("custom", index, kind, custom_message(entry.data)))
    elif kind == "branch_summary":
        data = entry.data
        if data.get("summary"):
            ctx.items.append(
                ContextItem("branchSummary", index, kind, branch_summary_message(data))
            )


def build_context(session: Any, leaf_index: int | None, *, rules: str = "pi") -> SessionContext:
    """The context the agent would send at ``leaf_index`` (None = before the first entry)."""
    if leaf_index is None:
        return SessionContext(leaf=None, path=[])
    path = session.path_to(leaf_index)
    ctx = SessionContext(leaf=leaf_index, path=path)
    entries = session.entries
    compaction_pos = -1
    for position, index in enumerate(path):
        entry = entries[index]
        kind = entry.type
        if kind == "thinking_level_change":
            ctx.thinking_level = entry.data.get("thinkingLevel")
        elif kind == "model_change":
            data = entry.data
            ctx.model = {"provider": data.get("provider"), "modelId": data.get("modelId")}
        elif kind == "message":
            message = entry.message
            if message is not None and message.get("role") == "assistant":
                ctx.model = {"provider": message.get("provider"), "modelId": message.get("model")}
        elif kind == "compaction":
            compaction_pos = position
    start = 0
    if compaction_pos >= 0:
        compaction = entries[path[compaction_pos]]
        ctx.compaction_index = compaction.index
        ctx.items.append(
            ContextItem(
                "compactionSummary",
                compaction.index,
                "compaction",
                compaction_message(compaction.data),
            )
        )
        first_kept = compaction.data.get("firstKeptEntryId")
        kept_from = next(
            (pos for pos in range(compaction_pos) if entries[path[pos]].id == first_kept), None
        )
        if kept_from is None:
            ctx.warnings.append(
                f"compaction {compaction.id}: firstKeptEntryId {first_kept!r} is not on the path "
                "before it; nothing before the compaction is kept"
            )
        else:
            for pos in range(kept_from, compaction_pos):
                _append(ctx, entries[path[pos]], path[pos])
        start = compaction_pos + 1
    if rules == "omp":
        for pos in range(len(path) - 1, start - 1, -1):
            if entries[path[pos]].type == "reset_boundary":
                ctx.items = ctx.items[:1] if compaction_pos >= 0 else []
                start = pos + 1
                break
    for pos in range(start, len(path)):
        _append(ctx, entries[path[pos]], path[pos])
    if rules == "omp":
        ctx.items = _drop_failed_turns(ctx.items)
    return ctx


def _drop_failed_turns(items: list[ContextItem]) -> list[ContextItem]:
    """oh-my-pi drops aborted/error assistant turns and the tool results paired with them."""
    dropped_calls: set[str] = set()
    kept: list[ContextItem] = []
    for item in items:
        message = item.message
        if item.role == "assistant" and message.get("stopReason") in ("aborted", "error"):
            for block in message.get("content") or []:
                if isinstance(block, dict) and block.get("type") == "toolCall":
                    call_id = block.get("id")
                    if isinstance(call_id, str):
                        dropped_calls.add(call_id)
            continue
        if item.role == "toolResult" and message.get("toolCallId") in dropped_calls:
            continue
        kept.append(item)
    return kept


def _number(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0
    return int(value)


def usage_tokens(usage: dict[str, Any]) -> int:
    """pi's ``calculateContextTokens``: ``totalTokens`` or input+output+cacheRead+cacheWrite."""
    total = _number(usage.get("totalTokens"))
    if total:
        return total
    return sum(_number(usage.get(key)) for key in ("input", "output", "cacheRead", "cacheWrite"))


def _valid_usage(message: Any) -> dict[str, Any] | None:
    if not isinstance(message, dict) or message.get("role") != "assistant":
        return None
    if message.get("stopReason") in ("aborted", "error"):
        return None
    usage = message.get("usage")
    return usage if isinstance(usage, dict) and usage else None


def last_assistant_usage(messages: list[dict[str, Any]]) -> tuple[dict[str, Any], int] | None:
    """The usage of the newest assistant message that did not abort or fail, and its index."""
    for index in range(len(messages) - 1, -1, -1):
        usage = _valid_usage(messages[index])
        if usage is not None:
            return usage, index
    return None


def estimate_context_tokens(
    ctx: SessionContext,
    counter: TokenCounter,
    cache: TokenCache | None = None,
    *,
    local: bool = True,
) -> ContextTokens:
    """Context size: last valid usage + local estimates of what follows (and the pure estimate).

    ``local=False`` skips the pure estimate (``local_estimate`` None) when a usage exists, so
    only the messages after the last usage are counted: fast on huge sessions.
    """
    if cache is not None and cache.counter is not counter:
        cache = None
    items = ctx.items

    def count(position: int) -> int:
        item = items[position]
        if cache is not None:
            return cache.message_tokens(item.entry_index)
        return counter.count_message(item.message)

    found = last_assistant_usage(ctx.messages)
    if found is None:
        total = sum(count(position) for position in range(len(items)))
        return ContextTokens(total, 0, total, None, total)
    usage, index = found
    used = usage_tokens(usage)
    trailing = sum(count(position) for position in range(index + 1, len(items)))
    everything = sum(count(position) for position in range(len(items))) if local else None
    return ContextTokens(used + trailing, used, trailing, index, everything)
