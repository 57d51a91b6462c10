"""Views computed completely off the UI thread: each function reads a ``Snapshot`` and returns
plain data the front-end only draws (no lazy work left for the UI thread).

* ``ContextWalk``: the context at a node walked once, each item with its tokens, and its token
  figure tallied on the way (``context`` and the gauge share it).
* ``gauge_at``: the context at a node, its size against the window, and one row per block
  (``ContextBlocks``: flat arrays, not an object per block).
* ``chart_points``: context size after every assistant turn on the active path.
* ``plan_report``: a plan with its regions, region tokens and file lists already computed.
* ``previous_summary``: a compaction's summary and the one it updated.
"""

from __future__ import annotations

import itertools
from array import array
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, overload

from tui_compactor.engine.context import (
    ContextItem,
    ContextTally,
    ContextTokens,
    estimate_context_tokens,
    item_llm_messages,
    items_tokens,
    llm_message_text,
    stream_context,
    usage_tokens,
)
from tui_compactor.engine.messages import content_blocks, message_text
from tui_compactor.engine.methods import (
    SNAPCOMPACT_FRAME_TOKENS,
    compaction_method,
    remote_info,
)
from tui_compactor.engine.settings import effective_reserve, should_compact, threshold_tokens
from tui_compactor.textsafe import sanitize

if TYPE_CHECKING:
    from tui_compactor.engine.plan import CompactionPlan
    from tui_compactor.engine.tokens import TokenCache, TokenCounter
    from tui_compactor.workbench.handle import Snapshot
    from tui_compactor.workbench.settings import Settings

__all__ = [
    "Block",
    "MeasureCancelled",
    "ChartData",
    "ContextBlocks",
    "ContextWalk",
    "GaugeData",
    "PlanReport",
    "SentBlock",
    "chart_points",
    "gauge_at",
    "plan_report",
    "previous_summary",
]

BLOCK_LABELS = {
    "compactionSummary": "summary",
    "branchSummary": "branch",
    "toolResult": "tool",
    "bashExecution": "bash",
}
"""Message role -> the short name of a context block."""


@dataclass(slots=True, frozen=True)
class SentBlock:
    """One context item as the agent sends it (the Context tab's "as sent" view)."""

    entry_index: int
    label: str
    """The block's short name (as in ``GaugeData.blocks``)."""
    tokens: int
    excluded: bool
    """Listed in the context but never sent (a ``!!`` bash run)."""
    messages: list[dict[str, Any]]
    """``engine.context.item_llm`` of the item: the ``{role, text}`` messages sent, exactly
    what ``context --json`` prints as ``llm`` (empty when nothing is sent)."""
    extras: list[str]
    """Per message: what it carries besides text (tool calls, images, thinking), "" if none."""


def non_text_parts(message: dict[str, Any], *, frames: bool = False) -> str:
    """What an LLM message sends besides its text blocks, in words ("" when nothing);
    ``frames``: its images are a snapcompact archive's frames (oh-my-pi charges each)."""
    calls: list[str] = []
    counts: dict[str, int] = {}
    for block in content_blocks(message.get("content")):
        kind = str(block.get("type"))
        if kind == "text":
            continue
        if kind == "toolCall":
            calls.append(str(block.get("name") or "?"))
        else:
            counts[kind] = counts.get(kind, 0) + 1
    parts = [f"tool call {name}" for name in calls]
    for kind, count in counts.items():
        if kind == "image" and frames:
            parts.append(
                f"{count} snapcompact image frame{'s' if count > 1 else ''} "
                f"({SNAPCOMPACT_FRAME_TOKENS:,} tokens each)"
            )
        else:
            parts.append(f"{count} {kind} block{'s' if count > 1 else ''}")
    return ", ".join(parts)


WALK_BATCH = 512
"""Items of a context walked (``ContextWalk.items``) whose messages not counted yet are
counted in one call of the counter: one request to a counting process, not one an item."""


