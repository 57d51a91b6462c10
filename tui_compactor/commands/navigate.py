"""``tui-compactor navigate``: move the leaf to another node, optionally with a branch summary.

``--dry-run`` prints what would happen and writes nothing: old leaf, new leaf, common
ancestor, the entries a branch summary would cover and, per ``--budget``, the entries kept
newest-first under it, their token total and file operations. Without ``--dry-run`` the move
is appended to the file by the summaries layer (``--summarize`` writes a branch summary made
by the chosen summarizer, streamed to stderr; otherwise a leaf marker), only with ``--yes`` or
when the user types ``yes`` at the prompt.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from tui_compactor.commands import engine_args as common
from tui_compactor.commands.confirm import (
    add_append_options,
    append_options,
    gate_refusal,
    kept_growing,
    not_confirmed,
    refuse,
)
from tui_compactor.wording import count_of

if TYPE_CHECKING:
    from collections.abc import Callable

    from tui_compactor.engine.branch import NavigationPlan
    from tui_compactor.session.session import Session
    from tui_compactor.workbench.settings import Settings


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Register the command's switches."""
    common.add_session(parser)
    parser.add_argument("--to", required=True, metavar="ID", help="entry id (or #INDEX) to go to")
    common.add_leaf(parser)
    parser.add_argument("--dry-run", action="store_true", help="show the plan, write nothing")
    parser.add_argument(
        "--budget",
        type=common.int_list,
        default=None,
        metavar="N[,N...]",
        help="branch-summary token budgets (0 = no limit; default window - reserve)",
    )
    parser.add_argument(
        "--summarize", action="store_true", help="write a branch summary (not with --dry-run)"
    )
    common.add_summarizer(parser)
    parser.add_argument(
        "--instructions",
        default=None,
        metavar="TEXT",
        help="custom instructions for the branch summary (with --summarize)",
    )
    parser.add_argument(
        "--replace-instructions",
        action="store_true",
        help="the instructions replace the default prompt instead of adding focus",
    )
    parser.add_argument(
        "--show-requests",
        action="store_true",
        help="with --dry-run: print the exact branch-summary request (prompts, "
        "max_tokens, model, options; never the key) and call no model",
    )
    parser.add_argument("--yes", action="store_true", help="append without asking")
    add_append_options(parser)
    common.add_settings(parser)
    common.add_json(parser)


def run(args: argparse.Namespace) -> int:
    """Plan (and unless --dry-run, perform) the navigation."""
    from tui_compactor.engine.branch import plan_navigation, select_branch_entries, selection_json
    from tui_compactor.engine.tokens import TokenCache
    from tui_compactor.workbench.settings import with_session_window

    try:
        settings, session, old_leaf = common.load_at_leaf(args)
        target = common.resolve(session, args.to, what="target")
    except common.CommandError as error:
        return common.fail(error)
    assert target is not None
    # The branch budget follows the session's own model (unless --window), as in the agent.
    settings = with_session_window(settings, session)
    counter = settings.counter()
    cache = TokenCache(session, counter)
    if args.budget:
        budgets = args.budget
    else:
        default_budget = settings.branch_budget()
        if default_budget <= 0:
            print(
                f"warning: branch-summary budget window - branch reserve = {default_budget} is not "
                "positive: no token limit applies (the whole branch is summarized)",
                file=sys.stderr,
            )
        budgets = [max(0, default_budget)]

    def plan_from(leaf: int | None) -> NavigationPlan:
        return plan_navigation(
            session, leaf, target, counter, budgets[0], rules=settings.rules, cache=cache
        )

    nav = plan_from(old_leaf)
    selections = [nav.selection()] + [
        select_branch_entries(
            session, nav.entries, counter, budget, rules=settings.rules, cache=cache
        )
        for budget in budgets[1:]
    ]
    data = nav.to_json()
    data["tokens"] = counter.name
    data["prepared"] = [selection_json(session, s, settings.rules) for s in selections]
    data["defaultBudget"] = (
        None
        if args.budget
        else {
            "budget": budgets[0],
            "window": settings.context_window,
            "windowSource": settings.source_of("context_window"),
            "reserve": settings.branch_summary_reserve_tokens,
        }
    )
    if args.show_requests and not args.dry_run:
        print(
            "tui-compactor: --show-requests needs --dry-run (it shows requests, sends none)",
            file=sys.stderr,
        )
        return common.EXIT_USAGE
    if args.dry_run:
        from tui_compactor.commands.confirm import dry_run_gate

        gate = dry_run_gate(data, session)
        if gate is not None:
            print(gate, file=sys.stderr)
    if args.dry_run and args.show_requests:
        return _show_requests(args, nav, settings, data)
    if args.dry_run:
        if args.json:
            common.dump_json(data)
        else:
            _print_text(session, data, settings.rules)
        return common.EXIT_OK
    return _perform(args, session, nav, settings, plan_from, data)


