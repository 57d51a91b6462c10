"""Pilot tests of the analysis views: the Window tab, the sweep in the plan pane, the hindsight
audit under a compaction's details, and the timeline screen with enter-to-jump."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from rich.console import Console

from tests.ui.app_helpers import SIZE, TREE_COMPACTED, busy, make_app, settle
from tui_compactor.engine.context import build_context, estimate_context_tokens
from tui_compactor.engine.deps import cut_sweep
from tui_compactor.engine.hindsight import audit_compaction
from tui_compactor.ui.screens.timeline import TimelineScreen
from tui_compactor.ui.widgets.analysis import BreakdownView, breakdown_table, sweep_renderable
from tui_compactor.ui.widgets.labels import format_tokens
from tui_compactor.ui.widgets.tree import SessionTree

pytestmark = pytest.mark.asyncio

REAL = Path(__file__).resolve().parents[1] / "fixtures" / "sessions" / "refactor-session-v3.jsonl"


def screen_text(app: Any) -> str:
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


async def test_window_tab_shows_the_breakdown_and_jumps_to_a_large_entry() -> None:
    app = make_app(REAL)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("6")
        await settle(pilot)
        session = app.session
        view = app.query_one(BreakdownView)
        assert view.shown_leaf == session.leaf
        local = estimate_context_tokens(
            build_context(session, session.leaf), app.counter
        ).local_estimate
        assert local is not None
        text = screen_text(app)
        assert "What fills the window" in text
        assert f"{format_tokens(local)} tokens in messages" in text
        assert "tool results: read" in text
        # Enter on the first of the largest entries moves the tree cursor there.
        options = app.query_one("#breakdown-largest")
        options.focus()
        await pilot.press("down", "enter")
        await settle(pilot)
        first = int(options.get_option_at_index(0).id)
        assert app.query_one(SessionTree).cursor_entry == first
        assert app.selected_entry == first


async def test_plan_pane_sweeps_every_valid_cut_and_follows_the_cut() -> None:
    app = make_app(REAL)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        plan = app.plan
        expected = cut_sweep(app.session, plan.leaf, app.settings, app.counter, plan=plan)
        text = screen_text(app)
        assert f"sweep over {len(plan.valid_cut_points)} valid cuts" in text
        row = expected.row_at(plan.first_kept_index)
        assert f"this cut: {crossing_words(row.dependencies)} it" in text
        # Move the cut back a few valid cuts: the sweep follows the new cut.
        await pilot.press("left_square_bracket", "left_square_bracket", "left_square_bracket")
        await settle(pilot)
        moved = app.plan
        assert moved.first_kept_index != plan.first_kept_index
        row = expected.row_at(moved.first_kept_index)
        assert f"this cut: {crossing_words(row.dependencies)} it" in screen_text(app)


def deps_words(count: int) -> str:
    """How the tree row and the cut list name a count of crossing dependencies."""
    return "1 dep" if count == 1 else f"{count} deps"


def crossing_words(count: int) -> str:
    """The sweep's sentence about the planned cut, in the right number."""
    return "1 dependency crosses" if count == 1 else f"{count} dependencies cross"


def sweep_text(app: Any) -> str:
    """What the plan pane's sweep area holds, as plain text."""
    from rich.console import Console
    from textual.widgets import Static

    console = Console(width=160, record=True, file=open(os.devnull, "w"))  # noqa: SIM115
    console.print(app.query_one("#plan-sweep", Static).content)
    return console.export_text()


def crossings_by_definition(session: Any, plan: Any) -> dict[int, int]:
    """Per valid cut (entry index): anchors occurring both before the cut and at or after it
    in the plan's region, counted directly from the definition."""
    from tui_compactor.engine.anchors import message_anchors
    from tui_compactor.engine.deps import DEPENDENCY_KINDS
    from tui_compactor.engine.messages import message_from_entry

    facts: list[set[tuple[str, str]]] = []
    for position in range(plan.boundary_start, plan.boundary_end):
        entry = session.entries[plan.branch[position]]
        found: set[tuple[str, str]] = set()
        if entry.type in ("message", "custom_message", "branch_summary", "compaction"):
            found = {
                (kind, text.strip())
                for kind, text in message_anchors(message_from_entry(entry))
                if kind in DEPENDENCY_KINDS
            }
        facts.append(found)
    counts = {}
    for cut in plan.valid_cut_points:
        split = cut - plan.boundary_start
        before = set().union(*facts[:split])
        after = set().union(*facts[split:])
        counts[plan.branch[cut]] = len(before & after)
    return counts


