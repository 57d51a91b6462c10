"""What the model sees at a node: ``buildSessionContext`` for any leaf, and its token count.

The reference reads the whole path root..leaf; only its tail decides, so it is walked from the
leaf up to where the context starts, and the settings above that are read from the setting
changes alone (``_pi_shape``, ``_omp_shape``). The **latest** compaction on it wins: its summary
comes first, then the entries from its ``firstKeptEntryId`` up to the compaction (nothing, with a
warning, when that id is not found before it), then everything after it. ``message`` entries,
``custom_message`` entries and ``branch_summary`` entries with a non-empty summary contribute;
bash executions excluded from context stay in the list (marked ``excluded``) and are dropped
later by ``convert_to_llm``. The model is the last ``model_change`` or assistant message on
the path, the thinking level the last ``thinking_level_change`` (default ``"off"``).

Under ``rules="omp"`` the context is oh-my-pi 18.2.3's ``buildSessionContext``: a
``reset_boundary`` after the latest compaction drops the summary and everything before it;
a remote compaction's kept messages are replaced by its provider payload (entries after
``providerReplayThroughEntryId`` are re-emitted); snapcompact archives come back as blocks of
the summary message; ``retryRecovery`` and empty error turns are skipped; custom messages of
the ``prewalk-plan`` and ``vibe-mode-context`` types never enter; tool calls without a result
are stripped from every assistant turn (with that turn's redacted thinking and signatures,
the turn dropped when empty); aborted and error turns are dropped with their tool results.
What the agent then sends for each item is ``item_llm`` (``omp_messages`` for oh-my-pi).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from tui_compactor.engine.messages import CallIds, LazyMessage
from tui_compactor.engine.methods import remote_info
from tui_compactor.engine.omp_messages import (
    omp_branch_summary_message,
    omp_compaction_message,
    omp_custom_message,
)
from tui_compactor.engine.tokens import CountedWalk, TokenCache, TokenCounter

__all__ = [
    "ContextItem",
    "SessionContext",
    "ContextTokens",
    "build_context",
    "stream_context",
    "context_model",
    "estimate_context_tokens",
    "context_tokens_at",
    "threshold_context_tokens",
    "ContextTally",
    "usage_tokens",
    "last_assistant_usage",
    "item_llm",
    "item_llm_messages",
    "llm_message_text",
    "item_tokens",
    "items_tokens",
    "estimate_context_tokens_omp",
    "is_empty_error_turn",
]

_T = TypeVar("_T")


class ContextItem(LazyMessage):
    """One message of the context and the entry it came from.

    The message is read from the entry when first asked for, so a context over a huge lazily
    loaded session costs nothing for the messages nobody looks at.
    """

    __slots__ = ("role", "entry_index", "kind", "excluded", "rewritten", "from_entry")

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
        self.rewritten = False
        """oh-my-pi rules: the message differs from its entry's (dangling tool calls, and that
        turn's redacted thinking and signatures, stripped)."""
        self.from_entry = message is None
        """The message is the one its entry stands for (``message_from_entry``), read when
        asked, not one the rules made (oh-my-pi's compaction summary)."""
        LazyMessage.__init__(self, message, entry)

    def __repr__(self) -> str:
        return f"ContextItem({self.role!r}, entry {self.entry_index}, {self.kind})"

    def hold(self) -> ContextItem:
        """Keep the message once read, even from a lazily read session: for an item that is
        read several times and then dropped (a streamed row). Its record is read once
        (``message_once``), not kept in the session's cache of parsed records."""
        if self._message is None:
            self._message = self.message_once()
        return self


@dataclass(slots=True)
class SessionContext:
    """The context at ``leaf``."""

    leaf: int | None
    items: list[ContextItem] = field(default_factory=list)
    thinking_level: str = "off"
    model: dict[str, Any] | None = None
    compaction_index: int | None = None
    """Entry index of the compaction that shaped this context, if any."""
    models: dict[str, str] = field(default_factory=dict)
    """oh-my-pi rules: model per role (``default``, ...) as ``provider/id``."""
    mode: str = "none"
    """oh-my-pi rules: the active mode from the last ``mode_change``."""
    rules: str = "pi"
    """The rules the context was built under (``estimate_context_tokens`` follows them)."""
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


def _contributes(entry: Any) -> bool:
    """Whether an entry puts a message into the context under pi rules (``appendMessage``):
    messages (even with a role that is not a string), custom messages, and branch summaries
    with a non-empty summary."""
    kind = entry.type
    if kind == "message":
        return entry.role is not None or entry.message is not None
    if kind == "custom_message":
        return True
    if kind == "branch_summary":
        return bool(entry.data.get("summary"))
    return False


