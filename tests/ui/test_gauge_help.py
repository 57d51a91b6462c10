"""The gauge says which figure it trusts and flags disagreement; help shows keys as typed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from textual.app import App, ComposeResult
from textual.widgets import Static
from textual.widgets._toast import Toast

from tests.ui.app_helpers import TREE_COMPACTED, make_app, settle
from tui_compactor.commands.demo import copy_sample, demo_config
from tui_compactor.engine.estimates import disagreement
from tui_compactor.ui.messages import GaugeData
from tui_compactor.ui.widgets.gauge import ContextGauge
from tui_compactor.ui.widgets.help import HelpScreen, keys_label


def gauge_data(**changes: Any) -> GaugeData:
    values: dict[str, Any] = dict(
        entry_index=0,
        tokens=60_000,
        local_estimate=58_000,
        usage_tokens=50_000,
        window=200_000,
        reserve=16_384,
        threshold=183_616,
        keep_recent=20_000,
        should_compact=False,
        blocks=[],
        window_model="claude-opus-4-5",
    )
    values.update(changes)
    return GaugeData(**values)


class GaugeHost(App[None]):
    CSS = "ContextGauge { width: 120; }"

    def compose(self) -> ComposeResult:
        yield ContextGauge(id="gauge")


async def gauge_lines(data: GaugeData) -> list[str]:
    app = GaugeHost()
    async with app.run_test(size=(130, 10)) as pilot:
        gauge = app.query_one(ContextGauge)
        gauge.show(data)
        await pilot.pause()
        return str(gauge.render()).splitlines()


def test_disagreement_is_flagged_from_three_times_apart_either_way() -> None:
    assert disagreement(60_000, 58_000) is None
    assert disagreement(60_000, 20_001) is None
    assert disagreement(60_000, 20_000) == pytest.approx(3.0)
    assert disagreement(10_000, 40_000) == pytest.approx(4.0)
    assert disagreement(None, 40_000) is None and disagreement(10, 0) is None


@pytest.mark.asyncio
async def test_gauge_names_the_trusted_figure_and_flags_stale_usage() -> None:
    agree = await gauge_lines(gauge_data())
    assert agree[2].startswith("from usage 50.0k + 10.0k estimated since")
    assert "local estimate 58.0k" in agree[2] and "⚠" not in agree[2]
    stale = await gauge_lines(
        gauge_data(tokens=160_000, usage_tokens=150_000, local_estimate=40_000)
    )
    assert stale[2].startswith("from usage 150k + 10.0k estimated since")
    assert "⚠ local 40.0k: 4.0× apart" in stale[2]  # the long flag did not fit: short form


@pytest.mark.asyncio
async def test_gauge_without_usage_says_local_estimate_once() -> None:
    lines = await gauge_lines(gauge_data(tokens=58_000, usage_tokens=None))
    assert lines[2].count("local estimate") == 1
    assert "no usage data" in lines[2]


def test_keys_are_shown_as_typed() -> None:
    assert keys_label("question_mark,f1") == "?, f1"
    assert keys_label("left_square_bracket") == "["
    assert keys_label("escape") == "esc"
    assert keys_label("enter") == "enter"
    assert keys_label("ctrl+r") == "ctrl+r"


@pytest.mark.asyncio
async def test_help_lists_every_mode_with_readable_keys_and_an_intact_header() -> None:
    app = make_app(TREE_COMPACTED)
    async with app.run_test(size=(120, 60)) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, HelpScreen)
        text = _table_text(screen.query_one("#help-table", Static).content)
        assert "id (for [ui.keymap])" in text
        assert "Jump to leaf" in text and "Regenerate" in text  # descriptions are drawn
        for internal in ("question_mark", "left_square_bracket", "right_square_bracket", "slash"):
            assert internal not in text
        for shown in ("?, f1", "[", "]", "/"):
            assert shown in text
        for section in ("Search box", "Plan budget inputs", "Dialogs", "Compaction review"):
            assert section in text
        assert "navigate.summarize" in text  # the navigation dialog's own keys


@pytest.mark.asyncio
async def test_help_at_80x24_is_not_covered_by_notifications() -> None:
    """A notification on screen when help opens does not cover the keys; it is still the app's
    and shows again when help closes."""
    app = make_app(TREE_COMPACTED)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await settle(pilot)
        app.notify("a long notification " * 12, timeout=60)
        await pilot.pause(0.2)
        assert any(toast.region.area for toast in app.screen.query(Toast))
        await pilot.press("question_mark")
        await pilot.pause(0.2)
        assert isinstance(app.screen, HelpScreen)
        assert not any(toast.region.area for toast in app.screen.query(Toast))
        table = app.screen.query_one("#help-table")
        assert all(app.screen.get_widget_at(x, 15)[0] is table for x in range(4, 74))
        await pilot.press("escape")
        await pilot.pause(0.2)
        assert any(toast.region.area for toast in app.screen.query(Toast))


@pytest.mark.asyncio
async def test_the_demo_says_what_holds_in_the_demo(tmp_path: Path) -> None:
    """The demo reads no config file: ``R`` and the help say so instead of offering one."""
    app = make_app(copy_sample(tmp_path), config=demo_config())
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        await pilot.press("R")
        await settle(pilot)
        said = next(n.message for n in app._notifications if "nothing to compare" in n.message)
        assert "The demo runs the offline summarizer only and reads no config file" in said
        assert "Add a profile" not in said and "[profiles.local]" not in said
        await pilot.press("question_mark")
        await pilot.pause()
        notes = [str(widget.render()) for widget in app.screen.query(Static)]
        assert any("The demo reads no config file" in note for note in notes)
        assert not any("Change keys in config.toml" in note for note in notes)


def _table_text(table: Any) -> str:
    """The help table as plain text, rendered at 96 columns."""
    console = Console(width=96, record=True, color_system=None)
    console.print(table)
    return console.export_text()