PREVIEW_WIDTH = 64
"""Characters of each entry's preview in the text form."""
SHOWN_ENTRIES = 6
"""Selected entries listed per budget (the first and last half); the rest are counted."""


def _show_requests(
    args: argparse.Namespace, nav: Any, settings: Settings, data: dict[str, Any]
) -> int:
    """``--dry-run --show-requests``: the branch-summary request, built and never sent."""
    import asyncio

    from tui_compactor.commands.analysis import show_requests
    from tui_compactor.config import ConfigError
    from tui_compactor.summarize.requests import branch_requests

    try:
        summarizer = common.summarizer_from_args(args, settings, compaction=False)
    except ConfigError as error:
        print(f"tui-compactor: {error}", file=sys.stderr)
        return common.EXIT_USAGE
    requests = asyncio.run(branch_requests(
        nav, summarizer, instructions=args.instructions,
        replace_instructions=args.replace_instructions,
    ))  # fmt: skip
    show_requests(requests, data if args.json else None)
    if args.json:
        common.dump_json(data)
    return common.EXIT_OK


def _print_text(session: Any, data: dict[str, Any], rules: str) -> None:
    from tui_compactor.commands.plan import window_text
    from tui_compactor.textsafe import sanitize
    from tui_compactor.workbench.preview import entry_preview

    def says(index: int) -> str:
        entry = session.entries[index]
        kind = entry.role if entry.type == "message" and entry.role else entry.type
        preview = entry_preview(entry, rules, max_len=PREVIEW_WIDTH)
        return f"{sanitize(kind or '?', single_line=True)}: {preview}" if preview else str(kind)

    def show(ident: str | None, index: int | None) -> str:
        if ident is None or index is None:
            return "(before the first entry)"
        return f"{sanitize(ident, single_line=True)} (#{index}) {says(index)}"

    print(f"old leaf         {show(data['oldLeafId'], data['oldLeafIndex'])}")
    print(f"target           {show(data['targetId'], data['targetIndex'])}")
    print(f"new leaf         {show(data['newLeafId'], data['newLeafIndex'])}")
    print(f"common ancestor  {show(data['commonAncestorId'], data['commonAncestorIndex'])}")
    if data["noop"]:
        from tui_compactor.workbench.actions import NOTHING_TO_DO

        print(NOTHING_TO_DO)
    print(
        f"branch to summarize: {count_of(data['entryCount'], 'entry')} (the old leaf back to "
        "the common ancestor)"
    )
    rule = data.get("defaultBudget")
    if rule:
        window = window_text({"window": rule["window"], "windowSource": rule["windowSource"]})
        print(
            f"budget {rule['budget']} = window {window} − reserve {rule['reserve']}: the "
            "most of the branch a summary reads (--budget sets others)"
        )
    for row in data["prepared"]:
        budget = row["tokenBudget"] or "no limit"
        print(
            f"  budget {budget}: {count_of(row['messageCount'], 'message')}, "
            f"{row['totalTokens']} tokens [{data['tokens']}], chosen newest first"
        )
        indices = row["entryIndices"]
        half = SHOWN_ENTRIES // 2
        hidden = len(indices) - SHOWN_ENTRIES
        shown = indices if hidden <= 1 else [*indices[:half], None, *indices[-half:]]
        for index in shown:
            if index is None:
                print(f"    … {hidden} more")
            else:
                print(f"    {sanitize(session.entries[index].id, single_line=True)} {says(index)}")
        left_out = data["entryCount"] - len(indices)
        if left_out > 0:
            print(
                f"    ({count_of(left_out, 'entry', 'entries')} not sent: tool results, "
                "and what did not fit the budget)"
            )
        ops = row["fileOps"]
        if ops["readFiles"] or ops["modifiedFiles"]:
            print(f"    files read {len(ops['readFiles'])}, modified {len(ops['modifiedFiles'])}")


