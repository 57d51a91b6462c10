"""What every writing command shares: the question it asks, its append-gate options and how it
reports a refusal of the gate."""

from __future__ import annotations

import argparse
import sys
from typing import Any


def confirm(question: str, expected: str = "yes") -> bool:
    """Ask ``question`` on the terminal; only the typed word ``expected`` agrees.

    Without a terminal on stdin (scripts, CI) the answer is no: writing then needs ``--yes``.
    """
    if not sys.stdin.isatty():
        return False
    try:
        answer = input(f"{question} Type '{expected}' to write: ")
    except EOFError:
        return False
    return answer.strip().lower() == expected


def add_append_options(parser: argparse.ArgumentParser) -> None:
    """``--quiet-window SECONDS`` and ``--ignore-agent``: the append gate's two user choices."""
    parser.add_argument(
        "--quiet-window",
        type=float,
        default=None,
        metavar="SECONDS",
        help="how long the file must stay unchanged before appending (live-writer check)",
    )
    parser.add_argument(
        "--ignore-agent",
        action="store_true",
        help="append even though a running pi / oh-my-pi agent works on this session (its "
        "next entry may leave ours on a side branch; `lint` then offers the fix)",
    )


def append_options(args: argparse.Namespace) -> dict[str, Any]:
    """The writer's keyword options from the flags of ``add_append_options``."""
    options: dict[str, Any] = {}
    if getattr(args, "quiet_window", None) is not None:
        options["quiet_seconds"] = args.quiet_window
    if getattr(args, "ignore_agent", False):
        options["ignore_agents"] = True
    return options


def refuse(report: dict[str, Any], refused: Any) -> None:
    """Put a refusal in a writing command's JSON report, in the one shape every refusal has:
    ``refused`` (the reason), ``refusedCode`` (the rule) and ``hint`` (what to do; null when the
    rule has none). ``refused`` is a ``workbench.exits.Refusal``, an ``ActionRefused`` or the
    append gate's ``AppendRefused``: each has ``reason``, ``code`` and ``hint``."""
    report["refused"] = refused.reason
    report["refusedCode"] = refused.code
    report["hint"] = refused.hint or None


def not_confirmed(report: dict[str, Any]) -> str:
    """How every writing command reports a write the user did not confirm (``not-confirmed``);
    the returned line goes to stderr."""
    from tui_compactor.workbench.exits import Refusal

    refuse(report, Refusal("not confirmed", "not-confirmed", "pass --yes to append without asking"))
    return "tui-compactor: not confirmed: nothing written (pass --yes to append without asking)"


def kept_growing(report: dict[str, Any]) -> str:
    """How every writing command gives up after ``workbench.actions.MAX_REPLANS`` re-plans
    (the file grew each time: ``kept-growing``); the line goes to stderr."""
    from tui_compactor.workbench.actions import MAX_REPLANS
    from tui_compactor.workbench.exits import Refusal

    hint = "run it again when the agent has stopped writing to the session"
    refuse(report, Refusal("the session kept growing", "kept-growing", hint))
    return f"tui-compactor: the session kept growing ({MAX_REPLANS} re-plans); nothing written"


def gate_refusal(report: dict[str, Any], refused: Any) -> str:
    """How every writing command reports a refusal of the append gate (``AppendRefused``):
    ``refuse`` fills the JSON report; the returned lines go to stderr. Nothing was written."""
    refuse(report, refused)
    return "tui-compactor: " + _gate_words(refused)


def _gate_words(refused: Any) -> str:
    """The gate's refusal said on stderr: ``append refused: <reason>`` and the hint on the
    next line (both sanitized: a reason may quote the file)."""
    from tui_compactor.textsafe import sanitize

    text = f"append refused: {sanitize(refused.reason, single_line=True)}"
    if refused.hint:
        text += f"\n  {sanitize(refused.hint, single_line=True)}"
    return text


def dry_run_gate(report: dict[str, Any], session: Any) -> str | None:
    """What the append gate would answer a real run now, for a dry run (which writes nothing
    and so never stops at the gate): ``report["appendRefused"]`` is ``null``, or the refusal in
    the shape of every refusal (``refused``, ``refusedCode``, ``hint``); the returned line, for
    stderr, says a real run would be refused. The rule is the gate's own for the file as read
    (``session.writer.check_appendable``: header and version, a torn last line, no entries),
    the one behind the app's read-only banner; a running agent and the quiet window are asked
    when a run writes."""
    from tui_compactor.session.writer import AppendRefused, check_appendable

    try:
        check_appendable(session)
    except AppendRefused as refused:
        shape: dict[str, Any] = {}
        refuse(shape, refused)
        report["appendRefused"] = shape
        return "note: a real run would be refused now: " + _gate_words(refused)
    report["appendRefused"] = None
    return None
