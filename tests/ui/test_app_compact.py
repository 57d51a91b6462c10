"""Pilot tests of plan and compact: plan marks, moving the cut, budget edits, accept / discard /
cancel with the offline summarizer and with the loopback LLM server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.llm_server import LLMServer
from tests.ui.app_helpers import (
    SIZE,
    TREE_COMPACTED,
    added_records,
    copy_fixture,
    make_app,
    plan_with_earlier_cuts,
    raised_notes,
    run_review,
    server_app,
    settle,
)
from tui_compactor.config import Config
from tui_compactor.engine.plan import prepare_compaction
from tui_compactor.ui.widgets.compaction import CompactionPanel
from tui_compactor.ui.widgets.tree import SessionTree

pytestmark = pytest.mark.asyncio


async def test_plan_marks_regions_and_matches_engine() -> None:
    app = make_app(TREE_COMPACTED)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        plan = app.plan
        assert plan is not None and plan.prepared
        expected = prepare_compaction(
            app.session, app.session.leaf, app.settings.compaction(), app.counter
        )
        assert plan.first_kept_entry_id == expected.first_kept_entry_id
        assert plan.region_tokens == expected.region_tokens
        tree = app.query_one(SessionTree)
        assert tree.cut_entry == plan.branch[plan.first_kept_index]
        regions = set(tree.plan_regions.values())
        assert {"summarize", "keep"} <= regions
        # Every entry of the branch is marked with the engine's region.
        for position, entry_index in enumerate(plan.branch):
            assert tree.plan_regions[entry_index] == plan.region_of(position)
        # Escape clears the plan marks.
        await pilot.press("escape")
        await settle(pilot)
        assert app.plan is None and not tree.plan_regions


async def test_brackets_move_the_cut_between_valid_cut_points() -> None:
    app = make_app(TREE_COMPACTED)
    async with app.run_test(size=SIZE) as pilot:
        first, cuts, position = await plan_with_earlier_cuts(pilot, 1)
        await pilot.press("left_square_bracket")
        await settle(pilot)
        earlier = app.plan
        assert earlier.prepared
        assert earlier.first_kept_index == cuts[position - 1]
        assert earlier.region_tokens["keep"] > first.region_tokens["keep"]
        await pilot.press("right_square_bracket")
        await settle(pilot)
        assert app.plan.first_kept_index == cuts[position]


async def test_editing_keep_recent_replans() -> None:
    app = make_app(TREE_COMPACTED)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        before = app.plan.first_kept_index
        await pilot.press("e")  # focus the keep-recent input, its text selected
        await pilot.press(*"2000")
        await settle(pilot)
        assert app.settings.keep_recent_tokens == 2000
        assert app.plan.keep_recent_tokens == 2000
        assert app.plan.first_kept_index > before, "keeping less moves the cut later"
        assert app.gauge_data is not None and app.gauge_data.keep_recent == 2000


async def test_compact_offline_accept_appends_exactly_one_entry(tmp_path: Path) -> None:
    path = copy_fixture(TREE_COMPACTED, tmp_path)
    before = path.read_bytes()
    app = make_app(path, append_quiet_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        leaf_id = app.session.entries[app.session.leaf].id
        await pilot.press("c")
        await settle(pilot)
        first_kept = app.plan.first_kept_entry_id
        await pilot.press("r")
        await settle(pilot)
        panel = app.query_one(CompactionPanel)
        assert panel.state == "ready"
        # The tree keeps the focus: the user browses while the summaries run.
        assert app.focused is app.query_one(SessionTree)
        await pilot.press("a")
        await settle(pilot)
        records = added_records(before, path.read_bytes())
        assert len(records) == 1
        entry = records[0]
        assert entry["type"] == "compaction"
        assert entry["parentId"] == leaf_id
        assert entry["firstKeptEntryId"] == first_kept
        assert entry["summary"].strip()
        # The new compaction node is in the tree at once, under the cursor, on the active path.
        session = app.session
        assert session.entries[session.leaf].type == "compaction"
        tree = app.query_one(SessionTree)
        assert tree.cursor_entry == session.leaf
        assert tree.rows[tree.row_of_entry[session.leaf]].on_active_path
        assert app.plan is None


async def test_compact_offline_discard_writes_nothing(tmp_path: Path) -> None:
    path = copy_fixture(TREE_COMPACTED, tmp_path)
    before = path.read_bytes()
    app = make_app(path, append_quiet_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("r")  # without a plan: plans first, then runs
        await settle(pilot)
        panel = app.query_one(CompactionPanel)
        assert panel.state == "ready"
        await pilot.press("d")
        await settle(pilot)
        assert panel.state == "discarded"
        assert path.read_bytes() == before


async def test_compact_with_server_streams_then_accept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = copy_fixture(TREE_COMPACTED, tmp_path)
    before = path.read_bytes()
    with LLMServer() as server:
        app = server_app(server, path, monkeypatch)
        async with app.run_test(size=SIZE) as pilot:
            assert (await run_review(pilot)).state == "ready"
            await pilot.press("a")
            await settle(pilot)
        assert server.requests, "the summaries came from the server"
    records = added_records(before, path.read_bytes())
    assert [r["type"] for r in records] == ["compaction"]
    assert "test-model" in json.dumps(records[0].get("generator", {}))


async def test_quitting_closes_the_summaries_http_client(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The summaries share one HTTP client per event loop (its pool keeps connections alive
    between requests); the app closes it as it exits, not leaving it to the GC."""
    from tui_compactor.summarize import providers

    path = copy_fixture(TREE_COMPACTED, tmp_path)
    with LLMServer() as server:
        app = server_app(server, path, monkeypatch)
        async with app.run_test(size=SIZE) as pilot:
            assert (await run_review(pilot)).state == "ready"
            assert server.requests
            client = providers.shared_client()
            assert not client.is_closed
            await pilot.press("d")  # discarded: quitting asks nothing
            await settle(pilot)
            await pilot.press("q")
        assert client.is_closed