async def test_each_valid_cut_shows_its_dependency_count() -> None:
    """Where the user picks cuts: every valid cut point's tree row shows the dependencies a
    cut there crosses (the cut's own row says so in words), and the plan pane lists the cuts
    ``[`` and ``]`` reach with theirs; the counts are the definition's."""
    app = make_app(REAL)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        plan = app.plan
        expected = crossings_by_definition(app.session, plan)
        assert len(expected) == len(plan.valid_cut_points) > 3 and any(expected.values())
        tree = app.query_one(SessionTree)
        assert tree.cut_dependencies == expected
        cut_entry = plan.branch[plan.first_kept_index]
        shown = [index for index in expected if index in tree.row_of_entry]  # the filter's
        assert cut_entry in shown and len(shown) > 3
        for entry_index in shown:
            count = expected[entry_index]
            row = tree.row_text(tree.row_of_entry[entry_index], 120).plain
            if entry_index == cut_entry:
                assert f"✂ cut · {deps_words(count)}" in row
            else:
                assert f"✂{count}" in row
        text = " ".join(sweep_text(app).split())
        assert f"▶ #{cut_entry} {deps_words(expected[cut_entry])}" in text
        cuts = sorted(plan.valid_cut_points)
        earlier = plan.branch[cuts[cuts.index(plan.first_kept_index) - 1]]
        assert f"#{earlier} {deps_words(expected[earlier])}" in text
        # Another plan clears the counts until its own sweep is in; they follow the cut.
        await pilot.press("left_square_bracket")
        await settle(pilot)
        assert app.plan.branch[app.plan.first_kept_index] == earlier
        assert tree.cut_dependencies == expected
        row = tree.row_text(tree.row_of_entry[earlier], 120).plain
        assert f"✂ cut · {deps_words(expected[earlier])}" in row


async def test_cut_moves_redraw_the_sweep_without_sweeping_again() -> None:
    """``[`` / ``]`` only move the cut within the same valid cuts: the sweep drawn after each
    of twenty moves (in either direction) is the one a fresh sweep of the new plan draws,
    crossing counts on the rows included, and no sweep worker ran for any of the moves."""
    app = make_app(REAL)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        sweeps: list[int] = []
        compute_sweep = app.compute_sweep

        def counted(*args: Any) -> Any:
            sweeps.append(args[-1])
            return compute_sweep(*args)

        app.compute_sweep = counted  # type: ignore[method-assign]
        tree = app.query_one(SessionTree)
        for number in range(20):
            before = app.plan
            await pilot.press("left_square_bracket" if number % 5 < 3 else "right_square_bracket")
            await settle(pilot)
            plan = app.plan
            assert plan is not before
            fresh = cut_sweep(app.session, plan.leaf, app.settings, app.counter, plan=plan)
            shown = sweep_text(app)
            app.show_sweep(sweep_renderable(fresh, app.session))
            assert shown == sweep_text(app), number
            assert tree.cut_dependencies == {
                row.entry_index: row.dependencies for row in fresh.rows
            }
        assert sweeps == []


async def test_compaction_node_shows_its_hindsight_audit() -> None:
    app = make_app(REAL)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        session = app.session
        compaction = next(e.index for e in session.entries if e.type == "compaction")
        assert app.query_one(SessionTree).move_to_entry(compaction)
        await settle(pilot)
        audit = audit_compaction(session, compaction)
        area = app.query_one("#hindsight")
        assert area.display
        text = screen_text(app)
        assert f"score {audit.score:.2f}" in text
        assert audit.lost and audit.lost[0].text in text
        # Enter on the first lost fact jumps to where the session needed it.
        rows = app.query_one("#hindsight-rows")
        rows.focus()
        await pilot.press("down", "enter")
        await settle(pilot)
        assert app.selected_entry == audit.lost[0].needed_at
        assert app.query_one(SessionTree).move_to_entry(compaction)
        await settle(pilot)
        # Not a compaction: the audit goes away.
        await pilot.press("j")
        await settle(pilot)
        assert not area.display


