"""The full-screen Context "as sent" never stays on "converting…": a measurement asked for before
``S`` (without the as-sent part) that arrives after the one with it is not drawn over it.

Measurements run in threads and a newer request cannot stop an older one; on a loaded machine
the start-up measurement of the leaf can finish after the one ``S`` asked for (the real-terminal
check is ``test_tmux_breaking.test_a_key_that_shows_another_tab_leaves_the_full_screen_context``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.ui.app_helpers import copy_fixture, make_app, settle
from tui_compactor.ui.messages import GaugeReady
from tui_compactor.ui.widgets.context_view import ContextView
from tui_compactor.workbench.views import gauge_at

pytestmark = pytest.mark.asyncio

SESSION = Path(__file__).resolve().parents[1] / "fixtures" / "oracle" / "sessions"


async def test_a_late_measurement_without_the_sent_part_does_not_blank_the_as_sent_view(
    tmp_path: Path,
) -> None:
    app = make_app(copy_fixture(SESSION / "tree-compacted.jsonl", tmp_path))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("S")
        await settle(pilot)
        view = app.view(ContextView)
        assert view is not None and view.shown is not None and view.shown.sent is not None
        assert app.handle is not None and app.selected_entry is not None
        with app.handle.read() as snapshot:
            late = gauge_at(snapshot, app.selected_entry, app.settings, app.token_cache)
        assert late.sent is None
        app.post_message(GaugeReady(late))  # the start-up measurement, arriving last
        await settle(pilot)
        assert view.shown is not None and view.shown.sent is not None
        title = str(view.query_one("#context-title").render())
        assert "converting" not in title and "as pi sends it" in title
