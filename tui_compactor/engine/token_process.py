"""Exact cl100k counts from a counting process: the app's ``cl100k`` counter.

The counting process (``cl100k.serve``) builds tiktoken's encoder with its own GIL, so the 0.1-0.3
s it holds one never stalls the app's event loop, and counts the texts sent to it in batches
over a pipe; the app's threads wait for the answers with their GIL released. The commands
count in their own process (``tokens.Cl100kCounter``): they draw nothing while the table loads.
"""

from __future__ import annotations

import atexit
import signal
import subprocess
import sys
import threading
from array import array
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from tui_compactor.engine.cl100k import (
    FAILED,
    REASON_LENGTH,
    REQUEST,
    WIDTH,
    read_exactly,
)
from tui_compactor.engine.tokens import TokenTableError, _FragmentCounter

__all__ = ["Cl100kProcessCounter", "utf8_as_tiktoken_reads"]

READY_WAIT_S = 60.0
"""How long a count waits for the process to say it is ready before the app counts with the
chars/4 estimate (a process that hangs, e.g. a ``sys.executable`` that is no Python)."""

REQUEST_BYTES = 256 * 1024
"""A request's size at most (one text alone may be larger): a long batch is sent in parts,
the lock released between them, so the gauge's or the plan's count is not queued behind a
whole batch of the tokens worker."""

RESTART_WAITS_S = (0.0, 0.5, 2.0)
"""A counting process that ends while the app counts (the OOM killer, a user's ``kill``) is
started again, its request in flight sent again, after each of these waits in turn: at most
``len(RESTART_WAITS_S)`` times in a row (a request answered begins the row again), so a process
that dies at once is not started forever; then the counts fail with why (the app then counts
with the chars/4 estimate, marked)."""

_PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])
"""The directory that holds this ``tui_compactor`` package: the counting process imports it
from there whatever its ``sys.path`` would say (a checkout run with ``PYTHONPATH``)."""

COUNTING_NICE = 10
"""How much lower the counting process's CPU priority is than the app's (``os.nice``): its
minute of counting after the open yields the CPU to the app's event loop whenever both want it
(another program busy on the other core, one core), instead of taking an equal share."""

_COMMAND = (
    f"import os, sys; sys.path.insert(0, {_PACKAGE_ROOT!r}); "
    f"hasattr(os, 'nice') and os.nice({COUNTING_NICE}); "
    "from tui_compactor.engine.cl100k import serve; serve()"
)


