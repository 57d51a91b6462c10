"""The app's collector policy: full collections freeze their survivors, a deep collection (run
when the user is idle) still frees cycles among them, and stopping restores the defaults."""

from __future__ import annotations

import gc
import weakref
from collections import deque

import pytest

from tests.ui.app_helpers import SIZE, TREE_COMPACTED, make_app, settle
from tui_compactor.session.session import gc_paused, pause_gc, resume_gc
from tui_compactor.ui import collector


class Node:
    """An object that can sit in a reference cycle."""

    partner: object = None


def test_survivors_are_frozen_and_a_deep_collection_frees_frozen_cycles() -> None:
    collector.install()
    try:
        gc.collect()  # what lived before: the base the growth counts from
        node = Node()
        # a cycle (only the cyclic collector can free it) holding 10k objects
        node.partner = [node, *([number] for number in range(10_000))]
        alive = weakref.ref(node)
        gc.collect()  # a full collection: its survivors leave the collector's reach
        assert gc.get_freeze_count() > 10_000
        del node
        gc.collect()
        assert alive() is not None, "a frozen cycle waits for the deep collection"
        assert not collector.deep_collect_if_due(growth=10**12), "not due yet"
        assert collector.deep_collect_if_due(growth=5_000)
        assert alive() is None
        assert collector.grown() == 0
    finally:
        collector.uninstall()
    assert gc.get_freeze_count() == 0
    assert collector._freeze_survivors not in gc.callbacks


def test_a_middle_collection_freezes_its_survivors_so_a_full_one_scans_only_young_objects() -> None:
    collector.install()
    try:
        gc.collect(1)  # what lived before leaves the collector's reach
        kept = [[number] for number in range(5_000)]
        gc.collect(1)  # a middle collection: the lists survive it
        assert not gc.get_objects(2), "survivors are frozen, not left to the full collection"
        assert gc.get_freeze_count() >= len(kept)
    finally:
        collector.uninstall()
    assert gc.get_freeze_count() == 0


def test_cycles_are_collected_normally_without_the_policy() -> None:
    node = Node()
    node.partner = node
    alive = weakref.ref(node)
    del node
    gc.collect()
    assert alive() is None
    assert not collector.deep_collect_if_due(growth=0), "nothing to do when not installed"


def test_a_deep_collection_runs_only_when_frozen_objects_outlive_their_references() -> None:
    """Objects frozen and then dropped without a cycle are freed at once: scanning the whole
    heap for them (the event loop waits meanwhile) would free nothing, so it is skipped; frozen
    cycles that stay grow the memory in use, make it due, and it frees them."""
    collector.install()
    try:
        gc.collect()  # the whole live heap is frozen at the first full collection
        acyclic = [Node() for _ in range(20_000)]
        gc.collect()  # frozen by the policy
        assert collector.grown() >= 20_000
        del acyclic  # freed by reference counting, frozen or not
        assert not collector.deep_collect_if_due(growth=10_000), "nothing to free"

        cycles = [Node() for _ in range(20_000)]
        for node in cycles:
            node.partner = node
        probe = weakref.ref(cycles[0])
        gc.collect()
        del cycles, node
        gc.collect()
        assert probe() is not None, "frozen cycles wait for a deep collection"
        assert collector.grown() >= 10_000, "they are memory still in use"
        assert collector.deep_collect_if_due(growth=10_000)
        assert probe() is None
        assert not collector.deep_collect_if_due(growth=10_000), "the growth counts from it"

        held = [Node() for _ in range(20_000)]
        for node in held:
            node.partner = node
        gc.collect()
        collector.rebase()  # frozen on purpose (as a freshly indexed session)
        gc.collect(1)
        assert not collector.deep_collect_if_due(growth=10_000)
        assert held[0].partner is held[0]
    finally:
        collector.uninstall()


def test_overlapping_pauses_keep_the_collector_off_until_the_last_one_ends() -> None:
    """The start-up hold, the indexer and an outline build pause the collector in turns that
    overlap (across threads): the first to end must not turn it back on under the others."""
    assert gc.isenabled()
    try:
        collector.hold_for_start_up()
        pause_gc()  # the indexer starts while the first screen is built
        collector.release_start_up()  # the first screen is up; the index still runs
        assert not gc.isenabled()
        collector.release_start_up()  # a second release changes nothing
        assert not gc.isenabled()
        resume_gc()
        assert gc.isenabled()
        assert gc.get_freeze_count() > 0, "what the pauses built is out of the collector's reach"
    finally:
        gc.unfreeze()
        gc.enable()


