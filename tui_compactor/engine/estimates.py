"""When the usage-anchored size of a context and the local estimate of it disagree.

A context's size is taken from the provider's usage numbers when the path has them (what pi
compacts on) and estimated locally otherwise. Usage numbers can be stale or foreign — a branch
whose last usage belongs to another model, or a session edited outside pi — and then the two
figures differ by a large factor. The gauge and the text commands flag that the same way.
"""

from __future__ import annotations

import math

__all__ = ["DISAGREEMENT_RATIO", "disagreement", "ratio"]

DISAGREEMENT_RATIO = 3.0
"""Figures this many times apart (either way) are flagged."""


def disagreement(usage_based: int | None, local: int | None) -> float | None:
    """How many times apart the two figures are, when that is at least ``DISAGREEMENT_RATIO``.

    None when either figure is missing or not positive, or when they agree well enough.
    """
    if not usage_based or not local or usage_based <= 0 or local <= 0:
        return None
    times = ratio(max(usage_based, local), min(usage_based, local))
    return times if times >= DISAGREEMENT_RATIO else None


def ratio(numerator: float, denominator: float) -> float:
    """``numerator / denominator`` that never raises on a damaged figure: a usage can hold an
    integer past a float's range (the quotient is then infinite, signed)."""
    try:
        return numerator / denominator
    except OverflowError:
        return math.inf if (numerator < 0) == (denominator < 0) else -math.inf
