"""``tui-compactor seal SESSION [--yes] [--json] [--quiet-window S]``: end a torn last line.

A crash while an agent was writing can leave the file ending in part of a record with no
newline. Anything appended after it would be glued onto that fragment and lost, so the append
gate refuses until the tail is sealed. Sealing appends exactly one ``\\n``: the fragment stays
in the file as a malformed line (pi skips it too), nothing is truncated or rewritten. The
command explains what it found (line, size, which entry the fragment looks like) and writes
only with ``--yes`` or a typed ``yes``; the writer's gate (header, unchanged file, no live
writer, locks) still has the last word.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from tui_compactor.commands.confirm import add_append_options, append_options
from tui_compactor.workbench.exits import EXIT_OK, EXIT_REFUSED, EXIT_USAGE

FRAGMENT_PEEK_BYTES = 4096
"""How much of the torn line is read to recognise the entry it started."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Register the command's switches."""
    parser.add_argument("session", metavar="SESSION", help="session .jsonl file")
    parser.add_argument("--yes", action="store_true", help="append the newline without asking")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    add_append_options(parser)


def describe_tail(session: Any) -> dict[str, Any] | None:
    """What the unterminated last line is, or None when the file ends with a newline.

    Returns ``{"line", "offset", "bytes", "torn", "entryId", "kind"}``: ``torn`` is True for an
    incomplete record, False for a complete record that merely lacks its final newline;
    ``entryId`` / ``kind`` are what the start of the line looks like (None if unreadable).
    """
    from tui_compactor.session.reader import fragment_fields

    snapshot = session.snapshot
    if snapshot.size == 0 or snapshot.ends_with_newline:
        return None
    torn = next((d for d in session.diagnostics if d.code == "torn-tail"), None)
    if torn is not None and torn.offset is not None:
        line, offset = torn.line, torn.offset
    else:
        line, offset = _last_line_start(session)
    head = b""
    try:
        with open(session.path, "rb") as handle:
            handle.seek(offset)
            head = handle.read(min(FRAGMENT_PEEK_BYTES, max(0, snapshot.size - offset)))
    except OSError:
        pass
    entry_id, kind = fragment_fields(head)
    if torn is not None and torn.entry_id:
        entry_id = torn.entry_id
    return {
        "line": line,
        "offset": offset,
        "bytes": snapshot.size - offset,
        "torn": snapshot.torn_tail,
        "entryId": entry_id,
        "kind": kind,
    }


def _last_line_start(session: Any) -> tuple[int | None, int]:
    """(line, offset) of the file's last line when no torn-tail diagnostic names it."""
    if session.entries:
        last = max(session.entries, key=lambda entry: entry.offset)
        if last.offset + last.size >= session.snapshot.size - 1:
            return last.line, last.offset
    # Read backwards for the last newline (bounded: the last line may be large).
    size = session.snapshot.size
    try:
        with open(session.path, "rb") as handle:
            position = size
            while position > 0:
                start = max(0, position - (1 << 16))
                handle.seek(start)
                chunk = handle.read(position - start)
                found = chunk.rfind(b"\n")
                if found >= 0:
                    return None, start + found + 1
                position = start
    except OSError:
        pass
    return None, 0


def explain(tail: dict[str, Any], name: str) -> str:
    """The human explanation of what sealing will do (session text sanitized)."""
    from tui_compactor.commands.session_args import safe
    from tui_compactor.session.model import torn_tail_cause

    where = f"line {tail['line']}" if tail["line"] is not None else "the last line"
    looks = ""
    if tail["entryId"]:
        kind = f" ({safe(tail['kind'], 40)})" if tail["kind"] else ""
        looks = f"; it looks like the start of entry {safe(tail['entryId'], 40)}{kind}"
    if tail["torn"]:
        what = (
            f"{safe(name)}: {where} (byte {tail['offset']}, {tail['bytes']} bytes, no newline) "
            f"is an incomplete record{looks}: {torn_tail_cause()}.\n"
            "Sealing appends one newline after it: the fragment stays in the file as a broken "
            "line that pi skips too, and later appends start on a line of their own. Nothing "
            "is truncated or rewritten. While a running agent works on the session or the "
            "file is still changing, the append gate refuses and nothing is written."
        )
    else:
        what = (
            f"{safe(name)}: {where} (byte {tail['offset']}, {tail['bytes']} bytes) is a "
            f"complete record without a final newline{looks}.\n"
            "Sealing appends one newline after it; the record is kept as it is."
        )
    return what


def run(args: argparse.Namespace) -> int:
    """Explain the torn tail, confirm, append one newline; exit status per module doc."""
    from tui_compactor.commands.confirm import (
        confirm,
        gate_refusal,
        kept_growing,
        not_confirmed,
        refuse,
    )
    from tui_compactor.commands.session_args import finisher, refused_error, safe
    from tui_compactor.session.reader import load_session
    from tui_compactor.session.writer import AppendRefused
    from tui_compactor.workbench.actions import MAX_REPLANS, StaleProposal, apply, propose_seal
    from tui_compactor.workbench.exits import Refusal
    from tui_compactor.workbench.handle import SessionHandle

    session = load_session(args.session)
    name = os.fspath(session.path)
    report: dict[str, Any] = {"session": name, "written": False}

    finish = finisher(args, report)

    handle = SessionHandle(session)
    options: dict[str, Any] = append_options(args)
    try:
        if session.header is None and not session.entries:
            report["error"] = refused_error(session)
            return finish(EXIT_USAGE, f"tui-compactor: {safe(report['error'])}")
        for _attempt in range(MAX_REPLANS + 1):
            with handle.read() as snapshot:
                tail = describe_tail(session)
                proposal = propose_seal(snapshot)
            if tail is None:
                nothing = Refusal(
                    f"{name}: the file ends with a newline; there is nothing to seal",
                    "nothing-to-seal",
                )
                refuse(report, nothing)
                return finish(EXIT_REFUSED, f"tui-compactor: {safe(nothing.reason)}")
            report["tail"] = tail
            explanation = explain(tail, name)
            if not args.yes:
                if not sys.stdin.isatty():
                    return finish(EXIT_REFUSED, f"{explanation}\n{not_confirmed(report)}")
                print(explanation)
                if not confirm("Append one newline?"):
                    return finish(EXIT_REFUSED, not_confirmed(report))
            try:
                result = apply(handle, proposal, **options)
            except StaleProposal as stale:
                print(f"tui-compactor: {stale}", file=sys.stderr)
                continue
            except AppendRefused as refused:
                return finish(EXIT_REFUSED, gate_refusal(report, refused))
            report["written"] = True
            report["offset"] = result.offset
            report["sizeAfter"] = result.size_after
            if result.took_over_stale_lock:
                report["note"] = result.took_over_stale_lock
            done = f"sealed: appended one newline at byte {result.offset}"
            if args.yes:
                done = f"{explanation}\n{done}"
            return finish(EXIT_OK, done)
        return finish(EXIT_REFUSED, kept_growing(report))
    finally:
        close = getattr(session, "close", None)
        if close is not None:
            close()
