"""What the user sees stays right when views are drawn cheaply: rapid keys, dimmed stale panes."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from rich.segment import Segment
from rich.text import Text
from textual import events
from textual.strip import Strip
from textual.widgets import Static

from tests.ui.app_helpers import (
    SIZE,
    TREE_BRANCHES,
    count_layouts,
    make_app,
    plan_with_earlier_cuts,
    settle,
)
from tui_compactor.ui.widgets.context_view import BlockList
from tui_compactor.ui.widgets.labels import format_tokens
from tui_compactor.ui.widgets.plan_view import PlanView, settings_text
from tui_compactor.ui.widgets.redraw import SHRINK_AFTER
from tui_compactor.ui.widgets.tree import SessionTree

pytestmark = pytest.mark.asyncio

SAMPLE = Path(__file__).resolve().parents[2] / "tui_compactor" / "data" / "sample-session.jsonl"
REAL = Path(__file__).resolve().parents[1] / "fixtures" / "sessions" / "refactor-session-v3.jsonl"


def screen_text(app: Any) -> str:
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


def _pane_text(app: object) -> str:
    return str(app.query_one("#plan-text", Static).render())  # type: ignore[attr-defined]


async def test_rapid_cut_moves_end_on_the_plan_of_the_last_key() -> None:
    """Keys pressed faster than plans arrive each step one valid cut further; the plan, the
    tree's cut mark and the pane all end on the last key's cut."""
    app = make_app(SAMPLE)
    async with app.run_test(size=SIZE) as pilot:
        _, cuts, position = await plan_with_earlier_cuts(pilot, 5)
        for _ in range(5):
            app.action_cut_earlier()  # no await: none of these plans has arrived yet
        app.action_cut_later()
        assert "planning at" in _pane_text(app), "the pane says a new plan is coming"
        await settle(pilot)
        plan = app.plan
        assert plan is not None and plan.first_kept_index == cuts[position - 4]
        cut_entry = plan.branch[plan.first_kept_index]
        assert app.query_one(SessionTree).cut_entry == cut_entry
        text = _pane_text(app)
        assert f"cut before #{cut_entry} " in text
        assert "planning at" not in text


async def test_cut_keys_typed_ahead_make_one_plan_at_the_last_cut_as_the_cli_plans_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Cut keys typed while a plan is being made, or before the plan they move, make one more
    plan: at the last key's cut (not one per key), the plan ``plan --cut`` makes there."""
    import json
    import subprocess
    import sys
    import threading

    import tui_compactor.ui.app as app_module

    app = make_app(SAMPLE)
    asked: list[int | None] = []
    plan_report = app_module.plan_report
    release = threading.Event()
    release.set()

    def recording(snapshot: Any, leaf: int, settings: Any, cut: int | None, *rest: Any) -> Any:
        asked.append(cut)
        release.wait(10)  # a plan that takes a while (a big session)
        return plan_report(snapshot, leaf, settings, cut, *rest)

    monkeypatch.setattr(app_module, "plan_report", recording)
    async with app.run_test(size=SIZE) as pilot:
        _, cuts, position = await plan_with_earlier_cuts(pilot, 5)
        branch = app.plan.branch
        asked.clear()
        release.clear()
        # One key at a time, each handled while the first key's plan is still being made.
        for key in ["left_square_bracket"] * 5 + ["right_square_bracket"]:
            await pilot.press(key)
        release.set()
        await settle(pilot)
        assert asked == [branch[cuts[position - 1]], branch[cuts[position - 4]]]
        assert app.plan.first_kept_index == cuts[position - 4]
        asked.clear()
        # The default cut again, and four keys typed before that plan arrives.
        app.post_message(events.Key("c", "c"))
        for _ in range(4):
            app.post_message(events.Key("left_square_bracket", "["))
        await settle(pilot)
        assert asked == [None, branch[cuts[position - 4]]]
        plan, session = app.plan, app.session
        leaf_id = session.entries[plan.leaf].id
        cut_id = session.entries[branch[plan.first_kept_index]].id
        settings = app.settings
    result = subprocess.run(
        [sys.executable, "-m", "tui_compactor", "plan", str(SAMPLE), "--leaf", leaf_id,
         "--cut", cut_id, "--tokens", settings.tokens, "--rules", settings.rules, "--json"],
        capture_output=True, check=False,
    )  # fmt: skip
    (cli_plan,) = json.loads(result.stdout)["plans"]
    assert cli_plan["firstKeptEntryId"] == cut_id
    assert cli_plan["tokensBefore"] == plan.tokens_before
    assert cli_plan["firstKeptEntryIndex"] == branch[plan.first_kept_index]


