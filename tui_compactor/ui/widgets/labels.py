"""One-line descriptions of session entries, built as plain text from sanitized session data.

Shared by the tree, the details pane and the context view. Everything returned here passed
through ``textsafe.sanitize``; callers wrap it in ``rich.text.Text`` (never markup).
"""

from __future__ import annotations

from typing import Any, cast

from tui_compactor.engine.messages import text_of
from tui_compactor.engine.methods import compaction_preview, shaken_result
from tui_compactor.textsafe import sanitize

PREVIEW_CHARS = 200
"""Longest one-line preview kept for a row (the row is cropped to the screen anyway)."""


def content_text(content: Any) -> str:
    """A message ``content`` as one preview line's text (``engine.messages.text_of``)."""
    return text_of(content, " ", images="[image]", tool_calls=True)


def entry_kind(entry: Any) -> str:
    """A short kind name: user / assistant / tool / compaction / branch / model / ..."""
    if entry.type == "message":
        role = entry.role or "?"
        return {"toolResult": "tool", "bashExecution": "bash"}.get(role, role)
    return cast(str, {
        "compaction": "compaction",
        "branch_summary": "branch",
        "model_change": "model",
        "thinking_level_change": "thinking",
        "custom_message": "custom",
        "custom": "ext",
        "label": "label",
        "session_info": "info",
    }.get(entry.type, entry.type))


def entry_preview(entry: Any) -> str:
    """A single-line, sanitized preview of what ``entry`` says."""
    try:
        data = entry.data
    except Exception as error:  # a lazily loaded record that vanished or went bad
        return sanitize(f"(unreadable: {error})", single_line=True, max_len=PREVIEW_CHARS)
    return sanitize(_raw_preview(entry, data), single_line=True, max_len=PREVIEW_CHARS)


def _raw_preview(entry: Any, data: dict[str, Any]) -> str:
    """Unsanitized preview text by entry type."""
    kind = entry.type
    if kind == "message":
        message = data.get("message")
        if not isinstance(message, dict):
            return "(no message)"
        role = message.get("role")
        if role == "toolResult":
            name = message.get("toolName") or "tool"
            error = " error" if message.get("isError") else ""
            shaken = " shaken" if shaken_result(message) else ""
            return f"{name}{error}{shaken}: {content_text(message.get('content'))}"
        if role == "bashExecution":
            return f"$ {message.get('command', '')}"
        text = content_text(message.get("content"))
        return text or "(empty)"
    if kind == "compaction":
        return compaction_preview(data)
    if kind == "branch_summary":
        summary = cast(str, data.get("summary")) if isinstance(data.get("summary"), str) else ""
        return summary
    if kind == "model_change":
        return f"{data.get('provider', '?')}/{data.get('modelId', '?')}"
    if kind == "thinking_level_change":
        return str(data.get("thinkingLevel", "?"))
    if kind == "custom_message":
        return f"{data.get('customType', '?')}: {content_text(data.get('content'))}"
    if kind == "custom":
        return str(data.get("customType", "?"))
    if kind == "label":
        return f"{data.get('label', '')} → {data.get('targetId', '?')}"
    if kind == "session_info":
        return str(data.get("name", ""))
    return ""


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
    return f"{tokens / 1_000_000:.1f}M"
