"""Headless commands on a real terminal: hostile session text never reaches it raw.

Each command runs as ``python -m tui_compactor`` with stdout and stderr on the slave side of a
pseudo-terminal (so ``isatty()`` is true and the commands take their terminal paths); the test
reads everything the terminal would have received from the master side.
"""

from __future__ import annotations

import errno
import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "fixtures" / "bad"
HOSTILE_FILES = (
    "control-characters-and-ansi-escapes.jsonl",
    "prompt-injection-in-tool-output.jsonl",
)
COMMANDS = ("serialize", "export", "plan", "context", "tree", "lint")
TIMEOUT_SECONDS = 60

# C0 except \t \n \r, DEL, and C1 (U+0080..U+009F, which UTF-8 encodes as C2 80..C2 9F).
FORBIDDEN_C0 = re.compile(rb"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
FORBIDDEN_C1 = re.compile(rb"\xc2[\x80-\x9f]")
HEADER = re.compile(r"^\[(User|Assistant)\]:", re.MULTILINE)


def run_on_terminal(*argv: str) -> tuple[int, bytes]:
    """Run ``python -m tui_compactor ARGV`` on a pty; return (exit status, terminal bytes)."""
    master, slave = pty.openpty()
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "120", "LINES": "40"}
    env.pop("NO_COLOR", None)
    try:
        process = subprocess.Popen(
            [sys.executable, "-m", "tui_compactor", *argv],
            stdin=subprocess.DEVNULL,
            stdout=slave,
            stderr=slave,
            cwd=ROOT,
            env=env,
            close_fds=True,
        )
    finally:
        os.close(slave)
    received = bytearray()
    try:
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError as error:  # EIO: every slave descriptor is closed
                if error.errno != errno.EIO:
                    raise
                break
            if not chunk:
                break
            received.extend(chunk)
    finally:
        os.close(master)
    status = process.wait(timeout=TIMEOUT_SECONDS)
    return status, bytes(received)


def serialized_headers(name: str) -> list[str]:
    """The ``[User]:`` / ``[Assistant]:`` headers of the transcript, from a pipe (raw text)."""
    raw = subprocess.run(
        [sys.executable, "-m", "tui_compactor", "serialize", str(CORPUS / name)],
        capture_output=True,
        cwd=ROOT,
        timeout=TIMEOUT_SECONDS,
        check=True,
    ).stdout.decode("utf-8", "replace")
    return HEADER.findall(raw)


@pytest.mark.parametrize("name", HOSTILE_FILES)
@pytest.mark.parametrize("command", COMMANDS)
def test_terminal_receives_no_control_sequences(command: str, name: str) -> None:
    status, output = run_on_terminal(command, str(CORPUS / name))
    assert status == 0, output.decode("utf-8", "replace")
    assert output.strip(), "the command printed nothing"
    assert b"\x1b" not in output, "an escape sequence reached the terminal"
    assert FORBIDDEN_C1.search(output) is None, "a C1 control reached the terminal"
    found = FORBIDDEN_C0.search(output)
    assert found is None, f"control byte {found.group()!r} reached the terminal"
    output.decode("utf-8")  # valid UTF-8 throughout


@pytest.mark.parametrize("name", HOSTILE_FILES)
def test_serialized_transcript_keeps_every_message_header(name: str) -> None:
    """Sanitizing for the terminal must not eat messages (an unclosed OSC once did)."""
    expected = serialized_headers(name)
    assert expected, "the transcript has no message headers"
    status, output = run_on_terminal("serialize", str(CORPUS / name))
    assert status == 0
    shown = output.decode("utf-8").replace("\r\n", "\n")
    assert HEADER.findall(shown) == expected


def test_stdout_and_stderr_piped_together_arrive_in_the_order_printed(tmp_path: Path) -> None:
    """``compact --dry-run 2>&1 | less``: the plan (stdout, block-buffered on a pipe) comes
    before the summary streamed to stderr after it, and each stderr line is whole."""
    session = tmp_path / "s.jsonl"
    session.write_bytes((ROOT / "tests/fixtures/sessions/refactor-session-v3.jsonl").read_bytes())
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    argv = ["compact", str(session), "--dry-run", "--provider", "offline", "--quiet-window", "0"]
    done = subprocess.run(
        [sys.executable, "-m", "tui_compactor", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=env,
        cwd=ROOT,
        timeout=TIMEOUT_SECONDS,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-2000:]
    lines = done.stdout.decode().splitlines()
    assert lines[0].startswith("note: ")  # the load's note (stderr), before anything
    plan_end = next(i for i, line in enumerate(lines) if line.startswith("  modified "))
    summary = lines.index("── history summary (offline) ──")
    assert lines[1].startswith("session ") and plan_end < summary
    assert lines[-1] == "dry run: nothing written"
