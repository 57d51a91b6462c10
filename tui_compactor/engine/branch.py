"""Tree navigation: where the leaf goes, and what a branch summary would cover.

* New leaf: a user message or a ``custom_message`` target puts the leaf on its **parent**
  (None = before the first entry; the text goes back to the editor); any other target becomes
  the leaf itself. A branch summary entry is attached there (``parentId`` = ``fromId`` = new
  leaf, or ``fromId = "root"``).
* Collection (``collectEntriesForBranchSummary``): the deepest common ancestor of the old leaf
  and the **target** (not the new leaf), then every entry from the old leaf back to it
  (exclusive), in chronological order. Compactions on the way are included.
* Selection (``prepareBranchEntries``): file operations of earlier pi-made branch summaries
  first (their ``modifiedFiles`` count as edited), then newest to oldest: tool results are
  skipped, each message's file operations are collected, and the walk stops at the first
  message that does not fit the budget, except that a compaction or branch summary is still
  taken while the total is under 90% of the budget. ``budget=0`` means no limit.

oh-my-pi (``rules="omp"``) keeps tool results, except ``useless`` ones that are not errors,
counting each as its text cut to 2000 units; it strips read selectors and skips URL paths.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from tui_compactor.engine.fileops import (
    FileOps,
    add_details,
    extract_file_ops,
    written_by_extension,
)
from tui_compactor.engine.messages import message_from_entry, text_of
from tui_compactor.engine.serialize import truncate_for_summary
from tui_compactor.engine.tokens import TokenCache, TokenCounter, growing_parts

__all__ = [
    "NavigationPlan",
    "BranchSelection",
    "new_leaf_for",
    "collect_branch_entries",
    "select_branch_entries",
    "plan_navigation",
]


@dataclass(slots=True)
class BranchSelection:
    """What ``prepareBranchEntries`` keeps under one budget."""

    budget: int
    selected: list[int] = field(default_factory=list)
    """Entry indices, chronological."""
    messages: list[dict[str, Any]] = field(default_factory=list)
    total_tokens: int = 0
    file_ops: FileOps = field(default_factory=FileOps)


@dataclass(slots=True)
class NavigationPlan:
    """Moving the leaf from ``old_leaf`` to ``target`` (entry indices)."""

    old_leaf: int | None
    target: int
    new_leaf: int | None
    """Where the leaf goes; None = before the first entry."""
    common_ancestor: int | None
    entries: list[int]
    """Entries a branch summary would cover, chronological."""
    budget: int
    selected: list[int]
    messages: list[dict[str, Any]]
    total_tokens: int
    file_ops: FileOps
    rules: str = "pi"
    noop: bool = False
    """Navigating to the current leaf changes nothing (except for a user message)."""
    session: Any = field(default=None, repr=False)

    @property
    def from_id(self) -> str:
        """The ``fromId`` (and ``parentId``) a branch summary entry would get."""
        if self.new_leaf is None:
            return "root"
        return str(self.session.entries[self.new_leaf].id)

    def to_json(self) -> dict[str, Any]:
        """The ``navigate --dry-run --json`` object (one budget)."""
        entries = self.session.entries

        def ident(index: int | None) -> str | None:
            return None if index is None else entries[index].id

        return {
            "rules": self.rules,
            "oldLeafId": ident(self.old_leaf),
            "oldLeafIndex": self.old_leaf,
            "targetId": ident(self.target),
            "targetIndex": self.target,
            "newLeafId": ident(self.new_leaf),
            "newLeafIndex": self.new_leaf,
            "fromId": self.from_id,
            "noop": self.noop,
            "commonAncestorId": ident(self.common_ancestor),
            "commonAncestorIndex": self.common_ancestor,
            "entryCount": len(self.entries),
            "entryIds": [entries[i].id for i in self.entries],
            "prepared": [selection_json(self.session, self.selection(), self.rules)],
        }

    def selection(self) -> BranchSelection:
        """This plan's selection as a ``BranchSelection``."""
        return BranchSelection(
            self.budget, self.selected, self.messages, self.total_tokens, self.file_ops
        )


def selection_json(session: Any, selection: BranchSelection, rules: str) -> dict[str, Any]:
    """One budget's row: selected ids, token total, file operations."""
    entries = session.entries
    ids = [entries[i].id for i in selection.selected]
    return {
        "tokenBudget": selection.budget,
        "messageCount": len(selection.messages),
        "totalTokens": selection.total_tokens,
        "entryIds": ids,
        "entryIndices": list(selection.selected),
        "firstEntryId": ids[0] if ids else None,
        "lastEntryId": ids[-1] if ids else None,
        "fileOps": selection.file_ops.to_json(rules),
    }


def new_leaf_for(session: Any, target: int, rules: str = "pi") -> int | None:
    """Where navigation to ``target`` puts the leaf: on the parent of a user message or a
    custom message (oh-my-pi keeps an agent-injected skill prompt as the leaf), else on it."""
    entry = session.entries[target]
    parent: int | None = entry.parent
    if entry.type == "message" and entry.role == "user":
        return parent
    if entry.type == "custom_message":
        data = entry.data
        if (
            rules == "omp"
            and data.get("customType") == "skill-prompt"
            and data.get("attribution") != "user"
        ):
            return target
        return parent
    return target


