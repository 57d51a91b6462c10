"""``plan`` says where every setting it depends on came from, the window's, keep-recent's and
the rules' alike, when a config file, ``TUI_COMPACTOR_*`` variables and flags are set together:
in ``--json`` (``sources``, each row's ``keepRecentSource``) and in the text (``settings``)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.support.cli import cli

FIXTURES = Path(__file__).resolve().parent / "fixtures"
SESSION = FIXTURES / "oracle" / "sessions" / "tree-compacted.jsonl"

CONFIG = """\
[compaction]
keep_recent_tokens = 3000
reserve_tokens = 9000
context_window = 120000
rules = "omp"
"""


def environment(config: Path) -> dict[str, str]:
    """The file, and variables that beat it for keep-recent and add the counter."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TUI_COMPACTOR_")}
    env["TUI_COMPACTOR_CONFIG"] = str(config)
    env["TUI_COMPACTOR_KEEP_RECENT_TOKENS"] = "4000"
    env["TUI_COMPACTOR_TOKENS"] = "bytes"
    return env


def test_plan_json_names_the_source_of_every_setting_it_depends_on(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(CONFIG)
    result = cli("plan", str(SESSION), "--reserve", "8000", "--json", env=environment(config))
    assert result.returncode == 0, result.stderr.decode()
    report = json.loads(result.stdout)
    in_file = f"config file {config}"
    assert report["sources"] == {
        "keepRecentTokens": "TUI_COMPACTOR_KEEP_RECENT_TOKENS",  # beats the file's 3000
        "reserveTokens": "--reserve",  # the flag beats the file's 9000
        "contextWindow": in_file,
        "rules": in_file,
        "tokens": "TUI_COMPACTOR_TOKENS",
        "calibrate": "rules omp",  # what oh-my-pi's rules imply, nobody set it
        "splitTurns": "default",
        "thresholdPercent": "default",
        "thresholdTokens": "default",
    }
    assert report["threshold"]["windowSource"] == report["sources"]["contextWindow"]
    assert report["rulesSource"] == report["sources"]["rules"]
    (row,) = report["plans"]
    assert (
        row["keepRecentTokens"] == 4000
        and row["keepRecentSource"] == report["sources"]["keepRecentTokens"]
    )


def test_plan_text_lists_the_settings_and_where_each_came_from(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(CONFIG)
    result = cli("plan", str(SESSION), "--reserve", "8000", env=environment(config))
    assert result.returncode == 0, result.stderr.decode()
    lines = result.stdout.decode().splitlines()
    start = next(n for n, line in enumerate(lines) if line.startswith("settings "))
    block = [line[9:] for line in lines[start : start + 9]]
    assert block == [
        "keep-recent 4000 (from TUI_COMPACTOR_KEEP_RECENT_TOKENS)",
        "reserve 8000 (from --reserve)",
        f"window 120000 (from config file {config})",
        f"rules omp (from config file {config})",
        "tokens bytes (from TUI_COMPACTOR_TOKENS)",
        "calibrate yes (implied by the omp rules)",
        "split turns yes (default)",
        "threshold % unset (default)",
        "threshold tokens unset (default)",
    ]
    assert f"window   120000 (from config file {config})" in lines  # the window line agrees


def test_without_a_window_set_the_sources_say_the_sessions_model_gave_it(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TUI_COMPACTOR_")}
    env["XDG_CONFIG_HOME"] = str(tmp_path)  # no config file there
    result = cli("plan", str(SESSION), "--keep-recent", "2000", "--json", env=env)
    assert result.returncode == 0, result.stderr.decode()
    sources = json.loads(result.stdout)["sources"]
    assert sources["contextWindow"] == "model claude-opus-4-5"
    assert sources["keepRecentTokens"] == "--keep-recent"
    assert sources["rules"].startswith("session: ") and sources["tokens"] == "rules pi"