def _item(entry: Any, index: int) -> ContextItem | None:
    """The context item entry ``index`` contributes under pi rules, or None."""
    if not _contributes(entry):
        return None
    kind = entry.type
    if kind == "message":
        role = entry.role
        if role is None:
            # Rare bad data: a role that is not a string (``_contributes`` saw the message).
            return ContextItem("unknown", index, kind, entry.message)
        excluded = False
        if role == "bashExecution":
            message = entry.message or {}
            excluded = bool(message.get("excludeFromContext"))
        return ContextItem(role, index, kind, None, excluded, entry=entry)
    if kind == "custom_message":
        return ContextItem("custom", index, kind, entry=entry)
    return ContextItem("branchSummary", index, kind, entry=entry)


def build_context(session: Any, leaf_index: int | None, *, rules: str = "pi") -> SessionContext:
    """The context the agent would send at ``leaf_index`` (None = before the first entry)."""
    if leaf_index is None:
        return SessionContext(leaf=None)
    if rules == "omp":
        return _build_context_omp(session, leaf_index)
    ctx, items = stream_context(session, leaf_index)
    ctx.items = list(items)
    return ctx


def stream_context(
    session: Any, leaf_index: int | None, *, rules: str = "pi"
) -> tuple[SessionContext, Iterable[ContextItem]]:
    """``build_context`` with the items as an iterable instead of ``ctx.items``.

    Under pi rules the items are made one by one as they are consumed and ``ctx.items`` stays
    empty, so a command can print a 200,000-message context without holding it. oh-my-pi's
    rules need the whole list (dangling tool calls, failed turns): it is built as usual.
    """
    if leaf_index is None or rules == "omp":
        ctx = build_context(session, leaf_index, rules=rules)
        return ctx, ctx.items
    ctx, compaction, kept = _pi_shape(session, leaf_index)
    return ctx, _pi_items(session.entries, compaction, kept)


def _pi_shape(session: Any, leaf: int) -> tuple[SessionContext, Any, list[int]]:
    """The context at ``leaf`` under pi rules, before its items are made: the settings, the
    compaction that wins (or None), and the path entries it keeps, in path order.

    pi reads the whole path root..leaf, but only its tail decides: the **latest** compaction,
    the entries from its ``firstKeptEntryId`` on, and the newest settings. So the path is
    walked up from the leaf and the walk stops once the kept range's first entry is reached
    and the thinking level and model are known: the cost follows the context, not the path.
    Without a compaction the whole path is the context.
    """
    entries = session.entries
    ctx = SessionContext(leaf=leaf)
    settings = _PiSettings(ctx)
    walked: list[int] = []  # leaf first
    compaction: Any = None
    compaction_at = -1  # position of the compaction in ``walked``
    first_kept: Any = None
    kept_found = False
    node: int | None = leaf
    while node is not None:
        entry = entries[node]
        if not settings.known:
            settings.see(entry)
        walked.append(node)
        node = entry.parent
        if compaction is None:
            if entry.type == "compaction":
                compaction = entry
                compaction_at = len(walked) - 1
                first_kept = entry.data.get("firstKeptEntryId")
        elif entry.id == first_kept:
            # The kept range starts at the newest entry before the compaction with that id.
            kept_found = True
            break
    if node is not None and not settings.known:
        settings.walk_up(session, node)
    if compaction is None:
        walked.reverse()
        return ctx, None, walked
    ctx.compaction_index = compaction.index
    if not kept_found:
        _warn_kept_missing(ctx, compaction, first_kept)
    return ctx, compaction, _kept_indices(walked, compaction_at, kept_found)


def _kept_indices(
    walked: list[int], compaction_at: int, found: bool, *, after_start: bool = False
) -> list[int]:
    """The entries a context keeps around its compaction, in path order, from a walk up the
    path (leaf first) that met the compaction at ``compaction_at`` and stopped at the entry its
    kept part starts at (``found``; ``after_start``: the part starts after that entry). Not
    found: only the entries after the compaction."""
    if not found:
        return walked[compaction_at - 1 :: -1] if compaction_at else []
    kept = walked[-2::-1] if after_start else walked[::-1]
    del kept[len(kept) - 1 - compaction_at]
    return kept


def _warn_kept_missing(ctx: SessionContext, compaction: Any, first_kept: Any) -> None:
    ctx.warnings.append(
        f"compaction {compaction.id}: firstKeptEntryId {first_kept!r} is not on the path "
        "before it; nothing before the compaction is kept"
    )


