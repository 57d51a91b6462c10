"""Pilot tests of the rest: keymap, help, palette, stopping a long load, the launch commands."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from tests.ui.app_helpers import SIZE, TREE_BRANCHES, TREE_COMPACTED, make_app, settle
from tui_compactor.config import Config, UIConfig
from tui_compactor.ui.app import CompactorApp
from tui_compactor.ui.commands import CompactorCommands
from tui_compactor.ui.messages import LoadProgressed
from tui_compactor.ui.widgets.help import HelpScreen
from tui_compactor.ui.widgets.tree import SessionTree

pytestmark = pytest.mark.asyncio


async def test_user_keymap_rebinds_and_reports_unknown_ids() -> None:
    config = Config(ui=UIConfig(keymap={"plan": "x", "no-such-binding": "y"}))
    app = make_app(TREE_COMPACTED, config=config)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(pilot)
        await pilot.press("x")
        await settle(pilot)
        assert app.plan is not None and app.plan.prepared
        assert any("no-such-binding" in problem for problem in app.config_problems)


async def test_help_lists_every_binding_with_its_id() -> None:
    app = make_app(TREE_BRANCHES)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        await settle(pilot)
        assert isinstance(app.screen, HelpScreen)
        ids = {getattr(row, "id", None) for _, group in app.screen.groups for row in group}
        assert {"plan", "compact", "accept", "discard", "undo", "tree.fold", "search"} <= ids
        await pilot.press("escape")
        await settle(pilot)
        assert not isinstance(app.screen, HelpScreen)


async def test_palette_offers_only_what_makes_sense_now() -> None:
    app = make_app(TREE_COMPACTED)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)

        def titles() -> list[str]:
            return [title for title, _, _ in CompactorCommands(app.screen)._commands()]

        assert "Run compaction" not in titles()
        assert "Accept compaction" not in titles()
        assert not any(title.startswith("Navigate to") for title in titles())  # at the leaf
        await pilot.press("c")
        await settle(pilot)
        assert "Run compaction" in titles() and "Move cut earlier" in titles()
        session = app.session
        compaction = max(
            i for i in session.path_to(session.leaf) if session.entries[i].type == "compaction"
        )
        app.query_one(SessionTree).move_to_entry(compaction)
        await settle(pilot)
        assert "Undo this compaction" in titles()
        assert f"Navigate to #{compaction}" in titles()


def _big_session(path: Path, count: int) -> None:
    """A valid v3 session of ``count`` chained user messages."""
    lines = [
        json.dumps(
            {
                "type": "session",
                "version": 3,
                "id": "big",
                "cwd": "/tmp",
                "timestamp": "2026-01-01T00:00:00.000Z",
            }
        )
    ]
    parent = None
    for number in range(count):
        entry_id = f"{number:08x}"
        lines.append(
            json.dumps(
                {
                    "type": "message",
                    "id": entry_id,
                    "parentId": parent,
                    "timestamp": "2026-01-01T00:00:01.000Z",
                    "message": {"role": "user", "content": f"message {number} " + "x" * 200},
                }
            )
        )
        parent = entry_id
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


class _EscapeOnProgress(CompactorApp):
    """Presses escape as soon as the progress bar first moves (what an impatient user does)."""

    def on_load_progressed(self, message: LoadProgressed) -> None:
        super().on_load_progressed(message)
        self.action_cancel()


async def test_escape_stops_indexing_and_shows_what_was_read(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    total = 60_000
    _big_session(path, total)
    app = _EscapeOnProgress(path, follow=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        session = app.session
        assert session is not None
        assert not session.complete
        assert 0 < len(session.entries) < total
        assert app.query_one(SessionTree).rows, "what was read is shown"
        assert "partial" in str(app.query_one("#status").render())


async def test_open_command_refuses_a_missing_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tui_compactor.commands import open as open_command

    parser = argparse.ArgumentParser()
    open_command.add_arguments(parser)
    args = parser.parse_args([str(tmp_path / "nope.jsonl")])
    assert open_command.run(args) == 2
    assert "nope.jsonl" in capsys.readouterr().err


async def test_demo_copies_the_bundled_sample_and_opens_it(tmp_path: Path) -> None:
    from tui_compactor.commands import demo

    assert demo.sample_path().is_file()
    copy = demo.copy_sample(tmp_path)
    assert copy.read_bytes() == demo.sample_path().read_bytes()
    app = make_app(copy)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert app.session is not None and app.session.complete
        assert len(app.query_one(SessionTree).rows) > 10


async def test_without_a_file_the_picker_opens_the_chosen_session(tmp_path: Path) -> None:
    import shutil

    from tui_compactor.ui.screens.picker import SessionPicker

    sessions = tmp_path / "sessions" / "--project--"
    sessions.mkdir(parents=True)
    shutil.copyfile(TREE_BRANCHES, sessions / TREE_BRANCHES.name)
    app = CompactorApp(None, follow=False, sessions_dirs=[tmp_path / "sessions"])
    app.gauge_debounce = 0
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        picker = app.screen
        assert isinstance(picker, SessionPicker)
        assert any(s.path.name == TREE_BRANCHES.name for s in picker.visible_sessions)
        for _ in range(len(picker.visible_sessions)):
            chosen = picker.highlighted_session
            if chosen is not None and chosen.path.name == TREE_BRANCHES.name:
                break
            await pilot.press("down")
        await pilot.press("enter")
        await settle(pilot)
        assert not isinstance(app.screen, SessionPicker)
        assert app.session is not None and app.session.path.name == TREE_BRANCHES.name
        assert app.query_one(SessionTree).rows


async def test_notifications_show_session_text_with_brackets_as_text(tmp_path: Path) -> None:
    """A load problem quotes the file's own ids; ``[/nope]`` there is text, and a toast that
    tried to read it as markup would fail to render."""
    from textual.widgets._toast import Toast

    path = tmp_path / "brackets.jsonl"
    path.write_text(
        '{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/t"}\n'
        '{"type":"message","id":"m1","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z",'
        '"message":{"role":"user","content":"hi"}}\n'
        '{"type":"[/oops]","id":"[/x]","parentId":"[/nope]","timestamp":"2025-01-01T00:00:02.000Z"}\n'
    )
    app = make_app(path)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(pilot)
        await pilot.pause(0.2)
        toasts = list(app.screen.query(Toast))
        assert toasts, "the load problem is notified"
        shown = "\n".join(toast.render().plain for toast in toasts)
        assert "[/nope]" in shown


async def test_tab_moves_the_focus_in_the_picker_while_the_main_screens_keys_stay_off(
    tmp_path: Path,
) -> None:
    """Over the picker (a screen of its own) the tree's keys are off, but Tab and shift+Tab are
    Textual's focus keys and must still move between the search box and the list."""
    import shutil

    from textual.widgets import DataTable, Input

    sessions = tmp_path / "sessions" / "--project--"
    sessions.mkdir(parents=True)
    shutil.copyfile(TREE_BRANCHES, sessions / TREE_BRANCHES.name)
    app = CompactorApp(None, follow=False, sessions_dirs=[tmp_path / "sessions"])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.screen.query_one(Input).focus()
        await pilot.pause()
        await pilot.press("tab")
        assert isinstance(app.focused, DataTable)
        await pilot.press("shift+tab")
        assert isinstance(app.focused, Input)
        assert app.check_action("cycle_filter", ()) is False  # the tree's f stays off


