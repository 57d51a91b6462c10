"""Screens whose widgets are styled once before they first show, and that count the changes
of what they show for a dialog drawn above them.

Textual styles each widget as it is mounted, under the whole stylesheet. Then, for a screen
pushed as it is: its first ``Resize`` adds its size classes (``-wide``, ``-short``...: the
breakpoints), which restyles every widget of it a second time, and its first ``ScreenResume``
restyles them all a third time and asks for another layout, though nothing changed since they
were mounted. On the navigation dialog those two passes were a third of its first frame's CPU
(~25 ms of 60-70 ms on the 100k session). ``StyledOnce`` sets the size classes when the screen
is made, so the mount styles with them, and skips the restyle of its first showing; every later
showing (after a dialog above it closed) restyles as Textual does.

``ShownBeneath`` counts a screen's changes (a widget's new content, a layout, a scroll: what
reaches the screen as messages), so a dialog drawn above it (``ui.screens.tinted``) knows when
its dimmed picture of the screen is out of date; a repaint of the screen alone (Textual asks
for one as a dialog is pushed over it) changes nothing.
"""

from __future__ import annotations

from typing import Any

from textual import events, messages
from textual._context import NoActiveAppError
from textual.app import App
from textual.dom import DOMNode
from textual.geometry import Size
from textual.screen import Screen

__all__ = ["StyledOnce", "ShownBeneath", "size_classes", "add_default_css"]


def size_classes(screen: Screen[Any], width: int, height: int) -> list[str]:
    """The size classes Textual gives ``screen`` at ``width`` x ``height`` (its breakpoints, or
    the app's)."""
    app = screen.app
    horizontal = screen.HORIZONTAL_BREAKPOINTS
    vertical = screen.VERTICAL_BREAKPOINTS
    if horizontal is None:
        horizontal = app.HORIZONTAL_BREAKPOINTS
    if vertical is None:
        vertical = app.VERTICAL_BREAKPOINTS
    return [
        *screen._get_breakpoint_classes(width, horizontal or []),
        *screen._get_breakpoint_classes(height, vertical or []),
    ]


def add_default_css(app: App[Any], widget_class: type[DOMNode]) -> bool:
    """Add the ``DEFAULT_CSS`` of ``widget_class`` (and of its bases) to ``app``'s stylesheet and
    parse it now, as Textual does when the first widget of that class is mounted; True if any of
    it was new. A dialog's first opening mounts its widgets in several steps, each of which
    parses the CSS of the classes new to the app (20-35 ms of the UI thread's CPU for the
    navigation dialog); added beforehand, a class at a time while the app is idle, those steps
    find it parsed."""
    stylesheet = app.stylesheet
    before = len(stylesheet.source)
    # ``_get_default_css`` reads only the class (``_node_bases``): an instance not initialised
    # is enough, and nothing of a widget's ``__init__`` runs.
    for read_from, css, tie_breaker, scope in widget_class._get_default_css(
        widget_class.__new__(widget_class)
    ):
        stylesheet.add_source(
            css, read_from=read_from, is_default_css=True, tie_breaker=tie_breaker, scope=scope
        )
    stylesheet.rules_map  # noqa: B018 - parses what was added, as a mount would
    return len(stylesheet.source) > before


class StyledOnce:
    """Mixin for a ``Screen`` (listed before it): the size classes of the app's size are set
    when the screen is made, and its first showing does not restyle its widgets again."""

    _shown_before = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        screen: Screen[Any] = self  # type: ignore[assignment]
        try:
            width, height = screen.app.size
        except NoActiveAppError:  # made outside a running app: the first resize sets them
            return
        screen.add_class(*size_classes(screen, width, height), update=False)

    def _on_screen_resume(self, event: events.ScreenResume) -> None:
        if not self._shown_before:
            self._shown_before = True
            event.refresh_styles = False  # read by Screen's own handler, which runs next


class ShownBeneath:
    """Mixin for a ``Screen`` (listed before it) that dialogs cover: ``changes`` counts the
    changes of what it shows."""

    changes = 0
    """Widgets updated, layouts and scrolls so far (only ever grows)."""

    def _screen_resized(self, size: Size) -> None:
        """Laid out again at a resize, unless it is beneath another screen and already laid out
        at that size with no layout pending: a dialog pushed above it sends its first
        ``Resize`` (at the size nothing changed) down to every screen beneath, whose full layout
        (5-10 ms of the main screen) refreshes their scrollbars, so the dimmed picture of them
        was drawn again as the dialog opened (10-15 ms more)."""
        screen: Screen[Any] = self  # type: ignore[assignment]
        if (
            screen.app.screen is not screen
            and screen._compositor.size == size
            and not screen._layout_required
        ):
            return
        super()._screen_resized(size)  # type: ignore[misc]

    async def _on_update(self, message: messages.Update) -> None:
        self.changes += 1  # Screen's own handler, which runs next, redraws the widget

    async def _on_layout(self, message: messages.Layout) -> None:
        self.changes += 1

    async def _on_update_scroll(self, message: messages.UpdateScroll) -> None:
        self.changes += 1
