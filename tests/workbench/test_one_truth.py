"""``plan``, ``compact --dry-run`` and the app's plan pane agree, whichever source sets the
settings: a config file, ``TUI_COMPACTOR_*`` variables, or flags."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.ui.app_helpers import scroll_to_plan_form, settle
from tui_compactor import cli as cli_module
from tui_compactor.commands import engine_args
from tui_compactor.ui.app import CompactorApp
from tui_compactor.ui.widgets.plan_view import PlanView

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "oracle" / "sessions" / "tree-compacted.jsonl"

KEEP = 500
"""Far from the default 20000: with it the cut lands on another entry of the fixture."""

SOURCES = ("config", "env", "flags")


def _setup(source: str, tmp_path: Path) -> tuple[dict[str, str], list[str]]:
    """Environment and extra flags that set keep-recent 500 and the pi counter via ``source``."""
    home = tmp_path / "xdg"
    (home / "tui-compactor").mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("TUI_COMPACTOR_")}
    env["XDG_CONFIG_HOME"] = str(home)
    flags: list[str] = []
    if source == "config":
        (home / "tui-compactor" / "config.toml").write_text(
            f'[compaction]\nkeep_recent_tokens = {KEEP}\ntokens = "pi"\n', encoding="utf-8"
        )
    elif source == "env":
        env["TUI_COMPACTOR_KEEP_RECENT_TOKENS"] = str(KEEP)
        env["TUI_COMPACTOR_TOKENS"] = "pi"
    else:
        # The config file says otherwise: the flags win.
        (home / "tui-compactor" / "config.toml").write_text(
            '[compaction]\nkeep_recent_tokens = 90000\ntokens = "bytes"\n', encoding="utf-8"
        )
        flags = ["--keep-recent", str(KEEP), "--tokens", "pi"]
    return env, flags


def _run(env: dict[str, str], *args: str) -> dict[str, Any]:
    result = subprocess.run(
        [sys.executable, "-m", "tui_compactor", *args],
        cwd=ROOT, env=env, capture_output=True, timeout=120, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr.decode()
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def _decision(plan: dict[str, Any]) -> tuple[Any, ...]:
    """Cut, keep-recent and the summarized range of a ``plan --json`` row."""
    end = plan["turnStartIndex"] if plan["isSplitTurn"] else plan["firstKeptEntryIndex"]
    return (
        plan["firstKeptEntryId"],
        plan["keepRecentTokens"],
        plan["tokens"],
        plan["boundaryStart"],
        end,
    )


@pytest.mark.asyncio
@pytest.mark.parametrize("source", SOURCES)
async def test_plan_compact_and_app_agree(
    source: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = tmp_path / FIXTURE.name
    shutil.copyfile(FIXTURE, session)
    before = session.read_bytes()
    env, flags = _setup(source, tmp_path)

    plan_row = _run(env, "plan", str(session), "--json", *flags)["plans"][0]
    compact = _run(
        env, "compact", str(session), "--dry-run", "--json", "--provider", "offline", *flags
    )
    assert session.read_bytes() == before
    expected = _decision(plan_row)
    assert expected[1:3] == (KEEP, "pi")
    assert _decision(compact["plan"]) == expected

    default_env, _ = _setup("none", tmp_path / "default")
    default_row = _run(default_env, "plan", str(session), "--json")["plans"][0]
    assert default_row["firstKeptEntryId"] != expected[0], "the source must matter"

    # The app, started the way `tui-compactor SESSION ...` starts it.
    for key in [k for k in os.environ if k.startswith("TUI_COMPACTOR_")]:
        monkeypatch.delenv(key)
    for key, value in env.items():
        if key.startswith("TUI_COMPACTOR_") or key == "XDG_CONFIG_HOME":
            monkeypatch.setenv(key, value)
    args = cli_module.build_parser().parse_args(["open", str(session), "--no-follow", *flags])
    app = CompactorApp(session, settings=engine_args.settings_from_args(args), follow=False)
    app.gauge_debounce = 0
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        plan = app.plan
        assert plan is not None and plan.prepared
        end = plan.turn_start_index if plan.is_split_turn else plan.first_kept_index
        shown = (
            plan.first_kept_entry_id,
            plan.keep_recent_tokens,
            plan.counter_name,
            plan.boundary_start,
            end,
        )
        assert shown == expected
        pane = str(app.query_one(PlanView).query_one("#plan-text").render())
        assert f"cut before #{plan.branch[plan.first_kept_index]}" in pane
        await scroll_to_plan_form(pilot)
        assert str(app.query_one("#plan-keep").value) == str(KEEP)  # type: ignore[attr-defined]
    assert session.read_bytes() == before


OMP_TREE = ROOT / "tests" / "fixtures" / "oracle-omp" / "sessions" / "omp-tree.jsonl"


@pytest.mark.parametrize("source", ["session", *SOURCES])
def test_inspect_counts_with_the_counter_every_other_command_uses(
    source: str, tmp_path: Path
) -> None:
    """`inspect` counted cl100k whatever the config file, `TUI_COMPACTOR_TOKENS` or the
    session's own rules said (an oh-my-pi session counts bytes in `context`, `plan` and the
    app's tree rows); it took no `--rules` or `--config`. Its per-entry tokens are now those
    of `context --json` at the leaf."""
    if source == "session":  # oh-my-pi's own session: its rules, so bytes
        env = {k: v for k, v in os.environ.items() if not k.startswith("TUI_COMPACTOR_")}
        env["XDG_CONFIG_HOME"] = str(tmp_path / "no-config")
        flags: list[str] = []
        session, counter = OMP_TREE, "bytes"
    else:  # pi's tokens set by the config file, a variable or the flag
        env, flags = _setup(source, tmp_path)
        flags = [flag for flag in flags if flag != "--keep-recent" and flag != str(KEEP)]
        session, counter = FIXTURE, "pi"
    inspect = _run(env, "inspect", str(session), "--json", *flags)
    context = _run(env, "context", str(session), "--json", *flags)
    assert inspect["tokens"] == context["tokens"] == counter
    tokens = {row["index"]: row["tokens"] for row in inspect["entries"]}
    items = [item for item in context["items"] if item["kind"] == "message"]
    assert items and all(tokens[item["entryIndex"]] == item["tokens"] for item in items)


def test_a_token_figure_reads_the_same_in_the_app_the_flags_and_the_config(
    tmp_path: Path,
) -> None:
    """The plan form takes "0.5k" (its help says 20000, 20k, 1.5M); `--keep-recent 0.5k` was
    "not a comma-separated list of integers" and the variable or the config's "0.5k" "unable
    to parse string as an integer". One reading now (`wording.token_figure`): each plans the
    cut that 500 plans."""
    from tui_compactor.ui.widgets.plan_view import _int_or_none

    assert _int_or_none("0.5k") == KEEP
    env, _ = _setup("env", tmp_path / "plain")
    env.pop("TUI_COMPACTOR_TOKENS")
    env.pop("TUI_COMPACTOR_KEEP_RECENT_TOKENS")
    expected = _run(env, "plan", str(FIXTURE), "--json", "--keep-recent", str(KEEP))["plans"][0]
    assert expected["keepRecentTokens"] == KEEP
    shown = [_run(env, "plan", str(FIXTURE), "--json", "--keep-recent", "0.5k")]
    shown.append(_run({**env, "TUI_COMPACTOR_KEEP_RECENT_TOKENS": "0.5k"}, "plan", str(FIXTURE),
                      "--json"))  # fmt: skip
    config = tmp_path / "config.toml"
    config.write_text('[compaction]\nkeep_recent_tokens = "0.5k"\n', encoding="utf-8")
    shown.append(_run(env, "plan", str(FIXTURE), "--json", "--config", str(config)))
    for report in shown:
        assert _decision(report["plans"][0]) == _decision(expected)
    window = _run(env, "plan", str(FIXTURE), "--json", "--window", "1.5M")
    assert window["threshold"]["window"] == 1_500_000
    threshold = ["--rules", "omp", "--json"]
    flag = _run(env, "plan", str(FIXTURE), *threshold, "--threshold-tokens", "1.5k")
    variable = _run({**env, "TUI_COMPACTOR_THRESHOLD_TOKENS": "1.5k"}, "plan", str(FIXTURE),
                    *threshold)  # fmt: skip
    assert flag["threshold"]["thresholdTokens"] == variable["threshold"]["thresholdTokens"] == 1500
