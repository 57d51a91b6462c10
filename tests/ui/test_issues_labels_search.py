"""The Issues view, label editing and search feedback, on real files (copies of fixtures and the
bundled demo); writes are checked on the file's bytes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import DataTable, Input

from tests.ui.app_helpers import (
    BAD,
    TREE_BRANCHES,
    TREE_COMPACTED,
    added_records,
    copy_fixture,
    make_app,
    raised_notes,
    settle,
)
from tui_compactor.commands.demo import copy_sample
from tui_compactor.ui.commands import CompactorCommands
from tui_compactor.ui.screens.issues import IssuesScreen
from tui_compactor.ui.screens.label import LabelDialog
from tui_compactor.ui.widgets.tree import SessionTree

pytestmark = pytest.mark.asyncio


def notes(app: Any) -> list[str]:
    """The notes on screen now (an expired one is gone; ``raised_notes`` keeps them all)."""
    return [str(notification.message) for notification in app._notifications]


def palette_titles(app: Any) -> list[str]:
    return [title for title, _, _ in CompactorCommands(app.screen)._commands()]


async def test_issues_view_lists_every_diagnostic_and_jumps_to_its_entry(tmp_path: Path) -> None:
    app = make_app(copy_sample(tmp_path))
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        diagnostics = app.session.diagnostics
        assert len(diagnostics) == 4
        assert f"Show load issues ({len(diagnostics)})" in palette_titles(app)
        await pilot.press("I")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, IssuesScreen)
        table = screen.query_one(DataTable)
        assert table.row_count == 4
        first = [str(cell) for cell in table.get_row_at(0)]
        assert first[0] == "warning" and first[1] == str(diagnostics[0].line)
        assert first[2] == f"{diagnostics[0].offset:,}" and first[3] == diagnostics[0].code
        await pilot.press("down", "enter")
        await settle(pilot)
        assert not isinstance(app.screen, IssuesScreen)
        target = app.session.index_of(diagnostics[1].entry_id)
        assert app.query_one(SessionTree).cursor_entry == target
        # The status line's issue count opens it too.
        await pilot.click("#status")
        await pilot.pause()
        assert isinstance(app.screen, IssuesScreen)
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, IssuesScreen)


async def test_issues_view_cuts_long_messages_with_an_ellipsis_at_80x24(tmp_path: Path) -> None:
    """At 80×24 the message column ran off the table's edge, cut mid-word with no mark; each
    message now ends in "…" inside the dialog, and a wider terminal shows more of it."""
    from tests.ui.app_helpers import screen_text

    app = make_app(copy_sample(tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("I")
        await settle(pilot)
        table = app.screen.query_one(DataTable)
        assert table.max_scroll_x == 0
        rows = [line for line in screen_text(app).splitlines() if "tool-call-unanswered  " in line]
        assert len(rows) == 4, rows
        assert all(line.rstrip(" █").endswith("…") for line in rows), rows
        narrow = rows[0].rstrip(" █")
        await pilot.resize_terminal(140, 30)
        await settle(pilot)
        rows = [line for line in screen_text(app).splitlines() if "tool-call-unanswered  " in line]
        wide = rows[0].rstrip(" █")
        assert wide.endswith("…") and len(wide.split("█", 1)[1]) > len(narrow.split("█", 1)[1])


async def test_a_clean_file_says_it_has_no_issues() -> None:
    app = make_app(TREE_BRANCHES)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("I")
        await pilot.pause()
        assert not isinstance(app.screen, IssuesScreen)
        assert "no issues: the file loaded cleanly" in raised_notes(app)


async def _label(pilot: Any, text: str) -> None:
    await pilot.press("L")
    await pilot.pause()
    assert isinstance(pilot.app.screen, LabelDialog)
    pilot.app.screen.query_one(Input).value = text
    await pilot.press("enter")
    await settle(pilot)


async def _two_rows_up(pilot: Any) -> tuple[SessionTree, int]:
    """Load, move the cursor two rows above the leaf; the tree and the entry there."""
    await settle(pilot)
    tree = pilot.app.query_one(SessionTree)
    await pilot.press("k", "k")
    await settle(pilot)
    assert tree.cursor_entry is not None
    return tree, tree.cursor_entry


async def test_labels_are_added_changed_and_cleared_as_appended_label_entries(
    tmp_path: Path,
) -> None:
    path = copy_fixture(TREE_BRANCHES, tmp_path)
    app = make_app(path, append_quiet_seconds=0)
    async with app.run_test(size=(120, 36)) as pilot:
        tree, target = await _two_rows_up(pilot)
        target_id = app.session.entries[target].id
        before = path.read_bytes()
        leaf_id = app.session.entries[app.session.leaf].id
        await _label(pilot, "first  try")
        (added,) = added_records(before, path.read_bytes())
        assert added["type"] == "label" and added["targetId"] == target_id
        assert added["label"] == "first try" and added["parentId"] == leaf_id
        assert app.session.label_of(target) == "first try"
        assert tree.cursor_entry == target  # the cursor stays on the labeled entry
        assert "first try" in tree.row_text(tree.cursor, 120).plain
        before = path.read_bytes()
        await _label(pilot, "milestone")
        (changed,) = added_records(before, path.read_bytes())
        assert changed["label"] == "milestone" and app.session.label_of(target) == "milestone"
        before = path.read_bytes()
        await _label(pilot, "")
        (cleared,) = added_records(before, path.read_bytes())
        assert cleared["type"] == "label" and "label" not in cleared
        assert app.session.label_of(target) is None
        before = path.read_bytes()
        await pilot.press("L")  # escape writes nothing
        await pilot.pause()
        await pilot.press("escape")
        await settle(pilot)
        assert path.read_bytes() == before


async def test_a_read_only_file_refuses_labels_and_writes_nothing(tmp_path: Path) -> None:
    path = copy_fixture(BAD / "v2-hookMessage.jsonl", tmp_path)
    before = path.read_bytes()
    app = make_app(path, append_quiet_seconds=0)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        assert not any(title.endswith("label of #0") for title in palette_titles(app))
        await pilot.press("L")
        await pilot.pause()
        assert not isinstance(app.screen, LabelDialog)
        assert any("version 2" in note for note in raised_notes(app))
    assert path.read_bytes() == before


async def _search(pilot: Any, query: str) -> None:
    await pilot.press("slash")
    await pilot.pause()
    pilot.app.query_one("#search", Input).value = query
    await pilot.press("enter")
    await settle(pilot)


async def test_search_finds_entry_types_and_labels_and_says_where_it_is(tmp_path: Path) -> None:
    app = make_app(copy_sample(tmp_path))
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        tree = app.query_one(SessionTree)
        session = app.session
        await _search(pilot, "branch summary")
        assert {e.index for e in session.entries if e.type == "branch_summary"} <= (
            tree.search_matches
        )
        await _search(pilot, "alt: measure")  # a label's text, not in the entry itself
        assert 1002 in tree.search_matches
        await _search(pilot, "compaction")
        compactions = {e.index for e in session.entries if e.type == "compaction"}
        assert compactions <= tree.search_matches
        shown = sorted(tree.row_of_entry[i] for i in tree.search_matches if i in tree.row_of_entry)
        total = len(shown)
        assert total >= 3
        positions = []
        raised = raised_notes(app)
        for _ in range(total):
            start = len(raised)
            await pilot.press("n")
            await pilot.pause()
            positions.append([n for n in raised[start:] if n.startswith("match ")])
            # One search note at a time: the step's note replaced the previous one on screen.
            assert sum(n.startswith("match ") for n in notes(app)) <= 1
        # One note a step, "k/total", and the step past the last match wraps.
        assert all(len(found) == 1 for found in positions)
        texts = [found[0] for found in positions]
        assert all(f"/{total}" in text for text in texts)
        assert sum("wrapped to the top" in text for text in texts) == 1
        start = len(raised)
        await pilot.press("N")
        await pilot.pause()
        assert any("wrapped to the bottom" in n or n.startswith("match ") for n in raised[start:])


async def test_match_numbers_follow_the_rows_a_filter_shows(tmp_path: Path) -> None:
    """After the filter changes which rows show, ``n`` steps through and counts the matches
    the tree shows now, and says how many the filter hides."""
    app = make_app(copy_sample(tmp_path))
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        tree = app.query_one(SessionTree)
        await _search(pilot, "read")

        def shown() -> list[int]:
            return sorted(tree.row_of_entry[i] for i in tree.search_matches
                          if i in tree.row_of_entry)  # fmt: skip

        before = shown()
        counts = set()
        for _ in range(4):  # the next filters, until one shows a different number of matches
            await pilot.press("f")
            await settle(pilot)
            counts.add(len(shown()))
            if len(shown()) != len(before):
                break
        after = shown()
        assert after and len(after) != len(before), counts
        visited = []
        raised = raised_notes(app)
        for _ in range(len(after)):
            start = len(raised)
            await pilot.press("n")
            await pilot.pause()
            visited.append(tree.cursor)
            (note,) = [n for n in raised[start:] if n.startswith("match ")]
            number = after.index(tree.cursor) + 1
            assert note.startswith(f"match {number}/{len(after)}")
            hidden = len(tree.search_matches) - len(after)
            assert (f"({hidden} more hidden" in note) == (hidden > 0)
        assert sorted(visited) == after


async def test_search_matches_compaction_nodes_by_their_type() -> None:
    app = make_app(TREE_COMPACTED)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await _search(pilot, "▣ compaction")
        tree = app.query_one(SessionTree)
        compactions = {e.index for e in app.session.entries if e.type == "compaction"}
        assert tree.search_matches == compactions


async def test_label_record_matches_pi() -> None:
    from tui_compactor.session.writer import make_label_entry

    record = make_label_entry(target_id="abc12345", label="x")
    assert {k: record[k] for k in ("type", "targetId", "label")} == {
        "type": "label",
        "targetId": "abc12345",
        "label": "x",
    }
    assert "label" not in make_label_entry(target_id="abc12345", label="")
    json.dumps(record)


async def test_issues_view_warns_that_oh_my_pi_would_rewrite_a_file_with_malformed_lines(
    tmp_path: Path,
) -> None:
    path = copy_fixture(BAD / "invalid-json-middle.jsonl", tmp_path)
    app = make_app(path)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        count = len(app.session.diagnostics) + 1
        assert f"Show load issues ({count})" in palette_titles(app)
        await pilot.press("I")
        await pilot.pause()
        table = app.screen.query_one(DataTable)
        assert table.row_count == count
        last = [str(cell) for cell in table.get_row_at(count - 1)]
        assert last[0] == "warning" and last[3] == "omp-rewrite"


@pytest.mark.parametrize("followed", [False, True], ids=["gate-finds-growth", "live-follow-saw-it"])
async def test_a_label_typed_while_the_agent_appends_goes_after_the_new_leaf(
    tmp_path: Path, followed: bool
) -> None:
    import subprocess
    import sys

    path = copy_fixture(TREE_BRANCHES, tmp_path)
    app = make_app(path, append_quiet_seconds=0)
    async with app.run_test(size=(120, 36)) as pilot:
        tree, target = await _two_rows_up(pilot)
        old_leaf_id = app.session.entries[app.session.leaf].id
        await pilot.press("L")
        await pilot.pause()
        assert isinstance(app.screen, LabelDialog)
        # A second process (the agent) appends while the user types the label.
        agent = subprocess.run(
            [sys.executable, "-m", "tests.workbench.agent", str(path)],
            check=True,
            capture_output=True,
            text=True,
            timeout=60,
        ).stdout.strip()
        if followed:
            assert app.handle is not None
            app.handle.refresh()
        grown = path.read_bytes()
        app.screen.query_one(Input).value = "after the agent"
        await pilot.press("enter")
        await settle(pilot)
        (added,) = added_records(grown, path.read_bytes())
        assert added["type"] == "label" and added["label"] == "after the agent"
        assert added["parentId"] == agent != old_leaf_id, "never onto the old leaf"
        assert app.session.label_of(target) == "after the agent"
        assert any("the session grew meanwhile" in note for note in raised_notes(app))