@pytest.mark.asyncio
async def test_the_app_releases_the_start_up_hold_once_its_first_screen_is_drawn() -> None:
    collector.hold_for_start_up()  # as ``tui-compactor open`` does before importing the app
    assert not gc.isenabled()
    try:
        app = make_app(TREE_COMPACTED)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            assert app.state.first_screen.is_set()
            assert gc.isenabled()
    finally:
        collector.release_start_up()
        gc.unfreeze()
    assert gc.isenabled()


def test_short_lived_cycles_that_outlive_a_middle_collection_stay_bounded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Cycles that live a while (a message in flight) and then die outlive middle collections
    and are frozen with their survivors: during a long stream without a pause the memory they
    hold grows. Past ``FREEZE_LIMIT`` the policy stops freezing; collections then free the
    cycles as CPython's do, and freezing resumes after the deep collection."""
    monkeypatch.setattr(collector, "FREEZE_LIMIT", 200_000)
    collector.install()
    window: deque[Node] = deque()
    try:
        gc.collect()  # the live heap, frozen as the app freezes it at start-up
        baseline = gc.get_freeze_count()
        for number in range(200_000):
            first, second = Node(), Node()
            first.partner, second.partner = second, [number] * 4
            second.partner = first
            window.append(first)
            if len(window) > 3_000:
                window.popleft()
        late = weakref.ref(window[0])  # made after the bound; no loop variable holds it
        window.clear()
        gc.collect()
        assert late() is None, "past the bound, collections free cycles as CPython's do"
        grown = gc.get_freeze_count() - baseline
        assert grown <= 200_000, grown
        assert collector.deep_collect_if_due(growth=100_000), "the frozen cycles are held"
        after_deep = gc.get_freeze_count()
        assert after_deep - baseline < 20_000, "and it frees them"
        assert collector.grown() < 20_000
        kept = [[number] for number in range(5_000)]
        gc.collect(1)
        assert not gc.get_objects(2), "long-lived survivors are frozen again"
        assert gc.get_freeze_count() - after_deep >= len(kept)
    finally:
        collector.uninstall()
    assert gc.get_freeze_count() == 0


def test_freezing_goes_on_while_what_it_froze_is_freed(monkeypatch: pytest.MonkeyPatch) -> None:
    """A long flow without an idle pause (streams, moves, dialogs) freezes survivors that
    reference counting frees soon after (strips, a worker's context): the memory in use does
    not grow, so survivors are still frozen and a full collection never scans what lived
    since, however much was frozen."""
    monkeypatch.setattr(collector, "FREEZE_LIMIT", 100_000)
    collector.install()
    try:
        gc.collect()  # the live heap, frozen as the app freezes it at start-up
        for _ in range(20):
            batch = [[number] for number in range(20_000)]
            gc.collect(1)  # survivors frozen, then freed by reference counting
            del batch
        kept = [[number] for number in range(5_000)]
        gc.collect(1)
        assert not gc.get_objects(2), "survivors are still frozen past 400k frozen objects"
        assert gc.get_freeze_count() >= len(kept)
    finally:
        collector.uninstall()
    assert gc.get_freeze_count() == 0


