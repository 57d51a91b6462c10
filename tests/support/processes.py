"""Other processes for the writer tests: a pid that is gone, a Python child that says when it
is ready, and a second process holding the publish lock the oh-my-pi way."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from tui_compactor.session.lock import publish_lock_path


def dead_pid() -> int:
    """A pid that just exited (so it is not alive)."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def python_child(code: str, ready: bytes = b"ready\n") -> subprocess.Popen[bytes]:
    """Run ``code`` (dedented) in a new Python process and return once its first line of
    output is ``ready``; the caller kills it."""
    child = subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)], stdout=subprocess.PIPE)
    assert child.stdout is not None
    if child.stdout.readline() != ready:
        child.kill()
        child.wait()
        raise AssertionError(f"the child process did not say {ready!r}")
    return child


def hold_publish_lock(session: Path, hold_seconds: float) -> subprocess.Popen[bytes]:
    """A second process that takes the publish lock of ``session`` the oh-my-pi way (its pid
    and the time in milliseconds, created exclusively) and holds it for ``hold_seconds``."""
    lock = publish_lock_path(session)
    return python_child(
        f"""
        import os, sys, time
        fd = os.open({str(lock)!r}, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.write(fd, f"{{os.getpid()}}:{{int(time.time() * 1000)}}".encode())
        os.close(fd)
        sys.stdout.write("ready\\n")
        sys.stdout.flush()
        time.sleep({hold_seconds})
        os.unlink({str(lock)!r})
        """
    )
