"""Exact cl100k counts from a counting process: the app's ``cl100k`` counter.

Building tiktoken's encoder from the 100k-rank table holds the GIL 0.1-0.3 s, most of it in
single native calls (splitting the table, the dict of ranks, and ``CoreBPE``'s conversion of
that dict, 50-100 ms by itself) that never hand the GIL over: any tick of the app's event loop
in the meantime waits for all of it. A counting process builds the encoder with its own GIL and
counts texts sent to it in batches over a pipe; the app's threads wait for the answers with
their GIL released. The commands count in their own process (``Cl100kCounter``): they draw
nothing while the table loads.

The protocol (little-endian): the process first answers ``K`` (ready) or ``E`` + a 4-byte
length + the reason (UTF-8) and exits. Then each request is ``<n texts, total bytes>`` (two
8-byte integers), the n byte lengths (8 bytes each) and the texts' UTF-8 bytes one after the
other; the answer is the n counts (8 bytes each). End of input ends the process, so it never
outlives the app: quitting closes the pipe, and so does the app's death, whatever the cause.
"""

from __future__ import annotations

import atexit
import struct
import subprocess
import sys
import threading
from array import array
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from tui_compactor.engine.tokens import TokenTableError, _FragmentCounter, load_cl100k

__all__ = ["Cl100kProcessCounter", "serve"]

_REQUEST = struct.Struct("<QQ")
"""A request's head: the number of texts, their total bytes."""
_READY = b"K"
_FAILED = b"E"
_LENGTH = struct.Struct("<I")
"""The length of a failure's reason."""
_WIDTH = 8
"""Bytes of one length or one count (``array("Q")``, little-endian on every supported host)."""

_PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])
"""The directory that holds this ``tui_compactor`` package: the counting process imports it
from there whatever its ``sys.path`` would say (a checkout run with ``PYTHONPATH``)."""

_COMMAND = (
    f"import sys; sys.path.insert(0, {_PACKAGE_ROOT!r}); "
    "from tui_compactor.engine.token_process import serve; serve()"
)


def _read_exactly(stream: IO[bytes], size: int) -> bytes:
    """``size`` bytes of ``stream``; fewer only at its end."""
    data = stream.read(size)
    return data if data is not None else b""


def serve(stdin: IO[bytes] | None = None, stdout: IO[bytes] | None = None) -> None:
    """The counting process: build the encoder, say whether it could, then count each request's
    texts until the input ends."""
    source = stdin if stdin is not None else sys.stdin.buffer
    sink = stdout if stdout is not None else sys.stdout.buffer
    try:
        try:
            encode = load_cl100k().encode_ordinary
        except Exception as error:  # a missing package, table or cache: said to the app
            reason = f"{type(error).__name__}: {error}".encode("utf-8", "replace")
            sink.write(_FAILED + _LENGTH.pack(len(reason)) + reason)
            sink.flush()
            return
        sink.write(_READY)
        sink.flush()
        while True:
            head = _read_exactly(source, _REQUEST.size)
            if len(head) < _REQUEST.size:
                return  # the app closed the pipe (quit) or died
            texts, size = _REQUEST.unpack(head)
            lengths = array("Q")
            lengths.frombytes(_read_exactly(source, texts * _WIDTH))
            data = memoryview(_read_exactly(source, size))
            if len(lengths) < texts or len(data) < size:
                return
            counts = array("Q")
            start = 0
            for length in lengths:
                end = start + length
                counts.append(len(encode(str(data[start:end], "utf-8"))) if length else 0)
                start = end
            sink.write(counts.tobytes())
            sink.flush()
    except (BrokenPipeError, KeyboardInterrupt):
        return  # the app is gone


