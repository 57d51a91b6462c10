"""A server that misbehaves on purpose cannot fill memory, reach the terminal or get text stored
raw: ``compact`` against the loopback server (real sockets, real streaming)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.summarize.helpers import SessionBuilder, split_turn_session
from tests.support.llm_server import LLMServer, RecordedRequest
from tui_compactor.cli import main
from tui_compactor.session.reader import load_session

HOSTILE = "\x1b]52;c;cm0gLXJmIH4K\x07\x1b[2J\x1b]0;PWNED\x07\x9b31m\x1bP1$r\x1b\\"
"""OSC 52 clipboard write, clear screen, title set, 8-bit CSI, DCS."""


@pytest.fixture(autouse=True)
def _isolated_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    for name in ("TUI_COMPACTOR_CONFIG", "TUI_COMPACTOR_PROFILE", "TUI_COMPACTOR_RULES"):
        monkeypatch.delenv(name, raising=False)


def compact(path: Path, server: LLMServer, *extra: str) -> int:
    return main(
        [
            "compact",
            str(path),
            "--keep-recent",
            "1500",
            "--reserve",
            "150000",
            "--provider",
            "openai",
            "--base-url",
            server.openai_base_url,
            "--model",
            "test-model",
            "--yes",
            "--quiet-window",
            "0",
            *extra,
        ]
    )


def assert_no_terminal_controls(text: str) -> None:
    for needle in ("\x1b", "\x9b", "\x9d", "\x90", "\x07"):
        assert needle not in text, f"{needle!r} reached the terminal"


def test_endless_reply_is_capped_and_nothing_is_written(
    llm_server: LLMServer, fake_key: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = split_turn_session(tmp_path / "s.jsonl")
    before = path.read_bytes()
    llm_server.behaviour.endless = True
    llm_server.behaviour.chunk_chars = 4000
    started = time.monotonic()
    status = compact(path, llm_server, "--json")
    elapsed = time.monotonic() - started
    out, err = capsys.readouterr()
    assert status != 0
    assert path.read_bytes() == before
    report = json.loads(out)
    assert report["written"] is False
    assert "ignores max_tokens" in report["error"] and "nothing was written" in report["error"]
    # The largest budget is 16384 tokens: 4x that at 4 bytes a token is 256 KiB of reply.
    assert len(err) < 2 * 4 * 16384 * 4 + 10_000
    assert elapsed < 30
    # The stream was stopped: the server saw the client hang up.
    deadline = time.monotonic() + 5
    while llm_server.in_flight and time.monotonic() < deadline:
        time.sleep(0.05)
    assert llm_server.in_flight == 0


def test_both_parts_failing_prints_no_traceback(
    llm_server: LLMServer, fake_key: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = split_turn_session(tmp_path / "s.jsonl")
    before = path.read_bytes()
    llm_server.behaviour.error_message = f"denied {HOSTILE} for {fake_key}"
    llm_server.add_faults("401", "401", "401", "401")
    status = compact(path, llm_server)
    out, err = capsys.readouterr()
    assert status != 0 and path.read_bytes() == before
    assert "never retrieved" not in err and "Traceback" not in err
    assert "summarizing failed" in err
    assert_no_terminal_controls(out + err)
    assert fake_key not in out + err


def test_hostile_error_body_is_sanitized_on_stderr(
    llm_server: LLMServer, fake_key: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = split_turn_session(tmp_path / "s.jsonl")
    llm_server.behaviour.error_message = f"bad {HOSTILE} request"
    llm_server.add_faults("400", "400", "400")
    status = compact(path, llm_server)
    out, err = capsys.readouterr()
    assert status != 0
    assert "bad" in err and "request" in err
    assert_no_terminal_controls(out + err)


def test_summary_with_escapes_and_an_echoed_key_is_stored_clean(
    llm_server: LLMServer, fake_key: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = split_turn_session(tmp_path / "s.jsonl")

    def reply(request: RecordedRequest) -> str:
        return (
            f"## Goal\r\nkeep {HOSTILE} going\u202e with key {fake_key}\n\n## Next Steps\n1. go\n"
        )

    llm_server.behaviour.reply = reply
    assert compact(path, llm_server) == 0
    out, err = capsys.readouterr()
    assert_no_terminal_controls(out + err)
    entry = load_session(path).entries[-1]
    assert entry.type == "compaction"
    stored = entry.data["summary"] + entry.data.get("shortSummary", "")
    assert_no_terminal_controls(stored)
    assert "\r" not in stored and "\u202e" not in stored and "⟨U+202E⟩" in stored
    assert fake_key not in stored and "[redacted]" in stored
    assert fake_key not in path.read_text()


def test_lone_surrogates_compact_online_and_offline(
    llm_server: LLMServer, fake_key: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # pi cuts text in the middle of an emoji and writes the lone half as "\ud83d".
    builder = SessionBuilder()
    for turn in range(6):
        builder.user(f"turn {turn}: cut emoji \ud83d here and \udc00 there " + "words " * 300)
        builder.assistant(f"answer \ud800 {turn} " + "more " * 300)
    online = builder.write(tmp_path / "online.jsonl")
    offline = builder.write(tmp_path / "offline.jsonl")
    assert "\\ud83d" in online.read_text()
    assert compact(online, llm_server) == 0, capsys.readouterr().err
    assert llm_server.requests
    for request in llm_server.requests:
        assert not any("\ud800" <= ch <= "\udfff" for ch in request.prompt)
    assert "\ufffd" in "".join(request.prompt for request in llm_server.requests)
    status = main(
        ["compact", str(offline), "--keep-recent", "1500", "--yes", "--quiet-window", "0"]
    )
    assert status == 0, capsys.readouterr().err
    for path in (online, offline):
        assert load_session(path).entries[-1].type == "compaction"


def test_two_failed_parts_leave_no_unretrieved_task_exception() -> None:
    """When both summaries have failed by the time they are collected, the second failure is
    retrieved too: asyncio never prints "Task exception was never retrieved" (with the raw
    error text) when the tasks are collected."""
    import asyncio
    import gc

    from tui_compactor.summarize.compaction import _gather_or_cancel
    from tui_compactor.summarize.errors import AuthError

    reported: list[dict[str, object]] = []

    async def fail(message: str) -> None:
        raise AuthError(message)

    async def scenario() -> None:
        asyncio.get_running_loop().set_exception_handler(lambda loop, ctx: reported.append(ctx))
        tasks = [asyncio.create_task(fail("history")), asyncio.create_task(fail("prefix"))]
        await asyncio.sleep(0.01)  # both have failed before anyone waits on them
        with pytest.raises(AuthError, match="history"):
            await _gather_or_cancel(tasks)
        del tasks
        gc.collect()

    asyncio.run(scenario())
    gc.collect()
    assert reported == []
