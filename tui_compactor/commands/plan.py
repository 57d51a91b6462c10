"""``tui-compactor plan``: where compaction would cut, and what it would summarize.

One plan per ``--keep-recent`` value (or one for ``--cut ID``). ``--json`` prints
``{"session", "leafId", "rules", "tokens", "contextTokens", "threshold", "sources",
"plans": [...]}``; ``sources`` says where each setting the plan depends on came from
(``workbench.settings.PLAN_SETTINGS``; the text form lists them under ``settings``); each plan
row has the reference's field names (``firstKeptEntryIndex`` is a branch index) and
``keepRecentSource``.
Exit status 1 when a ``--cut`` is refused (the reason and the nearest valid cuts are printed).
"""

from __future__ import annotations

import argparse
from typing import Any

from tui_compactor.commands import engine_args as common
from tui_compactor.wording import count_of, more_of


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Register the command's switches."""
    common.add_session(parser)
    common.add_leaf(parser)
    parser.add_argument(
        "--cut", metavar="ID", default=None, help="plan a manual cut at this entry instead"
    )
    common.add_settings(parser, keep_list=True)
    parser.add_argument(
        "--sweep",
        action="store_true",
        help="every valid cut point: tokens kept and summarized, dependencies crossing it",
    )
    common.add_json(parser)


def threshold_json(tokens: int, window: int | None, settings: Any) -> dict[str, Any] | None:
    """Reserve, threshold and the should-compact verdict for ``window`` (None without one)."""
    from tui_compactor.engine.settings import (
        budget_reserve,
        effective_reserve,
        should_compact,
        threshold_tokens,
    )

    if window is None:
        return None
    return {
        "window": window,
        "effectiveReserve": effective_reserve(window, settings),
        "budgetReserve": budget_reserve(window, settings),
        "thresholdTokens": threshold_tokens(window, settings),
        "contextTokens": tokens,
        "shouldCompact": should_compact(tokens, window, settings),
    }


def session_threshold(tokens: int, settings: Any, session: Any) -> dict[str, Any]:
    """``threshold_json`` for the window the user set, else the session model's known window
    (``workbench.settings.with_session_window``, as the app's gauge), else the assumed default;
    ``windowSource`` says which (``--window``, ``model claude-…``, ``assumed``…)."""
    from tui_compactor.workbench.settings import with_session_window

    return shown_threshold(tokens, with_session_window(settings, session))


def shown_threshold(tokens: int, shown: Any) -> dict[str, Any]:
    """``session_threshold`` for settings that already have the window they show."""
    threshold = threshold_json(tokens, shown.context_window, shown.compaction())
    assert threshold is not None  # with_session_window always sets a window
    threshold["windowSource"] = shown.source_of("context_window")
    return threshold


def window_text(threshold: dict[str, Any]) -> str:
    """The text line's window part: ``200000 (the window of claude-opus-4-5, the session's
    model)`` / ``128000 (assumed: ...)``."""
    from tui_compactor.workbench.settings import source_phrase

    origin = source_phrase(threshold["windowSource"])
    return f"{threshold['window']} ({sanitize_line(origin)})"


def threshold_text(threshold: dict[str, Any]) -> str:
    """``threshold 183616 = window − reserve 16384`` (or the reserve beside a threshold that a
    threshold setting decided)."""
    tokens, reserve = threshold["thresholdTokens"], threshold["budgetReserve"]
    if tokens == threshold["window"] - reserve:
        return f"threshold {tokens} = window − reserve {reserve}"
    return f"threshold {tokens} (reserve {reserve})"


def sources_json(shown: Any) -> dict[str, str]:
    """Setting (camelCase) -> where its value came from, for every setting a plan depends on
    (``Settings.plan_sources``; the window's as the plan shows it)."""
    return {_camel(name): source for name, source in shown.plan_sources().items()}


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def sanitize_line(text: str) -> str:
    """One terminal-safe line."""
    from tui_compactor.textsafe import sanitize

    return sanitize(text, single_line=True)