class _PiSettings:
    """pi's settings at a leaf, read from the leaf up: the thinking level of the newest
    ``thinking_level_change`` (``"off"`` without one), the model of the newest
    ``model_change`` or assistant message."""

    __slots__ = ("ctx", "thinking", "model")

    def __init__(self, ctx: SessionContext) -> None:
        self.ctx = ctx
        self.thinking = False
        self.model = False

    @property
    def known(self) -> bool:
        """Both settings found: nothing older can change them."""
        return self.thinking and self.model

    def see(self, entry: Any) -> None:
        """The next entry up the path."""
        kind = entry.type
        if kind == "message":
            if not self.model and entry.role == "assistant":
                self.model = True
                message = entry.message or {}
                self.ctx.model = {
                    "provider": message.get("provider"),
                    "modelId": message.get("model"),
                }
        elif kind == "thinking_level_change":
            if not self.thinking:
                self.thinking = True
                self.ctx.thinking_level = entry.data.get("thinkingLevel")
        elif kind == "model_change" and not self.model:
            self.model = True
            data = entry.data
            self.ctx.model = {"provider": data.get("provider"), "modelId": data.get("modelId")}

    def walk_up(self, session: Any, node: int | None, *, model_only: bool = False) -> None:
        """Read ``node`` and its ancestors until the settings (or only the model) are known.
        Once the model is known, only setting changes are read (``Session.setting_above``)."""
        _read_up(
            session,
            node,
            self.see,
            stepwise=lambda: not self.model,
            done=(lambda: self.model) if model_only else (lambda: self.known),
        )


def _read_up(
    session: Any,
    node: int | None,
    see: Callable[[Any], None],
    *,
    stepwise: Callable[[], bool],
    done: Callable[[], bool] = lambda: False,
) -> None:
    """Show ``see`` the entry ``node`` and its ancestors, nearest first, until ``done()`` or
    the root: every entry while ``stepwise()``, then only the setting changes
    (``Session.setting_above``), which alone can change a setting found by then."""
    entries = session.entries
    while node is not None and not done():
        if not stepwise():
            node = session.setting_above(node)
            if node is None:
                return
        entry = entries[node]
        see(entry)
        node = entry.parent


def context_model(session: Any, leaf: int | None, *, rules: str = "pi") -> dict[str, Any] | None:
    """``build_context(...).model`` without building the context: only the settings are read
    from the leaf up (pi rules: up to the newest model change or assistant message)."""
    if leaf is None:
        return None
    ctx = SessionContext(leaf=leaf)
    if rules == "omp":
        _OmpSettings(ctx, session).walk_up(leaf)
    else:
        _PiSettings(ctx).walk_up(session, leaf, model_only=True)
    return ctx.model


def _pi_items(entries: Any, compaction: Any, kept: list[int]) -> Iterator[ContextItem]:
    if compaction is not None:
        yield ContextItem("compactionSummary", compaction.index, "compaction", entry=compaction)
    for index in kept:
        item = _item(entries[index], index)
        if item is not None:
            yield item


_SKIPPED_CUSTOM_TYPES = frozenset({"prewalk-plan", "vibe-mode-context"})
"""oh-my-pi custom messages that never enter the model context."""


def is_empty_error_turn(message: dict[str, Any]) -> bool:
    """oh-my-pi's ``isEmptyErrorTurn``: an ``error`` turn with no text, thinking or tool call."""
    if message.get("stopReason") != "error":
        return False
    content = message.get("content")
    if not isinstance(content, list):  # a corrupt file's ``true``: content, as a non-block
        return not content
    for block in content:
        if not isinstance(block, dict):
            return False
        kind = block.get("type")
        if kind == "text":
            if str(block.get("text") or "").strip():
                return False
        elif kind == "thinking":
            if (
                str(block.get("thinking") or "").strip()
                or str(block.get("thinkingSignature") or "").strip()
            ):
                return False
        elif kind == "redactedThinking":
            if str(block.get("data") or "").strip():
                return False
        elif kind != "fallback":
            return False
    return True


