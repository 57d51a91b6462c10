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


async def test_a_filter_and_back_reads_no_preview_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """Previews belong to entries, not rows: after a filter and back to the same rows, every
    row on screen shows its preview without a read (no placeholder frame, no second redraw)."""
    import tui_compactor.session.reader as reader

    monkeypatch.setattr(reader, "LAZY_THRESHOLD", 0)
    read: list[int] = []

    def recorded(entry: Any, *args: Any, **kwargs: Any) -> str:
        read.append(entry.index)
        return entry_preview(entry, *args, **kwargs)

    monkeypatch.setattr(tree_module, "entry_preview", recorded)
    app = make_app(TREE_BRANCHES)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        tree = app.query_one(SessionTree)
        width = tree.scrollable_content_region.width
        before = [tree.render_line(y).text for y in range(tree.size.height)]
        assert read, "the first screenful's previews were read"
        read.clear()
        await pilot.press("f")
        await settle(pilot)
        await pilot.press("F")
        await settle(pilot)
        drawn = [tree.render_line(y).text for y in range(tree.size.height)]
        assert drawn == before
        top = int(tree.scroll_y)
        shown = range(top, min(top + tree.size.height, len(tree.rows)))
        assert drawn[: len(shown)] == [tree.row_text(p, width).plain for p in shown]
        assert read == [], "no preview was read again"


async def test_the_tree_draws_under_the_rules_the_app_gives_without_asking_per_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The rules are decided where the settings change, not per drawn row: drawing every row
    of the tree reads no settings, and after ``o`` the compaction an extension wrote is named
    under the new rules in the very next drawing of its row, before the outline is rebuilt."""
    from tests.ui.app_helpers import TREE_COMPACTED
    from tui_compactor.ui.app import CompactorApp

    app = make_app(TREE_COMPACTED)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        tree = app.query_one(SessionTree)
        assert app.session is not None
        index = next(e.index for e in app.session.entries if e.id == "b770d0dd")
        tree.move_cursor(tree.row_of_entry[index], center=True)
        await settle(pilot)
        reads: list[str] = []
        settings = CompactorApp.settings

        def counted(host: Any) -> Any:
            reads.append("settings")
            return settings.fget(host)  # type: ignore[misc]

        monkeypatch.setattr(CompactorApp, "settings", property(counted, settings.fset))
        tree.forget_previews()
        width = tree.scrollable_content_region.width
        for position in range(len(tree.rows)):
            tree.row_text(position, width)
        for y in range(tree.size.height):
            tree.render_line(y)
        assert reads == [], "drawing the tree asked the app for its settings"
        monkeypatch.undo()

        def drawn_row() -> str:
            y = tree.row_of_entry[index] - int(tree.scroll_y)
            return tree.render_line(y).text

        assert "extension · 24,873" in drawn_row()
        rebuilt: list[bool] = []
        monkeypatch.setattr(tree, "set_rows", lambda *args, **kw: rebuilt.append(True))
        app.action_toggle_rules()
        assert app.settings.rules == "omp" and not rebuilt
        assert "24,873 tokens before" in drawn_row()
        assert "extension" not in drawn_row()


async def test_previews_read_redraw_only_the_rows_that_waited_for_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Previews read for the rows of one screenful redraw those rows only: after ``G``, ``g``
    (whose rows wait for their previews) and ``G`` again, the last screenful is drawn from
    the strips it had, with its previews, and no row is built again."""
    import tui_compactor.session.reader as reader

    monkeypatch.setattr(reader, "LAZY_THRESHOLD", 0)
    app = make_app(TREE_BRANCHES)
    async with app.run_test(size=(120, 14)) as pilot:
        await settle(pilot)
        tree = app.query_one(SessionTree)
        assert len(tree.rows) > 2 * tree.size.height, "the first and last screenfuls differ"
        await pilot.press("G")
        await settle(pilot)
        last = [tree.render_line(y).text for y in range(tree.size.height)]
        top = int(tree.scroll_y)
        width = tree.scrollable_content_region.width
        assert last == [tree.row_text(p, width).plain for p in range(top, len(tree.rows))]
        await pilot.press("g")
        await settle(pilot)
        built: list[int] = []
        row_strip = tree._row_strip

        def recorded(position: int, width: int, is_cursor: bool) -> Any:
            built.append(position)
            return row_strip(position, width, is_cursor)

        monkeypatch.setattr(tree, "_row_strip", recorded)
        await pilot.press("G")
        await settle(pilot)
        assert [tree.render_line(y).text for y in range(tree.size.height)] == last
        assert built == [], "rows drawn with their previews were built again"
