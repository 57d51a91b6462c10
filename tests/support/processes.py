"""Other processes for the writer tests: a pid that is gone, a Python child that says when it
is ready, and a second process holding the publish lock the oh-my-pi way (the last two are
context managers: leaving one ends the process and closes its pipe)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

from tui_compactor.session.lock import publish_lock_path


def dead_pid() -> int:
    """A pid that just exited (so it is not alive)."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


@contextmanager
def python_child(code: str, ready: bytes = b"ready\n") -> Iterator[subprocess.Popen[bytes]]:
    """Run ``code`` (dedented) in a new Python process, entered once its first line of output
    is ``ready``. On leaving, the child is killed, waited for and its pipe closed: a pipe left
    open is a ``ResourceWarning`` when the ``Popen`` is collected, in whichever test runs
    then."""
    argv = [sys.executable, "-c", textwrap.dedent(code)]
    with subprocess.Popen(argv, stdout=subprocess.PIPE) as child:  # closes the pipe, waits
        try:
            assert child.stdout is not None
            if child.stdout.readline() != ready:
                raise AssertionError(f"the child process did not say {ready!r}")
            yield child
        finally:
            child.kill()


def hold_publish_lock(
    session: Path, hold_seconds: float
) -> AbstractContextManager[subprocess.Popen[bytes]]:
    """A second process that takes the publish lock of ``session`` the oh-my-pi way (its pid
    and the time in milliseconds, created exclusively) and holds it for ``hold_seconds``
    (``python_child``: killed on leaving)."""
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
