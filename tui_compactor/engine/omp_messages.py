"""oh-my-pi 18.2.3: what a context message becomes on the wire (``convertToLlm``).

The wrapper texts below are data oh-my-pi sends to the model, reproduced byte for byte like
pi's in ``messages.py``. oh-my-pi renders them through its prompt formatter, which also
touches the summary inside (trailing whitespace trimmed, runs of two or more blank lines
removed, table rows compacted, blank lines before a closing tag dropped): ``omp_format``
reproduces that pass.

* custom and legacy hook messages become ``developer`` messages (a custom message with
  images sends its text as developer and the images as a user message);
* bash executions become user text (``Ran `cmd```...), dropped when excluded from context;
* compaction summaries use the compaction wrapper, or the handoff wrapper for
  ``method: "handoff"``; a snapcompact summary is sent bare, followed by its archive blocks;
* branch summaries use the branch-return wrapper;
* a shaken tool result (``prunedAt``) sends its text blocks joined into one.
"""

from __future__ import annotations

import re
from typing import Any

from tui_compactor.engine.messages import content_blocks, timestamp_ms
from tui_compactor.engine.methods import ARCHIVE_NEWLINE, shaken_result

__all__ = [
    "OMP_COMPACTION_TEMPLATE",
    "OMP_HANDOFF_TEMPLATE",
    "OMP_BRANCH_TEMPLATE",
    "omp_format",
    "omp_render",
    "omp_custom_message",
    "omp_branch_summary_message",
    "omp_compaction_message",
    "snapcompact_blocks",
    "convert_to_llm_omp",
    "llm_text",
]

OMP_COMPACTION_TEMPLATE = (
    "Prior model work/tool state available.\n"
    "MUST build on prior work; NEVER duplicate prior work.\n"
    "\n"
    "<summary>\n"
    "{summary}\n"
    "</summary>\n"
)
OMP_HANDOFF_TEMPLATE = (
    "Context replaced. The <handoff> below is a handoff document a prior instance of you wrote "
    "from the full conversation. It is your own working memory, not user input.\n"
    "- First person inside it refers to you (the prior instance).\n"
    '- "Next Steps" is your own resumed plan; re-check it against the latest user message '
    "before acting.\n"
    "- The handoff already exists and is complete: NEVER write another handoff document unless "
    "the user explicitly asks.\n"
    "MUST build on prior work; NEVER duplicate prior work.\n"
    "\n"
    "<handoff>\n"
    "{summary}\n"
    "</handoff>\n"
)
OMP_BRANCH_TEMPLATE = "Branch-return summary:\n\n<summary>\n{summary}\n</summary>\n"

FRAME_DATA_BYTES_BUDGET = 3_000_000
"""Base64 bytes of snapcompact frames one rebuilt request may carry (newest first)."""
_DIM_MARKERS = re.compile("[\u000e\u000f]")

# JavaScript's whitespace set (``\s``, ``trim``), which differs from Python's.
_JS_WS = "\t\n\u000b\u000c\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_TRAILING_WS = re.compile(f"[{_JS_WS}]+$")
_LEADING_WS = re.compile(f"^[{_JS_WS}]+")
_NON_BLANK = re.compile(f"[^{_JS_WS}]")
_TABLE_ROW = re.compile("^\\|[^\n\r\u2028\u2029]*\\|$")
_TABLE_SEP = re.compile(f"^\\|[-:{_JS_WS}|]+\\|$")
_CLOSING_TAG = re.compile("^</[a-z_-]+>$")


def _js_trim(text: str) -> str:
    return _LEADING_WS.sub("", _TRAILING_WS.sub("", text))


def _compact_table_row(line: str) -> str:
    return "|".join(_js_trim(cell) for cell in line.split("|"))


