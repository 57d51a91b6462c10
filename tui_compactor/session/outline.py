"""The tree outline: which entries to show, in which order, at which indent.

Used by the ``tree`` command and the app's tree widget. The layout keeps long linear runs
flat: a chain of single children stays at one indent, and only a branch point opens a new
level. At a branch point the child that leads to the active leaf (or, off the active path,
the oldest child) continues the main line at the same indent; the other children follow
the branch point directly, one level deeper, each with its whole subtree.

Filters mirror pi's ``/tree`` view (``tree-selector``):

- ``DEFAULT``: hides bookkeeping entries (``label``, ``custom``, ``model_change``,
  ``thinking_level_change``, ``session_info``);
- ``NO_TOOLS``: ``DEFAULT`` minus tool results;
- ``USER_ONLY``: user messages only;
- ``LABELED``: labelled entries only;
- ``ALL``: every entry. (pi's "all" still hides tool-call-only assistant messages; an
  inspector shows them.)

In every mode except ``ALL``, assistant messages with only tool calls are hidden unless
they stopped on an error or abort (as in pi). The leaf is always shown (pi only exempts it
from the tool-call rule; hiding it in e.g. ``DEFAULT`` when it is a label loses the user's
position). Hidden entries' children
attach to the nearest visible ancestor. Everything is iterative and O(n).
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, overload

from tui_compactor.session.session import NO_CHILD, ChildLists, Session, gc_paused

__all__ = [
    "OutlineFilter",
    "OutlineRow",
    "OutlineRows",
    "OutlineWalk",
    "EntryPositions",
    "build_outline",
    "BOOKKEEPING_TYPES",
]

BOOKKEEPING_TYPES = frozenset(
    {"label", "custom", "model_change", "thinking_level_change", "session_info"}
)
"""Entry types pi's default tree view hides."""


class OutlineFilter(StrEnum):
    """Which entries the outline shows (pi's ``/tree`` filter modes)."""

    DEFAULT = "default"
    NO_TOOLS = "no-tools"
    USER_ONLY = "user-only"
    LABELED = "labeled-only"
    ALL = "all"


@dataclass(slots=True)
class OutlineRow:
    """One visible row of the outline (treat as read-only; not frozen because frozen
    dataclasses are several times slower to build, and 100k rows must build fast)."""

    index: int
    """Entry index."""
    indent: int
    """Nesting level: 0 for the main line of each root."""
    is_branch_point: bool
    """More than one visible child (the layout opens a level here)."""
    on_active_path: bool
    """On the path from a root to the chosen leaf."""
    is_leaf: bool
    """The chosen leaf (by default the file's leaf)."""
    is_tip: bool
    """Has no children at all in the file."""
    folded: bool
    """Folded by the caller: its visible descendants are not listed."""
    hidden_count: int
    """Folded rows: how many visible rows are hidden underneath; else 0."""
    child_count: int
    """Children in the file (any filter)."""
    missing_parent: str | None = None
    """The ``parentId`` this entry names but that does not resolve (broken link)."""
    branch_start: bool = False
    """First row of a side branch (a non-main child of a branch point, one level deeper)."""
    last_branch: bool = False
    """For a ``branch_start`` row: the last side branch of its branch point (the next rows
    at the branch point's indent continue its main line)."""


def _visible_mask(session: Session, view: OutlineFilter, leaf: int | None) -> list[bool]:
    count = len(session.entries)
    if view is OutlineFilter.ALL:
        return [True] * count
    quiet = session._quiet_assistants
    if view is OutlineFilter.LABELED:
        labels = session.labels
        mask = [i in labels for i in range(count)]
    elif view is OutlineFilter.USER_ONLY:
        roles = session.entry_roles()
        mask = [
            t == "message" and r == "user"
            for t, r in zip(session.entry_types(), roles, strict=True)
        ]
    elif view is OutlineFilter.NO_TOOLS:
        roles = session.entry_roles()
        mask = [
            t not in BOOKKEEPING_TYPES and not (t == "message" and r == "toolResult")
            for t, r in zip(session.entry_types(), roles, strict=True)
        ]
    else:
        mask = [t not in BOOKKEEPING_TYPES for t in session.entry_types()]
    for i in quiet:
        mask[i] = False
    if leaf is not None:
        mask[leaf] = True  # the leaf always shows, so the current position is never lost
    return mask


_BRANCH_POINT, _ACTIVE, _LEAF, _TIP, _FOLDED, _BRANCH_START, _LAST_BRANCH = (
    1 << bit for bit in range(7)
)
"""Bits of ``OutlineRows``' per-row flags byte."""
_SIDE_BITS = (0, _BRANCH_START, _BRANCH_START | _LAST_BRANCH)
"""Flag bits of a walk item's side (0 = main line, 1 = side branch, 2 = last side branch)."""


