"""The details pane follows the cursor without laying the screen out again, and shows every
line of the entry (scrolled to its end, the last line is on screen)."""

from __future__ import annotations

import pytest

from tests.ui.app_helpers import SIZE, TREE_BRANCHES, count_layouts, make_app, settle
from tui_compactor.ui.widgets.details import EntryDetails
from tui_compactor.ui.widgets.tree import SessionTree

pytestmark = pytest.mark.asyncio


async def test_cursor_moves_show_each_entry_without_a_layout(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    app = make_app(TREE_BRANCHES)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        tree = app.query_one(SessionTree)
        details = app.query_one(EntryDetails)
        await pilot.press("g")
        await settle(pilot)
        layouts = count_layouts(monkeypatch)
        heights: set[int] = set()
        for _ in range(8):
            await pilot.press("j")
            await settle(pilot)
            entry = tree.cursor_entry
            assert entry is not None and details.shown_entry == entry
            shown = details.shown_text()
            assert f"  #{entry}  line " in shown.splitlines()[0]
            heights.add(len(shown.splitlines()))
        assert len(heights) > 1, "the entries shown differ in height"
        assert layouts == [], "a cursor move laid the screen out again"


async def test_a_long_entry_scrolls_to_its_last_line() -> None:
    app = make_app(TREE_BRANCHES)
    async with app.run_test(size=(120, 20)) as pilot:
        await settle(pilot)
        tree = app.query_one(SessionTree)
        details = app.query_one(EntryDetails)
        session = app.session
        assert session is not None
        longest = max(
            (row.index for row in (tree.rows[p] for p in range(len(tree.rows)))),
            key=lambda index: len(str(session.entries[index].data)),
        )
        tree.move_to_entry(longest)
        await settle(pilot)
        lines = details.shown_text().splitlines()
        assert len(lines) > details.size.height, "the entry is taller than the pane"
        details.focus()
        await pilot.press("end")
        await settle(pilot)
        shot = "\n".join(strip.text for strip in app.screen._compositor.render_strips())
        last = next(line for line in reversed(lines) if line.strip())
        assert last.strip() in shot
        assert lines[0].strip() not in shot


async def test_a_hidden_pane_renders_nothing_until_it_has_a_width(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Another tab shown, the cursor moves: the details pane renders no lines (at a made-up
    width) until it is shown again, and then renders them at its own width."""
    from textual.visual import Visual

    app = make_app(TREE_BRANCHES)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        details = app.query_one(EntryDetails)
        tree = app.query_one(SessionTree)
        await pilot.press("3")  # the Plan tab
        await settle(pilot)
        widths: list[int] = []
        to_strips = Visual.to_strips

        def recording(widget: object, visual: object, width: int, *args: object) -> object:
            if widget is details:
                widths.append(width)
            return to_strips(widget, visual, width, *args)  # type: ignore[arg-type]

        monkeypatch.setattr(Visual, "to_strips", staticmethod(recording))
        shown_before = details.shown_entry
        await pilot.press("k")  # up: the cursor starts on the leaf, the last row
        await settle(pilot)
        entry = tree.cursor_entry
        assert entry is not None and details.shown_entry == entry != shown_before
        assert details.shown_text() == "" and widths == []
        await pilot.press("1")  # the Details tab
        await settle(pilot)
        assert f"  #{entry}  line " in details.shown_text().splitlines()[0]
        assert widths and set(widths) == {details.scrollable_content_region.width}