def _omp_append(items: list[ContextItem], entry: Any) -> None:
    """oh-my-pi's ``appendMessage`` for one path entry."""
    kind = entry.type
    if kind == "message":
        message = entry.message
        if not isinstance(message, dict):
            return
        role = message.get("role")
        if role == "assistant" and (message.get("retryRecovery") or is_empty_error_turn(message)):
            return
        excluded = role == "bashExecution" and bool(message.get("excludeFromContext"))
        items.append(ContextItem(str(role), entry.index, kind, message, excluded, entry=entry))
    elif kind == "custom_message":
        data = entry.data
        if data.get("customType") in _SKIPPED_CUSTOM_TYPES:
            return
        custom = omp_custom_message(data)
        if custom is not None:
            items.append(ContextItem("custom", entry.index, kind, custom, entry=entry))
    elif kind == "branch_summary":
        data = entry.data
        if data.get("summary"):
            message = omp_branch_summary_message(data)
            items.append(ContextItem("branchSummary", entry.index, kind, message, entry=entry))


def _build_context_omp(session: Any, leaf_index: int) -> SessionContext:
    """oh-my-pi 18.2.3's ``buildSessionContext`` (model context, not the display transcript)."""
    ctx, compaction, remote, shown = _omp_shape(session, leaf_index)
    entries = session.entries
    items: list[ContextItem] = []
    if compaction is not None:
        data = compaction.data
        payload = "openaiResponsesHistory" if remote else None
        if payload is None and _anthropic_payload(data):
            payload = "anthropicCompaction"
        summary = omp_compaction_message(data, provider_payload=payload)
        items.append(
            ContextItem(
                "compactionSummary", compaction.index, "compaction", summary, entry=compaction
            )
        )
    for index in shown:
        _omp_append(items, entries[index])
    ctx.items = _strip_failed_omp(_strip_dangling_calls(items))
    return ctx


def _omp_shape(session: Any, leaf: int) -> tuple[SessionContext, Any, bool, list[int]]:
    """The context at ``leaf`` under oh-my-pi's rules, before its items are made: the settings,
    the compaction whose summary leads (or None), whether it is a remote one (its OpenAI
    replacement history, even an empty one, rides on the summary and replaces the kept
    messages), and the path entries after it, in path order.

    oh-my-pi reads the whole path root..leaf, but like pi's only its tail decides what is sent:
    a ``reset_boundary`` newer than the latest compaction (the entries after it), else the
    latest compaction and the entries from its ``firstKeptEntryId`` on (a remote compaction:
    those after its ``providerReplayThroughEntryId``, or none), and the settings. So the path
    is walked up from the leaf until that start; the settings above it are read from the
    setting changes alone (``Session.setting_above``) once an assistant turn has been seen.
    """
    entries = session.entries
    ctx = SessionContext(leaf=leaf, rules="omp")
    settings = _OmpSettings(ctx, session)
    walked: list[int] = []  # leaf first
    compaction: Any = None
    compaction_at = -1  # position of the compaction in ``walked``
    start: Any = None  # id of the entry the kept part starts at (or after, when remote)
    remote = found = False
    node: int | None = leaf
    while node is not None:
        entry = entries[node]
        settings.see(entry)
        walked.append(node)
        node = entry.parent
        if compaction is None:
            if entry.type == "reset_boundary":
                # Newer than any compaction: only what follows it is sent.
                settings.walk_up(node)
                walked.pop()
                walked.reverse()
                return ctx, None, False, walked
            if entry.type == "compaction":
                compaction, compaction_at = entry, len(walked) - 1
                data = entry.data
                remote = omp_remote_payload(data) is not None
                start = (
                    data.get("providerReplayThroughEntryId")
                    if remote
                    else data.get("firstKeptEntryId")
                )
                if remote and not start:
                    break  # the provider's payload replaces every kept message
        elif entry.id == start:
            found = True
            break
    settings.walk_up(node)
    if compaction is None:
        walked.reverse()
        return ctx, None, False, walked
    ctx.compaction_index = compaction.index
    if not found and not remote:
        _warn_kept_missing(ctx, compaction, start)
    return ctx, compaction, remote, _kept_indices(walked, compaction_at, found, after_start=remote)


