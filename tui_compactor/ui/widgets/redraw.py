"""Redraw a widget without re-laying out the screen when its size does not change.

A layout request in Textual re-arranges every widget on the screen (and repaints those that
moved): 10-100 ms on the main screen with the plan pane's inputs shown, on the UI thread.
Most updates of a pane's text keep its height (the next plan, the next entry's details), so
they only need a repaint of the widget itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from textual.visual import VisualType
from textual.widgets import Static

if TYPE_CHECKING:
    from textual.css.styles import RulesMap

__all__ = ["update_static"]


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
