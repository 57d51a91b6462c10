"""SVG snapshots of the main screen, the plan view, a finished compaction and the navigation
dialog, and at 80×24 the timeline and the Window tab, at a fixed size on a fixed fixture (no
clocks, only the file name on screen).

Update after an intended change with ``pytest tests/ui/test_app_snapshots.py --snapshot-update``
and look at the report before committing.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot

from tests.support.llm_server import LLMServer
from tests.ui.app_helpers import SIZE, TREE_BRANCHES, TREE_COMPACTED, copy_fixture, make_app, settle
from tui_compactor.config import Config, Profile
from tui_compactor.ui.widgets.redraw import SHRINK_AFTER
from tui_compactor.ui.widgets.tree import SessionTree

OTHER_BRANCH_TIP = 33


@pytest.fixture(autouse=True)
def _fresh_process_details(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each picture is the one a user's fresh process shows: the Markdown renderer not yet
    loaded when the first screen is drawn, so the entry selected then keeps its plain look
    (``details.load_markdown``). Without this, whether an earlier test in the same pytest
    process had loaded the renderer would decide the picture."""
    from tui_compactor.ui.widgets import details

    monkeypatch.setattr(details, "_markdown_class", None)


async def _settled(pilot: Pilot[None]) -> None:
    await settle(pilot)
    await _steady(pilot)


async def _steady(pilot: Pilot[None]) -> None:
    """Let scrollbars and other late repaints catch up before the picture is taken."""
    await pilot.wait_for_scheduled_animations()
    pilot.app.screen.refresh(layout=True)
    await pilot.pause()


def test_snapshot_main_screen(snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(make_app(TREE_BRANCHES), terminal_size=SIZE, run_before=_settled)


def test_snapshot_main_screen_small_terminal(snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(make_app(TREE_BRANCHES), terminal_size=(80, 24), run_before=_settled)


def test_snapshot_timeline_small_terminal(snap_compare) -> None:  # type: ignore[no-untyped-def]
    """At 80×24 the timeline's columns fit (the id and the summary length give way)."""

    async def timeline(pilot: Pilot[None]) -> None:
        await settle(pilot)
        await pilot.press("T")
        await settle(pilot)
        await _steady(pilot)

    assert snap_compare(make_app(TREE_COMPACTED), terminal_size=(80, 24), run_before=timeline)


def test_snapshot_window_tab_small_terminal(snap_compare) -> None:  # type: ignore[no-untyped-def]
    """At 80×24 the Window tab's kinds take their short names, the figures whole."""

    async def window(pilot: Pilot[None]) -> None:
        await settle(pilot)
        await pilot.press("6")
        await settle(pilot)
        await _steady(pilot)

    assert snap_compare(make_app(TREE_COMPACTED), terminal_size=(80, 24), run_before=window)


def test_snapshot_plan_view(snap_compare) -> None:  # type: ignore[no-untyped-def]
    async def plan(pilot: Pilot[None]) -> None:
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        await pilot.press("left_square_bracket")
        await settle(pilot)
        await pilot.pause(SHRINK_AFTER + 0.2)  # the rows reserved for the plan are given back
        await settle(pilot)
        await _steady(pilot)

    assert snap_compare(make_app(TREE_COMPACTED), terminal_size=SIZE, run_before=plan)


def test_snapshot_navigation_dialog(snap_compare) -> None:  # type: ignore[no-untyped-def]
    async def open_dialog(pilot: Pilot[None]) -> None:
        await settle(pilot)
        pilot.app.query_one(SessionTree).move_to_entry(OTHER_BRANCH_TIP)
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        await _steady(pilot)

    assert snap_compare(make_app(TREE_BRANCHES), terminal_size=SIZE, run_before=open_dialog)


def test_snapshot_compaction_running(
    snap_compare,
    tmp_path: Path,  # type: ignore[no-untyped-def]
    monkeypatch,
) -> None:
    """History and turn prefix requested side by side, waiting on a slow model; the tree
    stays usable (finished runs show wall-clock times, so the running state is pictured)."""
    monkeypatch.setenv("TUI_COMPACTOR_TEST_KEY", "sk-test")
    path = copy_fixture(TREE_COMPACTED, tmp_path)
    server = LLMServer().start()
    server.behaviour.latency = 60.0
    profile = Profile(
        name="local",
        provider="openai",
        base_url=server.openai_base_url,
        model="test-model",
        api_key_env="TUI_COMPACTOR_TEST_KEY",
        max_retries=0,
    )
    config = Config(profiles={"local": profile}, default_profile="local")

    async def compact(pilot: Pilot[None]) -> None:
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        await pilot.press("r")
        await pilot.pause()
        await _steady(pilot)

    try:
        assert snap_compare(make_app(path, config=config), terminal_size=SIZE, run_before=compact)
    finally:
        server.stop()