class _OmpSettings:
    """oh-my-pi's settings at a leaf, read from the leaf up: the thinking level of the newest
    ``thinking_level_change`` (``"off"`` without a level), the newest model per role of the
    ``model_change`` entries, the default one from the newest assistant turn unless a
    ``model_change`` sets it, and the mode of the newest ``mode_change``. The roles are listed
    as oh-my-pi's object lists them: in the order each was first set on the path."""

    __slots__ = ("ctx", "session", "thinking", "mode", "assistant", "first")

    def __init__(self, ctx: SessionContext, session: Any) -> None:
        self.ctx = ctx
        self.session = session
        self.thinking = False
        self.mode = False
        self.assistant: str | None = None
        """``provider/model`` of the newest assistant turn, once seen."""
        self.first: dict[str, int] = {}
        """Entry index of each role's oldest model change seen so far."""

    def see(self, entry: Any) -> None:
        """The next entry up the path."""
        kind = entry.type
        ctx = self.ctx
        if kind == "message":
            if self.assistant is None and entry.role == "assistant":
                message = entry.message or {}
                self.assistant = f"{_js(message.get('provider'))}/{_js(message.get('model'))}"
        elif kind == "thinking_level_change":
            if not self.thinking:
                self.thinking = True
                level = entry.data.get("thinkingLevel")
                ctx.thinking_level = level if level is not None else "off"
        elif kind == "model_change":
            data = entry.data
            model = data.get("model")
            if model:
                # `role ?? "default"`: only a missing or null role is the default one; an
                # empty role is a role of its own, named "" (oh-my-pi keeps it so)
                raw_role = data.get("role")
                role = "default" if raw_role is None else _js(raw_role)
                ctx.models.setdefault(role, str(model))
                self.first[role] = entry.index  # read upwards: the last one seen is the oldest
        elif kind == "mode_change" and not self.mode:
            self.mode = True
            ctx.mode = str(entry.data.get("mode"))

    def walk_up(self, node: int | None) -> None:
        """Read ``node`` and its ancestors to the root, then settle the models. Every model
        change counts (any role, and an explicit default anywhere beats the assistant turns),
        so the walk goes to the root: entry by entry until an assistant turn is seen, then from
        setting change to setting change."""
        _read_up(self.session, node, self.see, stepwise=lambda: self.assistant is None)
        ctx = self.ctx
        first = self.first
        default = ctx.models.pop("default", None) or self.assistant
        # The default is first set by its oldest explicit change or by the oldest assistant
        # turn before that; the turn is looked for only when another role was set earlier.
        since = first.pop("default", None)
        if default is not None and any(since is None or index < since for index in first.values()):
            turn = self._oldest_turn()
            if turn is not None and (since is None or turn < since):
                since = turn
        ordered = sorted((first[role], role, model) for role, model in ctx.models.items())
        if default is not None:
            ordered.append((-1 if since is None else since, "default", default))
            ordered.sort()
        ctx.models = {role: model for _, role, model in ordered}
        if default is not None:
            provider, _, model_id = default.partition("/")
            ctx.model = {"provider": provider, "modelId": model_id}

    def _oldest_turn(self) -> int | None:
        """Entry index of the oldest assistant turn on the path to the leaf, or None (reads
        the whole path: only for a session whose roles were set before its default)."""
        entries = self.session.entries
        oldest = None
        node: int | None = self.ctx.leaf
        while node is not None:
            entry = entries[node]
            if entry.type == "message" and entry.role == "assistant":
                oldest = node
            node = entry.parent
        return oldest


def item_llm_messages(item: ContextItem, rules: str = "pi") -> list[dict[str, Any]]:
    """The LLM messages the agent sends for one context item, whole (every block), after
    pi's or oh-my-pi's conversion (wrappers, roles, joined shaken results)."""
    from tui_compactor.engine.messages import convert_to_llm
    from tui_compactor.engine.omp_messages import convert_to_llm_omp

    convert = convert_to_llm_omp if rules == "omp" else convert_to_llm
    return convert([item.message])


def item_llm(item: ContextItem, rules: str = "pi") -> list[dict[str, Any]]:
    """What the agent sends for one context item: ``[{role, text}]`` (empty when nothing),
    with ``toolCallIds`` on assistant messages and ``images`` when there are any.

    ``text`` is the concatenated text blocks (summaries inside their wrappers, bash runs as
    the user text the agent writes, shaken results joined under omp rules); images and tool
    calls are not text, so they are counted and listed beside it (a dangling call stripped
    under omp rules is not listed). ``context --json`` and the app's Context view both show
    this.
    """
    return [llm_message_text(message) for message in item_llm_messages(item, rules)]


def llm_message_text(message: dict[str, Any]) -> dict[str, Any]:
    """``{role, text}`` of one converted LLM message (``item_llm``'s unit), plus the ids of
    the tool calls it sends (assistant) and how many images (when any)."""
    from tui_compactor.engine.omp_messages import llm_text

    role = str(message.get("role"))
    out: dict[str, Any] = {"role": role, "text": llm_text(message)}
    content = message.get("content")
    blocks = (
        [block for block in content if isinstance(block, dict)] if isinstance(content, list) else []
    )
    if role == "assistant":
        out["toolCallIds"] = [
            block.get("id") for block in blocks if block.get("type") == "toolCall"
        ]
    images = sum(1 for block in blocks if block.get("type") == "image")
    if images:
        out["images"] = images
    return out


