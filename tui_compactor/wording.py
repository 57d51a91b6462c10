"""Words shared by every screen: a count with its noun in the right number (no screen says
"1 msgs" or "2 file(s)"), and the mark of figures counted with the chars/4 estimate.

Shared by the commands' text output, the app and the offline summarizer.
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = [
    "ESTIMATE_MARK",
    "NO_TABLE_MARK",
    "count_of",
    "more_of",
    "provider_gap",
    "token_figure",
]

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


def provider_gap(gap: int, figure: Callable[[int], str]) -> str:
    """What the provider counted beyond the messages' own count (``gap`` tokens, written with
    ``figure``): ``+6.8k system prompt, tools, counting``; below it, no negative system prompt
    but ``1.1k fewer than counted here: counted differently``. The one wording of the Window
    tab and of ``context --breakdown``."""
    if gap >= 0:
        return f"+{figure(gap)} system prompt, tools, counting"
    return f"{figure(-gap)} fewer than counted here: counted differently"


def token_figure(text: str) -> float:
    """A token figure as people write it — ``20000``, ``20_000``, ``20k``, ``1.5M``,
    ``1500.5`` — as the number it stands for: the one reading of a typed figure, for the app's
    plan form, the settings flags (``--keep-recent 20k``) and the config's token keys and
    variables (``TUI_COMPACTOR_CONTEXT_WINDOW=1M``).

    Raises:
        ValueError: not such a figure (``abc``, ``nan``, ``inf``, an empty text).
    """
    cleaned = text.strip().lower().replace("_", "")
    scale = 1
    if cleaned.endswith("k"):
        scale, cleaned = 1000, cleaned[:-1]
    elif cleaned.endswith("m"):
        scale, cleaned = 1_000_000, cleaned[:-1]
    value = float(cleaned) * scale
    if value != value or value in (float("inf"), float("-inf")):
        raise ValueError(f"not a number of tokens: {text}")
    return value
