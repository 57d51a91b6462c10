"""A loaded session: entries, the tree they form, diagnostics, verdict and live refresh.

``Session`` objects are built by ``reader.load_session``; this module holds the state and
every query over it (children, paths, ancestors, labels, append checks). Every walk over
the tree is iterative and bounded: parents always come earlier in the file than their
children (the loader enforces it), so a walk up the tree strictly decreases the index and
cannot loop.
"""

from __future__ import annotations

import bisect
import gc
import hashlib
import os
import threading
import weakref
from array import array
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

from tui_compactor.session.memory import release_free_memory
from tui_compactor.session.migrate import CURRENT_VERSION, migrate_record
from tui_compactor.session.model import (
    TITLE_SLOT_BYTES,
    Diagnostic,
    Entry,
    FileSnapshot,
    Severity,
    Verdict,
)
from tui_compactor.session.omp_open import FaultLines
from tui_compactor.session.table import EntryTable, TimestampColumn

__all__ = [
    "ChildLists",
    "Session",
    "Refresh",
    "SETTING_TYPES",
    "timestamp_key",
    "gc_paused",
    "pause_gc",
    "release_free_memory",
    "resume_gc",
    "set_freeze_check",
]

SETTING_TYPES = frozenset({"thinking_level_change", "model_change", "mode_change"})
"""Entry types that change the model, the thinking level or (oh-my-pi) the mode of everything
below them (``Session.setting_above`` finds the nearest one)."""


_RUN_GAP = 64 * 1024
"""``records_once`` reads two wanted lines with one ``pread`` when at most this many bytes
lie between them."""

_RUN_MAX = 4 * 1024 * 1024
"""...and at most this many bytes in all (wanted lines spread over other branches' lines would
otherwise make one read of the whole span: a lazily loaded file is not to be held in memory)."""

_gc_pause_lock = threading.Lock()
_gc_pauses = 0
"""Pauses of the cyclic collector in force (``pause_gc``); it runs again when the last ends."""
_gc_resume = False
"""Whether the collector was running when the first pause in force began."""
_freeze_allowed: Callable[[], bool] | None = None
"""Asked when the last pause ends whether to freeze what is alive (``set_freeze_check``);
None: always freeze."""


def set_freeze_check(allowed: Callable[[], bool] | None) -> None:
    """Let a collector policy decide whether ``resume_gc`` freezes (the app's: not past its
    growth limit, where frozen garbage cycles would pile up until its deep collection); None
    restores freezing every time."""
    global _freeze_allowed
    _freeze_allowed = allowed


def pause_gc() -> None:
    """Pause the cyclic garbage collector until the matching ``resume_gc``.

    Pauses nest and may overlap across threads (the app's start-up, the indexer, an outline
    build): the collector runs again only when the last one ends, and only if it ran before
    the first began.
    """
    global _gc_pauses, _gc_resume
    with _gc_pause_lock:
        if _gc_pauses == 0:
            _gc_resume = gc.isenabled()
            gc.disable()
        _gc_pauses += 1