def _counted_as(item: ContextItem, counter: TokenCounter, cache: TokenCache | None) -> str:
    """How an item's tokens are counted (the one rule): ``held`` (the entry's count in
    ``cache``, counted from the message the item holds), ``entry`` (the entry's count in
    ``cache``), ``fresh`` (its own message counted: the context rewrote or synthesized it,
    omp rules; or no cache of ``counter``). A compaction summary read from its entry (pi's
    rules) is the entry's: counted once in the cache, not again at every walk."""
    if cache is not None and cache.counter is counter and not item.rewritten:
        if item.kind == "message":  # the entry's own message, held by the item once read
            return "held"
        if item.kind != "compaction" or item.role != "compactionSummary" or item.from_entry:
            return "entry"
    return "fresh"


def item_tokens(item: ContextItem, counter: TokenCounter, cache: TokenCache | None) -> int:
    """Tokens of an item's message: the entry's cached count, or a fresh count when the
    context rewrote or synthesized the message (omp rules)."""
    return items_tokens([item], counter, cache)[0]


def items_tokens(
    items: Sequence[ContextItem], counter: TokenCounter, cache: TokenCache | None
) -> list[int]:
    """``item_tokens`` of each of ``items``, every message among them not counted yet counted
    in one call of the counter (a counting process: one request, not one an item)."""
    ways = [_counted_as(item, counter, cache) for item in items]
    fresh = [item.message for item, way in zip(items, ways, strict=True) if way == "fresh"]
    held: list[int] = []
    messages: list[Any] = []
    wanted: list[int] = []
    if cache is not None and cache.counter is counter:
        for item, way in zip(items, ways, strict=True):
            if way == "held" and not cache.counted(item.entry_index):
                held.append(item.entry_index)
                messages.append(item.message_once())  # not kept in the session's cache
        entries = [
            item.entry_index for item, way in zip(items, ways, strict=True) if way == "entry"
        ]
        wanted, read = cache.uncounted(entries)
        messages += read
    counts = counter.count_messages(messages + fresh) if messages or fresh else []
    if cache is not None and messages:
        cache.keep_counts(held + wanted, counts[: len(messages)])
    fresh_counts = iter(counts[len(messages) :])
    return [
        next(fresh_counts) if way == "fresh" else cache.message_tokens(item.entry_index)  # type: ignore[union-attr]
        for item, way in zip(items, ways, strict=True)
    ]


def _js(value: Any) -> str:
    """``${value}`` for a JSON value (``undefined`` when missing)."""
    if value is None:
        return "undefined"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def omp_remote_payload(data: dict[str, Any]) -> list[Any] | None:
    """The OpenAI replacement history that replaces the kept messages, or None."""
    remote = remote_info(data)
    return list(remote.items) if remote is not None else None


def _anthropic_payload(data: dict[str, Any]) -> bool:
    preserve = data.get("preserveData")
    slot = preserve.get("anthropicCompaction") if isinstance(preserve, dict) else None
    return (
        isinstance(slot, dict)
        and isinstance(slot.get("provider"), str)
        and bool(slot.get("provider"))
        and isinstance(slot.get("content"), str)
        and bool(slot.get("content"))
    )


def _strip_dangling_calls(items: list[ContextItem]) -> list[ContextItem]:
    """Tool calls without a result in the context are removed from every assistant turn; such a
    turn also loses its redacted thinking and thinking signatures, and vanishes when empty."""
    paired = CallIds(item.message.get("toolCallId") for item in items if item.role == "toolResult")
    out: list[ContextItem] = []
    for item in items:
        if item.role != "assistant":
            out.append(item)
            continue
        message = item.message
        content = message.get("content")
        blocks = content if isinstance(content, list) else []
        dangling = any(
            isinstance(block, dict)
            and block.get("type") == "toolCall"
            and block.get("id") not in paired
            for block in blocks
        )
        if not dangling:
            out.append(item)
            continue
        kept = []
        for block in blocks:
            if not isinstance(block, dict):
                kept.append(block)
                continue
            kind = block.get("type")
            if (kind == "toolCall" and block.get("id") not in paired) or kind == "redactedThinking":
                continue
            if kind == "thinking" and block.get("thinkingSignature"):
                block = {key: value for key, value in block.items() if key != "thinkingSignature"}
            kept.append(block)
        if not kept:
            continue
        rewritten = ContextItem(
            item.role, item.entry_index, item.kind, {**message, "content": kept}, entry=item.entry
        )
        rewritten.rewritten = True
        out.append(rewritten)
    return out


