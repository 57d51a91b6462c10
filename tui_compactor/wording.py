"""Words shared by every screen: a count with its noun in the right number (no screen says
"1 msgs" or "2 file(s)"), and the mark of figures counted with the chars/4 estimate.

Shared by the commands' text output, the app and the offline summarizer.
"""

from __future__ import annotations

__all__ = ["ESTIMATE_MARK", "NO_TABLE_MARK", "count_of", "more_of"]

ESTIMATE_MARK = "≈ chars/4"
"""Beside a figure counted with pi's chars/4 estimate in place of the counter asked for."""
NO_TABLE_MARK = f"{ESTIMATE_MARK}, no cl100k table"
"""Beside every figure counted with the estimate because the cl100k table could not be loaded
(the status line, the gauge, the plan's settings, the Window tab, the note that says so)."""

_IRREGULAR = {
    "entry": "entries",
    "search or listing": "searches or listings",
    "summary": "summaries",
    "match": "matches",
    "this": "these",
}


def count_of(n: int, one: str, many: str | None = None) -> str:
    """``1 message`` / ``3 messages`` (``many`` for irregular plurals)."""
    if n == 1:
        return f"{n} {one}"
    return f"{n} {many or _IRREGULAR.get(one) or one + 's'}"


def more_of(shown: int, total: int) -> str:
    """`` and N more`` when ``total`` items were cut to ``shown``, else ``""``."""
    return f" and {total - shown} more" if total > shown else ""
