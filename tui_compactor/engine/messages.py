"""Entries to agent messages, and agent messages to what an LLM receives.

``message_from_entry`` is the reference's ``getMessageFromEntry``: a ``message`` entry gives its
message; ``custom_message``, ``branch_summary`` and ``compaction`` entries give a synthesized
``custom`` / ``branchSummary`` / ``compactionSummary`` message. ``convert_to_llm`` is
``convertToLlm``: bash executions become user text (or vanish when excluded from context),
custom messages become user messages, summaries are wrapped in their context templates.
Every function tolerates ``null`` in any slot: bad data gives empty text, never an exception.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Any

from tui_compactor.session.model import Entry

__all__ = [
    "COMPACTION_SUMMARY_PREFIX",
    "COMPACTION_SUMMARY_SUFFIX",
    "BRANCH_SUMMARY_PREFIX",
    "BRANCH_SUMMARY_SUFFIX",
    "MESSAGE_BEARING_TYPES",
    "message_from_entry",
    "compaction_message",
    "branch_summary_message",
    "custom_message",
    "bash_execution_text",
    "convert_to_llm",
    "content_blocks",
    "text_of",
    "timestamp_ms",
]

# The reference's context wrappers (literal strings the summarizer and the agent see).
COMPACTION_SUMMARY_PREFIX = (
    "The conversation history before this point was compacted into the following summary:"
    "\n\n<summary>\n"
)
COMPACTION_SUMMARY_SUFFIX = "\n</summary>"
BRANCH_SUMMARY_PREFIX = (
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n"
)
BRANCH_SUMMARY_SUFFIX = "</summary>"

MESSAGE_BEARING_TYPES = frozenset({"message", "custom_message", "branch_summary", "compaction"})
"""Entry types that can turn into an agent message."""


def timestamp_ms(value: Any) -> int | None:
    """``new Date(value).getTime()`` for an ISO string (None when it does not parse)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return int(value)
    if not isinstance(value, str):
        return None
    try:
        return int(datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp() * 1000)
    except ValueError:
        return None


def _data(entry: Entry | dict[str, Any]) -> dict[str, Any]:
    return entry if isinstance(entry, dict) else entry.data


def compaction_message(data: dict[str, Any]) -> dict[str, Any]:
    """The ``compactionSummary`` message a compaction entry stands for."""
    return {
        "role": "compactionSummary",
        "summary": data.get("summary"),
        "tokensBefore": data.get("tokensBefore"),
        "timestamp": timestamp_ms(data.get("timestamp")),
    }


def branch_summary_message(data: dict[str, Any]) -> dict[str, Any]:
    """The ``branchSummary`` message a branch_summary entry stands for."""
    return {
        "role": "branchSummary",
        "summary": data.get("summary"),
        "fromId": data.get("fromId"),
        "timestamp": timestamp_ms(data.get("timestamp")),
    }


def custom_message(data: dict[str, Any]) -> dict[str, Any]:
    """The ``custom`` message a custom_message entry stands for."""
    return {
        "role": "custom",
        "customType": data.get("customType"),
        "content": data.get("content"),
        "display": data.get("display"),
        "details": data.get("details"),
        "timestamp": timestamp_ms(data.get("timestamp")),
    }


def message_from_entry(entry: Entry | dict[str, Any]) -> dict[str, Any] | None:
    """The agent message an entry contributes, or None (``getMessageFromEntry``).

    ``compaction`` entries give their summary message; callers that must skip them (the
    compaction planner) check the entry type themselves.
    """
    data = _data(entry)
    kind = data.get("type")
    if kind == "message":
        message = data.get("message")
        return message if isinstance(message, dict) else None
    if kind == "custom_message":
        return custom_message(data)
    if kind == "branch_summary":
        return branch_summary_message(data)
    if kind == "compaction":
        return compaction_message(data)
    return None


