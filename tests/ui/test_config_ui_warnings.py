"""``[ui]`` values that cannot work are said, not silently dropped: an unknown theme (from the
file or ``TUI_COMPACTOR_THEME``) names itself, where it came from and the themes there are; a
keymap that gives a binding a key another binding had (``compact = "c"`` took the plan's
``c``) says which one the key runs and what the other is left with."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.ui.app_helpers import TREE_COMPACTED, make_app, raised_notes, settle
from tui_compactor.workbench.settings import resolve_settings

pytestmark = pytest.mark.asyncio


@pytest.fixture
def clean_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    for name in list(os.environ):
        if name.startswith("TUI_COMPACTOR_"):
            monkeypatch.delenv(name)
    config = tmp_path / "config.toml"
    monkeypatch.setenv("TUI_COMPACTOR_CONFIG", str(config))
    return config


@pytest.mark.parametrize("from_variable", [False, True])
async def test_an_unknown_theme_is_named_with_its_source(
    clean_environment: Path, monkeypatch: pytest.MonkeyPatch, from_variable: bool
) -> None:
    clean_environment.write_text('[ui]\ntheme = "no-such-theme"\n')
    if from_variable:
        monkeypatch.setenv("TUI_COMPACTOR_THEME", "nor-this-one")
    app = make_app(TREE_COMPACTED, settings=resolve_settings())
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        said = [note for note in raised_notes(app) if "unknown theme" in note]
        assert len(said) == 1, raised_notes(app)
        if from_variable:
            assert "'nor-this-one' (from TUI_COMPACTOR_THEME)" in said[0]
        else:
            assert f"'no-such-theme' (from config file {clean_environment})" in said[0]
        assert "textual-dark" in said[0] and app.theme == "textual-dark"


async def test_a_key_taken_from_another_binding_is_named(clean_environment: Path) -> None:
    clean_environment.write_text('[ui.keymap]\ncompact = "c"\ntimeline = "t,T"\n')
    app = make_app(TREE_COMPACTED, settings=resolve_settings())
    async with app.run_test(size=(200, 60)) as pilot:
        await settle(pilot)
        said = [note for note in raised_notes(app) if "[ui.keymap]" in note]
        assert said == [
            "[ui.keymap] compact = 'c' takes c from plan: c runs compact, not plan; plan has "
            "no key left: give it one in [ui.keymap]"
        ], said


async def test_a_key_taken_from_quit_says_what_runs_and_what_quit_keeps(
    clean_environment: Path,
) -> None:
    """``plan = "q"``: the note says what the app then does, and it does it: ``q`` plans (the
    app keeps running), ``quit`` is left with ``ctrl+q``, which quits. (It said "quit, which
    keeps it: one of them does not run", while ``q`` planned.)"""
    clean_environment.write_text('[ui.keymap]\nplan = "q"\n')
    app = make_app(TREE_COMPACTED, settings=resolve_settings())
    async with app.run_test(size=(200, 60)) as pilot:
        await settle(pilot)
        said = [note for note in raised_notes(app) if "[ui.keymap]" in note]
        assert said == [
            "[ui.keymap] plan = 'q' takes q from quit: q runs plan, not quit; quit is left "
            "with ctrl+q"
        ], said
        await pilot.press("q")
        await settle(pilot)
        assert app.is_running and app.state.plan_leaf is not None
        await pilot.press("ctrl+q")
        await pilot.pause()
        assert not app.is_running


async def test_hints_name_the_keys_of_the_users_keymap(clean_environment: Path) -> None:
    """Every hint that names a key asks the keymap (``CompactorApp.key_for``): with the plan
    on ``x``, the compaction on ``f5``, accept on ``y`` and discard on ``f6`` the hints say so
    (they said "press c", "a accepts" and "plan with c, then r" whatever the keymap was)."""
    clean_environment.write_text(
        '[ui.keymap]\nplan = "x"\ncompact = "f5"\naccept = "y"\ndiscard = "f6"\n'
    )
    app = make_app(TREE_COMPACTED, settings=resolve_settings())
    async with app.run_test(size=(200, 60)) as pilot:
        await settle(pilot)
        await pilot.press("left_square_bracket")  # moving a cut with no plan yet
        await settle(pilot)
        assert "press x to plan first" in raised_notes(app)
        await pilot.press("x")
        await settle(pilot)
        await pilot.press("f5")
        await settle(pilot)
        assert any("y accepts, f6 discards" in note for note in raised_notes(app))
        # The quit question names its own accept key: there ``y`` (the keymap's accept) is
        # its yes, which quits.
        lost = app.work_quit_would_lose()
        assert lost is not None and "a accepts it (and stays)" in lost[1], lost
        await pilot.press("f6")
        await settle(pilot)
        outcome = str(app.query_one("#compaction-outcome").render())
        assert "plan with x, then f5 runs a compaction here" in outcome, outcome
