"""``tui-compactor navigate``: move the leaf to another node, optionally with a branch summary.

``--dry-run`` prints what would happen and writes nothing: old leaf, new leaf, common
ancestor, the entries a branch summary would cover and, per ``--budget``, the entries kept
newest-first under it, their token total and file operations. Without ``--dry-run`` the move
is appended to the file by the summaries layer (``--summarize`` writes a branch summary made
by the configured summarizer; otherwise a leaf marker).
"""

from __future__ import annotations

import argparse
from typing import Any

from tui_compactor.commands import engine_args as common


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
        help="branch-summary token budgets (0 = no limit; default window - reserve = 111616)",
    )
    parser.add_argument("--window", type=common.non_negative, default=None, metavar="N")
    parser.add_argument("--reserve", type=common.non_negative, default=None, metavar="N")
    parser.add_argument(
        "--summarize", action="store_true", help="write a branch summary (not with --dry-run)"
    )
    parser.add_argument("--profile", default=None, help="summarizer profile from the config")
    common.add_common(parser)


def run(args: argparse.Namespace) -> int:
    """Plan (and unless --dry-run, perform) the navigation."""
    from tui_compactor.engine.branch import plan_navigation, select_branch_entries, selection_json
    from tui_compactor.engine.settings import branch_summary_budget
    from tui_compactor.engine.tokens import TokenCache, get_counter

    try:
        session = common.load(args.session)
        old_leaf = common.leaf_or_default(session, args.leaf)
        target = common.resolve(session, args.to, what="target")
    except common.CommandError as error:
        return common.fail(error)
    assert target is not None
    counter = get_counter(args.tokens)
    cache = TokenCache(session, counter)
    budgets = args.budget or [branch_summary_budget(args.window, args.reserve)]
    nav = plan_navigation(
        session, old_leaf, target, counter, budgets[0], rules=args.rules, cache=cache
    )
    selections = [nav.selection()] + [
        select_branch_entries(session, nav.entries, counter, budget, rules=args.rules, cache=cache)
        for budget in budgets[1:]
    ]
    data = nav.to_json()
    data["tokens"] = counter.name
    data["prepared"] = [selection_json(session, s, args.rules) for s in selections]
    if args.dry_run:
        if args.json:
            common.dump_json(data)
        else:
            _print_text(session, data)
        return common.EXIT_OK
    return _perform(args, session, nav)


def _print_text(session: Any, data: dict[str, Any]) -> None:
    from tui_compactor.textsafe import sanitize

    def show(ident: str | None, index: int | None) -> str:
        if ident is None:
            return "(before the first entry)"
        return f"{sanitize(ident, single_line=True)} (#{index})"

    print(f"old leaf         {show(data['oldLeafId'], data['oldLeafIndex'])}")
    print(f"target           {show(data['targetId'], data['targetIndex'])}")
    print(f"new leaf         {show(data['newLeafId'], data['newLeafIndex'])}")
    print(f"common ancestor  {show(data['commonAncestorId'], data['commonAncestorIndex'])}")
    if data["noop"]:
        print("nothing to do: the target is the current leaf")
    print(f"branch to summarize: {data['entryCount']} entries")
    for row in data["prepared"]:
        budget = row["tokenBudget"] or "no limit"
        print(
            f"  budget {budget}: {row['messageCount']} messages, {row['totalTokens']} tokens"
            f" [{data['tokens']}]"
        )
        ops = row["fileOps"]
        if ops["readFiles"] or ops["modifiedFiles"]:
            print(f"    files read {len(ops['readFiles'])}, modified {len(ops['modifiedFiles'])}")


def _perform(args: argparse.Namespace, session: Any, nav: Any) -> int:
    """Hand the move to the summaries layer (it owns writing)."""
    import asyncio

    from tui_compactor.textsafe import sanitize

    try:
        from tui_compactor.summarize.navigation import navigate
    except ImportError:
        print(
            "tui-compactor: navigate without --dry-run is not available in this build "
            "(tui_compactor.summarize.navigation is missing); use --dry-run",
            file=__import__("sys").stderr,
        )
        return common.EXIT_USAGE
    summarizer = None
    try:
        if args.summarize:
            from tui_compactor.config import load_config
            from tui_compactor.summarize.providers import make_summarizer

            summarizer = make_summarizer(load_config().profile(args.profile))
        result = asyncio.run(navigate(session, nav, summarizer=summarizer))
    except Exception as error:  # the summaries/writer layers raise user-facing errors
        message = sanitize(f"navigate failed: {type(error).__name__}: {error}", single_line=True)
        print(f"tui-compactor: {message}", file=__import__("sys").stderr)
        return common.EXIT_REFUSED
    if result.noop:
        print("nothing to do: the target is the current leaf")
    elif result.written:
        new_leaf = common.entry_id(session, result.new_leaf) or "(before the first entry)"
        print(
            f"leaf moved to {sanitize(new_leaf, single_line=True)}; "
            f"appended entry {sanitize(result.entry_id or '', single_line=True)}"
        )
    return common.EXIT_OK
