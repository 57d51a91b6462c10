"""Rules that follow the session: a file under ~/.omp opens with oh-my-pi rules and the header
says so, one under ~/.pi with pi rules, a flag wins over both; ``o`` switches in the app."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.ui.app_helpers import ROOT, SIZE, make_app, settle
from tui_compactor.ui.widgets.status import SessionStatus
from tui_compactor.workbench.settings import resolve_settings

PI_SESSION = ROOT / "tests" / "fixtures" / "oracle" / "sessions" / "tree-branches.jsonl"
OMP_SESSION = ROOT / "tests" / "fixtures" / "oracle-omp" / "sessions" / "omp-methods.jsonl"


def home_with(tmp_path: Path, agent: str, source: Path) -> tuple[Path, Path]:
    """A fake home holding ``source`` in ``~/<agent>/agent/sessions/--work--/``."""
    home = tmp_path / "home"
    folder = home / agent / "agent" / "sessions" / "--work--"
    folder.mkdir(parents=True)
    target = folder / source.name
    shutil.copyfile(source, target)
    return home, target


def no_config(tmp_path: Path) -> dict[str, str]:
    """An environment with no config file and no ``TUI_COMPACTOR_*`` variables."""
    return {"XDG_CONFIG_HOME": str(tmp_path / "config")}


def status_text(app) -> str:  # type: ignore[no-untyped-def]
    return str(app.query_one(SessionStatus).render())


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("agent", "source", "rules", "header"),
    [
        (".omp", PI_SESSION, "omp", "omp rules (under ~/.omp)"),  # location beats content
        (".pi", OMP_SESSION, "pi", "pi rules (under ~/.pi)"),
    ],
)
async def test_the_session_location_picks_the_rules_and_the_header_says_so(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    agent: str,
    source: Path,
    rules: str,
    header: str,
) -> None:
    home, path = home_with(tmp_path, agent, source)
    monkeypatch.setenv("HOME", str(home))
    app = make_app(path, settings=resolve_settings({}, environ=no_config(tmp_path)))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.settings.rules == rules
        assert header in status_text(app)
        await pilot.press("c")
        await settle(pilot)
        assert app.plan is not None and app.plan.rules == rules
        # `o` switches, and the header follows.
        await pilot.press("o")
        await settle(pilot)
        other = "pi" if rules == "omp" else "omp"
        assert app.settings.rules == other and app.settings.source_of("rules") == "app"
        assert f"{other} rules (app)" in status_text(app)
        assert app.plan is not None and app.plan.rules == other


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("source", "name", "rules"),
    [
        (ROOT / "tests" / "fixtures" / "oracle-omp" / "sessions" / "omp-basic.jsonl",
         "Ledger importer: accented payees", "omp"),  # oh-my-pi's title slot
        (ROOT / "tests" / "fixtures" / "oracle" / "sessions" / "tree-compacted.jsonl",
         "weather-cli: caching layer", "pi"),  # pi's session_info
    ],
)  # fmt: skip
async def test_the_header_shows_the_name_the_rules_agent_gives_the_session(
    tmp_path: Path, source: Path, name: str, rules: str
) -> None:
    """Each agent names a session its own way (oh-my-pi: the title slot, never pi's
    ``session_info``; pi: the reverse; the oracles' ``sessionName``): the header shows the name
    under the rules in use, and ``o`` switches it with them."""
    path = tmp_path / source.name
    shutil.copyfile(source, path)
    app = make_app(path, settings=resolve_settings({}, environ=no_config(tmp_path)))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.settings.rules == rules
        assert name in status_text(app)
        await pilot.press("o")
        await settle(pilot)
        assert app.settings.rules != rules
        assert name not in status_text(app)


@pytest.mark.asyncio
async def test_the_flag_wins_over_the_location(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home, path = home_with(tmp_path, ".omp", OMP_SESSION)
    monkeypatch.setenv("HOME", str(home))
    settings = resolve_settings({"rules": "pi"}, environ=no_config(tmp_path))
    app = make_app(path, settings=settings)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.settings.rules == "pi"
        assert "pi rules (--rules)" in status_text(app)


def test_commands_follow_the_session_unless_told(tmp_path: Path) -> None:
    home, path = home_with(tmp_path, ".omp", PI_SESSION)
    env = {**os.environ, "HOME": str(home), "XDG_CONFIG_HOME": str(tmp_path / "cfg")}
    env = {key: value for key, value in env.items() if not key.startswith("TUI_COMPACTOR_")}

    def plan(*flags: str) -> dict:  # type: ignore[type-arg]
        done = subprocess.run(
            [sys.executable, "-m", "tui_compactor", "plan", str(path), "--json", *flags],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        report: dict = json.loads(done.stdout)  # type: ignore[type-arg]
        return report

    followed = plan()
    assert (followed["rules"], followed["rulesSource"]) == ("omp", "session: under ~/.omp")
    told = plan("--rules", "pi")
    assert (told["rules"], told["rulesSource"]) == ("pi", "--rules")


@pytest.mark.asyncio
async def test_omp_navigation_dialog_says_instructions_replace_the_prompt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from textual.widgets import RadioButton

    from tui_compactor.ui.screens.navigate import NavigateDialog
    from tui_compactor.ui.widgets.tree import SessionTree

    home, path = home_with(tmp_path, ".omp", PI_SESSION)
    monkeypatch.setenv("HOME", str(home))
    app = make_app(path, settings=resolve_settings({}, environ=no_config(tmp_path)))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        tree = app.query_one(SessionTree)
        assert tree.move_to_entry(tree.rows[3].index)
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        dialog = app.screen
        assert isinstance(dialog, NavigateDialog)
        assert dialog.query_one("#navigate-replace", RadioButton).value
        assert dialog.query_one("#navigate-append", RadioButton).disabled


def test_our_compaction_keeps_a_pi_session_pis_and_omp_rules_mark_it_omp(tmp_path: Path) -> None:
    """A compaction written under pi rules carries our short summary but no ``method``: the
    session's rules stay pi's. One written under oh-my-pi rules carries ``method: soft``."""
    path = tmp_path / "elsewhere" / PI_SESSION.name
    path.parent.mkdir()
    shutil.copyfile(PI_SESSION, path)
    env = {**os.environ, "HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "c")}
    env = {key: value for key, value in env.items() if not key.startswith("TUI_COMPACTOR_")}

    def run(*args: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "tui_compactor", *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    def rules() -> tuple[str, str]:
        report = json.loads(run("plan", str(path), "--json"))
        return report["rules"], report["rulesSource"]

    assert rules() == ("pi", "session: no omp content")
    compact = [
        "compact",
        str(path),
        "--provider",
        "offline",
        "--yes",
        "--quiet-window",
        "0",
        "--keep-recent",
        "2000",
    ]
    run(*compact)
    last = json.loads(path.read_text(encoding="utf-8").splitlines()[-1])
    assert last["type"] == "compaction" and last["shortSummary"] and "method" not in last
    assert rules() == ("pi", "session: no omp content")
    shutil.copyfile(PI_SESSION, path)  # afresh: a compaction cannot follow a compaction
    run(*compact, "--rules", "omp")
    assert json.loads(path.read_text(encoding="utf-8").splitlines()[-1])["method"] == "soft"
    assert rules() == ("omp", "session: omp compaction method soft")
