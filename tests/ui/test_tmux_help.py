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
    shown = app.wait_for(lambda screen: "tui-compactor — keys" in screen, "the help")
    assert _uncovered(shown) and "Jump to leaf" in shown
    # The help puts the app's toasts up as it resumes, in a callback queued before any key
    # sent once it shows: the frame that shows End's scroll comes after the toasts would be
    # drawn, so waiting for it (checking every frame on the way) cannot end too early.
    app.send("End")
    end = app.wait_for(
        lambda screen: _uncovered(screen) and "ctrl+p opens" in screen, "the end of the help"
    )
    watch_until = time.monotonic() + 1.0  # and a while longer, in case a toast slides in
    while time.monotonic() < watch_until:
        end = app.capture()
        assert _uncovered(end) and "ctrl+p opens" in end
        time.sleep(0.1)  # polling interval
    assert "The demo reads no config file" in end and "Change keys in" not in end
    app.send("Escape")
    # The notification was up all along: it is back as soon as the help goes.
    app.wait_for(lambda screen: "nothing to compare" in screen, "the notification again")


def _uncovered(screen: str) -> bool:
    """The help's box is whole on every row (no toast drawn over its edge) and no toast text
    shows. The box is 95% of the rows over the help's own footer (``esc Close``, last row)."""
    lines = screen.splitlines()
    assert lines[-1].split() == ["esc", "Close"], lines[-1]
    box = lines[1:22]
    assert box[0].startswith("█▀") and box[-1].startswith("█▄"), box
    assert all(line.startswith("█") and line.rstrip().endswith("█") for line in box), box
    assert "nothing to compare" not in screen, screen
    return True
