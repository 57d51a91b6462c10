"""Every command uses the one exit-code table (``workbench.exits``), with the same meaning."""

from __future__ import annotations

import ast
import json
import shutil
from pathlib import Path

import pytest

from tests.support.cli import cli
from tests.support.processes import hold_publish_lock
from tui_compactor.cli import COMMANDS
from tui_compactor.workbench.exits import EXIT_CODES, EXIT_OK, EXIT_REFUSED, EXIT_USAGE

ROOT = Path(__file__).resolve().parents[2]
SESSIONS = ROOT / "tests" / "fixtures" / "oracle" / "sessions"
HEADLESS = sorted(name for name in COMMANDS if name not in ("open", "demo"))
REQUIRED = {"navigate": ["--to", "#1"]}


@pytest.fixture
def compacted(tmp_path: Path) -> Path:
    target = tmp_path / "tree-compacted.jsonl"
    shutil.copyfile(SESSIONS / "tree-compacted.jsonl", target)
    return target


def test_no_command_defines_or_hard_codes_its_own_codes() -> None:
    for path in sorted((ROOT / "tui_compactor" / "commands").glob("*.py")) + [
        ROOT / "tui_compactor" / "cli.py"
    ]:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign):
                names = [t.id for t in node.targets if isinstance(t, ast.Name)]
                assert not any(n.startswith("EXIT_") for n in names), f"{path.name}: {names}"
            if isinstance(node, ast.FunctionDef) and node.name == "run":
                for inner in ast.walk(node):
                    if isinstance(inner, ast.Return) and isinstance(inner.value, ast.Constant):
                        raise AssertionError(f"{path.name}: run() returns a bare number")


def test_the_table_is_documented_once_in_readme_and_commands_doc() -> None:
    for doc in ("README.md", "docs/engine-commands.md"):
        text = (ROOT / doc).read_text(encoding="utf-8")
        for code, meaning in EXIT_CODES.items():
            assert f"| {code} | {meaning} |" in text, f"{doc} lacks the row for {code}"


@pytest.mark.parametrize("command", HEADLESS)
def test_unreadable_file_and_bad_flags_are_usage_errors(command: str, tmp_path: Path) -> None:
    missing = str(tmp_path / "missing.jsonl")
    assert cli(command, missing, *REQUIRED.get(command, [])).returncode == EXIT_USAGE
    assert cli(command, missing, "--no-such-flag").returncode == EXIT_USAGE


@pytest.mark.parametrize("command", [name for name in HEADLESS if name != "stats"])
def test_an_unusable_file_is_refused_with_its_reason(command: str, tmp_path: Path) -> None:
    """A typo in the path, or an empty file: every command says why it cannot use it, in the
    loader's words (``undo`` and ``seal`` said only "not a usable session")."""
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    for path, why in ((tmp_path / "missing.jsonl", "no such file or directory"),
                      (empty, "empty file (0 bytes)")):  # fmt: skip
        result = cli(command, str(path), *REQUIRED.get(command, []))
        said = (result.stdout + result.stderr).decode().lower()
        assert why in said, f"{command} {path.name}: {said}"


@pytest.mark.parametrize(
    "command", ["tree", "plan", "context", "serialize", "compact", "export", "navigate"]
)
def test_unknown_entry_ids_are_usage_errors(command: str, compacted: Path) -> None:
    extra = ["--to", "nope"] if command == "navigate" else ["--leaf", "nope"]
    result = cli(command, str(compacted), *extra)
    assert result.returncode == EXIT_USAGE
    assert b"nope" in result.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["plan", "--cut", "#3"],  # the rules refuse this cut
        ["compact", "--provider", "offline"],  # not confirmed (no terminal, no --yes)
        [
            "compact",
            "--provider",
            "offline",
            "--dry-run",
            "--keep-recent",
            "300000",
            "--window",
            "200000",
        ],  # summarizes nothing
        ["navigate", "--to", "#3"],  # not confirmed
        ["undo"],  # later entries would leave the active path
        ["seal"],  # nothing to seal
    ],
)
def test_refusals_write_nothing_and_exit_1(args: list[str], compacted: Path) -> None:
    before = compacted.read_bytes()
    result = cli(args[0], str(compacted), *args[1:])
    assert result.returncode == EXIT_REFUSED, result.stderr
    assert compacted.read_bytes() == before