def run(args: argparse.Namespace) -> int:
    """Build and print the plans."""
    from tui_compactor.engine.context import threshold_context_tokens
    from tui_compactor.engine.tokens import TokenCache
    from tui_compactor.workbench.plans import make_plan, run_refusal

    try:
        settings, session, leaf = common.load_at_leaf(args, writes=False)
        cut = common.resolve(session, args.cut, what="cut entry")
    except common.CommandError as error:
        return common.fail(error)
    cache = TokenCache(session, settings.counter())
    keeps = args.keep_recent or [settings.keep_recent_tokens]
    if cut is not None:
        keeps = keeps[:1]
    variants = [
        settings
        if keep == settings.keep_recent_tokens
        else settings.edited("--keep-recent", keep_recent_tokens=keep)
        for keep in keeps
    ]
    # Under omp rules the threshold's context is measured first: it reads every message it
    # sends and counts them into ``cache``, so the plans find their region counted. A pi plan
    # measures that figure itself (``context_tokens``, the tail only).
    omp_context = (
        threshold_context_tokens(session, leaf, cache.counter, "omp", cache)
        if settings.rules == "omp"
        else None
    )
    plans = [make_plan(session, leaf, variant, cut, cache=cache) for variant in variants]
    first = plans[0]
    context = (
        omp_context
        or first.context_tokens
        or threshold_context_tokens(session, leaf, cache.counter, settings.rules, cache)
    )
    from tui_compactor.workbench.settings import with_session_window

    shown = with_session_window(settings, session)  # the window the plan's threshold uses
    threshold = shown_threshold(context.tokens, shown)
    refused = cut is not None and not first.prepared
    if args.sweep:
        from tui_compactor.commands.analysis import print_sweep

        print_sweep(args, session, first, settings.counter(), cache)
        return common.EXIT_REFUSED if refused else common.EXIT_OK
    rows = []
    for plan, variant in zip(plans, variants, strict=True):
        row = plan.to_json()
        refusal = run_refusal(plan, variant)
        row["runnable"] = refusal is None
        row["notRunnableReason"] = refusal
        row["keepRecentSource"] = variant.source_of("keep_recent_tokens")
        rows.append(row)
    if args.json:
        common.dump_json(
            {
                "session": str(session.path),
                "leafId": session.entries[leaf].id,
                "leafIndex": leaf,
                "rules": settings.rules,
                "rulesSource": settings.source_of("rules"),
                "tokens": settings.tokens,
                "contextTokens": context.to_json(),
                "threshold": threshold,
                "sources": sources_json(shown),
                "plans": rows,
            }
        )
    else:
        _print_text(session, plans, threshold, rows, shown.plan_source_lines())
    return common.EXIT_REFUSED if refused else common.EXIT_OK


def _print_text(
    session: Any,
    plans: list[Any],
    threshold: dict[str, Any] | None,
    rows: list[dict[str, Any]],
    sources: list[str],
) -> None:
    from tui_compactor.textsafe import sanitize

    entries = session.entries
    first = plans[0]
    leaf_id = sanitize(entries[first.leaf].id, single_line=True)
    print(f"session  {sanitize(str(session.path), single_line=True)}")
    branch = count_of(len(first.branch), "entry")
    print(f"leaf     {leaf_id} (entry #{first.leaf}, branch of {branch})")
    print(f"rules    {first.rules}   tokens: {first.counter_name}")
    if threshold:
        crossed = "yes" if threshold["shouldCompact"] else "no"
        print(f"window   {window_text(threshold)}")
        print(
            f"         {threshold_text(threshold)}; context {threshold['contextTokens']}: "
            f"compact now: {crossed}"
        )
    for number, line in enumerate(sources):
        print(f"{'settings' if number == 0 else '':9}{sanitize(line, single_line=True)}")
    for plan, row in zip(plans, rows, strict=True):
        print()
        head = plan.keep_recent_text
        if plan.manual_cut:
            head += " (manual cut)"
        print(head)
        for warning in plan.warnings:
            print(f"  warning: {sanitize(warning, single_line=True)}")
        if not plan.prepared:
            print(f"  not prepared: {sanitize(plan.reason or '', single_line=True)}")
            for pos in plan.nearest_cut_points:
                ident = sanitize(entries[plan.branch[pos]].id, single_line=True)
                print(f"  nearest valid cut: {ident} (branch index {pos}, {plan.kind_at(pos)})")
            continue
        for line in plan_lines(session, plan):
            print(line)
        if row["notRunnableReason"]:
            print(f"  cannot run   {sanitize(row['notRunnableReason'], single_line=True)}")


