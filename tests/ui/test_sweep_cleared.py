"""A plan that cannot be made (the node is a compaction: nothing new to compact — as after the
agent appended one) takes the last plan's sweep and the ✂ counts on the tree's rows with it:
they described cuts of a plan no longer shown."""

from __future__ import annotations

import pytest

from tests.ui.app_helpers import SIZE, TREE_BRANCHES, TREE_COMPACTED, make_app, screen_text, settle
from tui_compactor.ui.widgets.plan_view import PlanView
from tui_compactor.ui.widgets.tree import SessionTree

pytestmark = pytest.mark.asyncio


@pytest.mark.parametrize("size", [(80, 24), (200, 60)])
async def test_a_plan_with_nothing_to_compact_shows_no_sweep_of_the_last_plan(
    size: tuple[int, int],
) -> None:
    app = make_app(TREE_COMPACTED)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        tree = app.query_one(SessionTree)
        view = app.query_one(PlanView)
        assert tree.cut_dependencies and view.sweep is not None
        session = app.session
        compaction = max(i for i in session.path_to(session.leaf)
                         if session.entries[i].type == "compaction")  # fmt: skip
        assert tree.move_to_entry(compaction)
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        assert "nothing to compact" in str(app.query_one("#plan-text").render())
        assert not str(view.sweep or ""), "the last plan's sweep"
        assert not tree.cut_dependencies, "the last plan's ✂ counts on the rows"


async def test_a_plan_refused_at_its_cut_with_valid_cuts_shows_their_sweep() -> None:
    """A plan refused at the cut it chose (under oh-my-pi's rules on this session: nothing to
    summarize before it) still has valid cuts to move to with [ / ]: the sweep of those cuts
    is shown, as ``plan --sweep`` lists them, counted with the new rules' counter."""
    app = make_app(TREE_BRANCHES)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        await pilot.press("o")  # pi -> oh-my-pi rules: the plan is made and swept again
        await settle(pilot)
        plan = app.plan
        assert plan is not None and plan.rules == "omp"
        assert not plan.prepared and plan.valid_cut_points
        view = app.query_one(PlanView)
        assert view.sweep is not None
        assert f"sweep over {len(plan.valid_cut_points)} valid cuts" in screen_text(app)
        tree = app.query_one(SessionTree)
        assert set(tree.cut_dependencies) == {plan.branch[i] for i in plan.valid_cut_points}
