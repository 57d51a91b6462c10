"""The dimmed screen under a dialog: the same segments as Textual's tint, each style tinted once."""

from __future__ import annotations

import pytest
from rich.segment import Segment
from textual._context import visible_screen_stack
from textual.renderables.background_screen import BackgroundScreen

from tests.ui.app_helpers import SIZE, TREE_COMPACTED, make_app, settle
from tui_compactor.ui.screens import tinted
from tui_compactor.ui.screens.confirm import ConfirmDialog


@pytest.mark.asyncio
async def test_the_screen_under_a_dialog_is_tinted_as_textual_tints_it_once_per_style() -> None:
    app = make_app(TREE_COMPACTED)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.push_screen(ConfirmDialog("Write it?"))
        await settle(pilot)
        dialog = app.screen
        visible_screen_stack.set(list(app._background_screens))  # as the compositor does
        background = dialog.render()
        assert isinstance(background, BackgroundScreen), "the main screen shows under it"
        options = app.console.options.update_dimensions(*SIZE)
        segments = list(app.console.render(background.screen._compositor, options))
        assert len(segments) > 200
        ours = list(app.console.render(background, options))
        textual = list(BackgroundScreen.process_segments(segments, background.color))
        assert ours == textual, "the same cells, colours and styles as Textual's tint"

        tinted._tinted.cache_clear()
        list(app.console.render(background, options))
        styles = {
            segment.style.clear_meta_and_links() if segment.style else None
            for segment in segments
            if not segment.control
        }
        assert tinted._tinted.cache_info().misses == len(styles) < len(segments) / 4
        list(app.console.render(background, options))
        assert tinted._tinted.cache_info().misses == len(styles), "tinted once per style"
        assert all(isinstance(segment, Segment) for segment in ours)
