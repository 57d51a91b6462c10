"""oh-my-pi's shake, previewed: the regions each config would elide and what the model would
see after. Never written: oh-my-pi saves a shake by rewriting the whole session file, and this
tool only appends (the reason is shown with every preview)."""

from __future__ import annotations

from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static

from tui_compactor.engine.methods import method_info
from tui_compactor.engine.shake import shake_placeholder
from tui_compactor.textsafe import sanitize
from tui_compactor.ui.widgets.labels import format_tokens

MAX_REGION_ROWS = 200
"""Regions listed per config (the rest are counted)."""


def shake_renderable(previews: list[Any], sizes: list[tuple[int, int]]) -> RenderableType:
    """One section per config: regions, tokens saved each, and the context before and after
    (``sizes``, from ``engine.shake.contexts_after_shake``, one per preview)."""
    parts: list[RenderableType] = [
        Text("shake preview (no model involved)", style="bold"),
        Text(f"cannot be written: {method_info('shake').note}", style="bold yellow"),
    ]
    for preview, (before, after) in zip(previews, sizes, strict=True):
        config = preview.config
        head = Text()
        head.append(f"\n{config.name}", style="bold cyan")
        head.append(
            f": {len(preview.regions)} region(s), {format_tokens(preview.tokens_freed)} "
            "tokens freed"
        )
        head.append(f" · context {format_tokens(before)} → {format_tokens(after)}", style="bold")
        head.append(
            f"\nprotects the newest {config.protect_tokens:,} tokens, needs "
            f"{config.min_savings:,} saved, blocks from {config.fence_min_tokens} tokens",
            style="dim",
        )
        parts.append(head)
        if not preview.regions:
            gated = len(preview.ungated_regions)
            parts.append(
                Text(
                    f"nothing to shake: {gated} region(s) would save too little"
                    if gated
                    else "nothing to shake",
                    style="dim",
                )
            )
            continue
        table = Table(box=None, show_edge=False, pad_edge=False, header_style="bold", expand=True)
        table.add_column("#", justify="right", style="dim", no_wrap=True)
        table.add_column("entry", no_wrap=True)
        table.add_column("kind", no_wrap=True)
        table.add_column("saved", justify="right", no_wrap=True)
        table.add_column("the model would see instead", ratio=1, no_wrap=True, overflow="ellipsis")
        for number, region in enumerate(preview.regions[:MAX_REGION_ROWS], 1):
            label = sanitize(str(region.label or "?"), single_line=True, max_len=24)
            kind = "result" if region.kind == "toolResult" else f"block {region.block_index}"
            table.add_row(
                Text(str(number)),
                Text(f"#{region.entry_index}"),
                Text(f"{label} {kind}"),
                Text(format_tokens(region.tokens)),
                Text(
                    f"{shake_placeholder(region.tokens)} (was: "
                    f"{sanitize(region.text, single_line=True, max_len=80)})"
                ),
            )
        parts.append(table)
        if len(preview.regions) > MAX_REGION_ROWS:
            parts.append(
                Text(f"… {len(preview.regions) - MAX_REGION_ROWS} more regions", style="dim")
            )
    return Group(*parts)


class ShakeView(VerticalScroll):
    """The shake preview of the plan's leaf (shown in the Compaction tab)."""

    DEFAULT_CSS = """
    ShakeView { padding: 0 1; }
    ShakeView > Static { width: 1fr; }
    """

    def __init__(self, previews: list[Any], sizes: list[tuple[int, int]], leaf: int) -> None:
        super().__init__()
        self.previews = previews
        self.sizes = sizes
        self.leaf = leaf

    def compose(self):  # type: ignore[no-untyped-def]
        """One static body."""
        title = Text(f"at #{self.leaf}", style="dim")
        yield Static(Group(title, shake_renderable(self.previews, self.sizes)))