async def test_escape_cancels_a_running_compaction(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = copy_fixture(TREE_COMPACTED, tmp_path)
    before = path.read_bytes()
    with LLMServer() as server:
        server.behaviour.latency = 30.0  # the reply would take far longer than the test
        app = server_app(server, path, monkeypatch)
        async with app.run_test(size=SIZE) as pilot:
            panel = await run_review(pilot, wait=False)
            assert panel.running
            await pilot.press("escape")
            await settle(pilot)
            assert not panel.running
            assert panel.state == "cancelled"
    assert path.read_bytes() == before


async def test_candidates_with_only_offline_say_what_they_would_compare(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``R`` without a second profile runs nothing that looks like ``r``: it explains."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    path = copy_fixture(TREE_COMPACTED, tmp_path)
    app = make_app(path, config=Config())
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("R")
        await settle(pilot)
        assert not app.query(CompactionPanel)
        messages = [n.message for n in app._notifications]
        said = next(m for m in messages if "nothing to compare" in m)
        assert "anchors kept by the audit" in said
        assert str(tmp_path / "xdg" / "tui-compactor" / "config.toml") in said
        assert "[profiles.local]" in said


async def test_candidates_run_side_by_side_and_the_chosen_one_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = copy_fixture(TREE_COMPACTED, tmp_path)
    before = path.read_bytes()
    with LLMServer() as server:
        app = server_app(server, path, monkeypatch)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            await pilot.press("R")  # plans, then runs the server profile and offline
            await settle(pilot)
            panel = app.query_one(CompactionPanel)
            labels = [view.job.summarizer.label for view in panel.candidates]
            assert labels == ["openai:test-model", "offline"]
            assert panel.state == "ready"
            panel.select(2)
            await pilot.press("a")
            await settle(pilot)
    records = added_records(before, path.read_bytes())
    assert [r["type"] for r in records] == ["compaction"]
    assert records[0]["generator"]["summarizer"] == "offline"


async def test_settings_that_summarize_nothing_cannot_be_run(tmp_path: Path) -> None:
    """keep-recent 300000 with a 200k window: the pane says why, r starts nothing."""
    path = copy_fixture(TREE_COMPACTED, tmp_path)
    before = path.read_bytes()
    app = make_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        await pilot.press("e")
        await pilot.press(*"300000")
        await settle(pilot)
        assert app.settings.keep_recent_tokens == 300000
        assert app.settings.context_window == 200000  # the session model's window
        pane = str(app.query_one("#plan-text").render())
        assert "cannot run" in pane and "nothing would be summarized" in pane
        await pilot.press("escape")
        await pilot.press("r")
        await settle(pilot)
        assert not app.query(CompactionPanel)
        assert any("keep_recent_tokens (app)" in n.message for n in app._notifications)
    assert path.read_bytes() == before


SAMPLE = Path(__file__).resolve().parents[2] / "tui_compactor" / "data" / "sample-session.jsonl"


async def test_cut_keys_typed_before_the_plan_arrives_move_its_cut_and_r_runs_it(
    tmp_path: Path,
) -> None:
    """``c [ [`` typed at once: the brackets arrive before the plan they move. They wait for
    it (as ``r`` does) instead of saying "press c to plan first", and an ``r`` typed after
    them runs the moved plan, not the default cut. The same for ``c`` at another node while
    the plan of the first is still shown."""
    app = make_app(copy_fixture(SAMPLE, tmp_path), append_quiet_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        _, cuts, position = await plan_with_earlier_cuts(pilot, 3)
        await pilot.press("escape")  # no plan shown
        await settle(pilot)
        assert app.plan is None
        app.action_plan()  # none of these waits for the plan: typed faster than it arrives
        app.action_cut_earlier()
        app.action_cut_earlier()
        await settle(pilot)
        assert app.plan is not None and app.plan.first_kept_index == cuts[position - 2]
        assert not any("plan first" in note for note in raised_notes(app))
        app.action_plan()  # plans the default cut again
        app.action_cut_earlier()
        app.action_run_compaction()
        await settle(pilot)
        basis = app.state.compaction_basis
        assert basis is not None and basis.plan.first_kept_index == cuts[position - 1]
        await pilot.press("d")
        await settle(pilot)
        leaf = app.plan.leaf
        await pilot.press("k")
        await settle(pilot)
        node = app.selected_entry
        assert node is not None and node != leaf
        app.action_plan()  # the plan of the leaf is still shown
        app.action_cut_earlier()
        await settle(pilot)
        moved = app.plan
        assert moved is not None and moved.leaf == node
        app.action_plan()
        await settle(pilot)
        default = app.plan
        node_cuts = sorted(default.valid_cut_points)
        at = node_cuts.index(default.first_kept_index)
        assert moved.first_kept_index == node_cuts[at - 1], "a cut of this node's plan"
