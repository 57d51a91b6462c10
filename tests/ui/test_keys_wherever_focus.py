"""The app's keys do the same wherever the focus is: each global key is pressed with the focus
on each focusable widget of the main screen (the tree, the tab bar, every pane's widgets, the
plan form's checkboxes and selects, a compaction review) and its effect is checked, from one
table. Text inputs are left out: there a letter is text (``test_dialog_footer``).

``escape`` is the one key whose effect depends on where the focus is, by design and the same
way for every field of a form: from a plan form field (input, checkbox, select) or the context
text it goes back to the tree; elsewhere it cancels (here: the plan is cleared)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from textual.widget import Widget
from textual.widgets import Checkbox, Input, Select, TextArea

from tests.ui.app_helpers import (
    TREE_COMPACTED,
    copy_fixture,
    make_app,
    scroll_to_plan_form,
    settle,
)
from tui_compactor.ui.panes import TABS
from tui_compactor.ui.screens.timeline import TimelineScreen
from tui_compactor.ui.widgets.context_view import SentText
from tui_compactor.ui.widgets.help import HelpScreen
from tui_compactor.ui.widgets.tabs import TabbedPanes, TabPanel
from tui_compactor.ui.widgets.tree import SessionTree

pytestmark = [pytest.mark.asyncio, pytest.mark.slow]

SIZE = (120, 40)
DIGIT_TABS = {"1": "tab-details", "2": "tab-context", "3": "tab-plan", "4": "tab-diff"}
DIGIT_TABS |= {"5": "tab-compaction", "6": "tab-breakdown"}
FORM_FIELDS = (Checkbox, Select, SentText)
"""Widgets ``escape`` leaves for the tree (inputs too, left out here)."""

Check = Callable[[Any, Widget], Awaitable[None]]


def _tab_of(widget: Widget) -> str | None:
    for node in widget.ancestors_with_self:
        if isinstance(node, TabPanel):
            return node.id
    return None


async def _digit(app: Any, widget: Widget, key: str) -> None:
    assert app.query_one(TabbedPanes).active == DIGIT_TABS[key], (key, widget)
    # The focus is not left in a hidden pane (from where it showed its tab again).
    focused = app.focused
    assert focused is None or _tab_of(focused) in (None, DIGIT_TABS[key]), (key, widget)


async def _plan(app: Any, widget: Widget) -> None:
    assert app.state.plan_leaf == app.selected_entry is not None, widget
    assert app.query_one(TabbedPanes).active == "tab-plan", widget


async def _filter(app: Any, widget: Widget) -> None:
    assert app.filter_index == 1, widget


async def _search(app: Any, widget: Widget) -> None:
    search = app.search_box()
    assert search is not None and search.display and app.focused is search, widget


async def _help(app: Any, widget: Widget) -> None:
    assert isinstance(app.screen, HelpScreen), widget


async def _timeline(app: Any, widget: Widget) -> None:
    assert isinstance(app.screen, TimelineScreen), widget


async def _leaf(app: Any, widget: Widget) -> None:
    assert app.selected_entry == app.session.leaf, widget


async def _rules(app: Any, widget: Widget) -> None:
    assert app.settings.rules == "omp", widget


async def _escape(app: Any, widget: Widget) -> None:
    if isinstance(widget, FORM_FIELDS):
        assert isinstance(app.focused, SessionTree), widget
        assert app.state.plan_leaf is not None, widget  # kept: this esc only left the field
    else:
        assert app.state.plan_leaf is None, widget  # the plan was cleared


KEYS: list[tuple[str, Check]] = [
    *((digit, lambda app, widget, d=digit: _digit(app, widget, d)) for digit in "136"),
    ("c", _plan),
    ("f", _filter),
    ("slash", _search),
    ("question_mark", _help),
    ("T", _timeline),
    ("l", _leaf),
    ("o", _rules),
    ("escape", _escape),
]
"""Global key -> its effect, whatever has the focus."""


async def _reset(app: Any, pilot: Any) -> None:
    """Back to the state each key starts from: no dialog, no search box, the first filter and
    the pi rules, the cursor on the first row, a plan at the leaf (waiting only for what
    changed)."""
    changed = len(app.screen_stack) > 1
    while len(app.screen_stack) > 1:
        app.pop_screen()
    if (search := app.search_box()) is not None and search.display:
        app.show_search_box(False)
        changed = True
    if app.filter_index:
        app.filter_index = 0
        changed = True
    if app.settings.rules != "pi":
        app.action_toggle_rules()
        changed = True
    tree = app.query_one(SessionTree)
    if app.state.plan_leaf is None:
        if changed:
            await settle(pilot)
        tree.move_to_entry(app.session.leaf)
        await settle(pilot)
        app.action_plan()
        changed = True
    if app.selected_entry != 0 or changed:
        await settle(pilot)
        tree.move_to_entry(0)
        await settle(pilot)


async def test_every_global_key_does_the_same_wherever_the_focus_is(tmp_path: Path) -> None:
    app = make_app(copy_fixture(TREE_COMPACTED, tmp_path), append_quiet_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        # Every pane built, and a compaction review shown (offline: no model).
        for key in ("2", "s", "4", "6"):
            await pilot.press(key)
            await settle(pilot)
        app.query_one(SessionTree).move_to_entry(app.session.leaf)
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        await scroll_to_plan_form(pilot)  # the form is made where it comes into view
        await pilot.press("r")
        await settle(pilot)
        assert app.compaction_panel is not None
        widgets: dict[str, list[Widget]] = {}
        for tab_id in [tab_id for _title, tab_id in TABS]:
            app.query_one(TabbedPanes).active = tab_id
            await settle(pilot)
            for widget in app.screen.focus_chain:
                if not isinstance(widget, (Input, TextArea)):
                    # One of each kind (the keys go through a widget's class bindings).
                    widgets.setdefault(type(widget).__name__, []).append(widget)
        expected = {"SessionTree", "TabStrip", "EntryDetails", "SentText", "PlanView"}
        expected |= {"Checkbox", "Select", "BreakdownView", "CompactionPanel", "OptionList"}
        assert expected <= set(widgets), set(widgets)
        checked = 0
        for name, (widget, *_same) in widgets.items():
            for key, check in KEYS:
                await _reset(app, pilot)
                tab = _tab_of(widget)
                if tab is not None:
                    app.query_one(TabbedPanes).active = tab
                    await settle(pilot)
                widget.focus()
                await settle(pilot)
                assert app.focused is widget, name
                await pilot.press(key)
                await settle(pilot)
                await check(app, widget)
                checked += 1
        assert checked == len(widgets) * len(KEYS)
