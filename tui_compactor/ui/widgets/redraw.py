"""Redraw a widget without re-laying out the screen when its size does not change.

A layout request in Textual re-arranges every widget on the screen (and repaints those that
moved): 10-100 ms on the main screen with the plan pane's inputs shown, on the UI thread.
Most updates of a pane's text keep its height (the next plan, the next entry's details), so
they only need a repaint of the widget itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast
from weakref import WeakKeyDictionary

from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.segment import Segment
from textual import events
from textual.geometry import Region, Size
from textual.reactive import Reactive
from textual.scroll_view import ScrollView
from textual.visual import VisualType
from textual.widgets import Input, Static

if TYPE_CHECKING:
    from textual.css.styles import RulesMap
    from textual.scrollbar import ScrollBar
    from textual.strip import Strip
    from textual.timer import Timer

__all__ = [
    "InlineInput",
    "LaidOutOnce",
    "PaneText",
    "RenderedOnce",
    "keep_scrollbar_lines",
    "set_virtual_size",
    "update_static",
]


def update_static(static: Static, content: VisualType, *, shrink: bool = True) -> None:
    """Show ``content`` in ``static``; lay the screen out again only if its height changes.

    The height is measured at the widget's current content width, the way Textual's layout
    measures it; a widget not laid out yet (no width) takes the full layout. With ``shrink``
    False, shorter content keeps the widget's height (blank rows below it) for a moment: for a
    pane whose height flickers from one update to the next (the cut moved again and again), or
    that had rows reserved for content yet to come. Once its updates stop for ``SHRINK_AFTER``
    seconds, such a widget is laid out at its content's height: no gap stays below it, and what
    follows it is not left pushed out of view.
    """
    static.update(content, layout=False)
    width = static.content_size.width
    if width <= 0:
        static.refresh(layout=True)
        return
    rules = cast("RulesMap", static.styles)  # what Textual's own layout passes
    height = static.visual.get_height(rules, width)
    shown = static.content_size.height
    if height > shown or (height < shown and shrink):
        static.refresh(layout=True)
    elif height < shown:
        _shrink_later(static)


SHRINK_AFTER = 0.4
"""Seconds without an update after which a widget kept taller than its content is laid out at
its content's height."""

_shrink_timers: WeakKeyDictionary[Static, Timer] = WeakKeyDictionary()
"""The pending shrink of each widget kept taller than its content."""


def _shrink_later(static: Static) -> None:
    """Lay ``static`` out again ``SHRINK_AFTER`` seconds after its last update (each update
    restarts the wait)."""
    timer = _shrink_timers.get(static)
    if timer is not None:
        timer.reset()
        return

    def shrink() -> None:
        _shrink_timers.pop(static, None)
        static.refresh(layout=True)

    _shrink_timers[static] = static.set_timer(SHRINK_AFTER, shrink)


def set_virtual_size(view: ScrollView, size: Size) -> None:
    """Set the scrollable size of ``view`` without re-laying out the screen.

    ``virtual_size`` is a layout reactive: assigning it re-arranges every widget. A scroll
    view drawn with ``render_line`` keeps its own size whatever it holds, so only its
    scrollbars need to follow (what Textual itself does for size changes that need no layout).
    """
    if size == view.virtual_size:
        return
    if not view.is_mounted:
        view.virtual_size = size
        return
    view.set_reactive(ScrollView.virtual_size, size)
    view._scroll_update(size)


class LaidOutOnce:
    """Mixin of a widget whose size given by a layout does not ask for another layout.

    Each layout hands every widget its size and its scrollable (virtual) size; Textual's
    ``virtual_size`` is a layout reactive, so a widget whose content grew or shrank in that
    layout (a pane's text, a container around it) asks for a second layout of the whole screen
    right after it, which finds every widget where the first one put it. Here the new size is
    kept without that request; a scroll container still shows or hides its scrollbars
    (``_scroll_update``, which lays the screen out again when a scrollbar comes or goes, since
    it takes a column). For widgets laid out by Textual (containers, ``Static``), not for the
    scroll views that set their own virtual size (``set_virtual_size``).
    """

    virtual_size: Reactive[Size] = Reactive(Size(0, 0))


class PaneText(LaidOutOnce, Static):
    """A ``Static`` of a pane (a plan's text, its sweep, a title) laid out once per change
    (``LaidOutOnce``; updated with ``update_static``)."""


