"""Opening a big file shows its tail first: the leaf under the cursor, its details and gauge,
while the whole file is still being indexed; the app answers keys meanwhile, and the whole
tree replaces the preview keeping the cursor on the same entry."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

import tui_compactor.session.reader as reader
from tests.session.test_preview import big_session
from tests.ui.app_helpers import make_app, record_frames, settle
from tui_compactor.session.outline import build_outline
from tui_compactor.ui.widgets.chart import ContextChart
from tui_compactor.ui.widgets.details import EntryDetails
from tui_compactor.ui.widgets.tree import SessionTree

SIZE = (120, 40)


@pytest.fixture(scope="module")
def big_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """~10 MB, over ``reader.PREVIEW_MIN_BYTES``: the app previews it."""
    path = big_session(tmp_path_factory.mktemp("big") / "big.jsonl", 10_000, compaction_at=9_950)
    assert path.stat().st_size > reader.PREVIEW_MIN_BYTES
    return path


@pytest.fixture
def held_index(monkeypatch: pytest.MonkeyPatch) -> Iterator[threading.Event]:
    """The whole-file index runs for real, but only starts once the test sets the event (so
    "before indexing finishes" is a fact, not a race)."""
    release = threading.Event()
    real = reader.load_session

    def load_after_release(*args: Any, **kwargs: Any) -> Any:
        release.wait(20)
        return real(*args, **kwargs)

    monkeypatch.setattr(reader, "load_session", load_after_release)
    yield release
    release.set()


async def until(pilot: Pilot[None], condition: Callable[[], bool], seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        await pilot.pause(0.01)


@pytest.mark.asyncio
async def test_the_leaf_gauge_and_details_show_before_the_index_is_done(
    big_file: Path, held_index: threading.Event
) -> None:
    app = make_app(big_file)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.gauge_data is not None)
        session = app.session
        assert session is not None and session.preview and not held_index.is_set()
        assert app._indexing()
        tree = app.query_one(SessionTree)
        leaf_id = "e0009999"
        assert session.entries[session.leaf].id == leaf_id
        assert tree.cursor_entry == session.leaf and tree.file_leaf == session.leaf
        assert len(tree.rows) < 1_000  # the tail, not the 10,000 entries
        assert app.gauge_data.entry_index == session.leaf
        preview_tokens = app.gauge_data.tokens
        details = app.query_one(EntryDetails)
        assert details.shown_entry == session.leaf

        # Right after that frame the indexing bar shows and takes a row from the tree, which
        # keeps its cursor row in view: wait for that frame.
        def shot() -> str:
            return "\n".join(strip.text for strip in app.screen._compositor.render_strips())

        wanted = ("◆ leaf", "compact at", "#…  line …", "showing the last", "indexing")
        await until(pilot, lambda: all(text in shot() for text in wanted), 20)
        assert not held_index.is_set() and app.session is not None and app.session.preview
        # Usable meanwhile: the cursor moves and the details follow; filters and tabs work.
        await pilot.press("k", "k")
        moved = tree.cursor_entry
        assert moved is not None and moved != session.leaf
        await until(pilot, lambda: details.shown_entry == moved)
        moved_id = session.entries[moved].id
        await pilot.press("f")
        await until(pilot, lambda: app.filter_index == 1)
        await pilot.press("F")  # back to the default filter
        await until(pilot, lambda: app.filter_index == 0)
        await pilot.press("2", "1")
        # What needs the whole file waits for it (dimmed in the footer, the key does nothing).
        assert app.check_action("plan", ()) is None
        await pilot.press("c")
        assert app.plan is None
        # The whole file arrives: every row, the same entry under the cursor, the real gauge.
        held_index.set()
        await until(pilot, lambda: app.session is not None and not app.session.preview)
        await settle(pilot)
        whole = app.session
        assert whole.complete and len(whole.entries) > 10_000
        assert len(tree.rows) == len(build_outline(whole))
        assert whole.entries[tree.cursor_entry].id == moved_id
        assert app.check_action("plan", ()) is True
        await pilot.press("l")  # jump to the leaf: the gauge there is the preview's
        await until(
            pilot, lambda: app.gauge_data is not None and app.gauge_data.entry_index == whole.leaf
        )
        assert app.gauge_data.tokens == preview_tokens


@pytest.mark.asyncio
async def test_the_first_frame_shows_the_tail_and_the_index_starts_after_it(
    big_file: Path, held_index: threading.Event, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The tail is read before the first frame: that frame shows its rows (the leaf marked),
    the leaf's details and its gauge; the whole file's index starts only once it is written."""
    app = make_app(big_file)
    frames = record_frames(app)
    started_at: list[int] = []
    load = reader.load_session  # held until the test releases it

    def noted_load(*args: Any, **kwargs: Any) -> Any:
        started_at.append(len(frames))
        return load(*args, **kwargs)

    monkeypatch.setattr(reader, "load_session", noted_load)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: bool(frames) and bool(started_at))
        first = frames[0]
        assert all(text in first for text in ("◆ leaf", "compact at", "#…  line …")), first
        assert started_at[0] >= 1  # the index began after the first frame was written
        assert app.session is not None and app.session.preview
        # The rows on screen get their token counts while the rest of the file is indexed.
        tree = app.query_one(SessionTree)

        def on_screen() -> list[int]:
            top = int(tree.scroll_y)
            return [row.index for row in tree.rows[top : top + tree.size.height]]

        await until(pilot, lambda: all(index in tree.token_counts for index in on_screen()), 20)
        assert app.session.leaf in on_screen() and not held_index.is_set()
        held_index.set()
        await until(pilot, lambda: app.session is not None and not app.session.preview)


