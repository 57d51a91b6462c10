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