async def test_timeline_lists_summaries_and_enter_jumps() -> None:
    app = make_app(TREE_COMPACTED)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        session = app.session
        expected = [e.index for e in session.entries if e.type in ("compaction", "branch_summary")]
        await pilot.press("T")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TimelineScreen)
        assert [row.entry_index for row in screen.rows] == expected
        await pilot.press("down", "enter")
        await settle(pilot)
        assert not isinstance(app.screen, TimelineScreen)
        assert app.selected_entry == expected[1]
        assert app.query_one(SessionTree).cursor_entry == expected[1]


async def test_the_timeline_headline_does_not_wrap_mid_phrase_at_80x24() -> None:
    """At 80x24 the headline (counts and worst score) is one line and the keys another: they
    shared one line that wrapped between "(enter" and "jumps"."""
    from tests.ui.app_helpers import screen_text

    app = make_app(TREE_COMPACTED)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("T")
        await settle(pilot)
        assert isinstance(app.screen, TimelineScreen)
        lines = [line.strip() for line in screen_text(app).splitlines()]
        assert lines[0].startswith("3 compactions") and lines[0].endswith("at #51"), lines[:2]
        assert lines[1].startswith("enter jumps, esc closes; * on the active path"), lines[:2]


@pytest.mark.parametrize("size", [(80, 24), (200, 60)])
async def test_the_timeline_fits_its_width(size: tuple[int, int], tmp_path: Path) -> None:
    """At 80×24 the ten columns needed ~88 cells ("written by" only with ``right``): the
    columns that matter least give way (``NARROW_ORDER``) so the rest fit, who wrote each
    summary among them, and the key line says which are not shown; at 200×60 all ten show.
    Laid out again on a resize, the cursor on its row."""
    from textual.widgets import DataTable

    from tests.ui.app_helpers import copy_fixture
    from tui_compactor.commands.demo import sample_path
    from tui_compactor.ui.screens.timeline import COLUMNS

    app = make_app(copy_fixture(sample_path(), tmp_path))
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press("T")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TimelineScreen)
        table = screen.query_one(DataTable)
        labels = [str(column.label) for column in table.columns.values()]
        text = screen_text(app)
        assert table.virtual_size.width <= table.size.width, (labels, text)
        assert "sample-script" in text and "written by" in labels
        if size == (200, 60):
            assert labels == list(COLUMNS) and "not shown" not in text
        else:
            assert labels == [c for c in COLUMNS if c not in ("id", "summary")], labels
            assert "· not shown: id, summary" in text.splitlines()[1], text
        await pilot.press("j")
        await pilot.resize_terminal(*((80, 24) if size == (200, 60) else (200, 60)))
        await settle(pilot)
        resized = [str(column.label) for column in table.columns.values()]
        assert resized != labels and table.virtual_size.width <= table.size.width
        await pilot.press("enter")
        await settle(pilot)
        assert app.selected_entry == 627  # the second row, as before the resize


