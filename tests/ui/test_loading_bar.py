"""The indexing bar: its label keeps its width while the entry count grows, so a progress
report redraws the bar without laying the whole screen out again; the row it takes from the
tree never hides the tree's cursor row."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.app import App, ComposeResult
from textual.screen import Screen
from textual.widgets import Label

from tests.session.test_preview import big_session
from tests.ui.app_helpers import make_app, settle
from tui_compactor.ui.widgets.status import LoadingBar
from tui_compactor.ui.widgets.tree import SessionTree


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


@pytest.mark.asyncio
async def test_the_bar_taking_a_row_never_hides_the_trees_cursor_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cursor on the tree's last row shown, the bar appears and the tree loses a row: the
    tree scrolls as it is laid out at its new height, so every frame drawn at that height
    shows the cursor row. (Scrolling when a ``Resize`` arrives is too late for the frame the
    layout draws, and Textual does not always send one: a size read while the layout waits
    maps the new layout early, and then the tree does not count as resized.)"""
    app = make_app(big_session(tmp_path / "s.jsonl", 300))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        tree = app.query_one(SessionTree)
        bar = app.query_one(LoadingBar)
        last = len(tree.rows) - 1
        assert tree.cursor == last and tree.container_size.height == 38
        frames: list[tuple[int, int]] = []  # (first row shown, rows shown) at each frame
        real_refresh = Screen._compositor_refresh

        def drawn(screen: Screen[Any]) -> None:
            _ = tree.size  # widgets read their sizes as frames are drawn
            frames.append((int(tree.scroll_y), tree.container_size.height))
            real_refresh(screen)

        monkeypatch.setattr(Screen, "_compositor_refresh", drawn)
        bar.showing_tail(5)
        await settle(pilot)
        assert bar.has_class("-shown") and tree.cursor == last
        shorter = [top for top, height in frames if height == 37]
        assert shorter, frames
        assert all(top <= last < top + 37 for top in shorter), frames
