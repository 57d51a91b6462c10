"""Facts pulled straight out of agent messages (pi ``AgentMessage`` dicts), no model involved.

Shared by the offline summarizer and the fidelity audit: the user's requests, tool calls paired
with their results, errors, files touched, commands run and the last unanswered request; and the
region's anchors for the audit (``extract_anchors``). What counts as an anchor (and the text,
error and command rules) is ``engine.anchors``'s, the one extractor the audits and the
analysis views share; its helpers are re-exported here.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from tui_compactor.engine.anchors import (
    AUDIT_KINDS,
    MAX_PER_KIND,
    AnchorKind,
    call_command,
    code_names,
    defined_names,
    error_lines,
    first_line,
    mentioned_paths,
    message_anchors,
    request_names,
    user_numbers,
)
from tui_compactor.engine.messages import message_text

__all__ = [
    "MAX_PER_KIND",
    "AnchorKind",
    "ToolCall",
    "Transcript",
    "code_names",
    "defined_names",
    "error_lines",
    "extract_anchors",
    "first_line",
    "mentioned_paths",
    "message_text",
    "read_transcript",
    "request_names",
    "user_numbers",
]


@dataclass
class ToolCall:
    """One tool call and, once seen, its result."""

    call_id: str
    name: str
    arguments: dict[str, Any]
    result: str | None = None
    is_error: bool = False
    note: str | None = None
    """The text of the assistant message that made the call (what it said it was doing)."""

    @property
    def path(self) -> str | None:
        """The ``path`` argument, when it is a non-empty string."""
        value = self.arguments.get("path") or self.arguments.get("file_path")
        return value if isinstance(value, str) and value else None

    @property
    def command(self) -> str | None:
        """The shell command of a bash-like call."""
        return call_command(self.arguments)

    def describe(self) -> str:
        """Short one-line form: ``edit src/a.py`` or ``bash: make test``."""
        if self.command:
            return f"{self.name}: `{first_line(self.command, 120)}`"
        if self.path:
            return f"{self.name} `{self.path}`"
        if self.arguments:
            args = json.dumps(self.arguments, ensure_ascii=False, sort_keys=True)
            return f"{self.name}({args[:100]}{'…' if len(args) > 100 else ''})"
        return self.name


@dataclass
class Transcript:
    """Everything the offline summarizer and the audit need from a list of messages."""

    user_requests: list[str] = field(default_factory=list)
    assistant_texts: list[str] = field(default_factory=list)
    tool_calls: list[ToolCall] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    summaries: list[str] = field(default_factory=list)
    read_files: list[str] = field(default_factory=list)
    modified_files: list[str] = field(default_factory=list)
    last_unanswered_request: str | None = None


def _add_unique(target: list[str], value: str) -> None:
    if value and value not in target:
        target.append(value)


def read_transcript(messages: list[dict[str, Any]]) -> Transcript:
    """Walk ``messages`` in order and collect the facts a handoff needs."""
    transcript = Transcript()
    calls_by_id: dict[str, ToolCall] = {}
    pending_request: str | None = None
    for message in messages:
        if not isinstance(message, dict):
            continue
        role = message.get("role")
        if role == "user":
            text = message_text(message).strip()
            if text:
                transcript.user_requests.append(text)
                pending_request = text
        elif role == "assistant":
            text = message_text(message).strip()
            if text:
                transcript.assistant_texts.append(text)
                pending_request = None
            content = message.get("content")
            for block in content if isinstance(content, list) else []:
                if not isinstance(block, dict) or block.get("type") != "toolCall":
                    continue
                arguments = block.get("arguments")
                call = ToolCall(
                    call_id=str(block.get("id", "")),
                    name=str(block.get("name", "tool")),
                    arguments=arguments if isinstance(arguments, dict) else {},
                    note=text or None,
                )
                transcript.tool_calls.append(call)
                calls_by_id[call.call_id] = call
                if call.command:
                    _add_unique(transcript.commands, call.command.strip())
                if call.path and not re.match(r"[a-z][a-z0-9+.-]*://", call.path, re.I):
                    if call.name == "read":
                        _add_unique(transcript.read_files, call.path)
                    elif call.name in ("write", "edit"):
                        _add_unique(transcript.modified_files, call.path)
        elif role == "toolResult":
            text = message_text(message)
            found = calls_by_id.get(str(message.get("toolCallId", "")))
            is_error = bool(message.get("isError"))
            if found is None:
                found = ToolCall(
                    str(message.get("toolCallId", "")), str(message.get("toolName", "tool")), {}
                )
                transcript.tool_calls.append(found)
            found.result = text
            found.is_error = is_error
            if is_error:
                for line in error_lines(text):
                    _add_unique(transcript.errors, line)
        elif role == "bashExecution":
            command = str(message.get("command", "")).strip()
            _add_unique(transcript.commands, command)
            exit_code = message.get("exitCode")
            output = str(message.get("output", ""))
            call = ToolCall(
                "",
                "bash",
                {"command": command},
                output,
                is_error=isinstance(exit_code, int) and exit_code != 0,
            )
            transcript.tool_calls.append(call)
            if call.is_error:
                for line in error_lines(output):
                    _add_unique(transcript.errors, line)
        elif role in ("branchSummary", "compactionSummary"):
            text = message_text(message).strip()
            if text:
                transcript.summaries.append(text)
        elif role == "custom":
            text = message_text(message).strip()
            if text and message.get("display", True):
                transcript.assistant_texts.append(text)
    transcript.read_files = [p for p in transcript.read_files if p not in transcript.modified_files]
    transcript.last_unanswered_request = pending_request
    return transcript


# -- anchors ---------------------------------------------------------------------------------


def _add(found: list[tuple[AnchorKind, str]], kind: AnchorKind, text: str) -> None:
    text = text.strip()
    if text and (kind, text) not in found and sum(k == kind for k, _ in found) < MAX_PER_KIND:
        found.append((kind, text))


def extract_anchors(
    messages: list[dict[str, Any]], transcript: Transcript | None = None
) -> list[tuple[AnchorKind, str]]:
    """The anchors of a region for the fidelity audit, in a stable order: (kind, text).

    Files the tools changed or read come first, then every message's anchors
    (``engine.anchors.message_anchors``) kind by kind in ``AUDIT_KINDS`` order, at most
    ``MAX_PER_KIND`` each, then the last unanswered request. ``transcript`` is
    ``read_transcript(messages)`` when the caller already has it.
    """
    if transcript is None:
        transcript = read_transcript(messages)
    found: list[tuple[AnchorKind, str]] = []
    for path in transcript.modified_files + transcript.read_files:
        _add(found, "path", path)
    per_message = [message_anchors(m) for m in messages if isinstance(m, dict)]
    for kind in AUDIT_KINDS:
        for anchors in per_message:
            for anchor_kind, text in anchors:
                if anchor_kind == kind:
                    _add(found, kind, text)
    if transcript.last_unanswered_request:
        found.append(("request", transcript.last_unanswered_request.strip()))
    return found
