"""A broken config file stops every command that reads the settings — and the app — with the
same usage error (exit status 2) naming the file and the line, never a traceback and never a
silent fall-back to the defaults (``config.load_config`` decides the message once)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.cli import cli

FIXTURES = Path(__file__).resolve().parent / "fixtures"
SESSION = FIXTURES / "oracle" / "sessions" / "tree-compacted.jsonl"

COMMANDS = [
    [],  # the app itself
    ["tree"],
    ["plan"],
    ["context"],
    ["stats"],
    ["timeline"],
    ["export"],
    ["serialize"],
    ["audit"],
    ["navigate", "--to", "9f5ca3d3"],
    ["compact", "--dry-run"],
    ["shake"],
    ["open"],
]

BROKEN = {
    "invalid TOML": ("[compaction]\nkeep_recent_tokens = 3000\nbroken = = 1\n", 3, COMMANDS),
    "a bad value": (
        '[compaction]\nkeep_recent_tokens = 3000\nrules = "claude"\n',
        3,
        [[], ["tree"], ["plan"]],
    ),
    "a threshold over 100": (
        "[compaction]\nthreshold_percent = 150\n",
        2,
        [[], ["tree"], ["plan"]],
    ),
}


@pytest.mark.parametrize("broken", list(BROKEN))
def test_every_command_stops_on_a_broken_config_with_one_message(
    tmp_path: Path, broken: str
) -> None:
    text, line, commands = BROKEN[broken]
    config = tmp_path / "config.toml"
    config.write_text(text)
    env = {k: v for k, v in os.environ.items() if not k.startswith("TUI_COMPACTOR_")}
    env["TUI_COMPACTOR_CONFIG"] = str(config)
    before = SESSION.read_bytes()
    messages = {}
    for command in commands:
        args = command[:1] + [str(SESSION)] + command[1:]
        result = cli(*args, env=env, timeout=60)
        assert result.returncode == 2, (command, result.stdout[-400:], result.stderr[-400:])
        assert result.stdout == b"", command  # the app never started, nothing was printed
        messages[" ".join(command) or "(app)"] = result.stderr.decode().strip()
    assert len(set(messages.values())) == 1, messages
    message = messages["tree"]
    assert message.startswith(f"tui-compactor: {config}:{line}: "), message
    assert "Traceback" not in message and len(message.splitlines()) == 1
    assert SESSION.read_bytes() == before


def test_a_value_a_rule_refuses_is_said_in_our_words_with_where_it_came_from(
    tmp_path: Path,
) -> None:
    """A threshold over 100 in the config file or a variable: the message names the file and
    line (or the variable) and the key, in our words, without pydantic's "Value error, "."""
    config = tmp_path / "config.toml"
    config.write_text("[compaction]\nkeep_recent_tokens = 3000\nthreshold_percent = 150\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("TUI_COMPACTOR_")}
    from_file = cli("plan", str(SESSION), env=dict(env, TUI_COMPACTOR_CONFIG=str(config)))
    assert from_file.returncode == 2
    assert from_file.stderr.decode().strip() == (
        f"tui-compactor: {config}:3: compaction.threshold_percent: 150.0 is over 100"
    )
    variable = dict(
        env,
        XDG_CONFIG_HOME=str(tmp_path / "no-config"),
        TUI_COMPACTOR_THRESHOLD_PERCENT="150",
    )
    from_variable = cli("plan", str(SESSION), env=variable)
    assert from_variable.returncode == 2
    assert from_variable.stderr.decode().strip() == (
        "tui-compactor: environment variable TUI_COMPACTOR_THRESHOLD_PERCENT: "
        "compaction.threshold_percent: 150.0 is over 100"
    )


def test_lint_still_judges_the_file_on_a_broken_config(tmp_path: Path) -> None:
    """lint's exit status says whether the file is usable (2: refused); a broken config file
    or variable must not make a healthy file look refused. lint warns and reads the file
    under the rules of --rules or of the file itself."""
    config = tmp_path / "config.toml"
    config.write_text("[compaction]\nbroken = = 1\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("TUI_COMPACTOR_")}
    healthy = dict(env, TUI_COMPACTOR_CONFIG=str(tmp_path / "none.toml"))
    expected = cli("lint", str(SESSION), env=healthy, timeout=60)
    assert expected.returncode == 0
    for broken in (
        dict(env, TUI_COMPACTOR_CONFIG=str(config)),
        dict(healthy, TUI_COMPACTOR_CONTEXT_WINDOW="abc"),
    ):
        result = cli("lint", str(SESSION), env=broken, timeout=60)
        assert result.returncode == 0, result.stderr[-400:]
        assert result.stdout == expected.stdout
        assert b"warning:" in result.stderr and b"config is not used" in result.stderr
    refused = cli(
        "lint",
        str(FIXTURES / "bad" / "empty-file.jsonl"),
        env=dict(env, TUI_COMPACTOR_CONFIG=str(config)),
        timeout=60,
    )
    assert refused.returncode == 2
    omp = cli(
        "lint",
        "--rules",
        "omp",
        "--json",
        str(SESSION),
        env=dict(env, TUI_COMPACTOR_CONFIG=str(config)),
        timeout=60,
    )
    assert b'"rules": "omp"' in omp.stdout or b'"omp": {' in omp.stdout
