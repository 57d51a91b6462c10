"""The help in a real 80x24 terminal: readable whole while a notification is up, and the demo's
hints say what holds in the demo (it reads no config file)."""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable

import pytest

from tests.ui.test_tmux import TmuxApp, tmux_app  # noqa: F401 - the fixture is used by name

pytestmark = [
    pytest.mark.tmux,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]


def test_help_at_80x24_is_not_covered_by_a_notification(
    tmux_app: Callable[..., TmuxApp],  # noqa: F811
) -> None:
    app = tmux_app(["demo"], size=(80, 24))
    app.wait_for(lambda screen: "q Quit" in screen and "#1012" in screen, "the demo")
    app.send("R")  # only offline in the demo: a long notification says why nothing runs
    shown = app.wait_for(lambda screen: "reads no config file" in screen, "R's notification")
    assert "Add a profile" not in shown
    app.send("?")
    app.wait_for(lambda screen: "tui-compactor — keys" in screen, "the help")
    # The toasts of a screen are drawn a moment after it shows: watch the help for a while.
    watch_until = time.monotonic() + 2.0
    while time.monotonic() < watch_until:
        help_screen = app.capture()
        box = help_screen.splitlines()[1:22]
        assert all(line.startswith("█") and line.rstrip().endswith("█") for line in box), box
        assert "Jump to leaf" in help_screen and "nothing to compare" not in help_screen
        time.sleep(0.1)  # polling interval
    app.send("End")
    end = app.wait_for(lambda screen: "ctrl+p opens" in screen, "the end of the help")
    assert "The demo reads no config file" in end and "Change keys in" not in end
    app.send("Escape")
    app.wait_for(lambda screen: "nothing to compare" in screen, "the notification again")