async def test_the_last_plan_stays_dimmed_while_the_next_is_made() -> None:
    """While a plan is made the pane keeps the previous one (same rows, nothing jumps) under
    a "planning" title; a cleared plan says how to make one."""
    app = make_app(SAMPLE)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        view = app.query_one(PlanView)
        shown = view.plan_text
        assert shown is not None
        view.show_planning("planning at #1…")
        pending = app.query_one("#plan-text", Static).render()
        lines = str(pending).split("\n")
        assert lines[0] == "planning at #1…"
        assert lines[1:] == shown.plain.split("\n")[1:]
        await pilot.press("escape")  # clears the plan
        await settle(pilot)
        assert view.plan_text is None
        assert "press c" in _pane_text(app)


async def test_the_first_plan_and_its_sweep_repaint_the_pane_in_rows_kept_for_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """While the first plan is made the pane keeps rows for it, its sweep (with the
    dependencies crossing the cut listed) and where its settings came from: when they arrive
    each is drawn in its rows, without laying the screen out again, and the pane shows them."""
    from tui_compactor.ui.widgets import redraw

    # The pane gives the rows it kept back once its updates pause (``SHRINK_AFTER``): this
    # test looks at the repaints before that, however slowly the machine runs it.
    monkeypatch.setattr(redraw, "SHRINK_AFTER", 600.0)
    app = make_app(REAL)
    async with app.run_test(size=(120, 60)) as pilot:
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        view = app.query_one(PlanView)
        text, sweep = view.plan_text, view.sweep
        assert text is not None and sweep is not None
        sources = settings_text(app.settings.plan_source_items())
        view.show_message("no plan")
        await settle(pilot)
        view.show_planning("planning at #1…")  # as for a first plan: rows kept
        await settle(pilot)
        layouts = count_layouts(monkeypatch)
        view.show_plan(text, sources)
        await pilot.pause()
        view.show_sweep(sweep)
        await pilot.pause()
        assert layouts == [], "the plan, its sources and its sweep fit the rows kept"
        shown = screen_text(app)
        assert "sweep over" in shown and "this cut:" in shown
        assert text.plain.split("\n")[0] in shown
        assert "keep-recent" in shown


async def test_the_sweep_is_laid_out_once_per_width(monkeypatch: pytest.MonkeyPatch) -> None:
    """The sweep (a table of the dependencies crossing the cut) is laid out once for the
    pane's width: measuring it, painting it, giving its reserved rows back and dimming it
    while the next one is made replay those lines, and they are the table's own."""
    from rich.console import Console, ConsoleOptions, RenderableType, RenderResult

    from tui_compactor.ui.widgets import analysis

    made: list[RenderableType] = []
    laid_out: list[int] = []

    class Counted:
        def __init__(self, inner: RenderableType) -> None:
            self.inner = inner

        def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
            laid_out.append(options.max_width)
            yield self.inner

    real = analysis.sweep_renderable

    def counted(sweep: Any, session: Any) -> Counted:
        made.append(real(sweep, session))
        return Counted(made[-1])

    monkeypatch.setattr(analysis, "sweep_renderable", counted)
    app = make_app(REAL)
    async with app.run_test(size=(120, 60)) as pilot:
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        await pilot.pause(0.6)  # the reserved rows are given back (redraw.SHRINK_AFTER)
        await settle(pilot)
        view = app.query_one(PlanView)
        view.show_sweeping("sweeping…")  # the sweep stays, dimmed
        await settle(pilot)
        assert len(made) == 1 and "sweep over" in screen_text(app)
        assert sorted(laid_out) == sorted(set(laid_out)), laid_out  # a scrollbar came or went
        pane = app.query_one("#plan-sweep")
        width = pane.content_size.width
        console = Console(width=width, file=io.StringIO(), legacy_windows=False)
        drawn = view._sweep_drawn
        assert console.render_lines(drawn, console.options) == console.render_lines(
            made[0], console.options
        )


