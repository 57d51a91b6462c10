"""The app's garbage-collector policy: a full collection never scans the whole heap.

CPython's full (generation 2) collection walks every tracked object while holding the GIL. With
a 100k-entry session open, the app's own heap (widgets, strips and their caches, plans, contexts)
grows past 100k objects between collections and one full collection froze the event loop for
30-110 ms. After each middle and full collection the survivors are moved out of the
collector's reach (``gc.freeze``, as ``session.gc_paused`` does after indexing), so a full
collection scans only what the young generations hold, like a middle one: no collection grows
with the heap.

Frozen objects are still freed by reference counting; only reference cycles among them (a
closed dialog, a removed compaction panel, a short-lived cycle that happened to outlive one
middle collection) wait for a deep collection. Most of those cycles were Textual's strips: a
strip divided at its own length caches a list holding itself (``Strip.divide``), and the
compositor divides every line it draws, so every strip drawn became cyclic garbage (two thirds
of what waited). ``install`` makes that case return without the cache (``_break_strip_cycles``):
reference counting frees those strips.

What waits is measured as the growth of the interpreter's allocated memory blocks since the
last deep collection (``sys.getallocatedblocks``: it walks the allocator's pools, not the
objects, under a millisecond for a 100k session's heap; read at each middle and full
collection and when a pause of the collector ends), not by counting the frozen objects
(``gc.get_freeze_count`` walks them all: 20-40 ms on the 100k session under load, which landed
inside a collection on the UI thread). Objects
frozen and then freed by reference counting (strips, a worker's context) do not grow it. Once
it grew by ``DEEP_COLLECT_GROWTH`` a deep collection is due; freezing goes on, so no full
collection scans a growing heap while the user works. Only past ``FREEZE_LIMIT`` (memory still
bounded if the user never pauses) does freezing stop until the deep collection, the freezes
when a pause of the collector ends (``session.resume_gc``) included: collections
then work as CPython's do on what is not frozen (cycles made from then on are freed by them; a
full one scans what lived since freezing stopped, not the session's index).

``deep_collect_if_due`` collects the frozen cycles, called by the app only while the user is idle
and no worker runs. A deep collection scans every frozen object, the session's index included
(0.15-0.25 s of CPU with a 100k-entry or a 200k-deep session open, three times that in wall time on
a busy machine), and that time the event loop waits; so it runs only when it can free something.
Legitimate growth (a session's token counts, a live file's new entries) also makes it due: it
then frees little, and the growth counts from what is alive after it.

The whole policy, from start to a loaded session (tested in ``tests/ui/test_collector.py``):

* start-up: no collection until the first screen is drawn (``hold_for_start_up``), then what
  it built is frozen;
* what lives as long as the session (its index, the tree's rows, the records a worker keeps
  parsed for tokens or a measure, a navigation plan) is built with the collector paused and
  frozen when the pause ends (``session.gc_paused``; this module's check refuses the freeze
  only past ``FREEZE_LIMIT``);
* a pass that reads many records once (search, the chart, the audits) reads them past the
  session's cache of parsed records (``Session.records_once``): kept, they pushed as many old
  records out, and CPython starts a young collection only when allocations minus frees pass
  its threshold, so what such a pass parsed piled up young until a collection on the UI
  thread scanned it all in one frame;
* survivors of every middle and full collection are frozen, a full collection every
  ``FULL_EVERY`` middle ones, CPython's other thresholds kept (more frequent middle
  collections are shorter, but each runs this module's callback: more UI CPU in all);
* cycles among frozen objects wait for ``deep_collect_if_due`` while the user is idle.
"""

from __future__ import annotations

import gc
import sys
from collections.abc import Iterable, Sequence
from typing import Any

from tui_compactor.session.session import pause_gc, resume_gc, set_freeze_check

__all__ = [
    "install",
    "uninstall",
    "deep_collect_if_due",
    "grown",
    "rebase",
    "hold_for_start_up",
    "release_start_up",
    "DEEP_COLLECT_GROWTH",
    "FREEZE_LIMIT",
]

DEEP_COLLECT_GROWTH = 400_000
"""Growth of the allocated memory blocks since the last deep collection that makes one due
(at the next idle check): only objects in reference cycles outlive their last reference, so
this bounds what waits for a user who pauses (~25 MB; Textual's strips are ~50 bytes a
block)."""

FREEZE_LIMIT = 4 * DEEP_COLLECT_GROWTH
"""Growth past which survivors are no longer frozen until the deep collection: what waits stays
bounded for a user who never pauses, at the price of full collections that scan what lived
since."""

