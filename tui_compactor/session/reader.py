"""Read a pi / oh-my-pi session file into a ``Session`` without ever writing to it.

One pass over the bytes: split on ``\\n`` only (physical lines, as pi does), decode each line
as UTF-8 (with replacement and a warning when it is not), parse it with a strict JSON decoder
that agrees with ``JSON.parse`` (no NaN/Infinity, no raw control characters in strings), and
index it. Every problem becomes a ``Diagnostic`` naming the file, the physical line and the
byte offset; nothing in the file content can make the loader raise.

The file is opened ``O_RDONLY`` and nothing is created, locked or renamed. Files above
``LAZY_THRESHOLD`` bytes keep only the small per-entry index in memory and re-read records
by offset (``os.pread`` on the read-only descriptor) when ``Entry.data`` is used.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import math
import os
import re
import stat
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from concurrent.futures import Future, ThreadPoolExecutor

try:
    import orjson
except ImportError:  # pragma: no cover - a declared dependency; the stdlib path is exact too
    orjson = None  # type: ignore[assignment]

from tui_compactor.config_sources import (
    MEMORY_BASE_MB,
    MEMORY_LIMIT_ENV,
    ConfigError,
    memory_limit_mb,
)
from tui_compactor.session.flavor import OMP_ONLY_TYPES, omp_compaction_field
from tui_compactor.session.migrate import (
    CURRENT_VERSION,
    migrate_header,
    migrate_record,
    v1_entry_id,
)
from tui_compactor.session.model import (
    Entry,
    FileSnapshot,
    LoadProgress,
    Severity,
    Verdict,
    torn_tail_cause,
    written_by_us,
)
from tui_compactor.session.omp_open import (
    TITLE_SLOT,
    content_fault,
    content_fault_of,
    message_usage_fault,
    missing_message_fault,
    null_line_fault,
    title_slot_note,
    usage_fault,
)
from tui_compactor.session.session import (
    _NO_CHILD as NO_CHILD,
)
from tui_compactor.session.session import (
    Refresh,
    Session,
    _LazyRecords,
    gc_paused,
    release_free_memory,
    timestamp_key,
)

__all__ = [
    "load_session", "load_tail_preview", "decode_record", "LAZY_THRESHOLD", "KNOWN_ENTRY_TYPES",
    "MAX_LINE_BYTES", "OpaqueJSON",
]  # fmt: skip

LAZY_THRESHOLD = 8 * 1024 * 1024
"""Files larger than this keep records on disk and re-read them on demand."""
CHUNK_SIZE = 2 * 1024 * 1024
"""Bytes read per step; progress and cancellation are checked between steps."""
FULL_PREFIX_CHECK_LIMIT = 32 * 1024 * 1024
"""refresh(): up to this size the whole loaded prefix is re-hashed; above it, the first and
last ``SAMPLE_BYTES`` are compared (the writer re-hashes everything under its lock)."""
SAMPLE_BYTES = 64 * 1024
BACKGROUND_HASH_MIN = 8 * 1024 * 1024
"""Scans larger than this compute the sha256 on a helper thread when a core is idle
(``_core_idle``)."""
HASH_QUEUE_CHUNKS = 8
"""At most this many chunks wait for the hashing thread."""
MAX_LINE_BYTES = 32 * 1024 * 1024
"""A longer line is skipped with a warning without being read into memory: parsing it would
take several times its size (bytes, text, objects), past the memory a session may use
(half the file size + 150 MB). pi's tool outputs and images stay far below this."""
DEEP_KEEP_DEPTH = 256
"""A line nested deeper than the recursive decoders allow is parsed iteratively; containers
below this depth are kept as their raw JSON text (``OpaqueJSON``) so no later walk recurses."""
INDEX_BYTES_PER_ENTRY = 350
"""Peak memory the index takes per entry, with a margin. Measured (peak RSS of ``lint`` over
its peak on a 10-entry file, per entry): 257 B on a million tiny entries, 310 B on a
200,000-deep chain (its depths are big integers), 255 B for ``plan`` on the chain."""
BASE_MEMORY = MEMORY_BASE_MB * 1024 * 1024
"""The interpreter and the libraries a command loads before any session (23 MB for ``lint``)
and the reader's buffers (chunks read and queued for hashing)."""
MEMORY_SAMPLE_BYTES = 4 * 1024 * 1024
RecordHook = Callable[[int, str, "str | None", int, dict[str, Any], "bytes | memoryview"], None]
"""``load_session``'s ``on_record``: called as ``hook(index, type, role, offset, record,
raw)`` for each entry indexed (``Entry``'s fields of those names; ``raw``: its line's bytes,
a read-only view of the chunk read where no copy of them was made, valid during the call)."""
PROGRESS_INTERVAL = 0.25
"""Seconds between progress reports while indexing, the first after the first chunk (the app
redraws its bar on each: more often took the GIL from the index it reports on)."""
BOM = b"\xef\xbb\xbf"

KNOWN_ENTRY_TYPES = frozenset(
    {
        "message",
        "compaction",
        "branch_summary",
        "custom",
        "custom_message",
        "label",
        "session_info",
        "model_change",
        "thinking_level_change",
    }
)
"""Entry types pi defines; anything else is kept as an opaque node and noted (info)."""

_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)
"""Read-only; non-blocking so a FIFO path cannot hang the open (then refused as not a file)."""

WARN, INFO, ERROR = Severity.WARNING, Severity.INFO, Severity.ERROR


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


_DECODER = json.JSONDecoder(parse_constant=_reject_constant)
_decode = _DECODER.decode
_scan_once = _DECODER.scan_once  # type: ignore[attr-defined]  # C scanner, not in typeshed
"""The C scanner behind ``_decode``: parses one value at an index (fast path)."""
_SKIP = object()
_ROLES = {role: role for role in ("user", "assistant", "toolResult", "bashExecution", "custom",
                                  "branchSummary", "compactionSummary")}  # fmt: skip


_FLOAT_MAX = 1.7976931348623157e308


def _finite_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise ValueError("number out of range")
    return value


def _finite_int(text: str) -> int:
    if len(text) > 300:  # 1e308 is the largest double: JSON.parse reads longer ones as Infinity
        value = int(text)
        if value > _FLOAT_MAX or value < -_FLOAT_MAX:
            raise ValueError("number out of range")
        return value
    return int(text)


_STDLIB_FAST = json.JSONDecoder(
    parse_constant=_reject_constant, parse_float=_finite_float, parse_int=_finite_int
)
_stdlib_scan_once = _STDLIB_FAST.scan_once  # type: ignore[attr-defined]


def _stdlib_fast_loads(raw: bytes | memoryview) -> Any:
    """The fast path without orjson: like it, refuses what the strict path must judge."""
    text = str(raw, "utf-8")
    obj, end = _stdlib_scan_once(text, 0)
    if end != len(text) and text[end:].strip(" \t\r\n"):
        raise ValueError("extra data")
    return obj


# The common case parses a line's bytes with ``orjson`` (about twice as fast as the stdlib
# decoder). It accepts a subset of what ``JSON.parse`` accepts (it refuses lone surrogate
# escapes, infinite numbers, invalid UTF-8, nesting deeper than 1024), so whatever it refuses
# goes to the strict stdlib decoder, which decides (and words) the verdict.
_FAST_ERRORS: tuple[type[Exception], ...] = (
    UnicodeDecodeError, StopIteration, ValueError, RecursionError,
)  # fmt: skip
if orjson is not None:
    _fast_loads: Callable[[bytes | memoryview], Any] = orjson.loads
    _FAST_ERRORS = (*_FAST_ERRORS, orjson.JSONDecodeError)
else:  # pragma: no cover
    _fast_loads = _stdlib_fast_loads


def decode_record(raw: bytes) -> Any:
    """Parse one line's bytes like ``JSON.parse`` (strict; invalid UTF-8 replaced)."""
    try:
        return _fast_loads(raw)
    except _FAST_ERRORS:
        return _strict_decode(raw.decode("utf-8", "replace"))


def _strict_decode(text: str) -> Any:
    """The strict stdlib decoder, or the iterative one for lines nested too deeply for it."""
    try:
        return _decode(text)
    except RecursionError:
        return decode_deep(text)


class OpaqueJSON(str):
    """A JSON value nested below ``DEEP_KEEP_DEPTH``, kept as its exact source text."""

    __slots__ = ()


_scanstring = json.decoder.scanstring  # type: ignore[attr-defined]  # C string scanner
_WHITESPACE = " \t\n\r"
_NUMBER = re.compile(r"(-?(?:0|[1-9]\d*))(\.\d+)?([eE][-+]?\d+)?")
_LITERALS = {"true": True, "false": False, "null": None}


def _skip_space(text: str, at: int) -> int:
    length = len(text)
    while at < length and text[at] in _WHITESPACE:
        at += 1
    return at


def _object_key(text: str, at: int) -> tuple[str, int]:
    """Parse ``"key" :`` at ``at`` (after whitespace); returns the key and the index of the
    value (whitespace after the colon skipped)."""
    at = _skip_space(text, at)
    if text[at : at + 1] != '"':
        raise json.JSONDecodeError("Expecting property name enclosed in double quotes", text, at)
    key, at = _scanstring(text, at + 1, True)
    at = _skip_space(text, at)
    if text[at : at + 1] != ":":
        raise json.JSONDecodeError("Expecting ':' delimiter", text, at)
    return key, _skip_space(text, at + 1)


def decode_deep(text: str, keep_depth: int = DEEP_KEEP_DEPTH) -> Any:
    """Strict JSON without recursion, for values nested too deeply for ``json``/``orjson``.

    Accepts exactly what the strict decoder accepts (same string scanner; NaN/Infinity
    refused). Containers nested below ``keep_depth`` are validated but kept as
    ``OpaqueJSON`` (their source text), so nothing downstream recurses into them.
    """
    # A frame: [container or None (kept as text), pending key, start index, opening char].
    stack: list[list[Any]] = []
    at = _skip_space(text, 0)
    length = len(text)
    while True:
        # A value starts at ``at``.
        if at >= length:
            raise json.JSONDecodeError("Expecting value", text, at)
        char = text[at]
        value: Any
        finished = True
        if char in "{[":
            opaque = len(stack) >= keep_depth or (bool(stack) and stack[-1][0] is None)
            container: Any = None if opaque else ({} if char == "{" else [])
            stack.append([container, None, at, char])
            at = _skip_space(text, at + 1)
            closer = "}" if char == "{" else "]"
            if text[at : at + 1] == closer:
                at += 1
                frame = stack.pop()
                value = frame[0] if frame[0] is not None else OpaqueJSON(text[frame[2] : at])
            else:
                if char == "{":
                    stack[-1][1], at = _object_key(text, at)
                finished = False
        elif char == '"':
            value, at = _scanstring(text, at + 1, True)
        else:
            number = _NUMBER.match(text, at)
            if number is not None:
                whole, fraction, exponent = number.groups()
                value = float(number.group()) if fraction or exponent else int(whole)
                at = number.end()
            else:
                for word, literal in _LITERALS.items():
                    if text.startswith(word, at):
                        value = literal
                        at += len(word)
                        break
                else:
                    raise json.JSONDecodeError("Expecting value", text, at)
        if not finished:
            continue
        # A value ended: store it, then close containers or move to the next element.
        while True:
            if not stack:
                at = _skip_space(text, at)
                if at != length:
                    raise json.JSONDecodeError("Extra data", text, at)
                return value
            frame = stack[-1]
            holder = frame[0]
            if holder is not None:
                if frame[3] == "{":
                    holder[frame[1]] = value
                else:
                    holder.append(value)
            at = _skip_space(text, at)
            following = text[at : at + 1]
            if following == ",":
                at += 1
                if frame[3] == "{":
                    frame[1], at = _object_key(text, at)
                at = _skip_space(text, at)
                break
            if following == ("}" if frame[3] == "{" else "]"):
                at += 1
                stack.pop()
                if holder is not None:
                    value = holder
                elif not stack or stack[-1][0] is not None:
                    value = OpaqueJSON(text[frame[2] : at])
                else:
                    value = None  # inside an opaque container: only validated
                continue
            expected = "',' delimiter" if following else "value"
            raise json.JSONDecodeError(f"Expecting {expected}", text, at)


