"""Dialogs over a dimmed main screen, whose tint costs one style sum per style, not per cell.

A modal screen's translucent background is the screen under it, rendered again and tinted
segment by segment (Textual's ``BackgroundScreen``): each segment's colours are converted,
blended with the tint and added to its style, though the main screen's ~800 segments have a
few dozen styles once their mouse offsets are cleared (the tint clears them anyway): 4 ms of
each repaint of a dialog, three of them as the navigation dialog opens. ``TintedModalScreen``
tints each style once (the same rule: Textual's own ``process_segments`` on one segment of that
style) and reuses it: 1.3-2.3 ms. Under every dialog's own widgets (``compose_dialog``) it
puts the footer with the dialog's keys, not the screen's beneath it.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable

from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.segment import Segment
from rich.style import Style
from textual.app import ComposeResult
from textual.color import Color
from textual.renderables.background_screen import BackgroundScreen
from textual.screen import ModalScreen, ScreenResultType

from tui_compactor.ui.screens.styled import StyledOnce
from tui_compactor.ui.widgets.footer import StateFooter

__all__ = ["TintedModalScreen", "tint_segments"]


@functools.lru_cache(maxsize=4096)
def _tinted(style: Style | None, color: Color) -> Style | None:
    """``style`` as Textual tints it with ``color`` (links and meta cleared)."""
    (segment,) = BackgroundScreen.process_segments([Segment(" ", style)], color)
    return segment.style


def tint_segments(segments: Iterable[Segment], color: Color) -> Iterable[Segment]:
    """``BackgroundScreen.process_segments``, segment for segment the same, each style tinted
    once."""
    for segment in segments:
        text, style, control = segment
        if control:
            yield segment
        else:  # meta (a mouse offset per cell) would make each style new: cleared first
            yield Segment(
                text, _tinted(None if style is None else style.clear_meta_and_links(), color)
            )


class _TintedBackground(BackgroundScreen):
    """The screen under a dialog, tinted (``tint_segments``)."""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        return tint_segments(console.render(self.screen._compositor, options), self.color)


class TintedModalScreen(StyledOnce, ModalScreen[ScreenResultType]):
    """A modal screen whose translucent background is tinted style by style, with its own
    widgets (``compose_dialog``) above a footer of its keys, styled once before it first shows
    (``StyledOnce``)."""

    def compose(self) -> ComposeResult:
        """The dialog, then the footer: the dialog's keys, not the screen's beneath it."""
        yield from self.compose_dialog()
        yield StateFooter()

    def compose_dialog(self) -> ComposeResult:
        """The dialog's own widgets."""
        yield from ()

    def render(self) -> RenderableType:
        rendered = super().render()
        if type(rendered) is BackgroundScreen:
            return _TintedBackground(rendered.screen, rendered.color)
        return rendered
