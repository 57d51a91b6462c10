"""The footer shows the keys that act now: a dialog's own keys under a dialog (help,
navigation, label, confirm), an input's keys while the user types into one (the budget editor,
the search box), never the main screen's keys that would not answer; and a key the footer shows
does what it says. At 80x24 and 200x60, headless; once in a real terminal (tmux)."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from typing import Any

import pytest
from textual.widgets import Input

from tests.ui.app_helpers import (
    OTHER_BRANCH_TIP,
    TREE_BRANCHES,
    TREE_COMPACTED,
    copy_fixture,
    make_app,
    settle,
)
from tests.ui.test_tmux import TmuxApp, tmux_app  # noqa: F401 - the fixture is used by name
from tui_compactor.ui.screens.confirm import ConfirmDialog
from tui_compactor.ui.screens.label import LabelDialog
from tui_compactor.ui.screens.navigate import NavigateDialog
from tui_compactor.ui.widgets.footer import StateFooter
from tui_compactor.ui.widgets.help import HelpScreen
from tui_compactor.ui.widgets.tree import SessionTree

SIZES = [(80, 24), (200, 60)]
MAIN_KEYS = ("c Plan", "r Compact", "f Filter", "q Quit")
"""What the main screen's footer shows while browsing (none of it answers under a dialog)."""


def bottom_line(app: Any) -> str:
    return str(app.screen._compositor.render_strips()[-1].text)


def footer_keys(app: Any) -> list[str]:
    """The keys the footer on top shows (``key description``), left to right."""
    footer = app.screen.query_one(StateFooter)
    return [f"{item.key_display} {item.description}" for item in footer.items]


@pytest.mark.asyncio
@pytest.mark.parametrize("size", SIZES)
async def test_each_dialog_footer_shows_its_own_keys_and_they_act(
    size: tuple[int, int], tmp_path: Any
) -> None:
    app = make_app(copy_fixture(TREE_BRANCHES, tmp_path))
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        assert all(key in bottom_line(app) for key in MAIN_KEYS)  # browsing: the main keys

        async def shown(keys: list[str], dialog: type[Any], expected: list[str]) -> None:
            for key in keys:
                await pilot.press(key)
                await settle(pilot)
            assert isinstance(app.screen, dialog)
            assert footer_keys(app) == expected
            line = bottom_line(app)
            assert not set(footer_keys(app)) & set(MAIN_KEYS), line
            assert line.split() == " ".join(expected).split()  # drawn on the bottom row

        # Help: its one key closes it (so do ? and q, listed in the help itself).
        await shown(["question_mark"], HelpScreen, ["esc Close"])
        await pilot.press("escape")
        await settle(pilot)
        assert len(app.screen_stack) == 1

        # The navigation dialog: cancel and its requests, not the tree's or the app's.
        assert app.query_one(SessionTree).move_to_entry(OTHER_BRANCH_TIP)
        await settle(pilot)
        await shown(["enter"], NavigateDialog, ["esc Cancel", "i Requests"])
        await pilot.press("escape")
        await settle(pilot)
        assert len(app.screen_stack) == 1

        # The label dialog (its input has the focus: the letters are the label's).
        await shown(["L"], LabelDialog, ["esc Cancel"])
        await pilot.press("escape")
        await settle(pilot)
        assert len(app.screen_stack) == 1

        # A question: yes / no.
        answers: list[bool | None] = []
        app.push_screen(ConfirmDialog("Append?", yes="Append"), answers.append)
        await settle(pilot)
        await shown([], ConfirmDialog, ["y Yes", "n No"])
        await pilot.press("n")
        await settle(pilot)
        assert answers == [False] and len(app.screen_stack) == 1
        assert all(key in bottom_line(app) for key in MAIN_KEYS)  # back: the main keys


@pytest.mark.asyncio
@pytest.mark.parametrize("size", SIZES)
async def test_typing_into_an_input_the_footer_shows_the_keys_that_still_act(
    size: tuple[int, int],
) -> None:
    """In the budget editor and the search box a letter is text: no ``c Plan`` or ``? Help``
    (``?`` types a ``?``); esc, tab, f1 and ctrl+q still act, and the footer says so."""
    app = make_app(TREE_COMPACTED)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        for opener in (["c", "e"], ["slash"]):
            for key in opener:
                await pilot.press(key)
                await settle(pilot)
            assert isinstance(app.focused, Input)  # the search box and plan fields: InlineInput
            assert footer_keys(app)[:4] == ["esc Cancel", "tab Focus Next", "f1 Help", "^q Quit"]
            assert not set(footer_keys(app)) & {*MAIN_KEYS, "/ Search", "? Help"}
            await pilot.press("escape")  # as the footer says: back to the tree
            await settle(pilot)
            assert isinstance(app.focused, SessionTree)
            assert "c Plan" in bottom_line(app)


@pytest.mark.tmux
@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_the_help_and_the_budget_editor_show_their_own_keys_in_a_terminal(
    tmux_app: Callable[..., TmuxApp],  # noqa: F811
) -> None:
    app = tmux_app([str(TREE_COMPACTED)], size=(80, 24))
    app.wait_for(lambda screen: "q Quit" in screen and "c Plan" in screen, "the main screen")
    app.send("?")
    shown = app.wait_for(lambda screen: "tui-compactor — keys" in screen, "the help")
    shown = app.wait_for(lambda screen: "esc Close" in screen.splitlines()[-1], "its footer")
    assert "c Plan" not in shown.splitlines()[-1]
    app.send("Escape")
    app.wait_for(lambda screen: "c Plan" in screen.splitlines()[-1], "the main footer again")
    app.send("c")
    app.send("e")
    shown = app.wait_for(lambda screen: "esc Cancel" in screen.splitlines()[-1], "the editor")
    assert "c Plan" not in shown.splitlines()[-1] and "f1 Help" in shown.splitlines()[-1]
