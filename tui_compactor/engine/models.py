"""Context windows of well-known models, so the gauge can use the session's own model.

A session records its model (``model_change`` entries and each assistant message) but not the
model's context window. When the user gives no ``--window``, the window of a model listed here
is used and shown as coming from the model; anything else falls back to the default and says so.
Matching is by prefix of the lower-cased model id (dated and provider-prefixed ids match too).
"""

from __future__ import annotations

KNOWN_CONTEXT_WINDOWS: tuple[tuple[str, int], ...] = (
    # Longest prefixes first: the first match wins.
    ("claude-3-5-haiku", 200_000),
    ("claude-3-", 200_000),
    ("claude-", 200_000),
    ("gpt-4.1", 1_047_576),
    ("gpt-4o", 128_000),
    ("gpt-4-turbo", 128_000),
    ("gpt-5", 400_000),
    ("o1", 200_000),
    ("o3", 200_000),
    ("o4-mini", 200_000),
    ("gemini-1.5-pro", 2_097_152),
    ("gemini-1.5-flash", 1_048_576),
    ("gemini-2", 1_048_576),
    ("deepseek-", 128_000),
    ("qwen3-coder", 262_144),
    ("kimi-k2", 131_072),
)
"""(model id prefix, context window in tokens)."""


def known_context_window(model_id: str | None) -> int | None:
    """The context window of ``model_id`` if it is a model listed above, else None."""
    if not isinstance(model_id, str) or not model_id:
        return None
    name = model_id.lower().rsplit("/", 1)[-1]
    for prefix, window in KNOWN_CONTEXT_WINDOWS:
        if name.startswith(prefix):
            return window
    return None
