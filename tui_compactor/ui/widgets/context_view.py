"""What the model sees at the selected node: every block of the context, with its tokens."""

from __future__ import annotations

from typing import Any

from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widgets import Static

from tui_compactor.engine.messages import message_text
from tui_compactor.engine.methods import compaction_method, remote_info, shaken_result
from tui_compactor.textsafe import sanitize
from tui_compactor.ui.messages import GaugeData
from tui_compactor.ui.widgets.labels import format_tokens
from tui_compactor.ui.widgets.redraw import set_virtual_size, update_static


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


Block = tuple[str, str, int, int | None]
"""One row of the block list: (label, preview, tokens, entry index); as ``GaugeData.blocks``."""


def _block_style(label: str) -> str:
    """The label's style: summaries and branch summaries stand out, shaken results warn."""
    if label.startswith("summary"):
        return "bold yellow"
    return {"branch": "bold green", "user": "bold", "tool:shaken": "yellow"}.get(label, "")


class BlockList(ScrollView):
    """Every block of a context, one row each (``#``, block, tokens, text), drawn only as rows
    scroll into view: a context of thousands of blocks costs the UI thread a screenful.

    The header row stays on top; previews are sanitized one-liners (``GaugeData.blocks``).
    """

    DEFAULT_CSS = """
    BlockList { height: 1fr; scrollbar-size-vertical: 1; scrollbar-gutter: stable; }
    """

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002 - Textual's name
        super().__init__(id=id)
        self.blocks: list[Block] = []
        self._columns = (1, len("block"), len("tokens"))
        """Widths of the ``#``, block and tokens columns (the text takes the rest)."""
        self._strips: dict[tuple[int, int], Strip] = {}

    def show(self, blocks: list[Block]) -> None:
        """List ``blocks`` from the top."""
        self.blocks = blocks
        self._strips.clear()
        self._columns = (
            max([len(str(index)) for *_, index in blocks if index is not None] + [1]),
            max([len(label) for label, *_ in blocks] + [len("block")]),
            max([len(format_tokens(tokens)) for _, _, tokens, _ in blocks] + [len("tokens")]),
        )
        set_virtual_size(self, Size(0, len(blocks) + 1))  # rows are cut to the width
        self.scroll_to(0, 0, animate=False)
        self.refresh()

    def _row_text(self, row: int, width: int) -> Text:
        """Row ``row`` of the list (0: the header) as text exactly ``width`` cells wide."""
        number, label_width, tokens_width = self._columns
        if row == 0:
            text = Text(f"{'#':>{number}} {'block':<{label_width}} {'tokens':>{tokens_width}} "
                        "text", style="bold", no_wrap=True)
        else:
            label, preview, tokens, index = self.blocks[row - 1]
            text = Text(no_wrap=True)
            text.append(f"{'' if index is None else index:>{number}} ", style="dim")
            text.append(f"{label:<{label_width}}", style=_block_style(label))
            text.append(f" {format_tokens(tokens):>{tokens_width}} ")
            text.append(preview)
        text.truncate(width, overflow="ellipsis", pad=True)
        return text

    def render_line(self, y: int) -> Strip:
        """Screen row ``y``: the header, or block ``scroll_y + y - 1`` (cached per width)."""
        width = self.scrollable_content_region.width
        base: Style = self.rich_style
        row = 0 if y == 0 else int(self.scroll_y) + y
        if width <= 0 or row > len(self.blocks) or (row == 0 and not self.blocks):
            return Strip.blank(max(width, 0), base)
        strip = self._strips.get((row, width))
        if strip is None:
            text = self._row_text(row, width)
            strip = Strip(list(text.render(self.app.console)), width)
            self._strips[(row, width)] = strip
        return strip.apply_style(base)


class ContextView(Vertical):
    """The context the model would receive if the conversation continued at this node."""

    DEFAULT_CSS = """
    ContextView { padding: 0 1; }
    ContextView > #context-title { height: auto; text-style: bold; }
    """

    def compose(self) -> ComposeResult:
        """A title line and the block list."""
        yield Static(Text("move the cursor to see the context at a node", style="dim"),
                     id="context-title")
        yield BlockList(id="context-body")

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
        update_static(self.query_one("#context-title", Static), title)
        self.query_one(BlockList).show(data.blocks)