def _text_depth(text: str) -> int:
    """Bracket depth of JSON text (strings skipped)."""
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "{[":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "}]":
            depth -= 1
    return deepest


def non_finite_path(value: Any) -> str | None:
    """Where ``value`` holds a number ``JSON.parse`` reads as ±Infinity (``a.b[2]``), or None.

    Python keeps ``1e400`` as ``inf`` and a 400-digit integer as an exact ``int``; JavaScript
    reads both as Infinity. Walked without recursion.
    """
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:
        item, where = stack.pop()
        kind = type(item)
        if kind is float:
            if not math.isfinite(item):
                return where or "(value)"
        elif kind is int:
            if item > _FLOAT_MAX or item < -_FLOAT_MAX:
                return where or "(value)"
        elif kind is dict:
            stack.extend((child, f"{where}.{key}" if where else str(key))
                         for key, child in reversed(item.items()))  # fmt: skip
        elif kind is list:
            stack.extend((child, f"{where}[{n}]") for n, child in reversed(list(enumerate(item))))
    return None


_FRAGMENT_ID = re.compile(rb'"id"\s*:\s*"([^"\\]{1,200})"')
_FRAGMENT_TYPE = re.compile(rb'"type"\s*:\s*"([^"\\]{1,100})"')
_FRAGMENT_ROLE = re.compile(rb'"role"\s*:\s*"([^"\\]{1,100})"')


def fragment_fields(raw: bytes) -> tuple[str | None, str | None]:
    """Id and a kind ("toolResult", "message", ...) readable from a broken line's prefix."""
    head = raw[:4096]
    found = _FRAGMENT_ID.search(head)
    entry_id = found.group(1).decode("utf-8", "replace") if found else None
    role = _FRAGMENT_ROLE.search(head)
    kind = _FRAGMENT_TYPE.search(head)
    label = role or kind
    return entry_id, (label.group(1).decode("utf-8", "replace") if label else None)


def _describe_json_error(error: Exception) -> str:
    """A short human description of why a line is not accepted as JSON."""
    if isinstance(error, RecursionError):
        return "nested too deeply to parse"
    if isinstance(error, json.JSONDecodeError):
        column = error.pos + 1
        text = error.msg
        if text.startswith("Invalid control character"):
            return f"column {column}: raw control character in string (JSON requires it escaped)"
        if text.startswith("Extra data"):
            return f"column {column}: unexpected data after the JSON value"
        if text.startswith("Unterminated string"):
            return f"column {column}: unterminated string"
        return f"column {column}: {text.lower()}"
    return str(error)


def _has_text(content: Any) -> bool:
    """True if message content has non-blank text (pi's ``hasTextContent``)."""
    if isinstance(content, str):
        return bool(content.strip())
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and block.get("type") == "text":
                text = block.get("text")
                if isinstance(text, str) and text.strip():
                    return True
    return False


@dataclass
class Oddities:
    """Semantic problems pi ignores but a user should see, collected while scanning and
    reported (with the lines they are on) by ``_analyze``."""

    timestamps: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    """Kind ("missing", "numeric", "invalid", "order") -> [(line, offset)]."""
    order_examples: dict[int, int] = field(default_factory=dict)
    """Line of an entry dated before its parent -> the parent's line."""
    non_finite: list[tuple[int, int, str | None, str]] = field(default_factory=list)
    """(line, offset, entry id, where in the record)."""
    tip_switches: list[int] = field(default_factory=list)
    """Entries whose parent is an earlier branch's tip while the entry just before them is on
    another branch (the shape two writers appending at once leave)."""
    branch_from: list[tuple[int, Any]] = field(default_factory=list)
    """(entry index, ``fromId``) of every ``branch_summary``."""
    deep: list[tuple[int, int, int]] = field(default_factory=list)
    """(line, offset, depth) of lines only the iterative decoder could read."""
    long_lines: list[tuple[int, int, int, str | None]] = field(default_factory=list)
    """(line, offset, bytes, id read from its start) of lines over ``MAX_LINE_BYTES``."""

    def timestamp(self, obj: dict[str, Any], key: str, parent_key: str | None, line: int,
                  offset: int, parent_line: int | None) -> None:  # fmt: skip
        """Note what is wrong with an entry's ``timestamp`` (called only when something is)."""
        value = obj.get("timestamp")
        if not isinstance(value, str):
            kind = (
                "missing" if value is None
                else "numeric" if isinstance(value, (int, float)) and not isinstance(value, bool)
                else "invalid"
            )  # fmt: skip
        elif not key:
            kind = "invalid"
        elif parent_key and key < parent_key:
            kind = "order"
            if parent_line is not None:
                self.order_examples[line] = parent_line
        else:
            return
        self.timestamps.setdefault(kind, []).append((line, offset))


def _core_idle() -> bool:
    """True when the machine has a core to spare for the hashing thread (load average at most
    the core count minus one). On a busy machine a lone process's thread takes its time out of
    the same share and every GIL hand-over waits for the scheduler: measured at load ~9 on 2
    cores, loads hashed on the thread took 10% (100k entries) to 35% (1M) longer than hashed
    inline. The app asks for the thread anyway (``load_session``'s ``hash_thread``)."""
    try:
        return os.getloadavg()[0] <= (os.cpu_count() or 1) - 1
    except OSError:  # no load average on this system
        return True


def _no_hash(update: Callable[[bytes], None], data: bytes) -> None:
    """The hashing step of a load without a digest: nothing."""


def _head_bytes(parts: list[bytes], limit: int = 4096) -> bytes:
    """The first ``limit`` bytes of ``parts`` joined (without joining all of them)."""
    head = b""
    for part in parts:
        head += part[: limit - len(head)]
        if len(head) >= limit:
            break
    return head


def _size_text(size: int) -> str:
    return f"{size / 1e6:.1f} MB" if size >= 100_000 else f"{size:,} bytes"


