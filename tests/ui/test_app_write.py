"""Pilot tests of the flows that append to the file: navigate, undo, live follow.

Each test works on a copy of a fixture and checks the file's bytes: the old bytes are a prefix
of the new ones and exactly the expected lines were added (or nothing, when nothing should be).
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from textual import events

from tests.ui.app_helpers import (
    OTHER_BRANCH_TIP,
    SIZE,
    TREE_BRANCHES,
    TREE_COMPACTED,
    active_compactions,
    added_records,
    copy_fixture,
    make_app,
    raised_notes,
    server_app,
    settle,
)
from tui_compactor.ui.screens.confirm import ConfirmDialog
from tui_compactor.ui.screens.navigate import NavigateDialog
from tui_compactor.ui.widgets.tree import SessionTree

pytestmark = pytest.mark.asyncio


async def navigate_to(pilot, app, target: int, option: str) -> None:  # type: ignore[no-untyped-def]
    """Put the cursor on ``target``, press enter, pick ``option`` in the dialog."""
    tree = app.query_one(SessionTree)
    assert tree.move_to_entry(target)
    await settle(pilot)
    await pilot.press("enter")
    await settle(pilot)
    assert isinstance(app.screen, NavigateDialog)
    await pilot.press(option)
    await settle(pilot)


async def test_navigate_without_summary_appends_one_leaf_marker(tmp_path: Path) -> None:
    path = copy_fixture(TREE_BRANCHES, tmp_path)
    before = path.read_bytes()
    app = make_app(path, append_quiet_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        target_id = app.session.entries[OTHER_BRANCH_TIP].id
        await navigate_to(pilot, app, OTHER_BRANCH_TIP, "1")
        records = added_records(before, path.read_bytes())
        assert len(records) == 1
        assert records[0]["type"] == "custom"
        assert records[0]["parentId"] == target_id
        # The session shows the new leaf and the active path now runs through the target.
        session = app.session
        assert session.entries[session.leaf].id == records[0]["id"]
        tree = app.query_one(SessionTree)
        assert tree.rows[tree.row_of_entry[OTHER_BRANCH_TIP]].on_active_path


async def test_navigate_with_summary_attaches_branch_summary_at_target(tmp_path: Path) -> None:
    path = copy_fixture(TREE_BRANCHES, tmp_path)
    before = path.read_bytes()
    app = make_app(path, append_quiet_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        target_id = app.session.entries[OTHER_BRANCH_TIP].id
        old_leaf_id = app.session.entries[app.session.leaf].id
        await navigate_to(pilot, app, OTHER_BRANCH_TIP, "2")
        records = added_records(before, path.read_bytes())
        assert len(records) == 1
        summary = records[0]
        assert summary["type"] == "branch_summary"
        assert summary["parentId"] == target_id
        assert summary["summary"].strip()
        assert old_leaf_id != target_id
        # The new node is in the tree at once, under the target, with the cursor on it.
        session = app.session
        new_index = session.leaf
        assert session.entries[new_index].type == "branch_summary"
        tree = app.query_one(SessionTree)
        assert new_index in tree.row_of_entry
        assert tree.cursor_entry == new_index
        assert not tree.progress and not app.pending_targets


async def test_navigation_dialog_cancel_writes_nothing(tmp_path: Path) -> None:
    path = copy_fixture(TREE_BRANCHES, tmp_path)
    before = path.read_bytes()
    app = make_app(path, append_quiet_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await navigate_to(pilot, app, OTHER_BRANCH_TIP, "escape")
        assert not isinstance(app.screen, NavigateDialog)
        assert path.read_bytes() == before


async def test_enter_typed_again_while_the_move_is_planned_asks_and_writes_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A second ``enter`` on the node while its move is still being planned (a big session:
    the dialog is not up yet) opens no second dialog: one question, one line written."""
    import tui_compactor.engine.branch as branch

    path = copy_fixture(TREE_BRANCHES, tmp_path)
    before = path.read_bytes()
    app = make_app(path, append_quiet_seconds=0)
    planning, release = threading.Event(), threading.Event()
    plan_navigation = branch.plan_navigation

    def slow_plan(*args, **options):  # type: ignore[no-untyped-def]
        planning.set()
        release.wait(10)
        return plan_navigation(*args, **options)

    monkeypatch.setattr(branch, "plan_navigation", slow_plan)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.query_one(SessionTree).move_to_entry(OTHER_BRANCH_TIP)
        await settle(pilot)
        await pilot.press("enter")
        assert planning.wait(10)
        await pilot.press("enter")  # typed again before the dialog showed
        # A third, read from the terminal before the dialog showed, handled once it is up.
        typed_ahead = events.Key("enter", "\r")
        release.set()
        await settle(pilot)
        dialogs = [screen for screen in app.screen_stack if isinstance(screen, NavigateDialog)]
        assert len(dialogs) == 1
        app.post_message(typed_ahead)
        await settle(pilot)
        assert isinstance(app.screen, NavigateDialog)
        assert path.read_bytes() == before
        await pilot.press("1")
        await settle(pilot)
        assert not isinstance(app.screen, NavigateDialog)
        assert len(added_records(before, path.read_bytes())) == 1
        # Answered: enter on a node asks again.
        assert app.query_one(SessionTree).move_to_entry(OTHER_BRANCH_TIP - 1)
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, NavigateDialog)


