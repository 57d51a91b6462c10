"""The preview's tabs: one widget draws the tab bar, and each tab's pane is made when first shown.

Textual's ``TabbedContent`` costs 19 widgets for six tabs (its tab bar holds a widget per tab, an
underline and three containers; a pane per tab and a switcher), each styled and laid out before
the first screen. ``TabStrip`` draws the same bar (labels, the active one highlighted, the
underline under it; hover, focus and ``:ansi`` looks from the same theme variables) as a single
widget, and ``TabbedPanes`` holds only the panes made so far: at start-up the Details pane.
The app's content for a pane is mounted into it by ``ui.panes`` (``add_pane``).
"""

from __future__ import annotations

from typing import ClassVar

from rich.cells import cell_len
from rich.console import RenderableType
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.reactive import reactive
from textual.widget import AwaitMount, Widget

from tui_compactor.ui.widgets.redraw import LaidOutOnce

PAD = 1
"""Blank cells either side of a tab's title (the click target includes them)."""

MORE_LEFT = "‹"
MORE_RIGHT = "›"
"""Drawn at the strip's edge where titles are hidden on that side (a click there shows the
nearest hidden one)."""

BAR = "━"
HALF_RIGHT = "╸"
HALF_LEFT = "╺"


class TabStrip(Widget, can_focus=True):
    """A row of tab titles over an underline that marks the active one.

    ``left``/``right`` (when focused) and clicks (on a title or the underline under it) pick a
    tab; the strip then asks its ``TabbedPanes`` to show it.
    """

    DEFAULT_CSS = """
    TabStrip {
        width: 1fr;
        height: 2;
        dock: top;
        pointer: pointer;
        & > .tab-strip--tab { color: $foreground 50%; }
        & > .tab-strip--hover { color: $foreground; }
        & > .tab-strip--active { color: $foreground; }
        & > .tab-strip--bar {
            color: $block-cursor-background;
            background: $foreground 10%;
        }
        &:focus {
            & > .tab-strip--bar { background: $foreground 30%; }
            & > .tab-strip--active {
                text-style: $block-cursor-text-style;
                color: $block-cursor-foreground;
                background: $block-cursor-background;
            }
        }
        &:ansi {
            & > .tab-strip--tab { text-style: dim; }
            & > .tab-strip--active { text-style: not dim bold; }
            & > .tab-strip--bar { background: $border-blurred; }
        }
    }
    """

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "tab-strip--tab",
        "tab-strip--hover",
        "tab-strip--active",
        "tab-strip--bar",
    }

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("left", "previous_tab", "Previous tab", show=False),
        Binding("right", "next_tab", "Next tab", show=False),
    ]

    ALLOW_SELECT = False

    active: reactive[str] = reactive("", init=False)
    """The id of the active tab (its pane's id)."""
    hovered: reactive[int | None] = reactive(None, init=False)
    """The index of the tab under the mouse."""

    class Picked(Message):
        """The user picked a tab (key or click)."""

        def __init__(self, strip: TabStrip, tab_id: str) -> None:
            self.strip = strip
            self.tab_id = tab_id
            super().__init__()

    def __init__(self, tabs: list[tuple[str, str]], active: str) -> None:
        """``tabs``: (title, id) in order; ``active``: the id shown first."""
        super().__init__()
        self.tabs = tabs
        self.set_reactive(TabStrip.active, active)

    # ----- geometry ----------------------------------------------------------------------

    def spans(self) -> list[tuple[int, int]]:
        """Each tab's cells on the row, padding included: (start, end), end exclusive."""
        out = []
        x = 0
        for title, _tab_id in self.tabs:
            width = cell_len(title) + 2 * PAD
            out.append((x, x + width))
            x += width
        return out

    def scroll_x_for(self, width: int) -> int:
        """How far the row is scrolled left so the active tab shows when the titles do not all
        fit: not at all while the active title fits from the left edge (the titles stay where
        they are whichever of those is active), else to the first tab from which it fits; the
        row always starts at a tab, so no title is cut on the left."""
        return self.drawn_tabs(width)[0]

    def drawn_tabs(self, width: int) -> tuple[int, list[int]]:
        """(shift, the tabs drawn) on a strip ``width`` cells wide: every title drawn is whole
        (Textual's bar, scrolled to its active tab, cut the first title: ``etails``), the
        active one always, and where titles are hidden the edge cell is left for a marker
        (``MORE_LEFT`` / ``MORE_RIGHT``: a tab's blank padding when the row is scrolled)."""
        spans = self.spans()
        if not spans or spans[-1][1] <= width:
            return 0, list(range(len(spans)))
        index = self.index_of(self.active)
        shift = 0
        if index is not None:
            room = width - (1 if index < len(spans) - 1 else 0)  # the right marker's cell
            shift = next(
                (
                    start
                    for start, _end in spans[: index + 1]
                    if spans[index][1] - PAD <= start + room
                ),
                spans[index][0],  # a strip narrower than the title: it starts there, cut
            )
        shown = [
            number
            for number, (start, end) in enumerate(spans)
            if start >= shift and end - PAD <= shift + width or number == index
        ]
        if (
            shown
            and shown[-1] != index
            and shown[-1] < len(spans) - 1
            and spans[shown[-1]][1] - PAD >= shift + width
        ):
            shown.pop()  # its last cell is the marker's (the active one keeps it: ``room``)
        return shift, shown

    def index_of(self, tab_id: str) -> int | None:
        """The position of ``tab_id`` among the tabs, or None."""
        for index, (_title, each) in enumerate(self.tabs):
            if each == tab_id:
                return index
        return None

    def column_of(self, tab_id: str) -> int | None:
        """The column of the first cell of ``tab_id``'s title as drawn now, or None (no such
        tab, or not drawn: hidden on a narrow strip)."""
        index = self.index_of(tab_id)
        shift, shown = self.drawn_tabs(self.size.width)
        if index is None or index not in shown:
            return None
        return self.spans()[index][0] + PAD - shift

    def tab_at(self, x: int) -> int | None:
        """The tab drawn at column ``x`` of the strip (a marker: the nearest tab it stands
        for), or None."""
        width = self.size.width
        shift, shown = self.drawn_tabs(width)
        if shown and x == 0 and shown[0] > 0:
            return shown[0] - 1
        if shown and x == width - 1 and shown[-1] < len(self.tabs) - 1:
            return shown[-1] + 1
        spans = self.spans()
        for index in shown:
            start, end = spans[index]
            if start <= x + shift < end:
                return index
        return None

    # ----- drawing -----------------------------------------------------------------------

    def render(self) -> RenderableType:
        """The titles on the first row, the underline on the second."""
        width = self.size.width
        shift, shown = self.drawn_tabs(width)
        active = self.index_of(self.active)
        style_of = self.get_component_rich_style
        plain, hover, current = (
            style_of("tab-strip--tab"),
            style_of("tab-strip--hover"),
            style_of("tab-strip--active"),
        )
        blank = Style.from_color(bgcolor=plain.bgcolor)
        runs: list[tuple[str, Style]] = []
        x = shift
        spans = self.spans()
        for index in shown:
            title = self.tabs[index][0]
            start, end = spans[index]
            style = current if index == active else hover if index == self.hovered else plain
            padding = Style.from_color(bgcolor=style.bgcolor)  # as a widget's padding
            runs += [(" " * (start - x), blank)]
            runs += [(" " * PAD, padding), (title, style), (" " * PAD, padding)]
            x = end
        runs.append((" " * width, blank))  # the rest
        row = Text(end="", no_wrap=True, overflow="crop")
        for text, style in _merged(runs):
            row.append(text, style)
        row = row[:width]
        if shown and shown[0] > 0:
            row = Text.assemble((MORE_LEFT, plain), row[1:], end="", no_wrap=True)
        if shown and shown[-1] < len(self.tabs) - 1:
            row = Text.assemble(row[: width - 1], (MORE_RIGHT, plain), end="", no_wrap=True)
        bar_style = style_of("tab-strip--bar")
        bar = _underline(
            width,
            None if active is None else self._label_span(active, shift),
            Style.from_color(bar_style.color),
            Style.from_color(bar_style.bgcolor),
        )
        return Text("\n", end="").join([row, bar])

    def _label_span(self, index: int, shift: int) -> tuple[int, int]:
        start, end = self.spans()[index]
        return start + PAD - shift, end - PAD - shift

    def watch_active(self) -> None:
        self.refresh()

    def watch_hovered(self) -> None:
        self.refresh()

    # ----- input -------------------------------------------------------------------------

    def on_mouse_move(self, event: events.MouseMove) -> None:
        self.hovered = self.tab_at(event.x) if event.y == 0 else None

    def on_leave(self, _event: events.Leave) -> None:
        self.hovered = None

    def on_click(self, event: events.Click) -> None:
        """A click on a title, or on the underline under it, picks that tab."""
        event.stop()
        self.focus()
        index = self.tab_at(event.x)
        if index is not None:
            self.post_message(self.Picked(self, self.tabs[index][1]))

    def action_next_tab(self) -> None:
        """The next tab (after the last: the first)."""
        self._step(1)

    def action_previous_tab(self) -> None:
        """The previous tab (before the first: the last)."""
        self._step(-1)

    def _step(self, step: int) -> None:
        index = self.index_of(self.active)
        index = 0 if index is None else (index + step) % len(self.tabs)
        self.post_message(self.Picked(self, self.tabs[index][1]))