def _unpack(
    index: int, indent: int, bits: int, children: int, below: int, broken: str | None
) -> OutlineRow:
    """The row object of one packed row (``OutlineWalk.packed``)."""
    return OutlineRow(
        index,
        indent,
        bool(bits & _BRANCH_POINT),
        bool(bits & _ACTIVE),
        bool(bits & _LEAF),
        bool(bits & _TIP),
        bool(bits & _FOLDED),
        below,
        children,
        broken,
        bool(bits & _BRANCH_START),
        bool(bits & _LAST_BRANCH),
    )


class EntryPositions(Mapping[int, int]):
    """Entry index -> row position, for the entries that have a row: one 4-byte slot per
    entry of the session (-1: no row), smaller than a dict of boxed ints. Iterates in row
    order."""

    __slots__ = ("_slots", "_order")

    def __init__(self, entry_count: int, order: array[int]) -> None:
        slots = array("i", [-1]) * entry_count
        for position, index in enumerate(order):
            slots[index] = position
        self._slots = slots
        self._order = order

    def __getitem__(self, index: int) -> int:
        if type(index) is int and 0 <= index < len(self._slots):
            position = self._slots[index]
            if position >= 0:
                return position
        raise KeyError(index)

    def __contains__(self, index: object) -> bool:
        return type(index) is int and 0 <= index < len(self._slots) and self._slots[index] >= 0

    def __len__(self) -> int:
        return len(self._order)

    def __iter__(self) -> Iterator[int]:
        return iter(self._order)


class OutlineRows(Sequence[OutlineRow]):
    """The rows of ``build_outline``, stored as parallel arrays (a few bytes a row: a
    200,000-deep chain's 200k rows take ~2 MB, where row objects and a dict of positions
    would take ~40 MB). Reading a row makes its ``OutlineRow``; ``index_at`` reads only the entry.
    ``positions``: entry index -> row position."""

    __slots__ = (
        "_index",
        "_indent",
        "_flags",
        "_child_count",
        "_hidden",
        "_missing",
        "_branch_points",
        "_folded",
        "positions",
    )

    def __init__(self, entry_count: int = 0, rows: Iterable[tuple[Any, ...]] = ()) -> None:
        index = array("i")
        # Indents and child counts take a byte a row until one is over 255 (a chain's are all
        # 0 and 1); then that column turns to four bytes a row.
        indent, child_count = array("B"), array("B")
        flags = bytearray()
        hidden: dict[int, int] = {}
        missing: dict[int, str] = {}
        branch_points, folded = array("i"), array("i")
        for position, (entry, depth, bits, children, below, broken) in enumerate(rows):
            index.append(entry)
            try:
                indent.append(depth)
            except OverflowError:
                indent = array("i", indent)
                indent.append(depth)
            flags.append(bits)
            if bits & _BRANCH_POINT:
                branch_points.append(position)
            if bits & _FOLDED:
                folded.append(position)
            try:
                child_count.append(children)
            except OverflowError:
                child_count = array("i", child_count)
                child_count.append(children)
            if below:
                hidden[position] = below
            if broken is not None:
                missing[position] = broken
        self._index, self._indent, self._flags = index, indent, flags
        self._child_count, self._hidden, self._missing = child_count, hidden, missing
        self.positions = EntryPositions(entry_count, index)
        self._branch_points = branch_points
        """Positions of the branch point rows, ascending (``b``/``B`` and folding jump by
        bisection: scanning a 200k-deep chain's rows took ~0.1 s of the UI thread)."""
        self._folded = folded

    def __len__(self) -> int:
        return len(self._index)

    @overload
    def __getitem__(self, position: int) -> OutlineRow: ...

    @overload
    def __getitem__(self, position: slice) -> list[OutlineRow]: ...

    def __getitem__(self, position: int | slice) -> OutlineRow | list[OutlineRow]:
        if isinstance(position, slice):
            return [self._row(p) for p in range(*position.indices(len(self._index)))]
        if position < 0:
            position += len(self._index)
        if not 0 <= position < len(self._index):
            raise IndexError(position)
        return self._row(position)

    def __iter__(self) -> Iterator[OutlineRow]:
        return (self._row(position) for position in range(len(self._index)))

    def index_at(self, position: int) -> int:
        """Entry index of the row at ``position`` (no row object made)."""
        return self._index[position]

    def next_branch_point(self, position: int, step: int) -> int | None:
        """The first branch point row after (``step`` 1) or before (-1) ``position``."""
        points = self._branch_points
        if step > 0:
            at = bisect_right(points, position)
            return points[at] if at < len(points) else None
        at = bisect_left(points, position)
        return points[at - 1] if at > 0 else None

    def foldable_at_or_before(self, position: int) -> int | None:
        """The last row at or above ``position`` that is a branch point or folded."""
        candidates = [
            points[at - 1]
            for points in (self._branch_points, self._folded)
            if (at := bisect_right(points, position)) > 0
        ]
        return max(candidates) if candidates else None

    def _row(self, position: int) -> OutlineRow:
        return _unpack(
            self._index[position],
            self._indent[position],
            self._flags[position],
            self._child_count[position],
            self._hidden.get(position, 0),
            self._missing.get(position),
        )