class ContextWalk:
    """The context at a leaf, walked once in context order: each item with its tokens, and the
    context's token figure tallied on the way. Under pi rules the items are made as they are
    consumed (``stream_context``), so a 200,000-item context is never held; oh-my-pi's rules
    need the whole context, which they build, and measure it as oh-my-pi does. ``context`` and
    the app's gauge both walk it: their figures agree by construction.
    """

    def __init__(
        self,
        session: Any,
        leaf: int,
        counter: TokenCounter,
        rules: str,
        cache: TokenCache | None = None,
    ) -> None:
        from tui_compactor.engine.tokens import TokenCache

        self.session, self.leaf, self.counter, self.rules = session, leaf, counter, rules
        self.ctx, self._items = stream_context(session, leaf, rules=rules)
        self.cache = (
            cache
            if cache is not None and cache.counter is counter
            else (TokenCache(session, counter))
        )
        self._tally = None if rules == "omp" else ContextTally()
        self._tokens = (
            estimate_context_tokens(self.ctx, counter, self.cache) if self._tally is None else None
        )
        self.length = 0
        """Items walked so far."""

    def items(self) -> Iterator[tuple[ContextItem, int]]:
        """(item, its tokens) in context order, once; each item keeps its message while it is
        used (``ContextItem.hold``: a lazily loaded record is read once)."""
        tally = self._tally
        # WALK_BATCH items at a time: those not counted yet are counted in one call of the
        # counter (a counting process: one request, not one an item). Each item holds its
        # message only once it is yielded, and the walk lets go of it then: on a lazily read
        # session a batch never keeps up to WALK_BATCH parsed messages alive at once.
        pending = iter(self._items)
        while batch := list(itertools.islice(pending, WALK_BATCH)):
            counted = deque(zip(batch, items_tokens(batch, self.counter, self.cache), strict=True))
            del batch
            while counted:
                item, tokens = counted.popleft()
                item.hold()
                if tally is not None:
                    tally.add(item, tokens)
                self.length += 1
                yield item, tokens
            del item

    @property
    def tokens(self) -> ContextTokens:
        """The context's figure (pi rules: of the items walked so far)."""
        if self._tally is not None:
            return self._tally.result()
        assert self._tokens is not None
        return self._tokens


Block = tuple[str, str, int, int | None]
"""One block of a context: (label, preview, tokens, entry index)."""


class ContextBlocks(Sequence[Block]):
    """The blocks of one context, compact: entry indices, tokens and label codes in flat arrays
    and the previews packed in one UTF-8 buffer. A 200,000-block context takes a few MB, where
    a list of tuples of strings and boxed ints took ~45 MB; a block's tuple is made when read.
    """

    __slots__ = (
        "_entries",
        "_tokens",
        "_labels",
        "_names",
        "_codes",
        "_text",
        "_ends",
        "max_tokens",
        "max_entry_index",
    )

    def __init__(self, blocks: Sequence[Block] = ()) -> None:
        self._entries = array("q")
        self._tokens = array("q")
        self._labels = array("l")
        self._names: list[str] = []
        self._codes: dict[str, int] = {}
        self._text = bytearray()
        self._ends = array("q")
        self.max_tokens = 0
        """The largest block's tokens (0 when empty)."""
        self.max_entry_index = -1
        """The largest entry index of a block (-1 when empty or none has one)."""
        for block in blocks:
            self.append(*block)

    def append(self, label: str, preview: str, tokens: int, entry_index: int | None) -> None:
        """Add the next block."""
        code = self._codes.get(label)
        if code is None:
            code = self._codes[label] = len(self._names)
            self._names.append(label)
        self._labels.append(code)
        self._tokens.append(tokens)
        self._entries.append(-1 if entry_index is None else entry_index)
        self._text += preview.encode("utf-8", "surrogatepass")
        self._ends.append(len(self._text))
        self.max_tokens = max(self.max_tokens, tokens)
        if entry_index is not None:
            self.max_entry_index = max(self.max_entry_index, entry_index)

    @property
    def labels(self) -> list[str]:
        """Every distinct label, in order of first use."""
        return list(self._names)

    def __len__(self) -> int:
        return len(self._entries)

    @overload
    def __getitem__(self, position: int) -> Block: ...

    @overload
    def __getitem__(self, position: slice) -> list[Block]: ...

    def __getitem__(self, position: int | slice) -> Block | list[Block]:
        if isinstance(position, slice):
            return [self[one] for one in range(*position.indices(len(self)))]
        if position < 0:
            position += len(self)
        if not 0 <= position < len(self):
            raise IndexError(position)
        start = self._ends[position - 1] if position else 0
        preview = self._text[start : self._ends[position]].decode("utf-8", "surrogatepass")
        entry = self._entries[position]
        return (
            self._names[self._labels[position]],
            preview,
            self._tokens[position],
            None if entry < 0 else entry,
        )

    def __repr__(self) -> str:
        return f"ContextBlocks({len(self)} blocks)"