@pytest.mark.asyncio
async def test_escape_while_previewing_stops_the_index_and_shows_what_was_read(
    big_file: Path, held_index: threading.Event
) -> None:
    app = make_app(big_file)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await until(pilot, lambda: app.gauge_data is not None)
        assert app.session is not None and app.session.preview
        await pilot.press("escape")
        assert app.state.load_cancel.is_set()
        held_index.set()
        await until(pilot, lambda: app.session is not None and not app.session.preview)
        await settle(pilot)
        assert not app.session.complete  # stopped: read-only, partial
        assert "indexing stopped" in [n.title for n in app._notifications]


@pytest.mark.asyncio
async def test_the_escape_that_leaves_a_search_does_not_stop_the_index(
    big_file: Path, held_index: threading.Event
) -> None:
    """Searching the preview while the file indexes, then esc (habit, to leave the search)
    clears the matches; only a second esc stops the index."""
    app = make_app(big_file)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await until(pilot, lambda: app.gauge_data is not None)
        assert app.session is not None and app.session.preview
        tree = app.query_one(SessionTree)
        needle = app.session.entries[app.session.leaf].id
        await pilot.press("slash", *needle, "enter")
        await until(pilot, lambda: bool(tree.search_matches))
        await pilot.press("escape")
        await pilot.pause()
        assert not tree.search_matches and not app.state.load_cancel.is_set()
        await pilot.press("escape")
        assert app.state.load_cancel.is_set()
        held_index.set()
        await until(pilot, lambda: app.session is not None and not app.session.preview)


@pytest.mark.asyncio
async def test_a_small_file_opens_without_a_preview(tmp_path: Path) -> None:
    path = big_session(tmp_path / "small.jsonl", 200)
    seen: list[bool] = []
    app = make_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        seen.append(app.session is not None and app.session.preview)
        assert app.session is not None and app.session.complete
        assert app.session.entries[app.selected_entry].id == "e0000199"
    assert seen == [False]


@pytest.mark.asyncio
async def test_without_a_preview_the_bar_shows_while_the_file_is_indexed(
    tmp_path: Path, held_index: threading.Event
) -> None:
    """No compaction: the leaf's context reaches further back than a preview may read, so
    nothing shows until the index is done, and the bar says the file is being indexed."""
    path = big_session(tmp_path / "long.jsonl", 10_000)
    assert path.stat().st_size > reader.PREVIEW_MAX_BYTES
    app = make_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: "indexing long.jsonl (esc stops)" in _screen_text(app))
        assert app.session is None and not held_index.is_set()
        held_index.set()
        await until(pilot, lambda: app.session is not None)
        await settle(pilot)
        assert app.session.complete and "esc stops" not in _screen_text(app)


def _screen_text(app: Any) -> str:
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


