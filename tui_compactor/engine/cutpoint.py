"""Where compaction may cut a branch, and where it does (``findCutPoint``).

All positions here are **branch indices**: positions in the root..leaf list of entries.

* Valid cut points: ``message`` entries whose role may start the kept part (never a tool
  result, which must stay after its tool call), plus ``custom_message`` and
  ``branch_summary`` entries. pi also accepts ``custom`` messages; oh-my-pi accepts its legacy
  ``hookMessage`` role instead.
* ``find_cut_point`` walks back from the end over ``message`` entries only, adding up their
  tokens; at the first entry where the total reaches ``keep_recent`` it picks the first valid
  cut point at or after it (the first cut point overall when none, or when the total never
  gets there), then slides back over non-message entries (model/thinking changes, labels,
  custom messages, branch summaries), stopping at a message or a compaction.
* A cut that is not at a user message splits a turn when a turn start (user message, bash
  execution, custom message or branch summary) precedes it.

oh-my-pi 18.2.3 (``find_cut_point_omp``) works on the list of message-bearing entries after the
boundary (``message``, ``custom_message``, ``branch_summary``; all of their tokens count). It
walks back from the newest, adding every entry's tokens, and checks the budget only at valid
cut points: the newest cut point is kept even when its group alone is over budget, and an
older one is taken only while the total stays within it. A cut on any turn start (user, bash
execution, custom message, branch summary) is not a split turn.
"""

from __future__ import annotations

import bisect
from array import array
from collections.abc import Callable, Iterable, MutableSequence, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "CutPoint",
    "is_cut_point",
    "valid_cut_points",
    "find_turn_start",
    "find_cut_point",
    "cut_point_at",
    "find_cut_point_omp",
    "is_turn_start",
]

_PI_CUT_ROLES = frozenset(
    {"bashExecution", "custom", "branchSummary", "compactionSummary", "user", "assistant"}
)
_OMP_CUT_ROLES = frozenset(
    {"bashExecution", "hookMessage", "branchSummary", "compactionSummary", "user", "assistant"}
)


@dataclass(frozen=True, slots=True)
class CutPoint:
    """The first kept entry, and the turn it splits (branch indices, -1 for none)."""

    first_kept_index: int
    turn_start_index: int
    is_split_turn: bool


_UNSET = object()


def _role(entry: Any) -> str | None:
    role = getattr(entry, "role", _UNSET)  # session entries know it without reading the record
    if role is not _UNSET:
        return role if isinstance(role, str) else None
    message = entry.message
    if message is None:
        return None
    role = message.get("role")
    return role if isinstance(role, str) else None


def is_cut_point(entry: Any, rules: str = "pi") -> bool:
    """True when the kept part of a compaction may start at ``entry``."""
    return bool(_cut_positions((entry,), range(1), _cut_roles(rules)))


def _cut_roles(rules: str) -> frozenset[str]:
    return _PI_CUT_ROLES if rules == "pi" else _OMP_CUT_ROLES


def _cut_positions(
    path: Sequence[Any], positions: Iterable[int], roles: frozenset[str]
) -> MutableSequence[int]:
    """The ``positions`` of ``path`` where a cut is allowed, in their order: a message whose
    role is in ``roles``, a branch summary or a custom message."""
    points = array("q")
    for position in positions:
        entry = path[position]
        kind = entry.type
        if kind == "message":
            if _role(entry) in roles:
                points.append(position)
        elif kind == "branch_summary" or kind == "custom_message":
            points.append(position)
    return points


def valid_cut_points(
    branch: Sequence[Any], start: int, end: int, rules: str = "pi"
) -> MutableSequence[int]:
    """Branch indices in ``[start, end)`` where a cut is allowed, ascending (a flat array: a
    200,000-message branch has that many)."""
    return _cut_positions(branch, range(start, end), _cut_roles(rules))


def is_turn_start(entry: Any) -> bool:
    """User message, bash execution, custom message or branch summary (both agents agree)."""
    return _is_turn_start(entry)


def _is_turn_start(entry: Any) -> bool:
    kind = entry.type
    if kind == "branch_summary" or kind == "custom_message":
        return True
    return kind == "message" and _role(entry) in ("user", "bashExecution")


def find_turn_start(branch: Sequence[Any], position: int, start: int) -> int:
    """The nearest turn start at or before ``position`` (not before ``start``), or -1."""
    for index in range(position, start - 1, -1):
        if _is_turn_start(branch[index]):
            return index
    return -1


def cut_point_at(branch: Sequence[Any], position: int, start: int, rules: str = "pi") -> CutPoint:
    """Turn start and split flag for a cut at ``position``.

    pi splits unless the cut is a user message; oh-my-pi unless it is any turn start.
    """
    entry = branch[position]
    if rules == "omp":
        starts = _is_turn_start(entry)
    else:
        starts = entry.type == "message" and _role(entry) == "user"
    turn_start = -1 if starts else find_turn_start(branch, position, start)
    return CutPoint(position, turn_start, not starts and turn_start != -1)


def find_cut_point(
    branch: Sequence[Any],
    start: int,
    end: int,
    keep_recent: int,
    tokens_at: Callable[[int], int],
    rules: str = "pi",
    cut_points: Sequence[int] | None = None,
) -> CutPoint:
    """The cut that keeps about ``keep_recent`` tokens of ``branch[start:end]``.

    ``tokens_at(i)`` is the token count of the message entry at branch index ``i``.
    ``cut_points`` may pass ``valid_cut_points(branch, start, end, rules)`` when known.
    """
    points = cut_points if cut_points is not None else valid_cut_points(branch, start, end, rules)
    if not points:
        return CutPoint(start, -1, False)
    cut = points[0]
    accumulated = 0
    for position in range(end - 1, start - 1, -1):
        if branch[position].type != "message":
            continue
        accumulated += tokens_at(position)
        if accumulated >= keep_recent:
            at = bisect.bisect_left(points, position)
            if at < len(points):
                cut = points[at]
            break
    while cut > start:
        previous = branch[cut - 1].type
        if previous == "compaction" or previous == "message":
            break
        cut -= 1
    return cut_point_at(branch, cut, start)


def find_cut_point_omp(
    path: Sequence[Any],
    region: Sequence[int],
    keep_recent: int,
    tokens_at: Callable[[int], int],
) -> CutPoint:
    """oh-my-pi's ``findCutPoint`` over ``region``: branch indices of the message-bearing
    entries after the boundary, ascending. Returns branch indices (``first_kept_index`` is
    ``region[0]`` when nothing can be cut, -1 when the region is empty)."""
    if not region:
        return CutPoint(-1, -1, False)
    points = _cut_positions(path, region, _OMP_CUT_ROLES)
    if not points:
        return CutPoint(region[0], -1, False)
    at = len(points) - 1
    cut = points[at]
    accumulated = 0
    for slot in range(len(region) - 1, -1, -1):
        position = region[slot]
        accumulated += tokens_at(position)
        if at < 0 or position != points[at]:
            continue
        if accumulated > keep_recent:
            break
        cut = position
        at -= 1
    if _is_turn_start(path[cut]):
        return CutPoint(cut, -1, False)
    slot = bisect.bisect_left(region, cut)
    for back in range(slot, -1, -1):
        if _is_turn_start(path[region[back]]):
            return CutPoint(cut, region[back], True)
    return CutPoint(cut, -1, False)