class InlineInput(Input):
    """An ``Input`` whose typing never lays the screen out again.

    Textual's ``Input`` sets its ``virtual_size`` (a layout reactive) to its text's width at
    every change of its value: one layout of the whole screen per key typed. Its box keeps its
    size whatever it holds, so here only its horizontal scroll range follows the text (as
    ``set_virtual_size`` does for the scroll views).
    """

    virtual_size: Reactive[Size] = Reactive(Size(0, 0))

    def watch_virtual_size(self, size: Size) -> None:
        """Update the scroll range (the cursor is kept in view against it)."""
        if self.is_mounted:
            self._scroll_update(size)

    async def _on_key(self, event: events.Key) -> None:
        """Type a printable key, else run its binding (backspace, arrows, tab...) now, in turn.

        Textual types a printable key in the input as it arrives but runs an input's bindings
        only once the key has bubbled back up to the app, through each container's queue: of a
        burst (six backspaces then ``999999`` in one read of the terminal) the figures were
        typed first and the backspaces then erased them, or ran after a ``tab`` that followed
        them, on the next field. Here each key is done before the next one typed."""
        await super()._on_key(event)
        if event.is_printable:
            return
        if await self.app._check_bindings(event.key):
            event.stop()
            event.prevent_default()


class RenderedOnce:
    """A Rich renderable laid out by width only (``Text``, ``Table``, a ``Group`` of them),
    rendered once per width and replayed from then on.

    Textual renders a ``Static``'s Rich content twice per update (its height is measured by
    rendering it, then it is painted) and again whenever the widget is resized or repainted
    (its height given back, a dimmed copy while the next one is made): a table of a dozen rows
    is 2-5 ms of the UI thread each time. The lines are kept for the last widths asked.
    """

    KEPT_WIDTHS = 2

    def __init__(self, renderable: RenderableType) -> None:
        self.renderable = renderable
        self._lines: list[tuple[tuple[object, ...], list[list[Segment]]]] = []

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        """The renderable's lines at ``options``' width (each followed by a new line)."""
        key = (
            options.max_width,
            options.min_width,
            options.justify,
            options.overflow,
            options.no_wrap,
            options.highlight,
            options.markup,
            id(console),
        )
        lines = next((kept for width, kept in self._lines if width == key), None)
        if lines is None:
            lines = console.render_lines(self.renderable, options.reset_height(), pad=False)
            self._lines = [(key, lines), *self._lines[: self.KEPT_WIDTHS - 1]]
        new_line = Segment.line()
        for line in lines:
            yield from line
            yield new_line


def keep_scrollbar_lines() -> None:
    """Make every scrollbar redraw only when what it shows changes (idempotent).

    A scrollbar is refreshed whenever its widget is laid out, scrolled or restyled (each
    layout of the screen, a focus change), and Textual then draws it again line by line
    through its styles: 1-4 ms of the UI thread for the tree's 34 rows, paid in most frames
    of the plan pane, the Context tab and a moved cut, for the same lines. Its lines depend
    only on its bar (size, position, thumb, colours: what ``ScrollBar.render`` returns), its
    size and what every widget's lines go through (background, opacity, tint, the app's
    filters and ANSI theme): with those unchanged, the lines drawn last are returned as they are.
    """
    from textual.scrollbar import ScrollBar

    render_lines = ScrollBar.render_lines
    if getattr(render_lines, "_keeps_lines", False):
        return

    def render_kept_lines(self: ScrollBar, crop: Region) -> list[Strip]:
        if self.parent is None:
            # Its widget was just removed (a frame already composed may still draw it):
            # Textual's own drawing handles that; ``render`` needs the widget's styles.
            return render_lines(self, crop)
        bar = self.render()
        app = self.app
        key = (
            crop,
            self.region.size,
            type(bar),
            tuple(getattr(bar, name, None) for name in _BAR_FIELDS),
            self.background_colors,
            self.opacity,
            self.styles.tint,
            self.styles.text_opacity,
            id(app.ansi_theme),
            app.native_ansi_color,
            tuple(map(id, self.get_line_filters())),
        )
        kept = _kept_lines.get(self)
        if kept is not None and kept[0] == key:
            return list(kept[1])
        lines = render_lines(self, crop)
        _kept_lines[self] = (key, list(lines))
        return lines

    render_kept_lines._keeps_lines = True  # type: ignore[attr-defined]
    render_kept_lines.__doc__ = render_lines.__doc__
    ScrollBar.render_lines = render_kept_lines  # type: ignore[method-assign,assignment]


_BAR_FIELDS = ("vertical", "virtual_size", "window_size", "position", "thickness", "style")
"""What a ``ScrollBarRender`` draws from (besides the size it is given)."""

_kept_lines: WeakKeyDictionary[ScrollBar, tuple[tuple[object, ...], list[Strip]]] = (
    WeakKeyDictionary()
)
"""Each scrollbar's last lines and what they were drawn from."""
