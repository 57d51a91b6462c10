"""Facts pulled straight out of agent messages (pi ``AgentMessage`` dicts), no model involved.

Shared by the offline summarizer and the fidelity audit: the user's requests, tool calls paired
with their results, errors, files touched, commands run and the last unanswered request; and the
one anchor extractor (``extract_anchors``): the details a handoff must carry over exactly.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Literal

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


def first_line(text: str, limit: int = 160) -> str:
    """The first non-blank line of ``text``, shortened to ``limit`` characters."""
    for line in text.splitlines():
        stripped = " ".join(line.split())
        if stripped:
            return stripped if len(stripped) <= limit else stripped[: limit - 1] + "…"
    return ""


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
        value = self.arguments.get("command") or self.arguments.get("cmd")
        return value if isinstance(value, str) and value else None

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


_ERROR_LINE = re.compile(
    r"(?:^|\b)(?:[A-Z][A-Za-z]*(?:Error|Exception)|error(?:\[[A-Z0-9]+\])?|fatal|FAIL(?:ED)?|"
    r"Traceback|panic|ERR!)\b",
)


def error_lines(text: str, limit: int = 3) -> list[str]:
    """The most telling lines of an error output (e.g. ``TypeError: ...``)."""
    found = []
    for line in text.splitlines():
        stripped = line.strip()
        if stripped and _ERROR_LINE.search(stripped) and not stripped.startswith("Traceback"):
            found.append(stripped[:200])
            if len(found) >= limit:
                break
    if not found:
        line = first_line(text, 200)
        if line:
            found.append(line)
    return found


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
                found = ToolCall(str(message.get("toolCallId", "")),
                                 str(message.get("toolName", "tool")), {})
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
            call = ToolCall("", "bash", {"command": command}, output,
                            is_error=isinstance(exit_code, int) and exit_code != 0)
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

AnchorKind = Literal["path", "identifier", "error", "command", "number", "request"]

MAX_PER_KIND = 12
"""Anchors kept per kind (the first ones in region order)."""

_PATH = re.compile(
    r"(?<![\w/.-])((?:~|\.{1,2})?/?(?:[\w.-]+/)+[\w.-]+\.[A-Za-z0-9]{1,8}|[\w-]+\.(?:py|ts|tsx|js|"
    r"jsx|rs|go|md|json|jsonl|toml|yaml|yml|c|h|cpp|java|rb|sh|css|html|sql|txt|lock))(?![\w/])"
)
_DEFINITION = re.compile(
    r"\b(?:def|class|function|fn|func|interface|struct|enum|type)\s+([A-Za-z_]\w{2,})"
)
_CODE_SPAN = re.compile(r"`([A-Za-z_][\w.]*(?:\(\))?)`")
_BARE_IDENTIFIER = re.compile(
    r"(?<![\w./-])([a-z_][a-z0-9]*_[a-z0-9_]+|[a-z]+[A-Z][A-Za-z0-9]+|[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]+)"
    r"(?![\w/-])"
)
_NUMBER = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?(?:%|ms|s|k|KB|MB|GB)?)(?![\w.])")


def mentioned_paths(text: str) -> list[str]:
    """File paths written in ``text`` (URLs left out), in order, each once."""
    found: list[str] = []
    for match in _PATH.finditer(text):
        if "://" not in match.group(1):
            _add_unique(found, match.group(1))
    return found


def defined_names(text: str) -> list[str]:
    """Names a piece of code defines (``def x``, ``class X``, ``function x``...), each once."""
    found: list[str] = []
    for match in _DEFINITION.finditer(text):
        _add_unique(found, match.group(1))
    return found


def code_names(text: str) -> list[str]:
    """Names in backticks that look like code (``snake_case``, ``camelCase``, ``a.b``)."""
    found: list[str] = []
    for match in _CODE_SPAN.finditer(text):
        name = match.group(1).removesuffix("()")
        looks_like_code = "_" in name or "." in name or any(c.isupper() for c in name[1:])
        if looks_like_code and "/" not in name:
            _add_unique(found, name)
    return found


def request_names(text: str) -> list[str]:
    """Bare identifiers a user typed (``load_all``, ``checkForNewVersion``), each once."""
    found: list[str] = []
    for match in _BARE_IDENTIFIER.finditer(text):
        _add_unique(found, match.group(1))
    return found


def user_numbers(text: str) -> list[str]:
    """Numbers a user gave (two digits or more, units kept: ``45s``, ``200``, ``80%``)."""
    found: list[str] = []
    for match in _NUMBER.finditer(text):
        value = match.group(1)
        if len(value.rstrip("%msKBGk")) >= 2:
            _add_unique(found, value)
    return found


def _add(found: list[tuple[AnchorKind, str]], kind: AnchorKind, text: str) -> None:
    text = text.strip()
    if text and (kind, text) not in found and sum(k == kind for k, _ in found) < MAX_PER_KIND:
        found.append((kind, text))


def extract_anchors(
    messages: list[dict[str, Any]], transcript: Transcript | None = None
) -> list[tuple[AnchorKind, str]]:
    """The anchors of a region, in a stable order: (kind, text).

    ``transcript`` is ``read_transcript(messages)`` when the caller already has it.
    """
    if transcript is None:
        transcript = read_transcript(messages)
    found: list[tuple[AnchorKind, str]] = []
    texts = [message_text(m) for m in messages if isinstance(m, dict)]
    spoken = transcript.user_requests + transcript.assistant_texts
    for path in transcript.modified_files + transcript.read_files:
        _add(found, "path", path)
    for text in spoken:
        for path in mentioned_paths(text):
            _add(found, "path", path)
    for text in texts:
        for name in defined_names(text):
            _add(found, "identifier", name)
    for text in spoken:
        for name in code_names(text):
            _add(found, "identifier", name)
    for request in transcript.user_requests:
        for name in request_names(request):
            _add(found, "identifier", name)
    for error in transcript.errors:
        _add(found, "error", error[:120])
    for command in transcript.commands:
        _add(found, "command", first_line(command, 120))
    for request in transcript.user_requests:
        for number in user_numbers(request):
            _add(found, "number", number)
    if transcript.last_unanswered_request:
        found.append(("request", transcript.last_unanswered_request.strip()))
    return found