def resume_gc() -> None:
    """End one ``pause_gc``. When the last pause ends, everything alive is moved out of the
    collector's reach (``gc.freeze``, unless the check set by ``set_freeze_check`` refuses)
    and the collector runs again: what was built meanwhile is long-lived, and a full
    collection would otherwise scan all of it."""
    global _gc_pauses
    with _gc_pause_lock:
        if _gc_pauses == 0:
            return
        _gc_pauses -= 1
        if _gc_pauses == 0 and _gc_resume:
            if _freeze_allowed is None or _freeze_allowed():
                gc.freeze()
            gc.enable()


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while building many objects (``pause_gc``).

    Indexing creates hundreds of thousands of small objects; every few hundred allocations
    the collector would otherwise re-scan all of them (measured: up to 2-5x slower builds).
    Nothing built here forms reference cycles that need collecting, so afterwards everything
    alive is moved out of the collector's reach (``gc.freeze``): otherwise the next full
    collection scans the whole index (0.3-0.9 s on 100k entries, holding the GIL, so the UI
    stalls). Frozen objects are still freed by reference counting when dropped.
    """
    pause_gc()
    try:
        yield
    finally:
        resume_gc()


INDEX_CODE = "i"
"""Type code of the flat arrays that hold an entry index or a count of entries per entry
(children, depth, setting marks): four bytes a slot, half of ``q``'s (1.6 MB on a 200,000-deep
chain for the two, 8 MB on a million entries). Entries stay far below 2**31: the memory limit
refuses an index long before (``reader.INDEX_BYTES_PER_ENTRY``), and without a limit 2**31
entries would need hundreds of GB for their ids alone."""

NO_CHILDREN: list[int] = cast(list[int], ())
"""The shared (immutable) child list of every entry without children."""

NO_CHILD = -1
"""``ChildLists.flat``: the entry has no child."""
SEVERAL = -2
"""``ChildLists.flat``: the entry has several children, listed in the mapping."""
_NO_CHILD = NO_CHILD
_SEVERAL = SEVERAL


class ChildLists:
    """The children of every entry, in pi's ``getTree`` order (timestamp ascending, stable).

    Most entries have at most one child, so that child is kept in one flat array (4 bytes an
    entry; a list per entry would cost 64 more, 13 MB on a 200,000-deep chain); only the
    entries with several children have a list. ``lists[i]`` is a read-only sequence.
    """

    __slots__ = ("_only", "_several")

    def __init__(self) -> None:
        self._only = array(INDEX_CODE)
        """Per entry: its only child, ``_NO_CHILD`` or ``_SEVERAL`` (see ``_several``). Four
        bytes a slot: an entry index fits (``INDEX_CODE``)."""
        self._several: dict[int, list[int]] = {}

    def __len__(self) -> int:
        return len(self._only)

    def __getitem__(self, i: int) -> list[int]:
        only = self._only[i]
        if only >= 0:
            return cast(list[int], (only,))
        if only == _NO_CHILD:
            return NO_CHILDREN
        return self._several[i]

    def flat(self) -> tuple[Sequence[int], Mapping[int, list[int]]]:
        """The lists in their flat form, for loops that read a row's children inline: per
        entry its only child (>= 0), ``NO_CHILD``, or ``SEVERAL`` (then its children, in
        order, are the mapping's). Read-only: the sequence and the mapping are the lists'."""
        return self._only, self._several

    def count(self, i: int) -> int:
        """Number of children of entry ``i``."""
        only = self._only[i]
        if only >= 0:
            return 1
        return 0 if only == _NO_CHILD else len(self._several[i])

    def childless(self) -> list[int]:
        """Entries without children, in file order."""
        return [i for i, only in enumerate(self._only) if only == _NO_CHILD]

    def visible(self, shown: Sequence[bool]) -> tuple[ChildLists, dict[int, list[int]]]:
        """The children lists of the tree where every entry not ``shown`` is left out and its
        shown descendants hang under its nearest shown ancestor (in order), and, for each
        hidden entry without a shown ancestor that has shown descendants, those (the roots'
        stand-ins). One pass from the last entry to the first (children come after their
        parent), on the flat arrays: most entries have one child, kept without a list."""
        only, several = self._only, self._several
        count = len(only)
        kept = ChildLists()
        kept_only = kept._only = array(INDEX_CODE, (_NO_CHILD,)) * count
        kept_several = kept._several
        lifted: dict[int, list[int]] = {}
        pop = lifted.pop
        for node in range(count - 1, -1, -1):
            child = only[node]
            if child == _NO_CHILD:
                continue
            if child >= 0:
                if shown[child]:
                    if shown[node]:
                        kept_only[node] = child
                    else:
                        lifted[node] = [child]
                    continue
                mine = pop(child, None)
                if mine is None:
                    continue
            else:
                mine = []
                for kid in several[node]:
                    if shown[kid]:
                        mine.append(kid)
                    else:
                        below = pop(kid, None)
                        if below:
                            mine.extend(below)
                if not mine:
                    continue
            if not shown[node]:
                lifted[node] = mine
            elif len(mine) == 1:
                kept_only[node] = mine[0]
            else:
                kept_only[node] = _SEVERAL
                kept_several[node] = mine
        return kept, lifted

    def append_entry(self) -> None:
        """Make room for the next entry (no children yet)."""
        self._only.append(_NO_CHILD)

    def add(self, parent: int, child: int, keys: TimestampColumn) -> bool:
        """Insert ``child`` among ``parent``'s children by ``keys`` (stable: after equal keys);
        True when it is the first one."""
        only = self._only[parent]
        if only == _NO_CHILD:
            self._only[parent] = child
            return True
        if only >= 0:
            siblings = [only]
            self._several[parent] = siblings
            self._only[parent] = _SEVERAL
        else:
            siblings = self._several[parent]
        key = keys[child]
        if keys[siblings[-1]] <= key:
            siblings.append(child)
        else:
            siblings.insert(bisect.bisect_right(siblings, key, key=keys.__getitem__), child)
        return False


CACHE_MAX_RECORDS = 4096
"""Lazy mode: at most this many re-read records are cached."""
CACHE_MAX_BYTES = 64 * 1024 * 1024
"""Lazy mode: the cached records' source lines add up to at most this many bytes."""


@dataclass(frozen=True, slots=True)
class Refresh:
    """The result of ``Session.refresh()``."""

    status: str
    """``unchanged``, ``grew`` (new complete lines were parsed) or ``rewritten`` (the file
    was replaced, truncated or changed before the loaded end: reload it)."""
    added: list[int] = field(default_factory=list)
    """Indices of the entries the refresh added."""
    reason: str | None = None
    """Why the file counts as rewritten, for the user."""


_CANONICAL_TS_LEN = len("2025-12-03T14:00:01.000Z")


def timestamp_key(timestamp: Any) -> str:
    """A string that sorts like the instant of an ISO timestamp (millisecond precision).

    pi orders siblings by ``new Date(timestamp)``. Canonical ``...sss Z`` strings (what pi
    writes) are already in time order and are used as they are; other ISO forms are
    normalised to that shape. Unparseable timestamps get ``""`` and sort first.
    """
    if not isinstance(timestamp, str):
        return ""
    if len(timestamp) == _CANONICAL_TS_LEN and timestamp[-1] == "Z" and timestamp[10] == "T":
        return timestamp
    try:
        text = timestamp.strip()
        if text.endswith(("Z", "z")):
            text = text[:-1] + "+00:00"
        moment = datetime.fromisoformat(text)
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)  # JS reads a bare date-time as local; UTC here
        moment = moment.astimezone(UTC)
        return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
    except (ValueError, OverflowError):
        return ""


