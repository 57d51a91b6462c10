"""The plan pane can be made at every node of every bad-input file: a damaged usage (a number
past a float's range) once crashed the plan worker at a node whose context held it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.ui.app_helpers import BAD, make_app, settle
from tui_compactor.session.reader import load_session
from tui_compactor.ui.app import REGION_STYLES
from tui_compactor.ui.widgets.labels import format_tokens
from tui_compactor.ui.widgets.plan_view import plan_summary
from tui_compactor.workbench.handle import SessionHandle
from tui_compactor.workbench.settings import Settings
from tui_compactor.workbench.views import plan_report

NON_FINITE = BAD / "non-finite-numbers.jsonl"


def test_token_figures_of_any_integer_are_shown() -> None:
    assert format_tokens(950) == "950"
    assert format_tokens(12_345) == "12.3k"
    assert format_tokens(1_234_567) == "1.2M"
    assert format_tokens(10**400) == "1e400"  # past a float's range: no OverflowError
    assert format_tokens(-(10**400)) == str(-(10**400))  # below 1000: the integer itself


@pytest.mark.parametrize("path", sorted(BAD.glob("*.jsonl")), ids=lambda path: path.name)
def test_the_plan_pane_text_is_made_at_every_node(path: Path) -> None:
    session = load_session(path)
    handle = SessionHandle(session)
    settings = Settings().with_model_window(200_000, "m")
    for node in range(len(session.entries)):
        with handle.read() as snapshot:
            report = plan_report(snapshot, node, settings, None, None)
            text = plan_summary(report.plan, snapshot.session, REGION_STYLES, report.refusal, [])
        assert text.plain, (path.name, node)


@pytest.mark.asyncio
async def test_the_app_plans_at_a_node_whose_usage_is_past_a_floats_range() -> None:
    session = load_session(NON_FINITE)
    node = 3  # the context up to here holds the 400-digit usage
    app = make_app(NON_FINITE)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        tree = app.query_one("SessionTree")
        assert tree.move_to_entry(node)  # type: ignore[attr-defined]
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        assert app.plan is not None and app.plan.leaf == node
        assert app.is_running
    assert len(session.entries) > node
