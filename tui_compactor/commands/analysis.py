"""Text and JSON output of the analysis views: `context --breakdown`, `plan --sweep`."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from tui_compactor.commands import engine_args as common


def run_breakdown(args: argparse.Namespace, session: Any, leaf: int, settings: Any) -> int:
    """Print the breakdown of the context at ``leaf`` with the resolved ``settings`` (the
    window, when nobody set it, is the session model's, as in the app)."""
    from tui_compactor.engine.breakdown import token_breakdown
    from tui_compactor.engine.tokens import TokenCache
    from tui_compactor.textsafe import sanitize
    from tui_compactor.wording import provider_gap
    from tui_compactor.workbench.settings import with_session_window

    settings = with_session_window(settings, session)
    counter = settings.counter()
    breakdown = token_breakdown(
        session, leaf, counter, settings.compaction(), TokenCache(session, counter)
    )
    data = breakdown.to_json(session)
    data["session"] = str(session.path)
    if args.json:
        common.dump_json(data)
        return common.EXIT_OK
    window = breakdown.window or 0
    leaf_id = sanitize(data["leafId"], single_line=True)
    print(
        f"context at {leaf_id} (entry #{leaf}): {breakdown.total:,} tokens [{counter.name}]"
        + (f" = {breakdown.total / window:.1%} of a {window:,} window" if window else "")
    )
    if breakdown.usage_tokens is not None:
        print(
            f"provider-counted context {breakdown.context_tokens:,} (last usage + estimate; "
            f"{provider_gap(data['unattributed'], '{:,}'.format)})"
        )
    for part in breakdown.parts:
        share = f"{part.tokens / window:6.1%}" if window else ""
        bar = "█" * max(1, round(30 * part.tokens / breakdown.total)) if breakdown.total else ""
        label = sanitize(part.label, single_line=True, max_len=40)
        print(f"  {label:<34} {part.tokens:>9,} {share}  {part.entries:>5} entries  {bar}")
    print("largest entries:")
    for item in breakdown.largest:
        ident = sanitize(item.entry_id, single_line=True, max_len=12)
        tool = f" {sanitize(item.tool, single_line=True, max_len=20)}" if item.tool else ""
        message = session.entries[item.entry_index]
        preview = common.preview(message.message or {}) if message.type == "message" else ""
        print(
            f"  #{item.entry_index:<7} {ident:<12} {item.role + tool:<24} {item.tokens:>8,}  "
            f"{preview}"
        )
    if breakdown.compaction_prepared:
        print(
            f"a compaction here (keep-recent {settings.keep_recent_tokens:,}) would free "
            f"~{breakdown.tokens_freed:,} tokens and keep ~{breakdown.tokens_kept:,} "
            "(plus its summary)"
        )
    else:
        reason = sanitize(str(breakdown.compaction_reason or ""), single_line=True)
        print(f"no compaction here: {reason}")
    return common.EXIT_OK


SPARK = "▁▂▃▄▅▆▇█"


def sparkline(values: list[int], width: int = 60) -> str:
    """``values`` as a row of block characters, bucketed to at most ``width`` columns (each
    column shows its bucket's largest value)."""
    if not values:
        return ""
    buckets = min(width, len(values))
    top = max(values) or 1
    out = []
    for column in range(buckets):
        lo = column * len(values) // buckets
        hi = max(lo + 1, (column + 1) * len(values) // buckets)
        value = max(values[lo:hi])
        out.append(SPARK[min(len(SPARK) - 1, value * (len(SPARK) - 1) // top)] if value else " ")
    return "".join(out)


def print_sweep(
    args: argparse.Namespace, session: Any, plan: Any, counter: Any, cache: Any
) -> None:
    """``plan --sweep``: every valid cut point of ``plan``'s region."""
    from tui_compactor.engine.deps import cut_sweep
    from tui_compactor.textsafe import sanitize

    sweep = cut_sweep(session, plan.leaf, None, counter, cache, plan=plan)
    data = sweep.to_json(session)
    data["session"] = str(session.path)
    if args.json:
        common.dump_json(data)
        return
    rows = sweep.rows
    print(
        f"sweep of {len(rows)} valid cut points, branch [{plan.boundary_start}, "
        f"{plan.boundary_end}) [{counter.name}]"
    )
    if not rows:
        print("  no valid cut point in the region")
        return
    print(f"  kept tokens   {sparkline([row.tokens_kept for row in rows])}")
    print(f"  dependencies  {sparkline([row.dependencies for row in rows])}")
    best = {row.branch_index for row in sweep.best_rows()}
    planned = plan.first_kept_index if plan.prepared else None
    print(f"  {'branch':>7} {'entry':>7} {'id':<12} {'kept':>9} {'summarized':>10} {'deps':>5}")
    for row in rows:
        marks = ("← planned " if row.branch_index == planned else "") + (
            "★ best" if row.branch_index in best else ""
        )
        ident = sanitize(session.entries[row.entry_index].id, single_line=True, max_len=12)
        print(
            f"  {row.branch_index:>7} {row.entry_index:>7} {ident:<12} {row.tokens_kept:>9,} "
            f"{row.tokens_summarized:>10,} {row.dependencies:>5}  {marks}"
        )
    if planned is not None:
        deps = sweep.dependencies_at(planned)
        print(f"dependencies crossing the planned cut: {len(deps)}")
        for dep in deps[:20]:
            text = sanitize(dep.text, single_line=True, max_len=70)
            print(f"  {dep.kind:<10} {text:<70} #{dep.summarized_entry} → #{dep.kept_entry}")
        if len(deps) > 20:
            print(f"  … {len(deps) - 20} more (--json lists the counts per cut)")


def show_requests(requests: list[Any], report: dict[str, Any] | None) -> None:
    """The request inspector's output: into ``report["requests"]`` for ``--json``, else as
    sanitized text on stdout."""
    from tui_compactor.summarize.requests import format_requests
    from tui_compactor.textsafe import sanitize

    if report is not None:
        report["requests"] = [item.to_json() for item in requests]
        return
    sys.stdout.write(sanitize(format_requests(requests)))
