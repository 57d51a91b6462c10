"""Dialogs over a dimmed main screen, whose tint costs one style sum per style, not per cell.

A modal screen's translucent background is the screen under it, rendered again and tinted
segment by segment (Textual's ``BackgroundScreen``): each segment's colours are converted,
blended with the tint and added to its style, though the main screen's ~800 segments have a
few dozen styles once their mouse offsets are cleared (the tint clears them anyway): 4 ms of
each repaint of a dialog, three of them as the navigation dialog opens. ``TintedModalScreen``
tints each style once (the same rule: Textual's own ``process_segments`` on one segment of that
style) and reuses it: 1.3-2.3 ms. Textual draws that background again whenever the dialog
screen is refreshed as a whole, which its opening does three times (its first layout, the
layout after its first resize, the repaint the screen beneath passes up as it is covered): 5-9
ms each on the 100k session, though the screen beneath did not change. A dialog over screens
that count their changes (``ShownBeneath``: the main screen, other dialogs) keeps the lines it
drew and draws them again only when what they are drawn from changed: the screens beneath, the
size, the colours and filters, the stylesheet. Under every dialog's own widgets
(``compose_dialog``) it puts the footer with the dialog's keys, not the screen's beneath it.
"""

from __future__ import annotations

import functools
from collections.abc import Hashable, Iterable
from typing import ClassVar

from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.segment import Segment
from rich.style import Style
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.color import Color
from textual.geometry import Region
from textual.renderables.background_screen import BackgroundScreen
from textual.screen import ModalScreen, ScreenResultType
from textual.strip import Strip

from tui_compactor.ui.screens.styled import ShownBeneath, StyledOnce
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


class TintedModalScreen(StyledOnce, ShownBeneath, ModalScreen[ScreenResultType]):
    """A modal screen whose translucent background is tinted style by style, with its own
    widgets (``compose_dialog``) above a footer of its keys, styled once before it first shows
    (``StyledOnce``), counting its changes for a dialog above it (``ShownBeneath``)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        # The app's own ``ctrl+c`` does not reach past a modal screen: here too it says which
        # key quits (an input's ``ctrl+c``, copy, comes first in the chain).
        Binding("ctrl+c", "app.help_quit", show=False, system=True),
    ]

    asked_at: float | None = None
    """Set by a dialog whose first key would write (the navigation dialog's ``enter``): on
    Textual's event clock, when it was first drawn (infinity until then). A key other than
    ``escape`` typed before that is not an answer to it: the app drops it
    (``CompactorApp.on_event``)."""

    _drawn_lines: dict[Hashable, list[Strip]] | None = None
    """This screen's own lines (the dimmed screen beneath) by crop and what they are drawn
    from (``render_lines``)."""

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

    def render_lines(self, crop: Region) -> list[Strip]:
        """The dimmed screens beneath (this screen's own lines), drawn again only when what
        they are drawn from changed (see the module's doc)."""
        beneath = self.app._background_screens
        if not all(isinstance(screen, ShownBeneath) for screen in beneath):
            return super().render_lines(crop)  # their changes are not counted: as Textual does
        base_background, background = self.background_colors
        key = (
            crop,
            self.region.size,
            tuple((id(screen), screen.changes) for screen in beneath),  # type: ignore[attr-defined]
            base_background,
            background,
            tuple((id(line_filter), line_filter.enabled) for line_filter in self.app._filters),
            self.app._css_update_count,
        )
        drawn = self._drawn_lines
        if drawn is None:
            drawn = self._drawn_lines = {}
        lines = drawn.get(key)
        if lines is None:
            if len(drawn) >= 8:  # the crops of a few partial updates
                drawn.clear()
            lines = drawn[key] = super().render_lines(crop)
        return lines

    def notify_style_update(self) -> None:
        """Restyled: the lines kept are drawn again."""
        self._drawn_lines = None
        super().notify_style_update()