async def test_context_rows_are_cut_as_rich_cuts_them() -> None:
    """The Context tab draws a block's row column by column (Rich measures a whole row of
    non-ASCII text grapheme by grapheme): the same cells and styles as the row's ``Text``
    cut by Rich, at every width, for wide, combining, emoji and plain text."""
    from rich.console import Console

    from tui_compactor.workbench.views import ContextBlocks

    previews = [
        "plain ascii preview that runs on " * 4,
        "中文预览，宽字符" * 6,
        "e\u0301 combining and ✓ — … marks " * 5,
        "emoji \U0001f469\u200d\U0001f4bb \U0001f389 " * 8,
        "",
        "x",
    ]
    labels = ["user", "summary ⚠", "tool:shaken", "branch", "asst", "bash"]
    blocks = ContextBlocks(
        [(label, preview, 10**i, None if i == 4 else 1234 * i)
         for i, (label, preview) in enumerate(zip(labels, previews, strict=True))]
    )  # fmt: skip
    app = make_app(SAMPLE)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("2")
        await settle(pilot)
        listing = app.query_one(BlockList)
        listing.show(blocks)
        console = Console(width=200, file=io.StringIO(), legacy_windows=False)

        def cells(segments: Any) -> list[Segment]:
            return [Segment(segment.text, segment.style or None) for segment in segments
                    if segment.text]  # fmt: skip

        for width in range(8, 90):
            for row in range(1, len(blocks) + 1):
                expected = list(listing._row_text(row, width).render(console))
                drawn = listing._row_strip(row, width)
                assert drawn.cell_length == width
                assert "".join(s.text for s in drawn) == "".join(s.text for s in expected)
                assert Strip(cells(drawn)).simplify() == Strip(cells(expected)).simplify(), (
                    width,
                    row,
                )


async def test_context_tab_lists_every_block_and_scrolls_to_the_last() -> None:
    """The Context tab lists every block of a long context (none summarized away), a header
    on top, rows drawn as they scroll into view."""
    app = make_app(SAMPLE)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("2")
        await settle(pilot)
        data = app.gauge_data
        assert data is not None
        listing = app.query_one(BlockList)
        assert listing.blocks == data.blocks
        assert len(data.blocks) > 2 * listing.size.height, "more blocks than a screenful"
        assert listing.render_line(0).text.split()[:4] == ["#", "block", "tokens", "text"]
        label, _, tokens, index = data.blocks[0]
        first = listing.render_line(1).text.split()
        assert first[:3] == [str(index), label, format_tokens(tokens)]
        listing.scroll_end(animate=False)
        await pilot.pause()
        label, _, tokens, index = data.blocks[-1]
        last = listing.render_line(listing.size.height - 1).text.split()
        assert last[:3] == [str(index), label, format_tokens(tokens)]
        title = str(app.query_one("#context-title", Static).render())
        assert f"{len(data.blocks)} blocks" in title


def _drawn_and_fresh(tree: SessionTree) -> tuple[list[str], list[str]]:
    """Every screen line of the tree as drawn now (from its strip cache where it can) and as
    drawn from scratch, with styles (a stale cached row would differ)."""

    def lines() -> list[str]:
        return ["".join(f"{segment.text}|{segment.style}" for segment in tree.render_line(y))
                for y in range(tree.size.height)]  # fmt: skip

    drawn = lines()
    tree._strip_cache.clear()
    return drawn, lines()


