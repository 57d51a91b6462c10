"""Fork server for the kill -9 crash test (``tests/session/test_writer_crash.py``).

Started once as a fresh, single-threaded interpreter with the writer already imported, so each
of the test's 200 writer processes starts in milliseconds (a fork) instead of a quarter of a
second (a new interpreter), and no fork happens inside the multi-threaded test runner.

Protocol on stdin/stdout, one line each:
``run PATH ACKFILE SEED`` -> ``pid N`` (the writer is running), then ``done STATUS`` once it
has exited (normally, or killed by the test). ``quit`` ends the server.

The writer child loads the session, seals a torn tail left by an earlier kill (as a user would
agree to), then appends records of random size, appending ``ack <id>`` to ACKFILE after each
append returns (after its fsync). It stops after 60 appends.
"""

from __future__ import annotations

import os
import random
import sys

from tui_compactor.session.reader import load_session
from tui_compactor.session.writer import AppendRefused, append_entry, seal_tail

RECORD_SIZES = [100, 2_000, 30_000, 400_000, 1_500_000]
"""Pad sizes: the large ones give the kernel a chance to stop a write part-way."""


def writer_loop(path: str, ack_path: str, seed: int) -> int:
    """Append until killed (or 60 appends); returns the exit status."""
    ack_fd = os.open(ack_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        rng = random.Random(seed)
        session = load_session(path)
        if session.snapshot.torn_tail:
            seal_tail(session, quiet_seconds=0)
            session = load_session(path)
        for number in range(60):
            record = {
                "type": "custom",
                "customType": "crash-test",
                "data": {"n": number, "pad": "x" * rng.choice(RECORD_SIZES)},
            }
            result = append_entry(session, record, parent_index=session.leaf, quiet_seconds=0)
            os.write(ack_fd, f"ack {result.ids[0]}\n".encode())
        return 0
    except AppendRefused as refused:
        os.write(ack_fd, f"refused {refused.code} {refused.reason}\n".encode())
        return 0
    except BaseException as error:  # reported to the test, which fails
        os.write(ack_fd, f"error {type(error).__name__}: {error}\n".encode())
        return 1


def main() -> int:
    """Serve ``run`` requests until ``quit`` or end of input."""
    for line in sys.stdin:
        words = line.split()
        if not words or words[0] == "quit":
            break
        _, path, ack_path, seed = words
        pid = os.fork()
        if pid == 0:
            os._exit(writer_loop(path, ack_path, int(seed)))
        sys.stdout.write(f"pid {pid}\n")
        sys.stdout.flush()
        _, status = os.waitpid(pid, 0)
        sys.stdout.write(f"done {status}\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