class Cl100kProcessCounter(_FragmentCounter):
    """Real cl100k_base counts, the same as ``Cl100kCounter``'s, from a counting process.

    The process starts with the counter (``start``: else at the first count) and builds its
    encoder at once. A count waits until it is ready; a message's fragments, or many messages'
    (``count_messages``), go in one request. If the process cannot start, cannot load the table
    or ends, every count raises ``TokenTableError`` with why, as ``Cl100kCounter`` does when the
    table cannot be loaded (the app then counts with the chars/4 estimate).
    """

    name = "cl100k"

    def __init__(self, *, start: bool = True) -> None:
        self.error: str | None = None
        """Why nothing can be counted (then every count raises at once); None while the
        process starts or runs."""
        self._process: subprocess.Popen[bytes] | None = None
        self._started = False
        self._ready = threading.Event()
        self._lock = threading.Lock()
        """Held by a request from its first byte sent to its last count read."""
        if start:
            self.start()

    @property
    def loaded(self) -> bool:
        """True once the process has built its encoder: a count no longer waits for it."""
        return self._ready.is_set() and self.error is None

    @property
    def pid(self) -> int | None:
        """The counting process's id while it runs."""
        return self._process.pid if self._process is not None else None

    def start(self) -> None:
        """Start the counting process (once); a thread waits for it to say it is ready."""
        with self._lock:
            if self._started:
                return
            self._started = True
            try:
                self._process = subprocess.Popen(
                    [sys.executable, "-c", _COMMAND],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                    # Its own session: a ctrl+c typed at the terminal is the app's to handle.
                    start_new_session=True,
                )
            except (OSError, ValueError) as error:
                self._fail(f"the counting process could not start: {type(error).__name__}: {error}")
                return
            atexit.register(self.close)  # reaped with this process (its death closes the pipe)
        threading.Thread(target=self._wait_ready, name="cl100k-process", daemon=True).start()

    def _wait_ready(self) -> None:
        process = self._process
        assert process is not None and process.stdout is not None
        answer = _read_exactly(process.stdout, 1)
        if answer == _READY:
            self._ready.set()
            return
        if answer == _FAILED:
            head = _read_exactly(process.stdout, _LENGTH.size)
            size = _LENGTH.unpack(head)[0] if len(head) == _LENGTH.size else 0
            self._fail(_read_exactly(process.stdout, size).decode("utf-8", "replace"))
        else:
            self._fail(self._ended())
        self.close()

    def _ended(self) -> str:
        """Why the process stopped answering."""
        process = self._process
        code = process.poll() if process is not None else None
        return f"the counting process ended (exit code {code})"

    def _fail(self, reason: str) -> None:
        if self.error is None:
            self.error = reason
        self._ready.set()

    def count_texts(self, texts: Sequence[str]) -> list[int]:
        """Tokens of each of ``texts``, in one request."""
        if not texts:
            return []
        if not self._started:
            self.start()
        self._ready.wait()
        if self.error is not None:
            raise TokenTableError(self.error)
        # A lone surrogate becomes "?", as ``Cl100kCounter`` counts it.
        encoded = [text.encode("utf-8", "replace") for text in texts]
        lengths = array("Q", map(len, encoded))
        with self._lock:
            process = self._process
            if self.error is not None or process is None:
                raise TokenTableError(self.error or "the counting process was closed")
            assert process.stdin is not None and process.stdout is not None
            try:
                process.stdin.write(_REQUEST.pack(len(encoded), sum(lengths)))
                process.stdin.write(lengths.tobytes())
                for data in encoded:
                    process.stdin.write(data)
                process.stdin.flush()
                answer = _read_exactly(process.stdout, len(encoded) * _WIDTH)
            except (OSError, ValueError):
                answer = b""
            if len(answer) < len(encoded) * _WIDTH:
                self._fail(self._ended())
                raise TokenTableError(self.error or "the counting process ended")
        counts = array("Q")
        counts.frombytes(answer)
        return counts.tolist()

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
        a request in flight ends with ``TokenTableError``."""
        process = self._process
        if process is None:
            return
        self._process = None
        self._fail("the counting process was closed")
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
            process.stdout.close()