class _Scanner:
    """Parses a byte range of the file into a session (used by load and refresh)."""

    def __init__(self, session: Session, fd: int, keep_records: bool) -> None:
        self.s = session
        self.fd = fd
        self.keep = keep_records
        self.source = session._lazy
        if session._oddities is None:
            session._oddities = Oddities()
        self.odd: Oddities = session._oddities
        self.max_entries: int | None = None
        """Stop (``over_limit``) when the index would outgrow the memory limit."""
        self.over_limit = False
        self.hash_thread: bool | None = None
        """Hash big scans on a helper thread; None: when a core is idle (``_core_idle``)."""
        self.loads: Callable[[Any], Any] = _fast_loads
        """Parses a line for the fast path (``_lines``); a tail read backwards hands over the
        lines it parsed (``_TailLines.index_into``)."""
        self.on_record: RecordHook | None = None
        """Called with each entry indexed, its parsed, migrated record and its line's bytes
        (``load_session``)."""

    # -- reading ---------------------------------------------------------------------

    def scan(
        self,
        parse_from: int,
        hash_from: int,
        end: int,
        progress: Callable[[LoadProgress], None] | None,
        cancel: threading.Event | None,
    ) -> bool:
        """Parse lines starting at ``parse_from`` up to ``end``; hash bytes from
        ``hash_from`` (unless the session is loaded without a digest). Returns False if
        cancelled."""
        if not self.s._digested:
            return self._scan(parse_from, hash_from, end, progress, cancel, _no_hash)
        # Big scans hash on a second thread (hashlib releases the GIL), overlapping parsing;
        # that thread also reads the next chunk while this one is parsed (``os.pread`` too).
        hashing: ThreadPoolExecutor | None = None
        pending: list[Future[None]] = []
        threaded = self.hash_thread if self.hash_thread is not None else _core_idle()
        if end - parse_from > BACKGROUND_HASH_MIN and threaded:
            from concurrent.futures import ThreadPoolExecutor

            hashing = ThreadPoolExecutor(max_workers=1, thread_name_prefix="session-hash")

        def hash_work(update: Callable[[bytes], None], data: bytes) -> None:
            if hashing is None:
                update(data)
                return
            # Reading can outrun hashing (skipped long lines are not parsed): wait for the
            # oldest chunk so the queued bytes stay bounded.
            while len(pending) >= HASH_QUEUE_CHUNKS:
                pending.pop(0).result()
            pending.append(hashing.submit(update, data))

        def read_ahead(size: int, at: int) -> Future[bytes]:
            assert hashing is not None
            return hashing.submit(os.pread, self.fd, size, at)

        try:
            return self._scan(
                parse_from,
                hash_from,
                end,
                progress,
                cancel,
                hash_work,
                read_ahead if hashing is not None else None,
            )
        finally:
            if hashing is not None:
                hashing.shutdown(wait=True)
                for future in pending:
                    future.result()

    def _scan(
        self,
        parse_from: int,
        hash_from: int,
        end: int,
        progress: Callable[[LoadProgress], None] | None,
        cancel: threading.Event | None,
        hash_work: Callable[[Callable[[bytes], None], bytes], None],
        read_ahead: Callable[[int, int], Future[bytes]] | None = None,
    ) -> bool:
        """``_scan`` of ``scan``; ``read_ahead(size, offset)`` starts reading the next chunk
        elsewhere while this one is parsed."""
        s = self.s
        fd = self.fd
        hasher = s._hasher
        body_hasher = s._body_hasher
        pieces: list[bytes] = []
        pending = 0  # bytes of the unfinished line held in ``pieces``
        long_line: list[Any] | None = None  # [first bytes, size] of a line being skipped
        line_start = parse_from
        position = parse_from
        last_report = -PROGRESS_INTERVAL  # the first chunk's report says how far it got
        ahead: Future[bytes] | None = None  # the read of the chunk at ``position``
        while position < end:
            if self.max_entries is not None and len(s.entries) > self.max_entries:
                self.over_limit = True
                return False
            if cancel is not None and cancel.is_set():
                s._end_offset = line_start
                s._hashed_to = position
                return False
            if ahead is not None:
                data = ahead.result()
                ahead = None
            else:
                data = os.pread(fd, min(CHUNK_SIZE, end - position), position)
            if read_ahead is not None and data and position + len(data) < end:
                ahead = read_ahead(
                    min(CHUNK_SIZE, end - position - len(data)), position + len(data)
                )
            if not data:
                end = position  # the file shrank under us; stop at what exists
                break
            chunk = data
            chunk_start = position
            position += len(data)
            newline = data.find(b"\n")
            if long_line is not None:
                # Inside a line over MAX_LINE_BYTES: count its bytes, keep none of them.
                if newline < 0:
                    long_line[1] += len(data)
                    data = b""
                else:
                    long_line[1] += newline
                    line_start = self._long_line(long_line, line_start, True)
                    long_line = None
                    data = data[newline + 1 :]
                    newline = data.find(b"\n")
            pending += len(data) if newline < 0 else newline
            if pending > MAX_LINE_BYTES:
                long_line = [_head_bytes([*pieces, data]), pending]
                pieces = []
                pending = 0
                if newline >= 0:
                    line_start = self._long_line(long_line, line_start, True)
                    long_line = None
                    data = data[newline + 1 :]
                    newline = data.find(b"\n")
                else:
                    data = b""
            if newline < 0:
                if data:
                    pieces.append(data)
            else:
                if pieces:
                    pieces.append(data)
                    data = b"".join(pieces)
                    pieces = []
                stop = data.rfind(b"\n") + 1  # the complete lines: data[:stop]
                first = 0
                # A line over the cap: only possible when the cap is below CHUNK_SIZE.
                at = 0
                while len(data) > MAX_LINE_BYTES and at < stop:
                    nl = data.find(b"\n", at, stop)
                    if nl - at > MAX_LINE_BYTES:
                        line_start = self._lines(data, first, at, line_start)
                        line_start = self._long_line(
                            [data[at : at + 4096], nl - at], line_start, True
                        )
                        first = nl + 1
                    at = nl + 1
                line_start = self._lines(data, first, stop, line_start)
                pending = len(data) - stop
                if pending:
                    pieces.append(data[stop:])
            # Hash after parsing: parsing line 1 may reveal an oh-my-pi title slot, whose
            # bytes the body hash (used by refresh) leaves out.
            if position > hash_from:
                fresh = chunk if chunk_start >= hash_from else chunk[hash_from - chunk_start :]
                hash_work(hasher.update, fresh)
                if s._body_hasher is not None:
                    if body_hasher is None:
                        body_hasher = s._body_hasher
                        skip = s._body_start - max(chunk_start, hash_from)
                        hash_work(body_hasher.update, fresh[skip:] if skip > 0 else fresh)
                    else:
                        hash_work(body_hasher.update, fresh)
            if progress is not None:
                now = time.monotonic()
                if now - last_report >= PROGRESS_INTERVAL:
                    last_report = now
                    progress(LoadProgress(line_start, end, len(s.entries)))
        if long_line is None and pending > MAX_LINE_BYTES:
            long_line = [_head_bytes(pieces), pending]
        if long_line is not None:
            line_start = self._long_line(long_line, line_start, False)
        elif pieces:
            raw = b"".join(pieces)
            self.process_line(raw, line_start, False)
            line_start += len(raw)
        s._end_offset = line_start
        s._hashed_to = max(position, hash_from)
        if progress is not None:
            progress(LoadProgress(line_start, end, len(s.entries)))
        return True

    # -- one line ----------------------------------------------------------------------

    def _long_line(self, long_line: list[Any], line_start: int, terminated: bool) -> int:
        """Note a line over ``MAX_LINE_BYTES`` (``[first bytes, size]``); returns the next
        line's offset. Its id, read from its first bytes, counts as taken."""
        s = self.s
        head: bytes = long_line[0]
        size: int = long_line[1]
        s.line_count += 1
        s._last_line_start = line_start
        entry_id, _ = fragment_fields(head)
        if entry_id is not None:
            s._fragments.setdefault(entry_id, s.line_count)
        if not terminated:
            s._torn_line = (s.line_count, line_start)  # unknown whether it is complete
        self.odd.long_lines.append((s.line_count, line_start, size, entry_id))
        return line_start + size + (1 if terminated else 0)

    def _lines(self, data: bytes, first: int, upto: int, line_start: int) -> int:
        """Index the complete lines ``data[first:upto]`` (each ends with ``\n``, the first
        at file offset ``line_start``); returns the offset after them.

        The common case (a v3 ``message`` entry with a fresh id, valid UTF-8, strict JSON,
        no CR) is handled inline here, because per-line overhead decides whether indexing
        keeps up with bare ``json.loads``; everything else goes through ``process_line``.
        A line is parsed from a view of ``data`` (``orjson`` reads a ``memoryview``): no
        copy of it is made unless the general path needs its bytes (``on_record`` gets the view).
        """
        s = self.s
        fast = s.version == CURRENT_VERSION and s.header_valid and s._first_object_seen
        process = self.process_line
        loads = self.loads
        fast_errors = _FAST_ERRORS
        # The entry's columns (``EntryTable.add``, inlined: a call per line costs ~5%).
        table = s._table
        ids_add, parents_add = table._ids.append, table._parents.append
        message_code = table.type_code("message")
        types_add, roles_add = table._types.append, table._roles.append
        role_codes = table._role_names._codes
        # Every line here ends with a newline: at most ``upto - first`` more lines and bytes.
        table.make_room(s.line_count + upto - first, line_start + upto - first)
        lines_of = table._lines
        lines_add, offsets_add, sizes_add = (
            lines_of.append,
            table._offsets.append,
            table._sizes.append,
        )
        broken_ids = table._parent_ids
        stamps = table.timestamps
        packed = stamps._packed
        if keep := self.keep:
            if table._records is None:
                table._records = [None] * len(table)
            records_add = table._records.append
        elif self.source is not None:
            table._source = self.source
        latest = s._latest
        # ``ChildLists.append_entry`` and the first child of ``add``, inlined (two calls a line).
        add_child = s._children.add
        only_child = s._children._only
        add_child_slot = only_child.append
        depths = s._depth
        settings_above = s._setting_above
        ts_keys = s._table.timestamps
        roots = s._roots
        unresolved = s._unresolved
        calls_of = s._calls
        result_call = s._result_call
        quiet = s._quiet_assistants
        odd = self.odd
        switches = odd.tip_switches
        omp_faults = s._omp_faults
        # The packed timestamp of the entry just added (in a chain, the next one's parent).
        last_stamp: bytes | None = None
        roles = _ROLES
        on_record = self.on_record
        line_no = s.line_count
        index = len(table)
        added = False
        view = memoryview(data)
        find = data.find
        at = first
        while at < upto:
            end = find(b"\n", at, upto)
            line_no += 1
            size = end - at
            offset = line_start
            line_start += size + 1
            line_at = at
            at = end + 1
            if fast and size and data[line_at] == 123 and data[end - 1] != 13:  # "{", not CR
                line = view[line_at:end]
                try:
                    obj = loads(line)
                except fast_errors:
                    obj = None
                if obj is not None and obj.get("type") == "message":
                    entry_id = obj.get("id")
                    parent_id = obj.get("parentId", False)
                    message = obj.get("message")
                    if (
                        type(entry_id) is str
                        and entry_id
                        and entry_id not in latest
                        and (parent_id is None or type(parent_id) is str)
                        and type(message) is dict
                        and type(message.get("role")) is str
                    ):
                        role = message["role"]
                        role = roles.get(role, role)  # one string object per role
                        role_code = role_codes.get(role)
                        if role_code is None:
                            role_code = table.role_code(role)
                            roles_add = table._roles.append  # the column may have widened
                        if role == "assistant":
                            content = message.get("content")
                            has_text = False
                            call_ids: list[str] = []
                            if type(content) is list:
                                for block in content:
                                    if type(block) is dict:
                                        kind = block.get("type")
                                        if kind == "text":
                                            text_value = block.get("text")
                                            if type(text_value) is str and text_value.strip():
                                                has_text = True
                                        elif kind == "toolCall":
                                            call_id = block.get("id")
                                            if type(call_id) is str:
                                                call_ids.append(call_id)
                                    elif block is None:
                                        s._omp_context_faults[index] = content_fault_of(content)
                            elif type(content) is str:
                                has_text = bool(content.strip())
                            else:
                                s._omp_context_faults[index] = content_fault_of(content)
                            if call_ids:
                                stop = message.get("stopReason")
                                calls_of[index] = (tuple(call_ids), stop in ("aborted", "error"))
                            if not has_text:
                                stop = message.get("stopReason")
                                if not stop or stop in ("stop", "toolUse"):
                                    quiet.add(index)
                            usage = message.get("usage")
                            if usage is not None:  # none at all: nothing to sum (no call)
                                fault = usage_fault(usage)
                                if fault is not None:
                                    omp_faults.append((line_no, offset, entry_id, fault))
                        elif role == "toolResult":
                            call_id = message.get("toolCallId")
                            if type(call_id) is str:
                                result_call[index] = call_id
                            if message.get("toolName") == "task":
                                fault = message_usage_fault(role, message)
                                if fault is not None:
                                    omp_faults.append((line_no, offset, entry_id, fault))
                        if parent_id is None:
                            parent = None
                        else:
                            parent = latest.get(parent_id)
                            if parent is None:
                                unresolved.append((index, parent_id))
                                broken_ids[index] = parent_id
                        timestamp = obj.get("timestamp")
                        if type(timestamp) is not str:
                            timestamp = ""
                        if (len(timestamp) == 24 and timestamp[23] == "Z" and timestamp[10] == "T"
                                and timestamp.isascii()):  # fmt: skip
                            # pi's shape: its own sort key, packed (compared as bytes).
                            key = timestamp
                            stamp = timestamp.encode("ascii")
                            if parent is not None:
                                above: bytes | bytearray
                                if parent == index - 1 and last_stamp is not None:
                                    above = last_stamp  # a chain: the line just read
                                else:
                                    above = packed[parent * 24 : parent * 24 + 24]
                                if (stamp < above or stamps._keys
                                        or stamps._other) and key < ts_keys[parent]:  # fmt: skip
                                    odd.timestamp(obj, key, ts_keys[parent], line_no, offset,
                                                  lines_of[parent])  # fmt: skip
                            packed += stamp
                            last_stamp = stamp
                        else:
                            key = timestamp_key(timestamp)
                            if not key or (parent is not None and key < ts_keys[parent]):
                                if parent is None:
                                    odd.timestamp(obj, key, None, line_no, offset, None)
                                else:
                                    odd.timestamp(obj, key, ts_keys[parent], line_no, offset,
                                                  lines_of[parent])  # fmt: skip
                            stamps.append(timestamp, key)
                            last_stamp = None
                        ids_add(entry_id)
                        parents_add(-1 if parent is None else parent)
                        types_add(message_code)
                        roles_add(role_code)
                        lines_add(line_no)
                        offsets_add(offset)
                        sizes_add(size)
                        if keep:
                            records_add(obj)
                        if on_record is not None:
                            on_record(index, "message", role, offset, obj, line)
                        add_child_slot(NO_CHILD)
                        if parent is None:
                            depths.append(0)
                            settings_above.append(-1)
                            roots.append(index)
                        else:
                            depths.append(depths[parent] + 1)
                            settings_above.append(settings_above[parent])
                            if only_child[parent] == NO_CHILD:
                                only_child[parent] = index
                                if parent != index - 1:
                                    switches.append(index)
                            else:
                                add_child(parent, index, ts_keys)  # a sibling: sorted in
                        latest[entry_id] = index
                        if "generator" in obj and written_by_us(obj):
                            s._ours.append(index)
                        index += 1
                        added = True
                        continue
            # Anything unusual: the general path (rare).
            if added:
                s._leaf = index - 1
                s._leaves_cache = None
                added = False
            s.line_count = line_no - 1
            # The fast path's value, if it parsed the line, is not parsed again.
            tried = fast and size and data[line_at] == 123 and data[end - 1] != 13
            process(data[line_at:end], offset, True, obj if tried else None)
            index = len(table)
            last_stamp = None
            # The general path may have widened a column (``EntryTable.make_room``, ``role_code``).
            types_add, roles_add = table._types.append, table._roles.append
            lines_of, offsets_add = table._lines, table._offsets.append
            lines_add = lines_of.append
            if not fast:
                fast = s.version == CURRENT_VERSION and s.header_valid and s._first_object_seen
        s.line_count = line_no
        if upto > first:
            s._last_line_start = offset  # the last line's
        if added:
            s._leaf = index - 1
            s._leaves_cache = None
        return line_start

    def process_line(self, raw: bytes, offset: int, terminated: bool, value: Any = None) -> None:
        """Parse and index one physical line (``raw`` excludes the ``\\n``); ``value``: the
        line already parsed by ``_fast_loads`` (a tail read backwards, ``_TailLines``), or
        None."""
        s = self.s
        s.line_count += 1
        line_no = s.line_count
        s._last_line_start = offset
        try:
            self._process(raw, line_no, offset, terminated, value)
        except Exception as error:  # noqa: BLE001 - one bad line must never stop the load
            s._diag(
                WARN,
                "internal-error",
                f"could not be indexed ({type(error).__name__}: {error}); skipped",
                line_no,
                offset,
            )

    def _process(
        self, raw: bytes, line_no: int, offset: int, terminated: bool, value: Any = None
    ) -> None:
        s = self.s
        if terminated and raw[-1:] == b"\r":
            if not s._crlf_lines:
                s._crlf_first = (line_no, offset)
            s._crlf_lines += 1
        obj: Any = value
        # Fast path: a line that starts with "{" and is valid UTF-8 and strict JSON.
        if obj is None and raw[:1] == b"{" and offset:
            try:
                obj = _fast_loads(raw)
            except _FAST_ERRORS:
                obj = None
        if obj is None:
            obj = self._slow_parse(raw, line_no, offset, terminated)
            if obj is _SKIP:
                return
            # Only the strict path accepts numbers JSON.parse reads as Infinity.
            where = non_finite_path(obj)
            if where is not None:
                entry_id = obj.get("id") if isinstance(obj, dict) else None
                self.odd.non_finite.append(
                    (line_no, offset, entry_id if isinstance(entry_id, str) else None, where)
                )
        if not isinstance(obj, dict):
            if obj is None:
                s._omp_faults.append((line_no, offset, None, null_line_fault()))
            kind = "null" if obj is None else type(obj).__name__
            kind = {"str": "string", "list": "array", "bool": "boolean", "float": "number",
                    "int": "number"}.get(kind, kind)  # fmt: skip
            s._diag(
                WARN,
                "not-object",
                f"JSON value is not an object ({kind}); skipped",
                line_no,
                offset,
            )
            return
        if terminated and s._first_object_seen:
            record_type = obj.get("type")
            if record_type != "session":
                self._entry(obj, record_type, raw, line_no, offset)  # the common case
                return
        if not terminated:
            s._diag(
                WARN,
                "no-final-newline",
                "last line has no newline; the record is complete and "
                "accepted (an append must start with a newline)",
                line_no,
                offset,
            )
        self._accept(obj, raw, line_no, offset)

    def _slow_parse(self, raw: bytes, line_no: int, offset: int, terminated: bool) -> Any:
        """Full checks for a line the fast path did not accept: BOM, blank, invalid UTF-8,
        JSON errors (with a precise message). Returns the value or ``_SKIP``."""
        s = self.s
        text_bytes = raw
        if offset == 0 and raw.startswith(BOM):
            text_bytes = raw[3:]
            s._diag(
                WARN,
                "bom",
                "starts with a UTF-8 byte-order mark; ignored (pi -c will not resume this file)",
                line_no,
                0,
            )
        if not text_bytes.strip():
            s._blank_lines += 1
            return _SKIP
        try:
            text = text_bytes.decode("utf-8")
        except UnicodeDecodeError as error:
            text = text_bytes.decode("utf-8", "replace")
            column = error.start + 1 + (len(raw) - len(text_bytes))
            s._diag(
                WARN,
                "invalid-utf8",
                f"column {column}: not UTF-8; shown with U+FFFD (the bytes on disk are left alone)",
                line_no,
                offset,
            )
            if not text.strip():
                s._blank_lines += 1
                return _SKIP
        try:
            return _decode(text)
        except RecursionError:
            pass  # JSON.parse has no such limit: read it iteratively below
        except ValueError as error:
            why = _describe_json_error(error)
            if text.startswith("\ufeff"):
                why = "starts with a byte-order mark (only allowed at the start of the file)"
            self._bad_line(raw, line_no, offset, terminated, why)
            return _SKIP
        try:
            value = decode_deep(text)
        except ValueError as error:
            why = _describe_json_error(error) + f" (nested {_text_depth(text)} levels deep)"
            self._bad_line(raw, line_no, offset, terminated, why)
            return _SKIP
        self.odd.deep.append((line_no, offset, _text_depth(text)))
        return value

    def _bad_line(self, raw: bytes, line_no: int, offset: int, terminated: bool, why: str) -> None:
        s = self.s
        entry_id, kind = fragment_fields(raw)
        if entry_id is not None:
            s._fragments.setdefault(entry_id, line_no)
        if not terminated:
            record = f"{entry_id} ({kind or 'record'})" if entry_id else "its record"
            s._torn_line = (line_no, offset)
            s._diag(
                WARN,
                "torn-tail",
                f"incomplete record ({len(raw)} bytes, no newline): {torn_tail_cause(record)}",
                line_no,
                offset,
                entry_id,
            )
            return
        preview = raw[:40].decode("utf-8", "replace")
        s._diag(
            WARN,
            "invalid-json",
            f"not valid JSON ({why}); skipped"
            + (f" [starts {preview!r}]" if not entry_id else f" [record {entry_id}]"),
            line_no,
            offset,
            entry_id,
        )

    def _accept(self, obj: dict[str, Any], raw: bytes, line_no: int, offset: int) -> None:
        s = self.s
        kind = obj.get("type")
        if not s._first_object_seen:
            s._first_object_seen = True
            if kind == "title" and line_no == 1 and "id" not in obj:
                s.title_slot = obj
                s._body_start = offset + len(raw) + 1
                s._body_hasher = hashlib.sha256()
                s._first_object_seen = False  # the header may still come next
                s._diag(INFO, TITLE_SLOT, title_slot_note(obj, len(raw) + 1), 1, 0)
                return
            if kind == "session":
                self._header(obj, line_no, offset)
                s._v1_objects.append(None)
                return
            s._diag(
                WARN,
                "no-header",
                f"the first record is a {kind if isinstance(kind, str) else 'record'}, not a "
                "session header; this is not a valid pi session. Opening it with "
                "`pi --session` would overwrite it with an empty session: copy it first.",
                line_no,
                offset,
            )
        if kind == "session":
            s._v1_objects.append(None)
            s._diag(
                WARN,
                "extra-header",
                "second session header ignored",
                line_no,
                offset,
            )
            return
        self._entry(obj, kind, raw, line_no, offset)

    def _header(self, obj: dict[str, Any], line_no: int, offset: int) -> None:
        s = self.s
        raw_version = obj.get("version", 1)
        version: int | None
        if type(raw_version) is int:
            version = raw_version
        elif type(raw_version) is float and raw_version.is_integer():
            version = int(raw_version)
        else:
            version = None
            s._diag(
                WARN,
                "header-invalid",
                f"header version {raw_version!r} is not an integer",
                line_no,
                offset,
            )
        s.version = version
        s.header = migrate_header(obj, version)
        s.header_line = line_no
        id_ok = isinstance(obj.get("id"), str)
        if not id_ok:
            s._diag(
                WARN,
                "header-invalid",
                "session header has no string id; pi would treat the file as "
                "invalid and overwrite it",
                line_no,
                offset,
            )
        s.header_valid = id_ok and version is not None
        if version is not None and version > CURRENT_VERSION:
            s._diag(
                WARN,
                "version-future",
                f"written by a newer format (version {version}); this tool reads version "
                f"{CURRENT_VERSION}: read-only",
                line_no,
                offset,
            )
        elif version is not None and version < CURRENT_VERSION:
            s._diag(
                WARN,
                "version-old",
                f"version {version} session: migrated in memory, read-only. pi migrates it "
                "by rewriting the file"
                + (" with new random ids" if version < 2 else "")
                + "; open it once in pi before compacting here",
                line_no,
                offset,
            )

    def _entry(self, obj: dict[str, Any], kind: Any, raw: bytes, line_no: int, offset: int) -> None:
        s = self.s
        index = len(s.entries)
        version = s.version
        v1 = version is not None and version < 2
        type_name = kind if isinstance(kind, str) else ""
        if not type_name:
            s._diag(WARN, "no-type", "record has no type", line_no, offset)
        parent: int | None = None
        if v1:
            entry_id = v1_entry_id(offset, s._latest)
            parent = index - 1 if index else None
            parent_id = s.entries[parent].id if parent is not None else None
        else:
            raw_id = obj.get("id")
            if isinstance(raw_id, str) and raw_id:
                entry_id = raw_id
            else:
                entry_id = f"~line{line_no}"
                s.synthetic_ids.add(entry_id)
                s._diag(
                    WARN,
                    "missing-id",
                    f"entry has no id; shown as {entry_id}",
                    line_no,
                    offset,
                )
            raw_parent = obj.get("parentId")
            parent_id = raw_parent if isinstance(raw_parent, str) else None
            if raw_parent is None and "parentId" not in obj:
                s._diag(
                    WARN,
                    "missing-parent-field",
                    f"entry {entry_id} has no parentId; treated as a root",
                    line_no,
                    offset,
                    entry_id,
                )
            elif raw_parent is not None and parent_id is None:
                s._diag(
                    WARN,
                    "invalid-parent",
                    f"parentId {raw_parent!r} is not a string; treated as a root",
                    line_no,
                    offset,
                    entry_id,
                )
            if parent_id is not None:
                found = s._latest.get(parent_id)
                if found is None:
                    s._unresolved.append((index, parent_id))
                else:
                    parent = found
            previous = s._latest.get(entry_id)
            if previous is not None and entry_id not in s.synthetic_ids:
                earlier = s.entries[previous]
                if self._same_line(earlier, raw):
                    s._diag(
                        WARN,
                        "duplicate-line",
                        f"repeats line {earlier.line} (identical record "
                        f"{entry_id}); folded into it",
                        line_no,
                        offset,
                        entry_id,
                    )
                    s._leaf = previous
                    return
                s.ambiguous_ids.add(entry_id)
                s._diag(
                    WARN,
                    "duplicate-id",
                    f"id {entry_id} is defined twice with different content (lines "
                    f"{earlier.line} and {line_no}); children resolve to the nearest earlier "
                    "definition",
                    line_no,
                    offset,
                    entry_id,
                )
        timestamp = obj.get("timestamp")
        key = timestamp_key(timestamp)
        # v1 parents are inferred from file order, so only recorded links are checked for order.
        parent_key = s._table.timestamps[parent] if parent is not None and not v1 else None
        if not key or (parent_key and key < parent_key):
            self.odd.timestamp(obj, key, parent_key, line_no, offset,
                               None if parent is None else s.entries[parent].line)  # fmt: skip
        if parent is not None and not s._children[parent] and parent != index - 1:
            self.odd.tip_switches.append(index)
        ours = written_by_us(obj)
        role: str | None = None
        if type_name == "message":
            message = obj.get("message")
            if isinstance(message, dict):
                raw_role = message.get("role")
                if isinstance(raw_role, str):
                    role = raw_role
                    if role == "hookMessage" and version is not None and version < 3:
                        role = "custom"
                    self._message_facts(index, role, message)
                    fault = message_usage_fault(role, message)
                    if fault is not None:
                        s._omp_faults.append((line_no, offset, entry_id, fault))
                else:
                    s._diag(
                        WARN,
                        "message-invalid",
                        f"message {entry_id} has no role; shown as empty",
                        line_no,
                        offset,
                        entry_id,
                    )
            else:
                if message is None:
                    s._omp_faults.append(
                        (line_no, offset, entry_id, missing_message_fault(entry_id))
                    )
                s._diag(
                    WARN,
                    "message-invalid",
                    f"message entry {entry_id} has no message object; shown as empty",
                    line_no,
                    offset,
                    entry_id,
                )
        elif type_name == "label":
            s._label_events.append((index, obj.get("targetId"), obj.get("label")))
            s._labels_cache = None
        elif type_name == "session_info":
            name = obj.get("name")
            s.name = name.strip() or None if isinstance(name, str) else None
        elif type_name == "branch_summary":
            self.odd.branch_from.append((index, obj.get("fromId")))
        elif type_name == "compaction":
            s._compactions[index] = (obj.get("firstKeptEntryId"), obj.get("summary"))
            omp_field = omp_compaction_field(obj, ours)
            if omp_field is not None:
                s._omp_compactions[index] = omp_field
            if v1 and "firstKeptEntryIndex" in obj:
                s._v1_first_kept_raw[index] = obj.get("firstKeptEntryIndex")
        elif type_name not in KNOWN_ENTRY_TYPES and type_name:
            s._unknown_types.setdefault(type_name, []).append((line_no, offset))
            if s._omp_entry_type is None and type_name in OMP_ONLY_TYPES:
                s._omp_entry_type = type_name
            if type_name == "model_usage" and (fault := usage_fault(obj.get("usage"))):
                s._omp_faults.append((line_no, offset, entry_id, fault))
        if ours:
            s._ours.append(index)
        if v1:
            s._v1_objects.append(index)
        record: dict[str, Any] | None = None
        if self.keep:
            record = obj
            if version is not None and version < CURRENT_VERSION:
                migrate_record(record, version=version, entry_id=entry_id, parent_id=parent_id)
        entry = Entry(
            index,
            entry_id,
            parent_id,
            type_name,
            timestamp if isinstance(timestamp, str) else "",
            line_no,
            offset,
            len(raw),
            role,
            parent,
            record,
            None if self.keep else self.source,
        )
        s._add_entry(entry)
        if self.on_record is not None:
            if record is None:
                record = obj
                if version is not None and version < CURRENT_VERSION:
                    migrate_record(record, version=version, entry_id=entry_id, parent_id=parent_id)
            self.on_record(index, type_name, role, offset, record, raw)

    def _message_facts(self, index: int, role: str, message: dict[str, Any]) -> None:
        """Remember tool-call ids and results (small) for the orphan/dangling checks."""
        s = self.s
        if role == "assistant":
            content = message.get("content")
            fault = content_fault(content)
            if fault is not None:
                s._omp_context_faults[index] = fault
            stop_reason = message.get("stopReason")
            if not _has_text(content) and (not stop_reason or stop_reason in ("stop", "toolUse")):
                s._quiet_assistants.add(index)  # pi's /tree hides these (tool calls only)
            if isinstance(content, list):
                calls = tuple(
                    block["id"]
                    for block in content
                    if isinstance(block, dict)
                    and block.get("type") == "toolCall"
                    and isinstance(block.get("id"), str)
                )
                if calls:
                    stopped = message.get("stopReason") in ("aborted", "error")
                    s._calls[index] = (calls, stopped)
        elif role == "toolResult":
            call_id = message.get("toolCallId")
            if isinstance(call_id, str):
                s._result_call[index] = call_id

    def _same_line(self, earlier: Entry, raw: bytes) -> bool:
        """True if ``raw`` is byte-identical (ignoring a CR) to ``earlier``'s line."""
        if earlier.size != len(raw) and abs(earlier.size - len(raw)) != 1:
            return False
        try:
            old = os.pread(self.fd, earlier.size, earlier.offset)
        except OSError:
            return False
        if earlier.offset == 0 and old.startswith(BOM):
            old = old[3:]
        return old.rstrip(b"\r") == raw.rstrip(b"\r")


