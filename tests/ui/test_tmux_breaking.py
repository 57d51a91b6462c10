"""In a real terminal, the way users break things: a second process appends while the user has
moved the cut, runs a compaction, or has a dialog open. What the user chose survives the
growth, nothing is written onto the old leaf, and the app never gets stuck."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.ui.test_tmux import FIXTURES, TmuxApp, tmux_app  # noqa: F401 - the fixture is used by name
from tests.ui.test_tmux_context import tree_focused
from tests.ui.test_tmux_growth import FIXTURE, agent_appends, records

pytestmark = [
    pytest.mark.tmux,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]


@pytest.fixture
def session(tmp_path: Path) -> Path:
    target = tmp_path / "growing.jsonl"
    shutil.copyfile(FIXTURE, target)
    return target


def _start(
    tmux_app: Callable[..., TmuxApp],
    session: Path,  # noqa: F811
    size: tuple[int, int] = (80, 24),
) -> TmuxApp:
    app = tmux_app([str(session), "--keep-recent", "2000"], size)
    app.wait_for(lambda screen: "entries" in screen.splitlines()[0], "the loaded tree")
    app.wait_for_text("q Quit")
    return app


def test_a_moved_cut_survives_the_agent_appending(
    tmux_app: Callable[..., TmuxApp],
    session: Path,  # noqa: F811
) -> None:
    app = _start(tmux_app, session)
    app.send("G", "c")
    app.wait_for_text("cut before #118 ")
    app.send("[", "[")
    app.wait_for_text("cut before #115 ")  # the user moved the cut two valid points back
    chosen = records(session)[115 + 1]["id"]  # entry #N is line N + 1 (the header is first)
    agent = agent_appends(session)
    app.wait_for_text("1 new entry")
    app.send("r")  # the plan is of the old leaf: planned again first, with the user's cut
    app.wait_for_text("anchors kept")
    app.send("a")
    app.wait_for_text("compaction appended")
    last = records(session)[-1]
    assert last["type"] == "compaction" and last["parentId"] == agent
    assert last["firstKeptEntryId"] == chosen, "the cut the user chose, not the computed one"


def test_a_compaction_above_the_files_leaf_asks_before_the_agents_entry_leaves_the_path(
    tmux_app: Callable[..., TmuxApp],
    session: Path,  # noqa: F811
) -> None:
    app = _start(tmux_app, session)
    old_leaf = records(session)[-1]["id"]
    agent = agent_appends(session)  # the cursor stays on the old leaf, as live follow promises
    app.wait_for_text("1 new entry")
    app.send("c")  # plans at the cursor: the node above the agent's new entry
    app.wait_for_text("Plan for leaf #122 ")
    app.send("r")
    app.wait_for_text("anchors kept")
    grown = session.read_bytes()
    app.send("a")
    asked = app.wait_for_text("leaves the active path", "Append anyway?")
    boxed = [line.split("█")[1] for line in asked.splitlines() if line.count("█") >= 2]
    assert ". A compaction entry after" in " ".join(" ".join(boxed).split()), "capitalized"
    app.send("n")
    app.wait_for_text("not written")
    assert session.read_bytes() == grown, "declined: the agent's entry stays on the active path"
    app.send("a")  # asked again; this time the user wants the branch
    app.wait_for_text("Append anyway?")
    app.send("y")
    app.wait_for_text("compaction appended")
    last = records(session)[-1]
    assert last["type"] == "compaction" and last["parentId"] == old_leaf != agent


def test_keys_that_leave_the_full_screen_context_give_the_layout_back(
    tmux_app: Callable[..., TmuxApp],
    tmp_path: Path,  # noqa: F811
) -> None:
    """``S`` fills the screen with the context as sent; a key that moves the focus out of it
    (``/`` search, ``e`` budget editor, a search landing on the tree) must not leave the user
    typing into a box they cannot see, or moving a tree they cannot see."""
    session = tmp_path / "omp-basic.jsonl"
    shutil.copyfile(FIXTURES / "oracle-omp" / "sessions" / "omp-basic.jsonl", session)
    app = tmux_app([str(session)], (80, 24))
    app.wait_for(lambda s: "entries" in s.splitlines()[0] and "◆ leaf" in s, "the tree")
    app.send("S")
    app.wait_for(lambda s: "┃·" not in s and "as oh-my-pi sends it" in s, "full screen")
    app.send("/")
    app.wait_for(lambda s: "search entries" in s and "┃·" in s, "the search box and the tree")
    app.send("compaction", "Enter")
    app.wait_for(lambda s: "matches" in s and "┃·" in s and tree_focused(s), "the tree back")
    app.send("S")
    app.wait_for(lambda s: "┃·" not in s and "as oh-my-pi sends it" in s, "full screen again")
    app.send("e")  # the budget editor: its inputs must be on screen while typed into
    app.wait_for(lambda s: "threshold %" in s and "┃·" in s, "the budget editor")


@pytest.mark.parametrize(
    ("name", "count"),
    [
        (
            "invalid-json-middle.jsonl",
            "6 issues",
        ),  # 5 load diagnostics + oh-my-pi's rewrite warning
        ("bom-prefixed.jsonl", "1 issue"),
    ],
)
def test_a_bad_file_counts_its_issues_the_same_in_the_header_the_note_and_the_list(
    tmux_app: Callable[..., TmuxApp],
    tmp_path: Path,
    name: str,
    count: str,  # noqa: F811
) -> None:
    session = tmp_path / name
    shutil.copyfile(FIXTURES / "bad" / name, session)
    app = tmux_app([str(session)], (80, 24))
    first = app.wait_for(lambda s: "entries" in s.splitlines()[0] and "q Quit" in s, "the file")
    assert f"({count} · I)" in first.splitlines()[0]
    app.wait_for_text(f"open+warn: {count}")  # the note naming the first problem's file:line
    app.send("I")
    app.wait_for_text(f"{count} found while loading")
    assert session.read_bytes() == (FIXTURES / "bad" / name).read_bytes()


def test_the_main_screens_keys_do_nothing_in_the_session_picker(
    tmux_app: Callable[..., TmuxApp],
    session: Path,  # noqa: F811
) -> None:
    """The picker is a screen of its own: ``f`` (filter), ``i`` (requests), ``S`` (zoom) are
    the tree's keys and must not change, behind the picker, the session opened next."""
    app = tmux_app([str(session.parent)], (200, 60))
    app.wait_for_text("Open a session")
    app.wait_for(
        lambda s: f"1 session in {session.parent}" in " ".join(s.split()),
        "the listed session, counted in the singular",
    )
    app.send("Down")  # into the list: its footer offers the sort keys
    app.wait_for(lambda s: "Sort date" in s.splitlines()[-1], "the list to have the focus")
    app.send("f", "i", "S")
    screen = app.wait_for(lambda s: "Sort date" in s.splitlines()[-1], "the picker's footer")
    assert "f Filter" not in screen.splitlines()[-1] and "r Compact" not in screen
    assert "filter: no tools" not in screen and "plan first" not in screen
    app.send("Enter")
    header = app.wait_for(lambda s: "entries" in s.splitlines()[0], "the session").splitlines()[0]
    assert "filter: default" in header or "filter:" not in header, header


