"""The app says when an agent's later entry left one of our appends off the active path."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.session.test_agents import orphaned_session
from tests.ui.app_helpers import make_app, settle

SIZE = (100, 30)


@pytest.fixture
def orphaned(tmp_path: Path) -> tuple[Path, str]:
    """Built outside the app's event loop (``compact`` runs its own)."""
    return orphaned_session(tmp_path / "s.jsonl")


@pytest.mark.asyncio
async def test_app_reports_an_orphaned_append_with_the_fix(orphaned: tuple[Path, str]) -> None:
    path, ours = orphaned
    app = make_app(path)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(pilot)
        messages = [n.message for n in app._notifications]
        titles = [n.title for n in app._notifications]
        assert "an agent left our entry behind" in titles
        text = " ".join(messages)
        assert ours in text and f"--to {ours}" in text
