"""Compaction plans: what ``prepareCompaction`` would summarize and keep, for any leaf.

Rules (``settings.rules``):

* ``pi`` (default, pi 0.73.1 exactly): the region starts at the previous compaction's
  ``firstKeptEntryId`` (or right after that compaction when the id is not on the branch), so
  the messages the previous compaction kept are summarized again together with the previous
  summary. ``tokensBefore`` is pi's ``estimateContextTokens`` of the context at the leaf.
  A plan with nothing to summarize is still a plan (pi would still call the model).
* ``omp`` (oh-my-pi 18.2.3, ``_prepare_omp``): the region also starts at the previous local
  compaction's ``firstKeptEntryId`` (right after a remote one, or after a newer
  ``reset_boundary``, which also drops the previous summary); the cut is
  ``find_cut_point_omp`` over the message-bearing entries of the region; ``tokensBefore`` is
  the newest usable assistant usage alone; keep-recent is calibrated by the usage/estimate
  ratio unless ``settings.calibrate`` is False; read selectors are stripped and URL paths
  skipped in file lists; only ``fromExtension`` keeps a previous compaction's details out; a
  plan with neither history nor turn prefix to summarize, or on a branch ending in a
  compaction, is refused.

``cut=entry_index`` plans a manual cut instead of the computed one (under either rule set
everything else is decided as for the computed cut). A cut that is off the
branch, before the region, at a tool result or at an entry that cannot start the kept part is
refused (``prepared`` False, ``reason`` says why, ``nearest_cut_points`` offers others).
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections.abc import Iterator, MutableSequence, Sequence
from dataclasses import dataclass, field
from typing import Any

from tui_compactor.engine.context import (
    ContextTokens,
    context_tokens_at,
    last_assistant_usage,
)
from tui_compactor.engine.cutpoint import (
    CutPoint,
    cut_point_at,
    find_cut_point,
    find_cut_point_omp,
    valid_cut_points,
)
from tui_compactor.engine.fileops import (
    FileOps,
    add_details,
    extract_file_ops,
    written_by_extension,
)
from tui_compactor.engine.messages import LazyMessage, is_remote_compaction, message_from_entry
from tui_compactor.engine.settings import CompactionSettings
from tui_compactor.engine.tokens import TokenCache, TokenCounter
from tui_compactor.session.table import EntryView
from tui_compactor.textsafe import sanitize

__all__ = ["PlanMessage", "CompactionPlan", "prepare_compaction", "omp_usage_tokens"]

REGION_BATCH = 1024
"""Messages of a plan's region counted in one call of the counter (``region_tokens``): one
request to a counting process, not one a message."""

NOTHING_TO_SUMMARIZE = "nothing to summarize (the cut is at the start of the region)"
"""Why oh-my-pi prepares no plan when neither history nor a turn prefix precedes the cut."""


def _is_message(entry: Any) -> bool:
    """Whether a branch entry is one of a plan's messages (compactions, metadata and a message
    entry without a message object are not), told from the entry's index columns: the same
    entries oh-my-pi's cut walks (its ``getMessageFromEntry`` gives them a message)."""
    kind: str = entry.type
    if kind == "message":
        return entry.role is not None or entry.message is not None
    return kind == "custom_message" or kind == "branch_summary"


class PlanMessage(LazyMessage):
    """A message in a plan, with the entry it came from (read from the entry on first use)."""

    __slots__ = ("entry_index", "branch_index")

    def __init__(
        self,
        entry_index: int,
        branch_index: int,
        message: dict[str, Any] | None = None,
        *,
        entry: Any = None,
    ) -> None:
        self.entry_index = entry_index
        self.branch_index = branch_index
        LazyMessage.__init__(self, message, entry)

    def __repr__(self) -> str:
        return f"PlanMessage(entry {self.entry_index}, branch {self.branch_index})"


