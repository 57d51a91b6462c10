"""The gauge is measured once per request: moving away and back while the measurement is on
its way does not start a second one (a 200k-deep chain's leaf takes ~20 s and ~70 MB)."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from tests.ui.app_helpers import SIZE, TREE_BRANCHES, make_app, settle
from tui_compactor.engine.context import build_context, estimate_context_tokens
from tui_compactor.ui import app as app_module
from tui_compactor.ui.widgets.tree import SessionTree

pytestmark = pytest.mark.asyncio


async def test_back_to_an_entry_whose_gauge_is_on_its_way_waits_for_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    app = make_app(TREE_BRANCHES)
    real_gauge_at = app_module.gauge_at
    measured: list[int] = []
    release = threading.Event()
    slow: set[int] = set()

    def gauge_at(snapshot: Any, entry_index: int, *args: Any, **kwargs: Any) -> Any:
        measured.append(entry_index)
        if entry_index in slow:
            release.wait(30)  # a long measurement (the leaf of a huge chain)
        return real_gauge_at(snapshot, entry_index, *args, **kwargs)

    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        session = app.session
        assert session is not None and session.leaf is not None
        leaf = session.leaf
        monkeypatch.setattr(app_module, "gauge_at", gauge_at)
        slow.add(leaf)
        try:
            await pilot.press("g")  # to the first row: measured at once
            await pilot.press("l")  # to the leaf: its measurement starts and takes long
            await pilot.press("g", "l", "g", "l")  # away and back while it is on its way
            await pilot.pause()
        finally:
            release.set()
        await settle(pilot)
        assert measured.count(leaf) == 1, measured
        assert app.selected_entry == leaf and app.gauge_data is not None
        assert app.gauge_data.entry_index == leaf
        expected = estimate_context_tokens(build_context(session, leaf), app.counter)
        assert app.gauge_data.tokens == expected.tokens
        await pilot.press("g")
        await settle(pilot)
        assert app.gauge_data.entry_index != leaf
        await pilot.press("l")  # the measurement arrived: asking again measures again
        await settle(pilot)
        assert measured.count(leaf) == 2 and app.gauge_data.entry_index == leaf


async def test_a_measurement_cancelled_before_it_ran_does_not_block_the_next() -> None:
    """Two requests in one turn of the loop: the second (exclusive) cancels the first before its
    thread starts. Coming back to the first node must measure it (it used to stay "on its way"
    for ever: the gauge of a 200k-deep chain's leaf never came after ``G``, ``g``, ``G``)."""
    app = make_app(TREE_BRANCHES)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        session = app.session
        assert session is not None and session.leaf is not None
        leaf = session.leaf
        tree = app.query_one(SessionTree)
        tree.move_cursor(tree.row_of_entry[leaf])
        app._measure_selected()
        tree.move_cursor(0)  # the first row
        first = tree.cursor_entry
        app._measure_selected()  # cancels the leaf's worker while it is still pending
        await settle(pilot)
        assert app.gauge_data is not None and app.gauge_data.entry_index == first
        tree.move_cursor(tree.row_of_entry[leaf])
        app._measure_selected()
        await settle(pilot)
        assert app.gauge_data.entry_index == leaf
        assert not app.state.gauges_in_flight


async def test_a_walk_the_cursor_left_stops_and_is_made_again_when_it_comes_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A leaf's walk (seconds on a 200k-deep chain) stops once a newer request cancelled it and
    the cursor is elsewhere; if the cursor is back when it stopped, the leaf is measured again."""
    from tui_compactor.workbench.views import MeasureCancelled

    app = make_app(TREE_BRANCHES)
    real_gauge_at = app_module.gauge_at
    outcomes: list[tuple[int, str]] = []
    release = threading.Event()
    slow: set[int] = set()
    back_when_stopped = False

    def gauge_at(snapshot: Any, entry_index: int, *args: Any, **kwargs: Any) -> Any:
        if entry_index in slow:
            slow.discard(entry_index)
            release.wait(30)
        try:
            data = real_gauge_at(snapshot, entry_index, *args, **kwargs)
        except MeasureCancelled:
            outcomes.append((entry_index, "stopped"))
            if back_when_stopped:  # the user came back meanwhile
                tree = app.query_one(SessionTree)
                app.call_from_thread(tree.move_cursor, tree.row_of_entry[entry_index])
            raise
        outcomes.append((entry_index, "measured"))
        return data

    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        session = app.session
        assert session is not None and session.leaf is not None
        leaf = session.leaf
        monkeypatch.setattr(app_module, "gauge_at", gauge_at)
        for back in (False, True):
            back_when_stopped = back
            outcomes.clear()
            release.clear()
            slow.add(leaf)
            await pilot.press("g")
            await settle(pilot)
            first = app.selected_entry
            try:
                await pilot.press("l")  # the leaf's walk starts and waits
                await pilot.pause()
                await pilot.press("g")  # away: a newer request cancels it
                await pilot.pause()
            finally:
                release.set()
            await settle(pilot)
            assert (leaf, "stopped") in outcomes, outcomes
            if back:
                assert outcomes[-1] == (leaf, "measured"), outcomes
                assert app.gauge_data is not None and app.gauge_data.entry_index == leaf
            else:
                assert (leaf, "measured") not in outcomes, outcomes
                assert app.gauge_data is not None and app.gauge_data.entry_index == first


async def test_the_entry_every_key_acts_on_is_read_without_searching_the_screen(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``selected_entry`` is read several times per key (measuring the gauge alone read it
    three times): it reads the tree it keeps, it does not search the screen for it."""
    app = make_app(TREE_BRANCHES)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        tree = app.query_one(SessionTree)
        searched: list[object] = []
        query_one = type(app).query_one

        def recording(node: Any, selector: Any, *args: Any) -> Any:
            searched.append(selector)
            return query_one(node, selector, *args)

        monkeypatch.setattr(type(app), "query_one", recording)
        assert app.selected_entry == tree.cursor_entry is not None
        assert SessionTree not in searched


async def test_without_the_token_table_every_count_is_the_marked_chars4_estimate(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The cl100k table cannot be loaded: the user is told why once, and every count the app
    shows -- the tree's rows, the gauge, the plan and its sweep, the Context and Window tabs --
    is pi's chars/4 estimate, marked as such (status line, gauge, plan settings, Window tab),
    with no view left waiting and no worker failure shown."""
    import tiktoken
    from textual.widgets import Static

    from tests.ui.app_helpers import raised_notes, screen_text
    from tui_compactor.engine import tokens as tokens_module
    from tui_compactor.engine.breakdown import token_breakdown
    from tui_compactor.engine.tokens import Cl100kCounter, TokenCache, get_counter
    from tui_compactor.ui.widgets.gauge import ContextGauge
    from tui_compactor.ui.widgets.labels import format_tokens
    from tui_compactor.ui.widgets.status import SessionStatus
    from tui_compactor.wording import NO_TABLE_MARK
    from tui_compactor.workbench.views import gauge_at, plan_report

    def missing(name: str) -> Any:
        raise OSError(f"{name}: no such file")

    monkeypatch.setattr(tiktoken, "get_encoding", missing)
    counter = Cl100kCounter(preload=False)
    monkeypatch.setitem(tokens_module._COUNTERS, "cl100k", counter)
    app = make_app(TREE_BRANCHES)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert counter.error is not None and "no such file" in counter.error
        notes = raised_notes(app)
        assert [
            n
            for n in notes
            if "token table could not be loaded" in n and "OSError" in n and NO_TABLE_MARK in n
        ]
        assert app.settings.tokens == "pi" and app.counter is get_counter("pi")
        assert f"tokens: pi {NO_TABLE_MARK}" in str(app.query_one(SessionStatus).render())
        session = app.session
        assert session is not None
        estimate = TokenCache(session, get_counter("pi"))
        tree = app.query_one(SessionTree)
        counted = tree.token_counts
        assert counted and all(n == estimate.entry_tokens(i) for i, n in counted.items())
        gauge = app.query_one(ContextGauge)
        for _ in range(2):
            entry = tree.cursor_entry
            assert gauge.data is not None and gauge.data.entry_index == entry
            assert NO_TABLE_MARK in str(gauge.render())
            with app.handle.read() as snapshot:  # type: ignore[union-attr]
                expected = gauge_at(snapshot, entry, app.settings, estimate, blocks=False)
            assert gauge.data.tokens == expected.tokens
            await pilot.press("k")
            await settle(pilot)
        await pilot.press("l", "c")  # the plan, its sweep and where its settings came from
        await settle(pilot)
        assert app.plan is not None and app.plan.prepared
        with app.handle.read() as snapshot:  # type: ignore[union-attr]
            report = plan_report(snapshot, session.leaf, app.settings, None, None)
        assert app.plan.tokens_before == report.plan.tokens_before
        text = screen_text(app)
        assert "valid cuts" in text and "sweeping" not in text
        sources = str(app.query_one("#plan-sources", Static).render())
        assert f"tokens pi · {NO_TABLE_MARK}: the table could not be loaded" in sources
        await pilot.press("2")  # the Context tab: tokens per block
        await settle(pilot)
        assert app.gauge_data is not None and app.gauge_data.blocks
        await pilot.press("6")  # the Window tab: what fills it, marked
        await settle(pilot)
        breakdown = token_breakdown(
            session, session.leaf, get_counter("pi"), app.settings.compaction(), estimate
        )
        text = screen_text(app)
        assert f"{format_tokens(breakdown.total)} tokens in messages [pi {NO_TABLE_MARK}]" in text
        assert len([n for n in notes if "token table" in n]) == 1
        assert not [n for n in notes if "TokenTableError" in n]


async def test_a_change_of_counter_counts_again_every_worker_of_the_one_list(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Switching the rules changes the counter: each worker in the app's one list of counting
    workers (``_recounts``, also the list the table's failure reads) is started again, once,
    with the plan, its sweep and the Window tab shown."""
    app = make_app(TREE_BRANCHES)
    started: list[str | None] = []
    run_worker = app.run_worker

    def recording(*args: Any, **options: Any) -> Any:
        started.append(options.get("group"))
        return run_worker(*args, **options)

    monkeypatch.setattr(app, "run_worker", recording)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("c")  # the plan and its sweep
        await settle(pilot)
        await pilot.press("6")  # the Window tab
        await settle(pilot)
        started.clear()
        await pilot.press("o")  # pi -> oh-my-pi rules: the counter changes
        await settle(pilot)
        recounted = set(app._recounts())
        assert recounted == {"tokens", "plan", "sweep", "gauge", "chart", "breakdown"}
        assert recounted <= set(started), started
        assert started.count("plan") == 1, started
