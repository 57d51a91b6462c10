"""The terminal driver of the app: Textual's Linux driver, whose frames can be waited for
until they are on the terminal (``WrittenDriver.wait_written``).

Imported only where Textual chose its Linux driver (``CompactorApp.get_driver_class``): that
driver needs ``termios``.
"""

from __future__ import annotations

import threading
from typing import Any

from textual.app import App
from textual.drivers.linux_driver import LinuxDriver

__all__ = ["WrittenOutput", "WrittenDriver"]


class WrittenOutput:
    """The terminal output a Textual driver writes through, counting what reached it.

    Textual's Linux driver hands each string of a frame to a writer thread, which writes it
    to the terminal; ``App.post_display_hook`` comes once the strings are queued, not once
    they are written. Whatever runs next and holds the GIL (the UI thread's next frames, a
    worker such as a big file's index) then delays the writer thread: it needs the GIL to
    take each string, encode it and return from each write. ``wait_flushed`` lets the UI
    thread wait (not holding the GIL) until what it queued is on the terminal."""

    def __init__(self, file: Any) -> None:
        self._file = file
        self._done = threading.Condition()
        self._written = 0
        """Strings whose ``write`` returned."""
        self._flushed = 0
        """Strings written before the last ``flush`` returned: on the terminal."""

    def write(self, text: str) -> int:
        try:
            return int(self._file.write(text))
        finally:
            with self._done:
                self._written += 1

    def flush(self) -> None:
        try:
            self._file.flush()
        finally:
            with self._done:
                self._flushed = self._written
                self._done.notify_all()

    def wait_flushed(self, count: int, timeout: float) -> bool:
        """Wait until ``count`` strings were written and flushed, at most ``timeout`` seconds;
        whether they were."""
        with self._done:
            return self._done.wait_for(lambda: self._flushed >= count, timeout)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._file, name)


class WrittenDriver(LinuxDriver):
    """Textual's Linux driver, whose writes can be waited for (``wait_written``)."""

    def __init__(
        self,
        app: App[Any],
        *,
        debug: bool = False,
        mouse: bool = True,
        size: tuple[int, int] | None = None,
    ) -> None:
        super().__init__(app, debug=debug, mouse=mouse, size=size)
        self.output = WrittenOutput(self._file)
        # What the writer thread writes to (it is made when the application mode starts).
        self._file = self.output  # type: ignore[assignment]
        self.queued = 0
        """Strings handed to the writer thread so far (by the UI thread)."""

    def write(self, data: str) -> None:
        super().write(data)
        self.queued += 1

    def wait_written(self, timeout: float) -> bool:
        """Wait until everything written so far is on the terminal, at most ``timeout``
        seconds (a terminal that reads slowly keeps a full pipe); whether it is."""
        return self.output.wait_flushed(self.queued, timeout)