def test_short_pauses_past_the_limit_do_not_freeze_the_ui_threads_garbage_cycles(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The app pauses the collector for every token batch and gauge measure; the end of each
    pause froze the whole heap, garbage cycles made meanwhile by the UI thread included, so
    during a long live follow they piled up until a deep collection. Below ``FREEZE_LIMIT``
    what a pause built is still frozen; past it the cycles are left to the collections."""
    monkeypatch.setattr(collector, "FREEZE_LIMIT", 50_000)
    collector.install()
    try:
        gc.collect()  # the base the growth counts from
        with gc_paused():
            young = [[number] for number in range(5_000)]
        assert gc.get_freeze_count() >= len(young), "below the limit a pause still freezes"
        held = [[number] for number in range(100_000)]  # the memory in use grows past it
        gc.collect()
        frozen = gc.get_freeze_count()
        cycles = []
        for number in range(300):  # measures and batches while the UI makes garbage cycles
            node = Node()
            node.partner = [node, [number]]
            cycles.append(weakref.ref(node))
            del node
            with gc_paused():
                batch = [[number] for number in range(400)]
            del batch
        assert gc.get_freeze_count() - frozen < 1_000, "nothing more was frozen"
        gc.collect()
        assert not [cycle for cycle in cycles if cycle() is not None], "the cycles were freed"
        assert held
    finally:
        collector.uninstall()
    assert gc.get_freeze_count() == 0


def test_strips_the_compositor_draws_whole_are_freed_without_the_cyclic_collector() -> None:
    """Textual caches ``[strip]`` inside a strip divided at its own length, as the compositor
    divides every line it draws: each strip drawn was a cycle, frozen with the survivors and
    held until a deep collection. With the policy installed it is freed by reference counting,
    and dividing still gives the same strips."""
    from rich.segment import Segment
    from textual.strip import Strip

    collector.install()
    try:
        gc.collect()
        gc.disable()
        try:
            for _ in range(100):
                strip = Strip([Segment("hello "), Segment("world")])
                assert strip.divide([11]) == [strip]
                assert strip.divide([11, 20]) == [strip]
                assert [piece.text for piece in strip.divide([5, 11])] == ["hello", " world"]
            del strip
            assert gc.collect() == 0, "no strip was left in a cycle"
        finally:
            gc.enable()
    finally:
        collector.uninstall()


@pytest.mark.asyncio
async def test_the_parsed_entries_the_app_keeps_are_out_of_the_young_collections(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A big session's records are read on demand and the last few thousand kept parsed: the
    token count and the gauge read them on worker threads with the collector paused and then
    frozen, so the UI thread's next young collection does not scan them (on the 100k session
    ~20k containers: 5-25 ms of a frame)."""
    from tui_compactor.session import reader

    monkeypatch.setattr(reader, "LAZY_THRESHOLD", 0)  # read on demand, as a big file is
    # No automatic collection meanwhile (the policy freezes the survivors of each middle one:
    # a small session makes enough garbage to run one and hide what is checked here).
    thresholds = gc.get_threshold()
    gc.set_threshold(10**9, thresholds[1], thresholds[2])
    app = make_app(TREE_COMPACTED)
    try:
        await _check_parsed_entries_frozen(app)
    finally:
        gc.set_threshold(*thresholds)


async def _check_parsed_entries_frozen(app: object) -> None:
    from tui_compactor.ui.app import CompactorApp

    assert isinstance(app, CompactorApp)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("2")  # the Context tab lists every block of the leaf's context
        await settle(pilot)
        assert app.session is not None and app.session.lazy
        lazy = app.session._lazy
        assert lazy is not None
        kept = [record for record, _size in lazy._cache.values() if gc.is_tracked(record)]
        assert len(kept) > 20
        collectable = {id(item) for item in gc.get_objects()}  # all but the frozen
        assert not [record for record in kept if id(record) in collectable]


def _record_loads_by_group(monkeypatch: pytest.MonkeyPatch, group: str) -> list[int]:
    """The entries whose records workers of ``group`` read through the session's cache of
    parsed records (``_LazyRecords.load_record``), as they are read."""
    from textual.worker import NoActiveWorker, get_current_worker

    from tui_compactor.session import session

    loaded: list[int] = []
    load_record = session._LazyRecords.load_record

    def recorded(source: object, entry: object) -> object:
        try:
            if get_current_worker().group == group:
                loaded.append(entry.index)  # type: ignore[attr-defined]
        except NoActiveWorker:
            pass
        return load_record(source, entry)  # type: ignore[arg-type]

    monkeypatch.setattr(session._LazyRecords, "load_record", recorded)
    return loaded


@pytest.mark.asyncio
async def test_a_search_reads_each_record_once_past_the_session_cache(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A search reads every record of a big session once. Through the session's cache of
    parsed records it pushed out the records the app shows, and the records it parsed on its
    worker while the cache freed as many old ones piled up in the collector's youngest
    generation without a collection (CPython counts allocations minus frees), so the UI
    thread's next young collections scanned the last 4096 of them (10-20 ms of one frame on
    the 100k session). It reads them once (``Session.records_once``), and finds the same
    matches as reading each entry's ``data``."""
    from tui_compactor.session import reader
    from tui_compactor.ui.extras import entry_search_text
    from tui_compactor.ui.widgets.tree import SessionTree

    monkeypatch.setattr(reader, "LAZY_THRESHOLD", 0)  # read on demand, as a big file is
    cached_by_search = _record_loads_by_group(monkeypatch, "search")
    app = make_app(TREE_COMPACTED)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.session is not None and app.session.lazy
        await pilot.press("slash", *"read", "enter")
        await settle(pilot)
        matches = app.query_one(SessionTree).search_matches
        loaded = app.session
        rules = app.settings.rules
        expected = {
            entry.index
            for entry in loaded.entries
            if "read" in entry_search_text(loaded, entry, rules).casefold()
        }
        assert matches and matches == expected
    assert not cached_by_search, "the search kept what it read in the session's cache"


@pytest.mark.asyncio
async def test_the_chart_reads_the_paths_records_once_past_the_session_cache(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The context chart reads every assistant record on the active path (~25k on the 100k
    session): through the session's cache of parsed records they pushed out the records the
    app shows and piled up in the collector's youngest generation (8-15 ms of a frame at the
    open). It reads them once, and draws the same points as reading each entry's message."""
    from tui_compactor.engine.context import usage_tokens
    from tui_compactor.session import reader
    from tui_compactor.ui.messages import ChartReady

    monkeypatch.setattr(reader, "LAZY_THRESHOLD", 0)  # read on demand, as a big file is
    cached_by_chart = _record_loads_by_group(monkeypatch, "chart")
    charts: list[object] = []
    app = make_app(TREE_COMPACTED)
    on_chart_ready = type(app).on_chart_ready

    def kept(self: object, message: ChartReady) -> None:
        charts.append(message.chart)
        on_chart_ready(self, message)  # type: ignore[arg-type]

    monkeypatch.setattr(type(app), "on_chart_ready", kept)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        session = app.session
        assert session is not None and session.lazy and session.leaf is not None
        expected: list[tuple[int, int]] = []
        compactions: list[int] = []
        for index in session.path_to(session.leaf):
            entry = session.entries[index]
            if entry.type == "compaction" and expected:
                compactions.append(len(expected) - 1)
            message = entry.message if entry.role == "assistant" else None
            usage = message.get("usage") if message else None
            if isinstance(usage, dict) and usage_tokens(usage):
                expected.append((index, usage_tokens(usage)))
    assert charts, "the chart was measured"
    chart = charts[-1]
    assert len(expected) > 2 and compactions
    assert (chart.points, chart.compactions) == (expected, compactions)  # type: ignore[attr-defined]
    assert not cached_by_chart, "the chart kept what it read in the session's cache"


@pytest.mark.asyncio
async def test_a_loaded_session_and_the_first_screen_are_out_of_the_collectors_reach(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The policy as ``tui-compactor open`` runs it: the collector held until the first screen
    is drawn, the session indexed and its rows built with the collector paused. What they
    built lives as long as the session: it is frozen, so no collection (a full one included)
    scans the index, the rows or the screen's widgets; the collector runs, with the policy's
    thresholds, and its callback freezes what survives a middle collection."""
    from tui_compactor.session import reader
    from tui_compactor.ui.widgets.tree import SessionTree

    monkeypatch.setattr(reader, "LAZY_THRESHOLD", 0)  # indexed and read on demand, as a big file
    collector.hold_for_start_up()  # as ``tui-compactor open`` does before importing the app
    try:
        app = make_app(TREE_COMPACTED)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            session = app.session
            assert session is not None and session.lazy and session.complete
            tree = app.query_one(SessionTree)
            assert gc.isenabled()
            assert gc.get_threshold()[2] == collector.FULL_EVERY
            assert collector._freeze_survivors in gc.callbacks
            long_lived = [session, session.__dict__, tree.rows, tree, app.screen]
            long_lived += [value for value in vars(session).values() if gc.is_tracked(value)]
            long_lived += [item for item in gc.get_referents(tree.rows) if gc.is_tracked(item)]
            scanned = {id(item) for item in gc.get_objects()}  # what a full collection scans
            assert not [item for item in long_lived if id(item) in scanned]
    finally:
        collector.release_start_up()