async def test_navigation_dialog_names_the_summarizer_made_by_the_planning_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The dialog says which summarizer a branch summary would use; that summarizer is made
    (the summarize stack imported, the first time) by the worker that plans the move, never
    on the UI thread while the dialog opens."""
    path = copy_fixture(TREE_BRANCHES, tmp_path)
    app = make_app(path, append_quiet_seconds=0)
    on_ui_thread: list[bool] = []
    original = type(app).summarizer_for

    def recording(self, **options):  # type: ignore[no-untyped-def]
        on_ui_thread.append(threading.current_thread() is threading.main_thread())
        return original(self, **options)

    monkeypatch.setattr(type(app), "summarizer_for", recording)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        on_ui_thread.clear()
        tree = app.query_one(SessionTree)
        assert tree.move_to_entry(OTHER_BRANCH_TIP)
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        dialog = app.screen
        assert isinstance(dialog, NavigateDialog)
        assert dialog.summarizer_label == original(app, compaction=False).label
        assert on_ui_thread == [False]


async def test_the_navigation_plan_is_made_out_of_the_collectors_reach(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The planning worker builds the move's plan (tens of thousands of containers on a big
    session) with the cyclic collector paused, and what it built is frozen: the collections
    while the dialog opens on the UI thread do not scan it. The collector runs again after."""
    import gc

    import tui_compactor.engine.branch as branch

    path = copy_fixture(TREE_BRANCHES, tmp_path)
    app = make_app(path, append_quiet_seconds=0)
    collecting: list[bool] = []
    made: list[object] = []
    original = branch.plan_navigation

    def recording(*args, **options):  # type: ignore[no-untyped-def]
        collecting.append(gc.isenabled())
        plan = original(*args, **options)
        made.append(plan)
        return plan

    monkeypatch.setattr(branch, "plan_navigation", recording)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        tree = app.query_one(SessionTree)
        assert tree.move_to_entry(OTHER_BRANCH_TIP)
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, NavigateDialog)
        assert collecting == [False], "the plan is built with the collector paused"
        assert gc.isenabled(), "and it runs again after"
        plan = made[0]
        assert all(alive is not plan for alive in gc.get_objects()), "frozen"
        await pilot.press("escape")
        await settle(pilot)