FILES_SHOWN = 8
"""Paths listed per file list; the rest are counted."""


def plan_lines(session: Any, plan: Any) -> list[str]:
    """The text form of a prepared plan (also printed by ``compact``): the cut, the region, the
    turn, the figures labelled usage-based or local, the file lists."""
    from tui_compactor.textsafe import sanitize

    kept = session.entries[plan.branch[plan.first_kept_index]]
    kind = plan.kind_at(plan.first_kept_index)  # made safe to print by the plan
    region = f"  region       branch [{plan.boundary_start}, {plan.boundary_end})"
    if plan.previous_compaction_index >= 0:
        region += f", previous compaction at branch index {plan.previous_compaction_index}"
    lines = [
        f"  cut at       {sanitize(kept.id, single_line=True)} "
        f"(branch index {plan.first_kept_index}, {kind})",
        region,
    ]
    note = plan.split_turn_note
    if note:
        lines.append(f"  turn         {note}")  # of kind_at's words: safe to print
    tokens = plan.region_tokens
    local = f"by local {plan.counter_name} count"
    lines.append(f"  tokens       before {plan.tokens_before} ({_before_source(plan)})")
    lines.append(
        f"  summarize    {count_of(plan.message_count('summarize'), 'message')}, "
        f"~{tokens['summarize']} tokens {local}"
        + (" + previous summary" if plan.previous_summary is not None else "")
    )
    if plan.has_turn_prefix:
        lines.append(
            f"  turn prefix  {count_of(plan.message_count('turn_prefix'), 'message')}, "
            f"~{tokens['turn_prefix']} tokens {local}"
        )
    lines.append(
        f"  keep         {count_of(plan.message_count('keep'), 'message')}, "
        f"~{tokens['keep']} tokens {local} (the context right after, plus the summary)"
    )
    counted = tokens["summarize"] + tokens["turn_prefix"] + tokens["keep"]
    if counted > plan.tokens_before:
        lines.append(
            f"  note         the local counts add up to ~{counted}, more than the "
            f"usage-based {plan.tokens_before}: the usage report is older than the branch "
            "or from another tokenizer"
        )
    ops = plan.file_ops.to_json(plan.rules)
    if ops["readFiles"] or ops["modifiedFiles"]:
        lines.append(f"  files read   {_file_list(ops['readFiles'])}")
        lines.append(f"  modified     {_file_list(ops['modifiedFiles'])}")
    return lines


def _file_list(paths: list[str]) -> str:
    """``3: a, b, c`` / ``9: a, …, h and 1 more`` (sanitized)."""
    from tui_compactor.textsafe import sanitize

    shown = ", ".join(sanitize(p, single_line=True) for p in paths[:FILES_SHOWN])
    return f"{len(paths)}" + (f": {shown}{more_of(FILES_SHOWN, len(paths))}" if paths else "")


def _before_source(plan: Any) -> str:
    """Where ``tokensBefore`` comes from: the rules' usage-based figure, said plainly."""
    context = plan.context_tokens
    if context is not None and context.last_usage_index is None:
        return f"no usage report on the branch: local {plan.counter_name} estimate"
    if plan.rules == "pi":
        return "usage-based: the last assistant usage report + an estimate of what follows it"
    return "usage-based: the last assistant usage report"
