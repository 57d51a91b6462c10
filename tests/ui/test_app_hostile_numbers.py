"""A session with ``usage.totalTokens: 1e400`` (Infinity in JavaScript) keeps the app's gauge,
chart and plan working (issue 13, point 5)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.test_hostile_files import non_finite_session
from tests.ui.app_helpers import make_app, settle
from tui_compactor.engine.context import build_context, estimate_context_tokens

pytestmark = pytest.mark.asyncio
SIZE = (110, 32)


@pytest.fixture
def session_path(tmp_path: Path) -> Path:
    return non_finite_session(tmp_path / "inf.jsonl")


async def test_gauge_chart_and_plan_survive_non_finite_usage(session_path: Path) -> None:
    app = make_app(session_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        session = app.session
        assert session is not None and session.complete
        expected = estimate_context_tokens(build_context(session, session.leaf), app.counter)
        assert app.gauge_data is not None and app.gauge_data.tokens == expected.tokens > 0
        await pilot.press("c")  # plan a compaction at the cursor
        await settle(pilot)
        assert app.plan is not None
