"""Crash test: kill -9 a process that appends in a loop, at random points, 200 times.

The writer processes are forked by ``tests/support/crash_zygote.py`` (a separate, single-
threaded interpreter). Each one loads the session, seals a torn tail left by an earlier kill
(as a user would agree to), then appends records of random size (some large enough that the
kernel can stop the write part-way) and writes ``ack <id>`` after each append returns (after
fsync). The test sends SIGKILL after a random delay, then checks: the bytes before the writer
started are unchanged, every acked record is present and whole, every line parses except at
most one torn record of ours at the very end, and the file still loads.

Half of the kills count their delay from the fork (they often land while the writer loads or
locks), the other half from the writer's first ack (they land in its stream of appends however
slowly a loaded machine schedules it). No step may hang: each writer must be reaped within
``STEP_DEADLINE_SECONDS``.
"""

from __future__ import annotations

import json
import os
import random
import select
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import IO

from tui_compactor.session.reader import load_session

ROOT = Path(__file__).resolve().parents[2]
BASE = ROOT / "tests" / "fixtures" / "bad" / "blank-lines-interspersed.jsonl"
ZYGOTE = ROOT / "tests" / "support" / "crash_zygote.py"
ITERATIONS = 200
ROTATE_EVERY = 25
"""Start from a fresh copy now and then so the file (and each reload) stays small."""
STEP_DEADLINE_SECONDS = 60.0
"""A writer (or the fork server) that has not answered by then is hung: the test fails."""


def _read_reply(stream: IO[bytes], what: str) -> list[str]:
    """One line from the fork server, failing (never blocking forever) past the deadline. Reads
    its unbuffered pipe a byte at a time, so no line waits in a buffer ``select`` cannot see."""
    deadline = time.monotonic() + STEP_DEADLINE_SECONDS
    line = b""
    while not line.endswith(b"\n"):
        ready, _, _ = select.select([stream], [], [], max(0.0, deadline - time.monotonic()))
        assert ready, f"the fork server gave no {what} within {STEP_DEADLINE_SECONDS:.0f} s"
        byte = os.read(stream.fileno(), 1)
        assert byte, f"the fork server exited before its {what}"
        line += byte
    return line.decode().split()


def _wait_for_first_ack(ack_path: Path) -> None:
    """Poll until the writer has acked an append, or has stopped (refused, failed, done)."""
    deadline = time.monotonic() + STEP_DEADLINE_SECONDS
    while time.monotonic() < deadline:
        if ack_path.stat().st_size:
            return
        time.sleep(0.002)  # polling interval, not a wait for work
    raise AssertionError(f"the writer wrote nothing within {STEP_DEADLINE_SECONDS:.0f} s")


def _check_file(data: bytes, before: bytes, acked: list[str], known_torn: set[bytes]) -> bytes:
    """Assert the crash guarantees; return the torn tail fragment (b"" if none)."""
    assert data[: len(before)] == before, "bytes before the append changed"
    lines = data.split(b"\n")
    complete, tail = lines[:-1], lines[-1]
    ids = set()
    for line in complete:
        if not line.strip() or line in known_torn:
            continue
        record = json.loads(line)  # raises on a fused or torn line in the middle
        ids.add(record.get("id"))
    missing = [entry_id for entry_id in acked if entry_id not in ids]
    assert not missing, f"acked records lost: {missing}"
    if tail:
        assert tail.startswith(b'{"type":"custom"'), "a torn tail that is not ours"
    return tail


