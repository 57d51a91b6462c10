"""Dependencies crossing a cut: what the kept side refers to that the summarized side holds.

For a cut at a valid cut point, a *dependency* is an anchor (``engine.anchors``: a path, a
name, an error line, a command, a URL, a tool-call id) that occurs both before the cut (so
only the summary can carry what was said about it) and at or after it (the kept side needs
it). A path read before the cut and edited after it is the typical one.

``cut_sweep`` computes, for every valid cut point of the plan's region at once, the tokens
kept and summarized and the number of dependencies crossing it: each anchor is an interval
``[first, last]`` over the region and crosses exactly the cuts ``first < cut <= last``, so
the sweep is one pass over the region plus one over the anchors.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Any

from tui_compactor.engine.anchors import AnchorKind, message_anchors
from tui_compactor.engine.cutpoint import cut_point_at
from tui_compactor.engine.messages import message_from_entry
from tui_compactor.engine.plan import CompactionPlan, prepare_compaction
from tui_compactor.engine.settings import CompactionSettings
from tui_compactor.engine.tokens import TokenCache, TokenCounter
from tui_compactor.session.table import EntryView

__all__ = ["DEPENDENCY_KINDS", "CutRow", "Dependency", "CutSweep", "cut_sweep"]

DEPENDENCY_KINDS: frozenset[AnchorKind] = frozenset(
    {"path", "identifier", "error", "command", "url", "tool_call"}
)
"""Anchor kinds that make a dependency (numbers and requests do not)."""

_KEPT_TYPES = frozenset({"message", "custom_message", "branch_summary"})
"""Entry types whose tokens a plan counts on either side of the cut (``PlanMessage`` lists)."""


@dataclass(frozen=True, slots=True)
class CutRow:
    """One valid cut point of the sweep (branch indices)."""

    branch_index: int
    entry_index: int
    tokens_kept: int
    tokens_summarized: int
    dependencies: int
    is_split_turn: bool


@dataclass(frozen=True, slots=True)
class Dependency:
    """One anchor crossing a cut: where the summarized side last had it, where the kept side
    first needs it (entry indices)."""

    kind: AnchorKind
    text: str
    summarized_entry: int
    kept_entry: int


@dataclass(slots=True)
class CutSweep:
    """Every valid cut point of a plan's region with its tokens and crossing dependencies."""

    plan: CompactionPlan
    rows: list[CutRow] = field(default_factory=list)
    _occurrences: dict[tuple[AnchorKind, str], list[int]] = field(default_factory=dict)
    """Anchor -> ascending branch indices where it occurs in the region."""

    def row_at(self, branch_index: int) -> CutRow | None:
        """The row of the cut at ``branch_index`` (None when that is not a valid cut)."""
        at = bisect.bisect_left([row.branch_index for row in self.rows], branch_index)
        if at < len(self.rows) and self.rows[at].branch_index == branch_index:
            return self.rows[at]
        return None

    def dependencies_at(self, branch_index: int) -> list[Dependency]:
        """The anchors crossing a cut at ``branch_index``, in order of first kept use."""
        branch = self.plan.branch
        found = []
        for (kind, text), positions in self._occurrences.items():
            if positions[0] < branch_index <= positions[-1]:
                at = bisect.bisect_left(positions, branch_index)
                found.append(
                    Dependency(kind, text, branch[positions[at - 1]], branch[positions[at]])
                )
        found.sort(key=lambda dep: (dep.kept_entry, dep.kind, dep.text))
        return found

    def best_rows(self) -> list[CutRow]:
        """Among the cuts that free at least as much as the planned one (keep at most its
        tokens), those no other beats on both counts (keeps as much with as few crossings),
        most kept first. Without a planned cut every valid cut competes."""
        plan = self.plan
        limit = plan.tokens_after if plan.prepared else None
        front: list[CutRow] = []
        fewest: int | None = None
        candidates = [r for r in self.rows if limit is None or r.tokens_kept <= limit]
        for row in sorted(candidates, key=lambda r: (-r.tokens_kept, r.dependencies)):
            if fewest is None or row.dependencies < fewest:
                front.append(row)
                fewest = row.dependencies
        return front

    def to_json(self, session: Any) -> dict[str, Any]:
        """``plan --sweep --json``."""
        entries = session.entries
        plan = self.plan
        current = plan.first_kept_index if plan.prepared else None
        best = {row.branch_index for row in self.best_rows()}
        planned = self.dependencies_at(current) if current is not None else []
        return {
            "leafIndex": plan.leaf,
            "leafId": entries[plan.leaf].id if plan.leaf is not None else None,
            "rules": plan.rules,
            "tokens": plan.counter_name,
            "keepRecentTokens": plan.keep_recent_tokens,
            "boundaryStart": plan.boundary_start,
            "boundaryEnd": plan.boundary_end,
            "plannedCut": current,
            "cuts": [
                {
                    "branchIndex": row.branch_index,
                    "entryIndex": row.entry_index,
                    "entryId": entries[row.entry_index].id,
                    "tokensKept": row.tokens_kept,
                    "tokensSummarized": row.tokens_summarized,
                    "dependencies": row.dependencies,
                    "isSplitTurn": row.is_split_turn,
                    "planned": row.branch_index == current,
                    "best": row.branch_index in best,
                }
                for row in self.rows
            ],
            "plannedDependencies": [
                {
                    "kind": dep.kind,
                    "text": dep.text,
                    "summarizedEntry": dep.summarized_entry,
                    "summarizedEntryId": entries[dep.summarized_entry].id,
                    "keptEntry": dep.kept_entry,
                    "keptEntryId": entries[dep.kept_entry].id,
                }
                for dep in planned
            ],
        }