@pytest.mark.parametrize("key", ["c", "3"])
def test_a_key_that_shows_another_tab_leaves_the_full_screen_context(
    tmux_app: Callable[..., TmuxApp],
    session: Path,
    key: str,  # noqa: F811
) -> None:
    """``c`` (plan) and ``3`` (the Plan tab) show the Plan tab: over a full-screen Context it
    would be planned and switched unseen, so the layout comes back with the plan in view."""
    app = _start(tmux_app, session, (100, 30))
    app.send("S")
    app.wait_for(lambda s: "┃·" not in s and "as pi sends it" in s, "full screen")
    app.send(key)
    app.wait_for(
        lambda s: "┃·" in s and "Plan" in s and "as pi sends it" not in s,
        "the tree and the plan tab back",
    )


def test_a_toast_that_expired_while_the_plan_form_has_the_focus_leaves_the_screen(
    tmux_app: Callable[..., TmuxApp],
    tmp_path: Path,  # noqa: F811
) -> None:
    """At 80x24 the load's issues toast lies over the budget editor. ``c`` then ``e`` while it
    shows: the pane scrolls to the form, and Textual's next full layout (the toast's removal)
    compares against a map rebuilt without the toast, so nothing repaints where it was; the
    toast stayed painted over the form's fields, long after it expired."""
    session = tmp_path / "refactor-session-v3.jsonl"
    shutil.copyfile(FIXTURES / "sessions" / "refactor-session-v3.jsonl", session)
    app = tmux_app([str(session)], (80, 24))
    app.wait_for_text("open+warn: 4 issues", "q Quit")  # the toast (8 s) and the tree
    app.send("c")
    app.wait_for_text("Plan for leaf #1001")
    app.send("e")
    app.wait_for_text("esc Cancel")  # typing into the keep field
    app.wait_for(lambda screen: "open+warn: 4 issues" not in screen, "the toast to go")
