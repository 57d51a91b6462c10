"""SQLite-style fault injection: fail the N-th OS call of an append, for N = 1, 2, ...

After every failed attempt the loaded prefix of the file is unchanged, the caller got an
``AppendRefused`` (the user sees why), and either nothing of ours is left or (only when the
rollback itself was made to fail) a torn record of ours that the loader names.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
from pathlib import Path

import pytest

from tui_compactor.session.lock import SessionLock
from tui_compactor.session.reader import load_session
from tui_compactor.session.writer import (
    AppendFailed,
    AppendRefused,
    OsOps,
    append_entry,
    make_compaction_entry,
)

SOURCE = Path(__file__).resolve().parents[1] / "fixtures" / "bad" / "no-trailing-newline.jsonl"
"""A file whose last line lacks ``\\n``: the record is written with a leading newline, so a
rolled-back partial write must also remove that byte."""


class InjectedFault(OsOps):
    """Fails the N-th call (counting every wrapped call) with ``kind``; once or forever."""

    def __init__(self, fail_at: int, kind: str, *, forever: bool) -> None:
        self.fail_at = fail_at
        self.kind = kind
        self.forever = forever
        self.calls = 0
        self.failed: list[str] = []

    def _tick(self, name: str) -> bool:
        self.calls += 1
        hit = self.calls == self.fail_at or (self.forever and self.calls > self.fail_at)
        if hit:
            self.failed.append(name)
        return hit

    def _raise(self) -> None:
        code = {"EIO": errno.EIO, "ENOSPC": errno.ENOSPC, "EINTR": errno.EINTR, "short": errno.EIO}
        raise OSError(code[self.kind], os.strerror(code[self.kind]))

    def open(self, path: str, flags: int, mode: int = 0o600) -> int:
        if self._tick("open"):
            self._raise()
        return super().open(path, flags, mode)

    def fstat(self, fd: int) -> os.stat_result:
        if self._tick("fstat"):
            self._raise()
        return super().fstat(fd)

    def stat(self, path: str) -> os.stat_result:
        if self._tick("stat"):
            self._raise()
        return super().stat(path)

    def pread(self, fd: int, length: int, offset: int) -> bytes:
        if self._tick("pread"):
            self._raise()
        return super().pread(fd, length, offset)

    def write(self, fd: int, data: bytes) -> int:
        if self._tick("write"):
            if self.kind == "short":
                return super().write(fd, data[: max(1, len(data) // 2)])
            if self.kind == "ENOSPC" and len(data) > 4:
                super().write(fd, data[:4])  # some bytes landed before the disk filled
            self._raise()
        return super().write(fd, data)

    def fsync(self, fd: int) -> None:
        if self._tick("fsync"):
            self._raise()
        super().fsync(fd)

    def ftruncate(self, fd: int, length: int) -> None:
        if self._tick("ftruncate"):
            self._raise()
        super().ftruncate(fd, length)

    def close(self, fd: int) -> None:
        failing = self._tick("close")
        super().close(fd)  # the descriptor is released either way, as close(2) does
        if failing:
            self._raise()

    def lock(self, path: str, wait_seconds: float) -> SessionLock:
        if self._tick("lock"):
            self._raise()
        return super().lock(path, wait_seconds)


@pytest.mark.parametrize("forever", [False, True], ids=["once", "forever"])
@pytest.mark.parametrize("kind", ["EIO", "ENOSPC", "EINTR", "short"])
def test_fail_nth_call_never_damages_the_file(kind: str, forever: bool, tmp_path: Path) -> None:
    original = SOURCE.read_bytes()
    failures = 0
    for fail_at in range(1, 200):
        path = tmp_path / f"n{fail_at}.jsonl"
        shutil.copyfile(SOURCE, path)
        session = load_session(path)
        leaf = session.entries[session.leaf]
        ops = InjectedFault(fail_at, kind, forever=forever)
        entry = make_compaction_entry(
            summary="fault test", first_kept_entry_id=leaf.id, tokens_before=5
        )
        try:
            result = append_entry(
                session, entry, parent_index=session.leaf, quiet_seconds=0, ops=ops, refresh=False
            )
        except AppendRefused as refused:
            failures += 1
            assert ops.failed, "refused without a fault"
            assert refused.reason and refused.hint
            data = path.read_bytes()
            assert data[: len(original)] == original
            extra = data[len(original) :]
            if extra:
                # Our bytes stay only when the rollback itself was made to fail (forever
                # mode) or the record landed whole but could not be read back.
                assert isinstance(refused, AppendFailed) and not refused.rolled_back
                assert forever or refused.damage == "unverified", refused
                ours = b'\n{"type":"compaction"'
                assert extra[: len(ours)] == ours[: len(extra)]
                if not extra.endswith(b"\n"):
                    assert load_session(path).snapshot.torn_tail  # named, offered a seal
            continue
        # Success: the fault (if any) hit a call whose failure is harmless (close) or
        # N is past the last call.
        data = path.read_bytes()
        assert data[: len(original)] == original
        line = data[len(original) :]
        assert line.startswith(b"\n") and line.endswith(b"\n")
        assert json.loads(line)["id"] == result.ids[0]
        if ops.calls < fail_at:
            break
    else:
        pytest.fail("the append never succeeded")
    assert failures >= 8  # open, fstat, stat, pread, write, fsync, ... each failed once
