"""The app's collector policy: full collections freeze their survivors, a deep collection (run
when the user is idle) still frees cycles among them, and stopping restores the defaults."""

from __future__ import annotations

import gc
import weakref

from tui_compactor.ui import collector


class Node:
    """An object that can sit in a reference cycle."""

    partner: object = None


def test_survivors_are_frozen_and_a_deep_collection_frees_frozen_cycles() -> None:
    collector.install()
    try:
        node = Node()
        node.partner = node  # a cycle: only the cyclic collector can free it
        alive = weakref.ref(node)
        gc.collect()  # a full collection: its survivors leave the collector's reach
        assert collector.frozen_since_deep() > 0
        del node
        gc.collect()
        assert alive() is not None, "a frozen cycle waits for the deep collection"
        assert not collector.deep_collect_if_due(limit=10**12), "not due yet"
        assert collector.deep_collect_if_due(limit=0)
        assert alive() is None
        assert collector.frozen_since_deep() == 0
    finally:
        collector.uninstall()
    assert gc.get_freeze_count() == 0
    assert collector._freeze_after_full not in gc.callbacks


def test_cycles_are_collected_normally_without_the_policy() -> None:
    node = Node()
    node.partner = node
    alive = weakref.ref(node)
    del node
    gc.collect()
    assert alive() is None
    assert not collector.deep_collect_if_due(limit=0), "nothing to do when not installed"
