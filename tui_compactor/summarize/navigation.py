"""Navigate: move the leaf to another node, with or without a branch summary.

With a summarizer, the branch being left is summarized and a ``branch_summary`` entry is
appended **at the new leaf** (``parentId`` = ``fromId`` = the new leaf, or ``fromId: "root"``).
Without one, a leaf-marker entry (a ``custom`` entry pi ignores for context) is appended there
instead, so the agent resumes at the new leaf. Only the writer touches the file, behind its
append gate; ``append=False`` produces everything without writing (a preview).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, Literal

from tui_compactor.summarize.base import Summarizer
from tui_compactor.summarize.branch import BranchSummaryResult, run_branch_summary
from tui_compactor.summarize.runner import EventCallback

__all__ = ["NavigationResult", "navigate"]


@dataclass
class NavigationResult:
    """What ``navigate`` did."""

    new_leaf: int | None
    """Entry index the leaf moved to (None = before the first entry)."""
    summary: BranchSummaryResult | None
    record: dict[str, Any] | None
    """The record appended (or that would be, with ``append=False``)."""
    entry_id: str | None
    """Id of the appended entry; None when nothing was written."""
    written: bool
    noop: bool = False


async def navigate(
    session: Any,
    nav_plan: Any,
    *,
    summarizer: Summarizer | None = None,
    instructions: str | None = None,
    replace_instructions: bool = False,
    on_event: EventCallback | None = None,
    append: bool = True,
    files_format: Literal["files", "legacy"] = "files",
    **append_options: Any,
) -> NavigationResult:
    """Summarize (when ``summarizer`` is given) and append at ``nav_plan.new_leaf``.

    ``append_options`` go to the writer's ``append_entry`` (``quiet_seconds``, ...). Raises
    ``SummarizeError`` (nothing written) when the summary fails and the writer's
    ``AppendRefused`` when the gate refuses. A no-op plan writes nothing.
    """
    from tui_compactor.session.writer import append_entry, make_leaf_marker

    if getattr(nav_plan, "noop", False):
        return NavigationResult(nav_plan.new_leaf, None, None, None, False, noop=True)
    summary: BranchSummaryResult | None = None
    if summarizer is not None:
        summary = await run_branch_summary(
            nav_plan, summarizer, instructions=instructions,
            replace_instructions=replace_instructions, on_event=on_event,
            files_format=files_format,
        )
        record = summary.entry
    else:
        old_leaf = nav_plan.old_leaf
        record = make_leaf_marker(
            reason="navigate",
            previous_leaf_id=session.entries[old_leaf].id if old_leaf is not None else None,
        )
    if not append:
        return NavigationResult(nav_plan.new_leaf, summary, record, None, False)
    result = await asyncio.to_thread(
        append_entry, session, record, parent_index=nav_plan.new_leaf, **append_options
    )
    return NavigationResult(
        nav_plan.new_leaf, summary, result.records[0], result.ids[0], True
    )
