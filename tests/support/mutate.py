"""Mutate session files and run the read-only commands on them (fuzzing, tests and benchmark).

``mutate(data, rng)`` applies a few random edits to a session file's bytes: byte flips,
hostile insertions (NUL, invalid UTF-8, bidi, escapes, ``1e400``), truncation, line deletion,
duplication and reordering, and JSON-aware edits of one record (a field replaced by a value of
the wrong type, a non-finite or huge number, a lone surrogate, a deep nesting, another entry's
id, its own id as parent...). ``run_command(argv)`` runs one CLI command in this process and
reports what a user would call a failure: a traceback, a hang, or output that is not text.
"""

from __future__ import annotations

import contextlib
import io
import json
import random
import signal
import traceback
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
BAD = ROOT / "tests" / "fixtures" / "bad"
SEED_SIZE_LIMIT = 64 * 1024

READ_COMMANDS: list[list[str]] = [
    ["lint"],
    ["lint", "--json"],
    ["plan"],
    ["plan", "--json"],
    ["context"],
    ["context", "--json"],
    ["inspect"],
    ["inspect", "--json"],
    ["tree"],
    ["tree", "--json"],
]
"""The commands the fuzzer runs; none of them may write."""

_INSERTS = [
    b"\x00",
    b"\xff",
    b"\xc3",
    b"\n",
    b"\r",
    b"\r\n",
    b"{",
    b"}",
    b"[",
    b'"',
    b"\\",
    b"\\u",
    b"\\ud800",
    b"\xe2\x80\xae",
    b"\xe2\x80\x8b",
    b"\x1b[2J",
    b"\x1b]52;c;eA==\x07",
    b"\xc2\x9b",
    b"1e400",
    b"-1e400",
    b"NaN",
    b"Infinity",
    b"null",
    b",",
    b":",
    b" ",
    b"\xef\xbb\xbf",
]
_PLACEHOLDER = "@@NUMBER@@"
_DEEP_PLACEHOLDER = "@@DEEP@@"
_RAW_NUMBERS = [
    "1e400",
    "-1e400",
    "1" + "0" * 400,
    "-0",
    "1e-400",
    "123456789012345678901234567890",
]


def seed_files(limit: int = SEED_SIZE_LIMIT) -> list[Path]:
    """The corpus of strange sessions that the mutants start from (small ones only)."""
    return sorted(path for path in BAD.glob("*.jsonl") if path.stat().st_size <= limit)


def _weird_value(rng: random.Random, ids: list[str], own_id: Any) -> Any:
    choice = rng.randrange(18)
    if choice == 0:
        return None
    if choice == 1:
        return rng.choice([True, False])
    if choice == 2:
        return rng.choice([0, -1, 2**63, 2**70, -(2**70), 1.5])
    if choice == 3:
        return _PLACEHOLDER  # replaced by a raw number json.dumps cannot write
    if choice == 4:
        return ""
    if choice == 5:
        return "\ud800 half an emoji \udc00"
    if choice == 6:
        return "x" * rng.choice([1000, 100_000])
    if choice == 7:
        return []
    if choice == 8:
        return {}
    if choice == 9:
        return _DEEP_PLACEHOLDER  # replaced by nesting json.dumps cannot write
    if choice == 10 and ids:
        return rng.choice(ids)
    if choice == 11:
        return own_id
    if choice == 12:
        return "root"
    if choice == 13:
        return "\x1b]0;title\x07\x1b[2J\u202e\u200b[bold]x[/bold]"
    if choice == 14:
        return rng.choice(
            [
                "message",
                "compaction",
                "branch_summary",
                "label",
                "custom",
                "session",
                "title",
                "model_change",
                "thinking_level_change",
            ]
        )
    if choice == 15:
        return rng.choice(
            [
                "user",
                "assistant",
                "toolResult",
                "bashExecution",
                "custom",
                "branchSummary",
                "compactionSummary",
                "hookMessage",
            ]
        )
    if choice == 16:
        return [{"type": rng.choice(["text", "image", "toolCall", "thinking", "zzz"])}]
    return rng.random()


def _paths(value: Any, prefix: tuple[Any, ...] = (), depth: int = 0) -> Iterator[tuple[Any, ...]]:
    """Every key/index path inside ``value`` (bounded depth)."""
    if depth > 6:
        return
    if isinstance(value, dict):
        for key, item in value.items():
            yield (*prefix, key)
            yield from _paths(item, (*prefix, key), depth + 1)
    elif isinstance(value, list):
        for index, item in enumerate(value[:20]):
            yield (*prefix, index)
            yield from _paths(item, (*prefix, index), depth + 1)