# ---------------------------------------------------------------------- tree analysis


def _analyze(s: Session) -> None:
    """Recompute the tree-level diagnostics (cheap: uses only the in-memory index)."""
    s._tree_diags = []
    entries = s.entries
    diag = s._diag
    for index, parent_id in s._unresolved:
        entry = entries[index]
        later = s._latest.get(parent_id)
        if parent_id == entry.id and (later is None or later == index):
            text = f"entry {entry.id} is its own parent; treated as a root"
        elif later is not None:
            text = f"parent {parent_id} is defined later (line {entries[later].line}); link ignored"
        elif parent_id in s._fragments:
            text = (
                f"parent {parent_id} not found (line "
                f"{s._fragments[parent_id]} holds it but could not be parsed); entries below "
                "it are shown under a placeholder"
            )
        else:
            text = f"parent {parent_id} not found; entries below it are shown under a placeholder"
        diag(WARN, "missing-parent", text, entry.line, entry.offset, entry.id, tree=True)
    _check_labels(s)
    _check_oddities(s)
    _check_v1_first_kept(s)
    _check_compactions(s)
    _check_tool_pairs(s)
    for type_name, lines in s._unknown_types.items():
        shown = ", ".join(str(n) for n, _ in lines[:5]) + (" ..." if len(lines) > 5 else "")
        diag(
            INFO,
            "unknown-type",
            f"unknown entry type {type_name!r} on line(s) {shown}: kept as an opaque node",
            lines[0][0],
            lines[0][1],
            tree=True,
        )
    if s._crlf_lines:
        diag(
            INFO,
            "crlf",
            f"CRLF line endings ({s._crlf_lines} lines, the first here); appends use LF like pi",
            s._crlf_first[0],
            s._crlf_first[1],
            tree=True,
        )


