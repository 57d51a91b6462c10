"""Every setting the seeds name, reachable from the config file, the environment, flags and
app edits (one settings object), and doing what it says.

Thresholds (percent / tokens), "don't split turns", branch summaries (ask, reserve), the
summarizer's reasoning effort and its own window; keep-recent and reserve are covered by
test_settings.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.summarize.helpers import split_turn_session
from tui_compactor.config import Profile
from tui_compactor.session.reader import load_session
from tui_compactor.workbench.plans import make_plan
from tui_compactor.workbench.settings import resolve_settings

ROOT = Path(__file__).resolve().parents[2]
ALL_KEYS = """[compaction]
threshold_percent = 70
threshold_tokens = 90000
split_turns = false
branch_summary_enabled = false
branch_summary_reserve_tokens = 30000
summary_reasoning_effort = "low"
summary_window = 32768
"""


def test_config_env_flags_and_app_edits_reach_every_seed_setting(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(ALL_KEYS, encoding="utf-8")
    settings = resolve_settings({}, config_file=config, environ={})
    assert (
        settings.threshold_percent,
        settings.threshold_tokens,
        settings.split_turns,
        settings.branch_summary_enabled,
        settings.branch_summary_reserve_tokens,
        settings.summary_reasoning_effort,
        settings.summary_window,
    ) == (70, 90000, False, False, 30000, "low", 32768)
    assert settings.source_of("split_turns") == f"config file {config}"
    env = {
        "TUI_COMPACTOR_THRESHOLD_PERCENT": "60",
        "TUI_COMPACTOR_SPLIT_TURNS": "true",
        "TUI_COMPACTOR_SUMMARY_REASONING_EFFORT": "high",
    }
    from_env = resolve_settings({}, config_file=config, environ=env)
    assert (
        from_env.threshold_percent,
        from_env.split_turns,
        from_env.summary_reasoning_effort,
    ) == (60, True, "high")
    assert from_env.source_of("threshold_percent") == "TUI_COMPACTOR_THRESHOLD_PERCENT"
    flags = resolve_settings(
        {
            "threshold_percent": 50.0,
            "threshold_tokens": 1000,
            "split_turns": False,
            "branch_summary_enabled": False,
            "branch_summary_reserve_tokens": 5000,
            "summary_reasoning_effort": "off",
            "summary_window": 8192,
        },
        config_file=config,
        environ=env,
    )
    assert flags.source_of("threshold_percent") == "--threshold-percent"
    assert flags.source_of("split_turns") == "--no-split-turns"
    assert flags.source_of("summary_window") == "--summary-window"
    assert (flags.threshold_percent, flags.summary_reasoning_effort) == (50.0, "off")
    edited = flags.edited("app", summary_window=None, threshold_tokens=-1)
    assert edited.summary_window is None and edited.source_of("summary_window") == "app"
    # The engine sees the thresholds; the summarizer profile gets effort and window.
    engine = flags.compaction()
    assert (engine.threshold_percent, engine.threshold_tokens) == (50.0, 1000)
    profile = flags.summarizer_profile(
        Profile(
            name="p", provider="openai", model="m", context_window=200000, reasoning_effort="high"
        )
    )
    assert (profile.reasoning_effort, profile.context_window) == ("off", 8192)
    untouched = resolve_settings({}, environ={"XDG_CONFIG_HOME": str(tmp_path / "none")})
    base = Profile(name="p", provider="openai", model="m", reasoning_effort="medium")
    assert untouched.summarizer_profile(base) is base


def test_bad_values_are_refused_with_the_field_named(tmp_path: Path) -> None:
    from tui_compactor.config import ConfigError

    with pytest.raises(ConfigError, match="threshold_percent"):
        resolve_settings({"threshold_percent": 150.0}, environ={})
    with pytest.raises(ConfigError, match="summary_reasoning_effort"):
        resolve_settings({"summary_reasoning_effort": "max"}, environ={})
    config = tmp_path / "config.toml"
    config.write_text('[compaction]\nsummary_reasoning_effort = "max"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="summary_reasoning_effort"):
        resolve_settings({}, config_file=config, environ={})


@pytest.mark.parametrize("value", ["150", "nan", "inf"])
def test_a_threshold_percent_the_flag_refuses_is_refused_from_the_file_and_the_variable(
    tmp_path: Path, value: str
) -> None:
    """``--threshold-percent 150`` is refused; the same value in the config file or in
    ``TUI_COMPACTOR_THRESHOLD_PERCENT`` must not be taken (and shown as the setting in use)."""
    from tui_compactor.config import ConfigError

    with pytest.raises(ConfigError, match="threshold_percent"):
        resolve_settings({"threshold_percent": float(value)}, environ={})
    config = tmp_path / "config.toml"
    config.write_text(f"[compaction]\nthreshold_percent = {value}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=f"{config}:2: compaction.threshold_percent"):
        resolve_settings({}, config_file=config, environ={})
    variable = "TUI_COMPACTOR_THRESHOLD_PERCENT"
    with pytest.raises(ConfigError, match=f"environment variable {variable}"):
        resolve_settings({}, environ={variable: value, "XDG_CONFIG_HOME": str(tmp_path / "no")})


def test_thresholds_under_pi_rules_are_flagged_as_ignored(tmp_path: Path) -> None:
    settings = resolve_settings({"threshold_percent": 50.0, "rules": "pi"}, environ={})
    problem = next(p for p in settings.problems() if p.field == "threshold_percent")
    assert not problem.blocking and "ignored" in problem.reason


def test_threshold_percent_and_tokens_set_the_omp_threshold() -> None:
    from tui_compactor.engine.settings import threshold_tokens

    base = resolve_settings({"rules": "omp", "context_window": 200000}, environ={})
    assert (
        threshold_tokens(200000, base.edited("app", threshold_percent=50.0).compaction()) == 100000
    )
    both = base.edited("app", threshold_percent=50.0, threshold_tokens=150000)
    assert threshold_tokens(200000, both.compaction()) == 150000  # tokens win


def test_dont_split_turns_moves_the_cut_to_the_turn_start(tmp_path: Path) -> None:
    session = load_session(split_turn_session(tmp_path / "s.jsonl"))
    base = resolve_settings({"keep_recent_tokens": 1500, "tokens": "bytes"}, environ={})
    split = make_plan(session, session.leaf, base)
    assert split.prepared and split.is_split_turn and split.turn_prefix_messages
    whole = make_plan(session, session.leaf, base.edited("app", split_turns=False))
    assert whole.prepared and not whole.is_split_turn and not whole.turn_prefix_messages
    assert whole.first_kept_index == split.turn_start_index  # the turn is kept whole
    assert any("split turns are off" in w for w in whole.warnings)


def cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tui_compactor", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def clean_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TUI_COMPACTOR_")}
    env["XDG_CONFIG_HOME"] = str(tmp_path / "config")
    return env


def test_flags_reach_plan_and_navigate(tmp_path: Path) -> None:
    path = split_turn_session(tmp_path / "s.jsonl")
    env = clean_env(tmp_path)
    done = cli(
        "plan",
        str(path),
        "--json",
        "--rules",
        "omp",
        "--window",
        "100000",
        "--threshold-percent",
        "40",
        "--no-split-turns",
        "--keep-recent",
        "1500",
        env=env,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["threshold"]["thresholdTokens"] == 40000
    assert not report["plans"][0]["isSplitTurn"]
    nav = cli(
        "navigate",
        str(path),
        "--to",
        "#2",
        "--dry-run",
        "--json",
        "--window",
        "50000",
        "--branch-reserve",
        "20000",
        env=env,
    )
    assert nav.returncode == 0, nav.stderr
    assert json.loads(nav.stdout)["prepared"][0]["tokenBudget"] == 30000


def test_a_fractional_threshold_is_the_whole_tokens_it_stands_for_everywhere(
    tmp_path: Path,
) -> None:
    """``threshold_tokens = 1500.7`` from any source is 1500 (``whole_tokens``): the settings
    keep it, the plan's threshold uses it, and every view prints it; a large figure is printed
    whole (never ``1.5e+06``)."""
    from tui_compactor.ui.widgets.plan_view import form_values

    config = tmp_path / "config.toml"
    config.write_text("[compaction]\nthreshold_tokens = 1500.7\n", encoding="utf-8")
    sources = [
        resolve_settings({}, config_file=config, environ={}),
        resolve_settings({}, environ={"TUI_COMPACTOR_THRESHOLD_TOKENS": "1500.7"}),
        resolve_settings({"threshold_tokens": 1500.7}, environ={}),
        resolve_settings({}, environ={}).edited("app", threshold_tokens=1500.7),
    ]
    for settings in sources:
        shown = settings.edited("app", rules="omp", context_window=200000)
        assert shown.threshold_tokens == 1500
        assert ("threshold tokens", "1500") in [i[:2] for i in shown.plan_source_items()]
        assert form_values(shown)[0]["plan-threshold-tokens"] == "1500"
    big = resolve_settings({"threshold_tokens": 1500000}, environ={})
    assert form_values(big)[0]["plan-threshold-tokens"] == "1500000"
    path = tmp_path / "s.jsonl"
    path.write_bytes((ROOT / "tests/fixtures/sessions/refactor-session-v3.jsonl").read_bytes())
    env = clean_env(tmp_path)
    done = cli(
        "plan", str(path), "--rules", "omp", "--threshold-tokens", "1500.7", "--json", env=env
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["threshold"]["thresholdTokens"] == 1500
    text = cli("plan", str(path), "--rules", "omp", "--threshold-tokens", "1500000", env=env)
    assert "threshold tokens 1500000 (from --threshold-tokens)" in text.stdout


def test_a_threshold_below_one_token_is_one_token_everywhere(tmp_path: Path) -> None:
    """``threshold_tokens = 0.5`` is set, not unset: oh-my-pi clamps it to 1 token, so the
    settings keep 1, the plan uses 1, the settings line prints 1 and its source, and pi rules
    still warn that it is ignored."""
    sources = [
        resolve_settings({}, environ={"TUI_COMPACTOR_THRESHOLD_TOKENS": "0.5"}),
        resolve_settings({"threshold_tokens": 0.5}, environ={}),
        resolve_settings({}, environ={}).edited("app", threshold_tokens=0.5),
    ]
    for settings in sources:
        assert settings.threshold_tokens == 1
        shown = settings.edited("app", rules="omp", context_window=200000)
        assert ("threshold tokens", "1") in [i[:2] for i in shown.plan_source_items()]
    path = tmp_path / "s.jsonl"
    path.write_bytes((ROOT / "tests/fixtures/sessions/refactor-session-v3.jsonl").read_bytes())
    env = clean_env(tmp_path)
    done = cli("plan", str(path), "--rules", "omp", "--threshold-tokens", "0.5", "--json", env=env)
    assert done.returncode == 0, done.stderr
    plan = json.loads(done.stdout)
    assert plan["threshold"]["thresholdTokens"] == 1
    assert plan["sources"]["thresholdTokens"] == "--threshold-tokens"
    text = cli("plan", str(path), "--rules", "pi", "--threshold-tokens", "0.5", env=env)
    assert "threshold tokens 1 (from --threshold-tokens)" in text.stdout
    assert "so it is ignored" in text.stdout + text.stderr