def _strip_failed_omp(items: list[ContextItem]) -> list[ContextItem]:
    """Aborted and error assistant turns are dropped with the tool results paired with them
    (kept when an interrupted-thinking note follows the turn)."""
    out = list(items)
    position = len(out) - 1
    while position >= 0:
        item = out[position]
        message = item.message
        if item.role != "assistant" or message.get("stopReason") not in ("aborted", "error"):
            position -= 1
            continue
        following = out[position + 1] if position + 1 < len(out) else None
        if (
            following is not None
            and following.role == "custom"
            and following.message.get("customType") == "interrupted-thinking"
        ):
            position -= 1
            continue
        content = message.get("content")
        calls = CallIds(
            block.get("id")
            for block in (content if isinstance(content, list) else [])
            if isinstance(block, dict) and block.get("type") == "toolCall"
        )
        del out[position]
        if calls:
            out[position:] = [
                later
                for later in out[position:]
                if not (later.role == "toolResult" and later.message.get("toolCallId") in calls)
            ]
        position -= 1
    return out


def context_tokens_at(
    session: Any,
    leaf_index: int | None,
    counter: TokenCounter,
    cache: TokenCache | None = None,
) -> ContextTokens:
    """``estimate_context_tokens(build_context(...), local=False)`` without holding the context.

    The context's items are made from the leaf backwards and only until the last valid usage,
    so on a huge session only the tail is read. pi rules.
    """
    if cache is None or cache.counter is not counter:
        cache = TokenCache(session, counter)
    if leaf_index is None:
        return ContextTokens(0, 0, 0, None, 0)
    _, compaction, kept = _pi_shape(session, leaf_index)
    entries = session.entries

    def backwards() -> Iterator[int]:
        # Entry indices of the context's items, newest first: an item needs only its entry's
        # usage and cached count here, so none is made (a bash run's record is never read).
        for index in reversed(kept):
            if _contributes(entries[index]):
                yield index
        if compaction is not None:
            yield compaction.index

    def usage(index: int) -> dict[str, Any] | None:
        return _entry_usage(entries[index])

    # Counted ahead of the walk in batches once it asks (a session without usage walks every
    # item); the entries before the usage are never counted.
    walk = cache.walk(backwards(), lambda index: usage(index) is not None)
    return _tokens_backwards(walk, usage, walk.count)


def _tokens_backwards(
    items: Iterator[_T], usage_of: Callable[[_T], dict[str, Any] | None], count: Callable[[_T], int]
) -> ContextTokens:
    """pi's ``estimateContextTokens`` over a context's items given newest first: the last valid
    usage (``usage_of``) plus ``count`` of the items after it; every item counted when there is
    no usage. The items before the usage are only counted (for ``last_usage_index``), never
    measured."""
    trailing = 0
    for item in items:
        usage = usage_of(item)
        if usage is not None:
            before = sum(1 for _ in items)
            used = usage_tokens(usage)
            return ContextTokens(used + trailing, used, trailing, before, None)
        trailing += count(item)
    return ContextTokens(trailing, 0, trailing, None, trailing)


def _anchor_usage(kind: str, role: str | None, holder: Any) -> dict[str, Any] | None:
    """The usage a ``message`` entry's assistant turn anchors the context estimate with (the
    message ``holder`` carries, if valid), or None: the type and role come from the index, so
    no other message is read."""
    if kind != "message" or role != "assistant":
        return None
    return _valid_usage(holder.message)


def _entry_usage(entry: Any) -> dict[str, Any] | None:
    """The usage an entry anchors the context estimate with, or None."""
    return _anchor_usage(entry.type, entry.role, entry)


def _item_usage(item: ContextItem) -> dict[str, Any] | None:
    """The usage a context item anchors the estimate with, or None. The item carries its
    entry's type and role (a rewritten turn keeps them, and its entry's usage), so no entry is
    built for an item that is not an assistant turn."""
    return _anchor_usage(item.kind, item.role, item)