def _close_quietly(fd: int) -> None:
    try:
        os.close(fd)
    except OSError:
        pass


class _LazyRecords:
    """``RecordSource`` that re-reads a record by offset from a read-only descriptor.

    Used for big files so memory stays far below the file size. Records are parsed and
    migrated again on each cache miss; a bounded LRU keeps the recent ones.
    """

    def __init__(self, session: Session, fd: int) -> None:
        # Weak: the session holds this object, and no cycle may keep a frozen index alive.
        self._session_ref = weakref.ref(session)
        self._fd = -1
        self._closer: weakref.finalize | None = None
        self._cache: OrderedDict[int, tuple[dict[str, Any], int]] = OrderedDict()
        self._cached_bytes = 0
        self._lock = threading.Lock()
        self._borrowed = 0
        """Reads in progress through the descriptor (``_borrow_fd``)."""
        self._retired: list[weakref.finalize] = []
        """Closers of descriptors closed while reads through them were in progress."""
        self._adopt(fd)

    def _adopt(self, fd: int) -> None:
        """Own ``fd``: it is closed by ``close()`` or when this object is collected."""
        self._fd = fd
        self._closer = weakref.finalize(self, _close_quietly, fd)

    def _borrow_fd(self, path: Path) -> int:
        """The descriptor to read through (reopened read-only from ``path`` after ``close``),
        in use until ``_return_fd``: a ``close`` on another thread (a reload) meanwhile leaves
        it open until then, so it is not closed, nor its number given to another file, in the
        middle of a read."""
        with self._lock:
            if self._fd < 0:
                self._adopt(os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0)))
            self._borrowed += 1
            return self._fd

    def _return_fd(self) -> None:
        """A read through ``_borrow_fd``'s descriptor is done: close what ``close`` left open."""
        with self._lock:
            self._borrowed -= 1
            if not self._borrowed:
                for closer in self._retired:
                    closer()
                self._retired.clear()

    def close(self) -> None:
        """Close the descriptor (once the reads through it are done); later reads reopen the
        path read-only."""
        with self._lock:
            if self._closer is not None:
                if self._borrowed:
                    self._retired.append(self._closer)
                else:
                    self._closer()
                self._closer = None
            self._fd = -1
            self._cache.clear()
            self._cached_bytes = 0

    def clear(self) -> None:
        """Forget the cached records."""
        with self._lock:
            self._cache.clear()
            self._cached_bytes = 0

    def load_record(self, entry: Entry) -> dict[str, Any]:
        """The parsed, migrated record of ``entry`` (cached)."""
        with self._lock:
            hit = self._cache.get(entry.index)
            if hit is not None:
                self._cache.move_to_end(entry.index)
                return hit[0]
        record = self._read(entry)
        with self._lock:
            self._cache[entry.index] = (record, entry.size)
            self._cached_bytes += entry.size
            while self._cache and (
                len(self._cache) > CACHE_MAX_RECORDS or self._cached_bytes > CACHE_MAX_BYTES
            ):
                _, (_, size) = self._cache.popitem(last=False)
                self._cached_bytes -= size
        return record

    def entry_at(self, index: int) -> Entry | None:
        """Entry ``index`` of the session read through this source (None once it is gone)."""
        session = self._session_ref()
        return None if session is None else session._table[index]

    def peek_record(self, entry: Entry) -> dict[str, Any]:
        """The record of ``entry``: from the cache when there, else read without caching."""
        with self._lock:
            hit = self._cache.get(entry.index)
        return hit[0] if hit is not None else self._read(entry)

    def peek_run(self, table: EntryTable, indices: Sequence[int]) -> list[dict[str, Any] | None]:
        """The records of entries ``indices`` of a version-3 file (no migration) as
        ``peek_record`` gives them, lines read a run at a time (one ``pread`` for lines near
        each other) and no ``Entry`` built; None where that cannot be done the same way (a
        record in the cache or at the file's start, a line that does not parse as an object,
        a failed read): the caller reads those one by one."""
        from tui_compactor.session.reader import _FAST_ERRORS, _fast_loads

        found: list[dict[str, Any] | None] = [None] * len(indices)
        with self._lock:
            cached = [index in self._cache for index in indices]
        offsets, sizes = table._offsets, table._sizes
        session = self._session_ref()
        if session is None:
            return found
        try:
            fd = self._borrow_fd(session.path)
        except OSError:
            return found
        try:
            position = 0
            while position < len(indices):
                start = offsets[indices[position]]
                end = start + sizes[indices[position]]
                last = position + 1  # the run: lines at most _RUN_GAP bytes apart
                while last < len(indices):
                    at = offsets[indices[last]]
                    if (
                        not start <= at <= end + _RUN_GAP
                        or at + sizes[indices[last]] > start + _RUN_MAX
                    ):
                        break
                    end = max(end, at + sizes[indices[last]])
                    last += 1
                block = memoryview(os.pread(fd, end - start, start))  # lines parsed uncopied
                for slot in range(position, last):
                    index = indices[slot]
                    at = offsets[index]
                    if cached[slot] or at == 0:
                        continue
                    try:
                        record = _fast_loads(block[at - start : at - start + sizes[index]])
                    except _FAST_ERRORS:
                        continue
                    if isinstance(record, dict):
                        found[slot] = record
                position = last
        except OSError:
            pass
        finally:
            self._return_fd()
        return found

    def _read(self, entry: Entry) -> dict[str, Any]:
        from tui_compactor.session.reader import decode_record

        session = self._session_ref()
        if session is None:
            return {"_unavailable": "the session was closed", "type": entry.type, "id": entry.id,
                    "parentId": entry.parent_id, "timestamp": entry.timestamp}  # fmt: skip
        try:
            fd = self._borrow_fd(session.path)
            try:
                raw = os.pread(fd, entry.size, entry.offset)
            finally:
                self._return_fd()
            if entry.offset == 0 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            record = decode_record(raw)
        except (OSError, ValueError, RecursionError) as error:
            record = {"_unavailable": f"could not re-read line {entry.line}: {error}"}
        if not isinstance(record, dict):
            record = {"_unavailable": f"line {entry.line} changed on disk since loading"}
        if "_unavailable" in record:
            record.update(
                type=entry.type, id=entry.id, parentId=entry.parent_id, timestamp=entry.timestamp
            )
            return record
        return migrate_record(
            record,
            version=session.version,
            entry_id=entry.id,
            parent_id=entry.parent_id,
            first_kept_id=session._v1_first_kept.get(entry.index),
        )


