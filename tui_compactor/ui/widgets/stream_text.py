"""A scrolling text pane for streamed summaries: buffer deltas, flush ~15 times a second.

Re-rendering a whole reply for every streamed token is quadratic (elia's lesson). ``StreamText``
appends deltas to a buffer and a timer flushes it at most ``FLUSH_HZ`` times a second; a flush
sanitizes and wraps only the *new* complete lines and the unfinished last line, and the pane
draws with ``render_line`` from cached strips, so the cost of a flush does not grow with the
length of the text. Text is always sanitized (``textsafe.sanitize``) and built as ``Text``:
brackets and escape sequences in a summary are shown, never interpreted.

Wrapping is ``wrap_cells``: the rows of a line joined give back the line exactly (no character
lost or doubled at a break), and rows are always wrapped at the width they are drawn at — a
scrollbar appearing or a resize re-wraps before the next row is drawn.
"""

from __future__ import annotations

import re

from rich.cells import cell_len, get_character_cell_size
from rich.console import Console
from rich.style import Style
from rich.text import Text
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.timer import Timer
from textual.widget import Widget

from tui_compactor.textsafe import sanitize
from tui_compactor.ui.widgets.redraw import set_virtual_size

__all__ = ["StreamText", "FLUSH_HZ", "wrap_cells"]

FLUSH_HZ = 15
"""How often buffered deltas are drawn, at most."""


_TOKEN_RE = re.compile(r"\S+\s*|\s+")
"""A word with the whitespace after it, or a run of whitespace (leading indentation)."""


def wrap_cells(line: str, width: int) -> list[str]:
    """Split one line (no newlines) into rows at most ``width`` cells wide.

    Breaks fall after whitespace where possible; a word longer than a row is folded by cells.
    Whitespace at a break stays at the end of its row (drawn cropped, so it may hang past
    ``width``); every other character is inside the row's width. ``"".join(rows) == line``
    always holds. A single character wider than ``width`` gets a row of its own.
    """
    width = max(1, width)
    rows: list[str] = []
    current = ""
    used = 0
    for token in _TOKEN_RE.findall(line):
        word = token.rstrip()
        word_cells = cell_len(word)
        if used + word_cells <= width:
            current += token
            used += cell_len(token)
            continue
        if current and word_cells <= width:
            rows.append(current)
            current, used = token, cell_len(token)
            continue
        # A word wider than a row: start it on a fresh row and fold it by cells.
        if current:
            rows.append(current)
            current, used = "", 0
        for character in word:
            cells = get_character_cell_size(character)
            if current and used + cells > width:
                rows.append(current)
                current, used = "", 0
            current += character
            used += cells
        trailing = token[len(word) :]
        current += trailing
        used += cell_len(trailing)
    if current or not rows:
        rows.append(current)
    return rows


def _line_style(line: str) -> str:
    """A light highlight for the summary's Markdown-ish structure (headings, checkboxes)."""
    stripped = line.lstrip()
    if stripped.startswith("#"):
        return "bold"
    if stripped.startswith(("- [x]", "- [X]", "* [x]")):
        return "green"
    if stripped.startswith(("- [ ]", "* [ ]")):
        return "yellow"
    if stripped.startswith("**") and stripped.endswith("**"):
        return "bold"
    return ""


