"""What the model sees at the selected node: every block of the context, with its tokens.

Two views of the same context, switched with ``s``: the compact list (one row per block) and
"as sent": for every item the role and the exact text the agent sends for it (pi's or
oh-my-pi's wrappers, the developer role, joined shaken results, placeholders), taken from
``engine.context.item_llm`` like ``context --json``'s ``llm``. Session text is shown through
``textsafe.sanitize`` and ``Text`` (never markup), in a pane that draws only the rows on screen.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.cache import LRUCache
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
from tui_compactor.ui.widgets.redraw import LaidOutOnce, PaneText, set_virtual_size, update_static
from tui_compactor.ui.widgets.stream_text import wrap_cells
from tui_compactor.ui.widgets.tree import Piece, fit_pieces
from tui_compactor.wording import count_of
from tui_compactor.workbench.views import Block, ContextBlocks, SentBlock

RULES_AGENT = {"pi": "pi", "omp": "oh-my-pi"}
"""Rule set -> the agent whose sending the "as sent" view shows."""

MAX_SENT_CHARS = 1_000_000
"""Most characters the "as sent" view holds; a longer context keeps its first and last items
and says how many in the middle are left to ``context --json``."""


def block_label(item: Any, message: dict[str, Any], entry: Any, rules: str) -> str:
    """Short name of one context block; a compaction summary names its method (``rules``:
    whose extension flag is read)."""
    role: Any = message.get("role")
    if role == "compactionSummary":
        data = entry.data if entry is not None else {}
        method = compaction_method(data, rules)
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
            text = (
                f"[{len(remote.items)} provider item(s) replace the kept history for "
                f"{remote.provider}] {text}"
            )
    return sanitize(text, single_line=True, max_len=200)


@lru_cache(maxsize=64)
def _style(name: str) -> Style | None:
    """The Rich style a style name stands for (None: none)."""
    return Style.parse(name) if name else None


def _block_style(label: str) -> str:
    """The label's style: summaries and branch summaries stand out, shaken results warn."""
    if label.startswith("summary"):
        return "bold yellow"
    return {"branch": "bold green", "user": "bold", "tool:shaken": "yellow"}.get(label, "")


class BlockList(ScrollView):
    """Every block of a context, one row each (``#``, block, tokens, text), drawn only as rows
    scroll into view: a context of thousands of blocks costs the UI thread a screenful (a block
    of ``ContextBlocks`` is unpacked when its row is drawn, the recent strips are cached).

    The header row stays on top; previews are sanitized one-liners (``GaugeData.blocks``).
    """

    DEFAULT_CSS = """
    BlockList { height: 1fr; scrollbar-size-vertical: 1; scrollbar-gutter: stable; }
    """

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002 - Textual's name
        super().__init__(id=id)
        self.blocks: ContextBlocks = ContextBlocks()
        self._columns = (1, len("block"), len("tokens"))
        """Widths of the ``#``, block and tokens columns (the text takes the rest)."""
        self._strips: LRUCache[tuple[int, int], Strip] = LRUCache(1024)

    def show(self, blocks: Sequence[Block]) -> None:
        """List ``blocks`` from the top."""
        if not isinstance(blocks, ContextBlocks):
            blocks = ContextBlocks(blocks)
        self.blocks = blocks
        self._strips.clear()
        # Counts below a million take at most six characters (as "tokens"); above, the text
        # only widens with the count: the largest one decides.
        self._columns = (
            len(str(max(blocks.max_entry_index, 0))),
            max([len(label) for label in blocks.labels] + [len("block")]),
            max(len(format_tokens(blocks.max_tokens)), len("tokens")),
        )
        set_virtual_size(self, Size(0, len(blocks) + 1))  # rows are cut to the width
        self.scroll_to(0, 0, animate=False)
        self.refresh()

    def _row_text(self, row: int, width: int) -> Text:
        """Row ``row`` of the list (0: the header) as text exactly ``width`` cells wide."""
        number, label_width, tokens_width = self._columns
        if row == 0:
            text = Text(
                f"{'#':>{number}} {'block':<{label_width}} {'tokens':>{tokens_width}} text",
                style="bold",
                no_wrap=True,
            )
        else:
            label, preview, tokens, index = self.blocks[row - 1]
            text = Text(no_wrap=True)
            text.append(f"{'' if index is None else index:>{number}} ", style="dim")
            text.append(f"{label:<{label_width}}", style=_block_style(label))
            text.append(f" {format_tokens(tokens):>{tokens_width}} ")
            text.append(preview)
        text.truncate(width, overflow="ellipsis", pad=True)
        return text

    def _row_strip(self, row: int, width: int) -> Strip:
        """Row ``row`` (>= 1: a block) as a strip exactly ``width`` cells wide, one segment
        per column, cut as ``_row_text`` cuts it (``tree.fit_pieces``: each column measured
        on its own, where Rich measures a whole row of non-ASCII text grapheme by grapheme)."""
        number, label_width, tokens_width = self._columns
        label, preview, tokens, index = self.blocks[row - 1]
        pieces: list[Piece] = [
            (f"{'' if index is None else index:>{number}} ", _style("dim")),
            (f"{label:<{label_width}}", _style(_block_style(label))),
            (f" {format_tokens(tokens):>{tokens_width}} ", None),
            (preview, None),
        ]
        return Strip([Segment(text, style) for text, style in fit_pieces(pieces, width)], width)

    def render_line(self, y: int) -> Strip:
        """Screen row ``y``: the header, or block ``scroll_y + y - 1`` (cached per width)."""
        width = self.scrollable_content_region.width
        base: Style = self.rich_style
        row = 0 if y == 0 else int(self.scroll_y) + y
        if width <= 0 or row > len(self.blocks) or (row == 0 and not self.blocks):
            return Strip.blank(max(width, 0), base)
        strip = self._strips.get((row, width))
        if strip is None:
            if row == 0:
                strip = Strip(list(self._row_text(0, width).render(self.app.console)), width)
            else:
                strip = self._row_strip(row, width)
            self._strips[(row, width)] = strip
        return strip.apply_style(base)


