"""Conversation transcripts for the summarizer.

* ``serialize_pi``: pi's ``serializeConversation(convertToLlm(messages))`` exactly:
  ``[User]:``, ``[Assistant thinking]:``, ``[Assistant]:``, ``[Assistant tool calls]:``,
  ``[Tool result]:`` parts joined by blank lines, tool results cut at 2000 UTF-16 units with
  a ``[... N more characters truncated]`` marker, images dropped. No escaping (bit-exact).
* ``serialize_native``: our own transcript for our prompts. Same facts, clearer labels (tool
  names on results, custom and summary messages named), useless tool results dropped with
  their calls, thinking optionally dropped, and every piece of session text passed through
  ``escape_boundary_tags`` so it cannot close the prompt's ``<conversation>`` block.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tui_compactor.engine.jstext import js_keys, js_slice, js_stringify, utf16_len
from tui_compactor.engine.messages import (
    CallIds,
    bash_execution_text,
    content_blocks,
    convert_to_llm,
)

__all__ = [
    "TOOL_RESULT_MAX_CHARS",
    "BOUNDARY_TAGS",
    "truncate_for_summary",
    "escape_boundary_tags",
    "find_boundary_tags",
    "serialize_pi",
    "serialize_omp",
    "serialize_native",
]

TOOL_RESULT_MAX_CHARS = 2000
BOUNDARY_TAGS = (
    "conversation",
    "previous-summary",
    "additional-context",
    "summary",
    "instructions",
)
"""Tags our prompts use to fence untrusted text; session text may not open or close them."""

_BOUNDARY_TAG = re.compile(
    r"<\s*/?\s*(?:" + "|".join(re.escape(tag) for tag in BOUNDARY_TAGS) + r")\s*>", re.IGNORECASE
)


def escape_boundary_tags(text: str) -> str:
    """Neutralize boundary tags: ``</conversation>`` -> ``&lt;/conversation>`` (any case)."""
    if "<" not in text:
        return text
    return _BOUNDARY_TAG.sub(lambda match: "&lt;" + match.group()[1:], text)


def find_boundary_tags(text: str) -> list[str]:
    """The unescaped boundary tags in ``text`` (checks model output before it is written)."""
    if "<" not in text:
        return []
    return [match.group() for match in _BOUNDARY_TAG.finditer(text)]


def truncate_for_summary(text: str, limit: int = TOOL_RESULT_MAX_CHARS) -> str:
    """Keep the first ``limit`` UTF-16 units and say how many were cut."""
    length = utf16_len(text)
    if length <= limit:
        return text
    return f"{js_slice(text, limit)}\n\n[... {length - limit} more characters truncated]"


def _join_text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _args_text(args: Any, undefined: str = "undefined") -> str:
    """``k=JSON(v), …`` in JavaScript property order. ``undefined`` stands for a value JSON
    cannot render: pi's template literal writes ``undefined``, oh-my-pi writes ``null``."""
    if isinstance(args, list):
        args = {str(index): value for index, value in enumerate(args)}
    if not isinstance(args, dict):
        return ""
    return ", ".join(f"{key}={js_stringify(args[key]) or undefined}" for key in js_keys(args))


@dataclass(frozen=True, slots=True)
class _Dialect:
    """The labels and argument style of one agent's summarizer transcript."""

    user: str
    thinking: str
    assistant: str
    calls: str
    result: str
    args: Callable[[Any], str]


def _transcript(
    llm_messages: list[dict[str, Any]], dialect: _Dialect, skip: CallIds | None = None
) -> str:
    """The role-labelled transcript of converted messages; tool calls whose id is in ``skip``
    are left out with their results; other roles are not part of it."""
    skip = skip if skip is not None else CallIds()
    parts: list[str] = []
    for message in llm_messages:
        role = message.get("role")
        content = message.get("content")
        if role == "user":
            if isinstance(content, str):
                text = content
            else:
                text = _text_blocks(content)
            if text:
                parts.append(f"{dialect.user}{text}")
        elif role == "assistant":
            texts: list[str] = []
            thinking: list[str] = []
            calls: list[str] = []
            for block in content_blocks(content):
                kind = block.get("type")
                if kind == "text":
                    texts.append(_join_text(block.get("text")))
                elif kind == "thinking":
                    thinking.append(_join_text(block.get("thinking")))
                elif kind == "toolCall" and block.get("id") not in skip:
                    calls.append(
                        f"{_join_text(block.get('name'))}({dialect.args(block.get('arguments'))})"
                    )
            if thinking:
                parts.append(dialect.thinking + "\n".join(thinking))
            if texts:
                parts.append(dialect.assistant + "\n".join(texts))
            if calls:
                parts.append(dialect.calls + "; ".join(calls))
        elif role == "toolResult":
            if message.get("toolCallId") in skip:
                continue
            text = _text_blocks(content)
            if text:
                parts.append(f"{dialect.result}{truncate_for_summary(text)}")
    return "\n\n".join(parts)


