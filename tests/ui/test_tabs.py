"""The preview's tabs (``ui/widgets/tabs.py``): one strip widget draws the tab bar and the
panes after Details are made when first shown. What users rely on: the digit keys, ``left`` /
``right`` on the focused strip, clicks on a title or the underline under it, focus moving into
a pane showing its tab, the active tab's look, one ``TabActivated`` per change, at 80x24 and
200x60."""

from __future__ import annotations

from typing import Any

import pytest

from tests.ui.app_helpers import TREE_COMPACTED, make_app, settle
from tui_compactor.ui.panes import TABS
from tui_compactor.ui.widgets.details import EntryDetails
from tui_compactor.ui.widgets.plan_view import PlanView
from tui_compactor.ui.widgets.tabs import (
    MORE_LEFT,
    MORE_RIGHT,
    PAD,
    TabbedPanes,
    TabPanel,
    TabStrip,
)
from tui_compactor.ui.widgets.tree import SessionTree

pytestmark = pytest.mark.asyncio

SIZES = [(80, 24), (200, 60)]
KEYS = {"1": "tab-details", "2": "tab-context", "3": "tab-plan", "4": "tab-diff"}
KEYS |= {"5": "tab-compaction", "6": "tab-breakdown"}


def _strip_rows(app: Any) -> tuple[str, str]:
    """The strip's two rows as shown on screen."""
    strip = app.query_one(TabStrip)
    region = strip.region
    lines = app.screen._compositor.render_strips()
    return tuple(  # type: ignore[return-value]
        lines[region.y + dy].crop(region.x, region.x + region.width).text for dy in (0, 1)
    )


def _activations(app: Any) -> list[str]:
    """Record every ``TabActivated`` the preview posts (in order)."""
    seen: list[str] = []
    preview = app.query_one(TabbedPanes)
    post = preview.post_message

    def recording(message: Any) -> bool:
        if isinstance(message, TabbedPanes.TabActivated):
            seen.append(message.tab_id)
        return bool(post(message))

    preview.post_message = recording
    return seen


def _shown_pane(app: Any) -> str | None:
    shown = [pane.id for pane in app.query(TabPanel) if pane.display]
    assert len(shown) <= 1, shown
    return shown[0] if shown else None


@pytest.mark.parametrize("size", SIZES)
async def test_digit_keys_show_each_tab_with_its_title_marked(size: tuple[int, int]) -> None:
    app = make_app(TREE_COMPACTED)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        preview = app.query_one(TabbedPanes)
        assert [pane.id for pane in app.query(TabPanel)] == ["tab-details"]  # the rest: later
        for key, tab_id in [*KEYS.items(), ("1", "tab-details")]:
            await pilot.press(key)
            await settle(pilot)
            assert preview.active == tab_id
            assert _shown_pane(app) == tab_id
            titles, bar = _strip_rows(app)
            title = dict((each, name) for name, each in TABS)[tab_id]
            column = app.query_one(TabStrip).column_of(tab_id)
            assert column is not None and 0 <= column < len(titles)
            assert titles[column : column + len(title)] == title[: len(titles) - column]
            # The underline is heavy under the active title only.
            assert bar[column] == "━" and set(bar[column : column + len(title)]) <= {"━"}
            if column >= 1:
                assert bar[column - 1] == "╸"
        assert app.focused is app.query_one(SessionTree)  # digit keys leave the focus alone