@dataclass(slots=True)
class GaugeData:
    """Everything the gauge and the Context tab draw for one node."""

    entry_index: int
    tokens: int
    """Estimated context tokens at the node (usage-based where the engine could anchor it)."""
    local_estimate: int
    """The purely local estimate, for comparison."""
    usage_tokens: int | None
    window: int | None
    reserve: int | None
    threshold: int | None
    keep_recent: int
    should_compact: bool
    blocks: Sequence[Block] | None
    """What the model sees: (role/kind label, preview text, tokens, entry index) per block
    (``ContextBlocks``); only listed when asked (``gauge_at``'s ``blocks``: the Context tab is
    shown), None otherwise: the gauge needs the figure, not 200,000 previews."""
    window_assumed: bool = False
    """The window is the default guess, not the user's setting (pi reads it from the model)."""
    window_model: str | None = None
    """The session's model id the window was looked up from (no ``--window`` given)."""
    generation: int = 0
    """The session generation this was measured at."""
    sent: list[SentBlock] | None = None
    """Every context item as the agent sends it; only measured when asked (``gauge_at``'s
    ``sent``), None otherwise."""
    rules: str = "pi"
    """The rule set the context was rebuilt under (``sent`` follows it)."""


@dataclass(slots=True)
class ChartData:
    """Context size along the active path."""

    points: list[tuple[int, int]]
    """(entry index, context tokens) in path order."""
    compactions: list[int]
    """Positions in ``points`` right after which a compaction happened."""
    window: int | None
    threshold: int | None
    generation: int = 0


@dataclass(slots=True)
class PlanReport:
    """A compaction plan with everything a front-end shows already computed."""

    plan: CompactionPlan
    generation: int
    """The session generation the plan was made at (a write re-validates against it)."""
    file_leaf: int | None
    """The file's leaf at that generation."""
    refusal: str | None
    """Why it may not be run or accepted (``plans.run_refusal``); None when it may."""
    regions: dict[int, str] = field(default_factory=dict)
    """Entry index -> region (summarize / turn_prefix / keep / metadata)."""
    cut_entry: int | None = None


class MeasureCancelled(Exception):
    """``gauge_at`` stopped because its ``cancelled`` said the measure is no longer wanted."""


CANCEL_CHECK_EVERY = 4096
"""Items ``gauge_at`` walks between two looks at its ``cancelled`` (a 200k-item context: ~50)."""

BlockDescriber = Callable[[Any, dict[str, Any], Any, str], tuple[str, str]]
"""(context item, its message, its entry, the rules) -> (short label, one sanitized preview
line)."""


def describe_block(item: Any, message: dict[str, Any], entry: Any, rules: str) -> tuple[str, str]:
    """The plain label (role) and preview of a context block."""
    role = message.get("role")
    label = BLOCK_LABELS.get(str(role), str(role or item.kind or "?"))
    preview = sanitize(message_text(message, brief=True), single_line=True, max_len=200)
    return label, preview


def gauge_at(
    snapshot: Snapshot,
    entry_index: int,
    settings: Settings,
    cache: TokenCache,
    *,
    describe: BlockDescriber = describe_block,
    blocks: bool = True,
    sent: bool = False,
    cancelled: Callable[[], bool] | None = None,
) -> GaugeData:
    """Measure the context the model would receive at ``entry_index``.

    With ``blocks`` each block is listed (``GaugeData.blocks``), named and previewed by
    ``describe`` (the app passes its richer wording); with ``sent`` every item's LLM messages
    are converted too (``GaugeData.sent``). Without either, only the figure is measured.
    ``cancelled`` is asked every ``CANCEL_CHECK_EVERY`` items; once it says True the walk stops
    with ``MeasureCancelled`` (a 200k-item walk the user moved away from costs no more CPU).
    """
    session = snapshot.session
    walk = ContextWalk(session, entry_index, cache.counter, settings.rules, cache)
    window = settings.context_window
    engine = settings.compaction()
    listed = ContextBlocks() if blocks or sent else None
    sent_blocks: list[SentBlock] | None = [] if sent else None
    for position, (item, tokens) in enumerate(walk.items()):
        if cancelled is not None and position % CANCEL_CHECK_EVERY == 0 and cancelled():
            raise MeasureCancelled(entry_index)
        if listed is None or (item.excluded and sent_blocks is None):
            continue
        message = item.message if isinstance(item.message, dict) else {}
        entry = session.entries[item.entry_index]
        label, preview = describe(item, message, entry, settings.rules)
        if sent_blocks is not None:
            converted = item_llm_messages(item, settings.rules)
            summary = entry.type == "compaction" and item.role == "compactionSummary"
            frames = summary and compaction_method(entry.data, settings.rules) == "snapcompact"
            extras = [non_text_parts(one, frames=frames) for one in converted]
            remote = remote_info(entry.data) if summary else None
            if remote is not None and extras:
                replaced = (
                    f"{len(remote.items)} provider item(s) for {remote.provider} instead "
                    "of the kept messages (the provider's own history, opaque)"
                )
                extras[0] = ", ".join(part for part in (replaced, extras[0]) if part)
            sent_blocks.append(
                SentBlock(
                    item.entry_index,
                    label,
                    tokens,
                    item.excluded,
                    [llm_message_text(one) for one in converted],
                    extras,
                )
            )
        if not item.excluded:
            listed.append(label, preview, tokens, item.entry_index)
    estimate = walk.tokens
    local = estimate.local_estimate
    return GaugeData(
        entry_index=entry_index,
        tokens=estimate.tokens,
        local_estimate=local if local is not None else estimate.tokens,
        usage_tokens=estimate.usage_tokens if estimate.last_usage_index is not None else None,
        window=window,
        reserve=effective_reserve(window, engine) if window else None,
        threshold=threshold_tokens(window, engine) if window else None,
        keep_recent=settings.keep_recent_tokens,
        should_compact=window is not None and should_compact(estimate.tokens, window, engine),
        blocks=listed,
        window_assumed=not settings.window_configured and settings.window_model is None,
        window_model=settings.window_model,
        generation=snapshot.generation,
        sent=sent_blocks,
        rules=settings.rules,
    )


