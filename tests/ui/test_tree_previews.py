"""The tree of a lazily read session reads the previews of the rows it draws in a thread: the
UI thread never waits for the file, and every row on screen ends up with its preview."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from tests.ui.app_helpers import SIZE, TREE_BRANCHES, make_app, settle
from tui_compactor.ui.widgets import tree as tree_module
from tui_compactor.ui.widgets.tree import SessionTree
from tui_compactor.workbench.preview import entry_preview

pytestmark = pytest.mark.asyncio


async def test_rows_of_a_lazily_read_session_get_their_previews_off_the_ui_thread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import tui_compactor.session.reader as reader

    monkeypatch.setattr(reader, "LAZY_THRESHOLD", 0)
    threads: list[str] = []

    def recorded(entry: Any, *args: Any, **kwargs: Any) -> str:
        threads.append(threading.current_thread().name)
        return entry_preview(entry, *args, **kwargs)

    monkeypatch.setattr(tree_module, "entry_preview", recorded)
    app = make_app(TREE_BRANCHES)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        session = app.session
        assert session is not None and session._lazy is not None
        tree = app.query_one(SessionTree)
        for key in ("g", "G"):  # the first screenful, then the last
            await pilot.press(key)
            await settle(pilot)
            top = int(tree.scroll_y)
            shown = range(top, min(top + tree.size.height, len(tree.rows)))
            width = tree.scrollable_content_region.width
            drawn = [tree.render_line(y).text for y in range(len(shown))]
            # Each drawn row is the row with its preview read (``row_text`` reads it at once).
            assert drawn == [tree.row_text(position, width).plain for position in shown]
        assert threads, "previews were read"
        main = threading.main_thread().name
        assert main not in threads, "a row's preview was read on the UI thread"
