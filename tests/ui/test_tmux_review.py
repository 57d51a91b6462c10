"""In a real terminal: the user changes the plan while a finished compaction is shown (moves the
cut with ``[``, or switches pi / oh-my-pi rules with ``o``), then presses ``a``. The summary was
made for the plan of when ``r`` was pressed; the screen now shows another one. Accepting must
not silently write the old cut under a screen that shows the new one: the app asks, naming the
cut and rules that were summarized; "no" writes nothing, "yes" writes what was summarized."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.ui.test_tmux import TmuxApp, tmux_app  # noqa: F401 - the fixture is used by name
from tests.ui.test_tmux_growth import FIXTURE, records

pytestmark = [
    pytest.mark.tmux,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]


def _review_ready(screen: str) -> bool:
    footer = screen.splitlines()[-1]
    return "a Accept" in footer and "d Discard" in footer


@pytest.mark.parametrize(
    ("size", "change", "shown"),
    [
        ((200, 60), "[", "cut before #100"),
        ((80, 24), "o", "omp rules"),
    ],
)
def test_accepting_after_the_plan_changed_asks_and_writes_what_was_summarized(
    tmux_app: Callable[..., TmuxApp],  # noqa: F811
    tmp_path: Path,
    size: tuple[int, int],
    change: str,
    shown: str,
) -> None:
    session = tmp_path / "review.jsonl"
    shutil.copyfile(FIXTURE, session)
    app = tmux_app([str(session), "--rules", "pi"], size)
    app.wait_for(lambda s: "entries" in s.splitlines()[0] and "q Quit" in s, "the tree")
    app.send("c")
    app.wait_for_text("cut before #102 ")
    app.send("r")
    app.wait_for(_review_ready, "the finished offline compaction")
    summarized = records(session)[102 + 1]["id"]  # entry #N is line N + 1
    app.send(change)
    if change == "[":
        app.send("3")  # the plan tab (at 80x24 the review fills the screen; z gives it back)
    app.wait_for(lambda s: shown in s, f"the changed plan ({shown})")
    before = session.read_bytes()
    app.send("a")
    app.wait_for(
        lambda s: (
            "Append anyway?" in s
            and all(part in " ".join(s.split()) for part in ("cut before #102", "pi rules"))
        ),
        "the question naming what was summarized",
    )
    app.send("n")
    app.wait_for(lambda s: _review_ready(s) and "Append anyway?" not in s, "the review, open")
    assert session.read_bytes() == before
    app.send("a")
    app.wait_for_text("Append anyway?")
    app.send("y")
    app.wait_for_text("compaction appended")
    last = records(session)[-1]
    assert last["type"] == "compaction" and last["firstKeptEntryId"] == summarized


def test_a_review_fills_the_screen_when_the_terminal_is_made_small(
    tmux_app: Callable[..., TmuxApp],  # noqa: F811
    tmp_path: Path,
) -> None:
    """Opened small, a review fills the screen; made small while it is shown, likewise (a side
    pane of 40 columns is no place to read a summary), and made big again the tree is back."""
    session = tmp_path / "review.jsonl"
    shutil.copyfile(FIXTURE, session)
    app = tmux_app([str(session)], (200, 60))
    app.wait_for(lambda s: "entries" in s.splitlines()[0] and "q Quit" in s, "the tree")
    app.send("c", "r")
    app.wait_for(lambda s: _review_ready(s) and "┃" in s, "the review beside the tree")
    app.resize(80, 24)
    app.wait_for(lambda s: "Compaction " in s.splitlines()[0] and "┃·" not in s, "the review alone")
    app.resize(200, 60)
    app.wait_for(lambda s: "┃" in s and "Compaction " in s, "the tree back beside the review")