@pytest.mark.parametrize("size", SIZES)
async def test_clicks_on_a_title_or_its_underline_pick_the_tab_and_focus_the_strip(
    size: tuple[int, int],
) -> None:
    app = make_app(TREE_COMPACTED)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        seen = _activations(app)
        strip = app.query_one(TabStrip)
        picked = []
        for wanted, row in (("tab-plan", 0), ("tab-diff", 1), ("tab-details", 0)):
            # On a narrow strip the titles scroll with the active one: click a shown title.
            tab_id = next(
                tab_id
                for tab_id in [wanted, *(each for _title, each in reversed(TABS))]
                if (strip.column_of(tab_id) or -1) >= 1 and tab_id not in picked[-1:]
            )
            column = strip.column_of(tab_id)
            assert column is not None
            await pilot.click(TabStrip, offset=(column, row))
            await settle(pilot)
            assert app.query_one(TabbedPanes).active == tab_id
            assert _shown_pane(app) == tab_id
            assert app.focused is strip
            picked.append(tab_id)
        assert seen == picked  # one message per change
        assert app.query(PlanView)  # built by the click
        # A click past the last title picks nothing.
        titles, _bar = _strip_rows(app)
        if len(titles.rstrip()) < len(titles):
            await pilot.click(TabStrip, offset=(len(titles) - 1, 0))
            await settle(pilot)
            assert seen == picked


@pytest.mark.parametrize("size", SIZES)
async def test_left_and_right_on_the_focused_strip_step_through_the_tabs_and_wrap(
    size: tuple[int, int],
) -> None:
    app = make_app(TREE_COMPACTED)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        seen = _activations(app)
        await pilot.press("tab")  # from the tree to the tab strip
        strip = app.query_one(TabStrip)
        assert app.focused is strip
        order = [tab_id for _title, tab_id in TABS]
        for step in range(1, len(order) + 1):
            await pilot.press("right")
            await settle(pilot)
            assert app.query_one(TabbedPanes).active == order[step % len(order)]
            # The active title stays on screen even where the titles do not all fit.
            titles, _bar = _strip_rows(app)
            title = TABS[step % len(order)][0]
            assert title in titles, (titles, title)
        await pilot.press("left")
        await settle(pilot)
        assert app.query_one(TabbedPanes).active == order[-1]
        assert seen == [*order[1:], order[0], order[-1]]
        # The focused strip draws its active tab in the block cursor's colours.
        active = strip.get_component_rich_style("tab-strip--active")
        assert active.bgcolor is not None
        strip.blur()
        await settle(pilot)
        assert strip.get_component_rich_style("tab-strip--active").bgcolor != active.bgcolor


@pytest.mark.parametrize("size", SIZES)
async def test_focus_moving_into_a_pane_shows_its_tab(size: tuple[int, int]) -> None:
    app = make_app(TREE_COMPACTED)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press("3")
        await settle(pilot)
        assert app.query_one(TabbedPanes).active == "tab-plan"
        seen = _activations(app)
        app.query_one(EntryDetails).focus()  # a widget of a hidden pane
        await settle(pilot)
        assert app.query_one(TabbedPanes).active == "tab-details"
        assert _shown_pane(app) == "tab-details"
        assert seen == ["tab-details"]


async def test_hovering_a_title_lights_it() -> None:
    app = make_app(TREE_COMPACTED)
    async with app.run_test(size=(200, 60)) as pilot:
        await settle(pilot)
        strip = app.query_one(TabStrip)
        column = strip.column_of("tab-plan")
        assert column is not None
        await pilot.hover(TabStrip, offset=(column, 0))
        await settle(pilot)
        assert strip.hovered == [tab_id for _t, tab_id in TABS].index("tab-plan")
        await pilot.hover(SessionTree)
        await settle(pilot)
        assert strip.hovered is None


async def test_the_first_screen_has_one_tab_widget_and_one_pane() -> None:
    """The tab bar is one widget (Textual's took 13) and only the Details pane exists."""
    app = make_app(TREE_COMPACTED)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        preview = app.query_one(TabbedPanes)
        assert sorted(type(child).__name__ for child in preview.children) == [
            "TabPanel",
            "TabStrip",
        ]
        assert not app.query(TabStrip).first().children
        assert "select an entry" not in app.query_one(EntryDetails).shown_text()


