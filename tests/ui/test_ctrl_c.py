"""``ctrl+c`` where a user presses it out of habit: on the tree, in the search box, during a
review. It never quits or writes; on the main screen it says in plain words which key quits
(Textual's own note wrote its key in markup, shown raw: ``Press [b]ctrl+q[/b]``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.ui.app_helpers import (
    TREE_COMPACTED,
    copy_fixture,
    make_app,
    raised_notes,
    run_review,
    settle,
)

pytestmark = pytest.mark.asyncio


@pytest.mark.parametrize("size", [(80, 24), (200, 60)])
async def test_ctrl_c_says_which_keys_quit_in_plain_words_and_quits_nothing(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    session = copy_fixture(TREE_COMPACTED, tmp_path)
    before = session.read_bytes()
    app = make_app(session)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+c")
        await settle(pilot)
        said = [note for note in raised_notes(app) if "to quit the app" in note]
        assert said == ["press q or ctrl+q to quit the app"], said
        await run_review(pilot)
        await pilot.press("ctrl+c")
        await settle(pilot)
        assert app.is_running and app.review_panel is not None, "the review is still there"
        assert all("[b]" not in note for note in raised_notes(app)), raised_notes(app)
    assert session.read_bytes() == before


@pytest.mark.parametrize("opener", ["navigate", "help"])
async def test_ctrl_c_under_a_dialog_says_which_key_quits_there(
    tmp_path: Path, opener: str
) -> None:
    """A dialog (the navigation dialog, the help) stops the main screen's keys, ``q`` too;
    ``ctrl+c`` there still says in plain words which key quits (``ctrl+q``), and closes,
    answers or writes nothing."""
    from tests.ui.app_helpers import OTHER_BRANCH_TIP, TREE_BRANCHES
    from tui_compactor.ui.screens.tinted import TintedModalScreen
    from tui_compactor.ui.widgets.tree import SessionTree

    session = copy_fixture(TREE_BRANCHES, tmp_path)
    before = session.read_bytes()
    app = make_app(session, append_quiet_seconds=0)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        if opener == "navigate":
            assert app.query_one(SessionTree).move_to_entry(OTHER_BRANCH_TIP)
            await settle(pilot)
            await pilot.press("enter")
        else:
            await pilot.press("question_mark")
        await settle(pilot)
        dialog = app.screen
        assert isinstance(dialog, TintedModalScreen)
        await pilot.press("ctrl+c")
        await settle(pilot)
        said = [note for note in raised_notes(app) if "to quit the app" in note]
        assert said == ["press ctrl+q to quit the app"], raised_notes(app)
        assert app.is_running and app.screen is dialog
    assert session.read_bytes() == before