async def test_navigation_on_read_only_file_writes_nothing(tmp_path: Path) -> None:
    from tests.ui.app_helpers import BAD

    path = copy_fixture(BAD / "future-version-99.jsonl", tmp_path)
    before = path.read_bytes()
    app = make_app(path, append_quiet_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.session.append_refusal
        tree = app.query_one(SessionTree)
        await pilot.press("g")
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        if isinstance(app.screen, NavigateDialog):
            await pilot.press("1")
            await settle(pilot)
        assert path.read_bytes() == before
        assert tree.rows


async def test_undo_compaction_moves_leaf_above_it(tmp_path: Path) -> None:
    path = copy_fixture(TREE_COMPACTED, tmp_path)
    before = path.read_bytes()
    app = make_app(path, append_quiet_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        session = app.session
        compaction = active_compactions(session)[-1]
        parent = session.entries[compaction].parent
        tree = app.query_one(SessionTree)
        assert tree.move_to_entry(compaction)
        await settle(pilot)
        # 25 entries after the compaction would leave the active path: asked first; "no"
        # writes nothing.
        await pilot.press("u")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmDialog)
        assert "25 entries" in app.screen.question.plain
        await pilot.press("n")
        await settle(pilot)
        assert path.read_bytes() == before
        await pilot.press("u")
        await settle(pilot)
        await pilot.press("y")
        await settle(pilot)
        records = added_records(before, path.read_bytes())
        assert len(records) == 1
        assert records[0]["type"] == "custom"
        assert records[0]["parentId"] == session.entries[parent].id
        assert compaction not in session.path_to(session.leaf)
        assert tree.rows[tree.row_of_entry[parent]].on_active_path


async def test_undo_names_entries_the_way_the_command_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The app's undo names the compaction and the entry the leaf moves back to as ``undo
    --dry-run`` does, with both numbers: ``#97, line 99`` (the app's ``#`` is the entry's index,
    the command's line its line in the file; the app said ``#96`` where the command said
    ``line 98``, for the same entry)."""
    from tui_compactor.cli import main

    path = copy_fixture(TREE_COMPACTED, tmp_path)
    assert main(["undo", str(path), "--dry-run", "--force"]) == 0
    said = capsys.readouterr().out
    app = make_app(path, append_quiet_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        session = app.session
        compaction = active_compactions(session)[-1]
        parent = session.entries[compaction].parent
        assert parent is not None
        place = f"#{compaction}, line {session.entries[compaction].line}"
        parent_place = f"#{parent}, line {session.entries[parent].line}"
        assert session.entries[parent].line != parent + 1  # two units: both are said
        assert f"({place})" in said and f"({parent_place})" in said
        assert app.query_one(SessionTree).move_to_entry(compaction)
        await settle(pilot)
        await pilot.press("u")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmDialog)
        assert f"({place})" in app.screen.question.plain
        assert f"({parent_place})" in app.screen.question.plain
        await pilot.press("y")
        await settle(pilot)
        assert f"compaction undone: leaf moved back to {parent_place}" in raised_notes(app)


async def test_undo_never_holds_the_ui_behind_a_long_reader(tmp_path: Path) -> None:
    """``u`` while an analysis holds the session and a live-follow refresh waits behind it:
    the proposal is made in a worker, so keys keep working; the question comes when the
    reader is done."""
    import threading
    import time

    path = copy_fixture(TREE_COMPACTED, tmp_path)
    before = path.read_bytes()
    app = make_app(path, append_quiet_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        handle = app.handle
        assert handle is not None
        session = app.session
        compaction = active_compactions(session)[-1]
        tree = app.query_one(SessionTree)
        assert tree.move_to_entry(compaction)
        await settle(pilot)

        holding = threading.Event()
        release = threading.Event()

        def long_reader() -> None:  # an analysis reading the whole session
            with handle.read():
                holding.set()
                release.wait(10)

        reader = threading.Thread(target=long_reader)
        reader.start()
        assert holding.wait(5)
        refresher = threading.Thread(target=handle.refresh)  # waits for the reader
        refresher.start()
        time.sleep(0.05)
        started = time.monotonic()
        await pilot.press("u")
        await pilot.press("j")  # handled at once: the UI thread is not waiting for the lock
        await pilot.pause()
        assert time.monotonic() - started < 5  # the old code waited for the reader (10 s)
        assert not isinstance(app.screen, ConfirmDialog)
        release.set()
        reader.join(5)
        refresher.join(5)
        await settle(pilot)
        assert isinstance(app.screen, ConfirmDialog)
        assert "25 entries" in app.screen.question.plain
        await pilot.press("n")
        await settle(pilot)
    assert path.read_bytes() == before


async def test_undo_refuses_what_the_command_refuses_with_its_reason(tmp_path: Path) -> None:
    """A compaction that is not the last one on the active path: the app refuses, with the
    workbench's reason (the rule ``undo`` applies), and writes nothing."""
    from tui_compactor.workbench.actions import ActionRefused, propose_undo

    path = copy_fixture(TREE_COMPACTED, tmp_path)
    before = path.read_bytes()
    app = make_app(path, append_quiet_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        older = active_compactions(app.session)[0]
        assert app.query_one(SessionTree).move_to_entry(older)
        await settle(pilot)
        await pilot.press("u")
        await settle(pilot)
        assert not isinstance(app.screen, ConfirmDialog)
        shown = [n.message for n in app._notifications]
        assert app.handle is not None
        with app.handle.read() as snapshot, pytest.raises(ActionRefused) as refused:
            propose_undo(snapshot, older)
        assert "is not the last compaction on the active path" in refused.value.reason
        assert any(refused.value.reason in message for message in shown)
    assert path.read_bytes() == before


async def test_undo_refuses_on_a_non_compaction_node(tmp_path: Path) -> None:
    path = copy_fixture(TREE_COMPACTED, tmp_path)
    before = path.read_bytes()
    app = make_app(path, append_quiet_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("u")  # cursor on the leaf, an assistant message
        await settle(pilot)
        assert path.read_bytes() == before


async def test_live_follow_shows_appended_entries_and_keeps_cursor(tmp_path: Path) -> None:
    path = copy_fixture(TREE_BRANCHES, tmp_path)
    app = make_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        session = app.session
        tree = app.query_one(SessionTree)
        await pilot.press("g", "j", "j")
        await settle(pilot)
        cursor_entry = tree.cursor_entry
        leaf = session.entries[session.leaf]
        record = {
            "type": "message",
            "id": "feedf00d",
            "parentId": leaf.id,
            "timestamp": "2026-01-12T10:00:00.000Z",
            "message": {
                "role": "user",
                "content": [{"type": "text", "text": "one more thing"}],
                "timestamp": 1768212000000,
            },
        }
        with path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(record) + "\n")
        app._follow_tick()
        await settle(pilot)
        new_index = session.entries[-1].index
        assert session.entries[-1].id == "feedf00d"
        assert new_index in tree.row_of_entry
        assert session.leaf == new_index
        assert tree.cursor_entry == cursor_entry


def _append(path: Path, record: dict[str, object]) -> None:
    with path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(record) + "\n")


