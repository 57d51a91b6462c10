"""The session's index kept in columns: a few flat arrays instead of one object per entry.

A 200,000-deep chain held as one ``Entry`` object per line cost ~75 MB of Python objects
(the objects, their packed position integers, the id and timestamp strings). ``EntryTable``
keeps the same facts in flat arrays (1 to 8 bytes an entry per column, a byte-packed
timestamp)
and hands out an ``Entry`` built on demand; walks that visit many entries read the columns
directly (``parent_column``, ``id_column``, ``types``...).

What every entry stores: its id (the one string object also keyed in the session's id map),
resolved parent index, type and role (small codes into a table of names), physical line,
byte offset and size, timestamp and its sort key, and its record when records are kept in
memory (small files). ``parentId`` is stored only where it is not the resolved parent's id
(broken links): everywhere else it is that id by definition.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence
from typing import Any, TypeVar, overload

from tui_compactor.session.model import Entry, RecordSource

__all__ = ["EntryTable", "EntryView", "TimestampColumn"]

_T = TypeVar("_T")

_NONE = -1
"""``parent`` column value of an entry without a resolved parent."""


class TimestampColumn:
    """Per entry: the record's ``timestamp`` string and its sort key (``timestamp_key``).

    pi writes every timestamp as a 24-character ISO string (``2025-12-03T14:00:01.000Z``)
    whose sort key is the string itself, so each is kept as 24 ASCII bytes in one buffer
    (a string object would cost ~73 bytes more). Any other timestamp (another length or
    non-ASCII) and any key that differs from its timestamp are kept as strings aside.
    """

    WIDTH = 24
    _BLANK = b"\0" * WIDTH

    __slots__ = ("_packed", "_other", "_keys")

    def __init__(self) -> None:
        self._packed = bytearray()
        """24 bytes per entry (zeros where the timestamp is kept in ``_other``)."""
        self._other: dict[int, str] = {}
        """Timestamps that are not 24 ASCII characters, by entry."""
        self._keys: dict[int, str] = {}
        """Sort keys that differ from their timestamp, by entry."""

    def __len__(self) -> int:
        return len(self._packed) // 24

    def append(self, timestamp: str, key: str) -> None:
        """Add the next entry's ``timestamp`` and its sort ``key``."""
        i = len(self._packed) // 24
        if len(timestamp) == 24 and timestamp.isascii():
            self._packed += timestamp.encode("ascii")
        else:
            self._packed += self._BLANK
            self._other[i] = timestamp
        if key is not timestamp and key != timestamp:
            self._keys[i] = key

    def timestamp(self, i: int) -> str:
        """Entry ``i``'s ``timestamp`` as in its record (``""`` when it had none)."""
        if self._other:
            other = self._other.get(i)
            if other is not None:
                return other
        start = i * 24
        return self._packed[start : start + 24].decode("ascii")

    def __getitem__(self, i: int) -> str:
        """Entry ``i``'s sort key (``ChildLists.add`` orders siblings by it)."""
        if self._keys:
            key = self._keys.get(i)
            if key is not None:
                return key
        # ``timestamp(i)``, inline: ``ChildLists.add`` bisects siblings by this key, ~17 reads
        # an insert in a wide fan, and the call cost 5% of a 100k-sibling file's load.
        if self._other:
            other = self._other.get(i)
            if other is not None:
                return other
        start = i * 24
        return self._packed[start : start + 24].decode("ascii")

    def clear(self) -> None:
        self._packed = bytearray()
        self._other = {}
        self._keys = {}


class _Names:
    """Small integer codes for the few distinct strings (entry types, roles) of a column."""

    __slots__ = ("names", "_codes")

    def __init__(self, first: str | None) -> None:
        self.names: list[str | None] = [first]
        self._codes: dict[str | None, int] = {first: 0}

    def code(self, name: str | None) -> int:
        code = self._codes.get(name)
        if code is None:
            code = self._codes[name] = len(self.names)
            self.names.append(name)
        return code


WIDE_POSITION = 2**32
"""The first line number or byte offset a four-byte column cannot hold."""

SMALL_CODES = 256
"""Codes a one-byte column holds. A session has a handful of entry types and roles; a column
gets four bytes a slot only once a file names more (``EntryTable.type_code``)."""


