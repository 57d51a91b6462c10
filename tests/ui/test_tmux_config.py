"""In a real terminal: a config file and ``TUI_COMPACTOR_*`` variables set together. The app's
plan pane cuts where ``plan`` and ``compact --dry-run`` cut (the variable beats the file), and a
bad variable stops the app, ``plan`` and ``compact`` with the same message naming the variable,
not a line of the config file."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.ui.test_tmux import EXIT_MARK, FIXTURES, TmuxApp, app_command, tmux_app  # noqa: F401

pytestmark = [
    pytest.mark.tmux,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]

CONFIG = """\
[compaction]
keep_recent_tokens = 3000
context_window = 120000
reserve_tokens = 9000
"""


@pytest.fixture
def setup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    session = tmp_path / "before-compaction.jsonl"
    shutil.copyfile(FIXTURES / "sessions" / "before-compaction.jsonl", session)
    config = tmp_path / "config.toml"
    config.write_text(CONFIG)
    for name in ("TUI_COMPACTOR_CONFIG", "TUI_COMPACTOR_RULES", "TUI_COMPACTOR_TOKENS"):
        monkeypatch.delenv(name, raising=False)
    return session, config


def command(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*app_command(), *args], capture_output=True, text=True, timeout=120)


def test_file_and_variable_together_cut_at_the_same_entry_everywhere(
    tmux_app: Callable[..., TmuxApp],
    setup: tuple[Path, Path],  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    session, config = setup
    monkeypatch.setenv("TUI_COMPACTOR_KEEP_RECENT_TOKENS", "40000")
    planned = command("plan", str(session), "--config", str(config), "--json")
    assert planned.returncode == 0, planned.stderr
    plan = json.loads(planned.stdout)["plans"][0]
    assert plan["keepRecentTokens"] == 40000  # the variable beats the file's 3000
    dry = command("compact", str(session), "--config", str(config), "--dry-run", "--json")
    assert dry.returncode == 0, dry.stderr
    assert json.loads(dry.stdout)["plan"]["firstKeptEntryIndex"] == plan["firstKeptEntryIndex"]
    app = tmux_app([str(session), "--config", str(config)], (80, 24))
    app.wait_for(lambda screen: "entries" in screen.splitlines()[0], "the loaded tree")
    app.send("G", "c")
    app.wait_for_text(f"cut before #{plan['firstKeptEntryEntriesIndex']} ")


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("TUI_COMPACTOR_KEEP_RECENT_TOKENS", "lots"),
        ("TUI_COMPACTOR_RULES", "claude"),
    ],
)
def test_a_bad_variable_gives_one_message_naming_it_everywhere(
    tmux_app: Callable[..., TmuxApp],
    setup: tuple[Path, Path],  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
    variable: str,
    value: str,
) -> None:
    session, config = setup
    monkeypatch.setenv(variable, value)
    messages = set()
    for args in (["plan", str(session)], ["compact", str(session), "--dry-run"]):
        result = command(*args, "--config", str(config))
        assert result.returncode == 2, result.stdout
        messages.add(result.stderr.strip())
    assert len(messages) == 1, messages
    message = messages.pop()
    assert f"environment variable {variable}:" in message
    assert str(config) not in message  # the file holds no such value: never blamed
    app = tmux_app([str(session), "--config", str(config)], (200, 60))
    screen = app.wait_for_text(EXIT_MARK)
    assert f"{EXIT_MARK} 2]" in screen
    assert " ".join(screen.split()).count(" ".join(message.split())) == 1, screen
    assert session.read_bytes() == (FIXTURES / "sessions" / "before-compaction.jsonl").read_bytes()
