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