CHART_READ_CHUNK = 512
"""Assistant records ``chart_points`` reads at once (``Session.records_once``)."""


def chart_points(snapshot: Snapshot, settings: Settings) -> ChartData:
    """Context size after every assistant turn on the active path (from usage data).

    Every assistant record of the path is read once (``Session.records_once``, a run of lines
    a read), not through the session's cache of parsed records: on the 100k session that is
    ~25k records, which pushed out the records the app shows and, parsed on a worker while the
    cache freed as many, piled up in the collector's youngest generation without a collection
    until the UI thread's next frame scanned them (~24k containers, 8-15 ms).
    """
    session = snapshot.session
    entries = session.entries
    leaf = snapshot.leaf
    path = session.path_to(leaf) if leaf is not None else []
    # Known from the index (type, role): no record load for the others.
    turns = [i for i in path if entries[i].type == "message" and entries[i].role == "assistant"]
    totals: dict[int, int] = {}
    for start in range(0, len(turns), CHART_READ_CHUNK):
        chunk = turns[start : start + CHART_READ_CHUNK]
        for index, record in zip(chunk, session.records_once(chunk), strict=True):
            message = record.get("message")
            usage = message.get("usage") if isinstance(message, dict) else None
            if isinstance(usage, dict):
                total = usage_tokens(usage)
                if total:
                    totals[index] = total
    points: list[tuple[int, int]] = []
    compactions: list[int] = []
    for index in path:
        if entries[index].type == "compaction":
            if points:
                compactions.append(len(points) - 1)
        elif index in totals:
            points.append((index, totals[index]))
    window = settings.context_window
    threshold = threshold_tokens(window, settings.compaction()) if window else None
    return ChartData(points, compactions, window, threshold, snapshot.generation)


def plan_report(
    snapshot: Snapshot,
    leaf: int,
    settings: Settings,
    cut: int | None,
    cache: TokenCache | None = None,
) -> PlanReport:
    """Plan at ``leaf`` and compute what the plan pane and the tree show (regions, region
    tokens, file lists), so nothing lazy is left for the UI thread."""
    # Imported with the first plan: the app's first screen never plans (``engine.plan``).
    from tui_compactor.workbench.plans import make_plan, run_refusal

    plan = make_plan(snapshot.session, leaf, settings, cut, cache=cache)
    report = PlanReport(plan, snapshot.generation, snapshot.leaf, run_refusal(plan, settings))
    if plan.prepared:
        _ = plan.region_tokens, plan.file_ops, plan.messages_to_summarize
        _ = plan.turn_prefix_messages, plan.recent_messages
        report.regions = plan.regions()
        report.cut_entry = plan.branch[plan.first_kept_index]
    return report


def previous_summary(snapshot: Snapshot, compaction: int) -> tuple[str, str] | None:
    """(previous summary, this summary) of compaction ``compaction``; None if it is not one.

    The previous summary is that of the nearest compaction above it ("" when none).
    """
    session = snapshot.session
    entry = session.entries[compaction]
    if entry.type != "compaction":
        return None
    previous = entry.parent
    while previous is not None and session.entries[previous].type != "compaction":
        previous = session.entries[previous].parent
    old: Any = session.entries[previous].data.get("summary") if previous is not None else ""
    new: Any = entry.data.get("summary")
    return (old if isinstance(old, str) else "", new if isinstance(new, str) else "")
