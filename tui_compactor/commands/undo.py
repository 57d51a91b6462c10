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


def run(args: argparse.Namespace) -> int:
    """Propose the undo, confirm, apply it; exit status per ``workbench.exits``."""
    from tui_compactor.commands.confirm import (
        confirm,
        dry_run_gate,
        gate_refusal,
        kept_growing,
        not_confirmed,
        refuse,
    )
    from tui_compactor.commands.session_args import finisher, refused_error, safe
    from tui_compactor.session.reader import load_session
    from tui_compactor.session.writer import AppendRefused
    from tui_compactor.workbench.actions import (
        MAX_REPLANS,
        ActionRefused,
        StaleProposal,
        apply,
        propose_undo,
    )
    from tui_compactor.workbench.handle import SessionHandle

    session = load_session(args.session)
    handle = SessionHandle(session)
    report: dict[str, Any] = {"session": str(session.path), "written": False}

    finish = finisher(args, report)

    if session.header is None and not session.entries:
        report["error"] = refused_error(session)
        return finish(EXIT_USAGE, f"tui-compactor: {safe(report['error'])}")
    options: dict[str, Any] = append_options(args)
    asked = False
    for _attempt in range(MAX_REPLANS + 1):
        with handle.read() as snapshot:
            try:
                proposal = propose_undo(snapshot, force=True)
            except ActionRefused as refused:
                refuse(report, refused)
                return finish(
                    EXIT_REFUSED, f"tui-compactor: {session.path.name}: {safe(refused.words)}"
                )
        report.update(proposal.extra)
        report["entriesLeavingActivePath"] = len(proposal.leaving)
        summary = safe(proposal.description, single_line=False)
        if proposal.leaving and not args.force:
            with handle.read() as snapshot:
                try:
                    propose_undo(snapshot)
                except ActionRefused as refused:
                    refuse(report, refused)
                    return finish(EXIT_REFUSED, f"{summary}\ntui-compactor: {safe(refused.words)}")
        if args.dry_run:
            report["dryRun"] = True
            gate = dry_run_gate(report, session)
            if gate is not None:
                print(gate, file=sys.stderr)
            return finish(EXIT_OK, summary)
        if not args.yes:
            if not sys.stdin.isatty():
                return finish(EXIT_REFUSED, f"{summary}\n{not_confirmed(report)}")
            print(summary)
            if not confirm("Append the leaf marker?", expected="undo"):
                return finish(EXIT_REFUSED, not_confirmed(report))
        elif asked:
            print("the session grew: undo planned again on the new state (--yes)", file=sys.stderr)
        try:
            result = apply(handle, proposal, **options)
        except StaleProposal as stale:
            print(f"tui-compactor: {stale}", file=sys.stderr)
            asked = True
            continue
        except AppendRefused as refused:
            return finish(EXIT_REFUSED, gate_refusal(report, refused))
        report["written"] = True
        report["markerId"] = result.ids[0]
        if result.took_over_stale_lock:
            report["note"] = result.took_over_stale_lock
        return finish(EXIT_OK, f"{summary}\nappended leaf marker {result.ids[0]}")
    return finish(EXIT_REFUSED, kept_growing(report))