@dataclass(slots=True)
class CompactionPlan:
    """The outcome of ``prepare_compaction`` (branch indices unless the name says entry)."""

    prepared: bool
    reason: str | None
    leaf: int | None
    branch: list[int]
    """Entry indices root..leaf."""
    rules: str
    counter_name: str
    keep_recent_tokens: int
    """The keep-recent value asked for."""
    effective_keep_recent_tokens: int
    """After oh-my-pi's calibration (equal to ``keep_recent_tokens`` otherwise)."""
    _cache: TokenCache = field(repr=False)
    """The session's token counts (and the session: ``_cache.session``)."""
    boundary_start: int = 0
    boundary_end: int = 0
    previous_compaction_index: int = -1
    reset_boundary_index: int = -1
    """The latest ``reset_boundary`` on the branch (omp rules), -1 for none."""
    region_message_count: int = 0
    """Message-bearing entries from the boundary to the leaf (the list the cut walks, omp)."""
    calibration: tuple[int, int, float] | None = None
    """(prompt tokens of the newest usage, estimate of the region, ratio) when calibrated."""
    previous_preserve_data_keys: list[str] = field(default_factory=list)
    first_kept_index: int = -1
    first_kept_entry_id: str | None = None
    turn_start_index: int = -1
    is_split_turn: bool = False
    tokens_before: int = 0
    context_tokens: ContextTokens | None = None
    previous_summary: str | None = None
    previous_from_extension: bool = False
    valid_cut_points: MutableSequence[int] = field(default_factory=list)
    nearest_cut_points: list[int] = field(default_factory=list)
    manual_cut: bool = False
    warnings: list[str] = field(default_factory=list)
    _region_tokens: dict[str, int] | None = field(default=None, repr=False)
    _file_ops: FileOps | None = field(default=None, repr=False)
    _regions: dict[int, str] | None = field(default=None, repr=False)
    _path: Sequence[Any] | None = field(default=None, repr=False)
    _lists: dict[str, list[PlanMessage]] = field(default_factory=dict, repr=False)

    def _messages(self, first: int, stop: int) -> Iterator[tuple[int, Any]]:
        """Branch positions and entries of the messages of ``[first, stop)`` (compactions and
        metadata skipped), told from the entries' index without building a message: the one
        rule for which branch entries a region's messages are."""
        path = self._path
        if path is None or first < 0:
            return
        for position in range(first, stop):
            entry = path[position]
            if _is_message(entry):
                yield position, entry

    def _bounds(self, name: str) -> tuple[int, int]:
        """The branch range of region ``name`` (``summarize``, ``turn_prefix``, ``keep``);
        empty when the plan has no such part."""
        if name == "turn_prefix":
            if not self.is_split_turn:
                return (0, 0)
            return (self.turn_start_index, self.first_kept_index)
        if self.first_kept_index < 0:
            return (0, 0)
        if name == "summarize":
            return (self.boundary_start, self.history_end)
        return (self.first_kept_index, self.boundary_end)

    def _collect(self, name: str) -> list[PlanMessage]:
        """The messages of region ``name`` (built on first use, then cached)."""
        cached = self._lists.get(name)
        if cached is not None:
            return cached
        branch = self.branch
        out = [
            PlanMessage(branch[position], position, None, entry=entry)
            for position, entry in self._messages(*self._bounds(name))
        ]
        self._lists[name] = out
        return out

    def message_count(self, name: str) -> int:
        """How many messages region ``name`` holds (without building them)."""
        cached = self._lists.get(name)
        if cached is not None:
            return len(cached)
        return sum(1 for _ in self._messages(*self._bounds(name)))

    def _region_entries(self, name: str) -> Iterator[int]:
        """Entry indices of region ``name``'s messages, in order."""
        branch = self.branch
        for position, _ in self._messages(*self._bounds(name)):
            yield branch[position]

    @property
    def messages_to_summarize(self) -> list[PlanMessage]:
        """Messages of ``[boundary_start, history_end)`` (compaction entries skipped)."""
        return self._collect("summarize")

    @property
    def turn_prefix_messages(self) -> list[PlanMessage]:
        """Messages of ``[turn_start_index, first_kept_index)`` when the turn is split."""
        return self._collect("turn_prefix")

    @property
    def recent_messages(self) -> list[PlanMessage]:
        """Messages from the first kept entry to the leaf."""
        return self._collect("keep")

    def _has_messages(self, first: int, stop: int) -> bool:
        return next(self._messages(max(first, 0), stop), None) is not None

    _previous_details: Any = field(default=None, repr=False)

    @property
    def file_ops(self) -> FileOps:
        """Files read/written/edited: the previous compaction's details (unless an extension
        made it), then the tool calls of the summarized messages and the turn prefix."""
        if self._file_ops is None:
            self._read_regions()
        assert self._file_ops is not None
        return self._file_ops

    def _read_regions(self) -> None:
        """``region_tokens`` and ``file_ops`` in one pass over the regions' messages: the
        record of a summarized assistant turn is read once for both (its count, when not
        cached yet, and its tool calls), not once for each."""
        ops = FileOps()
        if self.previous_compaction_index >= 0 and not self.previous_from_extension:
            add_details(self._previous_details, ops, self.rules)
        cache, branch, rules = self._cache, self.branch, self.rules
        totals: dict[str, int] = {}
        for name in ("summarize", "turn_prefix", "keep"):
            total = 0
            # The messages not counted yet are counted REGION_BATCH at a time, each batch in
            # one call of the counter (a counting process: one request, not one a message).
            messages = iter(self._messages(*self._bounds(name)))
            while batch := list(itertools.islice(messages, REGION_BATCH)):
                held: dict[int, Any] = {}
                others: list[int] = []
                for position, entry in batch:
                    index = branch[position]
                    if name != "keep" and entry.type == "message" and entry.role == "assistant":
                        message = message_from_entry(entry.data_once()) or {}
                        extract_file_ops(message, ops, rules)
                        held[index] = message
                    else:
                        others.append(index)
                cache.count_entries(others, held)
                total += sum(cache.message_tokens(branch[position]) for position, _ in batch)
            totals[name] = total
        self._file_ops = ops
        if self._region_tokens is None:
            self._region_tokens = totals

    # -- derived ---------------------------------------------------------------------------

    @property
    def history_end(self) -> int:
        """End (exclusive) of the history that is summarized."""
        return self.turn_start_index if self.is_split_turn else self.first_kept_index

    @property
    def is_empty(self) -> bool:
        """Nothing to summarize and no turn prefix."""
        if self.first_kept_index < 0:
            return True
        if self._has_messages(self.boundary_start, self.history_end):
            return False
        return not (
            self.is_split_turn and self._has_messages(self.turn_start_index, self.first_kept_index)
        )

    @property
    def has_turn_prefix(self) -> bool:
        """A split turn whose start lies before the cut (there is a prefix to summarize)."""
        return self.is_split_turn and 0 <= self.turn_start_index < self.first_kept_index

    def kind_at(self, branch_index: int) -> str:
        """Readable kind of the entry at ``branch_index``: ``bash execution``, ``user message``…
        (one line, safe to print: the type and role are the session's own text)."""
        if not 0 <= branch_index < len(self.branch):
            return "entry"
        entry = self._cache.session.entries[self.branch[branch_index]]
        if entry.type == "message":
            role = str(entry.role or "message")
            kind = _ROLE_KINDS.get(role, f"{role} message")
        else:
            kind = str(entry.type).replace("_", " ")
        return sanitize(kind, single_line=True)

    @property
    def keep_recent_text(self) -> str:
        """``keep-recent 20000``, with ``(calibrated to 17990)`` when oh-my-pi's calibration
        changed it: the head of a plan in ``plan`` and a line of the app's plan pane."""
        text = f"keep-recent {self.keep_recent_tokens}"
        if self.effective_keep_recent_tokens != self.keep_recent_tokens:
            text += f" (calibrated to {self.effective_keep_recent_tokens})"
        return text

    @property
    def split_turn_note(self) -> str | None:
        """One line explaining the split turn (for text output and the UI); None if not split.

        pi calls a plan split whenever the cut is not a user message and a turn start is found,
        which includes a cut that itself starts a turn (a bash execution, custom message or
        branch summary): then there is no prefix, and the note says so.
        """
        if not self.prepared or not self.is_split_turn:
            return None
        if not self.has_turn_prefix:
            kind = self.kind_at(self.first_kept_index)
            return f"cut at {_article(kind)} {kind} that starts a turn: no turn prefix to summarize"
        start_kind = self.kind_at(self.turn_start_index)
        count = self.message_count("turn_prefix")
        messages = (
            "its 1 message before the cut is"
            if count == 1
            else f"its {count} messages before the cut are"
        )
        return (
            f"split turn: it starts at branch index {self.turn_start_index} ({start_kind}); "
            f"{messages} summarized as the turn prefix"
        )

    def regions(self) -> dict[int, str]:
        """Entry index -> ``before`` | ``summarize`` | ``turn_prefix`` | ``keep`` |
        ``metadata`` for the whole branch (what the tree colours its rows by): the region whose
        message list holds the entry (the lists' own bounds and rule, so the marks and the
        counts agree), else ``metadata``. Made once, in one pass over each region."""
        if self._regions is None:
            branch, start = self.branch, self.boundary_start
            rest = "keep" if self.first_kept_index < 0 else "metadata"
            out = {index: "before" if p < start else rest for p, index in enumerate(branch)}
            if self.first_kept_index >= 0:
                for name in ("turn_prefix", "summarize", "keep"):
                    for position, _ in self._messages(*self._bounds(name)):
                        if position >= start:
                            out[branch[position]] = name
            self._regions = out
        return self._regions

    def region_of(self, branch_index: int) -> str:
        """The region of the entry at ``branch_index`` (``regions``)."""
        return self.regions()[self.branch[branch_index]]

    @property
    def region_tokens(self) -> dict[str, int]:
        """Token totals of the summarized history, the turn prefix and the kept messages."""
        if self._region_tokens is None:
            self._read_regions()
        assert self._region_tokens is not None
        return self._region_tokens

    @property
    def tokens_after(self) -> int:
        """Estimated context right after compaction, not counting the new summary itself."""
        return self.region_tokens["keep"]

    def entry_ids(self, messages: list[PlanMessage]) -> list[str]:
        """Source entry ids of ``messages``."""
        return self._ids_of([item.entry_index for item in messages])

    def _ids_of(self, indices: list[int]) -> list[str]:
        """The ids of the entries at ``indices``."""
        entries = self._cache.session.entries
        return [entries[index].id for index in indices]

    def to_json(self) -> dict[str, Any]:
        """One ``plan --json`` row (the reference's field names where it has them)."""
        row: dict[str, Any] = {
            "keepRecentTokens": self.keep_recent_tokens,
            "effectiveKeepRecentTokens": self.effective_keep_recent_tokens,
            "rules": self.rules,
            "tokens": self.counter_name,
            "prepared": self.prepared,
            "reason": self.reason,
            "leafIndex": self.leaf,
            "leafId": self._id_at_entry(self.leaf),
            "branchLength": len(self.branch),
            "boundaryStart": self.boundary_start,
            "boundaryEnd": self.boundary_end,
            "previousCompactionIndex": self.previous_compaction_index,
            "manualCut": self.manual_cut,
            "warnings": list(self.warnings),
        }
        if self.rules == "omp":
            calibration = self.calibration
            row["resetBoundaryIndex"] = self.reset_boundary_index
            row["regionMessageCount"] = self.region_message_count
            row["calibration"] = {
                "promptTokens": calibration[0] if calibration else None,
                "estimatedTokens": calibration[1] if calibration else None,
                "ratio": calibration[2] if calibration else None,
            }
            row["previousPreserveDataKeys"] = list(self.previous_preserve_data_keys)
        if not self.prepared:
            row["nearestCutPoints"] = self._cut_rows(self.nearest_cut_points)
            return row
        first_entry = self.branch[self.first_kept_index]
        row.update(
            {
                "firstKeptEntryId": self.first_kept_entry_id,
                "firstKeptEntryIndex": self.first_kept_index,
                "firstKeptEntryEntriesIndex": first_entry,
                "turnStartIndex": self.turn_start_index,
                "turnStartEntryId": self._id_at_branch(self.turn_start_index),
                "isSplitTurn": self.is_split_turn,
                "tokensBefore": self.tokens_before,
                "contextTokens": self.context_tokens.to_json() if self.context_tokens else None,
                "messagesToSummarize": self._messages_json("summarize"),
                "turnPrefixMessages": self._messages_json("turn_prefix"),
                "recentMessages": self._messages_json("keep"),
                "previousSummary": self.previous_summary is not None,
                "previousSummaryFromExtension": self.previous_from_extension,
                "fileOps": self.file_ops.to_json(self.rules),
                "regionTokens": {
                    "summarize": self.region_tokens["summarize"],
                    "turnPrefix": self.region_tokens["turn_prefix"],
                    "keep": self.region_tokens["keep"],
                },
                "tokensAfter": self.tokens_after,
                "validCutPointCount": len(self.valid_cut_points),
            }
        )
        return row

    def _id_at_entry(self, entry_index: int | None) -> str | None:
        if entry_index is None:
            return None
        return str(self._cache.session.entries[entry_index].id)

    def _id_at_branch(self, branch_index: int) -> str | None:
        if branch_index < 0 or branch_index >= len(self.branch):
            return None
        return self._id_at_entry(self.branch[branch_index])

    def _cut_rows(self, positions: list[int]) -> list[dict[str, Any]]:
        return [
            {"branchIndex": pos, "entryIndex": self.branch[pos], "entryId": self._id_at_branch(pos)}
            for pos in positions
        ]

    def _messages_json(self, name: str) -> dict[str, Any]:
        indices = list(self._region_entries(name))
        ids = self._ids_of(indices)
        return {
            "count": len(indices),
            "entryIds": ids,
            "entryIndices": indices,
            "firstEntryId": ids[0] if ids else None,
            "lastEntryId": ids[-1] if ids else None,
            "tokens": self.region_tokens[name],
        }