SentLine = tuple[str, str]
"""(one line of text, already sanitized, without a newline; its style)."""


def _item_lines(block: SentBlock) -> list[SentLine]:
    """The lines of one item: a header, then per message its role and its text."""
    style = "bold yellow" if block.label.startswith("summary") else "bold"
    lines: list[SentLine] = [
        (f"── #{block.entry_index} {block.label} · {format_tokens(block.tokens)} tokens", style)
    ]
    if not block.messages:
        why = "excluded from the context (!! run)" if block.excluded else "nothing"
        lines.append((f"   sends {why}", "dim italic"))
    for message, extra in zip(block.messages, block.extras, strict=True):
        lines.append((f"→ {sanitize(message['role'], single_line=True, max_len=40)}", "bold cyan"))
        text = message["text"]
        if text:
            lines.extend((line, "") for line in sanitize(text).expandtabs(4).split("\n"))
        elif not extra:
            lines.append(("(empty text)", "dim italic"))
        if extra:
            lines.append(
                (f"   also sends: {sanitize(extra, single_line=True, max_len=300)}", "dim italic")
            )
    lines.append(("", ""))
    return lines


def sent_lines(blocks: list[SentBlock]) -> list[SentLine]:
    """Every item as sent, in order; beyond ``MAX_SENT_CHARS`` the middle items are counted
    in one line instead of drawn."""
    size = [sum(len(m["text"]) for m in block.messages) + 80 for block in blocks]
    if sum(size) <= MAX_SENT_CHARS:
        return [line for block in blocks for line in _item_lines(block)]
    head, used = 0, 0
    while head < len(blocks) and used + size[head] <= MAX_SENT_CHARS // 2:
        used, head = used + size[head], head + 1
    tail, used = len(blocks), 0
    while tail > head and used + size[tail - 1] <= MAX_SENT_CHARS // 2:
        used, tail = used + size[tail - 1], tail - 1
    skipped = blocks[head:tail]
    chars = sum(len(m["text"]) for block in skipped for m in block.messages)
    note = (
        f"… {len(skipped):,} items ({chars:,} characters) not drawn here; "
        "`tui-compactor context --json` prints every one",
        "bold magenta",
    )
    return (
        [line for block in blocks[:head] for line in _item_lines(block)]
        + [note, ("", "")]
        + [line for block in blocks[tail:] for line in _item_lines(block)]
    )


