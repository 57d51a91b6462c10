"""The app's budget editor reaches every setting the seeds name, and the settings act."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Checkbox, Input, Select, Static

from tests.ui.app_helpers import (
    OTHER_BRANCH_TIP,
    SIZE,
    TREE_BRANCHES,
    TREE_COMPACTED,
    added_records,
    copy_fixture,
    make_app,
    scroll_to_plan_form,
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
        await scroll_to_plan_form(pilot)
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


FORM_FIELDS = {"plan-keep", "plan-reserve", "plan-window", "plan-threshold-percent",
               "plan-threshold-tokens", "plan-branch-reserve", "plan-summary-window",
               "plan-focus", "plan-effort", "plan-method"}  # fmt: skip


@pytest.mark.parametrize("size", [(80, 24), SIZE, (200, 60), (240, 80)])
async def test_the_form_is_made_when_its_place_comes_into_view(size: tuple[int, int]) -> None:
    """Showing a plan makes none of the form's ~40 widgets while its place lies below the
    plan, its sweep and its settings (out of view at 80x24 and 120x36): the pane shows the
    plan, and where the form goes never shows without it. Scrolled to, the form is there,
    showing the settings of the moment it was made; a pane tall enough shows it at once."""
    from tui_compactor.ui.widgets.plan_view import FormHint, PlanView

    app = make_app(TREE_COMPACTED)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        await pilot.pause(0.6)  # the reserved rows are given back (redraw.SHRINK_AFTER)
        await settle(pilot)
        view = app.query_one(PlanView)
        assert app.plan is not None
        assert "Plan for leaf" in str(view.query_one("#plan-text", Static).render())
        assert "settings" in str(view.query_one("#plan-sources", Static).render())
        hints = view.query(FormHint)
        if size in ((80, 24), SIZE):
            assert hints and view._fields == {} and not view.query(Input), "made out of view"
        elif size == (240, 80):
            assert not hints, "the form's place is in view: it is made"
        if hints:  # waiting below the fold
            assert not app.screen.find_widget(hints.first()).visible_region, size
            view.show_settings(app.settings.edited(keep_recent_tokens=12345))
            await scroll_to_plan_form(pilot)
            assert app.query_one("#plan-keep", Input).value == "12345"
        assert not view.query(FormHint)
        made = {widget.id for widget in view.query(Input)} | {w.id for w in view.query(Select)}
        assert made >= FORM_FIELDS
        view.scroll_end(animate=False)  # the form's last row is in reach
        await settle(pilot)
        assert app.screen.find_widget(app.query_one("#plan-focus-row")).visible_region


@pytest.mark.parametrize("size", [(80, 24), SIZE])
async def test_tab_reaches_the_form_right_after_c(size: tuple[int, int]) -> None:
    """Right after ``c``, before the plan comes, tab goes from the tree to the form's first
    field (made on the way), and what is typed there edits keep-recent."""
    app = make_app(TREE_COMPACTED)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press("c")
        for _ in range(6):
            await pilot.press("tab")
            await pilot.pause()
            if isinstance(app.focused, Input):
                break
        keep = app.query_one("#plan-keep", Input)
        assert app.focused is keep
        await settle(pilot)
        await pilot.press(*"1234")
        await settle(pilot)
        assert app.settings.keep_recent_tokens == 1234
        assert app.plan is not None and app.plan.keep_recent_tokens == 1234


@pytest.mark.parametrize("broken", ["plan", "sweep"])
async def test_the_form_is_made_in_view_after_the_first_plan_or_its_sweep_fails(
    broken: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The form waits while the first plan or its sweep is on its way (its place moves when
    they come); if one fails nothing is coming, and scrolled to, the form is made."""
    import tui_compactor.engine.deps as deps
    import tui_compactor.ui.app as app_module
    from tui_compactor.ui.widgets.plan_view import FormHint, PlanView

    def broke(*args: object, **kwargs: object) -> None:
        raise RuntimeError(f"{broken} broke")

    if broken == "plan":
        monkeypatch.setattr(app_module, "plan_report", broke)
    else:
        monkeypatch.setattr(deps, "cut_sweep", broke)
    app = make_app(TREE_COMPACTED)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        await pilot.pause(0.6)
        await settle(pilot)
        notes = [str(note.title) for note in app._notifications]
        assert f"{broken} failed" in notes, notes
        view = app.query_one(PlanView)
        assert view.query(FormHint), "the form's place is below the fold"
        await scroll_to_plan_form(pilot)
        assert not view.query(FormHint)
        assert {widget.id for widget in view.query(Input)} >= {"plan-keep", "plan-reserve"}
