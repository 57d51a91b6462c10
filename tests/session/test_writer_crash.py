"""Crash test: kill -9 a process that appends in a loop, at random points, 200 times.

A forked child loads the session, seals a torn tail left by an earlier kill (as a user would
agree to), then appends records of random size (some large enough that the kernel can stop
the write part-way), writing ``ack <id>`` to a pipe after each append returns (after fsync).
The parent sends SIGKILL after a random delay, then checks: the bytes before the child
started are unchanged, every acked record is present and whole, every line parses except at
most one torn record of ours at the very end, and the file still loads.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import time
from pathlib import Path

from tui_compactor.session.reader import load_session
from tui_compactor.session.writer import AppendRefused, append_entry, seal_tail

BASE = Path(__file__).resolve().parents[1] / "fixtures" / "bad" / "blank-lines-interspersed.jsonl"
ITERATIONS = 200
ROTATE_EVERY = 25
"""Start from a fresh copy now and then so the file (and each reload) stays small."""


def _child(path: Path, ack_fd: int, seed: int) -> None:
    """Append records until killed; never returns."""
    status = 0
    try:
        rng = random.Random(seed)
        session = load_session(path)
        if session.snapshot.torn_tail:
            seal_tail(session, quiet_seconds=0)
            session = load_session(path)
        for n in range(60):
            size = rng.choice([100, 2_000, 30_000, 400_000, 1_500_000])
            record = {
                "type": "custom",
                "customType": "crash-test",
                "data": {"n": n, "pad": "x" * size},
            }
            result = append_entry(session, record, parent_index=session.leaf, quiet_seconds=0)
            os.write(ack_fd, f"ack {result.ids[0]}\n".encode())
    except AppendRefused as refused:
        os.write(ack_fd, f"refused {refused.code} {refused.reason}\n".encode())
    except BaseException as error:  # report it to the parent, which fails the test
        os.write(ack_fd, f"error {type(error).__name__}: {error}\n".encode())
        status = 1
    finally:
        os._exit(status)


def _read_all(fd: int) -> bytes:
    chunks = []
    while True:
        chunk = os.read(fd, 65536)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


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
    known_torn: set[bytes] = set()
    acks_total = torn_count = 0
    refusals: list[str] = []
    output_samples: list[str] = []
    started = time.monotonic()
    for iteration in range(ITERATIONS):
        if iteration % ROTATE_EVERY == 0:
            shutil.copyfile(BASE, path)
            known_torn.clear()
        before = path.read_bytes()
        read_fd, write_fd = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - runs in the child
            os.close(read_fd)
            _child(path, write_fd, iteration)
        os.close(write_fd)
        # Kill at a random point: often before the first ack (while loading or locking),
        # otherwise a few milliseconds into the stream of appends.
        time.sleep(rng.uniform(0.0, 0.12))
        os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
        output = _read_all(read_fd).decode()
        os.close(read_fd)
        if os.WIFEXITED(status):
            assert os.WEXITSTATUS(status) == 0, f"child failed: {output}"
        acked = [line.split()[1] for line in output.splitlines() if line.startswith("ack ")]
        refusals += [line.split()[1] for line in output.splitlines() if line.startswith("refused")]
        acks_total += len(acked)
        output_samples += [line for line in output.splitlines() if line.startswith("refused")][:1]
        tail = _check_file(path.read_bytes(), before, acked, known_torn)
        if tail:
            torn_count += 1
            known_torn.add(tail)
        session = load_session(path)  # still loads, names the torn tail
        assert session.snapshot.torn_tail == bool(tail)
        assert set(acked) <= {entry.id for entry in session.entries}
    elapsed = time.monotonic() - started
    print(
        f"crash test: {ITERATIONS} kills in {elapsed:.1f} s, {acks_total} acked appends, "
        f"{torn_count} torn tails (all ours, sealed next time), {len(refusals)} refusals"
    )
    if output_samples:
        print("refusals (a lock left by a killed writer, judged by the stale rule):")
        print("\n".join(output_samples[:3]))
    assert acks_total > ITERATIONS // 4  # the kills really landed among appends
    assert elapsed < 120
