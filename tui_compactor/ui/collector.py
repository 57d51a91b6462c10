"""The app's garbage-collector policy: a full collection never scans the whole heap.

CPython's full (generation 2) collection walks every tracked object while holding the GIL. With
a 100k-entry session open, the app's own heap (widgets, strips and their caches, plans, contexts)
grows past 100k objects between collections and one full collection froze the event loop for
30-110 ms. After each middle and full collection the survivors are moved out of the
collector's reach (``gc.freeze``, as ``session.gc_paused`` does after indexing), so a full
collection scans only what the young generations hold, like a middle one: no collection grows
with the heap. (Freezing after full collections only still left the survivors of three middle
collections to each full one: 18-33k objects and 15-33 ms of CPU on the 100k session while
summaries streamed or the navigation dialog opened, since a new container of a plan or of the
tree's rows is scanned reference by reference.)

Frozen objects are still freed by reference counting; only reference cycles among them (a
closed dialog, a removed compaction panel, a short-lived cycle that happened to outlive one
middle collection) wait. What waits is bounded: once this policy froze ``DEEP_COLLECT_AFTER``
objects since the last deep collection (or the last check that found none due), it stops
freezing, and collections work as CPython's do on what is not frozen: cycles made from then on
are freed by them, and a full one scans only what lived since freezing stopped, not the frozen
heap (the session's index). At that bound the frozen objects still alive are counted first: if
they did not grow by ``DEEP_COLLECT_GROWTH`` since the last deep collection (what was frozen has
been freed by reference counting: strips, a worker's context), there is nothing waiting and
freezing goes on; otherwise it stops until the deep collection. (Stopping at the bound alone
brought CPython's full collections back in every long flow without an idle pause: 50k objects
and 30-70 ms of UI CPU each while the navigation dialog opened.)

``deep_collect_if_due`` collects the frozen cycles, called by the app only while the user is idle
and no worker runs. A deep collection scans every frozen object, the session's index included
(0.15-0.25 s of CPU with a 100k-entry or a 200k-deep session open, three times that in wall time on
a busy machine), and that time the event loop waits; so it runs only when it can free something:
when the frozen objects still alive grew by ``DEEP_COLLECT_GROWTH`` since the last one. Most of what
collections freeze (strips, a worker's context) is freed by reference counting soon after and is no
reason to scan.
"""

from __future__ import annotations

import gc
from typing import Any

from tui_compactor.session.session import pause_gc, resume_gc

__all__ = [
    "install",
    "uninstall",
    "deep_collect_if_due",
    "frozen_since_deep",
    "rebase",
    "hold_for_start_up",
    "release_start_up",
    "DEEP_COLLECT_AFTER",
    "DEEP_COLLECT_GROWTH",
]

DEEP_COLLECT_AFTER = 200_000
"""Objects frozen by this policy between two counts of the frozen objects still alive (at a
collection past this bound, and at the idle check; ``gc.get_freeze_count`` walks them all: 10 ms
for 170k): dead cycles among them wait for a deep collection, so this bounds them."""

DEEP_COLLECT_GROWTH = 100_000
"""Growth of the frozen objects still alive since the last deep collection that makes one due:
only objects in reference cycles outlive their last reference, so this bounds what waits."""

FULL_EVERY = 3
"""Collections of the middle generation between two full ones (CPython's default: 10); with
the survivors of each frozen, a full one costs about what a middle one does."""

_installed = 0
_default_thresholds: tuple[int, int, int] | None = None
_frozen_since_deep = 0
"""Objects this policy froze since the last deep collection (not those frozen elsewhere, such
as a freshly indexed session: those are alive by design)."""
_alive_after_deep: int | None = None
"""Frozen objects alive after the last deep collection; None: count them at the next check
(after ``install`` and ``rebase``)."""
_start_up_held = False
"""Whether ``hold_for_start_up`` pauses the collector now."""
_deep_due = False
"""The frozen objects still alive grew enough for a deep collection: freezing waits for it
(and is not counted again at every collection meanwhile)."""