@pytest.mark.parametrize("size", SIZES)
async def test_the_titles_stay_put_while_the_active_one_fits_where_it_is(
    size: tuple[int, int],
) -> None:
    """Picking a tab moves no title unless the active one would be cut at the right edge (then
    the row starts at the first tab from which it fits): at 80x24 the first four titles fit,
    and the row reads the same with Details, Context, Plan or Diff active."""
    app = make_app(TREE_COMPACTED)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        strip = app.query_one(TabStrip)
        width = strip.size.width
        rows: dict[str, str] = {}
        for key, tab_id in KEYS.items():
            await pilot.press(key)
            await settle(pilot)
            rows[tab_id] = _strip_rows(app)[0]
        fitting = [
            tab_id
            for (_t, tab_id), span in zip(TABS, strip.spans(), strict=True)
            if span[1] - PAD < width
        ]
        assert "tab-plan" in fitting
        assert len({rows[tab_id] for tab_id in fitting}) == 1, rows
        assert rows["tab-details"].startswith(" Details ")


@pytest.mark.parametrize("size", SIZES)
async def test_every_title_drawn_is_whole_and_hidden_ones_are_marked(
    size: tuple[int, int],
) -> None:
    """Whichever tab is active, the strip draws only whole titles, the active one among them,
    and a marker at the edge where titles are hidden (at 80x24, Compaction active, the row
    started mid-title: "etails  Context  Plan  Diff  Compaction"). A click on a marker shows
    the nearest hidden tab; at 200x60 every title shows, no marker."""
    app = make_app(TREE_COMPACTED)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        strip = app.query_one(TabStrip)
        titles = [title for title, _tab_id in TABS]
        for key, tab_id in KEYS.items():
            await pilot.press(key)
            await settle(pilot)
            row, _bar = _strip_rows(app)
            words = row.replace(MORE_LEFT, " ").replace(MORE_RIGHT, " ").split()
            assert words == titles[titles.index(words[0]) :][: len(words)], row
            assert dict((each, name) for name, each in TABS)[tab_id] in words
            assert row.startswith(MORE_LEFT) == (words[0] != titles[0]), row
            assert row.endswith(MORE_RIGHT) == (words[-1] != titles[-1]), row
            if size == (200, 60):
                assert words == titles
            for title, each in TABS:  # where a click lands: only on a title drawn
                column = strip.column_of(each)
                assert (column is None) == (title not in words), (title, row)
                if column is not None:
                    assert row[column : column + len(title)] == title
        await pilot.press("5")
        await settle(pilot)
        row, _bar = _strip_rows(app)
        assert row.startswith(MORE_LEFT) == (size == (80, 24)), row
        if size == (80, 24):  # Details is hidden on the left
            await pilot.click(TabStrip, offset=(0, 0))
            await settle(pilot)
            assert app.query_one(TabbedPanes).active == "tab-details"
            row, _bar = _strip_rows(app)
            assert row.startswith(" Details ") and row.endswith(MORE_RIGHT)
            await pilot.click(TabStrip, offset=(strip.size.width - 1, 0))
            await settle(pilot)
            assert app.query_one(TabbedPanes).active == "tab-compaction"


async def test_the_digit_keys_follow_the_titles_left_to_right() -> None:
    """`5` is the fifth title and `6` the sixth: the keys the other tests press (``KEYS``) are
    the tab order the strip draws."""
    assert list(KEYS.values()) == [tab_id for _title, tab_id in TABS]


async def test_the_row_never_starts_after_the_active_tab() -> None:
    """On a strip narrower than the active title and its neighbours, the row starts at the
    active tab (a later tab's start, where the active title also ends before the edge, was
    taken: the active tab was not drawn at all), and the active tab is always drawn."""
    for _title, tab_id in TABS:
        strip = TabStrip(TABS, tab_id)
        index = strip.index_of(tab_id)
        for width in range(6, 60):
            shift, shown = strip.drawn_tabs(width)
            assert index in shown and shift <= strip.spans()[index][0], (tab_id, width)
