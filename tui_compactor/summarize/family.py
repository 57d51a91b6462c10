"""The summarizer model's family, and what it changes in the transcript we send it.

oh-my-pi picks a transcript dialect from the model id, not from the provider it is reached
through: a Claude model behind an OpenAI-compatible gateway is still Claude. Two rules follow:

* **Thinking** is dropped from the transcript for Claude-family models only (oh-my-pi's
  ``anthropic`` dialect); every other family keeps it.
* **Harmony control tokens** (``<|start|>``, ``<|end|>``, ``<|message|>``, ``<|channel|>``,
  ``<|constrain|>``, ``<|return|>``, ``<|call|>``) in session text are escaped to the inert
  ``<\\|name\\|>`` spelling for OpenAI-family models (GPT, o-series, Codex, gpt-oss), whose
  servers reject those spellings inside data or could read them as structure.
"""

from __future__ import annotations

import re
from typing import Literal

__all__ = [
    "ModelFamily",
    "drops_thinking",
    "escape_harmony_tokens",
    "model_family",
    "transcript_rules",
    "uses_harmony",
]

ModelFamily = Literal["claude", "openai", "other"]

_HARMONY_TOKEN = re.compile(r"<\|(start|end|message|channel|constrain|return|call)\|>")
_OPENAI_ID = re.compile(r"^(gpt|chatgpt|o[1-9]|codex|openai)([-_.:]|$|\d)")


def model_family(model: str | None) -> ModelFamily:
    """The family of a model id such as ``anthropic/claude-sonnet-4`` or ``gpt-oss-120b``.

    The provider or gateway prefix (``openrouter/``, ``anthropic/``…) is ignored: only the
    model's own name decides.
    """
    if not model:
        return "other"
    bare = model.strip().lower().rsplit("/", 1)[-1]
    if "claude" in bare:
        return "claude"
    if "gpt-oss" in bare or _OPENAI_ID.match(bare):
        return "openai"
    return "other"


def drops_thinking(model: str | None) -> bool:
    """Whether thinking blocks are left out of the transcript sent to ``model``."""
    return model_family(model) == "claude"


def uses_harmony(model: str | None) -> bool:
    """Whether ``model`` reads the Harmony format (its control tokens must be escaped)."""
    return model_family(model) == "openai"


def escape_harmony_tokens(text: str) -> str:
    """``<|channel|>`` -> ``<\\|channel\\|>`` for every reserved Harmony token in ``text``."""
    return _HARMONY_TOKEN.sub(r"<\\|\1\\|>", text)


def transcript_rules(summarizer: object) -> tuple[bool, bool]:
    """``(drop_thinking, escape_harmony)`` for a summarizer, from its model id (offline: none)."""
    model = getattr(summarizer, "model", None)
    model = model if isinstance(model, str) else None
    return drops_thinking(model), uses_harmony(model)