def cut_sweep(
    session: Any,
    leaf: int | None,
    settings: CompactionSettings | None,
    counter: TokenCounter,
    cache: TokenCache | None = None,
    *,
    plan: CompactionPlan | None = None,
) -> CutSweep:
    """Tokens and dependencies for every valid cut point of the plan at ``leaf``.

    ``plan`` may pass the plan already made for ``leaf`` with ``counter`` (then ``settings``
    is not needed).
    """
    if cache is None or cache.counter is not counter or cache.session is not session:
        cache = TokenCache(session, counter)
    if plan is None:
        if settings is None:
            raise ValueError("cut_sweep needs the settings or the plan")
        plan = prepare_compaction(session, leaf, settings, counter, cache=cache)
    sweep = CutSweep(plan)
    points = plan.valid_cut_points
    if not points:
        return sweep
    branch = plan.branch
    entries = session.entries
    start, end = plan.boundary_start, plan.boundary_end
    tokens = [0] * (end - start + 1)  # suffix sums: tokens[i - start] = kept from i on
    cache.count_entries(branch[start:end])  # those not counted yet: one call of the counter
    occurrences: dict[tuple[AnchorKind, str], list[int]] = {}
    for position in range(end - 1, start - 1, -1):
        entry = entries[branch[position]]
        counted = cache.message_tokens(branch[position]) if entry.type in _KEPT_TYPES else 0
        tokens[position - start] = tokens[position - start + 1] + counted
    for position in range(start, end):
        entry = entries[branch[position]]
        if entry.type not in _KEPT_TYPES and entry.type != "compaction":
            continue
        message = entry.message if entry.type == "message" else message_from_entry(entry)
        for kind, text in message_anchors(message):
            if kind not in DEPENDENCY_KINDS:
                continue
            seen = occurrences.setdefault((kind, text.strip()), [])
            if not seen or seen[-1] != position:
                seen.append(position)
    # Each anchor crosses the cuts in (first, last]: +1 just after first, -1 just after last.
    delta = [0] * (end - start + 2)
    for positions in occurrences.values():
        if len(positions) > 1:
            delta[positions[0] + 1 - start] += 1
            delta[positions[-1] + 1 - start] -= 1
    crossing = 0
    counts = [0] * (end - start + 1)
    for offset in range(end - start + 1):
        crossing += delta[offset]
        counts[offset] = crossing
    region_total = tokens[0]
    path = plan._path or EntryView(entries, branch)
    for position in points:
        kept = tokens[position - start]
        sweep.rows.append(
            CutRow(
                branch_index=position,
                entry_index=branch[position],
                tokens_kept=kept,
                tokens_summarized=region_total - kept,
                dependencies=counts[position - start],
                is_split_turn=cut_point_at(path, position, start).is_split_turn,
            )
        )
    sweep._occurrences = {key: value for key, value in occurrences.items() if len(value) > 1}
    return sweep


def sweep_for_plan(sweep: CutSweep, plan: CompactionPlan) -> CutSweep | None:
    """``sweep`` for ``plan`` when ``plan`` only moved the cut within the same region (same
    leaf, branch, boundary, valid cuts, rules, counter and keep-recent, on the same session
    state — the caller's to check): every valid cut keeps and crosses what it did, only the
    planned cut (read from the plan) differs. None when the sweep must be computed again."""
    swept = sweep.plan
    alike = (
        swept.leaf == plan.leaf
        and swept.boundary_start == plan.boundary_start
        and swept.boundary_end == plan.boundary_end
        and swept.rules == plan.rules
        and swept.counter_name == plan.counter_name
        and swept.keep_recent_tokens == plan.keep_recent_tokens
        and list(swept.valid_cut_points) == list(plan.valid_cut_points)
        and (swept.branch is plan.branch or swept.branch == plan.branch)
    )
    if not alike:
        return None
    return CutSweep(plan, sweep.rows, sweep._occurrences)
