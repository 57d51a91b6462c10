"""``r`` before a plan exists plans first and runs once it arrives; ``esc`` pressed meanwhile
cancels that run (the footer says esc cancels what is in flight), and a later plan (``c``) must
not start the compaction the user cancelled."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.ui.app_helpers import TREE_COMPACTED, copy_fixture, make_app, settle


@pytest.mark.asyncio
async def test_escape_before_the_plan_arrives_cancels_the_run(tmp_path: Path) -> None:
    from tui_compactor.ui.widgets.compaction import CompactionPanel

    path = copy_fixture(TREE_COMPACTED, tmp_path)
    app = make_app(path)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        assert app.handle is not None
        with app.handle.exclusive():  # the plan worker waits for the session meanwhile
            await pilot.press("r", "escape")
        await settle(pilot)
        assert not app.query(CompactionPanel), "the cancelled run started anyway"
        await pilot.press("c")
        await settle(pilot)
        assert app.plan is not None and app.plan.prepared
        assert not app.query(CompactionPanel), "a later plan started the cancelled run"