class Cl100kProcessCounter(_FragmentCounter):
    """Real cl100k_base counts, the same as ``Cl100kCounter``'s, from a counting process.

    The process starts with the counter (``preload``: else when ``preload`` is called or at
    the first count) and builds its encoder at once. A count waits until it is ready; a
    message's fragments, or many messages' (``count_messages``), go in one request. If the
    process cannot start, cannot load the table or ends, every count raises
    ``TokenTableError`` with why, as ``Cl100kCounter`` does when the table cannot be loaded
    (the app then counts with the chars/4 estimate).
    """

    name = "cl100k"

    def __init__(self, *, preload: bool = True) -> None:
        self.error: str | None = None
        """Why nothing can be counted (then every count raises at once); None while the
        process starts or runs."""
        self.on_restart: Callable[[str], None] | None = None
        """Told (on the counting thread) why the process ended each time it was started again
        and answered the request it had in flight: the app says so in one note."""
        self.restarts = 0
        """How many times the process was started again since the counter was made."""
        self._process: subprocess.Popen[bytes] | None = None
        self._started = False
        self._ready = threading.Event()
        self._closing = threading.Event()
        """Set by ``close``: a wait before a restart ends, no process is started again."""
        self._lock = threading.Lock()
        """Held by a request from its first byte sent to its last count read (and while the
        process it found ended is started again)."""
        self._state_lock = threading.Lock()
        """Held while the process is started or taken away: ``close`` (which never waits for
        a request in flight) and a restart never cross."""
        self._in_a_row = 0
        """Restarts since the last request answered (``RESTART_WAITS_S``)."""
        if preload:
            self.preload()

    @property
    def loaded(self) -> bool:
        """True once the process has built its encoder: a count no longer waits for it."""
        return self._ready.is_set() and self.error is None

    @property
    def pid(self) -> int | None:
        """The counting process's id while it runs."""
        process = self._process
        return process.pid if process is not None else None

    def preload(self) -> None:
        """Start the counting process (once); a thread waits for it to say it is ready."""
        if self._started:
            return  # never waits for the lock a request in flight holds (the event loop calls)
        with self._lock:
            if self._started:
                return
            self._started = True
            process = self._launch()
            if process is None:
                return
            atexit.register(self.close)  # reaped with this process (its death closes the pipe)
        threading.Thread(
            target=self._wait_ready, args=(process,), name="cl100k-process", daemon=True
        ).start()

    def _launch(self) -> subprocess.Popen[bytes] | None:
        """Start a counting process as ``_process``; None (``error`` says why) if it could not
        start or the counter was closed."""
        with self._state_lock:
            if self.error is not None:
                return None
            try:
                self._process = subprocess.Popen(
                    # -P: the user's working directory is not on its path (a hashlib.py or
                    # tiktoken.py there would be imported, and run, instead of the library's).
                    [sys.executable, "-P", "-c", _COMMAND],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                    # Its own session: a ctrl+c typed at the terminal is the app's to handle.
                    start_new_session=True,
                )
            except (OSError, ValueError) as error:
                self._fail(f"the counting process could not start: {type(error).__name__}: {error}")
                return None
            return self._process

    def _wait_ready(self, process: subprocess.Popen[bytes]) -> None:
        """The first process's answer (a thread): ready, or why it cannot count. One that ends
        first is started again by the first request (``_request``)."""
        if self._first_answer(process) is not None:
            self.close()
        self._ready.set()

    def _first_answer(self, process: subprocess.Popen[bytes]) -> str | None:
        """Read whether ``process`` is ready: None if it is, or ended first; else why it cannot
        count (its table could not be loaded: nothing a restart would mend), kept in
        ``error``."""
        assert process.stdout is not None
        try:
            answer = read_exactly(process.stdout, 1)
            if answer != FAILED:
                return None
            head = read_exactly(process.stdout, REASON_LENGTH.size)
            size = REASON_LENGTH.unpack(head)[0] if len(head) == REASON_LENGTH.size else 0
            reason = read_exactly(process.stdout, size).decode("utf-8", "replace")
        except (OSError, ValueError):  # closed meanwhile
            return None
        self._fail(reason)
        return reason

    def _ended(self, process: subprocess.Popen[bytes]) -> str:
        """Why ``process`` stopped answering (its exit code, or the signal that killed it)."""
        try:
            code = process.wait(timeout=0.5)  # its pipe closed just before it exits
        except subprocess.TimeoutExpired:
            return "the counting process stopped answering"
        if code < 0:
            try:
                return f"the counting process was killed ({signal.Signals(-code).name})"
            except ValueError:
                pass
        return f"the counting process ended (exit code {code})"

    def _fail(self, reason: str) -> None:
        if self.error is None:
            self.error = reason
        self._ready.set()

    def count_texts(self, texts: Sequence[str]) -> list[int]:
        """Tokens of each of ``texts``: one request, or several of ``REQUEST_BYTES`` for a long
        batch."""
        if not texts:
            return []
        if not self._started:
            self.preload()
        if not self._ready.wait(READY_WAIT_S):
            self._fail(f"the counting process was not ready after {READY_WAIT_S:.0f} s")
            self.close()
        if self.error is not None:
            raise TokenTableError(self.error)
        encoded = [utf8_as_tiktoken_reads(text) for text in texts]
        counts: list[int] = []
        start = 0
        while start < len(encoded):
            end, size = start, 0
            while end < len(encoded) and (
                end == start or size + len(encoded[end]) <= REQUEST_BYTES
            ):
                size += len(encoded[end])
                end += 1
            counts += self._request(encoded[start:end])
            start = end
        return counts

    def _request(self, encoded: list[bytes]) -> list[int]:
        """The counts of one request's texts (UTF-8). A process that ended is started again
        and the request sent again (``RESTART_WAITS_S``)."""
        lengths = array("Q", map(len, encoded))
        with self._lock:
            ended: str | None = None
            while True:
                process = self._process
                if self.error is not None or process is None:
                    raise TokenTableError(self.error or "the counting process was closed")
                answer = self._send(process, encoded, lengths)
                if answer is not None:
                    break
                # Ended (killed, out of memory) or closed meanwhile (then ``error`` says so).
                ended = self._ended(process)
                self._drop(process)
                self._restart(ended)
            self._in_a_row = 0
            if ended is not None and self.on_restart is not None:
                self.on_restart(ended)
        counts = array("Q")
        counts.frombytes(answer)
        return counts.tolist()

    @staticmethod
    def _send(
        process: subprocess.Popen[bytes], encoded: list[bytes], lengths: array[int]
    ) -> bytes | None:
        """One request's counts (bytes) from ``process``; None if it did not answer them."""
        assert process.stdin is not None and process.stdout is not None
        try:
            process.stdin.write(REQUEST.pack(len(encoded), sum(lengths)))
            process.stdin.write(lengths.tobytes())
            for data in encoded:
                process.stdin.write(data)
            process.stdin.flush()
            answer = read_exactly(process.stdout, len(encoded) * WIDTH)
        except (OSError, ValueError):
            return None
        return answer if len(answer) == len(encoded) * WIDTH else None

    def _restart(self, ended: str) -> None:
        """Start the process again after it ended (``ended``: why), once it has waited its
        turn (``RESTART_WAITS_S``); raises ``TokenTableError`` (and every count after it) when
        the restarts in a row are spent, the new process cannot load its table, or the counter
        was closed."""
        while self.error is None:
            if self._in_a_row >= len(RESTART_WAITS_S):
                self._fail(
                    f"{ended}; started again {self._in_a_row} times in a row, it ended each time"
                )
            elif not self._closing.wait(RESTART_WAITS_S[self._in_a_row]):
                self._in_a_row += 1
                again = self._start_again()
                if again is None:
                    return
                ended = again
        raise TokenTableError(self.error or "the counting process was closed")

    def _start_again(self) -> str | None:
        """Start a process and wait for it to be ready: None once it is, else why it ended
        (``error`` says why when it cannot count at all)."""
        process = self._launch()
        if process is None:
            return self.error
        self.restarts += 1
        late = threading.Event()

        def kill() -> None:
            late.set()
            process.kill()

        killer = threading.Timer(READY_WAIT_S, kill)
        killer.start()
        try:
            if self._first_answer(process) is None and process.poll() is None:
                return None  # ready (one that ended first fails its request: started again)
        finally:
            killer.cancel()
        ended = self._ended(process)
        self._drop(process)
        if late.is_set():
            self._fail(f"the counting process was not ready after {READY_WAIT_S:.0f} s")
        return ended

    def count_text(self, text: str) -> int:
        """Number of cl100k tokens; special-token text counts as ordinary text."""
        return self.count_texts([text])[0] if text else 0

    def count_message(self, message: Any) -> int:
        """Sum over the message's fragments (one request); 1200 per image."""
        return self.count_messages([message])[0]

    def count_messages(self, messages: Sequence[Any]) -> list[int]:
        """Tokens of each message, all of their fragments in one request."""
        return self._sum_fragments(messages, self.count_texts)

    def close(self) -> None:
        """End the counting process: its input closes, so it exits (killed if it does not);
        a request in flight ends with ``TokenTableError``, and nothing starts it again."""
        with self._state_lock:
            self._fail("the counting process was closed")
            self._closing.set()
            process = self._process
        if process is not None:
            self._drop(process)

    def _drop(self, process: subprocess.Popen[bytes]) -> None:
        """Close ``process``'s pipe and reap it (a dead one is not left a zombie)."""
        with self._state_lock:
            if self._process is process:
                self._process = None
        try:
            if process.stdin is not None:
                process.stdin.close()
        except (OSError, ValueError):
            pass
        try:
            process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stdout is not None:
            try:
                process.stdout.close()
            except (OSError, ValueError):
                pass


def utf8_as_tiktoken_reads(text: str) -> bytes:
    """``text`` as UTF-8, mended as tiktoken's ``encode_ordinary`` mends a text it cannot
    encode (UTF-16 with the surrogates passed, decoded with replacement: a pair split into two
    code points is one character again, a lone surrogate U+FFFD), so the counting process counts
    what ``Cl100kCounter`` counts."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace").encode("utf-8")
