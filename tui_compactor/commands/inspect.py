"""``tui-compactor inspect SESSION [--json] [--tokens T] [--rules R] [--config PATH]``:
one row per entry.

``--json`` prints ``{"file", "verdict", "tokens", "header", "leafId", "roots", "leaves",
"entries"}`` where each entry is ``{index, id, parentId, type, role, tokens, depth, label,
line, offset, size}`` (``index`` is 0-based, header excluded, file order; ``tokens`` is counted
with the counter every other command and the app's tree rows use — ``--tokens``, else the config
file or ``TUI_COMPACTOR_TOKENS``, else the rules': cl100k under pi's, bytes under oh-my-pi's
(``--rules``, the config, the session) — and is set for message-bearing entries only).
Without ``--json`` a sanitized table is printed. Exit status 2
for a refused file (the JSON then carries the verdict and the error).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from tui_compactor.commands import engine_args
from tui_compactor.commands import session_args as common


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Register the command's switches."""
    parser.add_argument("session", metavar="SESSION", help="session file (.jsonl)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument(
        "--tokens",
        choices=("cl100k", "pi", "bytes"),
        default=None,
        help="token counter for message entries: cl100k, pi (chars/4), bytes; default: as the "
        "other commands choose (config, variable, else the rules: cl100k under pi, bytes "
        "under oh-my-pi)",
    )
    engine_args.add_rules(
        parser, "whose default counter counts (pi: cl100k, oh-my-pi: bytes); default: as the "
        "other commands choose (config, variable, the session)",
    )  # fmt: skip
    engine_args.add_config(parser)


def inspect_report(session: Any, counter_name: str | None) -> dict[str, Any]:
    """The ``inspect --json`` object."""
    cache = None
    if counter_name is not None:
        from tui_compactor.engine.tokens import TokenCache, get_counter

        cache = TokenCache(session, get_counter(counter_name))
    labels = session.labels
    entries = session.entries
    rows = []
    for entry in entries:
        rows.append(
            {
                "index": entry.index,
                "id": entry.id,
                "parentId": entry.parent_id,
                "type": entry.type,
                "role": entry.role,
                "tokens": cache.entry_tokens(entry.index) if cache is not None else None,
                "depth": session.depth(entry.index),
                "label": labels.get(entry.index),
                "line": entry.line,
                "offset": entry.offset,
                "size": entry.size,
            }
        )
    leaf = session.leaf
    return {
        "file": str(session.path),
        "verdict": session.verdict.value,
        "tokens": counter_name,
        "header": session.header,
        "titleSlot": session.title_slot,
        "leafId": entries[leaf].id if leaf is not None else None,
        "roots": [entries[i].id for i in session.roots],
        "leaves": [entries[i].id for i in session.leaves],
        "entries": rows,
    }


def run(args: argparse.Namespace) -> int:
    """Load the session and print one row per entry."""
    from tui_compactor.session.model import Verdict
    from tui_compactor.session.reader import load_session

    try:
        settings = engine_args.settings_from_args(args)
    except engine_args.CommandError as error:
        return engine_args.fail(error)
    session = load_session(args.session)
    try:
        if session.verdict is Verdict.REFUSE:
            fields = {"file": str(session.path), "verdict": session.verdict.value}
            return common.refuse(session, args.json, fields)
        report = inspect_report(session, settings.for_session(session).tokens)
    finally:
        session.close()
    if args.json:
        common.print_json(report)
    else:
        _print_table(report)
    return common.EXIT_OK


def _print_table(report: dict[str, Any]) -> None:
    safe = common.safe
    out = sys.stdout
    out.write(f"{safe(report['file'])}: {report['verdict']}, leaf {safe(report['leafId'])}\n")
    out.write(f"{'#':>6} {'line':>6} {'id':<10} {'parent':<10} {'type':<22} {'tokens':>7} "
              f"{'depth':>5}  label\n")  # fmt: skip
    for row in report["entries"]:
        kind = row["role"] if row["type"] == "message" and row["role"] else row["type"]
        tokens = "" if row["tokens"] is None else str(row["tokens"])
        out.write(
            f"{row['index']:>6} {row['line']:>6} {safe(row['id'], 10):<10} "
            f"{safe(row['parentId'] or '-', 10):<10} {safe(kind, 22):<22} {tokens:>7} "
            f"{row['depth']:>5}  {safe(row['label'] or '', 40)}\n"
        )
