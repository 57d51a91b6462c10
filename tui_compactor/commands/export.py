"""``tui-compactor export``: the context at a node as Markdown or JSON.

Markdown has one section per message (role, source entry, tokens) with text as written, tool
calls and results in code fences long enough never to be closed by the content. JSON is the
``context --json`` object with each item's full message added. ``-o FILE`` writes a new file
(never overwrites one that exists unless ``--force``).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path
from typing import Any

from tui_compactor.commands import engine_args as common
from tui_compactor.textsafe import json_for_terminal, well_formed


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Register the command's switches."""
    common.add_session(parser)
    common.add_leaf(parser, at=True)
    parser.add_argument("--format", choices=("markdown", "json"), default="markdown")
    parser.add_argument("-o", "--output", metavar="FILE", default=None, help="write to FILE")
    parser.add_argument("--force", action="store_true", help="overwrite FILE if it exists")
    common.add_settings(parser)


def _fence(text: str, info: str = "") -> str:
    longest = max((len(run) for run in re.findall(r"`{3,}", text)), default=2)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{text}\n{fence}"


def _message_markdown(message: dict[str, Any]) -> str:
    from tui_compactor.engine.jstext import js_stringify
    from tui_compactor.engine.messages import bash_execution_text, content_blocks, text_of

    role = message.get("role")
    if role in ("compactionSummary", "branchSummary"):
        summary = message.get("summary")
        return summary if isinstance(summary, str) else ""
    if role == "bashExecution":
        return _fence(bash_execution_text(message), "text")
    if role == "toolResult":
        return _fence(text_of(message.get("content")), "text")
    parts: list[str] = []
    for block in content_blocks(message.get("content")):
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str):
            parts.append(block["text"])
        elif kind == "thinking" and isinstance(block.get("thinking"), str):
            quoted = "\n".join("> " + line for line in block["thinking"].splitlines())
            parts.append("> *thinking*\n>\n" + quoted)
        elif kind == "toolCall":
            args = js_stringify(block.get("arguments")) or "{}"
            parts.append(f"**tool call** `{block.get('name')}`\n\n" + _fence(args, "json"))
        elif kind == "image":
            parts.append("*[image]*")
    return "\n\n".join(parts)


def to_markdown(session: Any, data: dict[str, Any], messages: list[dict[str, Any]]) -> str:
    """Markdown for a ``context --json`` object and its messages."""
    model = data["model"] or {}
    lines = [
        f"# Context at `{data['leafId']}`",
        "",
        f"- session: `{data['session']}`",
        f"- model: {model.get('provider')}/{model.get('modelId')}" if model else "- model: none",
        f"- thinking level: {data['thinkingLevel']}",
        f"- context tokens: {data['contextTokens']['tokens']} ({data['tokens']})",
        f"- messages: {data['length']}",
        "",
    ]
    for number, (row, message) in enumerate(zip(data["items"], messages, strict=True), 1):
        excluded = " — excluded from context" if row.get("excludeFromContext") else ""
        lines.append(
            f"## {number}. {row['role']} (`{row['entryId']}`, {row['tokens']} tokens){excluded}"
        )
        lines.append("")
        lines.append(_message_markdown(message))
        lines.append("")
    return "\n".join(lines)


def _is_session(target: Path, session: Path) -> bool:
    """Whether ``target`` names the session file: the same path, a symbolic link to it or
    another hard link of it (``--force`` never replaces it)."""
    if target.resolve() == session.resolve():
        return True
    try:
        return target.exists() and os.path.samefile(target, session)
    except OSError:
        return False


def run(args: argparse.Namespace) -> int:
    """Write the export."""
    from tui_compactor.commands.context import ContextRows

    try:
        settings, session, leaf = common.load_at_leaf(args, writes=False)
    except common.CommandError as error:
        return common.fail(error)
    walk = ContextRows(session, leaf, settings.counter(), settings.rules)
    pairs = list(walk.rows())
    data = walk.json([row for _, row in pairs])
    messages = [item.message for item, _ in pairs]
    if args.format == "json":
        for row, message in zip(data["items"], messages, strict=True):
            row["message"] = message
        text = json_for_terminal(data) + "\n"
    else:
        text = to_markdown(session, data, messages)
    encoded = well_formed(text).encode("utf-8")
    if args.output:
        target = Path(args.output)
        if _is_session(target, Path(session.path)):
            return common.fail(common.CommandError("refusing to write over the session file"))
        if target.is_dir():
            return common.fail(common.CommandError(f"{target} is a directory: name a file"))
        if target.exists() and not args.force:
            return common.fail(common.CommandError(f"{target} exists (use --force to replace it)"))
        try:
            target.write_bytes(encoded)
        except OSError as error:  # no such directory, no permission, a full disk
            reason = error.strerror or type(error).__name__
            return common.fail(common.CommandError(f"cannot write {target}: {reason}"))
        print(f"wrote {target} ({len(encoded)} bytes)", file=sys.stderr)
        return common.EXIT_OK
    if sys.stdout.isatty():
        from tui_compactor.textsafe import sanitize

        sys.stdout.write(sanitize(text))
    else:
        sys.stdout.flush()
        sys.stdout.buffer.write(encoded)
        sys.stdout.buffer.flush()
    return common.EXIT_OK
