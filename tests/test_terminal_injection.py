"""No field of any entry reaches the terminal raw, whichever command prints it (issue 13, point 3).

One session holds every entry type with terminal escapes, C1 controls, bidi overrides and
zero-width characters in every string field (ids, types, roles, names, paths, labels, models,
the thinking level, summaries...). Every headless command runs on it in a real pseudo-terminal;
what the terminal receives must hold no escape, no control (beyond CR LF, tab) and no raw bidi
or zero-width character.
"""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tui_compactor.textsafe import sanitize

EVIL = (
    "\x1b]52;c;cm0gLXJmIH4K\x07"  # OSC 52: write the clipboard
    "\x1b]0;PWNED\x07"  # window title
    "\x1b[2J\x1b[H"  # clear screen, cursor home
    "\x1bP1$r\x1b\\"  # DCS
    "\x1b_Gf=1\x1b\\"  # APC
    "\x9b31m\x9d0;t\x9c"  # 8-bit CSI and OSC
    "\u202eevil\u202c\u2066x\u2069"  # bidi override / isolate
    "a\u200bb\ufeff"  # zero width space, BOM
    "\x07\x08\x7f"
)

FORBIDDEN_BYTES = (
    [b"\x1b", b"\x07", b"\x08", b"\x7f"]
    + [chr(code).encode("utf-8") for code in range(0x80, 0xA0)]
    + [ch.encode("utf-8") for ch in "\u202e\u202c\u2066\u2069\u200b\ufeff"]
)


def evil(label: str) -> str:
    return f"{label}{EVIL}"


def hostile_session(path: Path) -> dict[str, str]:
    """Every entry type, every string field hostile. Returns a few ids for the commands."""
    ts = "2025-12-03T14:00:00.000Z"
    usage = {"input": 100, "output": 10, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 110}
    ids = {name: f"{name}{EVIL}" for name in ("u1", "a1", "t1", "a2", "u2", "a3", "u3", "a4")}
    lines: list[dict[str, Any]] = [
        {
            "type": "session",
            "version": 3,
            "id": evil("hdr"),
            "timestamp": ts,
            "cwd": evil("/home/dev"),
            "parentSession": evil("/parent.jsonl"),
        }
    ]
    parent: str | None = None

    def add(entry_id: str, body: dict[str, Any]) -> None:
        nonlocal parent
        lines.append(
            {
                "type": body.pop("type", "message"),
                "id": entry_id,
                "parentId": parent,
                "timestamp": ts,
                **body,
            }
        )
        parent = entry_id

    add(
        ids["u1"],
        {
            "message": {
                "role": "user",
                "content": [
                    {"type": "text", "text": evil("please")},
                    {"type": "image", "data": "AAAA", "mimeType": evil("image/png")},
                ],
            }
        },
    )
    add(
        ids["a1"],
        {
            "message": {
                "role": "assistant",
                "api": evil("api"),
                "provider": evil("prov"),
                "model": evil("model"),
                "stopReason": "toolUse",
                "usage": usage,
                "content": [
                    {"type": "thinking", "thinking": evil("thinking")},
                    {"type": "text", "text": evil("text")},
                    {
                        "type": "toolCall",
                        "id": evil("call"),
                        "name": evil("read"),
                        "arguments": {"path": evil("/src/a.py"), evil("key"): evil("value")},
                    },
                ],
            }
        },
    )
    add(
        ids["t1"],
        {
            "message": {
                "role": "toolResult",
                "toolCallId": evil("call"),
                "toolName": evil("read"),
                "isError": False,
                "content": [{"type": "text", "text": evil("result")}],
            }
        },
    )
    add(
        ids["a2"],
        {
            "message": {
                "role": "assistant",
                "content": [{"type": "text", "text": evil("answer") * 50}],
                "stopReason": "stop",
                "usage": usage,
                "provider": evil("p"),
                "model": evil("m"),
                "api": evil("api"),
            }
        },
    )
    add(
        evil("bash"),
        {
            "message": {
                "role": "bashExecution",
                "command": evil("ls"),
                "output": evil("out"),
                "exitCode": 0,
            }
        },
    )
    add(
        evil("cm"),
        {
            "message": {
                "role": "custom",
                "customType": evil("ext"),
                "content": evil("custom"),
                "display": True,
            }
        },
    )
    add(
        evil("bsm"),
        {"message": {"role": "branchSummary", "summary": evil("bs"), "fromId": evil("from")}},
    )
    add(
        evil("csm"),
        {"message": {"role": "compactionSummary", "summary": evil("cs"), "tokensBefore": 10}},
    )
    add(evil("mc"), {"type": "model_change", "provider": evil("prov"), "modelId": evil("mod")})
    add(evil("tl"), {"type": "thinking_level_change", "thinkingLevel": evil("high")})
    add(evil("si"), {"type": "session_info", "name": evil("name")})
    add(evil("lb"), {"type": "label", "targetId": ids["a1"], "label": evil("label")})
    add(evil("cu"), {"type": "custom", "customType": evil("ct"), "data": {evil("k"): evil("v")}})
    add(
        evil("cmsg"),
        {
            "type": "custom_message",
            "customType": evil("ct"),
            "content": evil("shown"),
            "display": True,
            "details": {"x": evil("d")},
        },
    )
    add(evil("unk"), {"type": evil("mystery"), "payload": evil("p")})
    add(ids["u2"], {"message": {"role": "user", "content": evil("second request") * 40}})
    add(
        ids["a3"],
        {
            "message": {
                "role": "assistant",
                "content": [{"type": "text", "text": evil("second answer") * 40}],
                "stopReason": "stop",
                "usage": usage,
                "provider": "p",
                "model": "m",
                "api": "a",
            }
        },
    )
    add(
        evil("cmp"),
        {
            "type": "compaction",
            "summary": evil("summary"),
            "shortSummary": evil("short"),
            "firstKeptEntryId": ids["u2"],
            "tokensBefore": 5000,
            "details": {"readFiles": [evil("/r.py")], "modifiedFiles": [evil("/w.py")]},
            "generator": {"name": evil("gen")},
        },
    )
    add(
        evil("brs"),
        {
            "type": "branch_summary",
            "summary": evil("branch"),
            "fromId": evil("cmp"),
            "details": {"readFiles": [evil("/b.py")]},
        },
    )
    add(ids["u3"], {"message": {"role": "user", "content": evil("third") * 40}})
    add(
        ids["a4"],
        {
            "message": {
                "role": "assistant",
                "content": [{"type": "text", "text": evil("third answer") * 40}],
                "stopReason": "stop",
                "usage": usage,
                "provider": "p",
                "model": "m",
                "api": "a",
            }
        },
    )
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return ids


