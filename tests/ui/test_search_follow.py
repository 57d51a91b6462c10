"""Search while the agent appends: entries live follow adds after a search (or while it runs)
are searched too, so ``n`` reaches the agent's new matching entries instead of saying "no
matches" (or wrapping over the old ones) while they are on screen."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tests.ui.app_helpers import TREE_COMPACTED, copy_fixture, make_app, raised_notes, settle
from tests.workbench.agent import user_message
from tui_compactor.ui import app as app_module
from tui_compactor.ui.messages import SessionRefreshed
from tui_compactor.ui.widgets.tree import SessionTree

pytestmark = pytest.mark.asyncio

WORD = "zebra"


def agent_appends(path: Path, texts: list[str]) -> list[str]:
    """Append user messages as a chain under the file's last entry, as an agent does."""
    parent = json.loads(path.read_bytes().splitlines()[-1])["id"]
    ids = []
    with path.open("ab") as handle:
        for number, text in enumerate(texts):
            ident = f"agent{number:03d}{len(path.read_bytes()) % 1000:03d}"
            handle.write(json.dumps(user_message(ident, parent, text)).encode() + b"\n")
            handle.flush()
            ids.append(ident)
            parent = ident
    return ids


@pytest.mark.parametrize("size", [(80, 24), (200, 60)])
async def test_n_reaches_matches_the_agent_appended_after_the_search(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    session = copy_fixture(TREE_COMPACTED, tmp_path)
    app = make_app(session)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press("slash", *WORD, "enter")
        await settle(pilot)
        tree = app.query_one(SessionTree)
        assert not tree.search_matches, "no entry of the fixture has the word"
        agent_appends(session, [f"first {WORD} note", "unrelated", f"second {WORD} note"])
        app._follow_tick()
        await settle(pilot)
        found = sorted(tree.search_matches)
        assert len(found) == 2, found
        assert any("2 matches in new entries" in note for note in raised_notes(app))
        await pilot.press("g", "n")
        await settle(pilot)
        assert app.selected_entry == found[0]
        await pilot.press("n")
        await settle(pilot)
        assert app.selected_entry == found[1]


async def test_entries_appended_while_the_search_runs_are_searched_when_it_ends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = copy_fixture(TREE_COMPACTED, tmp_path)
    app = make_app(session)
    search_text = app_module.entry_search_text
    appended = threading.Event()

    def appending(*args: Any) -> str:
        """The first entry searched waits for the agent's append and live follow's refresh."""
        if not appended.is_set() and threading.current_thread() is not threading.main_thread():
            appended.set()
            handle = app.handle
            assert handle is not None
            count = len(handle.session.entries)
            agent_appends(session, [f"late {WORD} entry"])
            app.call_from_thread(app._follow_tick)
            deadline = time.monotonic() + 20
            while len(handle.session.entries) == count and time.monotonic() < deadline:
                time.sleep(0.01)
            assert len(handle.session.entries) > count, "live follow read the new entry"
        return search_text(*args)

    monkeypatch.setattr(app_module, "entry_search_text", appending)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("slash", *WORD, "enter")
        await settle(pilot)
        assert appended.is_set()
        tree = app.query_one(SessionTree)
        (late,) = tree.search_matches
        assert app.session.entries[late].id.startswith("agent")
        await pilot.press("g", "n")
        await settle(pilot)
        assert app.selected_entry == late


async def test_new_entries_searched_after_the_search_was_cleared_are_not_marked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = copy_fixture(TREE_COMPACTED, tmp_path)
    app = make_app(session)
    search_text = app_module.entry_search_text
    holding = threading.Event()  # set once the first search ended: later searches wait
    searching = threading.Event()
    cleared = threading.Event()

    def held(*args: Any) -> str:
        """The new entries' search waits until the user has cleared the search."""
        if holding.is_set() and threading.current_thread() is not threading.main_thread():
            searching.set()
            assert cleared.wait(20)
        return search_text(*args)

    monkeypatch.setattr(app_module, "entry_search_text", held)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("slash", *WORD, "enter")
        await settle(pilot)
        holding.set()
        agent_appends(session, [f"new {WORD} entry"])
        app._follow_tick()
        for _ in range(200):
            await pilot.pause(0.01)
            if searching.is_set():
                break
        assert searching.is_set(), "the new entries are being searched"
        # The user clears the search (an empty query) while they are searched.
        await pilot.press("slash", *["backspace"] * len(WORD), "enter")
        await pilot.pause()
        cleared.set()
        await settle(pilot)
        assert not app.query_one(SessionTree).search_matches
        assert not any("in new entries" in note for note in raised_notes(app))


async def test_an_agent_appending_fast_keeps_one_note_that_counts_its_entries(
    tmp_path: Path,
) -> None:
    """Live follow notes what arrived: an agent appending every few hundred milliseconds raised
    a note per refresh ("1 new entry", "3 new entries", "2 new entries" stacked over the tree);
    now one note counts what arrived while it is shown."""
    session = copy_fixture(TREE_COMPACTED, tmp_path)
    app = make_app(session)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        for batch in (["one"], ["two", "three", "four"], ["five", "six"]):
            agent_appends(session, batch)
            app._follow_tick()
            await settle(pilot)
        shown = [note.message for note in app._notifications if "new entr" in note.message]
        assert shown == ["6 new entries"], shown


async def test_two_refreshes_handled_in_one_tick_keep_one_note_that_counts_both(
    tmp_path: Path,
) -> None:
    """Two live-follow refreshes handled before the first note reaches the toasts (``notify``
    only posts it): the second note looked for the first among the toasts, did not find it
    and showed "1 new entry" and "2 new entries" side by side (or, both "1 new entry", one
    replaced the other and the screen said 1 where 2 arrived)."""
    session = copy_fixture(TREE_COMPACTED, tmp_path)
    app = make_app(session)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        handle = app.handle
        assert handle is not None
        refreshed = []
        for batch in (["one"], ["two", "three"], ["four"]):
            agent_appends(session, batch)
            result = handle.refresh()
            refreshed.append(SessionRefreshed(result.status, list(result.added)))
        for message in refreshed:
            app.post_message(message)
        await settle(pilot)
        shown = [note.message for note in app._notifications if "new entr" in note.message]
        assert shown == ["4 new entries"], shown
        # The note counts only while it is shown: once it has gone, the next batch starts over.
        for note in list(app._notifications):
            app._unnotify(note)
        await settle(pilot)
        agent_appends(session, ["five"])
        app._follow_tick()
        await settle(pilot)
        shown = [note.message for note in app._notifications if "new entr" in note.message]
        assert shown == ["1 new entry"], shown
