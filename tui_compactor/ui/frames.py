"""Run code once a widget's new content has reached the terminal.

Textual draws a change on a later frame: ``refresh()`` marks the widget, the widget tells its
screen at its next idle, the screen renders its dirty widgets (calling their ``render``) and
writes the frame, then calls ``App.post_display_hook`` ("called immediately after a display is
done"). ``call_after_refresh`` runs once the screen has nothing dirty, which can come before
the widget told the screen, so a callback could run (and a worker it releases take the GIL)
before the frame was written. Here a callback waits for the first frame written after its
widget rendered again: the widget counts its renders (``Drawn.draws``), the app's
``post_display_hook`` calls ``FrameWaits.frame_written``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol


class Drawn(Protocol):
    """A widget that counts its renders."""

    draws: int


class FrameWaits:
    """Callbacks waiting for a widget's next render to be written to the terminal."""

    def __init__(self) -> None:
        self._waiting: list[tuple[Drawn, int, Callable[[], None]]] = []

    def after_drawn(self, widget: Drawn, callback: Callable[[], None]) -> None:
        """Run ``callback`` (via ``frame_written``) once a frame drawn after ``widget`` renders
        again is written: call it before changing the widget, in the same handler."""
        self._waiting.append((widget, widget.draws, callback))

    def frame_written(self) -> list[Callable[[], None]]:
        """A frame was written: the callbacks whose widget has rendered since they waited."""
        if not self._waiting:
            return []
        ready = [callback for widget, draws, callback in self._waiting if widget.draws > draws]
        if ready:
            self._waiting = [item for item in self._waiting if item[0].draws <= item[1]]
        return ready