@pytest.mark.parametrize("command", ["lint", "tree", "inspect", "plan", "context", "serialize"])
def test_reports_exit_0(command: str, compacted: Path) -> None:
    assert cli(command, str(compacted)).returncode == EXIT_OK


WRITES = [
    ["compact", "--provider", "offline"],
    ["navigate", "--to", "#3"],
    ["undo", "--force"],
    ["seal"],
]
"""One write of each writing command that the rules allow on ``compacted`` (seal: once it has
a torn tail)."""


def _torn_if_sealing(args: list[str], path: Path) -> None:
    if args[0] == "seal":
        with path.open("ab") as file:
            file.write(b'{"type":"message","id":"torn')  # something to seal


@pytest.mark.parametrize("args", WRITES)
def test_every_writing_command_reports_an_unconfirmed_write_alike(
    args: list[str], compacted: Path
) -> None:
    _torn_if_sealing(args, compacted)
    before = compacted.read_bytes()
    result = cli(args[0], str(compacted), *args[1:], "--json", "--quiet-window", "0")
    assert result.returncode == EXIT_REFUSED, result.stderr
    report = json.loads(result.stdout)
    assert report["written"] is False and report["refused"] == "not confirmed"
    assert b"tui-compactor: not confirmed: nothing written (pass --yes" in result.stderr
    assert compacted.read_bytes() == before


@pytest.mark.parametrize("args", [[*write, "--yes"] for write in WRITES])
def test_every_writing_command_reports_the_gates_refusal_alike(
    args: list[str], compacted: Path
) -> None:
    # Another process holds the publish lock: the gate refuses; each command says so in the
    # same words and the same JSON fields, and writes nothing.
    _torn_if_sealing(args, compacted)
    before = compacted.read_bytes()
    with hold_publish_lock(compacted, 30) as holder:
        result = cli(args[0], str(compacted), *args[1:], "--json", "--quiet-window", "0")
    assert result.returncode == EXIT_REFUSED, result.stderr
    report = json.loads(result.stdout)
    assert report["written"] is False
    assert report["refusedCode"] in ("live-agent", "live-writer", "locked")
    assert str(holder.pid) in report["refused"]
    assert report["hint"]
    assert b"tui-compactor: append refused: " in result.stderr
    assert compacted.read_bytes() == before


@pytest.mark.parametrize(
    "argv",
    [
        ["undo", "MISSING"],
        ["seal", "MISSING"],
        ["compact", "MISSING", "--provider", "offline"],
        ["navigate", "MISSING", "--to", "#1"],
        ["navigate", "SESSION", "--to", "#nope"],
        ["compact", "SESSION", "--profile", "nope"],
        ["navigate", "SESSION", "--to", "#3", "--summarize", "--profile", "nope", "--yes"],
    ],
)
def test_a_wrong_input_prints_no_json_report(argv: list[str], compacted: Path) -> None:
    """Exit 2 under --json: nothing on stdout, the reason on stderr, in every writing command.
    `navigate` with an unknown profile printed a whole report (with `error`) where `compact`
    printed none, and `undo` / `seal` printed one for a missing file."""
    paths = {"MISSING": str(compacted.parent / "missing.jsonl"), "SESSION": str(compacted)}
    before = compacted.read_bytes()
    result = cli(*[paths.get(arg, arg) for arg in argv], "--json")
    assert result.returncode == EXIT_USAGE, result.stderr
    assert result.stdout == b"", result.stdout[:200]
    assert result.stderr.startswith(b"tui-compactor: "), result.stderr
    assert compacted.read_bytes() == before
