"""The app's terminal driver: a frame handed to Textual's writer thread can be waited for until
it is on the terminal, and what the first screen releases (a big file's index, token counting)
starts only then, so that it does not hold the GIL the writer thread needs to write it."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest
from textual.drivers._writer_thread import WriterThread
from textual.drivers.headless_driver import HeadlessDriver
from textual.drivers.linux_driver import LinuxDriver

from tests.ui.app_helpers import SIZE, TREE_COMPACTED, make_app
from tui_compactor.ui.app import FRAME_WRITE_WAIT, CompactorApp
from tui_compactor.ui.driver import WrittenDriver, WrittenOutput


def test_a_write_is_waited_for_until_the_reader_has_taken_it(tmp_path: Path) -> None:
    """Through Textual's own writer thread into a real pipe: a frame bigger than the pipe's
    buffer is not "written" while nobody reads (the writer blocks in the kernel), and is once
    the other end has read it, every byte in order."""
    read_fd, write_fd = os.pipe()
    output = WrittenOutput(os.fdopen(write_fd, "w", encoding="utf-8", newline=""))
    writer = WriterThread(output)  # type: ignore[arg-type]
    writer.start()
    frame = "".join(f"\x1b[{row};1H{'x' * 118}{row:02d}" for row in range(1, 41)) * 40
    assert len(frame.encode()) > 2 * (1 << 16)  # more than a pipe holds
    try:
        writer.write("\x1b[?2026h")
        writer.write(frame)
        writer.write("\x1b[?2026l")
        assert not output.wait_flushed(3, 0.3), "written while the pipe was full"
        received = bytearray()

        def drain() -> None:
            while chunk := os.read(read_fd, 1 << 16):
                received.extend(chunk)

        reader = threading.Thread(target=drain, daemon=True)
        reader.start()
        assert output.wait_flushed(3, 10), "never written"
        started = time.monotonic()
        while len(received) < len(frame) + 16 and time.monotonic() - started < 10:
            time.sleep(0.01)
        assert bytes(received) == ("\x1b[?2026h" + frame + "\x1b[?2026l").encode()
    finally:
        writer.stop()
        output.close()
        os.close(read_fd)


def test_the_app_draws_through_the_driver_it_can_wait_for() -> None:
    """Where Textual picks its Linux driver (Linux, macOS), the app uses the one whose writes
    can be waited for; the same driver otherwise."""
    app = CompactorApp(TREE_COMPACTED, follow=False)
    if super(CompactorApp, app).get_driver_class() is LinuxDriver:
        assert app.driver_class is WrittenDriver
        assert issubclass(WrittenDriver, LinuxDriver)
    else:
        assert app.driver_class is super(CompactorApp, app).get_driver_class()


@pytest.mark.asyncio
async def test_the_first_screen_starts_its_work_once_its_frame_is_on_the_terminal(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The first screen's frame is on the terminal before what waited for it starts (token
    counting, the collector, a big file's index): the UI thread waits for the driver's
    writes first, at most ``FRAME_WRITE_WAIT`` seconds. (The headless driver writes nothing:
    here a stand-in for the terminal driver's wait records the order.)"""
    app = make_app(TREE_COMPACTED)
    order: list[str] = []
    drawn = app._first_screen_drawn

    def first_screen_drawn() -> None:
        order.append("first screen drawn")
        drawn()

    app._first_screen_drawn = first_screen_drawn  # type: ignore[method-assign]

    def wait_written(driver: HeadlessDriver, timeout: float) -> bool:
        order.append(f"waited {timeout}")
        return True

    monkeypatch.setattr(HeadlessDriver, "wait_written", wait_written, raising=False)
    async with app.run_test(size=SIZE) as pilot:
        for _ in range(500):
            if "first screen drawn" in order:
                break
            await pilot.pause(0.01)
        assert "first screen drawn" in order
        assert order.index(f"waited {FRAME_WRITE_WAIT}") < order.index("first screen drawn")
