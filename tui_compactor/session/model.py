"""The data model of a loaded session: entries, diagnostics and verdicts.

This module is the contract between the session layer and everything above it (engine,
summarize, ui). It does no I/O. ``session.reader`` builds these objects.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Protocol

TITLE_SLOT_BYTES = 256
"""oh-my-pi's fixed-width title slot on line 1, rewritten in place by oh-my-pi."""

GENERATOR_NAME = "tui-compactor"
"""``generator.name`` in every entry we write."""


def written_by_us(record: Any) -> bool:
    """True for a record this tool appended (its ``generator.name``); the reader notes it for
    every entry while indexing (``Session.written_by_us``)."""
    generator = record.get("generator") if isinstance(record, dict) else None
    return isinstance(generator, dict) and generator.get("name") == GENERATOR_NAME


def seal_command(path: Any) -> str:
    """The shell command that seals a torn last line of ``path`` (shown in refusals)."""
    return f"tui-compactor seal {shlex.quote(str(path))}"


TORN_TAIL_CODE = "A2"
"""The append gate's rule for a torn last line (``AppendRefused.code``, ``refusedCode``)."""


def torn_tail_cause(record: str | None = None) -> str:
    """Why a file ends in an incomplete line, in the words every place uses (``lint``, the
    app's Issues view and read-only banner, the append gate, ``seal``).

    Both causes are common and the file cannot tell them apart: an agent writing the line
    right now (what live follow usually sees; the line ends and ``record`` appears) or a
    crash that cut it short (``record`` is lost). ``record`` names the entry the fragment
    starts, if it can be read.
    """
    cause = "an agent still writing it, or a crash while writing"
    if record is None:
        return cause
    return f"{cause}; {record} appears when the line ends, or is lost if it never does"


def torn_tail_refusal(path: Any) -> tuple[str, str]:
    """``(reason, hint)`` for refusing an append after a torn last line of ``path``: followed
    live, that line is most often one an agent is still writing (sealing it then would split
    the agent's record), so sealing is advised only when no agent writes.

    The one wording of this refusal: the loader's ``append_refusal`` (the app's banner and
    dialogs, ``compact``/``navigate``) and the write gate (``undo``, every append) both use it.
    """
    return (
        f"the file ends in an incomplete record ({torn_tail_cause()}), so a new line would be "
        "glued onto it and lost",
        f"If no agent is writing it, seal it first with `{seal_command(path)}` (it appends "
        "one newline and keeps the fragment); then try again.",
    )


class Verdict(StrEnum):
    """What a careful tool does with a file (``fixtures/bad/EXPECTED.md``)."""

    OPEN = "open"
    OPEN_WARN = "open+warn"
    READ_ONLY = "read-only"
    REFUSE = "refuse"


class Severity(StrEnum):
    """How serious one diagnostic is."""

    INFO = "info"
    WARNING = "warning"
    ERROR = "error"


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One problem found while loading, named by file, physical line and byte offset."""

    severity: Severity
    code: str
    """Stable machine-readable code, e.g. ``invalid-json`` or ``missing-parent``."""
    message: str
    """Human text without the location prefix. Session text in it is not sanitized."""
    path: str
    line: int | None = None
    """1-based physical line (bytes split on ``\\n`` only)."""
    offset: int | None = None
    """Byte offset of the start of that line."""
    entry_id: str | None = None

    def __str__(self) -> str:
        where = self.path
        if self.line is not None:
            where += f":{self.line}"
        if self.offset is not None:
            where += f" (byte {self.offset})"
        return f"{where}: {self.message}"


class RecordSource(Protocol):
    """Where an entry's full record comes from when it is not held in memory."""

    def load_record(self, entry: Entry) -> dict[str, Any]:
        """Return the parsed (and migrated) JSON object of ``entry``."""
        ...

    def peek_record(self, entry: Entry) -> dict[str, Any]:
        """Like ``load_record``, without adding the record to a cache."""
        ...


class Entry:
    """One session entry (any line that is not the header or the oh-my-pi title slot).

    The session keeps its entries in columns (``table.EntryTable``) and builds an ``Entry``
    each time one is asked for: treat every field as read-only, and compare entries by
    ``index`` (two reads of the same entry are equal in every field, not identical).
    """

    __slots__ = ("index", "id", "parent_id", "type", "timestamp", "line", "offset", "size",
                 "role", "parent", "_record", "_source")  # fmt: skip

    def __init__(
        self,
        index: int,
        id: str,  # noqa: A002 - the record's field name
        parent_id: str | None,
        type: str,  # noqa: A002 - the record's field name
        timestamp: str,
        line: int,
        offset: int,
        size: int,
        role: str | None = None,
        parent: int | None = None,
        _record: dict[str, Any] | None = None,
        _source: RecordSource | None = None,
    ) -> None:
        self.index = index
        """0-based position among loaded entries, header excluded, file order."""
        self.id = id
        self.parent_id = parent_id
        """``parentId`` as in the record (after in-memory migration)."""
        self.type = type
        self.timestamp = timestamp
        self.line = line
        """1-based physical line."""
        self.offset = offset
        """Byte offset of the line start."""
        self.size = size
        """Length of the line in bytes, without the terminating ``\\n``."""
        self.role = role
        """``message.role`` for ``message`` entries whose role is a string, else None."""
        self.parent = parent
        """Index of the resolved parent (nearest earlier definition of ``parent_id``); None
        for a root or a broken link."""
        self._record = _record
        self._source = _source

    def _fields(self) -> tuple[Any, ...]:
        return (self.index, self.id, self.parent_id, self.type, self.timestamp, self.line,
                self.offset, self.size, self.role, self.parent)  # fmt: skip

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Entry):
            return NotImplemented
        return self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash((self.index, self.id, self.offset))

    def __repr__(self) -> str:
        return (
            f"Entry(index={self.index!r}, id={self.id!r}, parent_id={self.parent_id!r}, "
            f"type={self.type!r}, timestamp={self.timestamp!r}, line={self.line!r}, "
            f"offset={self.offset!r}, size={self.size!r}, role={self.role!r}, "
            f"parent={self.parent!r})"
        )

    @property
    def data(self) -> dict[str, Any]:
        """The whole parsed record (migrated in memory). Treat it as read-only."""
        if self._record is not None:
            return self._record
        assert self._source is not None
        return self._source.load_record(self)

    def data_once(self) -> dict[str, Any]:
        """``data`` for a pass that reads many records once each: a record read again from
        the file is not kept in the session's record cache (it would push out the records
        the app is showing, and keeping the cache ordered costs more than the read)."""
        if self._record is not None:
            return self._record
        assert self._source is not None
        return self._source.peek_record(self)

    @property
    def message(self) -> dict[str, Any] | None:
        """``data["message"]`` for message entries when it is an object, else None."""
        if self.type != "message":
            return None
        message = self.data.get("message")
        return message if isinstance(message, dict) else None


@dataclass(frozen=True, slots=True)
class FileSnapshot:
    """What the file looked like when it was loaded; the append gate re-checks it."""

    device: int
    inode: int
    size: int
    mtime_ns: int
    sha256: str
    """Hash of the loaded bytes ``[0, size)``; empty when loaded without a digest."""
    ends_with_newline: bool
    torn_tail: bool
    """The last line is an incomplete record (no ``\\n`` and not parseable)."""


@dataclass(frozen=True, slots=True)
class LoadProgress:
    """Progress of a long load, reported through the loader's callback."""

    bytes_done: int
    bytes_total: int
    entries: int