class EntryTable(Sequence[Entry]):
    """The entries of a session in file order, kept as columns; ``table[i]`` is an ``Entry``
    built on demand (a fresh object each time: compare entries by ``index``, not identity).

    Read-only for everything but the loader, which adds entries with ``append`` (an
    ``Entry``) or ``add`` (its fields, without building one).
    """

    __slots__ = ("_ids", "_parents", "_parent_ids", "_types", "_type_names", "_roles",
                 "_role_names", "_lines", "_offsets", "_sizes", "timestamps", "_records",
                 "_source")  # fmt: skip

    def __init__(self) -> None:
        self._ids: list[str] = []
        self._parents: list[int] = []
        """Per entry: its parent's index, or -1. A list, not an array: it holds the index
        objects the id map holds already (8 bytes an entry either way), so a path read from
        it (``Session.path_to``) makes no new integer objects (32 bytes each)."""
        self._parent_ids: dict[int, str | None] = {}
        """``parentId`` of the entries where it is not the resolved parent's id."""
        self._types = array("B")
        """Per entry: its type's code in ``_type_names`` (one byte; ``I`` past 256 names)."""
        self._type_names = _Names("message")
        self._roles = array("B")
        """Per entry: its role's code in ``_role_names`` (as ``_types``)."""
        self._role_names = _Names(None)
        self._lines = array("I")
        """Per entry: its physical line (four bytes; ``q`` once a line number reaches
        ``WIDE_POSITION``: ``make_room``)."""
        self._offsets = array("I")
        """Per entry: its line's byte offset (as ``_lines``: ``q`` in a file over 4 GB)."""
        self._sizes = array("I")
        """Per entry: its line's bytes (four bytes: an indexed line is at most
        ``reader.MAX_LINE_BYTES``)."""
        self.timestamps = TimestampColumn()
        """Timestamps and their sort keys."""
        self._records: list[dict[str, Any] | None] | None = None
        """Records held in memory (small files), or None when none is."""
        self._source: RecordSource | None = None
        """Where records not held in memory are re-read from (big files)."""

    # ----------------------------------------------------------------- building

    def add(
        self,
        entry_id: str,
        parent_id: str | None,
        type_name: str,
        timestamp: str,
        key: str,
        line: int,
        offset: int,
        size: int,
        role: str | None,
        parent: int | None,
        record: dict[str, Any] | None,
        source: RecordSource | None,
    ) -> None:
        """Add the next entry from its fields (``key``: ``timestamp_key(timestamp)``)."""
        index = len(self._ids)
        self._ids.append(entry_id)
        if parent is None:
            self._parents.append(_NONE)
            if parent_id is not None:
                self._parent_ids[index] = parent_id
        else:
            self._parents.append(parent)
            if parent_id != self._ids[parent]:
                self._parent_ids[index] = parent_id
        type_code = self.type_code(type_name)  # before the column is read: it may widen
        role_code = self.role_code(role)
        self._types.append(type_code)
        self._roles.append(role_code)
        self.make_room(line, offset)
        self._lines.append(line)
        self._offsets.append(offset)
        self._sizes.append(size)
        self.timestamps.append(timestamp, key)
        if record is not None and self._records is None:
            self._records = [None] * index
        if self._records is not None:
            self._records.append(record)
        if source is not None:
            self._source = source

    def make_room(self, line: int, offset: int) -> None:
        """Widen the line and offset columns to eight bytes a slot if ``line`` or ``offset``
        (an upper bound of what comes next) would not fit in four: a file over 4 GB, or
        with 4 billion lines. Read ``_lines`` and ``_offsets`` after calling this."""
        if line >= WIDE_POSITION and self._lines.typecode != "q":
            self._lines = array("q", self._lines)
        if offset >= WIDE_POSITION and self._offsets.typecode != "q":
            self._offsets = array("q", self._offsets)

    def type_code(self, type_name: str) -> int:
        """The code of ``type_name`` in the type column (a new one for a new name). The
        column may be replaced by a wider one: read ``_types`` after calling this."""
        code = self._type_names.code(type_name)
        if code >= SMALL_CODES and self._types.typecode == "B":
            self._types = array("I", self._types)
        return code

    def role_code(self, role: str | None) -> int:
        """The code of ``role`` in the role column, as ``type_code``: read ``_roles`` after."""
        code = self._role_names.code(role)
        if code >= SMALL_CODES and self._roles.typecode == "B":
            self._roles = array("I", self._roles)
        return code

    def append(self, entry: Entry, key: str) -> None:
        """Add ``entry`` (its ``index`` must be ``len(self)``)."""
        self.add(entry.id, entry.parent_id, entry.type, entry.timestamp, key, entry.line,
                 entry.offset, entry.size, entry.role, entry.parent, entry._record,
                 entry._source)  # fmt: skip

    def clear(self) -> None:
        """Forget every entry (the timestamp column stays the same object, emptied)."""
        timestamps = self.timestamps
        self.__init__()  # type: ignore[misc]
        timestamps.clear()
        self.timestamps = timestamps

    # ----------------------------------------------------------------- reading

    def __len__(self) -> int:
        return len(self._ids)

    @overload
    def __getitem__(self, i: int) -> Entry: ...

    @overload
    def __getitem__(self, i: slice) -> list[Entry]: ...

    def __getitem__(self, i: int | slice) -> Entry | list[Entry]:
        if isinstance(i, slice):
            return [self._entry(j) for j in range(*i.indices(len(self._ids)))]
        entry_id = self._ids[i]  # IndexError as a list raises it
        if i < 0:
            i += len(self._ids)
        return self._entry(i, entry_id)

    def _entry(self, i: int, entry_id: str | None = None) -> Entry:
        parent: int | None = self._parents[i]
        if parent == _NONE:
            parent = None
            parent_id = self._parent_ids.get(i) if self._parent_ids else None
        elif self._parent_ids and i in self._parent_ids:
            parent_id = self._parent_ids[i]
        else:
            parent_id = self._ids[parent]  # type: ignore[index]
        records = self._records
        record = records[i] if records is not None else None
        return Entry(
            i,
            self._ids[i] if entry_id is None else entry_id,
            parent_id,
            self._type_names.names[self._types[i]],  # type: ignore[arg-type]
            self.timestamps.timestamp(i),
            self._lines[i],
            self._offsets[i],
            self._sizes[i],
            self._role_names.names[self._roles[i]],
            parent,
            record,
            None if record is not None else self._source,
        )

    def __iter__(self) -> Iterator[Entry]:
        # A pass over every entry: the columns are zipped, not indexed per field (not strictly:
        # a refresh may be appending an entry's columns one by one meanwhile).
        type_names, role_names = self._type_names.names, self._role_names.names
        parent_ids, ids, records, source = self._parent_ids, self._ids, self._records, self._source
        timestamps = self.timestamps
        packed, odd_stamps = timestamps._packed, timestamps._other
        columns = zip(ids, self._parents, self._types, self._roles, self._lines, self._offsets,
                      self._sizes, strict=False)  # fmt: skip
        for i, (entry_id, parent, kind, role, line, offset, size) in enumerate(columns):
            if parent < 0:
                parent_id = parent_ids.get(i) if parent_ids else None
                parent = None
            elif parent_ids and i in parent_ids:
                parent_id = parent_ids[i]
            else:
                parent_id = ids[parent]
            if odd_stamps and i in odd_stamps:
                stamp = odd_stamps[i]
            else:
                stamp = packed[i * 24 : i * 24 + 24].decode("ascii")
            record = records[i] if records is not None else None
            yield Entry(i, entry_id, parent_id, type_names[kind], stamp, line, offset, size,  # type: ignore[arg-type]
                        role_names[role], parent, record,
                        None if record is not None else source)  # fmt: skip

    def __bool__(self) -> bool:
        return bool(self._ids)

    def __eq__(self, other: object) -> bool:
        """Equal to any list, tuple or table of equal entries in the same order."""
        if not isinstance(other, EntryTable | list | tuple):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]  # mutable, like a list

    # ----------------------------------------------------------------- columns

    def id_of(self, i: int) -> str:
        """Entry ``i``'s id."""
        return self._ids[i]

    def parent_of(self, i: int) -> int | None:
        """Index of entry ``i``'s resolved parent, or None."""
        parent = self._parents[i]
        return None if parent == _NONE else parent

    def type_of(self, i: int) -> str:
        """Entry ``i``'s type."""
        return self._type_names.names[self._types[i]]  # type: ignore[return-value]

    def role_of(self, i: int) -> str | None:
        """Entry ``i``'s ``message.role``, or None."""
        return self._role_names.names[self._roles[i]]

    def parent_column(self) -> Sequence[int]:
        """Every entry's parent index in file order, ``-1`` for none: the column itself."""
        return self._parents

    def id_column(self) -> Sequence[str]:
        """Every entry's id in file order: the column itself."""
        return self._ids

    def type_column(self) -> Sequence[str]:
        """Every entry's type in file order, each read when asked (``types``: all at once);
        the entries indexed so far (a later one may move the codes to a wider column)."""
        return EntryView(self._type_names.names, self._types)  # type: ignore[arg-type]

    def types(self) -> list[str]:
        """Every entry's type, in file order (one list of shared strings)."""
        names = self._type_names.names
        return [names[code] for code in self._types]  # type: ignore[misc]

    def roles(self) -> list[str | None]:
        """Every entry's ``message.role`` (None where there is none), in file order."""
        names = self._role_names.names
        return [names[code] for code in self._roles]


class EntryView(Sequence[_T]):
    """The entries at ``indices`` (e.g. a path root..leaf) as a sequence, each built when read:
    a list of them would hold an ``Entry`` per index (~360 bytes each with its integers). Also
    any other column read through indices (``EntryTable.type_column``: names at their codes)."""

    __slots__ = ("_entries", "_indices")

    def __init__(self, entries: Sequence[_T], indices: Sequence[int]) -> None:
        self._entries = entries
        self._indices = indices

    def __len__(self) -> int:
        return len(self._indices)

    @overload
    def __getitem__(self, i: int) -> _T: ...

    @overload
    def __getitem__(self, i: slice) -> list[_T]: ...

    def __getitem__(self, i: int | slice) -> _T | list[_T]:
        if isinstance(i, slice):
            entries = self._entries
            return [entries[index] for index in self._indices[i]]
        return self._entries[self._indices[i]]

    def __iter__(self) -> Iterator[_T]:
        entries = self._entries
        for index in self._indices:
            yield entries[index]
