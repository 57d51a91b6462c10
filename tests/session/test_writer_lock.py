"""The session lock: oh-my-pi's publish lock protocol, our sidecar flock, live-writer checks."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.support.processes import dead_pid, hold_publish_lock, python_child
from tui_compactor.session.agents import find_agents
from tui_compactor.session.lock import (
    LockBusy,
    SessionLock,
    detect_live_writer,
    gate_lock_path,
    pid_alive,
    publish_lock_path,
    read_publish_lock,
    session_lock,
)


@pytest.fixture()
def session_file(tmp_path: Path) -> Path:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"type":"session","version":3,"id":"x"}\n')
    return path


def test_lock_names_are_beside_the_real_file(tmp_path: Path, session_file: Path) -> None:
    link = tmp_path / "link.jsonl"
    link.symlink_to(session_file)
    assert publish_lock_path(link) == tmp_path / ".s.jsonl.lock"
    assert gate_lock_path(link) == tmp_path / ".s.jsonl.lock.os"


def test_acquire_writes_pid_and_millis_mode_0600_and_release_removes(session_file: Path) -> None:
    before_ms = int(time.time() * 1000)
    with session_lock(session_file) as held:
        assert held.held
        lock_path = publish_lock_path(session_file)
        pid_text, millis_text = lock_path.read_text().split(":")
        assert int(pid_text) == os.getpid()
        assert before_ms <= int(millis_text) <= int(time.time() * 1000)
        assert stat.S_IMODE(lock_path.stat().st_mode) == 0o600
        info = read_publish_lock(session_file)
        assert info is not None and info.alive and info.pid == os.getpid()
    assert not publish_lock_path(session_file).exists()
    # The flock sidecar stays (deleting flock files races), and is free again.
    assert gate_lock_path(session_file).exists()
    with session_lock(session_file):
        pass


def test_live_lock_in_another_process_is_refused_within_budget(
    tmp_path: Path, session_file: Path
) -> None:
    with hold_publish_lock(session_file, hold_seconds=5) as holder:
        started = time.monotonic()
        with pytest.raises(LockBusy) as refused:
            with session_lock(session_file, wait_seconds=0.3):
                pass
        elapsed = time.monotonic() - started
        assert refused.value.holder_pid == holder.pid
        assert f"pid {holder.pid}" in str(refused.value)
        assert elapsed < 2.0  # bounded wait (0.3 s budget), not until the holder exits
        # The live lock was never stolen.
        assert publish_lock_path(session_file).read_text().startswith(f"{holder.pid}:")
        live = detect_live_writer(session_file, quiet_seconds=0)
        assert live is not None and live.pid == holder.pid


def test_lock_freed_during_wait_is_taken(tmp_path: Path, session_file: Path) -> None:
    with hold_publish_lock(session_file, hold_seconds=0.2):
        with session_lock(session_file, wait_seconds=5) as held:
            assert publish_lock_path(session_file).read_text().startswith(f"{os.getpid()}:")
            assert held.took_over_stale is None


def test_stale_lock_with_dead_pid_is_taken_over(session_file: Path) -> None:
    dead = dead_pid()
    assert not pid_alive(dead)
    lock_path = publish_lock_path(session_file)
    lock_path.write_text(f"{dead}:{int(time.time() * 1000)}")
    with session_lock(session_file, wait_seconds=0.3) as held:
        assert held.took_over_stale is not None and held.took_over_stale.pid == dead
        assert lock_path.read_text().startswith(f"{os.getpid()}:")
    assert not lock_path.exists()


def test_contentless_lock_is_stale_only_after_the_budget(session_file: Path) -> None:
    lock_path = publish_lock_path(session_file)
    lock_path.write_bytes(b"")
    # Fresh and empty: a writer may be between create and write. Not taken.
    with pytest.raises(LockBusy):
        with session_lock(session_file, wait_seconds=0.1):
            pass
    assert lock_path.read_bytes() == b""
    old = time.time() - 60  # well past CONTENTLESS_STALE_SECONDS
    os.utime(lock_path, (old, old))
    with session_lock(session_file, wait_seconds=0.3) as held:
        assert held.took_over_stale is not None


def test_sidecar_flock_held_elsewhere_is_refused(session_file: Path) -> None:
    first = SessionLock(session_file, wait_seconds=0.2)
    first.acquire()
    try:
        code = textwrap.dedent(
            f"""
            import sys
            from tui_compactor.session.lock import LockBusy, session_lock
            try:
                with session_lock({str(session_file)!r}, wait_seconds=0.2):
                    sys.exit(0)
            except LockBusy:
                sys.exit(3)
            """
        )
        result = subprocess.run([sys.executable, "-c", code], timeout=30)
        assert result.returncode == 3
    finally:
        first.release()


def test_symlinked_lock_file_is_never_followed(tmp_path: Path, session_file: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    publish_lock_path(session_file).symlink_to(victim)
    with pytest.raises(LockBusy):
        with session_lock(session_file, wait_seconds=0.1):
            pass
    assert victim.read_text() == "keep me"


def test_growing_file_is_a_live_writer(session_file: Path) -> None:
    code = textwrap.dedent(
        f"""
        import sys, time
        for i in range(200):
            with open({str(session_file)!r}, "a") as f:
                f.write('{{"type":"custom","id":"g%07d","parentId":null}}\\n' % i)
            if i == 0:
                sys.stdout.write("started\\n")
                sys.stdout.flush()
            time.sleep(0.01)
        """
    )
    with python_child(code, b"started\n"):
        live = detect_live_writer(session_file, quiet_seconds=0.2)
        assert live is not None and "quiet window" in live.reason
    assert detect_live_writer(session_file, quiet_seconds=0.05) is None


def test_process_holding_file_open_for_writing_is_seen(session_file: Path) -> None:
    if not Path("/proc/self/fdinfo").is_dir():
        pytest.skip("no /proc on this system")
    code = textwrap.dedent(
        f"""
        import os, sys, time
        fd = os.open({str(session_file)!r}, os.O_WRONLY | os.O_APPEND)
        sys.stdout.write("ready\\n")
        sys.stdout.flush()
        time.sleep(10)
        """
    )
    with python_child(code) as holder:
        [found] = find_agents(session_file)
        assert found.pid == holder.pid and "open for writing" in found.evidence
    assert find_agents(session_file) == []


def test_omp_style_exclusive_create_fails_while_we_hold_the_lock(session_file: Path) -> None:
    code = textwrap.dedent(
        f"""
        import os, sys
        try:
            os.open({str(publish_lock_path(session_file))!r},
                    os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            sys.exit(3)
        sys.exit(0)
        """
    )
    with session_lock(session_file):
        assert subprocess.run([sys.executable, "-c", code], timeout=30).returncode == 3
    assert subprocess.run([sys.executable, "-c", code], timeout=30).returncode == 0


def test_second_thread_of_this_process_waits_for_the_lock(session_file: Path) -> None:
    import threading

    order: list[str] = []
    first = SessionLock(session_file)
    first.acquire()

    def second() -> None:
        with session_lock(session_file, wait_seconds=5):
            order.append("second")

    thread = threading.Thread(target=second)
    thread.start()
    order.append("first-release")  # the second thread cannot have the lock before this
    first.release()
    thread.join(timeout=10)
    assert order == ["first-release", "second"]
