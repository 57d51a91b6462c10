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

import math
from dataclasses import dataclass, field
from typing import Any

from tui_compactor.engine.messages import LazyMessage
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


class ContextItem(LazyMessage):
    """One message of the context and the entry it came from.

    The message is read from the entry when first asked for, so a context over a huge lazily
    loaded session costs nothing for the messages nobody looks at.
    """

    __slots__ = ("role", "entry_index", "kind", "excluded")

    def __init__(
        self,
        role: str,
        entry_index: int,
        kind: str,
        message: dict[str, Any] | None = None,
        excluded: bool = False,
        *,
        entry: Any = None,
    ) -> None:
        self.role = role
        """Agent message role (``user``, ``assistant``, ``toolResult``, ``bashExecution``,
        ``custom``, ``branchSummary``, ``compactionSummary``)."""
        self.entry_index = entry_index
        self.kind = kind
        """Type of the source entry: ``message``, ``custom_message``, ``branch_summary`` or
        ``compaction`` (the summary of the compaction that wins)."""
        self.excluded = excluded
        """A bash execution the user ran with ``!!``: listed, but never sent to the model."""
        LazyMessage.__init__(self, message, entry)

    def __repr__(self) -> str:
        return f"ContextItem({self.role!r}, entry {self.entry_index}, {self.kind})"


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
        """The agent messages in order (reads every one of them)."""
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
        role = entry.role
        if role is None:
            # Rare bad data: a missing/null message, or a role that is not a string.
            message = entry.message
            if message is None:
                return
            ctx.items.append(ContextItem("unknown", index, kind, message))
            return
        excluded = False
        if role == "bashExecution":
            message = entry.message or {}
            excluded = bool(message.get("excludeFromContext"))
        ctx.items.append(ContextItem(role, index, kind, None, excluded, entry=entry))
    elif kind == "custom_message":
        ctx.items.append(ContextItem("custom", index, kind, entry=entry))
    elif kind == "branch_summary":
        if entry.data.get("summary"):
            ctx.items.append(ContextItem("branchSummary", index, kind, entry=entry))


def build_context(session: Any, leaf_index: int | None, *, rules: str = "pi") -> SessionContext:
    """The context the agent would send at ``leaf_index`` (None = before the first entry)."""
    if leaf_index is None:
        return SessionContext(leaf=None, path=[])
    path = session.path_to(leaf_index)
    ctx = SessionContext(leaf=leaf_index, path=path)
    entries = session.entries
    # Settings and the latest compaction: scan back, reading only the entries that decide.
    compaction_pos = -1
    found_model = found_thinking = False
    for position in range(len(path) - 1, -1, -1):
        entry = entries[path[position]]
        kind = entry.type
        if kind == "compaction" and compaction_pos < 0:
            compaction_pos = position
        elif kind == "thinking_level_change" and not found_thinking:
            found_thinking = True
            ctx.thinking_level = entry.data.get("thinkingLevel")
        elif not found_model and kind == "model_change":
            found_model = True
            data = entry.data
            ctx.model = {"provider": data.get("provider"), "modelId": data.get("modelId")}
        elif not found_model and kind == "message" and entry.role == "assistant":
            found_model = True
            message = entry.message or {}
            ctx.model = {"provider": message.get("provider"), "modelId": message.get("model")}
        if found_model and found_thinking and compaction_pos >= 0:
            break
    start = 0
    if compaction_pos >= 0:
        compaction = entries[path[compaction_pos]]
        ctx.compaction_index = compaction.index
        ctx.items.append(
            ContextItem("compactionSummary", compaction.index, "compaction", entry=compaction)
        )
        first_kept = compaction.data.get("firstKeptEntryId")
        kept_from = _find_before(entries, path, compaction_pos, first_kept)
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


def _find_before(entries: Any, path: list[int], stop: int, entry_id: Any) -> int | None:
    """Position of ``entry_id`` on ``path[:stop]`` (searched from ``stop`` back: ids are unique
    on a path, and the kept part usually starts shortly before its compaction)."""
    for position in range(stop - 1, -1, -1):
        if entries[path[position]].id == entry_id:
            return position
    return None


def _contributes(entry: Any) -> bool:
    """Whether an entry puts a message into the context (``appendMessage``)."""
    kind = entry.type
    if kind == "message":
        return entry.role is not None or entry.message is not None
    if kind == "custom_message":
        return True
    if kind == "branch_summary":
        return bool(entry.data.get("summary"))
    return False


def context_tokens_at(
    session: Any,
    leaf_index: int | None,
    counter: TokenCounter,
    cache: TokenCache | None = None,
    *,
    path: list[int] | None = None,
) -> ContextTokens:
    """``estimate_context_tokens(build_context(...), local=False)`` without building the context.

    Walks the context backwards from the leaf and stops at the last valid usage, so on a huge
    session only the tail is read. pi rules.
    """
    if cache is None or cache.counter is not counter:
        cache = TokenCache(session, counter)
    if leaf_index is None:
        return ContextTokens(0, 0, 0, None, 0)
    if path is None:
        path = session.path_to(leaf_index)
    entries = session.entries
    compaction_pos = -1
    for position in range(len(path) - 1, -1, -1):
        if entries[path[position]].type == "compaction":
            compaction_pos = position
            break
    ranges: list[range] = []
    if compaction_pos >= 0:
        compaction = entries[path[compaction_pos]]
        kept_from = _find_before(
            entries, path, compaction_pos, compaction.data.get("firstKeptEntryId")
        )
        if kept_from is not None:
            ranges.append(range(kept_from, compaction_pos))
    ranges.append(range(compaction_pos + 1, len(path)))
    trailing = 0
    after = 0  # items after the one being looked at
    for segment in reversed(ranges):
        for position in reversed(segment):
            entry = entries[path[position]]
            if not _contributes(entry):
                continue
            if entry.type == "message" and entry.role == "assistant":
                usage = _valid_usage(entry.message)
                if usage is not None:
                    before = sum(
                        1 for seg in ranges for pos in seg if _contributes(entries[path[pos]])
                    )
                    before += 1 if compaction_pos >= 0 else 0
                    used = usage_tokens(usage)
                    return ContextTokens(used + trailing, used, trailing, before - after - 1, None)
            trailing += cache.message_tokens(path[position])
            after += 1
    if compaction_pos >= 0:
        trailing += cache.message_tokens(path[compaction_pos])
    return ContextTokens(trailing, 0, trailing, None, trailing)


def _drop_failed_turns(items: list[ContextItem]) -> list[ContextItem]:
    """oh-my-pi drops aborted/error assistant turns and the tool results paired with them."""
    dropped_calls: set[str] = set()
    kept: list[ContextItem] = []
    for item in items:
        if item.role not in ("assistant", "toolResult"):
            kept.append(item)
            continue
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
    """A usage count as an int; anything else (text, bool, NaN, an overflowing ``1e400``) is 0,
    so a corrupt number is ignored like a missing one instead of crashing every view."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0
    if isinstance(value, float) and not math.isfinite(value):
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

    found = None
    for position in range(len(items) - 1, -1, -1):
        if items[position].role == "assistant":
            usage = _valid_usage(items[position].message)
            if usage is not None:
                found = (usage, position)
                break
    if found is None:
        total = sum(count(position) for position in range(len(items)))
        return ContextTokens(total, 0, total, None, total)
    usage, index = found
    used = usage_tokens(usage)
    trailing = sum(count(position) for position in range(index + 1, len(items)))
    everything = sum(count(position) for position in range(len(items))) if local else None
    return ContextTokens(used + trailing, used, trailing, index, everything)
