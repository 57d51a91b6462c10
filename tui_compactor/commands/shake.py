"""``tui-compactor shake SESSION``: preview oh-my-pi's mechanical "shake" (never writes).

For each of oh-my-pi's shake configs (``default``, ``aggressive``, ``rescue``, or the one
``--config`` names): the regions it would replace with a ``[shaken ~N tokens]`` placeholder
(tool-result text, large fenced/XML blocks), the tokens each would save, and the total.
oh-my-pi saves a shake by rewriting the whole session file; this tool never rewrites a file,
so the shake is only shown. ``--json`` prints ``{session, leafId, leafIndex, tokens,
previews: [...]}`` with the oracle's field names per preview.
"""

from __future__ import annotations

import argparse
from typing import Any

from tui_compactor.commands import engine_args as common
from tui_compactor.engine.methods import method_info

WHY_READ_ONLY = method_info("shake").note
"""Why a shake is never written (``engine.methods``, the one list of methods)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Register the command's switches."""
    common.add_session(parser)
    common.add_leaf(parser)
    parser.add_argument(
        "--shake-config",
        dest="shake_config",
        choices=("default", "aggressive", "rescue", "all"),
        default="all",
        help="which oh-my-pi shake config to preview (default: all three)",
    )
    common.add_settings(parser)
    common.add_json(parser)


def run(args: argparse.Namespace) -> int:
    """Print the shake previews."""
    from tui_compactor.engine.shake import SHAKE_CONFIGS, contexts_after_shake, shake_previews
    from tui_compactor.textsafe import sanitize

    try:
        settings, session, leaf = common.load_at_leaf(args)
    except common.CommandError as error:
        return common.fail(error)
    counter = settings.counter()
    names = list(SHAKE_CONFIGS) if args.shake_config == "all" else [args.shake_config]
    previews = shake_previews(session, leaf, names, counter)
    sizes = contexts_after_shake(session, leaf, previews, counter)
    if args.json:
        data: dict[str, Any] = {
            "session": str(session.path),
            "leafId": session.entries[leaf].id,
            "leafIndex": leaf,
            "tokens": counter.name,
            "writable": False,
            "why": WHY_READ_ONLY,
            "previews": [
                {**preview.to_json(), "contextBefore": before, "contextAfter": after}
                for preview, (before, after) in zip(previews, sizes, strict=True)
            ],
        }
        common.dump_json(data)
        return common.EXIT_OK
    print(
        f"shake preview at {sanitize(session.entries[leaf].id, single_line=True)} (entry #{leaf})"
    )
    for preview, (before, after) in zip(previews, sizes, strict=True):
        config = preview.config
        print(
            f"{config.name}: {len(preview.regions)} regions, {preview.tokens_freed} tokens freed "
            f"(protects the newest {config.protect_tokens}, needs {config.min_savings} saved, "
            f"blocks from {config.fence_min_tokens} tokens); context {before} -> {after} "
            f"tokens [{counter.name}]"
        )
        if not preview.regions and preview.ungated_regions:
            print(
                f"  under the savings gate: {len(preview.ungated_regions)} regions would save "
                "too little"
            )
        for region in preview.regions:
            where = "" if region.kind == "toolResult" else f" block {region.block_index}"
            label = sanitize(str(region.label or "?"), single_line=True, max_len=30)
            ident = sanitize(region.entry_id, single_line=True, max_len=12)
            print(
                f"  #{region.entry_index:<6} {ident:<12} {region.kind:<10} {label:<20}"
                f"{where} {region.tokens:>7} tok"
            )
    print(f"note: {WHY_READ_ONLY}")
    return common.EXIT_OK
