"""``tui-compactor compact`` end to end: real files, the loopback server, exit codes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.summarize.helpers import split_turn_session
from tests.support.llm_server import LLMServer
from tui_compactor.cli import main
from tui_compactor.session.reader import load_session

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


@pytest.fixture(autouse=True)
def _isolated_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    for name in ("TUI_COMPACTOR_CONFIG", "TUI_COMPACTOR_PROFILE", "TUI_COMPACTOR_RULES"):
        monkeypatch.delenv(name, raising=False)


def run_cli(*argv: str) -> int:
    return main(["compact", *argv])


def test_offline_compact_with_yes_appends(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = split_turn_session(tmp_path / "s.jsonl")
    before = path.read_bytes()
    status = run_cli(
        str(path), "--keep-recent", "1500", "--tokens", "bytes", "--yes", "--quiet-window", "0"
    )
    out, err = capsys.readouterr()
    assert status == 0, err
    assert "cut at" in out and "split turn" in out  # the plan is shown
    assert "audit" in out and "appended compaction" in out
    assert "── history summary (offline)" in err and "── turn prefix summary (offline)" in err
    assert "── short summary (offline)" in err
    data = path.read_bytes()
    assert data.startswith(before) and len(data) > len(before)
    entry = load_session(path).entries[-1]
    assert entry.type == "compaction" and entry.data["generator"]["summarizer"] == "offline"
    assert "Turn Context (split turn)" in entry.data["summary"]


def test_dry_run_and_unconfirmed_write_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = split_turn_session(tmp_path / "s.jsonl")
    before = path.read_bytes()
    assert run_cli(str(path), "--keep-recent", "1500", "--dry-run") == 0
    assert "dry run: nothing written" in capsys.readouterr().out
    # Not a terminal and no --yes: declined.
    assert run_cli(str(path), "--keep-recent", "1500") == 1
    assert "nothing written" in capsys.readouterr().err
    assert path.read_bytes() == before


def test_json_output_via_the_server_and_no_key_leak(
    llm_server: LLMServer, fake_key: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = split_turn_session(tmp_path / "s.jsonl")
    status = run_cli(
        str(path),
        "--keep-recent",
        "1500",
        "--reserve",
        "150000",
        "--provider",
        "openai",
        "--base-url",
        llm_server.openai_base_url,
        "--model",
        "test-model",
        "--instructions",
        "keep the parser details",
        "--json",
        "--yes",
        "--quiet-window",
        "0",
    )
    out, err = capsys.readouterr()
    assert status == 0, err
    report = json.loads(out)
    assert report["written"] and report["summarizer"] == "openai:test-model"
    assert report["plan"]["isSplitTurn"] is True
    assert sorted(r.body["max_tokens"] for r in llm_server.requests) == [512, 16384, 16384]
    assert any("Additional focus: keep the parser details" in r.prompt for r in llm_server.requests)
    entry = load_session(path).entries[-1]
    assert entry.id == report["entryId"]
    assert entry.data["summary"] == report["summary"]
    for text in (out, err, path.read_text()):
        assert fake_key not in text


def test_summarizer_failure_writes_nothing(
    llm_server: LLMServer, fake_key: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = split_turn_session(tmp_path / "s.jsonl")
    before = path.read_bytes()
    llm_server.add_faults("401", "401")
    status = run_cli(
        str(path),
        "--keep-recent",
        "1500",
        "--provider",
        "anthropic",
        "--base-url",
        llm_server.anthropic_base_url,
        "--model",
        "m",
        "--yes",
    )
    out, err = capsys.readouterr()
    assert status == 1
    assert "authentication failed" in err and "Nothing was written" in err
    assert fake_key not in out + err
    assert path.read_bytes() == before


@pytest.mark.parametrize("name", ["v1-with-compaction-index.jsonl", "truncated-last-line.jsonl"])
def test_gate_refusal_exits_non_zero_without_calling_the_model(
    llm_server: LLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    path = tmp_path / name
    shutil.copy(FIXTURES / "bad" / name, path)
    before = path.read_bytes()
    model = f"gate-{name}"  # a late request of an earlier test on the shared server has another
    status = run_cli(
        str(path),
        "--keep-recent",
        "10",
        "--provider",
        "openai",
        "--base-url",
        llm_server.openai_base_url,
        "--model",
        model,
        "--yes",
    )
    err = capsys.readouterr().err
    assert status == 1
    # The gate's refusal, in the gate's words (the same as `navigate`, `undo` and the app's banner).
    assert "append refused: " + name in err and "Nothing was written" in err
    assert [r for r in llm_server.requests if r.body.get("model") == model] == []
    assert path.read_bytes() == before


def test_invalid_cut_and_bad_config(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = split_turn_session(tmp_path / "s.jsonl")
    session = load_session(path)
    tool_result = next(e for e in session.entries if e.role == "toolResult")
    assert run_cli(str(path), "--cut", tool_result.id, "--yes") == 1
    assert "cannot compact here" in capsys.readouterr().err
    config = tmp_path / "bad.toml"
    config.write_text("[compaction\n")
    assert run_cli(str(path), "--config", str(config)) == 2
    assert f"{config}:1" in capsys.readouterr().err


def test_profile_without_model_is_a_config_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = split_turn_session(tmp_path / "s.jsonl")
    assert run_cli(str(path), "--provider", "openai", "--base-url", "http://127.0.0.1:9/v1") == 2
    assert "names no model" in capsys.readouterr().err