def _text_blocks(content: Any) -> str:
    """The text blocks of a content list, joined."""
    return "".join(
        _join_text(block.get("text"))
        for block in content_blocks(content)
        if block.get("type") == "text"
    )


def serialize_pi(messages: list[dict[str, Any]], *, converted: bool = False) -> str:
    """pi's transcript of agent messages (``convert_to_llm`` first unless ``converted``)."""
    llm_messages = messages if converted else convert_to_llm(messages)
    return _transcript(llm_messages, _PI)


def serialize_omp(llm_messages: list[dict[str, Any]]) -> str:
    """oh-my-pi's ``serializeConversation`` (no dialect) of already converted messages:
    ``[User]:``, ``[Think]:``, ``[Assistant]:``, ``[Tool Call]:``, ``[Tool Result]:``; tool
    calls whose result is ``useless`` (and not an error) are left out with their results;
    developer messages (custom messages) are not part of the transcript."""
    return _transcript(llm_messages, _OMP, _useless_call_ids(llm_messages))


def _useless_call_ids(messages: list[dict[str, Any]]) -> CallIds:
    ids = CallIds()
    for message in messages:
        if (
            isinstance(message, dict)
            and message.get("role") == "toolResult"
            and message.get("useless") is True
            and message.get("isError") is not True
        ):
            call_id = message.get("toolCallId")
            if isinstance(call_id, str):
                ids.add(call_id)
    return ids


def serialize_native(messages: list[dict[str, Any]], *, drop_thinking: bool = False) -> str:
    """Our transcript of agent messages, every piece of session text boundary-escaped.

    Parts are ``## <Label>`` headed blocks joined by blank lines. Useless tool results
    (``useless: true``, not errors) are dropped together with their tool calls.
    """
    useless = _useless_call_ids(messages)
    parts: list[str] = []
    esc = escape_boundary_tags

    def text_blocks(content: Any, joiner: str) -> str:
        if isinstance(content, str):
            return content
        return joiner.join(
            _join_text(block.get("text"))
            for block in content_blocks(content)
            if block.get("type") == "text"
        )

    for message in messages:
        if not isinstance(message, dict):
            continue
        role = message.get("role")
        content = message.get("content")
        if role == "user":
            text = text_blocks(content, "\n")
            images = sum(1 for block in content_blocks(content) if block.get("type") == "image")
            if images:
                text = (text + "\n" if text else "") + f"[{images} image(s) omitted]"
            if text:
                parts.append(f"## User\n{esc(text)}")
        elif role == "assistant":
            lines: list[str] = []
            for block in content_blocks(content):
                kind = block.get("type")
                if kind == "thinking" and not drop_thinking:
                    thought = _join_text(block.get("thinking"))
                    if thought:
                        lines.append(f"(thinking) {esc(thought)}")
                elif kind == "text":
                    said = _join_text(block.get("text"))
                    if said:
                        lines.append(esc(said))
                elif kind == "toolCall":
                    if block.get("id") in useless:
                        continue
                    name = _join_text(block.get("name"))
                    lines.append(f"→ {esc(name)}({esc(_args_text(block.get('arguments')))})")
            if lines:
                parts.append("## Assistant\n" + "\n".join(lines))
        elif role == "toolResult":
            if message.get("toolCallId") in useless:
                continue
            text = text_blocks(content, "")
            if not text:
                continue
            name = _join_text(message.get("toolName")) or "tool"
            label = f"## Tool result ({esc(name)}{', error' if message.get('isError') else ''})"
            parts.append(f"{label}\n{esc(truncate_for_summary(text))}")
        elif role == "bashExecution":
            if message.get("excludeFromContext"):
                continue
            parts.append("## User ran a shell command\n" + esc(bash_execution_text(message)))
        elif role in ("custom", "hookMessage"):
            text = text_blocks(content, "\n")
            if text:
                kind = _join_text(message.get("customType")) or "custom"
                parts.append(f"## Extension message ({esc(kind)})\n{esc(text)}")
        elif role == "compactionSummary":
            summary = _join_text(message.get("summary"))
            if summary:
                parts.append(f"## Summary of earlier conversation\n{esc(summary)}")
        elif role == "branchSummary":
            summary = _join_text(message.get("summary"))
            if summary:
                parts.append(f"## Summary of an abandoned branch\n{esc(summary)}")
    return "\n\n".join(parts)


_PI = _Dialect(
    "[User]: ",
    "[Assistant thinking]: ",
    "[Assistant]: ",
    "[Assistant tool calls]: ",
    "[Tool result]: ",
    _args_text,
)
_OMP = _Dialect(
    "[User]: ",
    "[Think]: ",
    "[Assistant]: ",
    "[Tool Call]: ",
    "[Tool Result]: ",
    lambda args: _args_text(args, "null"),
)
