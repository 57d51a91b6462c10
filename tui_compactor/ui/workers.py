"""The app's ``work`` decorator: Textual's, named by the method alone.

Textual's ``work`` writes a debugging description of every worker it starts, ``repr`` of each
argument included, on the UI thread, unless it is given one. A compaction plan's ``repr``
holds every message it summarizes and keeps: ~10 ms on a 100k-entry session each time the
sweep of a shown plan starts, a stall of the frame that draws the plan. The workers here are
told apart by their method's name and group, which is all the description is for.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual import work as textual_work

__all__ = ["work"]


def work(**options: Any) -> Callable[[Callable[..., Any]], Any]:
    """Textual's ``work`` (same options) with the method's qualified name as its description,
    so starting a worker never formats its arguments."""

    def decorate(method: Callable[..., Any]) -> Any:
        options.setdefault("description", method.__qualname__)
        return textual_work(method, **options)

    return decorate
