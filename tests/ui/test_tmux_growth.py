"""In a real terminal: a second process appends a valid child of the leaf while the app shows a
finished compaction (or a proposed undo / navigation, or the label dialog). Nothing is ever
written onto the old leaf; the app says so, shows the new plan and asks again (a label, which
does not depend on the leaf, goes after the new entry and the app says where)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.ui.test_tmux import TmuxApp, tmux_app  # noqa: F401 - the fixture is used by name

pytestmark = [
    pytest.mark.tmux,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "oracle" / "sessions" / "tree-compacted.jsonl"
AGENT = ROOT / "tests" / "workbench" / "agent.py"


def agent_appends(path: Path) -> str:
    """A second process appends a user message as a child of the file's leaf."""
    result = subprocess.run(
        [sys.executable, str(AGENT), str(path)],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
    )
    return result.stdout.strip()


def records(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


@pytest.fixture
def session(tmp_path: Path) -> Path:
    target = tmp_path / "growing.jsonl"
    shutil.copyfile(FIXTURE, target)
    return target


def _start(tmux_app: Callable[[list[str]], TmuxApp], session: Path) -> TmuxApp:  # noqa: F811
    app = tmux_app([str(session), "--keep-recent", "2000"])
    app.wait_for(lambda screen: "entries" in screen.splitlines()[0], "the loaded tree")
    app.wait_for_text("q Quit")
    return app


def test_accept_after_growth_replans_and_never_writes_on_the_old_leaf(
    tmux_app: Callable[[list[str]], TmuxApp],
    session: Path,  # noqa: F811
) -> None:
    app = _start(tmux_app, session)
    app.send("G", "c")
    app.wait_for_text("cut before #")
    app.send("r")
    app.wait_for_text("anchors kept")  # the compaction finished and waits for the user
    agent = agent_appends(session)
    grown = session.read_bytes()
    app.wait_for_text("1 new entry")  # live follow showed the agent's message
    app.send("a")
    app.wait_for(
        lambda s: (
            "nothing written" in s
            and ("planned again at the new leaf" in s or "was not written" in s)
        ),
        "nothing written, and the plan made again",
    )
    assert session.read_bytes() == grown, "no compaction onto the old leaf"
    app.wait_for(lambda s: f"Plan for leaf #{len(records(session)) - 2}" in s, "the new plan")
    # The user decides again: run and accept the new plan; it hangs under the agent's entry.
    app.send("r")
    app.wait_for_text("anchors kept")
    app.send("a")
    app.wait_for_text("compaction appended")
    last = records(session)[-1]
    assert last["type"] == "compaction" and last["parentId"] == agent


def _search(app: TmuxApp, needle: str) -> None:
    app.send("/")
    app.wait_for_text("search entries")
    app.send(needle, "Enter")
    app.wait_for_text("match 1/")  # "1 match · match 1/1" for an id (1c87ba2: not "1 matches")


def test_undo_proposed_before_growth_asks_again_and_no_writes_nothing(
    tmux_app: Callable[[list[str]], TmuxApp],
    session: Path,  # noqa: F811
) -> None:
    app = _start(tmux_app, session)
    compaction = [r for r in records(session) if r["type"] == "compaction"][-1]["id"]
    _search(app, str(compaction))
    app.send("u")
    app.wait_for_text("Undo anyway?", "25 entries")
    agent_appends(session)
    grown = session.read_bytes()
    app.send("y")  # confirmed the old proposal: it must not be written
    again = app.wait_for(lambda s: "26 entries" in s and "Undo anyway?" in s, "the new question")
    assert "nothing written" in again or "Undo?" in again
    assert session.read_bytes() == grown
    app.send("n")
    app.wait_for_text("undo declined")
    assert session.read_bytes() == grown


NAVIGATE_DIALOG = "Navigate to another point in the tree"
"""The navigation dialog's title. (``Navigate`` alone is also the footer's ``⏎ Navigate`` while
the tree has the focus: waiting for it does not wait for the dialog.)"""


def leaving(screen: str) -> str:
    """The dialog's ``Leaving`` fact: the leaf the move leaves (``#122``)."""
    line = next(line for line in screen.splitlines() if "Leaving  #" in line)
    return line.split("Leaving  ", 1)[1].split()[0]


def test_navigation_proposed_before_growth_is_planned_again(
    tmux_app: Callable[[list[str]], TmuxApp],
    session: Path,  # noqa: F811
) -> None:
    app = _start(tmux_app, session)
    target = records(session)[3]["id"]
    old_leaf = f"#{len(records(session)) - 2}"  # entry #N is line N + 1 (the header is first)
    _search(app, str(target))
    app.send("Enter")
    first = app.wait_for(
        lambda s: NAVIGATE_DIALOG in s and "1  No summary" in s, "the navigation dialog"
    )
    assert leaving(first) == old_leaf
    agent_appends(session)
    grown = session.read_bytes()
    app.send("1")  # no summary: a leaf marker at the target, proposed on the old leaf
    app.wait_for_text("planning the move again")
    again = app.wait_for(
        lambda s: NAVIGATE_DIALOG in s and "Leaving  #" in s and leaving(s) != old_leaf,
        "the dialog asking again with the new plan",
    )
    assert leaving(again) == f"#{len(records(session)) - 2}", "it leaves the agent's entry"
    assert session.read_bytes() == grown
    app.send("Escape")
    app.wait_for(lambda s: NAVIGATE_DIALOG not in s, "the dialog to close")
    assert session.read_bytes() == grown


def test_a_label_typed_while_the_agent_appends_goes_after_its_entry(
    tmux_app: Callable[[list[str]], TmuxApp],
    session: Path,  # noqa: F811
) -> None:
    app = _start(tmux_app, session)
    old_leaf = records(session)[-1]["id"]
    app.send("k", "L")
    app.wait_for_text("Label of")
    agent = agent_appends(session)  # while the user types the label
    app.wait_for_text("1 new entry")  # live follow showed the agent's message
    grown = session.read_bytes()
    app.send("milestone", "Enter")
    app.wait_for_text("label “milestone” set", "(the session grew")  # told where it went
    added = records(session)[len(grown.splitlines()) :]
    assert [(r["type"], r["parentId"], r["label"]) for r in added] == [
        ("label", agent, "milestone")
    ]
    assert agent != old_leaf, "never onto the old leaf"
