"""The app's budget editor reaches every setting the seeds name, and the settings act."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Checkbox, Input, Select

from tests.ui.app_helpers import (
    OTHER_BRANCH_TIP,
    SIZE,
    TREE_BRANCHES,
    TREE_COMPACTED,
    added_records,
    copy_fixture,
    make_app,
    settle,
)
from tui_compactor.ui.screens.navigate import NavigateDialog
from tui_compactor.ui.widgets.tree import SessionTree

pytestmark = pytest.mark.asyncio


async def test_budget_editor_edits_every_seed_setting() -> None:
    app = make_app(TREE_COMPACTED)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        assert app.plan is not None and app.plan.is_split_turn
        split_first_kept = app.plan.first_kept_index
        for widget_id, text in (
            ("#plan-threshold-percent", "60"),
            ("#plan-threshold-tokens", "150k"),
            ("#plan-branch-reserve", "20000"),
            ("#plan-summary-window", "32k"),
        ):
            field = app.query_one(widget_id, Input)
            field.focus()
            field.value = text
            await settle(pilot)
        app.query_one("#plan-effort", Select).value = "low"
        app.query_one("#plan-branch-ask", Checkbox).value = False
        app.query_one("#plan-split-turns", Checkbox).value = False
        await settle(pilot)
        settings = app.settings
        assert (
            settings.threshold_percent,
            settings.threshold_tokens,
            settings.branch_summary_reserve_tokens,
            settings.summary_window,
            settings.summary_reasoning_effort,
            settings.branch_summary_enabled,
            settings.split_turns,
        ) == (60.0, 150000, 20000, 32000, "low", False, False)
        assert all(
            settings.source_of(name) == "app"
            for name in (
                "threshold_percent",
                "summary_window",
                "split_turns",
                "branch_summary_enabled",
            )
        )
        # Re-planned without a split turn: the cut moved back to the turn's start.
        assert app.plan is not None and not app.plan.is_split_turn
        assert app.plan.first_kept_index < split_first_kept
        # The summarizer gets the effort and window.
        profile = settings.summarizer_profile(app.config.summarizer_profile(None))
        assert (profile.reasoning_effort, profile.context_window) == ("low", 32000)


async def test_branch_summaries_off_moves_without_asking(tmp_path: Path) -> None:
    path = copy_fixture(TREE_BRANCHES, tmp_path)
    before = path.read_bytes()
    app = make_app(path, append_quiet_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.state.settings = app.settings.edited("app", branch_summary_enabled=False)
        tree = app.query_one(SessionTree)
        assert tree.move_to_entry(OTHER_BRANCH_TIP)
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        assert not isinstance(app.screen, NavigateDialog)
    records = added_records(before, path.read_bytes())
    assert len(records) == 1 and records[0]["type"] == "custom"  # the leaf moved, no summary


async def test_plan_pane_says_a_long_prefix_is_folded_for_a_small_summarizer(
    tmp_path: Path,
) -> None:
    from textual.widgets import Static

    from tests.summarize.test_turn_prefix_and_family import long_turn
    from tui_compactor.config import Config
    from tui_compactor.workbench.settings import Settings

    path = long_turn(tmp_path / "s.jsonl")
    config = Config.model_validate(
        {
            "compaction": {"keep_recent_tokens": 400, "reserve_tokens": 8192, "tokens": "bytes"},
            "profiles": {
                "small": {
                    "provider": "openai",
                    "base_url": "http://127.0.0.1:9/v1",
                    "model": "m",
                    "context_window": 8192,
                }
            },
            "compaction_profile": "small",
        }
    )
    app = make_app(path, settings=Settings.from_config(config))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        assert app.plan is not None and app.plan.is_split_turn
        text = str(app.query_one("#plan-text", Static).render())
        assert "turn prefix: ~" in text and "nothing is cut" in text


@pytest.mark.parametrize("size", [(80, 24), SIZE, (200, 60)])
async def test_every_field_of_the_editor_lies_inside_the_pane(size: tuple[int, int]) -> None:
    """At 80 columns the side pane is ~40 wide: the fields stack, one label and field a line,
    instead of running off its right edge; wider, they stay side by side."""
    from tui_compactor.ui.widgets.plan_view import PlanView

    app = make_app(TREE_COMPACTED)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        await pilot.press("e")
        await settle(pilot)
        view = app.query_one(PlanView)
        right = view.region.x + view.scrollable_content_region.width + 1  # its padding
        fields = list(view.query(Input)) + list(view.query(Checkbox)) + list(view.query(Select))
        assert len(fields) == 13
        for field in fields:
            view.scroll_to_widget(field, animate=False)
            await settle(pilot)
            assert field.region.width > 0 and field.region.right <= right, (field.id, size)
        stacked = view.has_class("-stacked")
        assert stacked == (size == (80, 24))
        keep, reserve = app.query_one("#plan-keep"), app.query_one("#plan-reserve")
        assert (keep.region.y != reserve.region.y) == stacked


async def test_the_form_rows_are_made_as_they_are_mounted_with_the_settings_of_then(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Showing the plan pane makes none of the form's ~40 widgets in its first message (they
    are made a row a frame as they are mounted): a row made after the settings changed shows
    the new settings."""
    from tui_compactor.ui.widgets.plan_view import PlanView

    held: list[PlanView] = []
    monkeypatch.setattr(PlanView, "_mount_rows", lambda view: held.append(view))
    app = make_app(TREE_COMPACTED)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        view = app.query_one(PlanView)
        assert held == [view] and app.plan is not None
        assert view._fields == {}, "the form's widgets were made before their rows mount"
        view.show_settings(app.settings.edited(keep_recent_tokens=12345))
        view.focus_inputs()
        await settle(pilot)
        assert app.query_one("#plan-keep", Input).value == "12345"
        made = {widget.id for widget in view.query(Input)} | {w.id for w in view.query(Select)}
        assert made >= {"plan-keep", "plan-reserve", "plan-window", "plan-threshold-percent",
                        "plan-threshold-tokens", "plan-branch-reserve", "plan-summary-window",
                        "plan-focus", "plan-effort", "plan-method"}  # fmt: skip