_ROLE_KINDS = {
    "bashExecution": "bash execution",
    "toolResult": "tool result",
    "user": "user message",
    "assistant": "assistant message",
    "custom": "custom message",
    "branchSummary": "branch summary",
    "compactionSummary": "compaction summary",
}
"""Message roles as words (``split_turn_note``)."""


def _article(word: str) -> str:
    return "an" if word[:1].lower() in "aeiou" else "a"


def _number(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return 0
    return int(value)


def omp_usage_tokens(usage: dict[str, Any]) -> int:
    """oh-my-pi's ``calculateContextTokens`` (``contextTokens`` first, orchestration removed)."""
    if usage.get("contextTokens") is not None:
        return max(0, _number(usage.get("contextTokens")))
    raw = _number(usage.get("totalTokens")) or sum(
        _number(usage.get(key)) for key in ("input", "output", "cacheRead", "cacheWrite")
    )
    orchestration = usage.get("orchestration")
    spent = 0
    if isinstance(orchestration, dict):
        spent = sum(_number(orchestration.get(key)) for key in ("input", "output", "cacheRead"))
    return max(0, raw - spent)


def _omp_prompt_tokens(usage: dict[str, Any]) -> int:
    """oh-my-pi's ``calculatePromptTokens``."""
    if usage.get("contextTokens") is not None:
        return _number(usage.get("contextTokens"))
    prompt = sum(_number(usage.get(key)) for key in ("input", "cacheRead", "cacheWrite"))
    return prompt if prompt > 0 else omp_usage_tokens(usage)


def _nearest(points: Sequence[int], position: int) -> list[int]:
    """The closest valid cut point before ``position`` and the closest after it."""
    before = bisect.bisect_left(points, position)
    after = bisect.bisect_right(points, position)
    nearest = []
    if before > 0:
        nearest.append(points[before - 1])
    if after < len(points):
        nearest.append(points[after])
    return nearest


def _take_previous(plan: CompactionPlan, data: dict[str, Any]) -> None:
    """The previous compaction's summary, and whether an extension (oh-my-pi's
    ``fromExtension``, pi's ``fromHook``) wrote it."""
    summary = data.get("summary")
    plan.previous_summary = summary if isinstance(summary, str) else None
    plan.previous_from_extension = written_by_extension(data, plan.rules)


def _start_plan(
    session: Any,
    leaf_index: int | None,
    settings: CompactionSettings,
    counter: TokenCounter,
    cache: TokenCache | None,
    rules: str,
    manual_cut: bool,
) -> tuple[CompactionPlan, Sequence[Any]]:
    """The plan before any decision (not prepared: its leaf, branch and token cache) and the
    entries of its branch; no entries when there is nothing to plan (the plan says why)."""
    if cache is None or cache.counter is not counter or cache.session is not session:
        cache = TokenCache(session, counter)
    leaf = session.leaf if leaf_index is None else leaf_index
    keep = settings.keep_recent_tokens
    plan = CompactionPlan(
        prepared=False,
        reason=None,
        leaf=leaf,
        branch=[],
        rules=rules,
        counter_name=counter.name,
        keep_recent_tokens=keep,
        effective_keep_recent_tokens=keep,
        manual_cut=manual_cut,
        _cache=cache,
    )
    if leaf is None:
        plan.reason = "the session has no entries"
        return plan, []
    plan.branch = session.path_to(leaf)
    entries = session.entries
    path = EntryView(entries, plan.branch)  # each entry built when read, none held
    plan.boundary_end = len(path)
    if not path:
        plan.reason = "the branch is empty"
    return plan, path


def prepare_compaction(
    session: Any,
    leaf_index: int | None,
    settings: CompactionSettings,
    counter: TokenCounter,
    cut: int | None = None,
    *,
    cache: TokenCache | None = None,
) -> CompactionPlan:
    """Plan a compaction of the branch ending at ``leaf_index`` (default: the file's leaf)."""
    rules = settings.rules
    if rules == "omp":
        return _prepare_omp(session, leaf_index, settings, counter, cache, cut)
    plan, path = _start_plan(session, leaf_index, settings, counter, cache, rules, cut is not None)
    if not path:
        return plan
    leaf, branch, end = plan.leaf, plan.branch, len(path)
    cache = plan._cache
    assert leaf is not None

    previous = -1
    for position in range(end - 1, -1, -1):
        if path[position].type == "compaction":
            previous = position
            break
    plan.previous_compaction_index = previous
    plan.boundary_start = 0
    if previous >= 0:
        first_kept_id = path[previous].data.get("firstKeptEntryId")
        # pi: path.findIndex(id); search back from the compaction first (ids are unique on
        # a path and the kept part sits just before it), then after it.
        found = -1
        for pos in range(previous - 1, -1, -1):
            if path[pos].id == first_kept_id:
                found = pos
                break
        if found < 0:
            plan.warnings.append(
                f"compaction {path[previous].id}: firstKeptEntryId {first_kept_id!r} is not "
                "on the path before it; the context keeps nothing before it"
            )
            for pos in range(previous, end):
                if path[pos].id == first_kept_id:
                    found = pos
                    break
        plan.boundary_start = found if found >= 0 else previous + 1
    start = plan.boundary_start

    if previous >= 0:
        _take_previous(plan, path[previous].data)

    if path[-1].type == "compaction":
        plan.reason = "last entry on branch is a compaction: nothing new to compact"
        return plan

    # Context size before compaction.
    plan.context_tokens = context_tokens_at(session, leaf, counter, cache)
    plan.tokens_before = plan.context_tokens.tokens

    tokens_at = cache.backwards(branch, start)  # a walk from the leaf: counted in batches
    points = valid_cut_points(path, start, end, rules)
    plan.valid_cut_points = points
    if cut is None:
        point = find_cut_point(
            path, start, end, plan.effective_keep_recent_tokens, tokens_at, rules, points
        )
    else:
        refused = _check_manual_cut(session, plan, path, points, cut)
        if refused is not None:
            plan.reason = refused
            return plan
        point = cut_point_at(path, plan.branch.index(cut), start, rules)
    _fill(plan, path, point, rules)
    plan.prepared = True
    return plan


def _prepare_omp(
    session: Any,
    leaf_index: int | None,
    settings: CompactionSettings,
    counter: TokenCounter,
    cache: TokenCache | None,
    cut: int | None = None,
) -> CompactionPlan:
    """oh-my-pi 18.2.3's ``prepareCompaction`` (no active model), in branch indices; with
    ``cut`` (an entry index: ours, oh-my-pi has no manual cut) the cut is there instead of
    where the keep-recent walk puts it, everything else decided the same way."""
    plan, path = _start_plan(session, leaf_index, settings, counter, cache, "omp", cut is not None)
    plan._path = path
    if not path:
        return plan
    branch, end, keep = plan.branch, len(path), plan.keep_recent_tokens
    cache = plan._cache
    start, previous, reset = omp_boundary(path)
    plan.boundary_start = start
    plan.previous_compaction_index = previous
    plan.reset_boundary_index = reset
    if previous >= 0:
        data = path[previous].data
        _take_previous(plan, data)
        plan._previous_details = data.get("details")
        preserve = data.get("preserveData")
        if isinstance(preserve, dict):
            plan.previous_preserve_data_keys = sorted(preserve)
    region = [position for position in range(start, end) if _is_message(path[position])]
    plan.region_message_count = len(region)

    tokens_at = cache.backwards(branch, start)  # a walk from the leaf: counted in batches
    usage = omp_last_usage(path)
    plan.tokens_before = omp_usage_tokens(usage) if usage is not None else 0
    calibrate = settings.calibrate if settings.calibrate is not None else True
    if usage is not None:
        cache.count_entries([branch[position] for position in region])  # one request
        estimate = sum(tokens_at(position) for position in region)
        prompt = _omp_prompt_tokens(usage)
        ratio = prompt / estimate if estimate > 0 else 0.0
        plan.calibration = (prompt, estimate, ratio)
        if calibrate and math.isfinite(ratio) and ratio > 1:
            plan.effective_keep_recent_tokens = max(1, math.floor(keep / ratio))
    point = find_cut_point_omp(path, region, plan.effective_keep_recent_tokens, tokens_at)
    plan.valid_cut_points = valid_cut_points(path, start, end, "omp")
    last = path[-1]
    if last.type == "compaction" and not last.data.get("providerReplayThroughEntryId"):
        _fill_cut(plan, path, point)
        plan.reason = "last entry on branch is a compaction"
        return plan
    if cut is not None:
        refused = _check_manual_cut(session, plan, path, plan.valid_cut_points, cut)
        if refused is not None:
            plan.reason = refused
            return plan
        point = cut_point_at(path, plan.branch.index(cut), start, "omp")
    if point.first_kept_index < 0:
        plan.reason = "no message-bearing entries after the boundary"
        return plan
    _fill_cut(plan, path, point)
    if plan.is_empty:
        plan.reason = NOTHING_TO_SUMMARIZE
        return plan
    plan.prepared = True
    return plan


def _fill_cut(plan: CompactionPlan, path: Sequence[Any], point: CutPoint) -> None:
    if point.first_kept_index < 0:
        return
    plan.first_kept_index = point.first_kept_index
    plan.first_kept_entry_id = path[point.first_kept_index].id
    plan.turn_start_index = point.turn_start_index
    plan.is_split_turn = point.is_split_turn


def omp_boundary(path: Sequence[Any]) -> tuple[int, int, int]:
    """(boundary start, previous compaction, latest reset_boundary) as oh-my-pi computes them.

    The latest compaction counts unless a later ``reset_boundary`` clears it. After a local
    compaction the region starts at its ``firstKeptEntryId`` (searched between the reset and
    the compaction), so the kept messages are summarized again; after a remote one right
    after it, or after its ``providerReplayThroughEntryId``.
    """
    previous = reset = -1
    for position in range(len(path) - 1, -1, -1):
        kind = path[position].type
        if kind == "compaction" and previous < 0:
            previous = position
        elif kind == "reset_boundary" and reset < 0:
            reset = position
        if previous >= 0 and reset >= 0:
            break
    if reset > previous:
        previous = -1
    start = max(previous, reset) + 1
    if previous >= 0:
        data = path[previous].data
        if is_remote_compaction(data):
            through = data.get("providerReplayThroughEntryId")
            if through:
                for position in range(previous):
                    if path[position].id == through:
                        start = max(position, reset) + 1
                        break
        else:
            first_kept = data.get("firstKeptEntryId")
            for position in range(reset + 1, previous):
                if path[position].id == first_kept:
                    start = position
                    break
    return start, previous, reset


def omp_last_usage(path: Sequence[Any]) -> dict[str, Any] | None:
    """``getLastAssistantUsage``: the newest assistant on the path that did not abort or fail."""
    for position in range(len(path) - 1, -1, -1):
        entry = path[position]
        if entry.type == "message" and entry.role == "assistant":
            hit = last_assistant_usage([entry.message or {}])
            if hit is not None:
                return hit[0]
    return None


def _check_manual_cut(
    session: Any, plan: CompactionPlan, path: Sequence[Any], points: Sequence[int], cut: int
) -> str | None:
    """Why a user-chosen cut is not allowed (None when it is)."""
    entries = session.entries
    if not 0 <= cut < len(entries):
        return f"entry index {cut} does not exist"
    entry = entries[cut]
    try:
        position = plan.branch.index(cut)
    except ValueError:
        plan.nearest_cut_points = []
        return f"entry {entry.id} is not on the path from the root to the leaf"
    plan.nearest_cut_points = _nearest(points, position)
    if position < plan.boundary_start:
        return (
            f"entry {entry.id} is before the compaction boundary (branch index "
            f"{plan.boundary_start}); it is already summarized"
        )
    if position in set(points):
        return None
    role = entry.role
    if entry.type == "message" and role == "toolResult":
        return (
            f"entry {entry.id} is a tool result: cutting there would separate it from its tool call"
        )
    if entry.type == "compaction":
        return f"entry {entry.id} is a compaction entry; the kept part cannot start with one"
    what = f"a {role} message" if entry.type == "message" else f"a {entry.type} entry"
    return f"entry {entry.id} is {what}, which cannot start the kept part"


def _fill(plan: CompactionPlan, path: Sequence[Any], point: CutPoint, rules: str) -> None:
    """Record the cut; message lists and file operations are derived from it on demand."""
    plan.first_kept_index = point.first_kept_index
    plan.first_kept_entry_id = path[point.first_kept_index].id
    plan.turn_start_index = point.turn_start_index
    plan.is_split_turn = point.is_split_turn
    plan._path = path
    if plan.previous_compaction_index >= 0:
        plan._previous_details = path[plan.previous_compaction_index].data.get("details")
