"""What the user sees stays right when views are drawn cheaply: rapid keys, dimmed stale panes."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Static

from tests.ui.app_helpers import SIZE, make_app, settle
from tui_compactor.ui.widgets.context_view import BlockList
from tui_compactor.ui.widgets.labels import format_tokens
from tui_compactor.ui.widgets.plan_view import PlanView
from tui_compactor.ui.widgets.tree import SessionTree

pytestmark = pytest.mark.asyncio

SAMPLE = Path(__file__).resolve().parents[2] / "tui_compactor" / "data" / "sample-session.jsonl"


def _pane_text(app: object) -> str:
    return str(app.query_one("#plan-text", Static).render())  # type: ignore[attr-defined]


async def test_rapid_cut_moves_end_on_the_plan_of_the_last_key() -> None:
    """Keys pressed faster than plans arrive each step one valid cut further; the plan, the
    tree's cut mark and the pane all end on the last key's cut."""
    app = make_app(SAMPLE)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        first = app.plan
        assert first is not None and first.prepared
        cuts = sorted(first.valid_cut_points)
        position = cuts.index(first.first_kept_index)
        assert position >= 5, "the sample has earlier valid cut points"
        for _ in range(5):
            app.action_cut_earlier()  # no await: none of these plans has arrived yet
        app.action_cut_later()
        assert "planning at" in _pane_text(app), "the pane says a new plan is coming"
        await settle(pilot)
        plan = app.plan
        assert plan is not None and plan.first_kept_index == cuts[position - 4]
        cut_entry = plan.branch[plan.first_kept_index]
        assert app.query_one(SessionTree).cut_entry == cut_entry
        text = _pane_text(app)
        assert f"cut before #{cut_entry} " in text
        assert "planning at" not in text


async def test_the_last_plan_stays_dimmed_while_the_next_is_made() -> None:
    """While a plan is made the pane keeps the previous one (same rows, nothing jumps) under
    a "planning" title; a cleared plan says how to make one."""
    app = make_app(SAMPLE)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        view = app.query_one(PlanView)
        shown = view.plan_text
        assert shown is not None
        view.show_planning("planning at #1…")
        pending = app.query_one("#plan-text", Static).render()
        lines = str(pending).split("\n")
        assert lines[0] == "planning at #1…"
        assert lines[1:] == shown.plain.split("\n")[1:]
        await pilot.press("escape")  # clears the plan
        await settle(pilot)
        assert view.plan_text is None
        assert "press c" in _pane_text(app)


async def test_context_tab_lists_every_block_and_scrolls_to_the_last() -> None:
    """The Context tab lists every block of a long context (none summarized away), a header
    on top, rows drawn as they scroll into view."""
    app = make_app(SAMPLE)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("2")
        await settle(pilot)
        data = app.gauge_data
        assert data is not None
        listing = app.query_one(BlockList)
        assert listing.blocks == data.blocks
        assert len(data.blocks) > 2 * listing.size.height, "more blocks than a screenful"
        assert listing.render_line(0).text.split()[:4] == ["#", "block", "tokens", "text"]
        label, _, tokens, index = data.blocks[0]
        first = listing.render_line(1).text.split()
        assert first[:3] == [str(index), label, format_tokens(tokens)]
        listing.scroll_end(animate=False)
        await pilot.pause()
        label, _, tokens, index = data.blocks[-1]
        last = listing.render_line(listing.size.height - 1).text.split()
        assert last[:3] == [str(index), label, format_tokens(tokens)]
        title = str(app.query_one("#context-title", Static).render())
        assert f"{len(data.blocks)} blocks" in title
