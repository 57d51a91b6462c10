"""What the model sees at the selected node: every block of the context, with its tokens."""

from __future__ import annotations

from typing import Any

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from tui_compactor.engine.messages import message_text
from tui_compactor.engine.methods import compaction_method, remote_info, shaken_result
from tui_compactor.textsafe import sanitize
from tui_compactor.ui.messages import GaugeData
from tui_compactor.ui.widgets.labels import format_tokens

MAX_CONTEXT_ROWS = 400
"""Longest context listed row by row; beyond that the middle is summarized in one line (a
Rich table is measured whole, so it must stay small to keep the cursor snappy)."""


def block_label(item: Any, message: dict[str, Any], entry: Any = None) -> str:
    """Short name of one context block; a compaction summary names its method."""
    role: Any = message.get("role")
    if role == "compactionSummary":
        data = entry.data if entry is not None else {}
        method = compaction_method(data)
        label = "summary" if method in ("soft", "legacy") else f"summary:{method}"
        warning = data.get("warning")
        return f"{label} ⚠" if isinstance(warning, str) and warning.strip() else label
    if role == "toolResult" and shaken_result(message):
        return "tool:shaken"
    return {
        "branchSummary": "branch",
        "toolResult": "tool",
        "bashExecution": "bash",
    }.get(role, str(role or getattr(item, "kind", "?")))


def block_preview(message: dict[str, Any], entry: Any = None) -> str:
    """One sanitized line of a context block (a remote compaction says what replaces it)."""
    text = message_text(message, brief=True)
    if message.get("role") == "compactionSummary" and entry is not None:
        remote = remote_info(entry.data) if entry.type == "compaction" else None
        if remote is not None:
            text = (f"[{len(remote.items)} provider item(s) replace the kept history for "
                    f"{remote.provider}] {text}")
    return sanitize(text, single_line=True, max_len=200)


def context_table(data: GaugeData) -> Table:
    """A table of the context blocks at ``data.entry_index`` (previews already sanitized)."""
    table = Table(expand=True, box=None, show_edge=False, pad_edge=False, header_style="bold")
    table.add_column("#", justify="right", style="dim", no_wrap=True)
    table.add_column("block", no_wrap=True)
    table.add_column("tokens", justify="right", no_wrap=True)
    table.add_column("text", ratio=1, no_wrap=True, overflow="ellipsis")
    blocks = data.blocks
    if len(blocks) > MAX_CONTEXT_ROWS:
        half = MAX_CONTEXT_ROWS // 2
        skipped = blocks[half:-half]
        shown = blocks[:half] + [("…", f"{len(skipped):,} more blocks",
                                  sum(t for _, _, t, _ in skipped), None)] + blocks[-half:]
    else:
        shown = blocks
    for label, preview, tokens, entry_index in shown:
        style = {"branch": "bold green", "user": "bold", "tool:shaken": "yellow"}.get(label, "")
        if label.startswith("summary"):
            style = "bold yellow"
        table.add_row(
            Text("" if entry_index is None else str(entry_index)),
            Text(label, style=style),
            Text(format_tokens(tokens)),
            Text(preview),
        )
    return table


class ContextView(VerticalScroll):
    """The context the model would receive if the conversation continued at this node."""

    DEFAULT_CSS = """
    ContextView { padding: 0 1; }
    ContextView > #context-title { height: auto; text-style: bold; }
    """

    def compose(self) -> ComposeResult:
        """A title line and the table."""
        yield Static(Text("move the cursor to see the context at a node", style="dim"),
                     id="context-title")
        yield Static(id="context-body")

    pending: GaugeData | None = None
    """Data that arrived while the tab was hidden (drawn when it is shown)."""

    def show(self, data: GaugeData) -> None:
        """List ``data.blocks`` now if visible, else when the tab is next shown."""
        if not self.is_on_screen:
            self.pending = data
            return
        self.pending = None
        self._draw(data)

    def show_pending(self) -> None:
        """Draw what arrived while hidden."""
        if self.pending is not None:
            data, self.pending = self.pending, None
            self._draw(data)

    @property
    def is_on_screen(self) -> bool:
        """True when the Context tab is the one shown."""
        return self.display and self.parent is not None and self.parent.display  # type: ignore[union-attr]

    def _draw(self, data: GaugeData) -> None:
        """Fill title and table."""
        title = Text(f"context at #{data.entry_index}: {len(data.blocks)} blocks, "
                     f"{format_tokens(data.tokens)} tokens", style="bold")
        self.query_one("#context-title", Static).update(title)
        self.query_one("#context-body", Static).update(context_table(data))