async def test_the_timeline_columns_give_way_in_order() -> None:
    """The id, the summary's length, the short form of what (``▣ handoff``), the writer's name
    down to 12 cells, then lost, re-reads, the writer and the tokens before; the entry, what,
    the tokens after and the score stay."""
    from tui_compactor.ui.screens.timeline import COLUMNS, fit_columns

    natural = [5, 8, 24, 6, 5, 8, 5, 4, 8, 26]  # a 26-cell model name, a method after "what"
    widths = dict(zip(COLUMNS, natural, strict=True))
    needed = sum(natural) + 2 * len(COLUMNS)

    def fit(room: int) -> tuple[list[str], set[str], int]:
        shown, short = fit_columns(widths, room, {"what": 12})
        return list(shown), short, shown.get("written by", 0)

    assert fit(needed) == (list(COLUMNS), set(), 26)
    assert fit(needed - 1)[0] == [c for c in COLUMNS if c != "id"]
    assert fit(needed - 11)[0] == [c for c in COLUMNS if c not in ("id", "summary")]
    assert fit(needed - 21) == (fit(needed - 11)[0], {"what"}, 26)
    assert fit(80)[1:] == ({"what"}, 19)
    assert fit(70) == (
        ["entry", "what", "before", "after", "score", "re-reads", "written by"],
        {"what"},
        12,
    )
    assert fit(60)[0] == ["entry", "what", "before", "after", "score", "written by"]
    assert fit(40)[0] == ["entry", "what", "after", "score"]
    # A column no row fills gives way first (here no summary was written by a named model).
    shown, short = fit_columns(widths, needed - 1, {"what": 12}, frozenset({"written by"}))
    assert list(shown) == [c for c in COLUMNS if c != "written by"] and not short
    assert fit(10)[0] == ["entry", "what", "after", "score"]  # and it scrolls sideways

    # A writer's name already within 12 cells ("offline"; the header is 10) is not dropped at
    # its first turn: lost goes first, and here that is enough.
    widths["written by"] = 10
    needed = sum(widths.values()) + 2 * len(COLUMNS)
    room = needed - 35  # with what short, 3 cells over: dropping lost (6 with its padding) fits
    assert fit(room) == ([c for c in COLUMNS if c not in ("id", "summary", "lost")], {"what"}, 10)


async def test_the_timeline_learns_each_message_once_for_the_sessions_life(
    monkeypatch: Any,
) -> None:
    """On a file whose records are read on demand, the first timeline reads the user and
    assistant messages it audits; opening it again reads none of them (the session's handle
    keeps their facts, as the compaction details' audit does), and gives the same rows."""
    import tui_compactor.session.reader as reader
    from tui_compactor.session.session import _LazyRecords

    monkeypatch.setattr(reader, "LAZY_THRESHOLD", 0)
    reads: list[int] = []
    real_read = _LazyRecords._read

    def counted(self: Any, entry: Any) -> Any:
        reads.append(entry.index)
        return real_read(self, entry)

    monkeypatch.setattr(_LazyRecords, "_read", counted)
    real_run = _LazyRecords.peek_run

    def counted_run(self: Any, table: Any, indices: Any) -> Any:
        reads.extend(indices)  # a run of lines read at once
        return real_run(self, table, indices)

    monkeypatch.setattr(_LazyRecords, "peek_run", counted_run)
    app = make_app(REAL)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        session = app.session
        assert session is not None and session._lazy is not None
        session.drop_cached_records()  # as a long session's reading would have pushed them out
        reads.clear()
        await pilot.press("T")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TimelineScreen)
        first = [row.to_json(session) for row in screen.rows]
        audits = [row.audit for row in screen.rows if row.audit is not None]
        assert audits and any(audit.used for audit in audits)
        # Kept windows are searched as text (tool outputs too) each time; the facts of
        # every other message are what the handle keeps.
        kept = {index for audit in audits for index in audit.kept}
        messages = {
            e.index for e in session.entries
            if e.role in ("user", "assistant") and e.index not in kept
        }  # fmt: skip
        assert messages & set(reads), "the first timeline reads the messages it audits"
        await pilot.press("escape")
        await settle(pilot)
        session.drop_cached_records()
        reads.clear()
        await pilot.press("T")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TimelineScreen)
        assert [row.to_json(session) for row in screen.rows] == first
        assert not messages & set(reads)


