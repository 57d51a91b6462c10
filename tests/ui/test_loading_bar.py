"""The indexing bar: its label keeps its width while the entry count grows, so a progress
report redraws the bar without laying the whole screen out again."""

from __future__ import annotations

import pytest
from textual.app import App, ComposeResult
from textual.widgets import Label

from tui_compactor.ui.widgets.status import LoadingBar


class _BarApp(App[None]):
    def compose(self) -> ComposeResult:
        yield LoadingBar()


@pytest.mark.asyncio
async def test_the_label_keeps_its_width_while_the_count_grows() -> None:
    app = _BarApp()
    async with app.run_test(size=(120, 5)) as pilot:
        bar = app.query_one(LoadingBar)
        bar.showing_tail(226)
        await pilot.pause()
        label = bar.query_one("#loading-label", Label)
        widths = []
        for entries in (0, 9, 4_512, 10_000, 99_999, 100_000):
            bar.advance(entries * 2_000, 200_000_000, entries)
            await pilot.pause()
            widths.append(label.size.width)
            assert f"indexing {entries:,} " in str(label.render())
        assert len(set(widths)) == 1, widths
