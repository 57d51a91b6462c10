"""The request inspector: ``compact --dry-run --show-requests`` and ``navigate ... --dry-run
--show-requests`` print the exact requests, call no model and never show the API key. Checked
against what the loopback server receives when the same compaction really runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.summarize.helpers import split_turn_session
from tests.support.llm_server import LLMServer
from tui_compactor.cli import main
from tui_compactor.session.reader import load_session


@pytest.fixture(autouse=True)
def _isolated_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    for name in ("TUI_COMPACTOR_CONFIG", "TUI_COMPACTOR_PROFILE", "TUI_COMPACTOR_RULES"):
        monkeypatch.delenv(name, raising=False)


def provider_flags(server: LLMServer) -> list[str]:
    return ["--provider", "openai", "--base-url", server.openai_base_url, "--model", "test-model"]


def test_compact_show_requests_matches_what_the_server_receives(
    llm_server: LLMServer, fake_key: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = split_turn_session(tmp_path / "s.jsonl")
    before = path.read_bytes()
    common = [str(path), "--keep-recent", "1500", "--reserve", "150000",
              *provider_flags(llm_server), "--instructions", "keep the parser details"]  # fmt: skip
    status = main(["compact", *common, "--dry-run", "--show-requests", "--json"])
    out, err = capsys.readouterr()
    assert status == 0, err
    assert llm_server.requests == []  # nothing called a model
    assert path.read_bytes() == before
    shown = json.loads(out)["requests"]
    assert [item["part"] for item in shown] == ["history", "turn_prefix", "short"]
    for text in (out, err):
        assert fake_key not in text
    # The same compaction for real: the first request of each part is byte-identical.
    assert main(["compact", *common, "--dry-run", "--json"]) == 0
    capsys.readouterr()
    received = {
        ("history" if "## Original Request" not in r.prompt else "turn_prefix"): r.body
        for r in llm_server.requests
        if r.body["max_tokens"] != 512
    }
    by_part = {item["part"]: item for item in shown}
    assert by_part["history"]["body"] == received["history"]
    assert by_part["turn_prefix"]["body"] == received["turn_prefix"]
    assert "Additional focus: keep the parser details" in by_part["history"]["prompt"]
    assert by_part["history"]["url"] == llm_server.openai_base_url + "/chat/completions"
    assert by_part["short"]["maxTokens"] == 512
    assert "[the history summary of window 1 would be here]" in by_part["short"]["prompt"]


def test_compact_show_requests_text_offline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = split_turn_session(tmp_path / "s.jsonl")
    status = main(["compact", str(path), "--keep-recent", "1500", "--dry-run", "--show-requests"])
    out, err = capsys.readouterr()
    assert status == 0, err
    assert "=== history · request 1" in out and "=== turn_prefix · request 1" in out
    assert "--- system prompt" in out and "--- user prompt" in out
    assert "offline (no network)" in out
    assert "<conversation>" in out  # the serialized transcript is in the user prompt


def test_show_requests_needs_dry_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = split_turn_session(tmp_path / "s.jsonl")
    assert main(["compact", str(path), "--show-requests"]) == 2
    assert "--dry-run" in capsys.readouterr().err


def test_navigate_show_requests(
    llm_server: LLMServer, fake_key: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = split_turn_session(tmp_path / "s.jsonl")
    session = load_session(path)
    target = session.entries[2].id
    status = main(["navigate", str(path), "--to", target, "--dry-run", "--show-requests",
                   *provider_flags(llm_server), "--json"])  # fmt: skip
    out, err = capsys.readouterr()
    assert status == 0, err
    assert llm_server.requests == []
    shown = json.loads(out)["requests"]
    assert [item["part"] for item in shown] == ["branch"]
    assert shown[0]["body"]["model"] == "test-model"
    assert fake_key not in out + err


def test_navigate_show_requests_shows_the_summarizer_settings_that_are_sent(
    llm_server: LLMServer, fake_key: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The inspector and the real branch summary get their summarizer from one place, so the
    # settings' reasoning effort is in the request shown and in the request sent.
    path = split_turn_session(tmp_path / "s.jsonl")
    with load_session(path) as session:
        target = session.entries[2].id
    common = [str(path), "--to", target, *provider_flags(llm_server),
              "--reasoning-effort", "high"]  # fmt: skip
    assert main(["navigate", *common, "--dry-run", "--show-requests", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)["requests"]
    assert shown[0]["body"]["reasoning_effort"] == "high"
    status = main(["navigate", *common, "--summarize", "--yes", "--quiet-window", "0"])
    assert status == 0, capsys.readouterr().err
    assert [request.body for request in llm_server.requests] == [shown[0]["body"]]
