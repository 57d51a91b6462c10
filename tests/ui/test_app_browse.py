"""Pilot tests of the main screen: open, browse, filter, search, fold, jump, bad files."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.ui.app_helpers import (
    BAD,
    SIZE,
    TREE_BRANCHES,
    TREE_COMPACTED,
    make_app,
    raised_notes,
    settle,
)
from tui_compactor.engine.context import build_context, estimate_context_tokens
from tui_compactor.session.reader import load_session
from tui_compactor.ui.messages import GaugeReady
from tui_compactor.ui.widgets.details import EntryDetails
from tui_compactor.ui.widgets.gauge import ContextGauge
from tui_compactor.ui.widgets.tree import SessionTree

pytestmark = pytest.mark.asyncio


def tree_of(app) -> SessionTree:  # type: ignore[no-untyped-def]
    """The session tree widget."""
    return app.query_one(SessionTree)


def screen_text(app) -> str:  # type: ignore[no-untyped-def]
    """Every character on the screen, line by line (what a user sees, without colours)."""
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


async def test_open_shows_tree_cursor_on_leaf_and_gauge_matches_engine() -> None:
    app = make_app(TREE_BRANCHES)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        session = app.session
        tree = tree_of(app)
        assert session is not None and session.complete
        assert len(tree.rows) > 0
        assert tree.cursor_entry == session.leaf
        # The gauge shows the engine's estimate of the context at the leaf.
        expected = estimate_context_tokens(build_context(session, session.leaf), app.counter)
        assert app.gauge_data is not None
        assert app.gauge_data.entry_index == session.leaf
        assert app.gauge_data.tokens == expected.tokens
        # Per-row token counts were computed by the worker for message entries.
        assert tree.token_counts[session.leaf] == app.token_cache.entry_tokens(session.leaf)
        text = screen_text(app)
        assert "tree-branches.jsonl" in text
        assert "◆ leaf" in text
        assert str(Path(TREE_BRANCHES).parent) not in text  # only the file name, never the path


async def test_browse_moves_cursor_and_details_follow() -> None:
    app = make_app(TREE_BRANCHES)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        tree = tree_of(app)
        await pilot.press("g")
        await settle(pilot)
        assert tree.cursor == 0
        first = tree.rows[0].index
        assert app.selected_entry == first
        await pilot.press("j", "j")
        await settle(pilot)
        assert tree.cursor == 2
        assert app.selected_entry == tree.rows[2].index
        assert app.gauge_data is not None and app.gauge_data.entry_index == tree.rows[2].index
        assert app.query_one(EntryDetails).shown_entry == tree.rows[2].index
        entry = app.session.entries[tree.rows[2].index]
        assert f"#{entry.index}  line {entry.line}" in screen_text(app)
        await pilot.press("G")
        await settle(pilot)
        assert tree.cursor == len(tree.rows) - 1


async def test_filters_cycle_and_hide_tool_results() -> None:
    app = make_app(TREE_BRANCHES)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        session = app.session
        default_rows = len(tree_of(app).rows)
        await pilot.press("f")  # no tools
        await settle(pilot)
        assert app.filter_name == "no tools"
        rows = tree_of(app).rows
        assert all(session.entries[row.index].role != "toolResult" for row in rows)
        assert len(rows) < default_rows
        await pilot.press("f")  # user only
        await settle(pilot)
        assert app.filter_name == "user only"
        shown = [r.index for r in tree_of(app).rows if r.index != session.leaf]  # leaf always
        assert shown and {session.entries[i].role for i in shown} == {"user"}
        await pilot.press("F", "F")  # back to default
        await settle(pilot)
        assert app.filter_name == "default"
        assert len(tree_of(app).rows) == default_rows


@pytest.mark.parametrize("keys", ["f", "ff"])  # no tools, user only
async def test_a_filter_that_hides_the_cursors_entry_leaves_it_on_its_nearest_shown_ancestor(
    keys: str,
) -> None:
    app = make_app(TREE_BRANCHES)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        session = app.session
        tree = tree_of(app)
        tools = [r.index for r in tree.rows if session.entries[r.index].role == "toolResult"]
        tool = tools[len(tools) // 2]  # a tool result in the middle of the rows
        assert tree.move_to_entry(tool)
        await settle(pilot)
        await pilot.press(*keys)
        await settle(pilot)
        shown = session.parent_of(tool)
        while shown is not None and shown not in tree.row_of_entry:
            shown = session.parent_of(shown)
        assert shown is not None and tree.cursor_entry == shown
        assert app.selected_entry == shown


async def test_search_finds_marks_and_cycles_matches() -> None:
    app = make_app(TREE_BRANCHES)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("slash")
        await pilot.press(*"changelog")
        await pilot.press("enter")
        await settle(pilot)
        tree = tree_of(app)
        assert tree.search_matches, "CHANGELOG is mentioned in the fixture"
        first = tree.cursor_entry
        assert first in tree.search_matches
        await pilot.press("n")
        await settle(pilot)
        second = tree.cursor_entry
        assert second in tree.search_matches
        if len([r for r in tree.rows if r.index in tree.search_matches]) > 1:
            assert second != first
        await pilot.press("N")
        await settle(pilot)
        assert tree.cursor_entry == first


async def test_fold_and_unfold_a_branch_point() -> None:
    app = make_app(TREE_BRANCHES)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        tree = tree_of(app)
        before = len(tree.rows)
        await pilot.press("g", "b")  # first branch point
        await settle(pilot)
        row = tree.rows[tree.cursor]
        assert row.is_branch_point
        await pilot.press("space")
        await settle(pilot)
        assert len(tree.rows) < before
        folded_row = tree.rows[tree.cursor]
        assert folded_row.index == row.index and folded_row.folded
        await pilot.press("space")
        await settle(pilot)
        assert len(tree.rows) == before


async def test_jump_to_leaf_parent_and_branch_points() -> None:
    app = make_app(TREE_BRANCHES)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        session = app.session
        tree = tree_of(app)
        await pilot.press("g")
        await settle(pilot)
        await pilot.press("l")
        await settle(pilot)
        assert tree.cursor_entry == session.leaf
        await pilot.press("p")
        await settle(pilot)
        assert tree.cursor_entry == session.entries[session.leaf].parent
        await pilot.press("g", "b")
        await settle(pilot)
        assert tree.rows[tree.cursor].is_branch_point


async def test_chart_follows_active_path_with_compaction_marks() -> None:
    app = make_app(TREE_COMPACTED)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        from tui_compactor.ui.widgets.chart import ContextChart

        chart = app.query_one(ContextChart)
        assert chart.points, "assistant turns with usage on the active path"
        path = set(app.session.path_to(app.session.leaf))
        assert all(index in path for index, _ in chart.points)
        compactions_on_path = [i for i in path if app.session.entries[i].type == "compaction"]
        assert len(chart.compactions) == len(compactions_on_path)


@pytest.mark.parametrize(
    "name", ["control-characters-and-ansi-escapes.jsonl", "prompt-injection-in-tool-output.jsonl"]
)
async def test_hostile_text_renders_as_text(name: str) -> None:
    app = make_app(BAD / name)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        tree = tree_of(app)
        assert tree.rows
        await pilot.press("g", "j")  # details of a hostile entry on screen too
        await settle(pilot)
        text = screen_text(app)
        assert "\x1b" not in text and "\x07" not in text
        for position in range(len(tree.rows)):
            row_text = tree.row_text(position, 100).plain
            assert "\x1b" not in row_text
            assert all(ord(ch) >= 0x20 for ch in row_text)


async def test_bad_files_open_without_crashing() -> None:
    """Every file of the bad corpus opens in one running app, one after the other."""
    names = sorted(path.name for path in BAD.glob("*.jsonl"))
    assert len(names) > 20
    app = make_app(BAD / names[0])
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        for name in names:
            app.open_session(BAD / name)
            await settle(pilot)
            assert app.session is not None and app.session.path.name == name
            reference = load_session(BAD / name)
            assert len(app.session.entries) == len(reference.entries), name
            tree = tree_of(app)
            # Every row renders; nothing raises.
            for position in range(min(len(tree.rows), 200)):
                tree.row_text(position, 80)
            await pilot.press("G", "c")
            await settle(pilot)
            banner = app.query_one("#banner")
            assert banner.has_class("-shown") == bool(reference.append_refusal), name


async def test_diff_tab_compares_a_compaction_with_the_previous_one() -> None:
    from tui_compactor.ui.widgets.summary_diff import SummaryDiff

    app = make_app(TREE_COMPACTED)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        session = app.session
        compactions = [
            i for i in session.path_to(session.leaf) if session.entries[i].type == "compaction"
        ]
        assert len(compactions) >= 2
        tree_of(app).move_to_entry(compactions[-1])
        await settle(pilot)
        await pilot.press("4")
        await settle(pilot)
        diff = app.query_one(SummaryDiff)
        assert diff.previous == session.entries[compactions[-2]].data["summary"]
        assert diff.updated == session.entries[compactions[-1]].data["summary"]


async def test_another_file_plans_at_its_own_entries_never_the_last_files() -> None:
    """The cursor, the selection and the plan belong to the file shown: after ``G`` on a long
    file, another (empty, then short) file opened in the same app plans at its own entries
    (the selection kept the last file's entry index: ``c`` planned at it, out of range)."""
    app = make_app(TREE_COMPACTED)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("G", "c")
        await settle(pilot)
        assert app.plan is not None and app.plan.leaf == app.selected_entry
        for name in ("empty-file.jsonl", "missing-parent.jsonl"):
            app.open_session(BAD / name)
            await settle(pilot)
            session = app.session
            assert session is not None and session.path.name == name
            tree = tree_of(app)
            assert app.selected_entry == tree.cursor_entry == session.leaf, name
            assert app.state.plan_leaf is None and app.plan is None, name
            # The details pane shows this file's entry, or says there is none.
            details = app.query_one(EntryDetails)
            assert details.shown_entry == session.leaf, name
            if session.leaf is None:
                await pilot.press("1")  # the Details tab (c showed the Plan's)
                await settle(pilot)
                assert details.shown_text() == "no entries in this file", name
                # The gauge says so too, not the last file's context.
                assert app.query_one(ContextGauge).data is None and app.gauge_data is None, name
            # The plan of the last file does not come back with the budget's next edit.
            app._apply_settings()
            await pilot.press("c")
            await settle(pilot)
            if session.leaf is not None:
                assert app.plan is not None and app.plan.leaf == session.leaf, name
        assert not [note for note in raised_notes(app) if "Error" in note]


async def test_a_key_right_after_a_move_acts_on_the_entry_under_the_cursor() -> None:
    """``c`` handled before the tree's ``Highlighted`` of the move just made (a burst such as
    ``k c``) plans at the entry under the cursor, not at the one the panes still show."""
    app = make_app(TREE_COMPACTED)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        tree = tree_of(app)
        shown = app.state.selected_entry
        tree.action_cursor_up()  # no message is handled between the move and the key
        app.action_plan()
        assert tree.cursor_entry != shown
        assert app.state.plan_leaf == tree.cursor_entry
        await settle(pilot)
        assert app.plan is not None and app.plan.leaf == tree.cursor_entry


async def test_a_gauge_measured_on_the_file_loaded_before_is_not_shown() -> None:
    """A measure finishing after the file was loaded again (``R``) belongs to the old load:
    dropped even though it is of the entry under the cursor."""
    app = make_app(TREE_COMPACTED)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        old = app.state.gauge_data
        assert old is not None and old.entry_index == app.selected_entry
        app.action_reload()
        await settle(pilot)
        assert app.selected_entry == old.entry_index
        gauge = app.query_one(ContextGauge)
        fresh = gauge.data
        assert fresh is not None and fresh is not old
        app.post_message(GaugeReady(old))
        await settle(pilot)
        assert gauge.data is fresh and app.state.gauge_data is fresh


async def test_a_failure_after_the_index_is_reported_and_releases_what_waits(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Anything the loading worker decides after the index (settings, orphaned appends, the
    rows) failing is said as a failed open, and what waits for the whole file is released,
    instead of a loading bar that never ends."""
    from tui_compactor.session import agents

    def broken(session: object) -> list[object]:
        raise RuntimeError("orphan check broke")

    monkeypatch.setattr(agents, "orphaned_appends", broken)
    app = make_app(TREE_COMPACTED)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.state.whole_screen.is_set()
        notes = raised_notes(app)
        assert any("orphan check broke" in note for note in notes), notes
