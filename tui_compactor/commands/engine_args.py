"""Switches and helpers shared by the engine commands (plan, context, serialize, navigate, export).

Nothing heavy is imported at module level: the CLI builds every parser on start-up.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

EXIT_OK = 0
EXIT_REFUSED = 1
"""A manual cut or navigation that the rules refuse (the reason is printed)."""
EXIT_USAGE = 2
"""Wrong arguments, unknown ids, files that cannot be read."""


class CommandError(Exception):
    """A user-facing error: printed as ``tui-compactor: <message>`` with exit status 2."""


def int_list(text: str) -> list[int]:
    """``"20000,50000"`` -> ``[20000, 50000]`` (argparse type)."""
    try:
        values = [int(part) for part in text.split(",") if part.strip()]
    except ValueError as error:
        raise argparse.ArgumentTypeError(
            f"not a comma-separated list of integers: {text}"
        ) from error
    if not values or any(value < 0 for value in values):
        raise argparse.ArgumentTypeError(f"expected non-negative integers: {text}")
    return values


def non_negative(text: str) -> int:
    """A non-negative integer (argparse type)."""
    try:
        value = int(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"not an integer: {text}") from error
    if value < 0:
        raise argparse.ArgumentTypeError(f"must not be negative: {text}")
    return value


def positive(text: str) -> int:
    """An integer greater than zero (argparse type; a context window of 0 means nothing)."""
    try:
        value = int(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"not an integer: {text}") from error
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be greater than 0: {text}")
    return value


def warn_reserve(window: int | None, reserve: int | None, rules: str) -> None:
    """Print the engine's warning (to stderr) when the reserve leaves no room in the window."""
    from tui_compactor.engine.settings import CompactionSettings, reserve_window_warning

    settings = CompactionSettings(
        reserve_tokens=reserve, context_window=window, rules="omp" if rules == "omp" else "pi"
    )
    warning = reserve_window_warning(window, settings)
    if warning:
        print(f"warning: {warning}", file=sys.stderr)


def format_ids(ids: list[str], *, head: int = 3, tail: int = 2) -> str:
    """``a, b, c, …, y, z (N entries)``: every id when few, else the first and last few."""
    from tui_compactor.textsafe import sanitize

    if not ids:
        return "(none)"
    shown = [sanitize(ident, single_line=True, max_len=40) for ident in ids]
    if len(shown) <= head + tail + 1:
        return ", ".join(shown)
    return ", ".join([*shown[:head], "…", *shown[-tail:]]) + f" ({len(shown)} entries)"


def add_session(parser: argparse.ArgumentParser) -> None:
    """The SESSION positional."""
    parser.add_argument("session", metavar="SESSION", help="session file (.jsonl)")


def add_leaf(parser: argparse.ArgumentParser, *, at: bool = False) -> None:
    """The node option: ``--leaf ID`` and ``--at ID`` are the same switch, both in ``--help``.

    ``at=True`` makes ``--at`` the name shown first (context, serialize, export: "what the
    model sees at this node"); otherwise ``--leaf`` leads (plan, navigate, compact).
    """
    flags = ["--at", "--leaf"] if at else ["--leaf", "--at"]
    parser.add_argument(
        *flags,
        dest="leaf",
        metavar="ID",
        help=(
            "entry id (or #INDEX) of the node to work at instead of the file's leaf "
            f"({flags[1]} is the same switch)"
        ),
    )


def add_common(parser: argparse.ArgumentParser, *, json_flag: bool = True) -> None:
    """``--tokens``, ``--rules`` and ``--json``."""
    parser.add_argument(
        "--tokens",
        choices=("cl100k", "pi", "bytes"),
        default="cl100k",
        help="token counter: cl100k (default), pi (pi's chars/4 estimate), bytes (oh-my-pi's)",
    )
    parser.add_argument(
        "--rules",
        choices=("pi", "omp"),
        default="pi",
        help="pi 0.73.1 (default; loses nothing) or oh-my-pi behaviour; see docs/rules.md",
    )
    if json_flag:
        parser.add_argument("--json", action="store_true", help="print JSON instead of text")


def load(path: str) -> Any:
    """Load a session; refused files raise ``CommandError``. Warnings go to stderr."""
    from tui_compactor.session.reader import load_session
    from tui_compactor.textsafe import sanitize

    session = load_session(path)
    verdict = str(getattr(session, "verdict", ""))
    if verdict == "refuse" or not session.entries:
        reasons = "; ".join(str(d) for d in session.diagnostics[:3]) or "no entries"
        raise CommandError(sanitize(f"cannot use {path}: {reasons}", single_line=True))
    problems = [
        d for d in session.diagnostics if str(getattr(d, "severity", "")) in ("warning", "error")
    ]
    if problems:
        first = sanitize(str(problems[0]), single_line=True, max_len=160)
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        print(f"note: {first}{more}; details: tui-compactor lint FILE", file=sys.stderr)
    return session


def resolve(session: Any, ident: str | None, *, what: str = "entry") -> int | None:
    """Entry index for an id (``#N`` = entry index N); None when ``ident`` is None."""
    from tui_compactor.textsafe import sanitize

    if ident is None:
        return None
    if ident.startswith("#") and ident[1:].isdigit():
        index = int(ident[1:])
        if index < len(session.entries):
            return index
        raise CommandError(f"{what} #{index} does not exist ({len(session.entries)} entries)")
    entry = session.entry_by_id(ident)
    if entry is None:
        raise CommandError(
            sanitize(f"no {what} with id {ident!r} in {session.path}", single_line=True)
        )
    return int(entry.index)


def leaf_or_default(session: Any, ident: str | None) -> int:
    """The chosen node, or the file's leaf."""
    index = resolve(session, ident, what="leaf")
    if index is None:
        index = session.leaf
    if index is None:
        raise CommandError(f"{session.path} has no entries")
    return index


def dump_json(value: Any) -> None:
    """Print JSON (UTF-8, stable key order as built) to stdout; see ``json_for_terminal``."""
    from tui_compactor.textsafe import json_for_terminal

    sys.stdout.write(json_for_terminal(value) + "\n")


def fail(error: CommandError) -> int:
    """Print a CommandError and return the usage exit status."""
    print(f"tui-compactor: {error}", file=sys.stderr)
    return EXIT_USAGE


def entry_id(session: Any, index: int | None) -> str | None:
    """Id of entry ``index`` (None stays None)."""
    return None if index is None else session.entries[index].id


def preview(message: dict[str, Any], width: int = 60) -> str:
    """One sanitized line that says what a message is about."""
    from tui_compactor.engine.messages import text_of
    from tui_compactor.textsafe import sanitize

    role = message.get("role")
    text = ""
    if role in ("compactionSummary", "branchSummary"):
        summary = message.get("summary")
        text = summary if isinstance(summary, str) else ""
    elif role == "bashExecution":
        text = "$ " + str(message.get("command") or "")
    elif role == "assistant":
        parts = []
        for block in message.get("content") or []:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text" and isinstance(block.get("text"), str):
                parts.append(block["text"])
            elif block.get("type") == "toolCall":
                parts.append(f"{block.get('name')}(…)")
        text = " ".join(parts)
    else:
        text = text_of(message.get("content"), " ")
    return sanitize(" ".join(text.split()), single_line=True, max_len=width)