def test_kill_9_during_appends(tmp_path: Path) -> None:
    rng = random.Random(20261129)
    path = tmp_path / "crash.jsonl"
    ack_path = tmp_path / "acks.txt"
    known_torn: set[bytes] = set()
    acks_total = torn_count = kills_after_an_ack = 0
    refusals: list[str] = []
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    zygote = subprocess.Popen(
        [sys.executable, str(ZYGOTE)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        bufsize=0,
        env=env,
        cwd=ROOT,
    )
    assert zygote.stdin is not None and zygote.stdout is not None
    started = time.monotonic()
    try:
        for iteration in range(ITERATIONS):
            if iteration % ROTATE_EVERY == 0:
                shutil.copyfile(BASE, path)
                known_torn.clear()
            before = path.read_bytes()
            ack_path.write_bytes(b"")
            zygote.stdin.write(f"run {path} {ack_path} {iteration}\n".encode())
            reply = _read_reply(zygote.stdout, "pid")
            assert reply and reply[0] == "pid", f"fork server: {reply}"
            # Kill at a random point: counted from the fork, often while loading or locking;
            # counted from the first ack, a few milliseconds into the stream of appends.
            if iteration % 2:
                _wait_for_first_ack(ack_path)
                time.sleep(rng.uniform(0.0, 0.06))
            else:
                time.sleep(rng.uniform(0.0, 0.12))
            try:
                os.kill(int(reply[1]), signal.SIGKILL)
            except ProcessLookupError:
                pass  # it had already finished its 60 appends
            done = _read_reply(zygote.stdout, "exit status")
            assert done and done[0] == "done"
            status = int(done[1])
            output = ack_path.read_text()
            assert not os.WIFEXITED(status) or os.WEXITSTATUS(status) == 0, output
            acked = [line.split()[1] for line in output.splitlines() if line.startswith("ack ")]
            refusals += [line for line in output.splitlines() if line.startswith("refused")]
            acks_total += len(acked)
            kills_after_an_ack += bool(acked)
            tail = _check_file(path.read_bytes(), before, acked, known_torn)
            if tail:
                torn_count += 1
                known_torn.add(tail)
            session = load_session(path)  # still loads, and names the torn tail
            assert session.snapshot.torn_tail == bool(tail)
            assert set(acked) <= {entry.id for entry in session.entries}
    finally:
        zygote.stdin.write(b"quit\n")
        zygote.stdin.close()
        zygote.wait(timeout=30)
    elapsed = time.monotonic() - started
    print(
        f"crash test: {ITERATIONS} kills in {elapsed:.1f} s, {acks_total} acked appends, "
        f"{kills_after_an_ack} kills after at least one ack, {torn_count} torn tails (all ours, "
        f"sealed next time), {len(refusals)} refusals"
    )
    if refusals:
        print("\n".join(refusals[:3]))
    assert kills_after_an_ack >= 10  # many kills really landed in a stream of appends


def test_power_loss_states_of_our_record_recover_by_seal(tmp_path: Path) -> None:
    """Every state a power loss can leave our unsynced record in (cut at any byte, or the
    grown file filled with zeros before the data arrived) loads with all earlier entries,
    refuses appends until sealed, and appends cleanly after the seal."""
    from tui_compactor.session.writer import (
        AppendRefused,
        append_entry,
        encode_record,
        make_leaf_marker,
        seal_tail,
    )

    original = BASE.read_bytes()
    base_session = load_session(BASE)
    base_ids = [entry.id for entry in base_session.entries]
    record = encode_record(
        {
            "type": "custom",
            "id": "ab12cd34",
            "parentId": base_ids[-1],
            "timestamp": "2025-12-03T20:00:00.000Z",
            "customType": "x",
            "data": {"t": "\u00e9" * 40},
        }
    )
    states = [record[:cut] for cut in range(1, len(record) - 1, 7)]  # never the whole JSON
    states += [b"\0" * size for size in (1, 17, len(record))]
    states += [record[:20] + b"\0" * 30]
    for number, tail in enumerate(states):
        path = tmp_path / f"p{number}.jsonl"
        path.write_bytes(original + tail)
        session = load_session(path)
        assert [entry.id for entry in session.entries][: len(base_ids)] == base_ids
        assert session.snapshot.torn_tail, tail
        try:
            append_entry(session, make_leaf_marker(), parent_index=session.leaf, quiet_seconds=0)
        except AppendRefused as refused:
            assert refused.code == "A2"
        else:
            raise AssertionError(f"appended after a torn tail {tail!r}")
        seal_tail(session, quiet_seconds=0)
        session = load_session(path)
        result = append_entry(
            session, make_leaf_marker(), parent_index=session.leaf, quiet_seconds=0
        )
        data = path.read_bytes()
        assert data.startswith(original + tail + b"\n")
        assert json.loads(data.split(b"\n")[-2])["id"] == result.ids[0]
