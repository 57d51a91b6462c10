"""Under ``--rules omp`` the app's plan pane says what ``plan --rules omp`` prints: the same cut
and the keep-recent oh-my-pi calibrated (the pane did not say it was calibrated: its kept
tokens fell short of the keep-recent its settings rows showed, with no word why)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.cli import cli, cli_json
from tests.ui.app_helpers import TREE_COMPACTED, make_app, settle
from tui_compactor.workbench.settings import resolve_settings

pytestmark = pytest.mark.asyncio


@pytest.mark.parametrize("size", [(80, 24), (200, 60)])
async def test_the_plan_pane_under_omp_rules_says_what_plan_prints(
    size: tuple[int, int], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in list(os.environ):
        if name.startswith("TUI_COMPACTOR_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))  # no config file
    (plan,) = cli_json("plan", str(TREE_COMPACTED), "--rules", "omp")["plans"]
    assert plan["effectiveKeepRecentTokens"] != plan["keepRecentTokens"], "calibrated"
    text = cli("plan", str(TREE_COMPACTED), "--rules", "omp").stdout.decode()
    keep, calibrated = plan["keepRecentTokens"], plan["effectiveKeepRecentTokens"]
    head = f"keep-recent {keep} (calibrated to {calibrated})"
    assert head in text
    app = make_app(TREE_COMPACTED, settings=resolve_settings({"rules": "omp"}))
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        pane = " ".join(str(app.query_one("#plan-text").render()).split())
        assert f"cut before #{plan['firstKeptEntryEntriesIndex']} " in pane
        assert head in pane, pane


OMP_METHODS = TREE_COMPACTED.parents[2] / "oracle-omp" / "sessions" / "omp-methods.jsonl"
"""A shared oh-my-pi session whose leaf follows its last compaction: nothing to compact."""


async def test_nothing_to_compact_under_omp_still_says_the_calibrated_keep_recent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At a leaf right after a compaction there is nothing to compact; ``plan --rules omp``
    still heads its plan with the keep-recent oh-my-pi calibrated, and so does the pane."""
    for name in list(os.environ):
        if name.startswith("TUI_COMPACTOR_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))  # no config file
    (plan,) = cli_json("plan", str(OMP_METHODS), "--rules", "omp")["plans"]
    keep, calibrated = plan["keepRecentTokens"], plan["effectiveKeepRecentTokens"]
    assert calibrated != keep, "calibrated"
    text = cli("plan", str(OMP_METHODS), "--rules", "omp").stdout.decode()
    head = f"keep-recent {keep} (calibrated to {calibrated})"
    assert head in text and "not prepared" in text, text
    copy = tmp_path / "sessions" / OMP_METHODS.name  # the app opens a copy of the fixture
    copy.parent.mkdir()
    copy.write_bytes(OMP_METHODS.read_bytes())
    app = make_app(copy, settings=resolve_settings({"rules": "omp"}))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        pane = " ".join(str(app.query_one("#plan-text").render()).split())
        assert "nothing to compact" in pane
        assert head in pane, pane