def _merged(runs: list[tuple[str, Style]]) -> list[tuple[str, Style]]:
    """Adjacent runs of the same style as one (the terminal gets one segment, as Textual's own
    tab bar draws the padding between two tabs)."""
    out: list[tuple[str, Style]] = []
    for text, style in runs:
        if out and out[-1][1] == style:
            out[-1] = (out[-1][0] + text, style)
        else:
            out.append((text, style))
    return out


def _underline(
    width: int, span: tuple[int, int] | None, highlight: Style, background: Style
) -> Text:
    """A bar ``width`` cells wide, heavy over ``span`` (start, end exclusive) with a half bar
    either side of it, light elsewhere (as Textual's tab underline draws it at rest)."""
    bar = Text(end="", no_wrap=True, overflow="crop")
    if span is None:
        bar.append(BAR * width, background)
        return bar
    start, end = max(span[0], 0), min(span[1], width)
    if start >= end:
        bar.append(BAR * width, background)
        return bar
    if start > 0:
        bar.append(BAR * (start - 1) + HALF_RIGHT, background)
    bar.append(BAR * (end - start), highlight)
    if end < width:
        bar.append(HALF_LEFT + BAR * (width - end - 1), background)
    return bar


class TabPanel(LaidOutOnce, Widget):
    """One tab's pane (the app mounts its content)."""

    DEFAULT_CSS = """
    TabPanel { height: auto; }
    """