async def test_the_cursor_on_a_bookkeeping_leaf_stays_on_its_branch_when_the_agent_appends(
    tmp_path: Path,
) -> None:
    """A bookkeeping entry (a thinking level change, a label...) is shown while it is the leaf
    and hidden once the agent appends below it: the cursor on it goes to its nearest shown
    ancestor, not to the new entry that took its row (``c`` would then plan at the new leaf)."""
    path = copy_fixture(TREE_COMPACTED, tmp_path)
    answer = json.loads(path.read_bytes().splitlines()[-1])
    _append(
        path,
        {
            "type": "thinking_level_change",
            "id": "7417c4a1",
            "parentId": answer["id"],
            "timestamp": "2026-01-12T10:00:00.000Z",
            "thinkingLevel": "high",
        },
    )
    app = make_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        session = app.session
        tree = app.query_one(SessionTree)
        assert session.entries[tree.cursor_entry].id == "7417c4a1"  # the leaf, shown
        _append(
            path,
            {
                "type": "message",
                "id": "feedf00d",
                "parentId": "7417c4a1",
                "timestamp": "2026-01-12T10:00:01.000Z",
                "message": {"role": "user", "content": "go on", "timestamp": 1768212001000},
            },
        )
        app._follow_tick()
        await settle(pilot)
        assert session.entries[session.leaf].id == "feedf00d"
        assert session.index_of("7417c4a1") not in tree.row_of_entry  # hidden now
        assert tree.cursor_entry == session.index_of(answer["id"])
        assert app.selected_entry == tree.cursor_entry


async def test_failed_branch_summary_writes_nothing_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.support.llm_server import LLMServer

    path = copy_fixture(TREE_BRANCHES, tmp_path)
    before = path.read_bytes()
    with LLMServer() as server:
        server.add_faults("401")
        app = server_app(server, path, monkeypatch, model="m")
        async with app.run_test(size=SIZE, notifications=True) as pilot:
            await settle(pilot)
            leaf = app.session.leaf
            await navigate_to(pilot, app, OTHER_BRANCH_TIP, "2")
            assert path.read_bytes() == before
            assert app.session.leaf == leaf, "the user stays where they were"
            assert not app.query_one(SessionTree).progress and not app.pending_targets
            titles = [n.title for n in app._notifications]
            assert any("nothing written" in title for title in titles)
            assert "sk-test" not in " ".join(n.message for n in app._notifications)