def run_on_pty(argv: list[str], env: dict[str, str], timeout: float = 60.0) -> bytes:
    """Run ``tui-compactor ARGV`` with stdin, stdout and stderr on a new pseudo-terminal."""
    master, slave = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "tui_compactor", *argv],
        stdin=subprocess.DEVNULL,
        stdout=slave,
        stderr=slave,
        env=env,
        close_fds=True,
    )
    os.close(slave)
    received = bytearray()
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.1)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # EIO: the child closed the terminal
                    break
                if not chunk:
                    break
                received += chunk
            elif process.poll() is not None:
                break
        else:
            pytest.fail(f"{argv} did not finish in {timeout}s")
    finally:
        os.close(master)
        process.wait(timeout=10)
    return bytes(received)


def test_hostile_session_covers_every_entry_type(tmp_path: Path) -> None:
    from tui_compactor.session.reader import load_session

    path = tmp_path / "evil.jsonl"
    hostile_session(path)
    session = load_session(path)
    types = {entry.type for entry in session.entries}
    assert {
        "message",
        "compaction",
        "branch_summary",
        "custom",
        "custom_message",
        "label",
        "session_info",
        "model_change",
        "thinking_level_change",
    } <= types
    assert any(t.startswith("mystery") for t in types)


COMMANDS = [
    ["lint"],
    ["lint", "--json"],
    ["tree"],
    ["tree", "--filter", "all"],
    ["tree", "--json"],
    ["inspect"],
    ["inspect", "--json"],
    ["plan", "--keep-recent", "200"],
    ["plan", "--json"],
    ["context"],
    ["context", "--json"],
    ["context", "--at", "{a1}"],
    ["serialize"],
    ["serialize", "--format", "pi"],
    ["export"],
    ["export", "--format", "json"],
    ["navigate", "--to", "{a1}", "--dry-run"],
    ["navigate", "--to", "{a1}", "--dry-run", "--json"],
    ["compact", "--dry-run", "--keep-recent", "200"],
    ["undo", "--dry-run"],
    ["navigate", "--to", "{a1}", "--leaf", "#999"],  # an error message quoting input
    ["context", "--at", "no\x1b]52;c;eA==\x07such"],  # an unknown id echoed back
]


@pytest.mark.parametrize("argv", COMMANDS, ids=lambda argv: " ".join(argv)[:40])
def test_no_escape_reaches_the_terminal(argv: list[str], tmp_path: Path) -> None:
    path = tmp_path / "evil.jsonl"
    ids = hostile_session(path)
    before = path.read_bytes()
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "config"), "COLUMNS": "100"}
    args = [arg.format(**ids) if "{" in arg else arg for arg in argv]
    output = run_on_pty([args[0], str(path), *args[1:]], env)
    assert output, f"{argv} printed nothing"
    assert b"Traceback" not in output, output.decode("utf-8", "replace")[-2000:]
    for needle in FORBIDDEN_BYTES:
        assert needle not in output, f"{needle!r} reached the terminal from {argv}"
    assert path.read_bytes() == before


def test_tree_shows_bidi_and_zero_width_visibly(tmp_path: Path) -> None:
    path = tmp_path / "evil.jsonl"
    hostile_session(path)
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "config")}
    output = run_on_pty(["context", str(path)], env).decode("utf-8")
    assert "⟨U+202E⟩" in output and "⟨U+200B⟩" in output
    assert "high" in output  # the thinking level is shown, sanitized


def test_zero_width_inside_emoji_and_words_stays() -> None:
    family = "👩\u200d👩\u200d👧"
    persian = "می\u200cخواهم"
    assert sanitize(family) == family
    assert sanitize(persian) == persian
    assert sanitize("pass\u200bword") == "pass⟨U+200B⟩word"
    assert sanitize("a\u200db") == "a⟨U+200D⟩b"
