"""``T`` then ``j`` and ``enter`` typed in one burst, before the timeline's rows are computed:
the keys move in the rows once they are there and jump to the second one (they were lost on
the empty table). ``escape`` does not wait for the rows: it closes the timeline at once."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from textual import events

from tests.ui.app_helpers import make_app, settle
from tui_compactor.engine import hindsight

pytestmark = pytest.mark.asyncio

SAMPLE = Path(__file__).resolve().parents[2] / "tui_compactor" / "data" / "sample-session.jsonl"


@pytest.mark.parametrize("size", [(80, 24), (200, 60)])
async def test_keys_typed_after_t_move_in_the_rows_once_they_are_computed(
    size: tuple[int, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    timeline = hindsight.compaction_timeline

    def slow(*args: Any, **kwargs: Any) -> Any:
        time.sleep(0.3)  # the keys arrive while the rows are computed
        return timeline(*args, **kwargs)

    monkeypatch.setattr(hindsight, "compaction_timeline", slow)
    app = make_app(SAMPLE)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        rows = timeline(app.session, app.counter, rules="pi")
        assert len(rows) >= 2
        for key, character in (("T", "T"), ("j", "j"), ("enter", "\r")):
            app.post_message(events.Key(key, character))
        await settle(pilot)
        assert app.selected_entry == rows[1].entry_index


async def test_escape_typed_after_t_closes_the_timeline_before_its_rows_are_computed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from tui_compactor.ui.screens.timeline import TimelineScreen

    timeline = hindsight.compaction_timeline

    def slow(*args: Any, **kwargs: Any) -> Any:
        time.sleep(2.0)  # a big session: the rows take a while
        return timeline(*args, **kwargs)

    monkeypatch.setattr(hindsight, "compaction_timeline", slow)
    app = make_app(SAMPLE)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        selected = app.selected_entry
        for key, character in (("T", "T"), ("j", "j"), ("escape", "\x1b")):
            app.post_message(events.Key(key, character))
        await pilot.pause(0.5)
        assert not isinstance(app.screen, TimelineScreen), "esc waited for the rows"
        await pilot.pause(2.0)
        await settle(pilot)
        assert not isinstance(app.screen, TimelineScreen)
        assert app.selected_entry == selected, "a key typed for the timeline moved the tree"