@pytest.mark.asyncio
async def test_the_markdown_renderer_loads_once_the_whole_file_is_shown(
    big_file: Path, held_index: threading.Event, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its import shares the GIL with the index: it waits until the whole file is indexed and
    the leaf's gauge is drawn; until then the details show plain text."""
    import tui_compactor.ui.widgets.details as details_module

    monkeypatch.setattr(details_module, "_markdown_class", None)  # not loaded yet
    app = make_app(big_file)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: "showing the last" in _screen_text(app))
        await pilot.press("k")  # another entry while indexing: still no renderer import
        await pilot.pause(1.0)
        assert app.session is not None and app.session.preview
        assert not details_module.markdown_loaded()
        held_index.set()
        await until(pilot, lambda: app.session is not None and not app.session.preview)
        await until(pilot, details_module.markdown_loaded)
        assert app.state.whole_screen.is_set() and app.gauge_data is not None


@pytest.mark.asyncio
async def test_the_chart_is_measured_once_the_whole_files_first_screen_is_complete(
    big_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The chart reads every assistant turn of the active path: it waits until the whole
    file's rows on screen have their counts and the gauge shows, and then it is drawn."""
    import tui_compactor.ui.app as app_module
    from tui_compactor.engine.messages import MESSAGE_BEARING_TYPES

    seen: list[tuple[bool, bool]] = []  # (whole file, rows on screen counted + leaf's gauge)
    real = app_module.chart_points

    def recording(snapshot: Any, settings: Any) -> Any:
        tree = app.query_one(SessionTree)
        session = snapshot.session
        top = int(tree.scroll_y)
        shown = [row.index for row in tree.rows[top : top + tree.size.height]]
        counted = all(
            i in tree.token_counts
            for i in shown
            if i < len(session.entries) and session.entries[i].type in MESSAGE_BEARING_TYPES
        )
        gauge = app.gauge_data
        at_leaf = gauge is not None and gauge.entry_index == session.leaf
        seen.append((not session.preview, counted and at_leaf))
        return real(snapshot, settings)

    monkeypatch.setattr(app_module, "chart_points", recording)
    app = make_app(big_file)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.session is not None and not app.session.preview)
        await until(pilot, lambda: bool(seen))
        await settle(pilot)
        assert seen[0] == (True, True)
        assert app.query_one(ContextChart).points  # drawn


@pytest.mark.asyncio
async def test_a_key_that_waits_for_the_whole_file_says_so(
    big_file: Path, held_index: threading.Event
) -> None:
    """``c`` (or ``r``, ``T``, ``I``…) typed while a big file is indexed does nothing yet (dimmed
    in the footer): a note says what it waits for, instead of a key that seems lost."""
    from tests.ui.app_helpers import raised_notes

    app = make_app(big_file)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.gauge_data is not None)
        assert app.session is not None and app.session.preview
        await pilot.press("c")
        await pilot.pause()
        assert app.plan is None
        waits = [note for note in raised_notes(app) if "waits for the whole file" in note]
        assert waits and waits[-1].startswith("Plan waits for the whole file"), raised_notes(app)
        await pilot.press("T")
        await pilot.pause()
        assert any(n.startswith("Compaction timeline waits") for n in raised_notes(app))
        assert len(app.screen_stack) == 1
        held_index.set()
        await until(pilot, lambda: app.session is not None and not app.session.preview)
        await settle(pilot)
        before = len(raised_notes(app))
        await pilot.press("c")
        await settle(pilot)
        assert app.plan is not None
        assert not any("waits for the whole file" in n for n in raised_notes(app)[before:])


@pytest.mark.asyncio
async def test_a_highlight_that_arrives_as_the_app_closes_is_dropped(tmp_path: Path) -> None:
    """Quitting just as the whole index replaces the preview: the tree's last highlight can
    reach the app after the screen's widgets are gone. It is dropped, not a traceback (seen
    in CI under load, at the end of the test above); and a frame that still draws a removed
    widget's scrollbar draws it (the kept-lines redraw needs the widget: it steps aside)."""
    path = big_session(tmp_path / "small.jsonl", 200)
    app = make_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        tree = app.query_one(SessionTree)
        entry = tree.cursor_entry
        assert entry is not None
        await app.screen.remove_children()  # what closing the app does to the screen
        app.post_message(SessionTree.Highlighted(tree, entry))
        await pilot.pause()
