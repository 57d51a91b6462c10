"""The dimmed screen under a dialog: the same segments as Textual's tint, each style tinted once."""

from __future__ import annotations

import pytest
from rich.segment import Segment
from textual._context import visible_screen_stack
from textual.renderables.background_screen import BackgroundScreen

from tests.ui.app_helpers import SIZE, TREE_COMPACTED, make_app, settle
from tui_compactor.ui.screens import tinted
from tui_compactor.ui.screens.confirm import ConfirmDialog
from tui_compactor.ui.widgets.status import SessionStatus


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


def _screen_text(app: object) -> str:
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())  # type: ignore[attr-defined]


@pytest.mark.asyncio
async def test_the_dimmed_screen_is_drawn_again_only_when_the_screen_beneath_changed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A repaint of the dialog that changes nothing beneath it (the screen beneath passes up a
    repaint as it is covered, a resize to the same size lays it out again) reuses the dimmed
    lines it drew; a change beneath (new text in the status line) is drawn under the dialog."""
    drawn: list[int] = []
    draw = tinted._TintedBackground.__rich_console__

    def counted(background: tinted._TintedBackground, *args: object) -> object:
        drawn.append(1)
        return draw(background, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(tinted._TintedBackground, "__rich_console__", counted)
    app = make_app(TREE_COMPACTED)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        main = app.screen
        app.push_screen(ConfirmDialog("Write it?"))
        await settle(pilot)
        dialog = app.screen
        assert isinstance(dialog, ConfirmDialog) and drawn
        drawn.clear()
        main.refresh()  # passed up to the dialog as a refreshed region
        dialog.refresh()
        await settle(pilot)
        await pilot.pause()
        assert not drawn, "drawn again though nothing beneath changed"
        status = main.query_one(SessionStatus)
        status.update("marker-beneath-the-dialog")
        await settle(pilot)
        await pilot.pause()
        assert drawn, "a change beneath was not drawn"
        assert "marker-beneath-the-dialog" in _screen_text(app)
        assert "Write it?" in _screen_text(app)
