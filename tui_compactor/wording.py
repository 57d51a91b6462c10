"""Numbers in words for people: a count with its noun in the right number.

Shared by the commands' text output, the app and the offline summarizer, so that no screen
says "1 msgs" or "2 file(s)".
"""

from __future__ import annotations

__all__ = ["count_of", "more_of"]

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
