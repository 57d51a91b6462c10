"""A bad ``TUI_COMPACTOR_*`` variable is shown by the app, never silently ignored.

Real parts: a fixture file copied to a temp dir and the real session reader."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.ui.app_helpers import TREE_COMPACTED, copy_fixture, make_app, raised_notes, settle

pytestmark = pytest.mark.asyncio


async def test_a_bad_memory_limit_variable_is_shown_not_ignored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = copy_fixture(TREE_COMPACTED, tmp_path)
    monkeypatch.setenv("TUI_COMPACTOR_MEMORY_LIMIT_MB", "-5")
    app = make_app(path)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        assert any(
            "environment variable TUI_COMPACTOR_MEMORY_LIMIT_MB: memory_limit_mb: Input should be"
            " greater than or equal to 0" in note
            for note in raised_notes(app)
        )
        assert app.session is not None and not app.session.entries