async def test_tree_rows_follow_plan_cut_sweep_and_search_marks() -> None:
    """Marks that change row by row (plan regions, the cut, the dependencies a cut there
    crosses, search matches) repaint the tree without forgetting its drawn rows: each row
    drawn afterwards is what a fresh drawing shows, through a plan, cut moves, a search and
    clearing both."""
    app = make_app(SAMPLE)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        tree = app.query_one(SessionTree)
        seen = _drawn_and_fresh(tree)
        assert seen[0] == seen[1]
        await pilot.press("c")
        await settle(pilot)
        drawn, fresh = _drawn_and_fresh(tree)
        assert drawn == fresh and drawn != seen[0], "the plan column shows"
        assert tree.cut_dependencies, "the sweep's dependency counts are in"
        for key in ("left_square_bracket", "left_square_bracket", "right_square_bracket"):
            before = app.plan
            await pilot.press(key)
            await settle(pilot)
            assert app.plan is not before
            drawn, fresh = _drawn_and_fresh(tree)
            assert drawn == fresh
            cut_row = tree.row_of_entry[tree.cut_entry]
            top = int(tree.scroll_y)
            assert "✂ cut" in drawn[cut_row - top]
        await pilot.press("slash", *"user", "enter")
        await settle(pilot)
        assert tree.search_matches
        drawn, fresh = _drawn_and_fresh(tree)
        assert drawn == fresh
        await pilot.press("escape")  # leaves the plan (and the search stays marked)
        await settle(pilot)
        assert not tree.plan_regions
        drawn, fresh = _drawn_and_fresh(tree)
        assert drawn == fresh
        tree.clear_search()
        await pilot.pause()
        drawn, fresh = _drawn_and_fresh(tree)
        assert drawn == fresh


async def test_search_box_lies_over_the_panes_and_keeps_the_cursor_in_view() -> None:
    """Opening the search box at the last row (``G``, ``/``) resizes no pane; the cursor's row
    scrolls up above the box, as when the box took the rows; closing it gives them back."""
    from textual.widgets import Input

    app = make_app(SAMPLE)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        tree = app.query_one(SessionTree)
        await pilot.press("G")
        await pilot.pause()
        sizes = {widget.id: widget.size for widget in (tree, app.query_one("#side"))}
        assert tree.cursor == len(tree.rows) - 1
        assert tree.cursor - int(tree.scroll_y) == tree.size.height - 1, "on the bottom line"
        await pilot.press("slash")
        await pilot.pause()
        search = app.query_one("#search", Input)
        assert app.focused is search
        assert {w.id: w.size for w in (tree, app.query_one("#side"))} == sizes
        box_top = search.region.y
        cursor_y = tree.content_region.y + tree.cursor - int(tree.scroll_y)
        assert cursor_y < box_top, "the cursor's row shows above the box"
        assert cursor_y == box_top - 1
        await pilot.press("escape")
        await pilot.pause()
        assert not search.display and tree.covered_rows == 0
        assert tree.cursor - int(tree.scroll_y) == tree.size.height - 1


async def test_rows_reserved_for_the_first_plan_leave_no_gap_once_it_settles() -> None:
    """The rows the pane reserved for the first plan, its sweep and its settings' sources are
    given back once the plan has settled: no blank rows stay between the parts, and the plan
    form below them is not left pushed out of view."""
    app = make_app(TREE_BRANCHES)
    async with app.run_test(size=(200, 60)) as pilot:
        await settle(pilot)
        await pilot.press("G", "c")
        await settle(pilot)
        await pilot.pause(SHRINK_AFTER + 0.3)
        await settle(pilot)
        for name in ("#plan-text", "#plan-sweep", "#plan-sources"):
            static = app.query_one(name, Static)
            width = static.content_size.width
            wanted = static.visual.get_height(static.styles, width)  # type: ignore[arg-type]
            assert static.content_size.height == wanted, f"{name} keeps blank rows"