def _edit_record(line: bytes, rng: random.Random, ids: list[str]) -> bytes:
    try:
        record = json.loads(line)
    except (ValueError, RecursionError):
        return line
    if not isinstance(record, dict):
        return line
    paths = list(_paths(record))
    if not paths:
        return line
    target = rng.choice(paths)
    holder: Any = record
    for key in target[:-1]:
        holder = holder[key]
    last = target[-1]
    if isinstance(holder, dict) and rng.random() < 0.2:
        del holder[last]
    else:
        holder[last] = _weird_value(rng, ids, record.get("id"))
    text = json.dumps(record, ensure_ascii=rng.random() < 0.5)
    if _PLACEHOLDER in text:
        text = text.replace(f'"{_PLACEHOLDER}"', rng.choice(_RAW_NUMBERS))
    if _DEEP_PLACEHOLDER in text:
        depth = rng.choice([50, 1000, 20_000])
        opener, closer = ("[", "]") if rng.random() < 0.5 else ('{"d":', "}")
        text = text.replace(f'"{_DEEP_PLACEHOLDER}"', opener * depth + '"deep"' + closer * depth)
    return text.encode("utf-8", "surrogatepass")


def _ids(lines: list[bytes]) -> list[str]:
    found = []
    for line in lines:
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(record, dict) and isinstance(record.get("id"), str):
            found.append(record["id"])
    return found


def mutate(data: bytes, rng: random.Random, edits: int | None = None) -> bytes:
    """``data`` with 1-4 random edits (see the module doc)."""
    for _ in range(edits if edits is not None else rng.randint(1, 4)):
        lines = data.split(b"\n")
        kind = rng.randrange(9)
        if kind == 0 and data:
            at = rng.randrange(len(data))
            data = data[:at] + bytes([rng.randrange(256)]) + data[at + 1 :]
        elif kind == 1:
            at = rng.randrange(len(data) + 1)
            data = data[:at] + rng.choice(_INSERTS) + data[at:]
        elif kind == 2 and data:
            data = data[: rng.randrange(len(data))]
        elif kind == 3 and len(lines) > 1:
            del lines[rng.randrange(len(lines))]
            data = b"\n".join(lines)
        elif kind == 4 and lines:
            at = rng.randrange(len(lines))
            lines.insert(rng.randrange(len(lines) + 1), lines[at])
            data = b"\n".join(lines)
        elif kind == 5 and len(lines) > 1:
            a, b = rng.randrange(len(lines)), rng.randrange(len(lines))
            lines[a], lines[b] = lines[b], lines[a]
            data = b"\n".join(lines)
        elif lines:  # the JSON-aware edits are the most productive: weight them up
            at = rng.randrange(len(lines))
            lines[at] = _edit_record(lines[at], rng, _ids(lines))
            data = b"\n".join(lines)
    return data


@dataclass
class Outcome:
    """What one command did with one file."""

    argv: list[str]
    status: int | None
    problem: str | None
    """None when the run was fine; else what went wrong (a traceback, a hang...)."""
    seconds: float = 0.0


class _Hang(Exception):
    pass


def _alarm(signum: int, frame: Any) -> None:
    raise _Hang


def run_command(argv: list[str], timeout: int = 20) -> Outcome:
    """Run ``tui-compactor ARGV`` in this process; a traceback or a hang is a problem."""
    import time

    from tui_compactor.cli import main

    out, err = io.StringIO(), io.StringIO()
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(timeout)
    started = time.perf_counter()
    status: int | None = None
    problem: str | None = None
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = main(argv)
    except _Hang:
        problem = f"no answer within {timeout}s"
    except SystemExit as exit_:
        status = exit_.code if isinstance(exit_.code, int) else 2
    except BaseException:  # noqa: BLE001 - exactly what the fuzzer looks for
        problem = traceback.format_exc()
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    seconds = time.perf_counter() - started
    if problem is None and "Traceback" in err.getvalue():
        problem = err.getvalue()
    if problem is None:
        for stream in (out.getvalue(), err.getvalue()):
            try:
                stream.encode("utf-8")
            except UnicodeEncodeError as error:
                problem = f"output is not printable: {error}"
            if "\x1b" in stream:
                problem = "an escape sequence reached the output"
    return Outcome(argv, status, problem, seconds)


def check_file(path: Path, commands: list[list[str]] = READ_COMMANDS) -> list[Outcome]:
    """Run every command on ``path``; problems include a changed input file."""
    before = path.read_bytes()
    outcomes = []
    for command in commands:
        outcome = run_command([command[0], str(path), *command[1:]])
        if outcome.problem is None and path.read_bytes() != before:
            outcome.problem = "the input file changed"
        outcomes.append(outcome)
    return outcomes