async def test_keys_are_handled_while_an_analysis_computes(monkeypatch: Any) -> None:
    """The analyses run in thread workers: the tree answers keys while one is still running."""
    import tui_compactor.engine.breakdown as breakdown_module

    release = threading.Event()
    started = threading.Event()
    real = breakdown_module.token_breakdown

    def slow(*args: Any, **kwargs: Any) -> Any:
        started.set()
        release.wait(10)
        return real(*args, **kwargs)

    monkeypatch.setattr(breakdown_module, "token_breakdown", slow)
    app = make_app(REAL)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        tree = app.query_one(SessionTree)
        await pilot.press("6")
        for _ in range(200):
            if started.is_set():
                break
            await pilot.pause(0.01)
        assert started.is_set()
        before = tree.cursor
        await pilot.press("k", "k")
        await pilot.pause()
        assert tree.cursor == before - 2  # moved while the breakdown is still computing
        assert busy(app)
        release.set()
        await settle(pilot)
        assert app.query_one(BreakdownView).shown_leaf == app.selected_entry


async def test_the_window_tab_names_the_counter_that_made_its_figures(monkeypatch: Any) -> None:
    """The rules (and so the counter) switch while the Window tab's count is still made: the
    figures shown are the new counter's, under its name; the count made before the switch,
    arriving last, does not put its figures under the new name."""
    import tui_compactor.engine.breakdown as breakdown_module
    from tui_compactor.engine.tokens import TokenCache

    release = threading.Event()
    started = threading.Event()
    real = breakdown_module.token_breakdown
    calls: list[str] = []

    def first_one_slow(*args: Any, **kwargs: Any) -> Any:
        calls.append(args[2].name)
        if len(calls) == 1:
            started.set()
            release.wait(10)
        return real(*args, **kwargs)

    monkeypatch.setattr(breakdown_module, "token_breakdown", first_one_slow)
    app = make_app(REAL)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("6")
        for _ in range(200):
            if started.is_set():
                break
            await pilot.pause(0.01)
        before = app.settings.counter_label
        await pilot.press("o")  # the other rules, the other counter: counted again
        after = app.settings.counter_label
        assert after != before
        view = app.query_one(BreakdownView)
        for _ in range(500):
            if view.shown_leaf is not None:
                break
            await pilot.pause(0.01)
        release.set()
        await settle(pilot)
        session, leaf = app.session, app.selected_entry
        counter = app.settings.counter()
        expected = real(
            session, leaf, counter, app.settings.compaction(), TokenCache(session, counter)
        )
        head = str(app.query_one("#breakdown-head").render())
        assert f"{format_tokens(expected.total)} tokens in messages [{after}]" in head, head


async def test_request_inspector_shows_the_plans_requests() -> None:
    from tui_compactor.ui.screens.requests import RequestsScreen

    app = make_app(REAL)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("i")  # no plan yet: nothing opens
        await settle(pilot)
        assert not isinstance(app.screen, RequestsScreen)
        await pilot.press("c")
        await settle(pilot)
        await pilot.press("i")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, RequestsScreen)
        parts = [item.part for item in screen.requests]
        assert parts[0] == "history" and "short" in parts
        text = screen_text(app)
        assert "nothing was sent" in text and "history · request 1" in text
        assert "── system prompt" in text
        assert "<conversation>" in screen.requests[0].prompt
        await pilot.press("escape")
        await settle(pilot)
        assert not isinstance(app.screen, RequestsScreen)


async def test_palette_offers_the_analysis_views() -> None:
    from tui_compactor.ui.commands import CompactorCommands

    app = make_app(TREE_COMPACTED)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)

        def titles() -> list[str]:
            return [title for title, _, _ in CompactorCommands(app.screen)._commands()]

        assert "Compaction timeline" in titles()
        assert "Show Window (what fills it) tab" in titles()
        assert "Inspect the compaction's requests" not in titles()  # no plan yet
        await pilot.press("c")
        await settle(pilot)
        assert "Inspect the compaction's requests" in titles()