def _compact_table_sep(line: str) -> str:
    cells = [cell for cell in line.split("|") if _js_trim(cell)]
    out = []
    for cell in cells:
        trimmed = _js_trim(cell)
        left, right = trimmed.startswith(":"), trimmed.endswith(":")
        out.append(":---:" if left and right else ":---" if left else "---:" if right else "---")
    return "|" + "|".join(out) + "|"


def omp_format(content: str) -> str:
    """oh-my-pi's post-render prompt formatting (``format`` with its defaults)."""
    lines = content.split("\n")
    result: list[str] = []
    in_code = False
    index = 0
    count = len(lines)
    while index < count:
        line = _TRAILING_WS.sub("", lines[index])
        indent = len(line) - len(_LEADING_WS.sub("", line))
        first = line[indent] if indent < len(line) else ""
        if first in ("`", "~") and (
            line.startswith("```", indent) or line.startswith("~~~", indent)
        ):
            in_code = not in_code
            result.append(line)
            index += 1
            continue
        if in_code:
            result.append(line)
            index += 1
            continue
        closing = False
        if first == "<":
            rest = line[indent:]
            closing = rest[1:2] == "/" and _CLOSING_TAG.match(rest) is not None
        elif first == "|":
            rest = line[indent:]
            if _TABLE_SEP.match(rest):
                line = line[:indent] + _compact_table_sep(rest)
            elif _TABLE_ROW.match(rest):
                line = line[:indent] + _compact_table_row(rest)
        if indent >= len(line):
            following = lines[index + 1] if index + 1 < count else None
            if following is None or not _NON_BLANK.search(following):
                while result and result[-1] == "":
                    result.pop()
                index += 1
                while index < count and not _NON_BLANK.search(lines[index]):
                    index += 1
                continue
            if not result or result[-1] == "":
                index += 1
                continue
        if closing:
            while result and result[-1] == "":
                result.pop()
        result.append(line)
        index += 1
    while result and result[-1] == "":
        result.pop()
    return "\n".join(result)


def omp_render(template: str, summary: str) -> str:
    """A wrapper template with the summary filled in, formatted as oh-my-pi sends it."""
    return omp_format(template.replace("{summary}", summary))


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def omp_custom_message(data: dict[str, Any]) -> dict[str, Any] | None:
    """The ``custom`` message a custom_message entry replays as (None: unsendable content)."""
    content = data.get("content")
    if not isinstance(content, (str, list)):
        return None
    message: dict[str, Any] = {
        "role": "custom",
        "customType": data.get("customType") if isinstance(data.get("customType"), str) else "",
        "content": content,
        "display": data.get("display"),
        "details": data.get("details"),
        "timestamp": timestamp_ms(data.get("timestamp")),
    }
    if "attribution" in data:
        message["attribution"] = data.get("attribution")
    return message


def omp_branch_summary_message(data: dict[str, Any]) -> dict[str, Any]:
    """The ``branchSummary`` message of a branch_summary entry."""
    return {
        "role": "branchSummary",
        "summary": data.get("summary"),
        "fromId": data.get("fromId"),
        "timestamp": timestamp_ms(data.get("timestamp")),
    }


def _archive_text(text: str) -> str:
    return _DIM_MARKERS.sub("", text).replace(ARCHIVE_NEWLINE, "\n")


