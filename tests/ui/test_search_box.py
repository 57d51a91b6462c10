"""Typing in the search box lays nothing out again, and a query longer than the box shows
its end (where the cursor is)."""

from __future__ import annotations

import pytest

from tests.ui.app_helpers import SIZE, TREE_BRANCHES, count_layouts, make_app, settle

pytestmark = pytest.mark.asyncio


async def test_typing_a_query_lays_nothing_out_and_shows_its_end(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    app = make_app(TREE_BRANCHES)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("slash")
        await settle(pilot)
        layouts = count_layouts(monkeypatch)
        await pilot.press(*"rate limiter window")
        await settle(pilot)
        search = app.search_box()
        assert search is not None and search.value == "rate limiter window"
        assert layouts == [], "typing laid the screen out again"
        # Past the box's width (its scroll range grows: one layout shows the scrollbar's
        # place), the end of the query stays in view.
        query = search.value + " and more" * 15 + " the very end"
        assert len(query) > SIZE[0]
        await pilot.press(*query[len(search.value) :])
        await settle(pilot)
        assert search.value == query
        shot = "\n".join(strip.text for strip in app.screen._compositor.render_strips())
        assert "the very end" in shot, "the end of the query (the cursor) is out of view"
        await pilot.press("enter")
        await settle(pilot)
        assert app.state.search_query == query
