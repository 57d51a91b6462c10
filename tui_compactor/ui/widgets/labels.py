"""One-line descriptions of session entries, built as plain text from sanitized session data.

Shared by the tree, the details pane and the context view. Everything returned here passed
through ``textsafe.sanitize``; callers wrap it in ``rich.text.Text`` (never markup).
"""

from __future__ import annotations

from typing import Any, cast


def entry_kind(entry: Any) -> str:
    """A short kind name: user / assistant / tool / compaction / branch / model / ..."""
    if entry.type == "message":
        role = entry.role or "?"
        return {"toolResult": "tool", "bashExecution": "bash"}.get(role, role)
    return cast(
        str,
        {
            "compaction": "compaction",
            "branch_summary": "branch",
            "model_change": "model",
            "thinking_level_change": "thinking",
            "custom_message": "custom",
            "custom": "ext",
            "label": "label",
            "session_info": "info",
        }.get(entry.type, entry.type),
    )


def format_tokens(tokens: int | None) -> str:
    """Compact token count: 950, 12.3k, 1.2M; '' for unknown."""
    if tokens is None:
        return ""
    if tokens < 1000:
        return str(tokens)
    if tokens < 100_000:
        return f"{tokens / 1000:.1f}k"
    if tokens < 1_000_000:
        return f"{tokens // 1000}k"
    if tokens < 10**12:
        return f"{tokens / 1_000_000:.1f}M"
    # A damaged usage can hold any integer (past a float's range, too): leading digit and
    # exponent, counted on the integer.
    digits = str(tokens)
    return f"{digits[0]}e{len(digits) - 1}"
