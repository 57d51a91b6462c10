"""Notes raised together at 80x24 keep to the lower half of the screen: equal notes are shown
once, older and less severe ones make room, the newest and the errors stay."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.geometry import Size
from textual.notifications import Notification

from tests.ui.app_helpers import TREE_COMPACTED, copy_fixture, make_app, settle
from tui_compactor.ui.toasts import toast_rows, toasts_to_drop

pytestmark = pytest.mark.asyncio


def shown_toasts(app) -> list[tuple[str, int, int]]:  # type: ignore[no-untyped-def]
    """(text, top row, bottom row) of each toast on screen."""
    return [
        (str(toast.render()), toast.region.y, toast.region.bottom)
        for toast in app.screen.query("Toast")
    ]


async def test_several_notes_at_80x24_keep_to_the_lower_half(tmp_path: Path) -> None:
    app = make_app(copy_fixture(TREE_COMPACTED, tmp_path))
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await settle(pilot)
        app.clear_notifications()
        app.notify("the table could not be loaded", title="tokens", severity="error", timeout=60)
        for number in range(6):
            app.notify(f"note number {number} about something", title="note", timeout=60)
        app.notify("note number 5 about something", title="note", timeout=60)  # again
        await settle(pilot)
        toasts = shown_toasts(app)
        texts = " ".join(text for text, _, _ in toasts)
        assert all(top >= 24 // 2 for _, top, _ in toasts), toasts
        assert "the table could not be loaded" in texts, "the error made room for nothing"
        assert texts.count("note number 5") == 1, "an equal note is shown once"
        assert "note number 0" not in texts, "the oldest information made room"
        assert 2 <= len(toasts) < 8


async def test_one_note_is_shown_whatever_its_size() -> None:
    new = Notification("x" * 2000, "long", "information", 5)
    assert toasts_to_drop([], new, Size(80, 24)) == []
    old = Notification("short", "", "information", 5)
    assert toasts_to_drop([old], new, Size(80, 24)) == [old]
    assert toast_rows(old, Size(80, 24)) == 4
    error = Notification("short", "", "error", 5)
    assert toasts_to_drop([error], new, Size(80, 24)) == [], "an error made room for a note"


async def test_an_error_is_not_dropped_by_a_less_severe_note_at_80x24(tmp_path: Path) -> None:
    """A write's failure stays on screen when the file's next note (new entries) arrives: a
    note never makes room by taking away one more severe than itself."""
    app = make_app(copy_fixture(TREE_COMPACTED, tmp_path))
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await settle(pilot)
        app.clear_notifications()
        failure = (
            "compaction failed: nothing written. The session file changed on disk while the "
            "summary ran (another process appended 3 entries); accept again to plan against "
            "the new leaf, or discard the review. Nothing was appended to the file."
        )
        app.notify(failure, title="write", severity="error", timeout=60)
        app.notify("3 new entries", title="follow", timeout=60)
        await settle(pilot)
        texts = " ".join(text for text, _, _ in shown_toasts(app))
        assert "compaction failed" in texts, "the error was dropped by an information note"
        assert "3 new entries" in texts
        # an error of its own still makes room for a newer error
        app.notify("read-only: nothing written " * 12, title="write", severity="error", timeout=60)
        await settle(pilot)
        texts = " ".join(text for text, _, _ in shown_toasts(app))
        assert "read-only" in texts
