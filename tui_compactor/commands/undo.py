"""``tui-compactor undo``: move the leaf back above the last compaction on the active path.

Nothing is deleted. A leaf marker (a ``custom`` entry pi ignores for context) is appended as a
child of the compaction's parent, so pi, which resumes at the last entry of the file, continues
from just above the compaction; the compaction stays in the file on a side branch. The append
goes through the writer's gate and is refused, with the reason, when the file is not safe to
append to. Writes only with ``--yes`` or a typed confirmation.

Entries written after the compaction on the active path (ignoring our own leaf markers) leave
the active path too: they stay in the file but the agent no longer sees them. The command
always says how many, and refuses without ``--force`` when there are any, so an older
compaction (say, pi's own) cannot silently rewind hundreds of entries.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from tui_compactor.commands.confirm import add_append_options, append_options
from tui_compactor.workbench.exits import EXIT_OK, EXIT_REFUSED, EXIT_USAGE


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Register the command's switches."""
    parser.add_argument("session", metavar="SESSION", help="session .jsonl file")
    parser.add_argument("--yes", action="store_true", help="append without asking")
    parser.add_argument(
        "--force",
        action="store_true",
        help="undo even when entries written after the compaction would leave the active path",
    )
    parser.add_argument("--dry-run", action="store_true", help="show what would happen")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    add_append_options(parser)


def find_last_compaction(session: Any) -> int | None:
    """Index of the last ``compaction`` entry on the path from the file's leaf, or None."""
    if session.leaf is None:
        return None
    path: list[int] = session.path_to(session.leaf)
    for index in reversed(path):
        if session.entries[index].type == "compaction":
            return index
    return None


def entries_after_on_path(session: Any, compaction: int) -> int:
    """How many entries after ``compaction`` on the leaf's path would leave the active path.

    Our own leaf markers (``tui-compactor/leaf``) are not counted: they only move the leaf.
    """
    from tui_compactor.session.writer import is_leaf_marker

    if session.leaf is None:
        return 0
    path: list[int] = session.path_to(session.leaf)
    try:
        position = path.index(compaction)
    except ValueError:
        return 0
    count = 0
    for index in path[position + 1 :]:
        entry = session.entries[index]
        if entry.type == "custom" and is_leaf_marker(entry.data):
            continue
        count += 1
    return count


def run(args: argparse.Namespace) -> int:
    """Find the compaction, confirm, append the leaf marker; exit status per module doc."""
    from tui_compactor.commands.confirm import confirm
    from tui_compactor.commands.session_args import print_json, safe
    from tui_compactor.session.reader import load_session
    from tui_compactor.session.writer import AppendRefused, append_entry, make_leaf_marker

    session = load_session(args.session)
    report: dict[str, Any] = {"session": str(session.path), "written": False}

    def finish(status: int, message: str | None = None) -> int:
        if args.json:
            print_json(report)
        elif message:
            print(message, file=sys.stderr if status else sys.stdout)
        return status

    if session.header is None and not session.entries:
        report["error"] = f"{session.path}: not a usable session"
        return finish(EXIT_USAGE, f"tui-compactor: {safe(report['error'])}")
    compaction = find_last_compaction(session)
    if compaction is None:
        report["error"] = "no compaction on the active path; nothing to undo"
        return finish(EXIT_REFUSED, f"tui-compactor: {session.path.name}: {report['error']}")
    entry = session.entries[compaction]
    parent = entry.parent
    leaf = session.leaf
    assert leaf is not None  # a compaction was found on the leaf's path
    report["compactionId"] = entry.id
    report["compactionLine"] = entry.line
    report["previousLeafId"] = session.entries[leaf].id
    if parent is None:
        report["error"] = (
            f"compaction {entry.id} has no parent entry; there is nothing above it to resume at"
        )
        return finish(EXIT_REFUSED, f"tui-compactor: {safe(report['error'])}")
    report["newLeafParentId"] = session.entries[parent].id
    leaving = entries_after_on_path(session, compaction)
    report["entriesLeavingActivePath"] = leaving
    summary = (
        f"undo compaction {safe(entry.id)} (line {entry.line}): the agent will resume at "
        f"{safe(session.entries[parent].id)} (line {session.entries[parent].line}); the "
        "compaction stays in the file on a side branch\n"
        f"{leaving} {'entry' if leaving == 1 else 'entries'} after it leave the active path "
        "(nothing is deleted)"
    )
    if leaving and not args.force:
        report["error"] = (
            f"refusing to undo: {leaving} {'entry' if leaving == 1 else 'entries'} written "
            "after this compaction would leave the active path; pass --force to undo anyway"
        )
        return finish(EXIT_REFUSED, f"{summary}\ntui-compactor: {report['error']}")
    if args.dry_run:
        report["dryRun"] = True
        return finish(EXIT_OK, summary)
    if not args.yes:
        if not sys.stdin.isatty():
            report["error"] = "not confirmed: pass --yes to append the leaf marker"
            return finish(EXIT_REFUSED, f"{summary}\ntui-compactor: {report['error']}")
        print(summary)
        if not confirm("Append the leaf marker?", expected="undo"):
            report["error"] = "not confirmed"
            return finish(EXIT_REFUSED, "tui-compactor: not confirmed; nothing written")
    marker = make_leaf_marker(
        reason="undo", undone_entry_id=entry.id, previous_leaf_id=report["previousLeafId"]
    )
    gate_options: dict[str, Any] = append_options(args)
    try:
        result = append_entry(session, marker, parent_index=parent, **gate_options)
    except AppendRefused as refused:
        report["refused"] = {"code": refused.code, "reason": refused.reason, "hint": refused.hint}
        return finish(
            EXIT_REFUSED,
            f"tui-compactor: {safe(refused.reason)}\n  {safe(refused.hint)}",
        )
    report["written"] = True
    report["markerId"] = result.ids[0]
    if result.took_over_stale_lock:
        report["note"] = result.took_over_stale_lock
    return finish(EXIT_OK, f"{summary}\nappended leaf marker {result.ids[0]}")
