"""Advisory locking and live-writer detection for appending to a session file.

Two locks are taken, in this order, and released in reverse:

1. Our own ``flock`` on the sidecar ``.<basename>.lock.os`` (the name oh-my-pi gives its
   OS-level gate). ``flock`` belongs to the open file description, so closing some other
   descriptor of the session in this process never drops it. The sidecar is never deleted:
   deleting a flock file races with a process that has just opened it.
2. oh-my-pi's publish lock ``.<basename>.lock``: created exclusively (``O_EXCL`` semantics, via
   ``link`` of a private 0600 temp file so it is never seen empty), holding
   ``pid:milliseconds``, removed on release.

Both waits are bounded (about 500 ms by default, like oh-my-pi) and fail closed with
:class:`LockBusy`. A publish lock whose pid is alive is never taken over.

Stale-lock rule (documented, and the only way a foreign lock is ever removed): while we hold
the sidecar ``flock``, an existing ``.<basename>.lock`` is stale when

* it names a pid on this host that no longer exists (``kill(pid, 0)`` fails with ``ESRCH``), or
* it holds no parseable ``pid:ms`` content and its mtime is older than
  :data:`CONTENTLESS_STALE_SECONDS` (a writer that crashed between creating and filling it;
  oh-my-pi uses its 500 ms wait budget, we allow a wider margin).

A stale lock is removed only if it is still the same file (inode and content) we judged, and
then created anew by us with ``O_EXCL``; losing that race means waiting again. ``EPERM`` from
``kill`` means the pid exists under another user: alive.

Paths are resolved (symlinks followed) before lock names are derived, so two names of one
file take the same lock. Reading a session never calls anything here.
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

DEFAULT_WAIT_SECONDS = 0.5
"""Bounded wait for each lock, as oh-my-pi's publish lock."""
POLL_SECONDS = 0.02
"""Sleep between lock attempts."""
CONTENTLESS_STALE_SECONDS = 2.0
"""Age after which a lock file without ``pid:ms`` content counts as abandoned."""
DEFAULT_QUIET_SECONDS = 0.3
"""How long the file must stay unchanged before we believe no one is writing it."""


class LockBusy(Exception):
    """The session's lock is held by another live process (or could not be taken in time)."""

    def __init__(self, message: str, *, holder_pid: int | None = None) -> None:
        super().__init__(message)
        self.holder_pid = holder_pid


@dataclass(frozen=True, slots=True)
class LockInfo:
    """What an oh-my-pi publish lock file says about its holder."""

    path: Path
    pid: int | None
    """The pid written in the lock, None if the content is not ``pid:ms``."""
    millis: int | None
    alive: bool
    """True when the pid exists (or the content is unreadable but the file is fresh)."""
    age_seconds: float


@dataclass(frozen=True, slots=True)
class LiveWriter:
    """Evidence that another program is writing the session right now."""

    reason: str
    """Human sentence: what was seen."""
    pid: int | None = None


def resolved_session_path(session_path: str | os.PathLike[str]) -> Path:
    """The real path of the session file (symlinks resolved), used to name lock files."""
    return Path(os.path.realpath(os.fspath(session_path)))


def publish_lock_path(session_path: str | os.PathLike[str]) -> Path:
    """oh-my-pi's publish lock beside the session: ``.<basename>.lock``."""
    real = resolved_session_path(session_path)
    return real.with_name(f".{real.name}.lock")


def gate_lock_path(session_path: str | os.PathLike[str]) -> Path:
    """The sidecar we ``flock``: ``.<basename>.lock.os``."""
    real = resolved_session_path(session_path)
    return real.with_name(f".{real.name}.lock.os")