class ContextTally:
    """pi's ``estimateContextTokens`` taken as the items go by in context order, with the pure
    local estimate: a command that shows every item measures them in the same walk."""

    __slots__ = ("_count", "_local", "_usage", "_usage_index", "_trailing")

    def __init__(self) -> None:
        self._count = 0
        self._local = 0
        self._usage = 0
        self._usage_index: int | None = None
        self._trailing = 0

    def add(self, item: ContextItem, tokens: int) -> None:
        """The next item and its ``tokens``."""
        usage = _item_usage(item)
        if usage is not None:
            self._usage = usage_tokens(usage)
            self._usage_index = self._count
            self._trailing = 0
        else:
            self._trailing += tokens
        self._local += tokens
        self._count += 1

    def result(self) -> ContextTokens:
        """The figure for the items added so far."""
        if self._usage_index is None:
            return ContextTokens(self._local, 0, self._local, None, self._local)
        return ContextTokens(
            self._usage + self._trailing,
            self._usage,
            self._trailing,
            self._usage_index,
            self._local,
        )


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
    only the messages after the last usage are counted: fast on huge sessions. A context built
    under omp rules is measured as oh-my-pi measures it (``estimate_context_tokens_omp``).
    """
    if ctx.rules == "omp":
        return estimate_context_tokens_omp(ctx, counter, cache)
    if cache is not None and cache.counter is not counter:
        cache = None
    items = ctx.items
    if not local:  # the items after the usage, counted ahead of the walk once it asks
        walk = CountedWalk(
            reversed(items),
            lambda part: items_tokens(part, counter, cache),
            lambda item: _item_usage(item) is not None,
        )
        return _tokens_backwards(walk, _item_usage, walk.count)
    counts = items_tokens(items, counter, cache)  # every item is counted: one call
    positions = range(len(items) - 1, -1, -1)
    tokens = _tokens_backwards(iter(positions), lambda p: _item_usage(items[p]), counts.__getitem__)
    if tokens.local_estimate is None:
        tokens = ContextTokens(
            tokens.tokens, tokens.usage_tokens, tokens.trailing_tokens, tokens.last_usage_index,
            sum(counts),
        )  # fmt: skip
    return tokens


def _has_context_usage(usage: dict[str, Any]) -> bool:
    """oh-my-pi's ``hasContextTokenUsage``."""
    from tui_compactor.engine.plan import omp_usage_tokens

    context = usage.get("contextTokens")
    if isinstance(context, (int, float)) and not isinstance(context, bool) and context > 0:
        return True
    parts = [usage.get(key) for key in ("input", "cacheRead", "cacheWrite")]
    if all(isinstance(part, (int, float)) and not isinstance(part, bool) for part in parts):
        if sum(parts) > 0:  # type: ignore[arg-type]
            return True
    output = usage.get("output")
    return isinstance(output, (int, float)) and omp_usage_tokens(usage) > output


def threshold_context_tokens(
    session: Any,
    leaf_index: int | None,
    counter: TokenCounter,
    rules: str,
    cache: TokenCache | None = None,
) -> ContextTokens:
    """The context size checked against the compaction threshold at ``leaf_index``: the last
    valid usage plus an estimate of what follows it, over the context the rules build (as
    ``context``, the app's gauge and oh-my-pi's ``estimateTranscriptTokens`` measure it; pi
    reads only the tail). Under omp rules every item is counted (the figure carries the local
    estimate of the whole context), each from ``cache`` unless the context rewrote it: after a
    plan on the same cache the region's counts are there already."""
    if rules == "omp":
        context = build_context(session, leaf_index, rules=rules)
        return estimate_context_tokens_omp(context, counter, cache)
    return context_tokens_at(session, leaf_index, counter, cache)


def estimate_context_tokens_omp(
    ctx: SessionContext, counter: TokenCounter, cache: TokenCache | None = None
) -> ContextTokens:
    """oh-my-pi's ``estimateTranscriptTokens``: the newest usable usage plus a local count of
    the messages after it (and the pure local estimate of everything). Each item is counted
    as ``context`` counts it (``item_tokens``: the entry's count in ``cache`` unless the
    context rewrote or synthesized the message)."""
    from tui_compactor.engine.plan import omp_usage_tokens

    counts = items_tokens(ctx.items, counter, cache)
    anchor = None
    for position in range(len(ctx.items) - 1, -1, -1):
        item = ctx.items[position]
        if item.role != "assistant":
            continue
        usage = _valid_usage(item.message)
        if usage is not None and _has_context_usage(usage):
            anchor = (position, omp_usage_tokens(usage))
            break
    local = sum(counts)
    if anchor is None:
        return ContextTokens(local, 0, local, None, local)
    position, used = anchor
    trailing = sum(counts[position + 1 :])
    return ContextTokens(used + trailing, used, trailing, position, local)
