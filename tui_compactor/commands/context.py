"""``tui-compactor context``: the messages the model would receive at a node.

For each message: role, source entry id, kind (source entry type), tokens; then the thinking
level, the model and the context tokens (last valid usage + trailing estimates, and the pure
local estimate). ``--json`` prints one object.
"""

from __future__ import annotations

import argparse
from typing import Any

from tui_compactor.commands import engine_args as common
from tui_compactor.wording import count_of


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Register the command's switches."""
    common.add_session(parser)
    common.add_leaf(parser, at=True)
    common.add_settings(parser)
    parser.add_argument(
        "--breakdown",
        action="store_true",
        help="what fills the window: tokens per kind (per tool), the largest entries, and what "
        "a compaction here would free",
    )
    common.add_json(parser)


def context_json(session: Any, leaf: int, counter: Any, rules: str) -> dict[str, Any]:
    """The context at ``leaf`` as a JSON-ready object."""
    from tui_compactor.engine.context import (
        build_context,
        estimate_context_tokens,
        item_llm,
        item_tokens,
    )
    from tui_compactor.engine.methods import shaken_result
    from tui_compactor.engine.tokens import TokenCache

    ctx = build_context(session, leaf, rules=rules)
    cache = TokenCache(session, counter)
    tokens = estimate_context_tokens(ctx, counter, cache)
    entries = session.entries
    items = []
    sent = 0
    for item in ctx.items:
        row: dict[str, Any] = {
            "role": item.role,
            "entryId": entries[item.entry_index].id,
            "entryIndex": item.entry_index,
            "kind": item.kind,
            "tokens": item_tokens(item, counter, cache),
        }
        if item.excluded:
            row["excludeFromContext"] = True
        if item.role == "custom":
            row["customType"] = item.message.get("customType")
        if item.rewritten:
            row["rewritten"] = True
        if rules == "omp" and shaken_result(item.message):
            row["pruned"] = True
        if item.role == "compactionSummary" and item.message.get("method") is not None:
            row["method"] = item.message.get("method")
        row["llm"] = item_llm(item, rules)
        sent += len(row["llm"])
        items.append(row)
    compaction = ctx.compaction_index
    extra: dict[str, Any] = {"models": ctx.models, "mode": ctx.mode} if rules == "omp" else {}
    return {
        "session": str(session.path),
        "leafId": entries[leaf].id,
        "leafIndex": leaf,
        "rules": rules,
        "tokens": counter.name,
        "length": len(items),
        "llmMessageCount": sent,
        "thinkingLevel": ctx.thinking_level,
        "model": ctx.model,
        "compactionId": entries[compaction].id if compaction is not None else None,
        "warnings": ctx.warnings,
        "contextTokens": tokens.to_json(),
        **extra,
        "items": items,
    }


def run(args: argparse.Namespace) -> int:
    """Print the context."""
    from tui_compactor.commands.plan import session_threshold, threshold_text, window_text
    from tui_compactor.engine.context import build_context
    from tui_compactor.textsafe import sanitize

    try:
        settings = common.settings_from_args(args)
        session = common.load(args.session, writes=False)
        settings = settings.for_session(session)
        leaf = common.leaf_or_default(session, args.leaf)
    except common.CommandError as error:
        return common.fail(error)
    counter = settings.counter()
    if args.breakdown:
        from tui_compactor.commands.analysis import run_breakdown

        return run_breakdown(args, session, leaf, settings)
    data = context_json(session, leaf, counter, settings.rules)
    data["threshold"] = session_threshold(data["contextTokens"]["tokens"], settings, session)
    if args.json:
        common.dump_json(data)
        return common.EXIT_OK
    ctx = build_context(session, leaf, rules=settings.rules)
    print(f"context at {sanitize(data['leafId'], single_line=True)} (entry #{leaf})")
    model = data["model"] or {}
    model_text = f"{model.get('provider')}/{model.get('modelId')}" if model else "none"
    print(f"model {sanitize(model_text, single_line=True)}, thinking {data['thinkingLevel']}")
    for warning in data["warnings"]:
        print(f"warning: {sanitize(warning, single_line=True)}")
    for row, item in zip(data["items"], ctx.items, strict=True):
        mark = " (excluded)" if row.get("excludeFromContext") else ""
        ident = sanitize(row["entryId"], single_line=True, max_len=12)
        print(
            f"{row['entryIndex']:>7} {ident:<12} {row['role']:<17} {row['tokens']:>7} tok  "
            f"{common.preview(item.message)}{mark}"
        )
    tokens = data["contextTokens"]
    print(
        f"context tokens {tokens['tokens']} (usage {tokens['usageTokens']} + trailing "
        f"{tokens['trailingTokens']}); local estimate {tokens['localEstimate']} "
        f"[{counter.name}]; {count_of(data['length'], 'message')}, "
        f"{data['llmMessageCount']} sent"
    )
    threshold = data.get("threshold")
    if threshold:
        crossed = "yes" if threshold["shouldCompact"] else "no"
        print(f"window {window_text(threshold)}")
        print(f"{threshold_text(threshold)}: compact now: {crossed}")
    return common.EXIT_OK