class Session:
    """One loaded session file. Build it with ``reader.load_session``.

    ``Session.refresh()`` changes it in place; threads other than the one refreshing read it
    through ``workbench.handle.SessionHandle.read()``.
    """

    def __init__(self, path: Path) -> None:
        self.path: Path = path
        self.header: dict[str, Any] | None = None
        self.title_slot: dict[str, Any] | None = None
        self.version: int | None = None
        self._table = EntryTable()
        self.entries: Sequence[Entry] = self._table
        """The entries in file order (``EntryTable``: an ``Entry`` is built per read)."""
        self.complete: bool = False
        self.verdict: Verdict = Verdict.REFUSE
        self.append_refusal: str | None = None
        self.snapshot: FileSnapshot = FileSnapshot(0, 0, 0, 0, "", True, False)
        self.name: str | None = None
        self.synthetic_ids: set[str] = set()
        """Ids this tool minted for entries that had none (v3 entries without ``id``);
        never valid as a parent of an appended record."""
        self.ambiguous_ids: set[str] = set()
        """Ids defined more than once with different content."""
        self.header_line: int | None = None
        self.header_valid: bool = False
        self.line_count: int = 0
        """Physical lines read (a final line without ``\\n`` counts)."""
        # --- internal state kept for incremental refresh -------------------------------
        self._line_diags: list[Diagnostic] = []
        self._tree_diags: list[Diagnostic] = []
        self._latest: dict[str, int] = {}
        self._children = ChildLists()
        self._depth: array[int] = array(INDEX_CODE)
        """Ancestors per entry, in a flat array (an integer object each would cost 36 bytes
        more per entry)."""
        self._setting_above: array[int] = array(INDEX_CODE)
        """Per entry: the nearest entry of its path (itself included) that changes a setting
        (``SETTING_TYPES``), or -1; a context finds the thinking level set at the start of a
        long session without walking the path to it."""
        self._roots: list[int] = []
        self._leaves_cache: list[int] | None = None
        self._leaf: int | None = None
        self._label_events: list[tuple[int, Any, Any]] = []
        self._labels_cache: dict[int, str] | None = None
        self._calls: dict[int, tuple[tuple[str, ...], bool]] = {}
        self._result_call: dict[int, str] = {}
        self._quiet_assistants: set[int] = set()
        """Assistant messages with no text that did not stop on an error (tool calls only)."""
        self._compactions: dict[int, Any] = {}
        self._ours: list[int] = []
        """Entries whose record says this tool wrote it (``model.written_by_us``), in file
        order: the reader notes them as it indexes, so the list stays sorted."""
        self._omp_entry_type: str | None = None
        """The first entry type in file order that only oh-my-pi writes (``flavor``)."""
        self._omp_compactions: dict[int, str] = {}
        """Compaction index -> the oh-my-pi-only field it carries, as ``flavor`` words it."""
        self._omp_faults = FaultLines()
        """(line, byte offset, entry id, why) of each line oh-my-pi's loader fails on
        (``omp_open``)."""
        self._omp_context_faults: dict[int, str] = {}
        """Assistant message index -> why oh-my-pi fails when it is in the context it builds
        (``omp_open``)."""
        self._v1_first_kept: dict[int, str | None] = {}
        self._v1_first_kept_raw: dict[int, Any] = {}
        self._unresolved: list[tuple[int, str]] = []
        self._fragments: dict[str, int] = {}
        self._unknown_types: dict[str, list[tuple[int, int]]] = {}
        self._crlf_lines: int = 0
        self._crlf_first: tuple[int, int] = (0, 0)
        self._blank_lines: int = 0
        self._end_offset: int = 0
        self._last_line_start: int = 0
        self._torn_line: tuple[int, int] | None = None
        self._lazy: _LazyRecords | None = None
        self._hasher: Any = hashlib.sha256()
        self._digested: bool = True  # False: loaded without the sha256 (never writes)
        self._body_hasher: Any = None
        self._body_digest: str | None = None
        self._first_object_seen: bool = False
        self._v1_objects: list[int | None] = []
        self._hashed_to: int = 0
        self._scan_fd: int = -1
        self._keep_records: bool = True
        self._body_start: int = 0
        self._head_sample: bytes = b""
        self._tail_sample: bytes = b""
        self._io_error: str | None = None
        self._cancelled: bool = False
        self._leaf_is_complete_no_newline: bool = False
        self._oddities: Any = None
        """The reader's record of semantic problems pi ignores (``reader.Oddities``)."""
        self.preview: bool = False
        """A tail-first preview (``reader.load_tail_preview``): the file's last lines only,
        read-only; entry indices and line numbers count from the first line read. The whole
        file's index replaces it."""

    # ------------------------------------------------------------------ lifecycle

    def close(self) -> None:
        """Release the read-only descriptor kept for lazy record reads (if any)."""
        if self._lazy is not None:
            self._lazy.close()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return (
            f"<Session {self.path.name} v{self.version} {len(self.entries)} entries "
            f"{self.verdict.value}>"
        )

    # ------------------------------------------------------------------ diagnostics

    @property
    def diagnostics(self) -> list[Diagnostic]:
        """Every problem found, line-level ones in file order, then tree-level ones."""
        return self._line_diags + self._tree_diags

    @property
    def torn_ids(self) -> set[str]:
        """Ids readable from lines that did not parse (torn tail, broken records): a new id
        must not reuse them (append gate A7)."""
        return set(self._fragments)

    @property
    def needs_seal(self) -> bool:
        """True when the file ends in a torn record: appends first need a user-approved seal
        (one ``\\n`` appended, the fragment kept)."""
        return self.snapshot.torn_tail

    # ------------------------------------------------------------------ tree queries

    @property
    def leaf(self) -> int | None:
        """The file's leaf: the last parseable entry in file order (pi's rule)."""
        return self._leaf

    @property
    def roots(self) -> list[int]:
        """Entries without a resolved parent (real roots and broken links), in file order."""
        return list(self._roots)

    @property
    def leaves(self) -> list[int]:
        """Entries without children, in file order."""
        if self._leaves_cache is None:
            self._leaves_cache = self._children.childless()
        return list(self._leaves_cache)

    def children(self, i: int) -> list[int]:
        """Children of entry ``i`` in pi's ``getTree`` order (timestamp ascending, stable)."""
        return list(self._children[i])

    def child_count(self, i: int) -> int:
        """Number of children of entry ``i`` (no copy)."""
        return self._children.count(i)

    def entry_by_id(self, entry_id: str) -> Entry | None:
        """The latest definition of ``entry_id``, or None."""
        index = self._latest.get(entry_id)
        return None if index is None else self.entries[index]

    def parent_of(self, i: int) -> int | None:
        """Index of entry ``i``'s resolved parent, or None (no ``Entry`` built)."""
        return self._table.parent_of(i)

    def id_of(self, i: int) -> str:
        """Entry ``i``'s id (no ``Entry`` built)."""
        return self._table.id_of(i)

    def type_of(self, i: int) -> str:
        """Entry ``i``'s type (no ``Entry`` built)."""
        return self._table.type_of(i)

    def entry_types(self) -> list[str]:
        """Every entry's type in file order, for a pass over all of them."""
        return self._table.types()

    def type_column(self) -> Sequence[str]:
        """Every entry's type in file order, each read when indexed: for a walk over a few
        entries (``entry_types`` builds all of them)."""
        return self._table.type_column()

    def parent_column(self) -> Sequence[int]:
        """Every entry's parent index in file order, ``-1`` for none: the index's own column
        (read-only), for walks up many entries (an item read per step, not a call)."""
        return self._table.parent_column()

    def id_column(self) -> Sequence[str]:
        """Every entry's id in file order: the index's own column (read-only), for walks."""
        return self._table.id_column()

    def entry_roles(self) -> list[str | None]:
        """Every entry's ``message.role`` (None where none) in file order."""
        return self._table.roles()

    def index_of(self, entry_id: str) -> int | None:
        """Index of the latest definition of ``entry_id``, or None."""
        return self._latest.get(entry_id)

    def path_to(self, i: int) -> list[int]:
        """Entry indices from the root down to ``i`` (inclusive); O(depth)."""
        parents = self._table._parents
        path: list[int] = []
        node = i
        while node >= 0:
            path.append(node)
            node = parents[node]
        path.reverse()
        return path

    def active_path(self) -> list[int]:
        """``path_to(leaf)``, or ``[]`` for a session without entries."""
        return [] if self._leaf is None else self.path_to(self._leaf)

    def depth(self, i: int) -> int:
        """Number of ancestors of entry ``i`` (0 for a root)."""
        return self._depth[i]

    def setting_above(self, i: int) -> int | None:
        """The nearest entry on the path root..i (``i`` included) whose type is one of
        ``SETTING_TYPES``, or None; O(1)."""
        marks = self._setting_above
        if i < len(marks):
            found = marks[i]
            return None if found < 0 else found
        node: int | None = i  # not indexed (cannot happen for a loaded session): walk
        while node is not None and self.type_of(node) not in SETTING_TYPES:
            node = self.parent_of(node)
        return node

    def is_ancestor(self, a: int, b: int) -> bool:
        """True if ``a`` is ``b`` or one of its ancestors.

        Parents always have smaller indices than their children, so the walk up from ``b``
        stops as soon as it passes below ``a``: the cost is the number of ancestors of ``b``
        with an index above ``a`` (small for the usual "is this a bit further up" checks).
        """
        parents = self._table._parents
        node = b
        while node > a:
            node = parents[node]
        return node == a

    def common_ancestor(self, a: int, b: int) -> int | None:
        """The deepest entry that is an ancestor of (or equal to) both; None if in
        different trees."""
        parents = self._table._parents
        depth = self._depth
        x, y = a, b
        while x >= 0 and y >= 0 and depth[x] > depth[y]:
            x = parents[x]
        while x >= 0 and y >= 0 and depth[y] > depth[x]:
            y = parents[y]
        while x >= 0 and y >= 0 and x != y:
            x = parents[x]
            y = parents[y]
        return x if x >= 0 and x == y else None

    def broken_parent(self, i: int) -> str | None:
        """The unresolved ``parentId`` of entry ``i`` (missing, later or itself), or None."""
        table = self._table
        if table._parents[i] < 0 and table._parent_ids:
            return table._parent_ids.get(i)
        return None

    # ------------------------------------------------------------------ labels

    @property
    def labels(self) -> dict[int, str]:
        """Resolved labels: target entry index -> label (file order, last one wins; a
        missing, empty or null label clears)."""
        if self._labels_cache is None:
            by_id: dict[str, str] = {}
            for _, target, label in self._label_events:
                if not isinstance(target, str):
                    continue
                if isinstance(label, str) and label:
                    by_id[target] = label
                else:
                    by_id.pop(target, None)
            resolved: dict[int, str] = {}
            for target, label in by_id.items():
                index = self._latest.get(target)
                if index is not None:
                    resolved[index] = label
            self._labels_cache = resolved
        return dict(self._labels_cache)

    def label_of(self, i: int) -> str | None:
        """The resolved label of entry ``i``, if any."""
        if self._labels_cache is None:
            self.labels  # noqa: B018 - fills the cache
        assert self._labels_cache is not None
        return self._labels_cache.get(i)

    def name_under(self, rules: str | None) -> str | None:
        """The session's name as the agent of ``rules`` shows it: pi's latest ``session_info``
        name; oh-my-pi's title: the title slot's when the file has one, else the session
        header's (it reads no ``session_info``; an empty title is no name). A line-1 title
        record oh-my-pi does not read as its slot makes it refuse the file: no name."""
        if rules != "omp":
            return self.name
        if self.title_slot is not None:
            from tui_compactor.session.omp_open import title_slot_fault

            if title_slot_fault(self.title_slot) is not None:
                return None
        holder = self.title_slot if self.title_slot is not None else self.header
        title = holder.get("title") if isinstance(holder, dict) else None
        return title if isinstance(title, str) and title else None

    # ------------------------------------------------------------------ append checks

    @property
    def body_digest(self) -> str | None:
        """SHA-256 of the loaded bytes after oh-my-pi's 256-byte title slot, for a file that
        has one (the writer accepts an in-place title rewrite only if the rest is unchanged)."""
        return self._body_digest if self._body_start == TITLE_SLOT_BYTES else None

    def path_problem(self, i: int) -> str | None:
        """Why appending a child of entry ``i`` is unsafe (gate A3), or None.

        The path from ``i`` to its root must have no broken link (missing, later-defined or
        self parent), no ambiguous id (defined twice with different content) and no id this
        tool minted. O(depth).
        """
        if not 0 <= i < len(self.entries):
            return f"entry {i} does not exist"
        table = self._table
        ids, parents = table._ids, table._parents
        synthetic, ambiguous = self.synthetic_ids, self.ambiguous_ids
        node = i
        while node >= 0:
            if (ids[node] not in synthetic and ids[node] not in ambiguous
                    and (parents[node] >= 0 or node not in table._parent_ids)):  # fmt: skip
                node = parents[node]  # the common case: nothing to report on this entry
                continue
            entry = table[node]
            if entry.id in self.synthetic_ids:
                return f"entry on line {entry.line} has no id of its own; pi cannot reference it"
            if entry.id in self.ambiguous_ids:
                return (
                    f"the path to the root goes through id {entry.id}, which is defined more "
                    f"than once with different content; pi could resolve it differently"
                )
            if entry.parent is None and entry.parent_id is not None:
                return (
                    f"the path to the root is broken at {entry.id} (line {entry.line}): its "
                    f"parent {entry.parent_id} is not an earlier entry, so pi would not see "
                    f"the entries above it"
                )
            node = parents[node]
        return None

    # ------------------------------------------------------------------ facts noted while indexing

    def written_by_us(self, i: int) -> bool:
        """True when entry ``i``'s record was appended by this tool (noted while indexing, so
        no record is re-read)."""
        ours = self._ours
        position = bisect.bisect_left(ours, i)
        return position < len(ours) and ours[position] == i

    @property
    def ours(self) -> Sequence[int]:
        """Entries this tool appended, in file order (the session's own list: read it only)."""
        return self._ours

    # ------------------------------------------------------------------ records

    def record(self, i: int) -> dict[str, Any]:
        """Shorthand for ``entries[i].data``."""
        return self.entries[i].data

    def records_once(self, indices: Sequence[int]) -> list[dict[str, Any]]:
        """``entries[i].data_once()`` of each of ``indices``: for a big version-3 file read a
        run of lines at a time, without an ``Entry`` built per record (``peek_run``)."""
        entries = self.entries
        lazy = self._lazy
        if lazy is None or self.version != CURRENT_VERSION:
            return [entries[i].data_once() for i in indices]
        read = lazy.peek_run(self._table, indices)
        return [
            entries[i].data_once() if record is None else record
            for i, record in zip(indices, read, strict=True)
        ]

    def drop_cached_records(self) -> None:
        """Lazy mode: forget re-read records (memory pressure, benchmarks). No-op otherwise."""
        if self._lazy is not None:
            self._lazy.clear()

    @property
    def lazy(self) -> bool:
        """True when records are re-read from disk on demand (big files)."""
        return self._lazy is not None

    # ------------------------------------------------------------------ refresh

    def refresh(self) -> Refresh:
        """Re-stat the file; parse only the complete lines appended since the last load or
        refresh (``grew``); ``rewritten`` when the loaded bytes changed (reload the file)."""
        from tui_compactor.session.reader import refresh_session

        return refresh_session(self)

    # ------------------------------------------------------------------ building (loader)

    def _add_entry(self, entry: Entry) -> None:
        """Append a fully resolved entry to the tree structures."""
        index = entry.index
        self._table.append(entry, timestamp_key(entry.timestamp))
        self._children.append_entry()
        parent = entry.parent
        if entry.type in SETTING_TYPES:
            self._setting_above.append(index)
        else:
            self._setting_above.append(-1 if parent is None else self._setting_above[parent])
        if parent is None:
            self._depth.append(0)
            self._roots.append(index)
        else:
            self._depth.append(self._depth[parent] + 1)
            self._children.add(parent, index, self._table.timestamps)
        self._leaf = index
        self._latest[entry.id] = index
        self._leaves_cache = None

    def _diag(
        self,
        severity: Severity,
        code: str,
        message: str,
        line: int | None = None,
        offset: int | None = None,
        entry_id: str | None = None,
        *,
        tree: bool = False,
    ) -> None:
        diagnostic = Diagnostic(severity, code, message, str(self.path), line, offset, entry_id)
        (self._tree_diags if tree else self._line_diags).append(diagnostic)
