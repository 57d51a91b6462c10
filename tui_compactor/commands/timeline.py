"""``tui-compactor timeline SESSION [--json]``: every compaction and branch summary in order.

One row each, in file order: where it is (entry, parent, on the active path or not), method,
tokens before → after (after = the summary and the kept window, counted locally), summary
length, who wrote it when the entry says, and for compactions the hindsight score and the files
re-read after it (``audit`` gives the details).
"""

from __future__ import annotations

import argparse

from tui_compactor.commands import engine_args as common
from tui_compactor.commands.audit import add_arguments, load_with_facts

__all__ = ["add_arguments", "run"]


def run(args: argparse.Namespace) -> int:
    """Print the timeline."""
    from tui_compactor.engine.hindsight import compaction_timeline
    from tui_compactor.textsafe import sanitize

    try:
        settings, session, facts = load_with_facts(args)
    except common.CommandError as error:
        return common.fail(error)
    counter = settings.counter()
    rows = compaction_timeline(session, counter, rules=settings.rules, facts=facts)
    if args.json:
        common.dump_json(
            {
                "session": str(session.path),
                "rules": settings.rules,
                "tokens": counter.name,
                "rows": [row.to_json(session) for row in rows],
            }
        )
        return common.EXIT_OK
    if not rows:
        print("no compactions or branch summaries in this session")
        return common.EXIT_OK
    print(
        f"{'entry':>7} {'id':<10} {'what':<14} {'before':>9} {'after':>8} {'chars':>6} "
        f"{'score':>5} {'rereads':>7}  written by"
    )
    for row in rows:
        entry = session.entries[row.entry_index]
        ident = sanitize(entry.id, single_line=True, max_len=10)
        what = "compaction" if row.kind == "compaction" else "branch summary"
        if row.method:
            what = f"{what[:5]}/{sanitize(row.method, single_line=True, max_len=8)}"
        before = f"{row.tokens_before:,}" if row.tokens_before is not None else "-"
        score = f"{row.audit.score:.2f}" if row.audit is not None else ""
        rereads = str(len(row.audit.rereads)) if row.audit is not None else ""
        mark = "*" if row.on_active_path else " "
        writer = sanitize(row.model or "", single_line=True, max_len=30)
        print(
            f"{row.entry_index:>7}{mark}{ident:<10} {what:<14} {before:>9} "
            f"{row.tokens_after or 0:>8,} {row.summary_chars:>6} {score:>5} {rereads:>7}  "
            f"{writer}"
        )
    print("* on the active path")
    return common.EXIT_OK