TIMESTAMP_PROBLEMS = {
    "missing": "no timestamp",
    "numeric": "a numeric timestamp (pi writes an ISO string)",
    "invalid": "a timestamp that is not a date",
    "order": "a timestamp earlier than its parent's",
}
INTERLEAVED_SWITCHES = 2
"""Back-and-forth switches between two growing branches before the file is said to have two
writers (one can be a user going back to an old branch's last entry)."""


def _lines_listed(lines: list[int]) -> str:
    return ", ".join(str(n) for n in lines[:5]) + (" ..." if len(lines) > 5 else "")


def _check_oddities(s: Session) -> None:
    """Timestamps, non-finite numbers, branch summaries' ``fromId``, two writers, deep data."""
    odd: Oddities | None = s._oddities
    if odd is None:
        return
    entries = s.entries
    for kind, where in odd.timestamps.items():
        if not where:
            continue
        line, offset = where[0]
        if len(where) == 1:
            what = f"entry has {TIMESTAMP_PROBLEMS[kind]}"
        else:
            lines = _lines_listed([n for n, _ in where])
            what = f"{len(where)} entries have {TIMESTAMP_PROBLEMS[kind]} (lines {lines})"
        if kind == "order" and line in odd.order_examples:
            what += f"; this one is dated before its parent on line {odd.order_examples[line]}"
        s._diag(
            WARN,
            f"timestamp-{kind}",
            f"{what}; pi orders siblings by timestamp, so the tree may not follow the file",
            line,
            offset,
            tree=True,
        )
    for line, offset, entry_id, path in odd.non_finite[:20]:
        s._diag(
            WARN,
            "non-finite-number",
            f"{path} is a number too large for a double (pi reads it as Infinity); token "
            "figures computed from it are not meaningful",
            line,
            offset,
            entry_id,
            tree=True,
        )
    for index, from_id in odd.branch_from:
        entry = entries[index]
        if from_id == "root":
            problem = (
                'fromId is the "root" sentinel, not an entry: pi writes it when the summary '
                "starts a new root, so which branch it summarizes is not recorded"
            )
        elif not isinstance(from_id, str):
            problem = f"fromId {from_id!r} is not an entry id"
        elif from_id not in s._latest:
            problem = f"fromId {from_id} names no entry in this file"
        else:
            continue
        s._diag(WARN, "branch-from-invalid", f"branch summary {entry.id}: {problem}",
                entry.line, entry.offset, entry.id, tree=True)  # fmt: skip
    interleaved = [i for i in odd.tip_switches if i > 0 and s._children[i - 1]]
    if len(interleaved) >= INTERLEAVED_SWITCHES:
        first = entries[interleaved[0]]
        parent = entries[first.parent] if first.parent is not None else None
        s._diag(
            WARN,
            "interleaved-writers",
            f"entries of two branches alternate: line {first.line} continues the branch "
            f"ending on line {parent.line if parent else '?'} while the branch of line "
            f"{entries[first.index - 1].line} keeps growing too ({len(interleaved)} such "
            f"switches, lines {_lines_listed([entries[i].line for i in interleaved])}). Two "
            "processes probably appended to this file at the same time; each one's leaf "
            "orphans the other's entries",
            first.line,
            first.offset,
            first.id,
            tree=True,
        )
    for line, offset, depth in odd.deep:
        s._diag(
            INFO,
            "deeply-nested",
            f"nested {depth} levels deep: read iteratively (as JSON.parse does); parts below "
            f"level {DEEP_KEEP_DEPTH} are kept as raw JSON text",
            line,
            offset,
            tree=True,
        )
    for line, offset, size, entry_id in odd.long_lines:
        what = f"{entry_id} is not shown" if entry_id else "its record is not shown"
        s._diag(
            WARN,
            "line-too-long",
            f"line is {_size_text(size)}, over the {_size_text(MAX_LINE_BYTES)} a line may have "
            f"here: skipped without reading it into memory; {what}",
            line,
            offset,
            entry_id,
            tree=True,
        )


def _check_labels(s: Session) -> None:
    for index, target, _ in s._label_events:
        entry = s.entries[index]
        if not isinstance(target, str) or target not in s._latest:
            s._diag(
                WARN,
                "label-missing-target",
                f"label {entry.id} targets {target!r}, which does not exist",
                entry.line,
                entry.offset,
                entry.id,
                tree=True,
            )


def _check_v1_first_kept(s: Session) -> None:
    """v1: ``firstKeptEntryIndex`` counts parsed objects with the header; map it to an id."""
    objects = s._v1_objects
    for index, raw_value in s._v1_first_kept_raw.items():
        entry = s.entries[index]
        target: int | None = None
        problem = None
        if type(raw_value) is not int:
            problem = f"firstKeptEntryIndex {raw_value!r} is not an integer"
        elif not 0 <= raw_value < len(objects):
            problem = f"firstKeptEntryIndex {raw_value} is out of range"
        elif objects[raw_value] is None:
            problem = f"firstKeptEntryIndex {raw_value} points at the session header"
        else:
            target = objects[raw_value]
        first_kept_id = s.entries[target].id if target is not None else None
        s._v1_first_kept[index] = first_kept_id
        s._compactions[index] = (first_kept_id, s._compactions.get(index, (None, None))[1])
        record = entry._record
        if record is not None:
            record.pop("firstKeptEntryIndex", None)
            if first_kept_id is not None:
                record["firstKeptEntryId"] = first_kept_id
        if problem is not None:
            s._diag(
                WARN,
                "v1-first-kept",
                f"compaction {entry.id}: {problem}; no firstKeptEntryId, nothing is kept",
                entry.line,
                entry.offset,
                entry.id,
                tree=True,
            )


