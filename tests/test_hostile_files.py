"""Strange numbers and broken Unicode in a session crash no command (issue 13, points 2, 5, 9)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.summarize.helpers import SessionBuilder
from tui_compactor.cli import main
from tui_compactor.session.reader import load_session


@pytest.fixture(autouse=True)
def _isolated_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    for name in ("TUI_COMPACTOR_CONFIG", "TUI_COMPACTOR_PROFILE", "TUI_COMPACTOR_RULES"):
        monkeypatch.delenv(name, raising=False)


def conversation(turns: int = 8, text: str = "words ") -> SessionBuilder:
    builder = SessionBuilder()
    for turn in range(turns):
        builder.user(f"request {turn} " + text * 200)
        builder.assistant(f"answer {turn} " + text * 200)
    return builder


def non_finite_session(path: Path) -> Path:
    """``usage.totalTokens: 1e400`` (JavaScript reads Infinity) and an infinite header field."""
    conversation().write(path)
    lines = path.read_text().splitlines()
    lines[0] = lines[0][:-1] + ',"budget":1e400,"ratio":-1e999}'
    lines = [line.replace('"totalTokens": 110', '"totalTokens": 1e400') for line in lines]
    path.write_text("\n".join(lines) + "\n")
    assert '"totalTokens": 1e400' in path.read_text().split("\n")[2]
    return path


def strict_json(text: str) -> object:
    """Parse as strict JSON: Python would accept the ``Infinity`` / ``NaN`` tokens."""

    def refuse(token: str) -> object:
        raise AssertionError(f"{token} is not JSON")

    return json.loads(text, parse_constant=refuse)


READ_COMMANDS = [
    ["plan"],
    ["plan", "--json"],
    ["context"],
    ["context", "--json"],
    ["export"],
    ["export", "--format", "json"],
    ["inspect"],
    ["inspect", "--json"],
    ["lint"],
    ["lint", "--json"],
    ["tree"],
    ["serialize"],
]


@pytest.mark.parametrize("argv", READ_COMMANDS, ids=" ".join)
def test_non_finite_numbers_crash_no_command(
    argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = non_finite_session(tmp_path / "inf.jsonl")
    before = path.read_bytes()
    status = main([*argv, str(path)])
    out, err = capsys.readouterr()
    assert status == 0, err
    assert "Traceback" not in err
    if "--json" in argv or "json" in argv:
        data = strict_json(out)
        if argv[0] == "inspect":
            assert data["header"]["budget"] is None  # written as JSON.stringify writes it
    assert path.read_bytes() == before


def test_non_finite_usage_is_ignored_like_a_missing_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = non_finite_session(tmp_path / "inf.jsonl")
    assert main(["context", "--json", str(path)]) == 0
    tokens = json.loads(capsys.readouterr().out)["contextTokens"]
    # input + output of the last usage (100 + 10) instead of the unusable total.
    assert tokens["usageTokens"] == 110


def test_compact_with_non_finite_usage(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = non_finite_session(tmp_path / "inf.jsonl")
    status = main(["compact", str(path), "--keep-recent", "1500", "--yes", "--quiet-window", "0"])
    assert status == 0, capsys.readouterr().err
    assert load_session(path).entries[-1].type == "compaction"


@pytest.mark.parametrize("argv", READ_COMMANDS, ids=" ".join)
def test_lone_surrogates_crash_no_command(
    argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = conversation(text="cut \ud83d emoji \udc00 ").write(tmp_path / "s.jsonl")
    before = path.read_bytes()
    status = main([*argv, str(path)])
    out, err = capsys.readouterr()
    assert status == 0, err
    out.encode("utf-8")  # printable: no lone surrogate left in the output
    err.encode("utf-8")
    if "--json" in argv or "json" in argv:
        strict_json(out)
    assert path.read_bytes() == before


def test_navigate_summarize_yes_json_prints_one_json_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = conversation(turns=4).write(tmp_path / "s.jsonl")
    target = load_session(path).entries[3].id  # an assistant message: the new leaf itself
    status = main(
        [
            "navigate",
            str(path),
            "--to",
            target,
            "--summarize",
            "--yes",
            "--json",
            "--quiet-window",
            "0",
        ]
    )
    out, err = capsys.readouterr()
    assert status == 0, err
    report = json.loads(out)
    assert report["written"] is True
    assert report["newLeafId"] == target
    assert report["summary"] and report["summarizer"] == "offline"
    entry = load_session(path).entries[-1]
    assert entry.type == "branch_summary" and entry.id == report["entryId"]
    assert report["plan"]["targetId"] == target


def test_navigate_json_reports_a_refusal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = conversation(turns=2).write(tmp_path / "s.jsonl")
    target = load_session(path).entries[1].id
    status = main(["navigate", str(path), "--to", target, "--json"])  # not a tty, no --yes
    out, _ = capsys.readouterr()
    assert status != 0
    report = json.loads(out)
    assert report["written"] is False and report["refused"] == "not confirmed"


FUZZ_FINDINGS = sorted((Path(__file__).parent / "fixtures" / "fuzz").glob("mutant-*.jsonl"))
"""Mutants on which the 10,000-mutant run (benchmarks/fuzz_sessions.py) found a traceback: a
tool call's ``content`` that is ``true`` or a number, a dict as a tool-call id, 1000-deep
tool arguments."""


@pytest.mark.parametrize("path", FUZZ_FINDINGS, ids=lambda path: path.stem)
def test_fuzz_findings_crash_no_command(
    path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    copy = tmp_path / path.name
    copy.write_bytes(path.read_bytes())
    for argv in READ_COMMANDS:
        status = main([*argv, str(copy)])
        _, err = capsys.readouterr()
        assert "Traceback" not in err, (argv, err)
        assert status in (0, 2), (argv, err)
    assert copy.read_bytes() == path.read_bytes()