def hold_for_start_up() -> None:
    """No cyclic collection from here until the first screen is drawn (``release_start_up``).

    Importing Textual and the app and building the first screen make ~50k objects that live
    as long as the app; the collector would scan them over and over while they are made (~50
    ms of a ~0.3 s start-up, a full collection alone ~20 ms). Released, they are frozen
    (``session.resume_gc``), so no later collection scans them either.
    """
    global _start_up_held
    if not _start_up_held:
        _start_up_held = True
        pause_gc()


def release_start_up() -> None:
    """End ``hold_for_start_up`` (idempotent)."""
    global _start_up_held
    if _start_up_held:
        _start_up_held = False
        resume_gc()


def _freeze_survivors(phase: str, info: dict[str, Any]) -> None:
    """``gc.callbacks`` hook: freeze the survivors of every middle and full collection, until
    ``DEEP_COLLECT_AFTER`` objects were frozen since the last deep collection or idle check."""
    global _frozen_since_deep, _deep_due
    if phase != "stop" or info.get("generation", 0) < 1 or _deep_due:
        return
    if _frozen_since_deep >= DEEP_COLLECT_AFTER and _grew(DEEP_COLLECT_GROWTH):
        _deep_due = True
        return
    # Survivors of a middle or full collection are in generation 2 (which holds nothing
    # else: it was frozen last time); ``gc.get_freeze_count`` would walk all frozen
    # objects, the session's index too.
    _frozen_since_deep += len(gc.get_objects(2))
    gc.freeze()


def _grew(growth: int) -> bool:
    """Whether the frozen objects still alive grew by ``growth`` since the last deep
    collection. If not, what was frozen since has been freed (no cycle holds it) or was frozen
    on purpose: the freezing counts from zero again."""
    global _frozen_since_deep, _alive_after_deep, _deep_due
    alive = gc.get_freeze_count()
    if _alive_after_deep is None or alive - _alive_after_deep < growth:
        if _alive_after_deep is None:
            _alive_after_deep = alive
        _frozen_since_deep = 0
        _deep_due = False
        return False
    return True


def install() -> None:
    """Start the policy (idempotent per app: every ``install`` needs an ``uninstall``)."""
    global _installed, _frozen_since_deep, _default_thresholds, _alive_after_deep, _deep_due
    if _installed == 0:
        _frozen_since_deep = 0
        _deep_due = False
        _alive_after_deep = None  # the first full collection freezes the whole live heap
        _default_thresholds = gc.get_threshold()
        gc.set_threshold(_default_thresholds[0], _default_thresholds[1], FULL_EVERY)
        gc.callbacks.append(_freeze_survivors)
    _installed += 1


def uninstall() -> None:
    """Stop the policy when the last app stops; the collector sees every object again."""
    global _installed
    if _installed == 0:
        return
    _installed -= 1
    if _installed == 0:
        release_start_up()
        if _freeze_survivors in gc.callbacks:
            gc.callbacks.remove(_freeze_survivors)
        if _default_thresholds is not None:
            gc.set_threshold(*_default_thresholds)
        gc.unfreeze()


def rebase() -> None:
    """Long-lived objects were frozen on purpose (a freshly indexed session): they are not
    garbage, so the growth that makes a deep collection due counts from the next check."""
    global _alive_after_deep
    _alive_after_deep = None


def deep_collect_if_due(limit: int = DEEP_COLLECT_AFTER, growth: int = DEEP_COLLECT_GROWTH) -> bool:
    """Collect cycles among frozen objects if it can free something; True if it ran.

    Due once ``limit`` objects were frozen by this policy and the frozen objects still alive
    grew by ``growth`` since the last deep collection (or since the first check after
    ``install`` or ``rebase``, which only counts them). This scans the whole heap, the
    session's index included, so the app calls it only while the user is idle.
    """
    global _frozen_since_deep, _alive_after_deep, _deep_due
    if not _installed or (_frozen_since_deep < limit and not _deep_due) or not _grew(growth):
        return False
    gc.unfreeze()
    _frozen_since_deep = 0  # so the callback freezes the survivors again
    _deep_due = False
    gc.collect()
    _frozen_since_deep = 0
    _alive_after_deep = gc.get_freeze_count()
    return True


def frozen_since_deep() -> int:
    """Objects this policy froze since the last deep collection (for tests and benchmarks)."""
    return _frozen_since_deep