def _check_compactions(s: Session) -> None:
    for index, (first_kept, summary) in s._compactions.items():
        entry = s.entries[index]
        where = f"compaction {entry.id}:"
        problems = []
        if not isinstance(summary, str) or not summary:
            problems.append("has no summary (the model gets an empty one)")
        if index in s._v1_first_kept and first_kept is None:
            pass  # already reported by the v1 check
        elif not isinstance(first_kept, str):
            problems.append("has no firstKeptEntryId; nothing before it is kept")
        elif first_kept not in s._latest:
            problems.append(f"firstKeptEntryId {first_kept} not found; nothing is kept")
        elif not _kept_is_ancestor(s, first_kept, index):
            problems.append(
                f"firstKeptEntryId {first_kept} is on another branch (not before the "
                "compaction on its path); nothing is kept"
            )
        for problem in problems:
            s._diag(
                WARN,
                "compaction-invalid",
                f"{where} {problem}",
                entry.line,
                entry.offset,
                entry.id,
                tree=True,
            )


def _kept_is_ancestor(s: Session, first_kept: str, compaction: int) -> bool:
    candidate = s._latest[first_kept]
    if candidate != compaction and s.is_ancestor(candidate, compaction):
        return True
    if first_kept in s.ambiguous_ids:  # another definition may be the ancestor
        return any(
            e.id == first_kept and e.index != compaction and s.is_ancestor(e.index, compaction)
            for e in s.entries[:compaction]
        )
    return False


TOOL_WALK_LIMIT = 10_000


def _chain_is_broken(s: Session, index: int) -> bool:
    """True if the path from ``index`` to its root starts at a broken link."""
    parents = s.parent_column()
    root = index
    while parents[root] >= 0:
        root = parents[root]
    return s.broken_parent(root) is not None


def _check_tool_pairs(s: Session) -> None:
    """Warn about tool results without a call and tool calls without a result.

    A result belongs to the nearest assistant message above it (skipping other results and
    non-message entries). When that walk ends at a broken link or an unreadable message the
    pairing is unknown and nothing is reported for it (the broken link already is).
    """
    entries = s.entries
    calls_of = s._calls
    answered: dict[int, set[str]] = {}  # assistant index -> its calls that have a result
    unknown_pairing: set[str] = set()
    type_of, role_of = s._table.type_of, s._table.role_of
    parents = s.parent_column()
    for index, call_id in s._result_call.items():
        first = parents[index]
        # Usually the parent is the assistant that made the call (only assistant messages
        # have calls): matched without a walk.
        if first >= 0:
            node_calls = calls_of.get(first)
            if node_calls is not None and call_id in node_calls[0]:
                answered.setdefault(first, set()).add(call_id)
                continue
        node = first
        steps = 0
        verdict = "unknown"
        while node >= 0 and steps < TOOL_WALK_LIMIT:
            steps += 1
            if type_of(node) == "message":
                role = role_of(node)
                if role == "assistant":
                    node_calls = calls_of.get(node)
                    if node_calls is not None and call_id in node_calls[0]:
                        answered.setdefault(node, set()).add(call_id)
                        verdict = "matched"
                    else:
                        verdict = "orphan"
                    break
                if role is None:
                    break  # unreadable message: pairing unknown
                if role != "toolResult":
                    verdict = "orphan"
                    break
            node = parents[node]
        else:
            # No assistant above: an orphan, unless a broken link cut the chain (or the walk
            # hit its bound), in which case the pairing is unknown.
            if node < 0 and not _chain_is_broken(s, index):
                verdict = "orphan"
        if verdict == "unknown":
            unknown_pairing.add(call_id)
        elif verdict == "orphan":
            entry = entries[index]
            s._diag(
                WARN,
                "tool-result-orphan",
                f"tool result {entry.id} answers {call_id}, which the "
                "assistant message before it did not call (sent to models as plain text)",
                entry.line,
                entry.offset,
                entry.id,
                tree=True,
            )
    no_answers: set[str] = set()
    for index, (calls, stopped) in calls_of.items():
        got = answered.get(index, no_answers)
        if len(got) == len(calls):
            continue  # every call answered (a repeated call id never gets here)
        missing = [call for call in calls if call not in got and call not in unknown_pairing]
        if not missing:
            continue
        entry = entries[index]
        note = " (the turn was aborted)" if stopped else ""
        s._diag(
            WARN,
            "tool-call-unanswered",
            f"assistant {entry.id} called {', '.join(missing)} but no result follows{note}",
            entry.line,
            entry.offset,
            entry.id,
            tree=True,
        )


# ---------------------------------------------------------------------- verdict


def _finalize(s: Session, total_size: int) -> None:
    """Set verdict and the load-time append refusal from what was found."""
    if s._io_error is not None:
        s.verdict = Verdict.REFUSE
        s.append_refusal = s._io_error
        return
    if s._cancelled:
        s.verdict = Verdict.READ_ONLY
        s.append_refusal = "loading was cancelled; only part of the file was read"
        return
    nothing = s.header is None and not s.entries
    if nothing:
        if total_size == 0:
            message = "empty file (0 bytes), not a pi session"
            code = "empty-file"
        elif s._blank_lines == s.line_count:
            message = f"no session header: the file has only blank lines ({s.line_count})"
            code = "blank-file"
        else:
            message = (
                f"nothing usable: no session header and no entry could be read "
                f"({s.line_count} lines)"
            )
            code = "no-entries"
        first_line = 1 if s.line_count else None
        s._diag(ERROR, code, message, first_line, 0 if first_line else None, tree=True)
        s.verdict = Verdict.REFUSE
        s.append_refusal = message
        return
    from tui_compactor.session.writer import AppendRefused, check_appendable

    try:
        check_appendable(s)  # the append gate's rule, in its words
    except AppendRefused as refused:
        s.append_refusal = f"{refused.reason} {refused.hint}"
        if refused.code in ("A1", "incomplete"):  # not a session this tool appends to
            s.verdict = Verdict.READ_ONLY
            return
    else:
        s.append_refusal = None
    warned = any(d.severity is not Severity.INFO for d in s.diagnostics)
    s.verdict = Verdict.OPEN_WARN if warned else Verdict.OPEN


def _make_snapshot(s: Session, st: os.stat_result, size: int) -> FileSnapshot:
    torn = s._torn_line is not None
    ends_nl = True
    if size and s._end_offset >= size:
        try:
            fd = s._scan_fd
            ends_nl = os.pread(fd, 1, size - 1) == b"\n"
        except OSError:
            ends_nl = False
    return FileSnapshot(
        device=st.st_dev,
        inode=st.st_ino,
        size=size,
        mtime_ns=st.st_mtime_ns,
        sha256=s._hasher.hexdigest() if s._digested else "",
        ends_with_newline=ends_nl,
        torn_tail=torn,
    )


def _samples(s: Session, fd: int, size: int) -> None:
    """Remember the head (after any title slot) and tail of the loaded bytes for refresh."""
    start = s._body_start
    head_len = max(0, min(SAMPLE_BYTES, size - start))
    s._head_sample = os.pread(fd, head_len, start) if head_len else b""
    tail_start = max(start, size - SAMPLE_BYTES)
    s._tail_sample = os.pread(fd, size - tail_start, tail_start) if size > tail_start else b""


# ---------------------------------------------------------------------- memory limit


def memory_limit(size: int) -> int | None:
    """Bytes a session of ``size`` bytes may use: half its size + 150 MB, unless
    ``TUI_COMPACTOR_MEMORY_LIMIT_MB`` says otherwise (0: no limit).

    Raises:
        ConfigError: the variable is not a number of MB (``config_sources.memory_limit_mb``)."""
    megabytes = memory_limit_mb()
    if megabytes is None:
        return size // 2 + 150 * 1024 * 1024
    return None if megabytes == 0 else int(megabytes * 1024 * 1024)