def collect_branch_entries(
    session: Any, old_leaf: int | None, target: int
) -> tuple[list[int], int | None]:
    """(entries from the old leaf back to the common ancestor, chronological; the ancestor)."""
    if old_leaf is None:
        return [], None
    old_path = session.path_to(old_leaf)
    on_old = set(old_path)
    ancestor = None
    for index in reversed(session.path_to(target)):
        if index in on_old:
            ancestor = index
            break
    collected = []
    for index in reversed(old_path):
        if index == ancestor:
            break
        collected.append(index)
    collected.reverse()
    return collected, ancestor


def _branch_message(entry: Any, rules: str) -> dict[str, Any] | None:
    if entry.type == "message":
        message: dict[str, Any] | None = entry.message
        if message is None:
            return None
        if message.get("role") == "toolResult":
            if rules == "pi":
                return None
            if message.get("useless") is True and message.get("isError") is not True:
                return None
        return message
    if entry.type in ("custom_message", "branch_summary", "compaction"):
        return message_from_entry(entry)
    return None


def select_branch_entries(
    session: Any,
    entry_indices: list[int],
    counter: TokenCounter,
    budget: int = 0,
    *,
    rules: str = "pi",
    cache: TokenCache | None = None,
) -> BranchSelection:
    """The budgeted newest-first selection of ``entry_indices`` (``prepareBranchEntries``)."""
    if cache is None or cache.counter is not counter or cache.session is not session:
        cache = TokenCache(session, counter)
    entries = session.entries
    selection = BranchSelection(budget)
    ops = selection.file_ops
    for index in entry_indices:
        entry = entries[index]
        if entry.type != "branch_summary":
            continue
        data = entry.data
        if not written_by_extension(data, rules) and data.get("details"):
            add_details(data.get("details"), ops, rules)
    chosen: list[tuple[int, dict[str, Any]]] = []
    total = 0
    walk = _counted_ahead(session, entry_indices, counter, cache, rules, budget)
    for index, message, tokens in walk:
        entry = entries[index]
        extract_file_ops(message, ops, rules)
        if budget > 0 and total + tokens > budget:
            if entry.type in ("compaction", "branch_summary") and total < budget * 0.9:
                chosen.append((index, message))
                total += tokens
            break
        chosen.append((index, message))
        total += tokens
    chosen.reverse()
    selection.selected = [index for index, _ in chosen]
    selection.messages = [message for _, message in chosen]
    selection.total_tokens = total
    return selection


BUDGET_MARGIN = 1.2
"""A budgeted walk counts ahead this many times the entries it expects to need."""


def _counted_ahead(
    session: Any,
    entry_indices: list[int],
    counter: TokenCounter,
    cache: TokenCache,
    rules: str,
    budget: int = 0,
) -> Iterator[tuple[int, dict[str, Any], int]]:
    """The selection's walk, newest to oldest: each entry that carries a branch message, the
    message and its tokens (a tool result: its text cut for the summary; any other message:
    the cache's count). Counted ahead of the walk a part at a time (``growing_parts``: 16
    entries, then 32, ... up to 1024), each part in two calls of the counter at most (the tool
    results' texts, the other messages): a counting process gets a few requests, not one a
    message. With a ``budget`` a part is cut to the entries the rest of the budget is expected
    to take (the tokens an entry walked so far took on average, ``BUDGET_MARGIN`` times over):
    the walk that stops at its budget counts few beyond it."""
    entries = session.entries
    walked_entries = walked_tokens = 0

    def needed() -> int | None:
        if budget <= 0 or walked_tokens <= 0:
            return None
        left = max(0, budget - walked_tokens)
        return math.ceil(left * walked_entries / walked_tokens * BUDGET_MARGIN) + 1

    for batch in growing_parts(reversed(entry_indices), needed):
        walked_entries += len(batch)
        walked: list[tuple[int, dict[str, Any], str | None]] = []
        for index in batch:
            message = _branch_message(entries[index], rules)
            if message is None:
                continue
            if message.get("role") == "toolResult":
                content = text_of(message.get("content"))
                walked.append((index, message, truncate_for_summary(content) if content else ""))
            else:
                walked.append((index, message, None))
        texts = [cut for _, _, cut in walked if cut]
        text_counts = iter(counter.count_texts(texts) if texts else [])
        cache.count_entries([index for index, _, cut in walked if cut is None])
        for index, message, cut in walked:
            tokens = cache.message_tokens(index) if cut is None else next(text_counts) if cut else 0
            walked_tokens += tokens
            yield index, message, tokens


def plan_navigation(
    session: Any,
    old_leaf: int | None,
    target: int,
    counter: TokenCounter,
    budget: int = 0,
    *,
    rules: str = "pi",
    cache: TokenCache | None = None,
) -> NavigationPlan:
    """Everything navigation from ``old_leaf`` to ``target`` would do, without doing it."""
    collected, ancestor = collect_branch_entries(session, old_leaf, target)
    selection = select_branch_entries(session, collected, counter, budget, rules=rules, cache=cache)
    target_entry = session.entries[target]
    is_user = target_entry.type == "message" and target_entry.role == "user"
    return NavigationPlan(
        old_leaf=old_leaf,
        target=target,
        new_leaf=new_leaf_for(session, target, rules),
        common_ancestor=ancestor,
        entries=collected,
        budget=budget,
        selected=selection.selected,
        messages=selection.messages,
        total_tokens=selection.total_tokens,
        file_ops=selection.file_ops,
        rules=rules,
        noop=target == old_leaf and not is_user,
        session=session,
    )
