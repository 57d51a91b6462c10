"""Navigate: what moving the leaf to another node appends, before it is proposed and applied.

With a summarizer, the branch being left is summarized (``branch.run_branch_summary``) and its
``branch_summary`` record is what will be appended **at the new leaf** (``parentId`` =
``fromId`` = the new leaf, or ``fromId: "root"``). Without one there is no record here: the
workbench's proposal (``workbench.actions.propose_navigation``) appends a leaf marker (a
``custom`` entry pi ignores for context) so the agent resumes at the new leaf. Nothing is
written in this module: the app and the ``navigate`` command propose and apply the record
through the workbench, re-validated against the session generation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from tui_compactor.summarize.base import Summarizer
from tui_compactor.summarize.branch import BranchSummaryResult, run_branch_summary
from tui_compactor.summarize.runner import EventCallback

__all__ = ["PreparedNavigation", "prepare_navigation"]


@dataclass
class PreparedNavigation:
    """What a navigation would append."""

    new_leaf: int | None
    """Entry index the leaf moves to (None = before the first entry)."""
    summary: BranchSummaryResult | None
    record: dict[str, Any] | None
    """The branch summary record; None without a summary (the proposal writes a leaf marker)."""
    noop: bool = False
    """The target is the current leaf: nothing to append."""


async def prepare_navigation(
    nav_plan: Any,
    *,
    summarizer: Summarizer | None = None,
    instructions: str | None = None,
    replace_instructions: bool = False,
    on_event: EventCallback | None = None,
    files_format: Literal["files", "legacy"] = "files",
) -> PreparedNavigation:
    """Summarize the branch ``nav_plan`` leaves when ``summarizer`` is given.

    Raises ``SummarizeError`` when the summary fails. A no-op plan summarizes nothing.
    """
    if getattr(nav_plan, "noop", False):
        return PreparedNavigation(nav_plan.new_leaf, None, None, noop=True)
    if summarizer is None:
        return PreparedNavigation(nav_plan.new_leaf, None, None)
    summary = await run_branch_summary(
        nav_plan, summarizer, instructions=instructions,
        replace_instructions=replace_instructions, on_event=on_event, files_format=files_format,
    )  # fmt: skip
    return PreparedNavigation(nav_plan.new_leaf, summary, summary.entry)
