"""What the 80×24 terminal cut, in a real terminal (tmux), and the same views at 200×60.

The installed app on a copy of the demo's sample session: the tab bar with the Compaction
tab active started mid-title (``etails  Context  Plan  Diff  Compaction``); the Window tab
named two tools' results alike (``tool resu…``); the timeline's "written by" needed
scrolling sideways. At 200×60 every title, full name and column shows.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.ui.test_tmux import EXIT_MARK, TmuxApp, tmux_app  # noqa: F401
from tui_compactor.commands.demo import sample_path

pytestmark = [
    pytest.mark.tmux,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]

TITLES = ["Details", "Context", "Plan", "Diff", "Compaction", "Window"]


def _tab_row(screen: str) -> str:
    """The preview's tab bar: the row that holds "Plan  Diff", right of the tree."""
    row = next(line for line in screen.splitlines() if "Plan  Diff" in line)
    return row.split("▕", 1)[1]


@pytest.mark.parametrize("size", [(80, 24), (200, 60)])
def test_tabs_window_and_timeline_fit_the_terminal(
    tmux_app: Callable[..., TmuxApp],  # noqa: F811 - the fixture
    tmp_path: Path,
    size: tuple[int, int],
) -> None:
    session = tmp_path / "sample-session.jsonl"
    shutil.copyfile(sample_path(), session)
    narrow = size == (80, 24)
    app = tmux_app([str(session)], size)
    app.wait_for(lambda s: "◆ leaf" in s and "Plan  Diff" in s, "the tree and the tabs")
    app.send("6")
    screen = app.wait_for_text(
        "What fills the window at", "result: bash" if narrow else "tool results: bash"
    )
    words = _tab_row(screen).replace("‹", " ").replace("›", " ").split()
    assert words == (TITLES[1:] if narrow else TITLES), screen
    assert "tool resu…" not in screen
    app.send("5")
    words = _tab_row(app.wait_for_text("Compaction")).replace("‹", " ").split()
    assert all(word in TITLES for word in words) and "Compaction" in words
    app.send("T")
    screen = app.wait_for_text("enter jumps, esc closes", "sample-script")
    header = next(line for line in screen.splitlines() if line.lstrip().startswith("entry "))
    assert header.split()[-2:] == ["written", "by"], header
    assert ("not shown: id, summary" in screen) == narrow, screen
    assert max(len(line.rstrip()) for line in screen.splitlines()) <= size[0]
    app.send("Escape")
    app.wait_for(lambda s: "◆ leaf" in s, "the tree again")
    app.send("q")
    assert f"{EXIT_MARK} 0]" in app.wait_for_text(EXIT_MARK)