def content_blocks(content: Any) -> list[dict[str, Any]]:
    """A message ``content`` as a list of block dicts (string -> one text block; junk dropped)."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return list(dict_blocks(content))


def dict_blocks(content: Any) -> Iterator[dict[str, Any]]:
    """The block dicts of a list ``content``, in order, without a copy (junk: none)."""
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict):
                yield block


def text_of(
    content: Any,
    joiner: str = "",
    *,
    images: str | None = None,
    tool_calls: bool = False,
    calls: list[dict[str, Any]] | None = None,
) -> str:
    """The readable text of a message ``content``: the one content-to-text rule.

    A string is returned as is; of a list of blocks, the text blocks are joined with ``joiner``.
    Thinking is always left out.

    Args:
        content: a message's ``content`` (string, list of blocks, or junk: junk gives "").
        joiner: put between the parts.
        images: when given, each image block reads as this text (e.g. ``[image]``).
        tool_calls: when True, each tool call reads as ``name(first argument)``.
        calls: when given, each tool-call block is appended to it (for a reader of both the
            text and the calls: one pass over the blocks).
    """
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts: list[str] = []
    for block in content:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            text = block.get("text")
            if isinstance(text, str):
                parts.append(text)
        elif kind == "image":
            if images is not None:
                parts.append(images)
        elif kind == "toolCall":
            if calls is not None:
                calls.append(block)
            if tool_calls:
                parts.append(f"{block.get('name', '?')}({_first_argument(block.get('arguments'))})")
    return joiner.join(parts)


def _first_argument(arguments: Any) -> str:
    """The first argument value of a tool call, which is usually the interesting one."""
    if isinstance(arguments, dict) and arguments:
        first = next(iter(arguments.values()))
        return str(first) if not isinstance(first, (dict, list)) else "…"
    return ""


def message_text(
    message: dict[str, Any], *, brief: bool = False, calls: list[dict[str, Any]] | None = None
) -> str:
    """The readable text of a message of any role (summaries, shell runs, content).

    ``brief`` is for one-line previews: a shell run is only its command, parts are joined with
    spaces, tool calls and images are named. Otherwise a shell run includes its output and the
    text parts are joined with newlines (what the summary audit reads). ``calls``: as for
    ``text_of``.
    """
    role = message.get("role")
    if role in ("branchSummary", "compactionSummary"):
        summary = message.get("summary")
        return summary if isinstance(summary, str) else ""
    if role == "bashExecution":
        command = f"$ {_str(message.get('command'))}"
        return command if brief else f"{command}\n{_str(message.get('output'))}".strip()
    content = message.get("content")
    if brief:
        return text_of(content, " ", images="[image]", tool_calls=True, calls=calls)
    return text_of(content, "\n", calls=calls)


def _str(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else str(value)


def bash_execution_text(message: dict[str, Any]) -> str:
    """How a user-run shell command reads in context (the reference's ``bashExecutionToText``)."""
    text = f"Ran `{_str(message.get('command'))}`\n"
    output = message.get("output")
    if output:
        text += f"```\n{_str(output)}\n```"
    else:
        text += "(no output)"
    exit_code = message.get("exitCode")
    if message.get("cancelled"):
        text += "\n\n(command cancelled)"
    elif exit_code is not None and exit_code != 0:
        text += f"\n\nCommand exited with code {exit_code}"
    if message.get("truncated") and message.get("fullOutputPath"):
        text += f"\n\n[Output truncated. Full output: {_str(message.get('fullOutputPath'))}]"
    return text


def convert_to_llm(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Agent messages -> LLM messages (``convertToLlm``).

    Unknown roles and bash executions excluded from context are dropped.
    """
    converted: list[dict[str, Any]] = []
    for message in messages:
        if not isinstance(message, dict):
            continue
        role = message.get("role")
        stamp = message.get("timestamp")
        if role == "bashExecution":
            if message.get("excludeFromContext"):
                continue
            text = bash_execution_text(message)
            converted.append(
                {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": stamp}
            )
        elif role in ("custom", "hookMessage"):
            content = message.get("content")
            if isinstance(content, str):
                content = [{"type": "text", "text": content}]
            converted.append({"role": "user", "content": content, "timestamp": stamp})
        elif role == "branchSummary":
            text = BRANCH_SUMMARY_PREFIX + _str(message.get("summary")) + BRANCH_SUMMARY_SUFFIX
            converted.append(
                {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": stamp}
            )
        elif role == "compactionSummary":
            summary = _str(message.get("summary"))
            text = COMPACTION_SUMMARY_PREFIX + summary + COMPACTION_SUMMARY_SUFFIX
            converted.append(
                {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": stamp}
            )
        elif role in ("user", "assistant", "toolResult"):
            converted.append(message)
    return converted


def is_remote_compaction(data: dict[str, Any]) -> bool:
    """oh-my-pi: the compaction carries a provider replay (``preserveData.openaiRemoteCompaction``
    with a ``replacementHistory`` list and a provider or a compaction item), so its summary is
    a placeholder and the history it replaced stays with the provider."""
    preserve = data.get("preserveData")
    if not isinstance(preserve, dict):
        return False
    remote = preserve.get("openaiRemoteCompaction")
    if not isinstance(remote, dict) or not isinstance(remote.get("replacementHistory"), list):
        return False
    if isinstance(remote.get("provider"), str):
        return True
    item = remote.get("compactionItem")
    if not isinstance(item, dict):
        return False
    return (
        item.get("type") == "compaction" and isinstance(item.get("encrypted_content"), str)
    ) or (item.get("type") == "compaction_summary")


class LazyMessage:
    """An agent message derived from its entry on first use (plans and contexts hold many).

    The message is kept only when the entry holds its record in memory anyway. An entry of a
    big, lazily read session re-reads its record on demand (the session keeps a bounded cache
    of recent ones), so a plan or context over 200,000 entries does not end up holding every
    record it ever looked at.
    """

    __slots__ = ("_message", "_entry", "_index")

    def __init__(self, message: dict[str, Any] | None, entry: Any) -> None:
        self._message = message
        # A lazily read session builds an ``Entry`` each time one is read (``EntryTable``):
        # held by every item of a 200,000-message context, they would cost ~70 MB. Such an
        # item keeps the entry's record source and index instead and rebuilds the entry.
        source = getattr(entry, "_source", None)
        if source is not None and hasattr(source, "entry_at"):
            self._entry = source
            self._index = entry.index
        else:
            self._entry = entry
            self._index = -1

    @property
    def entry(self) -> Any:
        """The entry the message comes from (None when made without one)."""
        if self._index < 0:
            return self._entry
        return self._entry.entry_at(self._index)

    @property
    def message(self) -> dict[str, Any]:
        """The agent message (``{}`` when the entry carries none)."""
        if self._message is not None:
            return self._message
        entry = self.entry
        derived = message_from_entry(entry) if entry is not None else None
        message = derived if derived is not None else {}
        if getattr(entry, "_source", None) is None:
            self._message = message
        return message

    def message_once(self) -> dict[str, Any]:
        """``message`` for a pass that reads many once each: a lazily read session's record
        is read without being kept in its cache of parsed records (``Entry.data_once``)."""
        if self._message is not None:
            return self._message
        entry = self.entry
        once = getattr(entry, "data_once", None)
        if once is None:
            return self.message
        derived = message_from_entry(once())
        return derived if derived is not None else {}


def _usable_key(value: Any) -> bool:
    return value is None or isinstance(value, (str, int, float))


class CallIds(set[Any]):
    """Tool-call ids to match calls with results. A value that cannot be a key (a dict or a
    list in a damaged file) is never a member and is not added, as a JavaScript ``Set`` never
    finds a freshly parsed object."""

    def __init__(self, values: Any = ()) -> None:
        super().__init__(value for value in values if _usable_key(value))

    def add(self, value: Any) -> None:
        """Add ``value`` if it can be a key."""
        if _usable_key(value):
            super().add(value)

    def __contains__(self, value: object) -> bool:
        return _usable_key(value) and super().__contains__(value)
