"""One line saying what an entry holds, the same words in the app and in the commands.

The app's tree rows, its search and the navigation dialog, and the ``tree`` and ``navigate``
commands all show ``entry_preview``. The text is sanitized (``textsafe.sanitize``: one line,
no terminal controls) and capped; front-ends crop it further to their width.
"""

from __future__ import annotations

from typing import Any

from tui_compactor.engine.messages import text_of
from tui_compactor.engine.methods import compaction_preview, shaken_result
from tui_compactor.textsafe import sanitize

__all__ = ["PREVIEW_CHARS", "entry_preview"]

PREVIEW_CHARS = 200
"""Longest preview kept (a tree row is cropped to the screen anyway)."""


def entry_preview(
    entry: Any, rules: str, max_len: int = PREVIEW_CHARS, data: dict[str, Any] | None = None
) -> str:
    """A single-line, sanitized preview of what ``entry`` says ("" when it says nothing);
    ``rules`` decide whether a compaction names an extension as its author. ``data``: the
    entry's record when the caller read it already (a pass over many records reads them once,
    ``Session.records_once``); else ``entry.data``."""
    if data is None:
        try:
            data = entry.data
        except Exception as error:  # noqa: BLE001 - a lazily loaded record that vanished or went bad
            return sanitize(f"(unreadable: {error})", single_line=True, max_len=max_len)
    return sanitize(_raw_preview(entry, data, rules), single_line=True, max_len=max_len)


def _content_text(content: Any) -> str:
    """A message ``content`` as one line: text, ``[image]``, tool calls as ``name(arg)``."""
    return text_of(content, " ", images="[image]", tool_calls=True)


def _raw_preview(entry: Any, data: dict[str, Any], rules: str) -> str:
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
            return f"{name}{error}{shaken}: {_content_text(message.get('content'))}"
        if role == "bashExecution":
            return f"$ {message.get('command') or ''}"
        return _content_text(message.get("content")) or "(empty)"
    if kind == "compaction":
        return compaction_preview(data, rules)
    if kind == "branch_summary":
        summary = data.get("summary")
        return summary if isinstance(summary, str) and summary else "(empty summary)"
    if kind == "model_change":
        return f"{data.get('provider') or '?'}/{data.get('modelId') or '?'}"
    if kind == "thinking_level_change":
        return str(data.get("thinkingLevel") or "?")
    if kind == "custom_message":
        return f"{data.get('customType') or '?'}: {_content_text(data.get('content'))}"
    if kind == "custom":
        return str(data.get("customType") or "?")
    if kind == "label":
        label, target = data.get("label"), data.get("targetId", "?")
        return f"{label} → {target}" if label else f"(label cleared) → {target}"
    if kind == "session_info":
        return str(data.get("name") or "")
    return ""