class StreamText(ScrollView, can_focus=True):
    """A read-only, wrapped, auto-scrolling text pane fed by ``append(delta)``."""

    DEFAULT_CSS = """
    StreamText {
        height: 1fr;
        background: $surface;
        padding: 0 1;
        scrollbar-size-vertical: 1;
        scrollbar-gutter: stable;
    }
    StreamText:focus {
        background-tint: $foreground 3%;
    }
    """

    def __init__(
        self,
        placeholder: str = "",
        *,
        own_timer: bool = True,
        name: str | None = None,
        id: str | None = None,  # noqa: A002 - Textual's parameter name
        classes: str | None = None,
    ) -> None:
        """Args:
        placeholder: shown dimmed while there is no text yet.
        own_timer: flush on this pane's own timer; False when a container flushes several
            panes together (one screen update for all of them).
        """
        super().__init__(name=name, id=id, classes=classes)
        self.placeholder = placeholder
        self.own_timer = own_timer
        self.flush_count = 0
        """How many times buffered text was drawn (tests check deltas are batched)."""
        self.append_count = 0
        """How many deltas were appended."""
        self._raw_chunks: list[str] = []
        self._pending: list[str] = []
        self._lines: list[str] = []
        """The complete lines drawn so far, sanitized (as they came: ``text``'s lines)."""
        self._line_ends: list[int] = []
        """Per complete line: the number of rows (``_strips``) up to and including it."""
        self._tail_raw = ""
        self._strips: list[Strip] = []
        self._tail_strips: list[Strip] = []
        self._wrap_width = 0
        self._flush_timer: Timer | None = None
        self._cached_style: Style | None = None

    @property
    def text(self) -> str:
        """Everything appended so far, raw (including what is not drawn yet)."""
        return "".join(self._raw_chunks)

    @property
    def has_pending(self) -> bool:
        """True while appended text waits for the next flush."""
        return bool(self._pending)

    def on_mount(self) -> None:
        """Start the (paused) flush timer, unless a container flushes this pane."""
        if self.own_timer:
            self._flush_timer = self.set_interval(1 / FLUSH_HZ, self.flush, pause=True)

    def append(self, delta: str) -> None:
        """Add streamed text; it is drawn at the next flush, not now."""
        if not delta:
            return
        self._raw_chunks.append(delta)
        self._pending.append(delta)
        self.append_count += 1
        if self._flush_timer is not None:
            self._flush_timer.resume()

    def set_text(self, text: str) -> None:
        """Replace the whole text and draw it now.

        The complete lines it shares with the text drawn so far, from the start, keep their
        wrapped rows: a finished summary differs from what streamed by a few characters at
        most (spaces stripped at its ends, escapes removed), and re-wrapping a long reply
        whole would cost as much as drawing it again.
        """
        self.flush()  # nothing pending: the drawn lines are the text's complete lines
        lines = text.split("\n")
        kept = 0
        limit = min(len(self._lines), len(lines) - 1)
        if self._content_width() != self._wrap_width:
            limit = 0  # the rows were wrapped at another width: wrap everything again
        drawn = self.text.split("\n", limit)[:limit] if limit else []
        while kept < limit and drawn[kept] == lines[kept]:
            kept += 1
        rows = self._line_ends[kept - 1] if kept else 0
        del self._lines[kept:]
        del self._line_ends[kept:]
        del self._strips[rows:]
        self._tail_raw = ""
        self._tail_strips = []
        self._raw_chunks = [text] if text else []
        self._pending = ["\n".join(lines[kept:])] if text else []
        self.append_count += 1
        self.flush()
        self._update_virtual_size()
        self.refresh()

    def clear(self) -> None:
        """Remove all text."""
        self._raw_chunks.clear()
        self._pending.clear()
        self._lines.clear()
        self._line_ends.clear()
        self._tail_raw = ""
        self._strips.clear()
        self._tail_strips.clear()
        self._update_virtual_size()
        self.refresh()

    def flush(self) -> None:
        """Draw buffered text: wrap the new complete lines and the unfinished last line."""
        if not self._pending:
            if self._flush_timer is not None:
                self._flush_timer.pause()
            return
        at_end = self.is_vertical_scroll_end
        first_changed_row = len(self._strips)  # rows above the old tail do not change
        scroll_before = self.scroll_offset
        combined = self._tail_raw + "".join(self._pending)
        self._pending.clear()
        *complete, self._tail_raw = combined.split("\n")
        width = self._content_width()
        for raw_line in complete:
            line = sanitize(raw_line)
            self._lines.append(line)
            self._strips.extend(self._wrap(line, width))
            self._line_ends.append(len(self._strips))
        self._tail_strips = self._wrap(sanitize(self._tail_raw), width) if self._tail_raw else []
        self.flush_count += 1
        self._update_virtual_size()
        if at_end:
            self._follow_tail()
        if self.scroll_offset != scroll_before or self.placeholder and self.flush_count == 1:
            self.refresh()
        else:
            # Only the old tail and what follows it changed: repaint just those rows.
            rows = len(self._strips) + len(self._tail_strips) - first_changed_row
            self.refresh_lines(first_changed_row, max(1, rows))

    def _follow_tail(self) -> None:
        """Keep the last line in view without a screen reflow.

        A normal scroll makes the screen re-place and repaint every visible widget; this pane
        draws itself from ``scroll_offset`` in ``render_line``, so setting the offset quietly
        and repainting just this pane (and its scrollbar) shows the same thing for far less.
        """
        target = self.max_scroll_y
        if self.scroll_y == target:
            return
        self.set_reactive(Widget.scroll_y, target)
        self.set_reactive(Widget.scroll_target_y, target)
        if self.show_vertical_scrollbar:
            self.vertical_scrollbar.position = target

    def _content_width(self) -> int:
        """Width available for text (10 cells while hidden, so wrapping stays sane)."""
        width = self.scrollable_content_region.width or self.size.width
        return width if width > 0 else 10

    def _wrap(self, line: str, width: int) -> list[Strip]:
        """One logical line as wrapped strips (``wrap_cells``: nothing lost at a break)."""
        self._wrap_width = width
        if not line:
            return [Strip([], 0)]
        console: Console = self.app.console
        style = _line_style(line)
        strips = []
        for row in wrap_cells(line.expandtabs(4), width):
            text = Text(row, style=style, no_wrap=True, end="")
            strips.append(Strip(list(text.render(console)), text.cell_len))
        return strips

    def _rewrap(self) -> None:
        """Wrap every line again (after a width change)."""
        width = self._content_width()
        self._strips = []
        self._line_ends = []
        for line in self._lines:
            self._strips.extend(self._wrap(line, width))
            self._line_ends.append(len(self._strips))
        self._tail_strips = self._wrap(sanitize(self._tail_raw), width) if self._tail_raw else []
        self._update_virtual_size()

    def _update_virtual_size(self) -> None:
        """Set the scrollable size without a screen re-layout (15 flushes a second per pane
        would otherwise re-arrange the screen each time)."""
        set_virtual_size(self, Size(self._wrap_width, len(self._strips) + len(self._tail_strips)))

    def on_resize(self) -> None:
        """Re-wrap when the width changed."""
        if self._content_width() != self._wrap_width and (self._lines or self._tail_raw):
            self._rewrap()
            self.refresh()

    def _base_style(self) -> Style:
        """The pane's own style (computing it walks the ancestors, so it is cached)."""
        if self._cached_style is None:
            self._cached_style = self.rich_style
        return self._cached_style

    def notify_style_update(self) -> None:
        """Styles changed (theme, focus, hover): forget the cached style."""
        self._cached_style = None
        super().notify_style_update()

    @property
    def visible_text(self) -> str:
        """The drawn (flushed) text as wrapped lines, for tests and copying."""
        return "\n".join(strip.text for strip in (*self._strips, *self._tail_strips))

    def render_line(self, y: int) -> Strip:
        """One screen row: a cached wrapped strip, cropped to the view."""
        if (self._lines or self._tail_raw) and self._content_width() != self._wrap_width:
            # The text area changed width without a resize of the widget (a scrollbar came or
            # went): wrap again before drawing, or the end of every row would be cut off.
            self._rewrap()
        scroll_x, scroll_y = self.scroll_offset
        row = scroll_y + y
        width = self.scrollable_content_region.width
        base = self._base_style()
        done = len(self._strips)
        if row < done:
            strip = self._strips[row]
        elif row - done < len(self._tail_strips):
            strip = self._tail_strips[row - done]
        elif row == 0 and self.placeholder and not self._raw_chunks:
            placeholder = Text(sanitize(self.placeholder, single_line=True), style="dim italic")
            strip = Strip(list(placeholder.render(self.app.console)), placeholder.cell_len)
        else:
            return Strip.blank(width, base)
        return strip.crop_extend(scroll_x, scroll_x + width, None).apply_style(base)