class TabbedPanes(LaidOutOnce, Widget):
    """A tab strip over the active tab's pane; panes are added when first needed.

    ``active`` is the shown tab's id; changing it (key, click, code) shows that pane (once it
    is added) and posts ``TabActivated``. Focus moving into a pane makes its tab active.
    """

    DEFAULT_CSS = """
    TabbedPanes { height: auto; }
    """

    active: reactive[str] = reactive("", init=False)
    """The id of the active tab (its pane's id)."""

    class TabActivated(Message):
        """A tab became active (by the user or by code); ``pane`` is its pane when it exists
        (a pane not added yet is added by the handler that builds it)."""

        def __init__(self, tabbed: TabbedPanes, tab_id: str) -> None:
            self.tabbed = tabbed
            self.tab_id = tab_id
            super().__init__()

        @property
        def control(self) -> TabbedPanes:
            return self.tabbed

    def __init__(
        self,
        tabs: list[tuple[str, str]],
        *panes: TabPanel,
        initial: str,
        id: str | None = None,  # noqa: A002 - Textual's parameter name
    ) -> None:
        """``tabs``: (title, id) of every tab in order; ``panes``: those made now (each with its
        tab's id); ``initial``: the tab shown first."""
        super().__init__(*panes, id=id)
        self.tabs = tabs
        self.set_reactive(TabbedPanes.active, initial)
        for pane in panes:
            pane.display = pane.id == initial

    def compose(self):  # type: ignore[no-untyped-def]
        """The strip (docked on top; the panes are the widget's children)."""
        yield TabStrip(self.tabs, self.active)

    @property
    def strip(self) -> TabStrip:
        """The tab bar."""
        return self.query_one(TabStrip)

    def add_pane(self, tab_id: str, *content: Widget) -> AwaitMount:
        """Add the pane of ``tab_id`` holding ``content`` (shown if its tab is active)."""
        pane = TabPanel(*content, id=tab_id)
        pane.display = tab_id == self.active
        return self.mount(pane)

    def watch_active(self, old: str, new: str) -> None:
        """Show the active pane, mark its tab and say so. The focus in the pane being hidden
        moves to the tab bar first: left to Textual, it went to a widget of the hidden pane
        (the focus chain is computed before the pane is hidden), whose focus showed that tab
        again (``1`` pressed in the plan form stayed on Plan)."""
        focused = self.screen.focused
        if focused is not None and any(
            isinstance(node, TabPanel) and node.parent is self and node.id != new
            for node in focused.ancestors
        ):
            self.screen.set_focus(self.strip)
        with self.app.batch_update():
            for child in self.children:
                if isinstance(child, TabPanel):
                    child.display = child.id == new
            self.strip.active = new
        self.post_message(self.TabActivated(self, new))

    def on_tab_strip_picked(self, message: TabStrip.Picked) -> None:
        message.stop()
        self.active = message.tab_id

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        """Focus moved into a pane (a key, a click, code): its tab becomes the active one."""
        for node in event.widget.ancestors_with_self:
            if node is self:
                return
            if isinstance(node, TabPanel) and node.parent is self:
                if node.id and node.id != self.active:
                    self.active = node.id
                return
