"""Branch summaries: summarize the branch being left when the user navigates the tree.

From an engine ``NavigationPlan``: the selected messages are summarized with the branch prompt
(custom instructions appended as ``Additional focus`` or replacing it; under oh-my-pi's rules
they always replace it, as oh-my-pi does), ``max_tokens`` 2048; the
text gets the branch preamble in front and the file list after it. An empty branch gives the
plain ``"No content to summarize"`` (no preamble, no files). Each call is independent, so
several branch summaries may run at once (one per navigation). The part runs through
``pipeline.SummaryPipeline``, the compaction's pipeline (events, transcript rules, part
failures, boundary-tag escaping).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Literal

from tui_compactor.summarize.base import Summarizer
from tui_compactor.summarize.pipeline import SummaryPipeline, with_file_list
from tui_compactor.summarize.prompts import load_prompt
from tui_compactor.summarize.runner import EventCallback

__all__ = [
    "BRANCH_SUMMARY_MAX_TOKENS",
    "NO_CONTENT",
    "BranchSummaryResult",
    "run_branch_summary",
]

BRANCH_SUMMARY_MAX_TOKENS = 2048
NO_CONTENT = "No content to summarize"


@dataclass
class BranchSummaryResult:
    """A finished branch summary and the ``branch_summary`` record for the writer."""

    summary: str
    entry: dict[str, Any]
    label: str
    offline: bool
    empty: bool
    read_files: list[str] = field(default_factory=list)
    modified_files: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    seconds: float = 0.0


async def run_branch_summary(
    nav_plan: Any,
    summarizer: Summarizer,
    *,
    instructions: str | None = None,
    replace_instructions: bool = False,
    on_event: EventCallback | None = None,
    files_format: Literal["files", "legacy"] = "files",
) -> BranchSummaryResult:
    """Summarize the branch ``nav_plan`` leaves; events use part ``"branch"``.

    Cancel by cancelling the task running this coroutine (``PartFailed(cancelled=True)`` is
    sent). Raises ``SummarizeError`` when the model call fails; nothing is written here.
    """
    from tui_compactor.session.writer import make_branch_summary_entry

    started = time.monotonic()
    pipeline = SummaryPipeline(summarizer, on_event)
    rules = getattr(nav_plan, "rules", "pi") or "pi"
    messages = list(nav_plan.messages)
    if not messages:
        entry = make_branch_summary_entry(summary=NO_CONTENT, summarizer=summarizer.label)
        return BranchSummaryResult(
            NO_CONTENT, entry, summarizer.label, bool(summarizer.offline), True
        )
    text = await pipeline.part(
        "branch", messages, kind="branch", max_tokens=BRANCH_SUMMARY_MAX_TOKENS,
        instructions=instructions, replace_instructions=replace_instructions or rules == "omp",
    )  # fmt: skip
    text = pipeline.escape_tags(text, "branch summary")
    summary, read_files, modified_files = with_file_list(
        load_prompt("branch-preamble") + text, nav_plan.file_ops, rules, files_format
    )
    entry = make_branch_summary_entry(
        summary=summary,
        read_files=read_files,
        modified_files=modified_files,
        summarizer=summarizer.label,
    )
    return BranchSummaryResult(
        summary,
        entry,
        summarizer.label,
        bool(summarizer.offline),
        False,
        read_files,
        modified_files,
        list(pipeline.warnings),
        time.monotonic() - started,
    )
