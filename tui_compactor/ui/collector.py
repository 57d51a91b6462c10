"""The app's garbage-collector policy: a full collection never scans the whole heap.

CPython's full (generation 2) collection walks every tracked object while holding the GIL. With
a 100k-entry session open, the app's own heap (widgets, strips and their caches, plans, contexts)
grows past 100k objects between collections and one full collection froze the event loop for
30-110 ms. After each full collection the survivors are moved out of the collector's reach
(``gc.freeze``, as ``session.gc_paused`` does after indexing), so the next one scans only what
survived since: the collection stays proportional to recent work, not to the heap.

Frozen objects are still freed by reference counting; only reference cycles among them (a
closed dialog, a removed compaction panel) wait. ``deep_collect_if_due`` collects those once
enough was frozen, called by the app only while the user is idle and no worker runs.
"""

from __future__ import annotations

import gc
from typing import Any

__all__ = ["install", "uninstall", "deep_collect_if_due", "frozen_since_deep", "DEEP_COLLECT_AFTER"]

DEEP_COLLECT_AFTER = 300_000
"""Objects frozen by this policy since the last deep collection before one is due."""

_installed = 0
_frozen_since_deep = 0
"""Objects this policy froze since the last deep collection (not those frozen elsewhere, such
as a freshly indexed session: those are alive by design)."""


def _freeze_after_full(phase: str, info: dict[str, Any]) -> None:
    """``gc.callbacks`` hook: freeze the survivors of every full collection."""
    global _frozen_since_deep
    if phase == "stop" and info.get("generation") == 2:
        # A full collection leaves every survivor in generation 2 (``gc.get_freeze_count``
        # would walk all frozen objects: the session's index too).
        _frozen_since_deep += len(gc.get_objects(2))
        gc.freeze()


def install() -> None:
    """Start the policy (idempotent per app: every ``install`` needs an ``uninstall``)."""
    global _installed, _frozen_since_deep
    if _installed == 0:
        _frozen_since_deep = 0
        gc.callbacks.append(_freeze_after_full)
    _installed += 1


def uninstall() -> None:
    """Stop the policy when the last app stops; the collector sees every object again."""
    global _installed
    if _installed == 0:
        return
    _installed -= 1
    if _installed == 0:
        if _freeze_after_full in gc.callbacks:
            gc.callbacks.remove(_freeze_after_full)
        gc.unfreeze()


def deep_collect_if_due(limit: int = DEEP_COLLECT_AFTER) -> bool:
    """Collect cycles among frozen objects once ``limit`` more were frozen; True if it ran.

    This scans the whole heap (the session's index included: up to a second on a 100k-entry
    session), so the app calls it only while the user is idle.
    """
    global _frozen_since_deep
    if not _installed or _frozen_since_deep < limit:
        return False
    gc.unfreeze()
    gc.collect()  # the callback freezes the survivors again
    _frozen_since_deep = 0
    return True


def frozen_since_deep() -> int:
    """Objects this policy froze since the last deep collection (for tests and benchmarks)."""
    return _frozen_since_deep