def pid_alive(pid: int) -> bool:
    """Whether a process with this pid exists on this host (EPERM counts as alive)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError as error:
        return error.errno != errno.ESRCH
    return True


def _parse_lock_content(content: bytes) -> tuple[int | None, int | None]:
    """``b"1234:1700000000000"`` -> (1234, 1700000000000); anything else -> (None, None)."""
    text = content.decode("ascii", errors="replace").strip()
    pid_text, sep, millis_text = text.partition(":")
    if not sep or not pid_text.isdigit() or not millis_text.isdigit():
        return None, None
    return int(pid_text), int(millis_text)


def read_publish_lock(
    session_path: str | os.PathLike[str], *, stale_after: float = CONTENTLESS_STALE_SECONDS
) -> LockInfo | None:
    """Describe the current ``.<basename>.lock``, or None when there is none."""
    lock_path = publish_lock_path(session_path)
    try:
        fd = os.open(lock_path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError:
        # A symlink or unreadable lock: someone else's, treat as held and fresh.
        return LockInfo(lock_path, None, None, True, 0.0)
    try:
        info = os.fstat(fd)
        content = os.read(fd, 128)
    finally:
        os.close(fd)
    pid, millis = _parse_lock_content(content)
    age = max(0.0, time.time() - info.st_mtime)
    if pid is not None:
        alive = pid_alive(pid)
    else:
        alive = age <= stale_after
    return LockInfo(lock_path, pid, millis, alive, age)


class SessionLock:
    """Both locks for one append; use :func:`session_lock` as a context manager."""

    def __init__(
        self,
        session_path: str | os.PathLike[str],
        *,
        wait_seconds: float = DEFAULT_WAIT_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.session_path = resolved_session_path(session_path)
        self.publish_path = publish_lock_path(self.session_path)
        self.gate_path = gate_lock_path(self.session_path)
        self.wait_seconds = wait_seconds
        self._clock = clock
        self._gate_fd: int | None = None
        self._publish_identity: tuple[int, int] | None = None
        self.took_over_stale: LockInfo | None = None
        """Set when acquiring removed a stale lock (dead pid); shown to the user."""

    # -- acquire -----------------------------------------------------------------------

    def acquire(self) -> None:
        """Take the sidecar flock, then the publish lock; raise LockBusy within the budget."""
        deadline = self._clock() + self.wait_seconds
        self._acquire_gate(deadline)
        try:
            self._acquire_publish(deadline)
        except BaseException:
            self._release_gate()
            raise

    def _acquire_gate(self, deadline: float) -> None:
        fd = os.open(
            self.gate_path,
            os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC,
            0o600,
        )
        try:
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if self._clock() >= deadline:
                        raise LockBusy(
                            f"{self.session_path.name}: another tui-compactor (or oh-my-pi) "
                            f"holds {self.gate_path.name}; try again when it has finished"
                        ) from None
                    time.sleep(POLL_SECONDS)
        except BaseException:
            os.close(fd)
            raise
        self._gate_fd = fd

    def _acquire_publish(self, deadline: float) -> None:
        content = f"{os.getpid()}:{int(time.time() * 1000)}".encode("ascii")
        while True:
            try:
                self._create_publish_lock(content)
                return
            except FileExistsError:
                info = read_publish_lock(self.session_path)
                if info is not None and not info.alive and self._remove_if_unchanged(info):
                    self.took_over_stale = info
                    continue
                if self._clock() >= deadline:
                    holder = info.pid if info is not None else None
                    who = f"pid {holder}" if holder is not None else "another process"
                    raise LockBusy(
                        f"{self.session_path.name} is locked by {who} "
                        f"({self.publish_path.name}); the agent is probably writing it. "
                        "Close the agent or wait, then try again.",
                        holder_pid=holder,
                    ) from None
                time.sleep(POLL_SECONDS)

    def _create_publish_lock(self, content: bytes) -> None:
        """Create ``.<name>.lock`` already holding ``content``; FileExistsError if taken.

        The content goes into a private temp file first, which is then hard-linked to the
        lock name (``link`` fails if the name exists, like ``O_EXCL``). So our lock is never
        visible empty, even if we are killed in between; a kill leaves at most the temp file,
        which a later acquire removes once its pid is dead.
        """
        self._remove_dead_temp_files()
        temp = self.publish_path.with_name(f"{self.publish_path.name}.{os.getpid()}.tmp")
        fd = os.open(
            temp,
            os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC,
            0o600,
        )
        try:
            os.write(fd, content)
        finally:
            os.close(fd)
        try:
            os.link(temp, self.publish_path, follow_symlinks=False)
            info = os.lstat(self.publish_path)
            self._publish_identity = (info.st_dev, info.st_ino)
        finally:
            try:
                os.unlink(temp)
            except FileNotFoundError:
                pass

    def _remove_dead_temp_files(self) -> None:
        """Remove ``.<name>.lock.<pid>.tmp`` files whose pid is gone (a kill mid-acquire)."""
        prefix = f"{self.publish_path.name}."
        try:
            names = os.listdir(self.publish_path.parent)
        except OSError:
            return
        for name in names:
            if not (name.startswith(prefix) and name.endswith(".tmp")):
                continue
            pid_text = name[len(prefix) : -len(".tmp")]
            if pid_text.isdigit() and int(pid_text) != os.getpid() and not pid_alive(int(pid_text)):
                try:
                    os.unlink(self.publish_path.parent / name)
                except OSError:
                    pass

    def _remove_if_unchanged(self, judged: LockInfo) -> bool:
        """Unlink a stale lock only if it is still the file we judged; True if removed."""
        try:
            fd = os.open(self.publish_path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            return False
        try:
            before = os.fstat(fd)
            pid, _ = _parse_lock_content(os.read(fd, 128))
        finally:
            os.close(fd)
        if pid != judged.pid or not stat.S_ISREG(before.st_mode):
            return False
        if pid is not None and pid_alive(pid):
            return False
        try:
            now = os.lstat(self.publish_path)
        except FileNotFoundError:
            return True
        if (now.st_dev, now.st_ino) != (before.st_dev, before.st_ino):
            return False
        try:
            os.unlink(self.publish_path)
        except FileNotFoundError:
            pass
        return True

    # -- release -----------------------------------------------------------------------

    def release(self) -> None:
        """Remove our publish lock (only if it is still ours) and drop the flock."""
        try:
            if self._publish_identity is not None:
                try:
                    now = os.lstat(self.publish_path)
                    if (now.st_dev, now.st_ino) == self._publish_identity:
                        os.unlink(self.publish_path)
                except FileNotFoundError:
                    pass
                self._publish_identity = None
        finally:
            self._release_gate()

    def _release_gate(self) -> None:
        if self._gate_fd is not None:
            try:
                fcntl.flock(self._gate_fd, fcntl.LOCK_UN)
            finally:
                os.close(self._gate_fd)
                self._gate_fd = None

    @property
    def held(self) -> bool:
        """True between a successful acquire() and release()."""
        return self._gate_fd is not None and self._publish_identity is not None


@contextmanager
def session_lock(
    session_path: str | os.PathLike[str], *, wait_seconds: float = DEFAULT_WAIT_SECONDS
) -> Iterator[SessionLock]:
    """Hold both locks for the duration of the ``with`` block."""
    lock = SessionLock(session_path, wait_seconds=wait_seconds)
    lock.acquire()
    try:
        yield lock
    finally:
        lock.release()


# -- live-writer detection -------------------------------------------------------------


def _stat_signature(path: Path) -> tuple[int, int, int, int] | None:
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return None
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)


def file_changes_during(path: str | os.PathLike[str], quiet_seconds: float) -> bool:
    """True if the file's identity, size or mtime changes within ``quiet_seconds``."""
    target = Path(path)
    before = _stat_signature(target)
    deadline = time.monotonic() + quiet_seconds
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            break
        time.sleep(min(remaining, 0.05))
        if _stat_signature(target) != before:
            return True
    return _stat_signature(target) != before


def detect_live_writer(
    session_path: str | os.PathLike[str],
    *,
    quiet_seconds: float = DEFAULT_QUIET_SECONDS,
) -> LiveWriter | None:
    """Evidence that someone is writing the session now, or None.

    Checks an oh-my-pi publish lock with a live pid (not ours) and the file changing during a
    quiet window of ``quiet_seconds``. Processes that work on the session (open files, command
    lines, an agent in its directory) are found by ``session.agents``.
    """
    lock = read_publish_lock(session_path)
    if lock is not None and lock.alive and lock.pid != os.getpid():
        who = f"pid {lock.pid}" if lock.pid is not None else "another process"
        return LiveWriter(f"oh-my-pi's lock {lock.path.name} is held by {who}", lock.pid)
    if quiet_seconds > 0 and file_changes_during(session_path, quiet_seconds):
        return LiveWriter(f"the file changed during a {quiet_seconds:g} s quiet window")
    return None