def _perform(
    args: argparse.Namespace,
    session: Session,
    nav: NavigationPlan,
    settings: Settings,
    plan_from: Callable[[int | None], NavigationPlan],
    plan: dict[str, Any],
) -> int:
    """Summarize (if asked), confirm, then apply the move (re-planned if the file grew).

    With ``--json`` one report object is printed at the end whatever it decides (like
    ``compact --json``): the plan, ``written``, and ``entryId``/``newLeafId``/``summary`` or
    ``refused``/``error``; messages go to stderr. A wrong input (exit 2) prints none."""
    import asyncio
    import sys

    from tui_compactor.commands.compact import _StreamPrinter
    from tui_compactor.commands.confirm import confirm
    from tui_compactor.commands.session_args import prints_report
    from tui_compactor.config import ConfigError
    from tui_compactor.session.writer import AppendRefused, check_appendable
    from tui_compactor.summarize.navigation import prepare_navigation
    from tui_compactor.summarize.providers import aclose_shared_clients
    from tui_compactor.textsafe import sanitize
    from tui_compactor.workbench.actions import (
        MAX_REPLANS,
        NOTHING_TO_DO,
        ActionRefused,
        StaleProposal,
        apply,
        propose_navigation,
    )
    from tui_compactor.workbench.handle import SessionHandle

    def say(message: str) -> None:
        print(sanitize(message), file=sys.stderr)

    report: dict[str, Any] = {"session": str(session.path), "plan": plan, "written": False}

    def finish(status: int, text: str | None = None) -> int:
        if prints_report(args, status):
            common.dump_json(report)
        elif not args.json and text is not None:
            print(text)
        return status

    try:
        check_appendable(session)
    except AppendRefused as refused:
        say(gate_refusal(report, refused))
        say("Nothing was written. Use --dry-run to see the plan.")
        return finish(common.EXIT_REFUSED)
    summarizer = None
    if args.summarize:
        try:
            summarizer = common.summarizer_from_args(args, settings, compaction=False)
        except ConfigError as error:
            say(f"tui-compactor: {error}")
            report["error"] = str(error)
            return finish(common.EXIT_USAGE)
    gate_options: dict[str, Any] = append_options(args)
    handle = SessionHandle(session)
    what = "a branch summary" if summarizer is not None else "a leaf marker"
    for attempt in range(MAX_REPLANS + 1):
        if nav.noop:
            report["noop"] = True
            return finish(common.EXIT_OK, NOTHING_TO_DO)
        planned_at = handle.generation
        if not args.yes and not confirm(f"Append {what} (navigation) to {session.path}?"):
            say(not_confirmed(report))
            return finish(common.EXIT_REFUSED)

        async def summarize(nav: NavigationPlan = nav) -> Any:
            try:
                return await prepare_navigation(
                    nav,
                    summarizer=summarizer,
                    instructions=args.instructions,
                    replace_instructions=args.replace_instructions,
                    on_event=_StreamPrinter(sys.stderr),
                    files_format=settings.files_format,
                )
            finally:
                await aclose_shared_clients()

        from tui_compactor.engine.tokens import TokenTableError  # counted already: loaded

        try:
            prepared = asyncio.run(summarize())
            with handle.read() as snapshot:
                proposal = propose_navigation(snapshot, nav, prepared.record, generation=planned_at)
            appended = apply(handle, proposal, **gate_options)
        except StaleProposal as stale:
            say(f"tui-compactor: {stale}")
            say(
                "planning the move again from the new leaf"
                + (" (--yes: it will be written without asking)" if args.yes else "")
            )
            report["replanned"] = attempt + 1
            planned_leaf = stale.proposal.leaf if stale.proposal is not None else None
            nav = plan_from(stale.leaf if nav.old_leaf == planned_leaf else nav.old_leaf)
            continue
        except AppendRefused as refused:
            say(gate_refusal(report, refused))
            return finish(common.EXIT_REFUSED)
        except ActionRefused as action_refused:
            say(f"tui-compactor: navigate refused, nothing written: {action_refused.reason}")
            refuse(report, action_refused)
            return finish(common.EXIT_REFUSED)
        except TokenTableError:
            raise  # every command refuses it alike (cli: exit 2, what to count with instead)
        except Exception as error:  # the summaries layer raises user-facing errors
            reason = getattr(error, "reason", None) or str(error)
            say(f"tui-compactor: navigate failed, nothing written: {reason}")
            hint = getattr(error, "hint", None)
            if hint:
                say(hint)
            report["error"] = reason
            return finish(common.EXIT_REFUSED)
        new_leaf = common.entry_id(session, nav.new_leaf)
        report.update({"written": True, "entryId": appended.ids[0], "newLeafId": new_leaf})
        if prepared.summary is not None:
            report["summary"] = prepared.summary.summary
            report["summarizer"] = prepared.summary.label
        return finish(
            common.EXIT_OK,
            (
                "leaf moved to "
                f"{sanitize(new_leaf or '(before the first entry)', single_line=True)}"
                f"; appended entry {sanitize(appended.ids[0], single_line=True)}"
            ),
        )
    say(kept_growing(report))
    return finish(common.EXIT_REFUSED)