FULL_EVERY = 3
"""Collections of the middle generation between two full ones (CPython's default: 10); with
the survivors of each frozen, a full one costs about what a middle one does."""

_installed = 0
_default_thresholds: tuple[int, int, int] | None = None
_blocks_after_deep: int | None = None
"""Allocated blocks after the last deep collection; None: read them at the next collection
(after ``install`` and ``rebase``)."""
_grown = 0
"""Growth of the allocated blocks since the last deep collection, at the last collection."""
_start_up_held = False
"""Whether ``hold_for_start_up`` pauses the collector now."""


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
    the allocated blocks grew by ``FREEZE_LIMIT`` since the last deep collection."""
    global _blocks_after_deep, _grown
    if phase != "stop" or info.get("generation", 0) < 1:
        return
    blocks = sys.getallocatedblocks()
    if _blocks_after_deep is None:
        _blocks_after_deep = blocks
    _grown = blocks - _blocks_after_deep
    if _grown < FREEZE_LIMIT:
        gc.freeze()


def _may_freeze() -> bool:
    """``session.resume_gc``'s check (a pause of the collector ends: a token batch, a gauge
    measure, an index): freeze only below ``FREEZE_LIMIT``, as the survivors are. A freeze
    there takes the UI thread's garbage cycles too; past the limit they are left to the
    collections, which free them."""
    if _blocks_after_deep is None:
        return True  # no base yet: the first collection reads it and freezes anyway
    return sys.getallocatedblocks() - _blocks_after_deep < FREEZE_LIMIT


def _break_strip_cycles() -> None:
    """Make ``Strip.divide`` at the strip's own length return without caching a list that holds
    the strip itself (Textual 8 caches ``[self]`` in the strip's ``_divide_cache``: a cycle that
    only the cyclic collector can free, made for every line the compositor draws). The result
    is the same: a list holding the strip. Other cuts go through Textual's cached path."""
    from textual.strip import Strip

    divide = Strip.divide
    if getattr(divide, "_without_self_cycle", False):
        return

    def divide_without_self_cycle(self: Strip, cuts: Iterable[int]) -> Sequence[Strip]:
        length = self.cell_length
        kept = [cut for cut in cuts if cut <= length]
        if kept == [length]:
            return [self]
        return divide(self, kept)

    divide_without_self_cycle._without_self_cycle = True  # type: ignore[attr-defined]
    divide_without_self_cycle.__doc__ = divide.__doc__
    Strip.divide = divide_without_self_cycle  # type: ignore[method-assign]


def install() -> None:
    """Start the policy (idempotent per app: every ``install`` needs an ``uninstall``)."""
    global _installed, _default_thresholds, _blocks_after_deep, _grown
    if _installed == 0:
        _break_strip_cycles()
        _blocks_after_deep = None  # the first collection freezes the whole live heap
        _grown = 0
        _default_thresholds = gc.get_threshold()
        gc.set_threshold(_default_thresholds[0], _default_thresholds[1], FULL_EVERY)
        gc.callbacks.append(_freeze_survivors)
        set_freeze_check(_may_freeze)
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
        set_freeze_check(None)
        if _default_thresholds is not None:
            gc.set_threshold(*_default_thresholds)
        gc.unfreeze()


def rebase() -> None:
    """Long-lived objects were frozen on purpose (a freshly indexed session): they are not
    garbage, so the growth that makes a deep collection due counts from the next collection."""
    global _blocks_after_deep, _grown
    _blocks_after_deep = None
    _grown = 0


def grown() -> int:
    """Growth of the allocated blocks since the last deep collection (or ``install``,
    ``rebase``), as read at the last middle or full collection."""
    return _grown


def deep_collect_if_due(growth: int = DEEP_COLLECT_GROWTH) -> bool:
    """Collect cycles among frozen objects if memory grew by ``growth`` blocks since the last
    deep collection; True if it ran.

    This scans the whole heap, the session's index included, so the app calls it only while
    the user is idle.
    """
    global _blocks_after_deep, _grown
    if not _installed or _blocks_after_deep is None:
        return False
    if sys.getallocatedblocks() - _blocks_after_deep < growth:
        return False
    gc.unfreeze()
    _blocks_after_deep = None  # read again after it: what it left alive is the new base
    gc.collect()  # the callback freezes the survivors and reads the new base
    _grown = 0
    return True
