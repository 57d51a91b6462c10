"""Writing commands append only after the user types the word they ask for."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tui_compactor.commands import confirm as confirm_module

ROOT = Path(__file__).resolve().parents[1]
SESSION = ROOT / "tests" / "fixtures" / "oracle" / "sessions" / "tree-compacted.jsonl"


@pytest.mark.parametrize(
    ("tty", "typed", "expected", "agreed"),
    [
        (True, "yes", "yes", True),
        (True, " YES \n", "yes", True),
        (True, "y", "yes", False),
        (True, "undo", "undo", True),
        (True, "yes", "undo", False),
        (False, "yes", "yes", False),
    ],
)
def test_confirm_needs_the_exact_word_on_a_terminal(
    monkeypatch: pytest.MonkeyPatch, tty: bool, typed: str, expected: str, agreed: bool
) -> None:
    monkeypatch.setattr(confirm_module.sys.stdin, "isatty", lambda: tty, raising=False)
    monkeypatch.setattr("builtins.input", lambda prompt: typed)
    assert confirm_module.confirm("Append?", expected=expected) is agreed


def test_confirm_treats_end_of_input_as_no(monkeypatch: pytest.MonkeyPatch) -> None:
    def closed(prompt: str) -> str:
        raise EOFError

    monkeypatch.setattr(confirm_module.sys.stdin, "isatty", lambda: True, raising=False)
    monkeypatch.setattr("builtins.input", closed)
    assert confirm_module.confirm("Append?") is False


def _run_on_pty(args: list[str], answer: bytes) -> tuple[int, bytes]:
    """Run the CLI on a pseudo-terminal (stdin, stdout, stderr); type ``answer`` when asked."""
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "tui_compactor", *args],
        stdin=follower, stdout=follower, stderr=follower, cwd=ROOT,
    )  # fmt: skip
    os.close(follower)
    output = b""
    answered = False
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        ready, _, _ = select.select([leader], [], [], 0.5)
        if ready:
            try:
                chunk = os.read(leader, 65536)
            except OSError:
                break
            if not chunk:
                break
            output += chunk
            if not answered and b"to write:" in output:
                os.write(leader, answer)
                answered = True
        elif process.poll() is not None:
            break
    status = process.wait(timeout=30)
    os.close(leader)
    return status, output


@pytest.mark.parametrize(("answer", "written"), [(b"yes\n", True), (b"no\n", False)])
def test_compact_appends_only_after_a_typed_yes(
    tmp_path: Path, answer: bytes, written: bool
) -> None:
    session = tmp_path / SESSION.name
    session.write_bytes(SESSION.read_bytes())
    before = session.read_bytes()
    status, output = _run_on_pty(
        ["compact", str(session), "--provider", "offline", "--quiet-window", "0"], answer
    )
    after = session.read_bytes()
    assert b"to write:" in output
    assert after.startswith(before)
    if written:
        assert status == 0, output.decode(errors="replace")
        assert after.count(b"\n") == before.count(b"\n") + 1
        assert b'"type":"compaction"' in after[len(before) :]
    else:
        assert status == 1
        assert after == before
