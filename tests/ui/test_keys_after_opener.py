"""A key typed right after a key that opens an input lands in that input: it never reaches
the tree or an app binding while the input is being built (``q`` typed at once must not quit)."""

from __future__ import annotations

import pytest
from textual import events
from textual.widgets import Input

from tests.ui.app_helpers import SIZE, TREE_COMPACTED, make_app, settle

pytestmark = pytest.mark.asyncio

SLOW_BUILD = 3.0
"""Seconds the budget editor takes to be built and focused on a loaded machine (CI saw > 2)."""


def _type_at_once(app: object, *keys: str) -> None:
    """Queue the keys together, as a terminal delivers one burst (no pause in between)."""
    for key in keys:
        app.post_message(events.Key(key, key))  # type: ignore[attr-defined]


async def test_q_typed_right_after_e_reaches_the_budget_editor_not_quit() -> None:
    app = make_app(TREE_COMPACTED)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        _type_at_once(app, "e", "q", "4", "k")
        await settle(pilot)
        assert app.is_running, "the q typed right after e quit the app"
        keep = app.query_one("#plan-keep", Input)
        assert app.focused is keep
        # The field takes figures only: q is refused there, the figure typed replaces the old.
        assert keep.value == "4k"
        assert app.settings.keep_recent_tokens == 4000


async def test_q_typed_right_after_slash_goes_into_the_search_box() -> None:
    app = make_app(TREE_COMPACTED)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        _type_at_once(app, "slash", "q", "7")
        await settle(pilot)
        assert app.is_running, "the q typed right after / quit the app"
        search = app.query_one("#search", Input)
        assert app.focused is search
        assert search.value == "q7"


async def test_q_typed_right_after_the_label_key_goes_into_the_dialog() -> None:
    app = make_app(TREE_COMPACTED)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        _type_at_once(app, "L", "q", "7")
        await settle(pilot)
        assert app.is_running, "the q typed right after L quit the app"
        box = app.screen.query_one(Input)
        assert app.focused is box
        assert box.value.endswith("q7")


async def test_a_key_a_select_list_takes_as_text_opens_no_input() -> None:
    """An open select list of the plan form searches its options as letters are typed: ``/``
    typed there is the list's (the one rule for what is typed, the footer's too), it does not
    open the search box."""
    from textual.widgets import Select

    from tui_compactor.ui.bindings import takes_text

    app = make_app(TREE_COMPACTED)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("c", "e")
        await settle(pilot)
        select = app.query(Select).first()
        select.focus()
        select.expanded = True
        await settle(pilot)
        assert app.focused is not select and takes_text(app.focused)  # the open list
        await pilot.press("slash")
        await settle(pilot)
        search = app.search_box()
        assert search is None or not search.display
        assert "cancel" in app.footer_actions()


async def test_keys_after_an_opener_whose_input_has_the_focus_go_to_it_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The search key bound to a key the box does not type (``f6``), pressed while the box
    has the focus already: the keys typed after it go into the box at once; they are not held
    for a focus change that never comes (until the hold's time limit)."""
    from tui_compactor.config import Config, UIConfig
    from tui_compactor.ui import app as app_module

    monkeypatch.setattr(app_module, "KEY_HOLD_LIMIT", 60.0)  # longer than the test runs
    app = make_app(TREE_COMPACTED, config=Config(ui=UIConfig(keymap={"search": "f6"})))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        for typed in ("q", "7"):
            app.post_message(events.Key("f6", None))  # a key that types nothing
            await settle(pilot)
            search = app.query_one("#search", Input)
            assert app.focused is search
            _type_at_once(app, typed)
            await settle(pilot)
            assert app.is_running and search.value == typed


async def test_q_typed_right_after_a_rebound_search_key_goes_into_the_search_box() -> None:
    """The search bound to ``f6`` by the user's keymap: the keys typed right after it are
    held for the box as after ``/`` (``q`` must not quit)."""
    from tui_compactor.config import Config, UIConfig

    app = make_app(TREE_COMPACTED, config=Config(ui=UIConfig(keymap={"search": "f6"})))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.post_message(events.Key("f6", None))
        _type_at_once(app, "q", "7")
        await settle(pilot)
        assert app.is_running, "the q typed right after the search key quit the app"
        search = app.query_one("#search", Input)
        assert app.focused is search
        assert search.value == "q7"


async def test_keys_typed_after_e_wait_for_an_editor_slow_to_build(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """On a loaded machine the budget editor can take seconds to be built and focused
    (``SLOW_BUILD``): the keys typed after ``e`` still wait for it (at 2 s they were handed to
    what had the focus and lost)."""
    from tui_compactor.ui.widgets.plan_view import PlanView

    focus_inputs = PlanView.focus_inputs
    slow = {"first": True}

    def slow_focus_inputs(view: PlanView) -> None:
        if slow.pop("first", False):  # the form is built after the limit
            view.set_timer(SLOW_BUILD, lambda: focus_inputs(view))
            return
        focus_inputs(view)

    monkeypatch.setattr(PlanView, "focus_inputs", slow_focus_inputs)
    app = make_app(TREE_COMPACTED)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        _type_at_once(app, "e", "q", "4", "k")
        await pilot.pause(SLOW_BUILD + 0.5)
        await settle(pilot)
        assert app.is_running, "the q typed right after e quit the app"
        keep = app.query_one("#plan-keep", Input)
        assert app.focused is keep
        assert keep.value == "4k"


def _burst(app: object, *keys: str) -> None:
    """Queue keys together as a terminal's one read delivers them, each with the character the
    terminal sends (a backspace is DEL, not printable)."""
    characters = {"backspace": "\x7f", "tab": "\t"}
    for key in keys:
        app.post_message(events.Key(key, characters.get(key, key)))  # type: ignore[attr-defined]


async def test_backspaces_and_figures_typed_in_one_burst_apply_in_order() -> None:
    """Six backspaces then ``999999`` in one burst (one tmux ``send-keys``) into the focused
    keep field: the field shows ``999999`` and keep-recent is 999999. A backspace is a binding of
    the input (run once the key has bubbled up to the app) while a figure is typed by the input
    itself: the figures landed first and the backspaces then erased them, a blank field while
    the plan said 999999."""
    app = make_app(TREE_COMPACTED)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        await pilot.press("e")
        await settle(pilot)
        keep = app.query_one("#plan-keep", Input)
        assert app.focused is keep
        _burst(app, *["backspace"] * 6, *["9"] * 6)
        await settle(pilot)
        assert keep.value == "999999"
        assert app.settings.keep_recent_tokens == 999999
        _burst(app, "backspace", "backspace", "1", "tab")
        await settle(pilot)
        assert keep.value == "99991"
        assert app.focused is not keep
        assert app.settings.keep_recent_tokens == 99991
