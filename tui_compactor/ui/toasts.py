"""How many notes the app shows at once: the toasts stay in the lower half of the screen.

Several notes raised together (a file's problems as it opens, a config's, a write's outcome)
would stack bottom-up over the tree and the panes at 80x24. Every note of the app goes through
``CompactorApp._on_notify``, which asks ``toasts_to_drop`` which shown notes make room for the
new one: a note equal to the new one (same title and text) is replaced, not repeated; then the
oldest of the least severe go first until the toasts fit in half the screen's height. A note more
severe than the new one never makes room for it (an error stays until it expires, whatever is
noted after it): then the toasts may reach above the half. The new note is always shown.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from textual.geometry import Size
from textual.notifications import Notification

__all__ = ["toast_rows", "toasts_to_drop"]

TOAST_WIDTH = 60
"""Textual's toast: 60 columns wide, at most half the screen's width."""
TOAST_FRAME_COLUMNS = 3
"""Its left border (1) and padding (1 each side)."""
TOAST_FRAME_ROWS = 3
"""Its top margin (1) and padding (1 above, 1 below)."""
SEVERITY_ORDER = {"information": 0, "warning": 1, "error": 2}
"""Who makes room first: information, then warnings, errors last."""


def toast_rows(note: Notification, screen: Size) -> int:
    """Rows the toast of ``note`` takes on a screen of ``screen`` (title and wrapped text)."""
    text_width = max(1, min(TOAST_WIDTH, screen.width // 2) - TOAST_FRAME_COLUMNS)
    lines = sum(max(1, math.ceil(len(line) / text_width)) for line in note.message.split("\n"))
    return TOAST_FRAME_ROWS + (1 if note.title else 0) + lines


def toasts_to_drop(
    shown: Iterable[Notification], new: Notification, screen: Size
) -> list[Notification]:
    """The shown notes (oldest first) to take away so that ``new`` joins them within half the
    screen's height: its duplicates, then the oldest information, warnings, errors, never one
    more severe than ``new``."""
    shown = list(shown)
    drop = [note for note in shown if (note.title, note.message) == (new.title, new.message)]
    kept = [note for note in shown if note not in drop]
    budget = max(screen.height // 2, 1)
    rows = toast_rows(new, screen) + sum(toast_rows(note, screen) for note in kept)
    severity = SEVERITY_ORDER.get(new.severity, 0)
    by_priority = sorted(
        (at for at in range(len(kept)) if SEVERITY_ORDER.get(kept[at].severity, 0) <= severity),
        key=lambda at: (SEVERITY_ORDER.get(kept[at].severity, 0), at),
    )
    for at in by_priority:
        if rows <= budget:
            break
        rows -= toast_rows(kept[at], screen)
        drop.append(kept[at])
    return drop
