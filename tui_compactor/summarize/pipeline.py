"""One pipeline for every summary job: the parts of a compaction and a branch summary.

A job (``CompactionJob``, ``run_branch_summary``) decides *which* parts to run and how to merge
them; everything a part goes through on the way is decided here, once:

* **events**: the caller's callback is wrapped so a failing UI or printer callback can never
  stop a summary (``SummaryPipeline.emit``);
* **the transcript rules** of the summarizer's model family: thinking blocks dropped for
  Claude, Harmony control tokens escaped for gpt-oss-style models (``family.transcript_rules``);
* **failures**: a part that fails, is cancelled or hits a bug reports ``PartFailed`` before the
  error propagates (the stream panes and the command's printer end that part);
* **boundary tags** in a model's reply (``</conversation>``, ``<previous-summary>``...) are
  escaped before the text is written or sent on as ``<previous-summary>``, with a warning;
* **the file list** after the summary (``<files>`` or pi's legacy tags, ``with_file_list``);
* **warnings**: every cut the runner made and every escape, in order, in ``warnings``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

from tui_compactor.engine.serialize import escape_boundary_tags, find_boundary_tags
from tui_compactor.summarize.errors import SummarizeError
from tui_compactor.summarize.family import transcript_rules
from tui_compactor.summarize.runner import Event, EventCallback, Part, PartFailed, run_part

if TYPE_CHECKING:
    from tui_compactor.engine.fileops import FileOps
    from tui_compactor.summarize.base import PromptKind, Summarizer

__all__ = ["SummaryPipeline", "safe_emit", "with_file_list"]


def safe_emit(on_event: EventCallback | None) -> Callable[[Event], None]:
    """An emitter that never lets a failing callback break the job."""
    if on_event is None:
        return lambda event: None

    def emit(event: Event) -> None:
        try:
            on_event(event)
        except Exception:  # noqa: BLE001 - the callback's bug must not kill the summaries
            pass

    return emit


def with_file_list(
    text: str, file_ops: FileOps, rules: str, files_format: Literal["files", "legacy"]
) -> tuple[str, list[str], list[str]]:
    """``text`` with the file list of ``file_ops`` after it (a ``<files>`` block, or pi's
    ``<read-files>``/``<modified-files>``), and the read-only and modified lists under
    ``rules``."""
    from tui_compactor.engine.fileops import (
        compute_file_lists,
        format_pi_file_ops,
        strip_file_blocks,
        upsert_file_operations,
    )

    read_files, modified_files = compute_file_lists(file_ops, rules)
    if files_format == "legacy":
        summary = strip_file_blocks(text) + format_pi_file_ops(read_files, modified_files)
    else:
        summary = upsert_file_operations(text, read_files, modified_files, file_ops.read)
    return summary, read_files, modified_files


class SummaryPipeline:
    """What every part of one summary job goes through (see the module docstring).

    Args:
        summarizer: the summarizer the job runs with (its model decides the transcript rules).
        on_event: the caller's event callback (stream panes, the command's printer), if any.
    """

    def __init__(self, summarizer: Summarizer, on_event: EventCallback | None = None) -> None:
        self.summarizer = summarizer
        self.emit = safe_emit(on_event)
        self.drop_thinking, self.escape_harmony = transcript_rules(summarizer)
        self.warnings: list[str] = []
        """Cuts the runner reported and boundary tags escaped, in the order they happened."""

    async def part(
        self,
        part: Part,
        messages: list[dict[str, Any]],
        *,
        kind: PromptKind,
        max_tokens: int,
        previous_summary: str | None = None,
        instructions: str | None = None,
        replace_instructions: bool = False,
        extra_context: list[str] | None = None,
    ) -> str:
        """Summarize ``messages`` as ``part`` (``runner.run_part``) under the transcript rules.

        Raises what the part raised, after reporting ``PartFailed`` (``cancelled=True`` for a
        cancellation).
        """
        try:
            return await run_part(
                self.summarizer, part, messages, kind=kind, max_tokens=max_tokens,
                emit=self.emit, previous_summary=previous_summary, instructions=instructions,
                replace_instructions=replace_instructions, extra_context=extra_context,
                drop_thinking=self.drop_thinking, escape_harmony=self.escape_harmony,
                notes=self.warnings,
            )  # fmt: skip
        except asyncio.CancelledError:
            self.emit(PartFailed(part, "cancelled", cancelled=True))
            raise
        except SummarizeError as error:
            self.emit(PartFailed(part, str(error)))
            raise
        except Exception as error:  # a bug or an unexpected library error: still report it
            self.emit(PartFailed(part, f"{type(error).__name__}: {error}"))
            raise

    def escape_tags(self, text: str, what: str = "summary") -> str:
        """``text`` with boundary tags escaped; a warning names the tags found in ``what``."""
        tags = find_boundary_tags(text)
        if not tags:
            return text
        self.warnings.append(
            f"the {what} contained boundary tags ({', '.join(sorted(set(tags)))}); they were "
            "escaped before writing"
        )
        return escape_boundary_tags(text)
