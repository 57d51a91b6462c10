"""A search jumps to the first match after the cursor with the match row selected and on
screen, at 80x24 and 200x60; the rows of its matches are found by the search worker, not by
the UI thread in the frame that jumps."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from tests.ui.app_helpers import make_app, settle
from tui_compactor.ui import app as app_module
from tui_compactor.ui import extras
from tui_compactor.ui.widgets.tree import SessionTree

pytestmark = pytest.mark.asyncio

REAL = Path(__file__).resolve().parents[1] / "fixtures" / "sessions" / "refactor-session-v3.jsonl"


@pytest.mark.parametrize("size", [(80, 24), (200, 60)])
async def test_search_jump_selects_a_visible_match_row_found_off_the_ui_thread(
    size: tuple[int, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    threads: list[str] = []
    match_rows = extras.match_rows

    def recorded(*args: Any) -> list[int]:
        threads.append(threading.current_thread().name)
        return match_rows(*args)

    monkeypatch.setattr(app_module, "match_rows", recorded)
    monkeypatch.setattr(extras, "match_rows", recorded)
    app = make_app(REAL)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        tree = app.query_one(SessionTree)
        await pilot.press("g")
        await settle(pilot)
        await pilot.press("slash", *"read", "enter")
        await settle(pilot)
        matches = tree.search_matches
        shown = sorted(tree.row_of_entry[i] for i in matches if i in tree.row_of_entry)
        assert len(shown) > 3, "the word is in several visible entries"
        for step, expected in enumerate(shown[:3] if shown[0] > 0 else shown[1:4]):
            if step:
                await pilot.press("n")
                await settle(pilot)
            assert tree.cursor == expected
            assert app.selected_entry == tree.rows.index_at(expected)
            top = int(tree.scroll_y)
            assert top <= expected < top + tree.size.height - tree.covered_rows
            line = list(tree.render_line(expected - top))
            cursor = tree._row_base_style(True).bgcolor
            assert cursor is not None and line[0].style.bgcolor == cursor, "the cursor row"
            others = [tree.render_line(y) for y in range(tree.size.height) if y != expected - top]
            assert all(next(iter(row)).style.bgcolor != cursor for row in others)
        assert threads, "the match rows were computed"
        assert threading.main_thread().name not in threads


@pytest.fixture
def held_search(monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """A search that waits, before its first entry, until the test lets it go on (a big
    session's search takes seconds)."""
    go_on = threading.Event()
    read = extras.entry_search_text

    def held(*args: Any) -> str:
        go_on.wait(30)
        return read(*args)

    monkeypatch.setattr(app_module, "entry_search_text", held)
    return go_on


def _notes(app: Any) -> list[str]:
    return [str(note.message) for note in app._notifications]


async def _search_from_the_top(pilot: Any, app: Any) -> SessionTree:
    """The first row under the cursor, then a search for "read" submitted."""
    await settle(pilot)
    tree = app.query_one(SessionTree)
    await pilot.press("g")
    await settle(pilot)
    await pilot.press("slash", *"read", "enter")
    return tree


async def test_n_during_a_search_says_it_is_still_running_and_stays(
    held_search: threading.Event,
) -> None:
    """``n`` pressed before the matches arrive says the search is still running (not "no
    matches") and leaves the cursor where it is; the matches then jump as usual."""
    app = make_app(REAL)
    async with app.run_test(size=(120, 36)) as pilot:
        tree = await _search_from_the_top(pilot, app)
        await pilot.pause(0.7)  # past the note that the search runs
        await pilot.press("n")
        await pilot.pause()
        assert tree.cursor == 0
        assert any(note.startswith("searching “read”") for note in _notes(app))
        assert any(note.startswith("still searching “read”") for note in _notes(app))
        assert not any(note == "no matches" for note in _notes(app))
        held_search.set()
        await settle(pilot)
        assert tree.search_matches and tree.cursor > 0, "jumped to the first match"


async def test_a_cursor_moved_during_a_search_stays_where_the_user_took_it(
    held_search: threading.Event,
) -> None:
    """Matches arriving after the user moved on mark the rows and say ``n`` jumps, but do not
    pull the cursor away from where the user went."""
    app = make_app(REAL)
    async with app.run_test(size=(120, 36)) as pilot:
        tree = await _search_from_the_top(pilot, app)
        await pilot.pause()
        await pilot.press("j", "j", "j")
        await pilot.pause()
        where = tree.cursor
        held_search.set()
        await settle(pilot)
        assert tree.search_matches, "the matches are marked"
        assert tree.cursor == where
        assert any("n jumps to the next" in note for note in _notes(app))
        await pilot.press("n")
        await settle(pilot)
        assert tree.cursor > where and tree.rows.index_at(tree.cursor) in tree.search_matches


async def test_at_80x24_a_search_says_what_it_found_under_the_notes_of_the_open() -> None:
    """A file that opens with a note of its issues, then a search that jumps (and wraps): the
    notes shown keep to half the screen, and the count found and the match the cursor went to
    are still on screen (one note: two crowded the count out)."""
    omp = REAL.parents[1] / "oracle-omp" / "sessions" / "omp-basic.jsonl"
    app = make_app(omp)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert any("issues" in note.title for note in app._notifications), "the open's note"
        await pilot.press("slash", *"compaction", "enter")
        await settle(pilot)
        shown = _notes(app)
        assert any("“compaction”: 2 matches · match 1/2" in n for n in shown), shown
        await pilot.press("n")
        await settle(pilot)
        assert any(n.startswith("match 2/2") for n in _notes(app)), "n replaces the note"


async def test_a_search_with_one_match_says_1_match() -> None:
    """An id typed into the search box finds its one entry: the note says "1 match" (it said
    "1 matches")."""
    omp = REAL.parents[1] / "oracle-omp" / "sessions" / "omp-basic.jsonl"
    app = make_app(omp)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        ident = app.handle.session.entries[3].id
        await pilot.press("slash", *ident, "enter")
        await settle(pilot)
        shown = _notes(app)
        assert any(f"“{ident}”: 1 match · match 1/1" in n for n in shown), shown