def build_outline(
    session: Session,
    *,
    leaf: int | None = None,
    folded: set[int] | frozenset[int] = frozenset(),
    view: OutlineFilter = OutlineFilter.DEFAULT,
) -> OutlineRows:
    """Rows to show for ``session``, top to bottom (see the module docstring)."""
    with gc_paused():
        walk = OutlineWalk(session, leaf=leaf, folded=folded, view=view)
        return OutlineRows(len(session.entries), walk.packed())


class OutlineWalk:
    """The outline's rows made one by one as they are iterated (``build_outline`` keeps them;
    the ``tree`` command prints each and forgets it). ``root_count``: how many separate trees
    the rows form (roots, and entries whose parent is missing, that are shown)."""

    def __init__(
        self,
        session: Session,
        *,
        leaf: int | None = None,
        folded: set[int] | frozenset[int] = frozenset(),
        view: OutlineFilter = OutlineFilter.DEFAULT,
    ) -> None:
        self.session = session
        self.folded = folded
        entries = session.entries
        count = len(entries)
        if leaf is None or not 0 <= leaf < count:
            leaf = session.leaf
        self.leaf = leaf
        self.active = active = bytearray(count)
        if leaf is not None:
            for i in session.path_to(leaf):
                active[i] = 1
        visible = _visible_mask(session, OutlineFilter(view), leaf) if count else []

        # Visible tree: every visible entry hangs under its nearest visible ancestor, and the
        # visible children keep getTree order. Children always have larger indices than their
        # parents, so one pass from the last entry to the first can lift the visible
        # descendants of each hidden entry into its parent's list.
        children = session._children
        roots = session._roots
        if all(visible):
            visible_children: ChildLists = children
            visible_roots = list(roots)
        else:
            visible_children, lifted = children.visible(visible)
            visible_roots = []
            for root in roots:
                if visible[root]:
                    visible_roots.append(root)
                else:
                    visible_roots.extend(lifted.get(root, ()))
            del lifted
        self.visible_children = visible_children
        self.visible_roots = visible_roots
        self.root_count = len(visible_roots)

    def __iter__(self) -> Iterator[OutlineRow]:
        for index, indent, bits, children, below, broken in self.packed():
            yield _unpack(index, indent, bits, children, below, broken)

    def packed(self) -> Iterator[tuple[int, int, int, int, int, str | None]]:
        """The rows as ``(entry index, indent, flag bits, child count, hidden count, missing
        parent)``: what ``OutlineRows`` stores."""
        # Depth-first over the visible tree. At a branch point, side branches come first
        # (one level deeper), then the main child continues at the same indent. Linear runs
        # are followed in a tight inner loop.
        entries = self.session.entries
        children = self.session._children
        visible_children = self.visible_children
        # The child lists' flat form (``ChildLists.flat``), read inline (two calls a row
        # otherwise): per entry its only child (>= 0), NO_CHILD, or several (in the mapping).
        real_only, real_several = children.flat()
        kids_only, kids_several = visible_children.flat()
        active, leaf, folded = self.active, self.leaf, self.folded
        broken = {
            root: entries[root].parent_id
            for root in self.session._roots
            if entries[root].parent_id is not None
        }
        # Work items: (node, indent, 0 = main line / 1 = side branch / 2 = last side branch).
        work: list[tuple[int, int, int]] = [(root, 0, 0) for root in reversed(self.visible_roots)]
        while work:
            node, indent, side = work.pop()
            while True:
                only = real_only[node]
                real_count = 1 if only >= 0 else 0 if only == NO_CHILD else len(real_several[node])
                only = kids_only[node]
                kid_count = 1 if only >= 0 else 0 if only == NO_CHILD else -1
                if kid_count < 0:
                    kids = kids_several[node]
                    kid_count = len(kids)
                is_folded = node in folded
                yield (
                    node,
                    indent,
                    (_BRANCH_POINT if kid_count > 1 else 0)
                    | (_ACTIVE if active[node] else 0)
                    | (_LEAF if node == leaf else 0)
                    | (0 if real_count else _TIP)
                    | (_FOLDED if is_folded else 0)
                    | _SIDE_BITS[side],
                    real_count,
                    _count_below(visible_children, node) if is_folded and kid_count else 0,
                    broken.get(node),
                )
                side = 0
                if is_folded or not kid_count:
                    break
                if kid_count == 1:
                    node = only
                    continue
                main = next((k for k in kids if active[k]), kids[0])
                work.append((main, indent, 0))
                last_side = True
                for k in range(len(kids) - 1, -1, -1):
                    if kids[k] != main:
                        work.append((kids[k], indent + 1, 2 if last_side else 1))
                        last_side = False
                break


def _count_below(visible_children: ChildLists, node: int) -> int:
    """Number of visible descendants of ``node`` (iterative)."""
    total = 0
    stack = list(visible_children[node])
    while stack:
        current = stack.pop()
        total += 1
        stack.extend(visible_children[current])
    return total
