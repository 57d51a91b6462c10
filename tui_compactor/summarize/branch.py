"""Branch summaries: summarize the branch being left when the user navigates the tree.

From an engine ``NavigationPlan``: the selected messages are summarized with the branch prompt
(custom instructions appended as ``Additional focus`` or replacing it; under oh-my-pi's rules
they always replace it, as oh-my-pi does), ``max_tokens`` 2048; the
text gets the branch preamble in front and the file list after it. An empty branch gives the
plain ``"No content to summarize"`` (no preamble, no files). Each call is independent, so
several branch summaries may run at once (one per navigation).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any, Literal

from tui_compactor.engine.serialize import escape_boundary_tags, find_boundary_tags
from tui_compactor.summarize.base import Summarizer
from tui_compactor.summarize.compaction import finish_summary
from tui_compactor.summarize.errors import SummarizeError
from tui_compactor.summarize.family import transcript_rules
from tui_compactor.summarize.prompts import load_prompt
from tui_compactor.summarize.runner import EventCallback, PartFailed, run_part

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
    from tui_compactor.engine.fileops import compute_file_lists
    from tui_compactor.session.writer import make_branch_summary_entry

    def emit(event: Any) -> None:
        if on_event is not None:
            try:
                on_event(event)
            except Exception:  # noqa: BLE001 - a UI callback bug must not stop the summary
                pass

    started = time.monotonic()
    drop_thinking, escape_harmony = transcript_rules(summarizer)
    rules = getattr(nav_plan, "rules", "pi") or "pi"
    notes: list[str] = []
    messages = list(nav_plan.messages)
    if not messages:
        entry = make_branch_summary_entry(summary=NO_CONTENT, summarizer=summarizer.label)
        return BranchSummaryResult(
            NO_CONTENT, entry, summarizer.label, bool(summarizer.offline), True
        )
    try:
        text = await run_part(
            summarizer, "branch", messages, kind="branch",
            max_tokens=BRANCH_SUMMARY_MAX_TOKENS, emit=emit, instructions=instructions,
            replace_instructions=replace_instructions or rules == "omp",
            drop_thinking=drop_thinking, escape_harmony=escape_harmony, notes=notes,
        )
    except asyncio.CancelledError:
        emit(PartFailed("branch", "cancelled", cancelled=True))
        raise
    except SummarizeError as error:
        emit(PartFailed("branch", str(error)))
        raise
    warnings: list[str] = list(notes)
    tags = find_boundary_tags(text)
    if tags:
        text = escape_boundary_tags(text)
        warnings.append("the summary contained boundary tags; they were escaped before writing")
    read_files, modified_files = compute_file_lists(nav_plan.file_ops, rules)
    summary = finish_summary(
        load_prompt("branch-preamble") + text, read_files, modified_files,
        nav_plan.file_ops.read, files_format,
    )
    entry = make_branch_summary_entry(
        summary=summary, read_files=read_files, modified_files=modified_files,
        summarizer=summarizer.label,
    )
    return BranchSummaryResult(
        summary, entry, summarizer.label, bool(summarizer.offline), False,
        read_files, modified_files, warnings, time.monotonic() - started,
    )