def snapcompact_blocks(preserve: Any) -> list[dict[str, Any]] | None:
    """The archive blocks a snapcompact compaction re-attaches after its summary, or None.

    Oldest text edge, the imaged middle (frames newest-first within the payload budget, a
    notice for frames left out), then the newest text edge.
    """
    if not isinstance(preserve, dict):
        return None
    archive = preserve.get("snapcompact")
    if not isinstance(archive, dict):
        return None
    raw_frames = archive.get("frames")
    frames = [
        frame
        for frame in (raw_frames if isinstance(raw_frames, list) else [])
        if isinstance(frame, dict)
        and isinstance(frame.get("data"), str)
        and frame["data"]
        and isinstance(frame.get("mimeType"), str)
        and all(isinstance(frame.get(key), (int, float)) for key in ("cols", "rows", "chars"))
    ]
    text = archive.get("text") if isinstance(archive.get("text"), str) else ""
    head = archive.get("textHead") if isinstance(archive.get("textHead"), str) else ""
    tail = archive.get("textTail") if isinstance(archive.get("textTail"), str) else ""
    if not frames and not text and not head and not tail:
        return None
    truncated = archive.get("truncatedChars")
    truncated = truncated if isinstance(truncated, (int, float)) else 0
    slots: list[dict[str, Any] | int] = []
    used = 0
    for frame in reversed(frames):
        size = len(frame["data"])
        if used + size > FRAME_DATA_BYTES_BUDGET:
            slots.append(size)
            continue
        used += size
        slots.append(frame)
    slots.reverse()
    middle: list[dict[str, Any]] = []
    gap_frames = gap_bytes = 0
    for slot in [*slots, None]:
        if isinstance(slot, int):
            gap_frames += 1
            gap_bytes += slot
            continue
        if gap_frames:
            middle.append({"type": "text", "text": _omitted_notice(gap_frames, gap_bytes)})
            gap_frames = gap_bytes = 0
        if isinstance(slot, dict):
            image = {"type": "image", "data": slot["data"], "mimeType": slot["mimeType"]}
            if slot.get("detail"):
                image["detail"] = slot["detail"]
            middle.append(image)
    has_images = any(block["type"] == "image" for block in middle)
    has_omitted = any(block["type"] == "text" for block in middle)
    blocks: list[dict[str, Any]] = []
    if head:
        suffix = "\n-------------- imaged middle below\n" if has_images else ""
        blocks.append({"type": "text", "text": _archive_text(head) + suffix})
    blocks.extend(middle)
    if tail:
        if has_images:
            prefix = "-------------- imaged middle above\n"
        elif truncated > 0 or has_omitted:
            prefix = "\n-------------- middle history omitted above\n"
        else:
            prefix = ""
        tail_text = prefix + _archive_text(tail)
        if blocks and blocks[-1]["type"] == "text":
            blocks[-1] = {"type": "text", "text": blocks[-1]["text"] + tail_text}
        else:
            blocks.append({"type": "text", "text": tail_text})
    return blocks or None


def _omitted_notice(frames: int, size: int) -> str:
    if size >= 1_000_000:
        amount = f"{size / 1_000_000:.1f} MB"
    elif size >= 1_000:
        amount = f"{size / 1_000:.1f} KB"
    else:
        amount = f"{size} B"
    note = (
        f" {amount} of base64 exceeded the per-request snapcompact payload budget."
        if size > 0
        else ""
    )
    plural = "" if frames == 1 else "s"
    return (
        "-------------- snapcompact image middle omitted\n"
        f"{frames:,} archived image frame{plural} could not be included.{note} The compacted "
        "summary and visible text edges remain available.\n--------------"
    )


def omp_compaction_message(
    data: dict[str, Any], *, provider_payload: str | None = None
) -> dict[str, Any]:
    """The ``compactionSummary`` message a compaction entry replays as (with its archive)."""
    message: dict[str, Any] = {
        "role": "compactionSummary",
        "summary": _str(data.get("summary")),
        "tokensBefore": data.get("tokensBefore"),
        "method": data.get("method"),
        "timestamp": timestamp_ms(data.get("timestamp")),
    }
    if data.get("shortSummary") is not None:
        message["shortSummary"] = data.get("shortSummary")
    blocks = snapcompact_blocks(data.get("preserveData"))
    if blocks:
        message["blocks"] = blocks
    if provider_payload is not None:
        message["providerPayload"] = {"type": provider_payload}
    return message