def _count_reflows(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """From now on, one item per re-arrangement of the whole screen (``count_layouts`` but
    for the refreshes of what scrolled into view, which Pilot's pauses ask for)."""
    from textual.screen import Screen

    reflows: list[int] = []
    refresh_layout = Screen._refresh_layout

    def counted(screen: Screen[Any], *args: Any, **kwargs: Any) -> None:
        if not kwargs.get("scroll") or screen._layout_widgets:
            reflows.append(1)
        refresh_layout(screen, *args, **kwargs)

    monkeypatch.setattr(Screen, "_refresh_layout", counted)
    return reflows


async def test_a_pane_whose_text_changes_height_is_laid_out_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The plan's text getting shorter lays the screen out once: the layout that gives the
    text its new height does not ask for a second one (each is 10-20 ms of the UI thread on a
    big session), and the screen shows the new text with the sweep right under it."""
    from tui_compactor.ui.widgets.redraw import update_static

    app = make_app(REAL)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        view = app.query_one(PlanView)
        view.focus_inputs()  # the form made: nothing is mounted below once the text changes
        await settle(pilot)
        view.scroll_home(animate=False)  # the plan's text in view again
        await pilot.pause(SHRINK_AFTER + 0.3)
        await settle(pilot)
        assert view.plan_text is not None and view.show_vertical_scrollbar
        text = app.query_one("#plan-text", Static)
        assert text.content_size.height > 2
        layouts = _count_reflows(monkeypatch)
        update_static(text, Text("a shorter plan\nin two lines"))
        await settle(pilot)
        assert len(layouts) == 1, f"{len(layouts)} layouts for one change of height"
        assert text.content_size.height == 2
        sweep = app.query_one("#plan-sweep", Static)
        assert sweep.region.y == text.region.y + 3  # its margin above it
        assert "a shorter plan" in screen_text(app)


async def test_a_scrollbar_is_drawn_again_only_when_what_it_shows_changes() -> None:
    """A scrollbar refreshed by a layout or a focus change without moving is not drawn again
    (the tree's is 1-4 ms each time); scrolled, or in another theme, it is, and the screen
    shows the thumb moved."""
    from textual.scrollbar import ScrollBarRender

    drawn: list[int] = []
    render = ScrollBarRender.__rich_console__

    def counted(self: ScrollBarRender, console: Any, options: Any) -> Any:
        drawn.append(1)
        return render(self, console, options)

    app = make_app(REAL)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        tree = app.query_one(SessionTree)
        bar = tree.vertical_scrollbar
        assert bar.display, "the tree has more rows than the screen"
        before = screen_text(app)
        ScrollBarRender.__rich_console__ = counted  # type: ignore[method-assign]
        try:
            bar.refresh()
            tree.refresh(layout=True)
            await pilot.pause()
            assert drawn == [], "the same bar drawn again"
            assert screen_text(app) == before
            await pilot.press("g")  # the tree opened at the leaf, its last row: to the top
            await settle(pilot)
            assert tree.scroll_y == 0
            assert drawn, "the scrolled tree's bar is drawn again"
            drawn.clear()
            app.theme = "textual-light" if app.theme != "textual-light" else "textual-dark"
            await settle(pilot)
            assert drawn, "the bar is drawn again in the new theme's colours"
        finally:
            ScrollBarRender.__rich_console__ = render  # type: ignore[method-assign]
        column = [line[tree.region.right - 2 :] for line in screen_text(app).splitlines()]
        shown = [line[tree.region.right - 2 :] for line in before.splitlines()]
        assert column != shown, "the thumb moved on screen"


async def test_the_first_plan_pane_is_laid_out_with_its_scroll_bar(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The rows kept for the first plan are more than the screen has: the pane's first layout
    makes room for its scroll bar, so its text is never laid out (and drawn) at a width the
    bar then takes from it, and the bar shows."""
    from textual.widget import Widget

    widths: list[int] = []
    size_updated = Widget._size_updated

    def recorded(widget: Widget, size: Any, *args: Any, **kwargs: Any) -> bool:
        if widget.id == "plan-text" and size.width:
            widths.append(size.width)
        return size_updated(widget, size, *args, **kwargs)

    monkeypatch.setattr(Widget, "_size_updated", recorded)
    app = make_app(REAL)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        view = app.query_one(PlanView)
        assert view.plan_text is not None
        assert view.show_vertical_scrollbar
        assert widths and set(widths) == {widths[0]}, f"laid out at widths {widths}"
        assert "Plan for leaf" in screen_text(app)
