"""Prompt templates and the order in which a summarizer request is assembled.

The templates are the Markdown files in the top-level ``prompts/`` folder. A wheel ships them as
``tui_compactor/prompts`` (hatch ``force-include``); an editable checkout reads them from the
repository. Assembly order (one user message):

1. ``<conversation>`` with the serialized messages,
2. ``<previous-summary>`` when one is carried,
3. ``<additional-context>`` lines when given,
4. the instructions: the default prompt, with custom instructions appended as
   ``Additional focus: ...`` or replacing it (the user's choice).

Untrusted text (previous summary, extra context) goes through the engine's one
``escape_boundary_tags``, which covers every tag we fence with, so it can neither close its own
block nor open or close another.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from pathlib import Path

from tui_compactor.engine.serialize import escape_boundary_tags

__all__ = [
    "PROMPT_NAMES",
    "PromptNotFound",
    "assemble_prompt",
    "load_prompt",
    "prompts_dir",
    "with_custom_instructions",
]

PROMPT_NAMES = (
    "system",
    "compaction-summary",
    "update-summary",
    "turn-prefix",
    "short-summary",
    "branch-summary",
    "branch-preamble",
    "handoff",
    "turn-prefix-update",
    "archive-context",
)
"""Every template this package uses (file ``prompts/NAME.md``)."""


class PromptNotFound(RuntimeError):
    """A template file is missing from both the installed package and the checkout."""


def prompts_dir() -> Path:
    """The folder holding the templates: installed package data first, then the checkout."""
    candidates: list[Path] = []
    try:
        installed = resources.files("tui_compactor") / "prompts"
        candidates.append(Path(str(installed)))
    except (ModuleNotFoundError, TypeError):  # pragma: no cover - namespace oddities
        pass
    candidates.append(Path(__file__).resolve().parents[2] / "prompts")
    for candidate in candidates:
        if (candidate / "system.md").is_file():
            return candidate
    searched = ", ".join(str(c) for c in candidates)
    raise PromptNotFound(f"prompt templates not found (looked in {searched})")


@cache
def load_prompt(name: str) -> str:
    """The text of ``prompts/NAME.md``; trailing whitespace stripped except for the preamble."""
    if name not in PROMPT_NAMES:
        raise PromptNotFound(f"unknown prompt {name!r}")
    path = prompts_dir() / f"{name}.md"
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise PromptNotFound(f"{path}: {error.strerror or error}") from None
    if name == "branch-preamble":
        # Prepended to the generated text without a separator: keep its blank line.
        return text.rstrip() + "\n\n"
    return text.rstrip()


def with_custom_instructions(
    default_prompt: str, instructions: str | None, *, replace: bool = False
) -> str:
    """The instructions: the default, the default + ``Additional focus``, or the custom text."""
    if not instructions or not instructions.strip():
        return default_prompt
    if replace:
        return instructions.strip()
    return f"{default_prompt}\n\nAdditional focus: {instructions.strip()}"


def assemble_prompt(
    conversation_text: str,
    instructions: str,
    *,
    previous_summary: str | None = None,
    extra_context: list[str] | None = None,
) -> str:
    """The user message: conversation, previous summary, extra context, then the instructions.

    ``conversation_text`` must already have its boundary tags escaped (the serializer does it);
    the previous summary and the extra context lines are escaped here.
    """
    parts = [f"<conversation>\n{conversation_text}\n</conversation>\n\n"]
    if previous_summary is not None:
        parts.append(
            f"<previous-summary>\n{escape_boundary_tags(previous_summary)}\n</previous-summary>\n\n"
        )
    lines = [line.strip() for line in (extra_context or []) if line and line.strip()]
    if lines:
        body = "\n".join(f"- {escape_boundary_tags(line)}" for line in lines)
        parts.append(f"<additional-context>\n{body}\n</additional-context>\n\n")
    parts.append(instructions)
    return "".join(parts)
