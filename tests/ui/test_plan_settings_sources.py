"""The plan pane says where each setting of the plan came from, as ``plan`` does: the same rows
(``Settings.plan_source_items``), with a real config file and real ``TUI_COMPACTOR_*``
variables, at 80x24 and 200x60; an edit in the pane (``e``) then reads "edited in the app"."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import cli, cli_json
from tests.ui.app_helpers import TREE_COMPACTED, make_app, raised_notes, settle
from tui_compactor.commands.plan import sources_json
from tui_compactor.workbench.settings import PLAN_SETTINGS, resolve_settings, source_phrase

pytestmark = pytest.mark.asyncio

SIZES = [(80, 24), (200, 60)]

CONFIG = """\
[compaction]
keep_recent_tokens = 12345
split_turns = false
"""


def _pane_rows(app: Any) -> dict[str, str]:
    """The pane's settings rows: label -> ``value · source`` (a row may wrap on screen: read
    from what the pane draws, a row per setting)."""
    text = str(app.query_one("#plan-sources").render())
    rows = text.split("settings\n", 1)[1].splitlines()
    found: dict[str, str] = {}
    for label in PLAN_SETTINGS.values():
        (row,) = [row for row in rows if re.match(rf"{re.escape(label)} [^ ]+ · ", row)]
        found[label] = row.removeprefix(label + " ")
    return found


@pytest.fixture
def configured(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """A config file, and variables that beat it or add to it (the process's environment)."""
    config = tmp_path / "config.toml"
    config.write_text(CONFIG)
    for name in list(os.environ):
        if name.startswith("TUI_COMPACTOR_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("TUI_COMPACTOR_CONFIG", str(config))
    monkeypatch.setenv("TUI_COMPACTOR_RESERVE_TOKENS", "9000")
    monkeypatch.setenv("TUI_COMPACTOR_THRESHOLD_PERCENT", "70")
    return dict(os.environ)


@pytest.mark.parametrize("size", SIZES)
async def test_the_plan_pane_and_plan_json_agree_on_every_setting_and_its_source(
    size: tuple[int, int], configured: dict[str, str], tmp_path: Path
) -> None:
    report = cli_json("plan", str(TREE_COMPACTED), env=configured)
    text = cli("plan", str(TREE_COMPACTED), env=configured).stdout.decode()
    app = make_app(TREE_COMPACTED, settings=resolve_settings())  # as ``open`` resolves them
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        rows = _pane_rows(app)
        camel = dict(zip(PLAN_SETTINGS.values(), report["sources"], strict=True))
        for label, row in rows.items():
            value, source = row.split(" · ", 1)
            # The source ``plan --json`` names, in the words ``plan`` prints it.
            assert source == source_phrase(report["sources"][camel[label]]), label
            assert f"{label} {value} ({source})" in text, (label, text)
        assert (
            rows["keep-recent"] == f"12345 · from config file {configured['TUI_COMPACTOR_CONFIG']}"
        )
        assert rows["reserve"] == "9000 · from TUI_COMPACTOR_RESERVE_TOKENS"
        assert rows["threshold %"] == "70 · from TUI_COMPACTOR_THRESHOLD_PERCENT"
        assert rows["split turns"].startswith("no · from config file")
        assert rows["threshold tokens"] == "unset · default"
        assert rows["window"].startswith("200000 · the window of claude-opus-4-5")
        assert sources_json(app.settings) == report["sources"]  # the app's settings, too

        # An edit in the pane: keep-recent is now the app's, the rest as they were.
        await pilot.press("e")
        await settle(pilot)
        await pilot.press("1", "5", "k")
        await settle(pilot)
        edited = _pane_rows(app)
        assert edited["keep-recent"] == "15000 · edited in the app"
        assert {k: v for k, v in edited.items() if k != "keep-recent"} == {
            k: v for k, v in rows.items() if k != "keep-recent"
        }


@pytest.mark.parametrize("size", SIZES)
async def test_the_plan_pane_warns_of_what_plan_warns_of_in_the_same_words(
    size: tuple[int, int], configured: dict[str, str]
) -> None:
    """A threshold pi ignores (from a variable) and a cut moved back to keep a turn whole
    (``split_turns = false`` in the file): ``plan`` warns of both, naming the setting, its value
    and where it came from, and the app's plan pane says the same."""
    result = cli("plan", str(TREE_COMPACTED), env=configured)
    assert result.returncode == 0, result.stderr
    text = result.stdout.decode()
    warned = [
        line.removeprefix("warning: ")
        for line in result.stderr.decode().splitlines()
        if line.startswith("warning: ")
    ]
    warned += [
        line.strip().removeprefix("warning: ")
        for line in text.splitlines()
        if line.startswith("  warning: ")
    ]
    assert any(
        line.startswith("threshold % 70 is oh-my-pi's setting")
        and line.endswith("(from TUI_COMPACTOR_THRESHOLD_PERCENT)")
        for line in warned
    ), warned
    assert any(line.startswith("split turns are off: the cut moved back") for line in warned)
    assert "(manual cut)" not in text, "the rule moved the cut, not the user"
    app = make_app(TREE_COMPACTED, settings=resolve_settings())
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        pane = " ".join(str(app.query_one("#plan-text").render()).split())
        for line in warned:
            assert " ".join(line.split()) in pane, (line, pane)


async def test_a_config_file_edited_while_the_app_runs_is_named_and_not_half_applied(
    configured: dict[str, str],
) -> None:
    """The app keeps the settings it read at start (its plan's sources stay true of what it
    uses) and says once that the file changed and that a restart reads it."""
    config = Path(configured["TUI_COMPACTOR_CONFIG"])
    app = make_app(TREE_COMPACTED, settings=resolve_settings())
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        assert not [note for note in raised_notes(app) if "changed on disk" in note]
        config.write_text(CONFIG.replace("12345", "5000"))
        stat = config.stat()
        os.utime(config, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
        await pilot.press("escape", "c")
        await settle(pilot)
        said = [note for note in raised_notes(app) if "changed on disk" in note]
        assert len(said) == 1 and str(config) in said[0] and "restart" in said[0], said
        assert _pane_rows(app)["keep-recent"] == f"12345 · from config file {config}"
        assert app.settings.keep_recent_tokens == 12345
        await pilot.press("escape", "c")
        await settle(pilot)
        assert len([note for note in raised_notes(app) if "changed on disk" in note]) == 1
