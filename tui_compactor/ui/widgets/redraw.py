"""Redraw a widget without re-laying out the screen when its size does not change.

A layout request in Textual re-arranges every widget on the screen (and repaints those that
moved): 10-100 ms on the main screen with the plan pane's inputs shown, on the UI thread.
Most updates of a pane's text keep its height (the next plan, the next entry's details), so
they only need a repaint of the widget itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from textual.geometry import Size
from textual.reactive import Reactive
from textual.scroll_view import ScrollView
from textual.visual import VisualType
from textual.widgets import Input, Static

if TYPE_CHECKING:
    from textual.css.styles import RulesMap

__all__ = ["InlineInput", "set_virtual_size", "update_static"]


def update_static(static: Static, content: VisualType, *, shrink: bool = True) -> None:
    """Show ``content`` in ``static``; lay the screen out again only if its height changes.

    The height is measured at the widget's current content width, the way Textual's layout
    measures it; a widget not laid out yet (no width) takes the full layout. With ``shrink``
    False, shorter content keeps the widget's height (blank rows below it) until the next
    layout: for a pane whose height flickers by a line or two from one update to the next.
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
