"""The session handle: one loaded session, its token caches, its refresh and a generation.

``Session.refresh()`` appends to the session's lists in place. Readers in other threads
(outline, plan, gauge and context workers) therefore read through ``SessionHandle.read()``: a
shared lock that a refresh (exclusive) waits for, so a reader sees the session either before
or after a refresh, never half-way. ``generation`` changes with every refresh that added
entries (and our own appends); a result computed at one generation says so, and a write
proposed at one generation is re-validated against the current one (``workbench.actions.apply``).
Generations are drawn from one counter for the whole process, so a handle made when a
rewritten file is loaded again never shares one with the handle before it: what was proposed
on the old content is stale on the new (``loaded_generation`` tells the two cases apart).
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tui_compactor.engine.tokens import TokenCache, TokenCounter

if TYPE_CHECKING:
    from tui_compactor.engine.hindsight import EntryFacts
    from tui_compactor.session.session import Refresh, Session

__all__ = ["SessionHandle", "Snapshot"]

_GENERATIONS = itertools.count(1)
"""Every handle's generations, increasing across handles (``next`` is atomic under the GIL)."""


class _SharedLock:
    """Many readers or one writer; a waiting writer holds new readers back (no starvation)."""

    def __init__(self) -> None:
        self._condition = threading.Condition(threading.Lock())
        self._readers = 0
        self._writer: int | None = None
        self._writers_waiting = 0

    @contextmanager
    def shared(self) -> Iterator[None]:
        me = threading.get_ident()
        with self._condition:
            if self._writer == me:  # the writing thread may read what it holds
                reentrant = True
            else:
                reentrant = False
                while self._writer is not None or self._writers_waiting:
                    self._condition.wait()
                self._readers += 1
        try:
            yield
        finally:
            with self._condition:
                if not reentrant:
                    self._readers -= 1
                    if not self._readers:
                        self._condition.notify_all()

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        me = threading.get_ident()
        with self._condition:
            if self._writer == me:
                reentrant = True
            else:
                reentrant = False
                self._writers_waiting += 1
                while self._writer is not None or self._readers:
                    self._condition.wait()
                self._writers_waiting -= 1
                self._writer = me
        try:
            yield
        finally:
            with self._condition:
                if not reentrant:
                    self._writer = None
                    self._condition.notify_all()


@dataclass(frozen=True, slots=True)
class Snapshot:
    """What a reader holds while inside ``SessionHandle.read()``.

    Valid only inside the ``with`` block: afterwards a refresh may add entries.
    """

    session: Session
    generation: int
    leaf: int | None
    """The file's leaf at this generation."""
    entry_count: int
    loaded_generation: int = 0
    """The generation this load of the file began at (``is_loaded_at``)."""

    def is_loaded_at(self, generation: int) -> bool:
        """Whether a result made at ``generation`` belongs to this load of the file."""
        return _same_load(generation, self.loaded_generation)


def _same_load(generation: int, loaded_generation: int) -> bool:
    """A result made at ``generation`` belongs to the load that began at ``loaded_generation``
    (an older generation is an earlier load's, or another file's: its entry indices are not
    this load's)."""
    return generation >= loaded_generation


class SessionHandle:
    """The loaded session shared by the UI, the workers and the commands.

    Use ``read()`` around any computation over the session in a thread, ``refresh()`` to pick
    up appended entries, and ``workbench.actions.apply`` to write.
    """

    def __init__(self, session: Session) -> None:
        self.session = session
        self._lock = _SharedLock()
        self._generation = self._loaded_generation = next(_GENERATIONS)
        self._caches: dict[str, TokenCache] = {}
        self._facts: EntryFacts | None = None
        self._cache_lock = threading.Lock()

    @property
    def generation(self) -> int:
        """Bumped by every refresh or append that changed the loaded entries."""
        return self._generation

    @property
    def loaded_generation(self) -> int:
        """The generation the session was loaded at: an older one belongs to an earlier load
        of the file (it was rewritten since, and loaded again)."""
        return self._loaded_generation

    def is_loaded_at(self, generation: int) -> bool:
        """Whether a result made at ``generation`` belongs to this load of the file (an older
        generation is an earlier load's, or another file's: its entry indices are not ours)."""
        return _same_load(generation, self._loaded_generation)

    @contextmanager
    def read(self) -> Iterator[Snapshot]:
        """Hold a consistent view of the session (no refresh runs until the block ends)."""
        with self._lock.shared():
            session = self.session
            yield Snapshot(
                session, self._generation, session.leaf, len(session.entries),
                self._loaded_generation,
            )  # fmt: skip

    @contextmanager
    def exclusive(self) -> Iterator[Session]:
        """Hold the session alone (refreshes and appends; readers wait)."""
        with self._lock.exclusive():
            yield self.session

    def refresh(self) -> Refresh:
        """Parse what was appended to the file; bump the generation when entries were added.

        A ``rewritten`` result changes nothing here: the caller reloads the file.
        """
        with self._lock.exclusive():
            return self.refresh_locked()

    def refresh_locked(self) -> Refresh:
        """``refresh`` for a caller that already holds ``exclusive()``."""
        result = self.session.refresh()
        if result.status == "grew":
            self._generation = next(_GENERATIONS)
        return result

    def token_cache(self, counter: TokenCounter) -> TokenCache:
        """The token cache of this session for ``counter`` (one per counter, shared)."""
        with self._cache_lock:
            cache = self._caches.get(counter.name)
            if cache is None or cache.counter is not counter:
                cache = self._caches[counter.name] = TokenCache(self.session, counter)
            return cache

    def entry_facts(self) -> EntryFacts:
        """What the hindsight audit needs of each entry (``engine.hindsight.EntryFacts``), one
        for the session's life: an entry's facts are worked out (its record read) the first
        time an audit or the timeline asks, then kept. Entries never change once loaded (a
        refresh only appends; a rewritten file gets a new handle), so they stay true."""
        from tui_compactor.engine.hindsight import EntryFacts

        with self._cache_lock:
            if self._facts is None:
                self._facts = EntryFacts()
            return self._facts