@pytest.mark.slow
async def test_a_50k_deep_chain_opens_flat_and_browses_end_to_end(tmp_path: Path) -> None:
    """parentId nesting 50k deep (a long session) stays one flat run: no recursion anywhere."""
    path = tmp_path / "deep.jsonl"
    _big_session(path, 50_000)
    app = make_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        tree = app.query_one(SessionTree)
        assert app.session.complete and len(tree.rows) == 50_000
        assert {row.indent for row in tree.rows} == {0}
        assert tree.cursor_entry == app.session.leaf
        await pilot.press("g")
        await settle(pilot)
        assert tree.cursor == 0 and app.gauge_data is not None
        await pilot.press("G", "c")
        await settle(pilot)
        assert tree.cursor_entry == app.session.leaf
        assert app.plan is not None and app.plan.prepared


async def test_worker_results_arriving_after_quit_are_ignored(tmp_path: Path) -> None:
    """A thread worker may post token counts after the user quit: handling it then must not
    raise, while a missing widget during normal running still does."""
    from textual.css.query import NoMatches

    from tui_compactor.ui.messages import TokensCounted

    session = tmp_path / TREE_BRANCHES.name
    session.write_bytes(TREE_BRANCHES.read_bytes())
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        tree = app.query_one(SessionTree)
        await tree.remove()
        with pytest.raises(NoMatches):
            app.on_tokens_counted(TokensCounted({0: 5}))
        # While the app shuts down (``is_running`` turns False first), the result is dropped.
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(type(app), "is_running", property(lambda self: False))
            app.on_tokens_counted(TokensCounted({0: 5}))


async def test_window_comes_from_the_sessions_model_unless_configured(tmp_path: Path) -> None:
    """Without --window the gauge, chart and plan use the known window of the session's own
    model (claude-opus-4-5 here: 200k) and say so; a configured window wins."""
    session = tmp_path / TREE_COMPACTED.name
    session.write_bytes(TREE_COMPACTED.read_bytes())
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.settings.context_window == 200_000
        assert app.settings.window_model == "claude-opus-4-5"
        assert app.gauge_data is not None and app.gauge_data.window == 200_000
        assert app.gauge_data.window_model == "claude-opus-4-5"
        assert not app.gauge_data.window_assumed
    config = Config.model_validate({"compaction": {"context_window": 32_000}})
    app = make_app(session, config=config)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.settings.context_window == 32_000
        assert app.gauge_data is not None and app.gauge_data.window_model is None


async def test_plan_text_does_not_promise_a_turn_prefix_that_is_empty() -> None:
    """pi calls a cut at a bash execution that starts a turn 'split' with nothing before it:
    the plan pane says there is no prefix instead of announcing its summary."""
    from tui_compactor.engine.plan import prepare_compaction
    from tui_compactor.engine.settings import CompactionSettings
    from tui_compactor.engine.tokens import get_counter
    from tui_compactor.session.reader import load_session
    from tui_compactor.ui.app import REGION_STYLES
    from tui_compactor.ui.widgets.plan_view import plan_summary

    sample = Path(__file__).resolve().parents[2] / "tui_compactor" / "data" / "sample-session.jsonl"
    session = load_session(sample)
    plan = prepare_compaction(session, session.leaf, CompactionSettings(), get_counter("cl100k"))
    assert plan.is_split_turn and not plan.has_turn_prefix
    text = plan_summary(plan, session, REGION_STYLES).plain
    assert "no turn prefix to summarize" in text
    assert "cut in the middle" not in text