def _pruned_content(content: Any) -> list[dict[str, Any]]:
    blocks = content_blocks(content)
    texts = [_str(block.get("text")) for block in blocks if block.get("type") == "text"]
    joined = "".join(texts) or "[Output truncated]"
    first = next((i for i, block in enumerate(blocks) if block.get("type") == "text"), -1)
    if first < 0:
        return [{"type": "text", "text": joined}, *blocks]
    out = []
    for position, block in enumerate(blocks):
        if block.get("type") != "text":
            out.append(block)
        elif position == first:
            out.append({"type": "text", "text": joined})
    return out


def _bash_text(message: dict[str, Any]) -> str:
    """``bashExecutionToText`` (output notices from ``meta`` are not reproduced)."""
    text = f"Ran `{_str(message.get('command'))}`\n"
    output = message.get("output")
    text += f"```\n{output}\n```" if isinstance(output, str) and output else "(no output)"
    exit_code = message.get("exitCode")
    if message.get("cancelled"):
        text += "\n\n(command cancelled)"
    elif exit_code is not None and exit_code != 0:
        text += f"\n\nCommand exited with code {exit_code}"
    return text


def convert_to_llm_omp(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Agent messages -> the messages oh-my-pi sends (``convertToLlm``)."""
    out: list[dict[str, Any]] = []
    for message in messages:
        if not isinstance(message, dict):
            continue
        role = message.get("role")
        stamp = message.get("timestamp")
        if role == "bashExecution":
            if message.get("excludeFromContext"):
                continue
            attached = message.get("images")
            extra: list[Any] = attached if isinstance(attached, list) else []
            bash = [{"type": "text", "text": _bash_text(message)}, *extra]
            out.append({"role": "user", "content": bash, "timestamp": stamp})
        elif role in ("custom", "hookMessage"):
            content = message.get("content")
            if not isinstance(content, (str, list)):
                continue
            if (
                role == "custom"
                and message.get("customType") == "skill-prompt"
                and message.get("attribution") == "user"
            ):
                out.append({"role": "user", "content": content_blocks(content), "timestamp": stamp})
                continue
            blocks = content_blocks(content)
            images = [block for block in blocks if block.get("type") == "image"]
            if isinstance(content, list) and images:
                texts = [block for block in blocks if block.get("type") == "text"]
                if texts:
                    out.append({"role": "developer", "content": texts, "timestamp": stamp})
                notice = f"Images attached to {message.get('customType')}."
                out.append(
                    {
                        "role": "user",
                        "content": [{"type": "text", "text": notice}, *images],
                        "timestamp": stamp,
                    }
                )
                continue
            out.append({"role": "developer", "content": blocks, "timestamp": stamp})
        elif role == "branchSummary":
            text = omp_render(OMP_BRANCH_TEMPLATE, _str(message.get("summary")))
            out.append({"role": "user", "content": [{"type": "text", "text": text}]})
        elif role == "compactionSummary":
            summary = _str(message.get("summary"))
            archive = message.get("blocks")
            if isinstance(archive, list):
                content = [{"type": "text", "text": summary}, *archive]
            else:
                template = (
                    OMP_HANDOFF_TEMPLATE
                    if message.get("method") == "handoff"
                    else OMP_COMPACTION_TEMPLATE
                )
                content = [{"type": "text", "text": omp_render(template, summary)}]
            converted = {"role": "user", "content": content, "timestamp": stamp}
            if message.get("providerPayload") is not None:
                converted["providerPayload"] = message["providerPayload"]
            out.append(converted)
        elif role == "toolResult":
            converted = dict(message)
            if shaken_result(message):
                converted["content"] = _pruned_content(message.get("content"))
            out.append(converted)
        elif role in ("user", "developer", "assistant"):
            out.append(message)
    return out


def llm_text(message: dict[str, Any]) -> str:
    """The concatenated text blocks of an LLM message (a string content as is)."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    return "".join(
        block["text"]
        for block in content_blocks(content)
        if block.get("type") == "text" and isinstance(block.get("text"), str)
    )