def _entry_limit(limit: int | None) -> int | None:
    """How many entries fit in ``limit`` bytes of memory."""
    if limit is None:
        return None
    return max(0, (limit - BASE_MEMORY) // INDEX_BYTES_PER_ENTRY)


def _too_many_entries(entries: int, size: int, limit: int, estimated: bool) -> str:
    mb = 1024 * 1024
    about = "about " if estimated else "over "
    return (
        f"too many entries for the memory limit: {about}{entries:,} entries in "
        f"{size / 1e6:,.0f} MB need about {(BASE_MEMORY + entries * INDEX_BYTES_PER_ENTRY) // mb:,}"
        f" MB to index, the limit is {limit / mb:,.0f} MB ("
        + (
            "set by " + MEMORY_LIMIT_ENV
            if os.environ.get(MEMORY_LIMIT_ENV, "").strip()
            else "half the file size + 150 MB"
        )
        + f"). Set {MEMORY_LIMIT_ENV}=<MB> (0: no limit) to open it anyway"
    )


def _estimate_entries(fd: int, size: int) -> int:
    """Lines in the file, estimated from the newlines in its first ``MEMORY_SAMPLE_BYTES``."""
    sample = os.pread(fd, min(size, MEMORY_SAMPLE_BYTES), 0)
    if not sample:
        return 0
    return int(_newlines(sample) * size / len(sample))


NEWLINES_BY_FIND = 4096
"""Newlines ``_newlines`` finds one by one before it counts the rest with ``bytes.count``."""


def _newlines(data: bytes) -> int:
    """``data.count(b"\\n")``, quicker on session lines (a few KB each): ``find`` skips to each
    newline (``memchr``), where ``count`` of one byte looks at every byte (4 MB: ~0.3 against
    ~1.4 ms, before a big file's first screen). Past ``NEWLINES_BY_FIND`` newlines (short lines)
    it counts the rest with ``count``: at most ~0.4 ms more than ``count`` alone."""
    find = data.find
    at = find(b"\n")
    found = 0
    while at >= 0:
        found += 1
        if found == NEWLINES_BY_FIND:
            return found + data.count(b"\n", at + 1)
        at = find(b"\n", at + 1)
    return found


# ---------------------------------------------------------------------- public API


def load_session(
    path: str | os.PathLike[str],
    progress: Callable[[LoadProgress], None] | None = None,
    cancel: threading.Event | None = None,
    *,
    lazy: bool | None = None,
    digest: bool = True,
    on_record: RecordHook | None = None,
    hash_thread: bool | None = None,
) -> Session:
    """Load a session file. Never raises for bad content or I/O errors; never writes.

    ``progress`` is called at most ~10 times a second; setting ``cancel`` stops the load
    early (the session is then incomplete and read-only). ``lazy`` forces (True) or
    disables (False) on-demand record reading; by default files over ``LAZY_THRESHOLD``
    bytes are lazy. ``digest=False`` skips the sha256 of the file, for callers that never
    write or refresh: the snapshot's ``sha256`` is then empty, which no file matches, so
    the append gate refuses and a refresh reloads. ``on_record`` (a ``RecordHook``) sees each
    entry's index, type, role and offset with its parsed (migrated, read-only) record and the
    bytes of its line (without the newline) as it is indexed (no ``Entry`` built for it), so
    a pass over most records needs no second read of the file; it must
    not raise. ``hash_thread`` hashes a big file on a
    helper thread (True), inline (False), or on the thread only when a core is idle (None):
    measured under load, a lone process loads faster hashing inline, the app (whose UI thread
    shares the process) faster with the thread.
    """
    with gc_paused():
        try:
            session = _load(Path(path), progress, cancel, lazy, digest, on_record, hash_thread)
        except Exception as error:  # noqa: BLE001 - last resort: report, never crash the caller
            session = Session(Path(path))
            _io_failure(session, f"internal error while loading ({type(error).__name__}: {error})")
            return session
    if session._end_offset >= LAZY_THRESHOLD:
        release_free_memory()  # what parsing a big file left behind
    return session


def _load(
    path: Path,
    progress: Callable[[LoadProgress], None] | None,
    cancel: threading.Event | None,
    lazy: bool | None,
    digest: bool = True,
    on_record: RecordHook | None = None,
    hash_thread: bool | None = None,
) -> Session:
    session = Session(path)
    session._digested = digest
    try:
        fd = os.open(session.path, _OPEN_FLAGS)
    except OSError as error:
        _io_failure(session, f"cannot open: {error.strerror or error}")
        return session
    keep_fd = False
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            _io_failure(session, "not a regular file")
            return session
        size = st.st_size
        try:
            limit = memory_limit(size)
        except ConfigError as error:
            _io_failure(session, str(error), "memory-limit")
            return session
        max_entries = _entry_limit(limit)
        if max_entries is not None and limit is not None:
            estimated = _estimate_entries(fd, size)
            if estimated > max_entries:
                # Refuse before the index grows (the scan re-checks as it goes).
                refusal = _too_many_entries(estimated, size, limit, True)
                _io_failure(session, refusal, "memory-limit")
                return session
        use_lazy = size > LAZY_THRESHOLD if lazy is None else lazy
        if use_lazy:
            session._lazy = _LazyRecords(session, fd)
            keep_fd = True
        session._keep_records = not use_lazy
        session._scan_fd = fd
        scanner = _Scanner(session, fd, keep_records=not use_lazy)
        scanner.max_entries = max_entries
        scanner.hash_thread = hash_thread
        scanner.on_record = on_record
        finished = scanner.scan(0, 0, size, progress, cancel)
        if scanner.over_limit and limit is not None:
            message = _too_many_entries(len(session.entries), size, limit, False)
            session._table.clear()  # the partial index goes; the refusal stays
            _io_failure(session, message, "memory-limit")
            return session
        session.complete = finished
        session._cancelled = not finished
        if not finished:
            session._diag(
                WARN,
                "cancelled",
                f"loading was cancelled after {session._end_offset} of {size} bytes; read-only",
                None,
                None,
            )
        hashed = session._hashed_to
        session.snapshot = _make_snapshot(session, st, hashed)
        _samples(session, fd, hashed)
        _analyze(session)
        _finalize(session, size)
        if session._body_hasher is not None and digest:
            session._body_digest = session._body_hasher.hexdigest()
        return session
    except OSError as error:
        _io_failure(session, f"read error: {error.strerror or error}")
        return session
    finally:
        session._scan_fd = -1
        if not keep_fd:
            os.close(fd)


# ---------------------------------------------------------------------- tail-first preview

PREVIEW_MIN_BYTES = LAZY_THRESHOLD
"""Files smaller than this are indexed whole before anything is shown (it is quick)."""
PREVIEW_FIRST_BYTES = 256 * 1024
"""The first tail read for a preview; it grows by half until it holds the leaf's context and
``PREVIEW_ENTRIES`` entries (what the first screen shows costs parsing: read no more). Each
growth reads only the bytes before what was read and parses only their lines (``_TailLines``);
the preview indexes the lines from the context's first (or the ``PREVIEW_ENTRIES``-th from the
end, if earlier) on, with the values parsed there."""
PREVIEW_ENTRIES = 100
"""Entries a preview wants besides the leaf's context: the tree's first screen and more to
scroll to while the file is indexed. The tail grows for them up to ``PREVIEW_FILL_BYTES``."""
PREVIEW_FILL_BYTES = 1024 * 1024
"""The longest tail read for ``PREVIEW_ENTRIES`` alone (entries of huge tool outputs: a
few of them fill the screen, and reading further delays it)."""
PREVIEW_MAX_BYTES = 8 * 1024 * 1024
"""A leaf whose context reaches further back than this gets no preview (the index comes
soon after; a larger tail would only delay it)."""
PREVIEW_REFUSAL = "still reading the whole file; writing waits until it is indexed"
"""The preview's append refusal (it is a partial, read-only view)."""


def load_tail_preview(
    path: str | os.PathLike[str],
    *,
    first_bytes: int | None = None,
    max_bytes: int | None = None,
    min_size: int | None = None,
) -> Session | None:
    """A read-only partial session of the file's last lines, to show while the whole file is
    indexed: the leaf (the last entry in file order) and its context, back to the first kept
    entry of its latest compaction or to its root, with the entries around them.

    Entry indices and line numbers count from the first line read (``Session.preview``: the
    file's own are known once it is indexed); parents before the tail are absent. Nothing here
    is judged: no diagnostics, the verdict is read-only and ``complete`` False. Returns None
    for files under ``min_size`` bytes, files that are not valid version-3 sessions, files the
    memory limit refuses, and a leaf whose context is not within the last ``max_bytes``.
    Never raises; never writes. The limits default to ``PREVIEW_FIRST_BYTES``,
    ``PREVIEW_MAX_BYTES`` and ``PREVIEW_MIN_BYTES``. The tail's records stay in memory (it is
    small), so showing its rows, the leaf's details and its gauge reads nothing again.
    """
    first = PREVIEW_FIRST_BYTES if first_bytes is None else first_bytes
    most = PREVIEW_MAX_BYTES if max_bytes is None else max_bytes
    least = PREVIEW_MIN_BYTES if min_size is None else min_size
    try:
        with gc_paused():
            return _tail_preview(Path(path), first, most, least)
    except Exception:  # noqa: BLE001 - a preview is optional; the full load reports problems
        return None


def _tail_preview(path: Path, first_bytes: int, max_bytes: int, min_size: int) -> Session | None:
    fd = os.open(path, _OPEN_FLAGS)
    try:
        st = os.fstat(fd)
        size = st.st_size
        if not stat.S_ISREG(st.st_mode) or size < min_size:
            return None
        limit = memory_limit(size)
        max_entries = _entry_limit(limit)
        if max_entries is not None and _estimate_entries(fd, size) > max_entries:
            return None
        header = _preview_header(path, fd, size)
        if header is None:
            return None
        session, header_end = header
        lines = _TailLines(fd, size, header_end)
        tail = first_bytes
        while True:
            lines.grow(tail)
            last = lines.whole or tail >= max_bytes  # the tail cannot grow
            start = lines.preview_start(fill=last or tail >= PREVIEW_FILL_BYTES)
            if start is not None:
                return _preview_of(session, fd, lines, start)
            if last:
                return None
            tail = min(tail * 3 // 2, max_bytes)
    finally:
        os.close(fd)


def _preview_header(path: Path, fd: int, size: int) -> tuple[Session, int] | None:
    """A session of the file's header (and oh-my-pi title slot) alone, and the offset after
    them; None unless it is a valid version-3 header."""
    session = Session(path)
    scanner = _Scanner(session, fd, keep_records=True)
    session._scan_fd = fd
    head = os.pread(fd, min(size, 2 * SAMPLE_BYTES), 0)
    first = head.find(b"\n")
    if first < 0:
        return None
    header_end = first + 1
    scanner.scan(0, size, header_end, None, None)
    if session.title_slot is not None and not session._first_object_seen:
        second = head.find(b"\n", header_end)
        if second < 0:
            return None
        header_end = second + 1
        scanner.scan(first + 1, size, header_end, None, None)
    session._scan_fd = -1
    if session.version != CURRENT_VERSION or not session.header_valid:
        return None
    return session, header_end


class _TailLines:
    """The file's last lines, read backwards in growing pieces: each byte is read once and
    each line parsed once, however far back the tail grows (``grow``). ``preview_start`` says
    from which line the preview holds what it needs; ``index_into`` indexes the lines from
    there with the values parsed here. Lines end at ``\\n`` only; the file's last line may
    have none."""

    def __init__(self, fd: int, size: int, floor: int) -> None:
        self.fd = fd
        self.size = size
        self.floor = floor
        """The offset of the first line after the header: the tail never reaches before it."""
        self.read_from = size
        """The lowest offset read so far."""
        self.cut = b""
        """The bytes from ``read_from`` to the first line held: the end of a line that starts
        before ``read_from``."""
        self.pieces: list[tuple[bytes, int]] = []
        """What was read, in file order: each piece's bytes (whole lines) and its offset."""
        self.offsets: list[int] = []
        """The offset of each line held, in file order."""
        self.values: list[Any] = []
        """Each line's value as the index parses it (``_fast_loads``), or None: it does not
        start with ``{`` or is not strict JSON."""
        self.fast: list[bool] = []
        """Whether the index's fast path parses the line (it starts with ``{`` and does not
        end with CR): it asks for those values, in file order (``index_into``)."""
        self.torn = False
        """Whether the file's last line has no ``\\n`` (the last line held)."""

    @property
    def whole(self) -> bool:
        """Whether every line after the header is held."""
        return self.read_from <= self.floor

    def grow(self, tail: int) -> None:
        """Hold every line that starts within the last ``tail`` bytes (and after the header),
        reading only the bytes not read yet."""
        low = max(self.floor, self.size - tail)
        if low >= self.read_from:
            return
        # One byte before ``low`` too: a line starts at ``low`` if that byte ends a line.
        at = low - 1 if low > self.floor else low
        data = os.pread(self.fd, self.read_from - at, at) + self.cut
        self.read_from = low
        if at < low:
            newline = data.find(b"\n")
            if newline < 0:  # still inside one line
                self.cut = data[1:]
                return
            self.cut = data[1 : newline + 1]
            first = at + newline + 1
            data = data[newline + 1 :]
        else:
            self.cut = b""
            first = low
        if not data:
            return
        if not self.pieces and data[-1:] != b"\n":
            self.torn = True  # the file's last line (the first piece read is the last)
        view = memoryview(data)
        loads = _fast_loads
        errors = _FAST_ERRORS
        offsets: list[int] = []
        values: list[Any] = []
        fast: list[bool] = []
        find = data.find
        position = 0
        end_of_data = len(data)
        while position < end_of_data:
            end = find(b"\n", position)
            if end < 0:
                end = end_of_data
            value: Any = None
            if end > position and data[position] == 123:  # "{"
                try:
                    value = loads(view[position:end])
                except errors:
                    value = None
            offsets.append(first + position)
            values.append(value)
            fast.append(end > position and data[position] == 123 and data[end - 1] != 13)
            position = end + 1
        self.pieces.insert(0, (data, first))
        self.offsets[:0] = offsets
        self.values[:0] = values
        self.fast[:0] = fast

    def preview_start(self, *, fill: bool) -> int | None:
        """The first line the preview needs, or None while the tail does not hold it: the
        leaf's context (``_context_start``, walked over the parsed lines) and then as many of
        ``PREVIEW_ENTRIES`` entries as there are, unless ``fill`` (the tail read enough for
        them). The preview's index checks the context again (``_preview_of``)."""
        values = self.values
        entries = [
            i
            for i, value in enumerate(values)
            if type(value) is dict and value.get("type") != "session"
        ]
        if not entries:
            return None
        line_of_id: dict[str, list[int]] = {}
        for i in entries:
            entry_id = values[i].get("id")
            if type(entry_id) is str and entry_id:
                line_of_id.setdefault(entry_id, []).append(i)

        def step(i: int) -> _Step:
            value = values[i]
            parent_id = value.get("parentId")
            if type(parent_id) is not str:
                parent_id = None
            parent = None
            lines = line_of_id.get(parent_id) if parent_id is not None else None
            if lines:
                # The nearest earlier definition of the parent's id (as the index resolves it).
                if lines[-1] < i:
                    parent = lines[-1]
                else:
                    earlier = [j for j in lines if j < i]
                    parent = earlier[-1] if earlier else None
            if value.get("type") == "compaction":
                return value.get("id"), parent, parent_id, value.get("firstKeptEntryId")
            return value.get("id"), parent, parent_id, NOT_COMPACTION

        context = _context_start(entries[-1], step)
        if context is None:
            return None
        if len(entries) >= PREVIEW_ENTRIES:
            wanted = entries[-PREVIEW_ENTRIES]
        elif fill:
            wanted = entries[0]
        else:
            return None  # more entries may come with a longer tail
        # Entries for the rows come from the last ``PREVIEW_FILL_BYTES`` at most.
        wanted = max(wanted, bisect.bisect_left(self.offsets, self.size - PREVIEW_FILL_BYTES))
        return min(context, wanted)

    def index_into(self, scanner: _Scanner, start: int) -> bool:
        """Index the lines from the ``start``-th on into ``scanner``'s session, with the
        values parsed by ``grow`` (the fast path asks for them in file order); False, with
        nothing indexed, if a line is longer than the index reads (``MAX_LINE_BYTES``)."""
        offsets, values = self.offsets, self.values
        ends = [*offsets[start + 1 :], self.size + (1 if self.torn else 0)]
        sizes = [end - offset - 1 for offset, end in zip(offsets[start:], ends, strict=True)]
        if max(sizes) > MAX_LINE_BYTES:
            return False
        asked = [
            (size, value)
            for size, value, fast in zip(sizes, values[start:], self.fast[start:], strict=True)
            if fast
        ]
        step = 0

        def parsed(line: Any) -> Any:
            # The line the fast path reads next is the next one ``grow`` parsed (the same
            # test picks them); its value, unless it could not be parsed there.
            nonlocal step
            if step < len(asked) and asked[step][0] == len(line):
                value = asked[step][1]
                step += 1
                if value is not None:
                    return value
            else:
                step = len(asked)  # out of step (never seen): parse every line from here
            return _fast_loads(line)

        scanner.loads = parsed
        first = offsets[start]
        for data, base in self.pieces:
            if base + len(data) <= first:
                continue
            at = max(first, base) - base
            upto = data.rfind(b"\n") + 1
            if upto > at:
                scanner._lines(data, at, upto, base + at)
        if self.torn:
            data, base = self.pieces[-1]
            upto = data.rfind(b"\n") + 1
            value = values[-1]
            scanner.process_line(data[upto:], base + upto, False, value)
        scanner.loads = _fast_loads
        return True


def _preview_of(session: Session, fd: int, lines: _TailLines, start: int) -> Session | None:
    """``session`` (its header read) with the lines of ``lines`` from the ``start``-th on,
    indexed from the values parsed there; None if a line is too long to index, or if the
    leaf's context is not all in it after all (``_context_within``: the index reads a line
    otherwise than the tail's walk did)."""
    scanner = _Scanner(session, fd, keep_records=True)
    session._scan_fd = fd
    if lines.offsets[start] > lines.floor:
        session.line_count = 0  # count from the first line read (the file's are not known)
    session.preview = True
    if not lines.index_into(scanner, start):
        session.close()
        return None
    session._scan_fd = -1
    session._line_diags = []  # judged by the full load, with the whole file
    session.complete = False
    session.verdict = Verdict.READ_ONLY
    session.append_refusal = PREVIEW_REFUSAL
    if not session.entries or not _context_within(session):
        session.close()
        return None
    return session


_Step = tuple[Any, "int | None", Any, Any]
"""What ``_context_start`` reads of a node: id, parent, parent id, first kept entry id."""

NOT_COMPACTION = object()
"""What ``_context_start``'s ``first_kept_of`` says of an entry that is not a compaction."""


def _context_start(
    leaf: int, step: Callable[[int], tuple[Any, int | None, Any, Any]]
) -> int | None:
    """Where the leaf's context starts: walking up from ``leaf``, the first kept entry of the
    latest compaction on the path, or a real root (no parent id); None if the walk leaves
    what is held first (a parent not found). ``step(node)``: the node's id, its parent (the
    nearest earlier definition of its parent id, or None), its parent id, and its
    ``firstKeptEntryId`` if it is a compaction, else ``NOT_COMPACTION``. The one rule for
    both a session (``_context_within``) and a tail's parsed lines
    (``_TailLines.preview_start``)."""
    node: int | None = leaf
    first_kept: Any = None
    while node is not None:
        node_id, parent, parent_id, kept = step(node)
        if first_kept is None and kept is not NOT_COMPACTION:
            first_kept = kept if isinstance(kept, str) else ""
        if first_kept and node_id == first_kept:
            return node
        if parent is None:
            return node if parent_id is None else None
        node = parent
    return None


def _context_within(session: Session) -> bool:
    """True when the leaf's context is all in ``session``: the path up from the leaf reaches
    the first kept entry of the latest compaction on it, or a real root (no ``parentId``)."""
    entries = session.entries
    compactions = session._compactions

    def step(node: int) -> _Step:
        entry = entries[node]
        kept = (
            compactions.get(node, (None, None))[0] if entry.type == "compaction" else NOT_COMPACTION
        )
        return entry.id, entry.parent, entry.parent_id, kept

    return session.leaf is not None and _context_start(session.leaf, step) is not None


def _io_failure(s: Session, reason: str, code: str = "io-error") -> None:
    s._io_error = reason
    s._diag(ERROR, code, s._io_error, None, None)
    s.verdict = Verdict.REFUSE
    s.append_refusal = s._io_error
    s.complete = False


def refresh_session(s: Session) -> Refresh:
    """Implementation of ``Session.refresh()``."""
    with gc_paused():
        return _refresh(s)


def _refresh(s: Session) -> Refresh:
    if s._io_error is not None or not s.complete:
        return Refresh("rewritten", reason="the previous load did not finish; load it again")
    if not s._digested:
        return Refresh("rewritten", reason="loaded without a digest; load it again")
    snap = s.snapshot
    try:
        fd = os.open(s.path, _OPEN_FLAGS)
    except OSError as error:
        return Refresh("rewritten", reason=f"cannot open the file: {error.strerror or error}")
    try:
        st = os.fstat(fd)
        if (st.st_dev, st.st_ino) != (snap.device, snap.inode):
            return Refresh("rewritten", reason="the file was replaced (new inode)")
        if st.st_size < snap.size:
            return Refresh("rewritten", reason="the file shrank")
        if st.st_size == snap.size and st.st_mtime_ns == snap.mtime_ns:
            return Refresh("unchanged")
        problem = _prefix_changed(s, fd, snap.size)
        if problem is not None:
            return Refresh("rewritten", reason=problem)
        if st.st_size == snap.size:
            s.snapshot = FileSnapshot(
                snap.device, snap.inode, snap.size, st.st_mtime_ns, snap.sha256,
                snap.ends_with_newline, snap.torn_tail,
            )  # fmt: skip
            return Refresh("unchanged")
        parse_from = s._end_offset
        if not snap.ends_with_newline:
            last_start = s._last_line_start
            last_is_entry = bool(s.entries) and s.entries[-1].offset == last_start
            if last_is_entry or (s._leaf is not None and s.entries[s._leaf].offset == last_start):
                if os.pread(fd, 1, snap.size) != b"\n":
                    return Refresh(
                        "rewritten",
                        reason="the last record had no newline and new bytes were glued onto it",
                    )
                # The old last line is now properly terminated.
                s._line_diags = [
                    d for d in s._line_diags
                    if not (d.code == "no-final-newline" and d.offset == last_start)
                ]  # fmt: skip
                parse_from = snap.size + 1
                s._hashed_to = snap.size
            else:
                _rollback_last_line(s)
                parse_from = last_start
        first_new = len(s.entries)
        s._scan_fd = fd
        scanner = _Scanner(s, fd, keep_records=s._keep_records)
        if parse_from > snap.size:
            # Hash the newline we skipped over, then scan the rest.
            s._hasher.update(b"\n")
            if s._body_hasher is not None:
                s._body_hasher.update(b"\n")
            scanner.scan(parse_from, parse_from, st.st_size, None, None)
        else:
            scanner.scan(parse_from, snap.size, st.st_size, None, None)
        s._torn_line = s._torn_line if s._torn_line and s._torn_line[1] >= parse_from else None
        s.snapshot = _make_snapshot(s, st, st.st_size)
        _samples(s, fd, st.st_size)
        if s._body_hasher is not None:
            s._body_digest = s._body_hasher.hexdigest()
        _analyze(s)
        _finalize(s, st.st_size)
        return Refresh("grew", list(range(first_new, len(s.entries))))
    except OSError as error:
        return Refresh("rewritten", reason=f"read error: {error.strerror or error}")
    finally:
        s._scan_fd = -1
        os.close(fd)


def _rollback_last_line(s: Session) -> None:
    """Forget what the last (unterminated, non-entry) line produced so it can be re-read."""
    start = s._last_line_start
    line_no = s.line_count
    s._line_diags = [d for d in s._line_diags if d.line != line_no]
    s._fragments = {k: v for k, v in s._fragments.items() if v != line_no}
    s._omp_faults.retract(line_no)
    s._torn_line = None
    s.line_count = line_no - 1
    s._end_offset = start
    odd: Oddities | None = s._oddities
    if odd is not None:
        for where in odd.timestamps.values():
            where[:] = [item for item in where if item[0] != line_no]
        odd.non_finite = [item for item in odd.non_finite if item[0] != line_no]
        odd.deep = [item for item in odd.deep if item[0] != line_no]
        odd.long_lines = [item for item in odd.long_lines if item[0] != line_no]


def _prefix_changed(s: Session, fd: int, size: int) -> str | None:
    """None if the loaded bytes ``[0, size)`` are still the same (a title-slot rewrite in an
    oh-my-pi file is allowed and re-read); else a reason."""
    if size <= FULL_PREFIX_CHECK_LIMIT:
        full = hashlib.sha256()
        body = hashlib.sha256() if s._body_hasher is not None else None
        position = 0
        while position < size:
            data = os.pread(fd, min(CHUNK_SIZE, size - position), position)
            if not data:
                return "the file changed while it was being checked"
            full.update(data)
            if body is not None and position + len(data) > s._body_start:
                body.update(data[max(0, s._body_start - position) :])
            position += len(data)
        if full.hexdigest() == s.snapshot.sha256:
            return None
        if body is not None and body.hexdigest() == s._body_digest:
            _reread_title(s, fd)
            # Keep hashing consistent with the bytes now on disk.
            s._hasher = full
            return None
        return "bytes before the loaded end changed (the file was rewritten)"
    start = s._body_start
    head = os.pread(fd, len(s._head_sample), start)
    tail_start = max(start, size - len(s._tail_sample))
    tail = os.pread(fd, size - tail_start, tail_start)
    if head != s._head_sample or tail != s._tail_sample:
        return "bytes before the loaded end changed (the file was rewritten)"
    if s.title_slot is not None:
        _reread_title(s, fd)  # oh-my-pi rewrites the slot in place
    return None


def _reread_title(s: Session, fd: int) -> None:
    raw = os.pread(fd, s._body_start, 0).rstrip(b"\n")
    try:
        slot = decode_record(raw)
    except (ValueError, RecursionError):
        return
    if isinstance(slot, dict):
        s.title_slot = slot
        note = title_slot_note(slot, s._body_start)
        s._line_diags[:] = [
            replace(d, message=note) if d.code == TITLE_SLOT and d.line == 1 else d
            for d in s._line_diags
        ]
