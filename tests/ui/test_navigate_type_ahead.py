"""Keys typed right after ``enter`` while the move is being planned (the dialog is not there
yet) are not main-screen keys: an ``o`` does not switch the rules, a ``u`` does not undo, an
``e`` does not open the budget editor behind the dialog. (The dialog itself drops keys typed
before it appeared: they were not answers to it.) ``esc`` cancels the move being planned,
and the quit keys still quit."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from textual import events

from tests.ui.app_helpers import OTHER_BRANCH_TIP, TREE_BRANCHES, copy_fixture, make_app, settle
from tui_compactor.engine import branch
from tui_compactor.ui.screens.navigate import NavigateDialog
from tui_compactor.ui.widgets.tree import SessionTree

pytestmark = pytest.mark.asyncio


def slow_plans(monkeypatch: pytest.MonkeyPatch) -> None:
    """Plan moves slowly, as on a big session: keys arrive while the move is planned."""
    plan_navigation = branch.plan_navigation

    def slow(*args: Any, **kwargs: Any) -> Any:
        time.sleep(0.5)
        return plan_navigation(*args, **kwargs)

    monkeypatch.setattr(branch, "plan_navigation", slow)


def burst(app: Any, text: str) -> None:
    """Queue ``text``'s keys at once, as a terminal delivers keys typed fast (a pilot's
    ``press`` waits for each key to be handled before the next)."""
    for character in text:
        key = "space" if character == " " else character
        app.post_message(events.Key(key, character))


@pytest.mark.parametrize("size", [(80, 24), (200, 60)])
async def test_keys_typed_while_the_move_is_planned_run_nothing_on_the_main_screen(
    tmp_path: Path, size: tuple[int, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    plan_navigation = branch.plan_navigation

    def slow(*args: Any, **kwargs: Any) -> Any:
        time.sleep(0.5)  # a big session's plan takes a while: keys arrive meanwhile
        return plan_navigation(*args, **kwargs)

    monkeypatch.setattr(branch, "plan_navigation", slow)
    session = copy_fixture(TREE_BRANCHES, tmp_path)
    before = session.read_bytes()
    app = make_app(session)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        assert app.query_one(SessionTree).move_to_entry(OTHER_BRANCH_TIP)
        await settle(pilot)
        rules = app.settings.rules
        await pilot.press("enter", "o", "f", "e", "u", "3")
        await settle(pilot)
        assert isinstance(app.screen, NavigateDialog), "the dialog asks"
        assert app.settings.rules == rules, "an o typed ahead switched the rules"
        assert app.filter_index == 0, "an f typed ahead changed the filter"
        assert app.screen.mode.value != "custom", "typed before the dialog: not its answer"
        await pilot.press("escape")
        await settle(pilot)
        assert app.focused is app.query_one(SessionTree), "no editor opened behind the dialog"
    assert session.read_bytes() == before


@pytest.mark.parametrize("size", [(80, 24), (200, 60)])
async def test_text_typed_right_after_3_goes_into_the_instructions(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    """``3`` opens the custom instructions: what is typed after it, in the same burst, is the
    instructions (it was lost on the options, and an ``i`` in it opened the requests)."""
    from textual.widgets import TextArea

    session = copy_fixture(TREE_BRANCHES, tmp_path)
    before = session.read_bytes()
    app = make_app(session)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        assert app.query_one(SessionTree).move_to_entry(OTHER_BRANCH_TIP)
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        dialog = app.screen
        assert isinstance(dialog, NavigateDialog)
        burst(app, "3keep it brief")
        await settle(pilot)
        assert app.screen is dialog, "an i typed into the instructions opened the requests"
        area = dialog.query_one("#navigate-instructions", TextArea)
        assert area.text == "keep it brief" and area.has_focus
        await pilot.press("escape")
        await settle(pilot)
    assert session.read_bytes() == before


async def test_escape_while_the_move_is_planned_cancels_the_move_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``esc`` typed right after ``enter`` cancels that move (no dialog opens after it) and
    is not the main screen's ``esc`` too (which would clear the plan shown)."""
    session = copy_fixture(TREE_BRANCHES, tmp_path)
    before = session.read_bytes()
    app = make_app(session)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        assert app.plan is not None
        slow_plans(monkeypatch)
        assert app.query_one(SessionTree).move_to_entry(OTHER_BRANCH_TIP)
        await settle(pilot)
        await pilot.press("enter", "escape")
        await pilot.pause(1.0)
        await settle(pilot)
        assert not isinstance(app.screen, NavigateDialog), "the dialog opened after esc"
        assert app.state.move_asked is None
        assert app.plan is not None, "esc went on to the main screen and cleared the plan"
        await pilot.press("enter")  # asks again
        await pilot.pause(1.0)
        await settle(pilot)
        assert isinstance(app.screen, NavigateDialog)
        await pilot.press("escape")
        await settle(pilot)
    assert session.read_bytes() == before


@pytest.mark.parametrize("key", ["q", "ctrl+q"])
async def test_quit_keys_while_the_move_is_planned_quit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, key: str
) -> None:
    session = copy_fixture(TREE_BRANCHES, tmp_path)
    before = session.read_bytes()
    app = make_app(session)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        slow_plans(monkeypatch)
        assert app.query_one(SessionTree).move_to_entry(OTHER_BRANCH_TIP)
        await settle(pilot)
        await pilot.press("enter", key)
        await pilot.pause()
        assert app.return_code == 0, f"{key} typed while the move was planned did not quit"
    assert session.read_bytes() == before


async def test_ctrl_c_while_the_move_is_planned_says_how_to_quit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = copy_fixture(TREE_BRANCHES, tmp_path)
    app = make_app(session)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await settle(pilot)
        slow_plans(monkeypatch)
        assert app.query_one(SessionTree).move_to_entry(OTHER_BRANCH_TIP)
        await settle(pilot)
        app.clear_notifications()
        await pilot.press("enter", "ctrl+c")
        await pilot.pause()
        notes = [note.message for note in app._notifications]
        assert any("to quit the app" in note for note in notes), notes
        await pilot.pause(1.0)
        await settle(pilot)
        await pilot.press("escape")
        await settle(pilot)