@pytest.mark.parametrize("view", ["hindsight", "timeline", "breakdown"])
async def test_a_refresh_during_an_analysis_waits_and_the_stale_result_is_dropped(
    tmp_path: Path, monkeypatch: Any, view: str
) -> None:
    """The analysis reads one snapshot: a refresh (the agent appended) waits until it is done;
    its result, of the older generation, is not drawn but computed again on the new state."""
    import shutil

    import tui_compactor.engine.breakdown as breakdown_module
    import tui_compactor.engine.hindsight as hindsight_module
    from tests.workbench.agent import append_child_of_leaf
    from tui_compactor.ui.widgets.analysis import HindsightView

    path = tmp_path / REAL.name
    shutil.copyfile(REAL, path)
    release = threading.Event()
    started = threading.Event()
    seen: list[int] = []  # entries the session had when each computation started
    module, name = {
        "hindsight": (hindsight_module, "audit_compaction"),
        "timeline": (hindsight_module, "compaction_timeline"),
        "breakdown": (breakdown_module, "token_breakdown"),
    }[view]
    real = getattr(module, name)

    def slow(session: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(len(session.entries))
        started.set()
        release.wait(10)
        return real(session, *args, **kwargs)

    monkeypatch.setattr(module, name, slow)
    shown: list[Any] = []
    view_class: Any = BreakdownView if view == "breakdown" else HindsightView
    real_show = view_class.show
    monkeypatch.setattr(
        view_class, "show", lambda self, *args: (shown.append(args), real_show(self, *args))
    )
    app = make_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        handle = app.handle
        assert handle is not None
        before = len(handle.session.entries)
        loaded = handle.generation
        compaction = next(e.index for e in handle.session.entries if e.type == "compaction")
        if view == "hindsight":
            assert app.query_one(SessionTree).move_to_entry(compaction)
        elif view == "breakdown":
            await pilot.press("6")  # the Window tab measures the selected node
        else:
            await pilot.press("T")
        for _ in range(300):
            if started.is_set():
                break
            await pilot.pause(0.01)
        assert started.is_set() and seen == [before]
        append_child_of_leaf(path)
        refresher = threading.Thread(target=handle.refresh)
        refresher.start()
        refresher.join(0.3)
        assert refresher.is_alive(), "the refresh waits for the analysis reading the session"
        assert len(handle.session.entries) == before and handle.generation == loaded
        release.set()
        refresher.join(10)
        await settle(pilot)
        assert handle.generation != loaded  # the refresh that added the entry
        assert seen == [before, before + 1], "computed again on the grown session"
        if view != "timeline":
            assert len(shown) == 1  # only the result of the current generation was drawn
        else:
            screen = app.screen
            assert isinstance(screen, TimelineScreen)
            assert [row.entry_index for row in screen.rows] == [
                e.index
                for e in handle.session.entries
                if e.type in ("compaction", "branch_summary")
            ]


async def test_request_inspector_refuses_a_plan_the_session_grew_past(tmp_path: Path) -> None:
    import shutil

    from tests.workbench.agent import append_child_of_leaf
    from tui_compactor.ui.screens.requests import RequestsScreen

    path = tmp_path / REAL.name
    shutil.copyfile(REAL, path)
    app = make_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        append_child_of_leaf(path)
        assert app.handle is not None and app.handle.refresh().status == "grew"
        await pilot.press("i")
        await settle(pilot)
        assert isinstance(app.screen, RequestsScreen)
        assert app.screen.requests == []
        assert "the session grew since this plan was made" in screen_text(app)


@pytest.mark.parametrize("view", ["T", "I"])
async def test_j_and_k_move_in_the_timeline_and_the_issues_as_in_the_tree(view: str) -> None:
    """A user who browses the tree with ``j`` / ``k`` presses ``T`` (or ``I``), ``j``,
    ``enter``: the second row's entry, not the first's."""
    from textual.widgets import DataTable

    from tests.ui.app_helpers import BAD

    path = TREE_COMPACTED if view == "T" else BAD / "invalid-json-middle.jsonl"
    app = make_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press(view)
        await settle(pilot)
        table = app.screen.query_one(DataTable)
        assert table.row_count >= 2 and table.cursor_row == 0
        await pilot.press("j")
        await settle(pilot)
        assert table.cursor_row == 1
        await pilot.press("j", "k")
        await settle(pilot)
        assert table.cursor_row == 1


async def test_the_window_tab_keeps_its_figures_whole_at_80x24(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """At 80×24 the pane is about 38 columns wide: the kinds' names give way (an ellipsis),
    never the tokens or the share of the window (``21.…`` reads as nothing)."""
    shown: list[Any] = []
    show = BreakdownView.show

    def recorded(view: BreakdownView, breakdown: Any, session: Any) -> None:
        shown.append(breakdown)
        show(view, breakdown, session)

    monkeypatch.setattr(BreakdownView, "show", recorded)
    app = make_app(TREE_COMPACTED)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("6")
        await settle(pilot)
        breakdown = shown[-1]
        assert breakdown.leaf == app.session.leaf
        text = screen_text(app)
        assert "tokens" in text and "window" in text, text
        for part in breakdown.parts[:3]:  # the largest kinds: the rows on screen at 80×24
            figure = format_tokens(part.tokens)
            share = f"{part.tokens / breakdown.window:.1%}"
            assert any(
                f" {figure} " in f" {line} " and f" {share} " in f" {line} "
                for line in text.splitlines()
            ), (part.label, figure, share, text)


def _window_parts() -> Any:
    """The demo sample's kinds at its leaf (two tools' results and calls among them)."""
    from tui_compactor.engine.breakdown import BreakdownPart

    parts = [
        BreakdownPart("tool_result", "read", 43600, 12),
        BreakdownPart("thinking", None, 33700, 40),
        BreakdownPart("tool_call", "edit", 28000, 30),
        BreakdownPart("bash", None, 27400, 1),
        BreakdownPart("tool_result", "bash", 21200, 9),
        BreakdownPart("tool_call", "write", 15500, 4),
        BreakdownPart("tool_result", "write", 183, 4),
        BreakdownPart("compaction_summary", None, 924, 1),
        BreakdownPart("branch_summary", None, 186, 1),
        BreakdownPart("tool_result", "todo_write", 90, 1),
    ]
    return SimpleNamespace(parts=parts, total=sum(p.tokens for p in parts), window=200000)


@pytest.mark.parametrize("width", [36, 38, 44])
async def test_the_window_tabs_names_stay_distinct_on_a_narrow_pane(width: int) -> None:
    """At 80×24 (a pane of 36 cells) two tools' results both read ``tool resu…``: each
    name now takes its short form, the tool's name whole (``result: read``), the figures and
    bars as before; only a name longer than the room is cut, at its end."""
    breakdown = _window_parts()
    console = Console(width=width, record=True, color_system=None)
    console.print(breakdown_table(breakdown))
    lines = console.export_text().splitlines()
    assert lines[0].split() == ["what", "tokens", "window"], lines
    rows = lines[1:]
    names = [row.split("  ")[0].strip() for row in rows]
    assert names[:9] == [
        "result: read", "thinking", "call: edit", "bash", "result: bash", "call: write",
        "result: write", "compaction", "branch summ.",
    ], rows  # fmt: skip
    todo = names[9]  # cut at its end where it does not fit
    assert todo == "result: todo_write" or todo.startswith("result: todo") and todo[-1] == "…"
    assert (todo == "result: todo_write") == (width >= 44), rows
    for part, row in zip(breakdown.parts, rows, strict=True):
        share = f"{part.tokens / breakdown.window:.1%}"
        assert f" {format_tokens(part.tokens)} " in row and f" {share} " in row, rows
        assert len(row) <= width and bar_cells(row) >= 1
    assert bar_cells(rows[0]) > bar_cells(rows[6]), rows


async def test_the_window_tab_keeps_the_full_names_where_they_fit() -> None:
    console = Console(width=60, record=True, color_system=None)
    console.print(breakdown_table(_window_parts()))
    rows = console.export_text().splitlines()[1:]
    assert rows[0].startswith("tool results: read ") and rows[2].startswith("tool calls: edit ")
    assert rows[7].startswith("compaction summary ") and "…" not in "".join(rows)


async def test_the_window_tab_tells_two_tools_apart_at_80x24(tmp_path: Path) -> None:
    """The demo's Window tab at 80×24: the rows on screen name each tool's results."""
    from textual.widgets import OptionList

    from tests.ui.app_helpers import copy_fixture
    from tui_compactor.commands.demo import sample_path

    app = make_app(copy_fixture(sample_path(), tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("6")
        await settle(pilot)
        text = screen_text(app)
        assert "result: read " in text and "result: bash " in text, text
        assert "tool resu" not in text, text
        # The largest entries, one line each (each one's id wrapped onto a second line).
        largest = app.query_one("#breakdown-largest", OptionList)
        app.query_one(BreakdownView).scroll_end(animate=False)
        await settle(pilot)
        assert largest.option_count == 10
        assert largest.virtual_size.height == largest.option_count


async def test_the_window_tab_says_a_provider_count_below_the_messages_plainly() -> None:
    """A provider count below the messages' own count is no negative system prompt: it read
    "(-1077 system prompt, tools, counting)"."""
    from tui_compactor.ui.widgets.analysis import breakdown_summary

    session = SimpleNamespace(entries=[SimpleNamespace(id="e1")])
    common = dict(leaf=0, total=24700, window=200000, counter_name="cl100k", usage_tokens=1)
    common |= dict(compaction_prepared=False, compaction_reason="too small")
    below = SimpleNamespace(**common, context_tokens=23623)
    above = SimpleNamespace(**common, context_tokens=31500)
    assert "(1.1k fewer than counted here: counted differently)" in str(
        breakdown_summary(below, session)
    )
    assert "(+6.8k system prompt, tools, counting)" in str(breakdown_summary(above, session))


def bar_cells(line: str) -> int:
    return line.count("█")


@pytest.mark.parametrize("width", [38, 44, 50])
async def test_the_window_tabs_bars_keep_their_proportions_on_a_narrow_pane(width: int) -> None:
    """At pane widths 38-50 (80×24) the names were shown whole and the bar column squeezed
    to one cell: a kind at 2.5% of the window and one at 105% drew the same single block.
    The names give way first; the bars keep lengths that follow the shares."""
    parts = [
        SimpleNamespace(label="system prompt", tokens=12345, kind="user"),
        SimpleNamespace(label="tool results (bash, read, edit)", tokens=210987, kind="tool_result"),
        SimpleNamespace(label="assistant", tokens=99999, kind="assistant"),
        SimpleNamespace(label="user", tokens=5000, kind="user"),
    ]
    breakdown = SimpleNamespace(parts=parts, total=sum(p.tokens for p in parts), window=200000)
    console = Console(width=width, record=True, color_system=None)
    console.print(breakdown_table(breakdown))
    lines = console.export_text().splitlines()[1:]
    assert all(len(line) <= width for line in lines), lines
    for part, line in zip(parts, lines, strict=True):
        share = f"{part.tokens / breakdown.window:.1%}"
        assert f" {format_tokens(part.tokens)} " in line and f" {share} " in line, lines
    cells = [bar_cells(line) for line in lines]
    assert cells[1] > cells[2] > cells[3], lines  # 105.5% > 50.0% > 2.5%
    assert cells[1] >= 4 * cells[3], lines


async def test_the_window_tabs_bars_differ_for_different_shares_at_80x24(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    shown: list[Any] = []
    show = BreakdownView.show

    def recorded(view: BreakdownView, breakdown: Any, session: Any) -> None:
        shown.append(breakdown)
        show(view, breakdown, session)

    monkeypatch.setattr(BreakdownView, "show", recorded)
    app = make_app(TREE_COMPACTED)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("6")
        await settle(pilot)
        parts = shown[-1].parts
        assert parts[0].tokens > 4 * parts[1].tokens, parts  # the fixture's two largest kinds
        pane = [line.split("▕", 1)[1] for line in screen_text(app).splitlines() if "▕" in line]
        rows: dict[int, int] = {}
        for part in parts[:2]:
            figure = format_tokens(part.tokens)
            share = f"{part.tokens / shown[-1].window:.1%}"
            found = [line for line in pane if f" {figure} " in line and f" {share} " in line]
            assert len(found) == 1, (figure, share, pane)
            rows[part.tokens] = bar_cells(found[0])
        first, second = (rows[part.tokens] for part in parts[:2])
        assert first > second >= 1, (rows, pane)
