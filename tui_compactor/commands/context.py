"""``tui-compactor context``: the messages the model would receive at a node.

For each message: role, source entry id, kind (source entry type), tokens; then the thinking
level, the model and the context tokens (last valid usage + trailing estimates, and the pure
local estimate). ``--json`` prints one object.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
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


def _row(session: Any, item: Any, tokens: int, rules: str, *, texts: bool = True) -> dict[str, Any]:
    """One ``items`` row of ``context --json`` (the item's ``tokens`` measured by the walk);
    without ``texts`` its ``llm`` lists only the roles of the messages sent (the text listing
    counts them, it does not print them)."""
    from tui_compactor.engine.context import item_llm, item_llm_messages
    from tui_compactor.engine.methods import shaken_result

    row: dict[str, Any] = {
        "role": item.role,
        "entryId": session.entries[item.entry_index].id,
        "entryIndex": item.entry_index,
        "kind": item.kind,
        "tokens": tokens,
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
    if texts:
        row["llm"] = item_llm(item, rules)
    else:
        row["llm"] = [{"role": str(one.get("role"))} for one in item_llm_messages(item, rules)]
    return row


class ContextRows:
    """The context at a leaf as ``context`` prints it: the rows of ``workbench.views.ContextWalk``
    (the gauge's walk) made as they are consumed, with the messages sent counted."""

    def __init__(self, session: Any, leaf: int, counter: Any, rules: str) -> None:
        from tui_compactor.workbench.views import ContextWalk

        self.session, self.leaf, self.counter, self.rules = session, leaf, counter, rules
        self._walk = ContextWalk(session, leaf, counter, rules)
        self.ctx = self._walk.ctx
        self.sent = 0

    def rows(self, *, texts: bool = True) -> Iterator[tuple[Any, dict[str, Any]]]:
        """(item, ``items`` row) pairs in context order (one pass; ``texts``: see ``_row``)."""
        for item, tokens in self._walk.items():
            row = _row(self.session, item, tokens, self.rules, texts=texts)
            self.sent += len(row["llm"])
            yield item, row

    @property
    def length(self) -> int:
        """Rows made so far."""
        return self._walk.length

    @property
    def tokens(self) -> Any:
        """The context's ``ContextTokens`` (pi rules: of the rows walked so far)."""
        return self._walk.tokens

    def json(self, items: Any) -> dict[str, Any]:
        """The ``context --json`` object around ``items`` (call after ``rows`` ran)."""
        ctx, entries, rules = self.ctx, self.session.entries, self.rules
        compaction = ctx.compaction_index
        extra: dict[str, Any] = {"models": ctx.models, "mode": ctx.mode} if rules == "omp" else {}
        return {
            "session": str(self.session.path),
            "leafId": entries[self.leaf].id,
            "leafIndex": self.leaf,
            "rules": rules,
            "tokens": self.counter.name,
            "length": self.length,
            "llmMessageCount": self.sent,
            "thinkingLevel": ctx.thinking_level,
            "model": ctx.model,
            "compactionId": entries[compaction].id if compaction is not None else None,
            "warnings": ctx.warnings,
            "contextTokens": self.tokens.to_json(),
            **extra,
            "items": items,
        }


def context_json(session: Any, leaf: int, counter: Any, rules: str) -> dict[str, Any]:
    """The context at ``leaf`` as a JSON-ready object."""
    walk = ContextRows(session, leaf, counter, rules)
    items = [row for _, row in walk.rows()]
    return walk.json(items)


SPOOL_MAX_CHARS = 1024 * 1024
"""``context --json`` keeps up to this much of its rendered items in memory, then spills them
to a temporary file until the counts that precede them in the object are known."""


def run(args: argparse.Namespace) -> int:
    """Print the context (streamed: the rows are written as they are made)."""
    from tui_compactor.commands.plan import session_threshold, threshold_text, window_text
    from tui_compactor.textsafe import sanitize

    try:
        settings, session, leaf = common.load_at_leaf(args, writes=False)
    except common.CommandError as error:
        return common.fail(error)
    counter = settings.counter()
    if args.breakdown:
        from tui_compactor.commands.analysis import run_breakdown

        return run_breakdown(args, session, leaf, settings)
    walk = ContextRows(session, leaf, counter, settings.rules)
    if args.json:
        import tempfile

        from tui_compactor.textsafe import JsonText, json_list_chunks, write_json_for_terminal

        with tempfile.SpooledTemporaryFile(SPOOL_MAX_CHARS, "w+", encoding="utf-8") as spool:
            for chunk in json_list_chunks(row for _, row in walk.rows()):
                spool.write(chunk)
            spool.seek(0)
            data = walk.json(JsonText(iter(lambda: spool.read(1 << 16), "")))
            data["threshold"] = session_threshold(walk.tokens.tokens, settings, session)
            write_json_for_terminal(sys.stdout, data)
        return common.EXIT_OK
    ctx = walk.ctx
    print(f"context at {sanitize(session.entries[leaf].id, single_line=True)} (entry #{leaf})")
    model = ctx.model or {}
    model_text = f"{model.get('provider')}/{model.get('modelId')}" if model else "none"
    print(f"model {sanitize(model_text, single_line=True)}, thinking {ctx.thinking_level}")
    for warning in ctx.warnings:
        print(f"warning: {sanitize(warning, single_line=True)}")
    out = sys.stdout
    for item, row in walk.rows(texts=False):
        mark = " (excluded)" if row.get("excludeFromContext") else ""
        ident = sanitize(row["entryId"], single_line=True, max_len=12)
        out.write(
            f"{row['entryIndex']:>7} {ident:<12} {row['role']:<17} {row['tokens']:>7} tok  "
            f"{common.preview(item.message)}{mark}\n"
        )
    tokens = walk.tokens.to_json()
    print(
        f"context tokens {tokens['tokens']} (usage {tokens['usageTokens']} + trailing "
        f"{tokens['trailingTokens']}); local estimate {tokens['localEstimate']} "
        f"[{counter.name}]; {count_of(walk.length, 'message')}, "
        f"{walk.sent} sent"
    )
    threshold = session_threshold(walk.tokens.tokens, settings, session)
    if threshold:
        crossed = "yes" if threshold["shouldCompact"] else "no"
        print(f"window {window_text(threshold)}")
        print(f"{threshold_text(threshold)}: compact now: {crossed}")
    return common.EXIT_OK