class SentText(ScrollView, can_focus=True):
    """Read-only wrapped lines, drawn row by row (only the rows on screen are rendered)."""

    DEFAULT_CSS = """
    SentText { height: 1fr; scrollbar-size-vertical: 1; scrollbar-gutter: stable; }
    SentText:focus { background-tint: $foreground 3%; }
    """

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002 - Textual's name
        super().__init__(id=id)
        self.lines: list[SentLine] = []
        self._rows: list[SentLine] = []
        self._strips: dict[int, Strip] = {}
        self._width = 0

    def set_lines(self, lines: list[SentLine], *, keep_scroll: bool = False) -> None:
        """Show ``lines`` from the top (``keep_scroll``: where the reader was)."""
        self.lines = lines
        self._width = 0
        self._rewrap()
        if not keep_scroll:
            self.scroll_to(0, 0, animate=False)
        self.refresh()

    def _content_width(self) -> int:
        width = self.scrollable_content_region.width or self.size.width
        return width if width > 0 else 40

    def _rewrap(self) -> None:
        """Wrap the lines at the current width (``wrap_cells``: nothing lost at a break)."""
        width = self._content_width()
        if width == self._width:
            return
        self._width = width
        rows: list[SentLine] = []
        for line, style in self.lines:
            if len(line) <= width and line.isascii():
                rows.append((line, style))
            else:
                rows.extend((row, style) for row in wrap_cells(line, width))
        self._rows = rows
        self._strips.clear()
        set_virtual_size(self, Size(width, len(rows)))

    def on_resize(self) -> None:
        """Wrap again when the width changed."""
        self._rewrap()
        self.refresh()

    def render_line(self, y: int) -> Strip:
        """One screen row (rendered once, then cached until the next wrap)."""
        if self._content_width() != self._width:
            self._rewrap()
        scroll_x, scroll_y = self.scroll_offset
        row = scroll_y + y
        width = self.scrollable_content_region.width
        base: Style = self.rich_style
        if row >= len(self._rows):
            return Strip.blank(width, base)
        strip = self._strips.get(row)
        if strip is None:
            line, style = self._rows[row]
            text = Text(line, style=style, no_wrap=True, end="")
            strip = Strip(list(text.render(self.app.console)), text.cell_len)
            self._strips[row] = strip
        return strip.crop_extend(scroll_x, scroll_x + width, None).apply_style(base)


class ContextView(LaidOutOnce, Vertical):
    """The context the model would receive if the conversation continued at this node."""

    DEFAULT_CSS = """
    ContextView { padding: 0 1; }
    ContextView > #context-title { height: auto; text-style: bold; }
    ContextView > #context-scroll { height: 1fr; }
    ContextView > #context-sent { display: none; }
    ContextView.-as-sent > #context-scroll { display: none; }
    ContextView.-as-sent > #context-sent { display: block; }
    """

    ALLOW_MAXIMIZE = True
    """``S`` lets the view fill the screen (the text gets every column at 80x24)."""

    as_sent: bool = False
    """Show every item's role and exact text (``s``) instead of the compact list."""

    def compose(self) -> ComposeResult:
        """A title line, the compact list and the "as sent" pane (one of the two shown)."""
        yield PaneText(
            Text("move the cursor to see the context at a node", style="dim"), id="context-title"
        )
        yield BlockList(id="context-scroll")
        yield SentText(id="context-sent")

    pending: GaugeData | None = None
    """Data that arrived while the tab was hidden (drawn when it is shown)."""

    shown: GaugeData | None = None
    """The data drawn last."""

    def show(self, data: GaugeData) -> None:
        """List ``data.blocks`` now if visible, else when the tab is next shown (a measure
        without its blocks says they are on the way: the app lists them for a shown tab)."""
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

    def set_as_sent(self, as_sent: bool) -> None:
        """Switch between the compact list and the "as sent" view (redraws what it has)."""
        self.as_sent = as_sent
        self.set_class(as_sent, "-as-sent")
        data = self.pending or self.shown
        if data is not None and self.is_on_screen:
            self.pending = None
            self._draw(data)

    @property
    def is_on_screen(self) -> bool:
        """True when the Context tab is the one shown."""
        return self.display and self.parent is not None and self.parent.display  # type: ignore[union-attr]

    def _draw(self, data: GaugeData) -> None:
        """Fill the title and the list or the "as sent" pane."""
        before, self.shown = self.shown, data
        same_node = (
            before is not None
            and before.sent is not None
            and (before.entry_index, before.rules) == (data.entry_index, data.rules)
        )
        agent = RULES_AGENT.get(data.rules, data.rules)
        if self.as_sent and data.sent is not None:
            messages = sum(len(block.messages) for block in data.sent)
            title = Text(
                f"#{data.entry_index} as {agent} sends it · {len(data.sent)} items → "
                f"{count_of(messages, 'message')} · {format_tokens(data.tokens)} tokens",
                style="bold",
            )
            title.append("\ns: list · S: full screen · tab: scroll · esc: back", style="dim")
            self.query_one("#context-title", Static).update(title)
            # The same node again (the file grew, a setting changed): the reader keeps the place.
            self.query_one(SentText).set_lines(sent_lines(data.sent), keep_scroll=same_node)
            return
        if self.as_sent:
            title = Text(
                f"context at #{data.entry_index}: converting what {agent} sends…", style="bold"
            )
            self.query_one("#context-title", Static).update(title)
            self.query_one(SentText).set_lines([])
            return
        if data.blocks is None:
            title = Text(f"context at #{data.entry_index}: listing its blocks…", style="bold")
            update_static(self.query_one("#context-title", Static), title)
            self.query_one(BlockList).show([])
            return
        title = Text(
            f"context at #{data.entry_index}: {len(data.blocks)} blocks, "
            f"{format_tokens(data.tokens)} tokens  (s: as {agent} sends it)",
            style="bold",
        )
        update_static(self.query_one("#context-title", Static), title)
        self.query_one(BlockList).show(data.blocks)
