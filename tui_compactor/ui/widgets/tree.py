"""The session tree: a virtual list over outline rows (never Textual's ``Tree``).

``session.outline.build_outline`` flattens the session (linear runs flat, only branch points
indent, the active path continues the main line). This widget only draws the rows that are on
screen through ``render_line`` and keeps rendered strips in an LRU cache, so 100k rows and 50k
levels of parentId nesting cost the same as 100. The preview of a row whose record is not in
memory (a big, lazily read session) is read in a thread, a screenful at a time; the row shows a
placeholder until it arrives, so scrolling never waits for the file (or for a worker's GIL).
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Mapping, MutableMapping, Sequence
from itertools import repeat
from typing import Any

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.cache import LRUCache
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from tui_compactor.session.outline import OutlineRows
from tui_compactor.textsafe import cells_head, one_cell_each, sanitize
from tui_compactor.ui.widgets.labels import entry_kind, format_tokens
from tui_compactor.ui.widgets.redraw import set_virtual_size
from tui_compactor.wording import count_of
from tui_compactor.workbench.preview import entry_preview

MAX_VISIBLE_INDENT = 16
"""Indent levels drawn as space; deeper rows show their depth as a number instead."""


def visible_indent(width: int) -> int:
    """The indent levels drawn as space in a row ``width`` cells wide: ``MAX_VISIBLE_INDENT``,
    but at most a third of the row (two cells a level), so that a deep row keeps room for its
    kind and preview in a narrow pane (the tree at 80×24 is ~40 cells wide)."""
    return max(2, min(MAX_VISIBLE_INDENT, width // 6))


KIND_TAGS: dict[str, tuple[str, str]] = {
    "user": ("user", "user"),
    "assistant": ("asst", "assistant"),
    "tool": ("tool", "tool"),
    "bash": ("bash", "tool"),
    "compaction": ("▣ compaction", "compaction"),
    "branch": ("⎇ branch summary", "branch"),
}
"""Entry kind -> (tag drawn in the row, component class suffix)."""

PREVIEW_PENDING = "…"
"""What a row shows while its preview is being read."""

REGION_MARKS: dict[str, str] = {
    "summarize": "S",
    "turn_prefix": "P",
    "keep": "K",
    "metadata": "·",
    "before": " ",
}
"""Plan region -> one-letter mark drawn in the plan column (also colour-coded)."""


class TokenCounts(MutableMapping[int, int]):
    """Entry index -> counted tokens, in one 8-byte slot per entry up to the highest counted
    (-1: not counted yet): the whole active path of a 200,000-deep chain is counted, where a
    dict of boxed ints would take ~16 MB."""

    __slots__ = ("_slots", "_count")

    def __init__(self) -> None:
        self._slots = array("q")
        self._count = 0

    def __getitem__(self, index: int) -> int:
        if type(index) is int and 0 <= index < len(self._slots):
            tokens = self._slots[index]
            if tokens >= 0:
                return tokens
        raise KeyError(index)

    def get(self, index: int, default: Any = None) -> Any:  # type: ignore[override]
        """The count of ``index``, or ``default`` when it is not counted yet."""
        if type(index) is int and 0 <= index < len(self._slots):
            tokens = self._slots[index]
            if tokens >= 0:
                return tokens
        return default

    def __contains__(self, index: object) -> bool:
        return type(index) is int and 0 <= index < len(self._slots) and self._slots[index] >= 0

    def __setitem__(self, index: int, tokens: int) -> None:
        if index < 0 or tokens < 0:
            raise ValueError(f"no slot for entry {index} with {tokens} tokens")
        slots = self._slots
        if index >= len(slots):
            slots.extend(repeat(-1, index + 1 - len(slots)))
        if slots[index] < 0:
            self._count += 1
        slots[index] = tokens

    def __delitem__(self, index: int) -> None:
        if index not in self:
            raise KeyError(index)
        self._slots[index] = -1
        self._count -= 1

    def __iter__(self) -> Iterator[int]:
        return (index for index, tokens in enumerate(self._slots) if tokens >= 0)

    def __len__(self) -> int:
        return self._count

    def clear(self) -> None:
        """Forget every count."""
        self._slots = array("q")
        self._count = 0


class SessionTree(ScrollView, can_focus=True):
    """Virtual list of outline rows with a cursor, marks, token counts and plan regions."""

    COMPONENT_CLASSES = {
        "session-tree--cursor",
        "session-tree--active",
        "session-tree--leaf",
        "session-tree--user",
        "session-tree--assistant",
        "session-tree--tool",
        "session-tree--compaction",
        "session-tree--branch",
        "session-tree--meta",
        "session-tree--label",
        "session-tree--tokens",
        "session-tree--match",
        "session-tree--fold",
        "session-tree--progress",
        "session-tree--summarize",
        "session-tree--turn-prefix",
        "session-tree--keep",
        "session-tree--metadata",
        "session-tree--cut",
    }

    DEFAULT_CSS = """
    SessionTree {
        background: $surface;
        scrollbar-gutter: stable;
        overflow-x: hidden;
    }
    SessionTree > .session-tree--cursor { background: $accent 40%; text-style: bold; }
    SessionTree:focus > .session-tree--cursor { background: $accent 70%; }
    SessionTree > .session-tree--active { color: $success; text-style: bold; }
    SessionTree > .session-tree--leaf { color: $warning; text-style: bold; }
    SessionTree > .session-tree--user { color: $primary; text-style: bold; }
    SessionTree > .session-tree--assistant { color: $secondary; }
    SessionTree > .session-tree--tool { color: $text-muted; }
    SessionTree > .session-tree--compaction { color: $warning; text-style: bold reverse; }
    SessionTree > .session-tree--branch { color: $success; text-style: bold reverse; }
    SessionTree > .session-tree--meta { color: $text-disabled; }
    SessionTree > .session-tree--label { color: $warning; text-style: italic; }
    SessionTree > .session-tree--tokens { color: $text-muted; }
    SessionTree > .session-tree--match { background: $warning 50%; }
    SessionTree > .session-tree--fold { color: $accent; text-style: bold; }
    SessionTree > .session-tree--progress { color: $warning; text-style: bold; }
    SessionTree > .session-tree--summarize { background: $error 35%; color: $text; }
    SessionTree > .session-tree--turn-prefix { background: $warning 35%; color: $text; }
    SessionTree > .session-tree--keep { background: $success 30%; color: $text; }
    SessionTree > .session-tree--metadata { color: $text-disabled; }
    SessionTree > .session-tree--cut { color: $error; text-style: bold; }
    """

    BINDINGS = [
        Binding("up,k", "cursor_up", "Up", show=False, id="tree.up"),
        Binding("down,j", "cursor_down", "Down", show=False, id="tree.down"),
        Binding("pageup", "page_up", "Page up", show=False, id="tree.page_up"),
        Binding("pagedown", "page_down", "Page down", show=False, id="tree.page_down"),
        Binding("home,g", "first", "First", show=False, id="tree.first"),
        Binding("end,G", "last", "Last", show=False, id="tree.last"),
        Binding("space", "toggle_fold", "Fold", id="tree.fold"),
        Binding("enter", "select", "Navigate", id="tree.select"),
    ]

    cursor: reactive[int] = reactive(0, always_update=True, init=False)
    """Position of the cursor in ``rows``."""

    class Highlighted(Message):
        """The cursor moved onto an entry."""

        def __init__(self, tree: SessionTree, entry_index: int) -> None:
            super().__init__()
            self.tree = tree
            self.entry_index = entry_index

        @property
        def control(self) -> SessionTree:
            """The tree that sent the message."""
            return self.tree

    class Selected(Message):
        """Enter (or a double click) on an entry: the user wants to navigate there."""

        def __init__(self, tree: SessionTree, entry_index: int) -> None:
            super().__init__()
            self.tree = tree
            self.entry_index = entry_index

    class PreviewsRead(Message):
        """Previews read in a thread for the rows shown (``epoch``: of the cache they fill)."""

        def __init__(self, epoch: int, previews: dict[int, str]) -> None:
            super().__init__()
            self.epoch = epoch
            self.previews = previews

    class FoldToggled(Message):
        """Space on a branch point (or an arrow on a folded row): fold or unfold it."""

        def __init__(self, tree: SessionTree, entry_index: int) -> None:
            super().__init__()
            self.tree = tree
            self.entry_index = entry_index

    def __init__(self, *, id: str | None = None, rules: str = "pi") -> None:  # noqa: A002 - Textual's name
        super().__init__(id=id)
        self.session: Any = None
        self.rows = OutlineRows()
        self.row_of_entry: Mapping[int, int] = self.rows.positions
        self.token_counts = TokenCounts()
        self.plan_regions: dict[int, str] = {}
        """Entry index -> plan region, while a plan is shown."""
        self.cut_entry: int | None = None
        self.cut_dependencies: dict[int, int] = {}
        """Entry -> dependencies crossing a cut before it, for the plan's valid cut points
        (``engine.deps.cut_sweep``; empty until the sweep of the shown plan is in)."""
        """Entry index of the first kept entry of the shown plan."""
        self.progress: dict[int, str] = {}
        """Entry index -> progress text of a background job targeting it."""
        self.search_matches: set[int] = set()
        self.file_leaf: int | None = None
        self.covered_rows = 0
        """Rows at the bottom a box lies over (``cover_bottom``)."""
        self._generation = 0
        self._strip_cache: LRUCache[tuple[Any, ...], Strip] = LRUCache(1024)
        self._base_styles: dict[tuple[bool, bool], Style] = {}
        self._kind_styles: dict[str, Style] = {}
        self._preview_cache: LRUCache[int, str] = LRUCache(4096)
        self._preview_epoch = 0
        """Bumped whenever the preview cache is cleared: a read started before fills nothing."""
        self._previews_wanted: dict[int, None] = {}
        """Entries drawn with a placeholder whose previews are to be read (in drawing order)."""
        self._previews_reading = False
        self._preview_rules = rules
        """The rules the previews are written under (``use_rules``)."""

    # ----- state ---------------------------------------------------------------------------

    @property
    def cursor_entry(self) -> int | None:
        """Entry index under the cursor, or None when the tree is empty."""
        if not self.rows:
            return None
        return self.rows.index_at(min(self.cursor, len(self.rows) - 1))

    def entry_at(self, position: int) -> int:
        """Entry index of the row at ``position``."""
        return self.rows.index_at(position)

    def set_rows(self, session: Any, rows: OutlineRows, keep_entry: int | None) -> None:
        """Show new rows, keeping the cursor on ``keep_entry`` if it is still visible. The
        previews read stay when the session is the same (a filter, a fold, entries appended):
        an entry's preview is its own record's, whatever rows show it."""
        shown = self.cursor_entry if session is self.session else None
        if session is not self.session:
            self._forget_all_previews()
        self.session = session
        self.rows = rows
        self.row_of_entry = rows.positions  # built with the rows, in a worker
        self.file_leaf = getattr(session, "leaf", None)
        self.invalidate()
        # The tree keeps its own size whatever rows it holds: only its scrollbar follows.
        set_virtual_size(self, self._virtual_size())
        if keep_entry is not None and keep_entry in self.row_of_entry:
            target = self.row_of_entry[keep_entry]
        else:
            target = min(self.cursor, max(len(rows) - 1, 0))
        if target == self.cursor and self.cursor_entry not in (shown, None):
            # The cursor stays on its row, which shows another entry (another file's rows):
            # announced as a move to it would be (``watch_cursor`` sees no change).
            self.post_message(self.Highlighted(self, self.cursor_entry))  # type: ignore[arg-type]
        self.move_cursor(target, center=True)
        # The scrollbar may only appear with the new virtual size: sync its thumb afterwards.
        self.call_after_refresh(self._sync_scrollbar)

    def _virtual_size(self) -> Size:
        """Rows to scroll through: every row, and room for those a box covers at the bottom."""
        return Size(max(self.size.width, 1), len(self.rows) + self.covered_rows)

    def cover_bottom(self, rows: int) -> None:
        """A box lies over the tree's bottom ``rows`` rows (0: none): the tree scrolls that much
        further and its cursor row stays above the box, as if the tree were that much shorter
        (without re-laying out the screen)."""
        self.covered_rows = rows
        set_virtual_size(self, self._virtual_size())
        top = int(self.scroll_y)
        shown = max(self.size.height - rows, 1)
        if self.cursor >= top + shown:
            self.scroll_to(y=self.cursor - shown + 1, animate=False, force=True, immediate=True)

    def _sync_scrollbar(self) -> None:
        """Put the scrollbar thumb where the view actually is."""
        self.vertical_scrollbar.position = self.scroll_y

    def clear_search(self) -> None:
        """Forget the search's matches and redraw without their marks."""
        self.mark_matches(set())

    def mark_matches(self, matches: set[int]) -> None:
        """Mark a search's matching entries (only the rows whose mark changes are redrawn)."""
        self.search_matches = matches
        self.refresh()

    def invalidate(self) -> None:
        """Forget every cached strip and repaint (rows or their text changed; a row's marks
        and count are part of its strip's cache key, so changing those only repaints)."""
        self._generation += 1
        self._strip_cache.clear()
        self.refresh()

    def forget_previews(self, entries: Sequence[int] | None = None) -> None:
        """Drop cached preview text (after live follow appended or replaced records)."""
        if entries is None:
            self._forget_all_previews()
        else:
            self._preview_epoch += 1  # a read on its way may hold an old text of these
            for index in entries:
                self._preview_cache.discard(index)
        self.invalidate()

    def _forget_all_previews(self) -> None:
        self._preview_cache.clear()
        self._preview_epoch += 1
        self._previews_wanted.clear()

    def add_token_counts(self, counts: dict[int, int]) -> None:
        """Merge a batch of per-entry token counts; repaint only the rows on screen that got
        one (a row's count is part of its strip's cache key, so nothing else is redrawn)."""
        self.token_counts.update(counts)
        top = int(self.scroll_y)
        for y, position in enumerate(range(top, min(top + self.size.height, len(self.rows)))):
            if self.rows.index_at(position) in counts:
                self.refresh(Region(0, y, self.size.width, 1))

    def set_plan(self, regions: dict[int, str], cut_entry: int | None) -> None:
        """Colour entries by plan region; empty ``regions`` clears the plan marks."""
        self.plan_regions = regions
        self.cut_entry = cut_entry
        self.cut_dependencies = {}
        self.refresh()

    def set_cut_dependencies(self, counts: dict[int, int]) -> None:
        """Show on each valid cut point's row how many dependencies a cut there crosses."""
        self.cut_dependencies = counts
        self.refresh()

    def set_progress(self, entry_index: int, text: str | None) -> None:
        """Show (or clear, with None) a background job's progress on a row."""
        if text is None:
            self.progress.pop(entry_index, None)
        else:
            self.progress[entry_index] = text
        self.refresh()

    def use_rules(self, rules: str) -> None:
        """Write previews under ``rules`` (whose flag says an extension wrote a compaction):
        the app tells the tree whenever its settings change; when the rules did, the cached
        previews are forgotten and the rows drawn again."""
        if rules != self._preview_rules:
            self._preview_rules = rules
            self.forget_previews()

    def preview_of(self, entry_index: int) -> str:
        """Sanitized one-line preview of an entry, cached."""
        cached = self._preview_cache.get(entry_index)
        if cached is None:
            cached = entry_preview(self.session.entries[entry_index], self._preview_rules)
            self._preview_cache[entry_index] = cached
        return cached

    def preview_if_ready(self, entry_index: int) -> str | None:
        """``preview_of`` when it costs no file read (cached, or the record is in memory);
        else None, and the preview is read in a thread (the row is drawn again with it)."""
        cached = self._preview_cache.get(entry_index)
        if cached is not None:
            return cached
        if getattr(self.session.entries[entry_index], "_source", None) is not None:
            self._want_preview(entry_index)
            return None
        return self.preview_of(entry_index)

    def _want_preview(self, entry_index: int) -> None:
        """Read ``entry_index``'s preview with the others wanted in this frame."""
        if not self._previews_wanted and not self._previews_reading:
            self.call_after_refresh(self._read_wanted_previews)
        self._previews_wanted[entry_index] = None

    def _read_wanted_previews(self) -> None:
        """Start one thread reading the previews wanted so far (one read at a time)."""
        if self._previews_reading or not self._previews_wanted or self.session is None:
            return
        wanted = list(self._previews_wanted)
        self._previews_wanted.clear()
        self._previews_reading = True
        entries = self.session.entries
        epoch = self._preview_epoch
        rules = self._preview_rules

        def read() -> None:
            previews: dict[int, str] = {}
            try:
                for index in wanted:
                    previews[index] = entry_preview(entries[index], rules)
            finally:  # always answered: the next reads wait for this one
                self.post_message(self.PreviewsRead(epoch, previews))

        self.run_worker(read, thread=True, group="tree-previews", exit_on_error=False)

    def on_session_tree_previews_read(self, message: PreviewsRead) -> None:
        """Keep the previews read (unless the cache was cleared since), draw their rows again,
        and read the next ones wanted."""
        self._previews_reading = False
        if message.epoch == self._preview_epoch:
            for index, preview in message.previews.items():
                self._preview_cache[index] = preview
            self.refresh()  # only the rows drawn with a placeholder are drawn again
        self._read_wanted_previews()

    # ----- cursor --------------------------------------------------------------------------

    def move_cursor(self, position: int, *, center: bool = False) -> None:
        """Put the cursor on row ``position`` (clamped) and scroll it into view."""
        if not self.rows:
            self.cursor = 0
            return
        position = max(0, min(position, len(self.rows) - 1))
        self.cursor = position
        if center:
            self.scroll_to_center_row(position)
        else:
            self._keep_cursor_in_view()

    def scroll_to_center_row(self, position: int) -> None:
        """Scroll so that row ``position`` is in the middle of the view."""
        height = max(self.size.height, 1)
        self.scroll_to(y=max(0, position - height // 2), animate=False, force=True, immediate=True)

    def move_to_entry(self, entry_index: int) -> bool:
        """Put the cursor on ``entry_index`` if it has a row; False when it is hidden."""
        position = self.row_of_entry.get(entry_index)
        if position is None:
            return False
        self.move_cursor(position, center=True)
        return True

    def watch_cursor(self, old: int, new: int) -> None:
        """Repaint the two affected rows and announce the new entry."""
        self._refresh_row(old)
        self._refresh_row(new)
        entry_index = self.cursor_entry
        if entry_index is not None:
            self.post_message(self.Highlighted(self, entry_index))

    def _refresh_row(self, position: int) -> None:
        """Repaint one row if it is on screen."""
        y = position - int(self.scroll_y)
        if 0 <= y < self.size.height:
            self.refresh(Region(0, y, self.size.width, 1))

    def action_cursor_up(self) -> None:
        """Move up one row."""
        self.move_cursor(self.cursor - 1)

    def action_cursor_down(self) -> None:
        """Move down one row."""
        self.move_cursor(self.cursor + 1)

    def action_page_up(self) -> None:
        """Move up one screen."""
        self.move_cursor(self.cursor - max(self.size.height - 1, 1))

    def action_page_down(self) -> None:
        """Move down one screen."""
        self.move_cursor(self.cursor + max(self.size.height - 1, 1))

    def action_first(self) -> None:
        """Jump to the first row."""
        self.move_cursor(0)

    def action_last(self) -> None:
        """Jump to the last row."""
        self.move_cursor(len(self.rows) - 1)

    def action_toggle_fold(self) -> None:
        """Fold or unfold the branch point under the cursor (or the one above it)."""
        if not self.rows:
            return
        position = self.rows.foldable_at_or_before(self.cursor)
        if position is not None:
            self.post_message(self.FoldToggled(self, self.rows.index_at(position)))

    def action_select(self) -> None:
        """Ask to navigate to the entry under the cursor."""
        entry_index = self.cursor_entry
        if entry_index is not None:
            self.post_message(self.Selected(self, entry_index))

    def on_click(self, event: events.Click) -> None:
        """Click moves the cursor; a double click selects."""
        position = int(self.scroll_y) + event.y
        if 0 <= position < len(self.rows):
            self.move_cursor(position)
            if event.chain >= 2:
                self.action_select()

    def on_resize(self, event: events.Resize) -> None:
        """Row strips depend on the width: re-measure."""
        set_virtual_size(self, self._virtual_size())
        self.invalidate()

    def _size_updated(
        self, size: Size, virtual_size: Size, container_size: Size, layout: bool = True
    ) -> bool:
        """A layout gave the tree its size: keep the cursor row in view (the loading bar or a
        banner may have taken rows since the cursor was placed), here, before any frame is
        drawn at that size; not every layout that resizes the tree sends it a ``Resize``."""
        resized = super()._size_updated(size, virtual_size, container_size, layout)
        if resized:
            self._keep_cursor_in_view()
        return resized

    def _keep_cursor_in_view(self) -> None:
        """Scroll the least that shows the cursor row, measured on the tree's own size (the
        screen's map of the tree can be a layout behind it)."""
        shown = max(self.container_size.height - self.scrollbar_size_horizontal, 1)
        top = int(self.scroll_y)
        if self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False, force=True, immediate=True)
        elif self.cursor >= top + shown:
            self.scroll_to(y=self.cursor - shown + 1, animate=False, force=True, immediate=True)

    # ----- rendering -----------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        """Draw screen line ``y`` (row ``scroll_y + y``), from the strip cache when possible."""
        position = int(self.scroll_y) + y
        width = self.scrollable_content_region.width
        if position >= len(self.rows) or width <= 0:
            return Strip.blank(width, self._row_base_style(False))
        is_cursor = position == self.cursor
        index = self.rows.index_at(position)
        # Whether the row's preview is in hand is part of the key: a row drawn with the
        # placeholder is drawn again once its preview is read, and only that row.
        drawn = (position, is_cursor, width, self._generation, self.has_focus,
                 self.token_counts.get(index), self._marks(index))  # fmt: skip
        strip = self._strip_cache.get((drawn, index in self._preview_cache))
        if strip is None:
            strip = self._row_strip(position, width, is_cursor)
            # Keyed by what the strip shows: drawing it may have made the preview.
            self._strip_cache[(drawn, index in self._preview_cache)] = strip
        return strip

    def _row_strip(self, position: int, width: int, is_cursor: bool) -> Strip:
        """The row at ``position`` drawn ``width`` cells wide, one segment per run of a style."""
        base = self._row_base_style(is_cursor)
        pieces = self._row_pieces(position, width, wait=False)
        segments = [
            Segment(text, base if style is None else base + style) for text, style in pieces
        ]
        return Strip(segments, width).simplify()

    def _marks(self, index: int) -> tuple[Any, ...]:
        """What a row shows besides its entry: plan region (and whether a plan is shown), cut,
        dependencies crossing a cut there, a job's progress, a search match."""
        return (self.plan_regions.get(index), not self.plan_regions, index == self.cut_entry,
                self.cut_dependencies.get(index), self.progress.get(index),
                index in self.search_matches)  # fmt: skip

    def _row_base_style(self, is_cursor: bool) -> Style:
        """The style under a row (the widget's, plus the cursor's), cached until the CSS or
        the focus changes: resolving ``rich_style`` walks the ancestors (~0.3 ms a row)."""
        key = (is_cursor, self.has_focus)
        style = self._base_styles.get(key)
        if style is None:
            style = self.rich_style
            if is_cursor:
                style = style + self.get_component_rich_style("session-tree--cursor")
            self._base_styles[key] = style
        return style

    def notify_style_update(self) -> None:
        """The CSS changed (theme, focus rules): forget the cached row styles and the strips
        drawn with them (their cache key does not hold the styles)."""
        self._base_styles.clear()
        self._kind_styles.clear()
        self._strip_cache.clear()
        super().notify_style_update()

    def _style(self, name: str) -> Style:
        """A component style by its short name, cached until the CSS changes (resolving one
        walks the CSS rules: a row needs half a dozen)."""
        style = self._kind_styles.get(name)
        if style is None:
            style = self.get_component_rich_style(f"session-tree--{name}", partial=True)
            self._kind_styles[name] = style
        return style

    def row_text(self, position: int, width: int, *, wait: bool = True) -> Text:
        """The row at ``position`` as styled text exactly ``width`` cells wide (without
        ``wait``: a preview not in memory yet is drawn as a placeholder, ``preview_if_ready``)."""
        text = Text(no_wrap=True, end="")
        for piece, style in self._row_pieces(position, width, wait=wait):
            text.append(piece, style)
        return text

    def _row_pieces(self, position: int, width: int, *, wait: bool) -> list[Piece]:
        """The row at ``position`` as (text, style) pieces exactly ``width`` cells wide: the
        left part (gutter, plan mark, indent, kind, label, preview) cut with an ellipsis to
        leave room for the right part (fold count, progress, cut, leaf, tokens).

        Drawn piece by piece, each measured on its own: measuring the row's whole text as one
        string takes Rich's slow path for every row (its gutter and dots are not ASCII).
        """
        row = self.rows[position]
        index = row.index
        entry = self.session.entries[index]
        style = self._style
        left: list[Piece] = [("┃" if row.on_active_path else " ", style("active"))]
        # Plan column.
        region = self.plan_regions.get(index)
        if region is not None:
            mark = REGION_MARKS.get(region, " ")
            left.append((mark, style(region.replace("_", "-")) if region != "before" else None))
        elif self.plan_regions:
            left.append((" ", None))
        # Indent: only branch points indent; very deep rows print their level.
        deepest = visible_indent(width)
        if row.indent > deepest:
            left.append((f"{row.indent:>3}›" + "  " * (deepest - 2), style("meta")))
        else:
            left.append(("  " * row.indent, None))
        if row.folded:
            left.append(("▸ ", style("fold")))
        elif row.is_branch_point:
            left.append(("▾ ", style("fold")))
        else:
            left.append(("· " if row.on_active_path else "  ", style("meta")))
        kind = entry_kind(entry)
        tag, style_name = KIND_TAGS.get(kind, (kind, "meta"))
        left.append((tag, style(style_name)))
        left.append((" ", None))
        label = self.session.label_of(index) if self.session is not None else None
        if label:
            left.append((f"[{sanitize(label, single_line=True, max_len=40)}] ", style("label")))
        preview = self.preview_of(index) if wait else self.preview_if_ready(index)
        preview_style = style("match") if index in self.search_matches else None
        if style_name == "meta" or preview is None:
            preview_style = (
                style("meta") if preview_style is None else preview_style + style("meta")
            )
        # Sanitized once, when it was made (``entry_preview``): nothing to strip per paint.
        left.append((PREVIEW_PENDING if preview is None else preview, preview_style))

        right: list[Piece] = []
        if row.folded and row.hidden_count:
            right.append((f" +{row.hidden_count}", style("fold")))
        progress = self.progress.get(index)
        if progress:
            right.append((f" {progress}", style("progress")))
        crossing = self.cut_dependencies.get(index)
        if self.cut_entry == index:
            deps = "" if crossing is None else f" · {count_of(crossing, 'dep')}"
            right.append((f" ✂ cut{deps}", style("cut")))
        elif crossing is not None:
            right.append((f" ✂{crossing}", style("meta")))
        if index == self.file_leaf:
            right.append((" ◆ leaf", style("leaf")))
        tokens = self.token_counts.get(index)
        if tokens is not None:
            right.append((f" {format_tokens(tokens):>6}", style("tokens")))
        room = max(width - sum(cell_len(text) for text, _ in right), 8)
        return fit_pieces(fit_pieces(left, room) + right, width)


Piece = tuple[str, "Style | None"]
"""A run of a row's text and its style (None: the row's base style alone)."""


def fit_pieces(pieces: list[Piece], width: int) -> list[Piece]:
    """``pieces`` made exactly ``width`` cells wide, as Rich's ``Text.truncate(width,
    overflow="ellipsis", pad=True)`` does to their concatenation: cut to ``width - 1`` cells
    where every cut to a width cuts (``textsafe.cells_head``: never inside a grapheme) plus
    "…" (styled as the first character cut away), or padded with unstyled spaces."""
    pieces = [(text, style) for text, style in pieces if text]
    lengths = [len(text) if one_cell_each(text) else cell_len(text) for text, _ in pieces]
    total = sum(lengths)
    if total <= width:
        return pieces + [(" " * (width - total), None)] if total < width else pieces
    kept: list[Piece] = []
    room = width - 1
    chars = 0
    for (text, style), length in zip(pieces, lengths, strict=True):
        if length <= room:
            kept.append((text, style))
            room -= length
            chars += len(text)
            continue
        # Rich's truncate fills the cell a wide character left with a space, before the "…".
        cut = cells_head(text, room)
        cut += " " * (room - (len(cut) if one_cell_each(cut) else cell_len(cut)))
        if cut:
            kept.append((cut, style))
        chars += len(cut)
        break
    # Rich keeps the spans of the cut text: "…" takes the style of the character at its offset.
    offset = 0
    ellipsis_style: Style | None = None
    for text, style in pieces:
        if offset <= chars < offset + len(text):
            ellipsis_style = style
            break
        offset += len(text)
    kept.append(("…", ellipsis_style))
    return kept
