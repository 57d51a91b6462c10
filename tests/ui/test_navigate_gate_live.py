"""The navigation dialog follows the write gate while it is open: an agent's record caught
half-written when the dialog opened (the file reads read-only for that moment) does not keep
the branch summary disabled once the agent finishes the line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import OptionList, Static

from tests.ui.app_helpers import (
    OTHER_BRANCH_TIP,
    TREE_BRANCHES,
    copy_fixture,
    make_app,
    raised_notes,
    settle,
)
from tests.workbench.agent import user_message
from tui_compactor.ui.screens.navigate import NavigateDialog
from tui_compactor.ui.widgets.tree import SessionTree

pytestmark = pytest.mark.asyncio


def _half_of_a_child_of_the_leaf(path: Path) -> bytes:
    """Write the first half of a user message under the file's last entry; return the rest."""
    parent = json.loads(path.read_bytes().splitlines()[-1])["id"]
    line = json.dumps(user_message("agent001", parent, "still typing")).encode() + b"\n"
    with path.open("ab") as handle:
        handle.write(line[: len(line) // 2])
    return line[len(line) // 2 :]


async def test_summary_options_follow_the_gate_while_the_dialog_is_open(tmp_path: Path) -> None:
    path = copy_fixture(TREE_BRANCHES, tmp_path)
    app = make_app(path, append_quiet_seconds=0)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        rest = _half_of_a_child_of_the_leaf(path)
        app._follow_tick()
        await settle(pilot)
        assert app.session.append_refusal, "a torn last line closes the gate"
        assert app.query_one(SessionTree).move_to_entry(OTHER_BRANCH_TIP)
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        dialog = app.screen
        assert isinstance(dialog, NavigateDialog)
        why = dialog.query_one("#navigate-read-only", Static)
        options = dialog.query_one("#navigate-options", OptionList)
        assert "Read-only" in str(why.render()) and why.display and not options.display
        assert options.get_option_at_index(0).disabled
        assert options.get_option_at_index(1).disabled
        # The agent finishes its line: the gate opens again, and the dialog says so.
        with path.open("ab") as handle:
            handle.write(rest)
        app._follow_tick()
        await settle(pilot)
        assert app.session.append_refusal is None
        assert app.screen is dialog
        assert not why.display and options.display and options.has_focus
        assert not options.get_option_at_index(0).disabled
        assert not options.get_option_at_index(1).disabled
        await pilot.press("2")
        await settle(pilot)
        assert "Nothing can be summarized here." not in raised_notes(app)
        if isinstance(app.screen, NavigateDialog):
            # The file grew under the plan: the move is planned again and asked again.
            await pilot.press("2")
            await settle(pilot)
        written = [json.loads(line) for line in path.read_bytes().splitlines()]
        assert written[-1]["type"] == "branch_summary"
        assert written[-1]["parentId"] == app.session.entries[OTHER_BRANCH_TIP].id


async def test_summary_refused_for_a_closed_gate_says_why(tmp_path: Path) -> None:
    path = copy_fixture(TREE_BRANCHES, tmp_path)
    before = path.read_bytes()
    app = make_app(path, append_quiet_seconds=0)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        _half_of_a_child_of_the_leaf(path)
        torn = path.read_bytes()
        app._follow_tick()
        await settle(pilot)
        assert app.query_one(SessionTree).move_to_entry(OTHER_BRANCH_TIP)
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, NavigateDialog)
        await pilot.press("2")
        await settle(pilot)
        notes = raised_notes(app)
        assert "Nothing can be summarized here." not in notes
        assert any("incomplete record" in note for note in notes), notes
        # Followed live, a torn last line is most often an agent still writing it: the
        # reason says so, and sealing is advised only when no agent writes.
        refusal = app.session.append_refusal
        assert refusal is not None and "an agent still writing it" in refusal, refusal
        assert "If no agent is writing it, seal it" in refusal, refusal
        assert path.read_bytes() == torn and torn.startswith(before)


def _gate_closes_when(app: Any) -> None:
    """The file goes away at this moment: the app tells every screen on its stack."""
    app._loaded().append_refusal = "the file is gone"
    app._show_write_gate()


async def _open_dialog_at_other_tip(app: Any, pilot: Any) -> NavigateDialog:
    assert app.query_one(SessionTree).move_to_entry(OTHER_BRANCH_TIP)
    await settle(pilot)
    await pilot.press("enter")
    await settle(pilot)
    dialog = app.screen
    assert isinstance(dialog, NavigateDialog)
    return dialog


def _shows_the_gate_closed(dialog: NavigateDialog) -> None:
    why = dialog.query_one("#navigate-read-only", Static)
    options = dialog.query_one("#navigate-options", OptionList)
    assert "the file is gone" in str(why.render()) and why.display and not options.display
    assert all(options.get_option_at_index(i).disabled for i in range(3))


async def test_a_gate_that_closes_as_the_dialog_is_pushed_is_shown_by_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The app tells every screen on its stack when the gate changes; the navigation dialog
    pushed in that tick has no widgets yet: it raised NoMatches (the app crashed)."""
    app = make_app(copy_fixture(TREE_BRANCHES, tmp_path))
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        push = app.push_screen

        def pushed(screen: Any, *args: Any, **kwargs: Any) -> Any:
            result = push(screen, *args, **kwargs)
            if isinstance(screen, NavigateDialog):
                _gate_closes_when(app)
            return result

        monkeypatch.setattr(app, "push_screen", pushed)
        dialog = await _open_dialog_at_other_tip(app, pilot)
        _shows_the_gate_closed(dialog)


async def test_a_gate_that_closes_while_the_dialog_is_built_is_shown_once_it_is_mounted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Between its compose and its mount the dialog's widgets are not there to update: the
    gate it was told then is shown when it mounts."""
    app = make_app(copy_fixture(TREE_BRANCHES, tmp_path))
    compose = NavigateDialog.compose_dialog

    def composed(dialog: NavigateDialog) -> Any:
        yield from compose(dialog)
        _gate_closes_when(app)

    monkeypatch.setattr(NavigateDialog, "compose_dialog", composed)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        dialog = await _open_dialog_at_other_tip(app, pilot)
        _shows_the_gate_closed(dialog)


async def test_custom_instructions_come_back_with_their_option_when_the_gate_reopens(
    tmp_path: Path,
) -> None:
    """Read-only, then writable again while custom instructions were being typed: the option
    went back to "No summary" (the text kept, but hidden and not sent); the chosen option, its
    instructions and their focus come back."""
    from textual.widgets import TextArea

    from tui_compactor.ui.screens.navigate import SummaryMode

    app = make_app(copy_fixture(TREE_BRANCHES, tmp_path))
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        dialog = await _open_dialog_at_other_tip(app, pilot)
        await pilot.press("3", *"keep the tests")
        await settle(pilot)
        instructions = dialog.query_one("#navigate-instructions", TextArea)
        assert instructions.text == "keep the tests" and instructions.has_focus
        _gate_closes_when(app)
        await settle(pilot)
        _shows_the_gate_closed(dialog)
        app._loaded().append_refusal = None
        app._show_write_gate()
        await settle(pilot)
        options = dialog.query_one("#navigate-options", OptionList)
        assert options.display and options.highlighted == 2
        assert dialog.mode is SummaryMode.CUSTOM
        assert dialog.query_one("#navigate-custom").has_class("shown")
        assert instructions.has_focus
        await pilot.press(*" first")
        await settle(pilot)
        assert dialog._instructions() == ("keep the tests first", False)
