"""What an updated compaction summary changed against the previous one.

An update summary merges new work into ``<previous-summary>``; users want to see what was
added and, above all, what was dropped. ``summary_diff_text`` compares the two texts line by
line (``difflib``), marks changed words inside replaced lines, folds long unchanged runs, and
returns ``rich.text.Text`` built from sanitized text (never markup). ``SummaryDiff`` shows it.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static

from tui_compactor.textsafe import sanitize

__all__ = ["DiffStats", "summary_diff_text", "diff_stats", "SummaryDiff"]

ADDED_STYLE = "green"
REMOVED_STYLE = "red"
ADDED_WORD_STYLE = "bold black on green"
REMOVED_WORD_STYLE = "bold black on red"
CONTEXT_STYLE = "dim"

_WORD_RE = re.compile(r"\s+|\w+|[^\w\s]")


@dataclass(frozen=True, slots=True)
class DiffStats:
    """Counts of lines added, removed and kept between two summaries."""

    added: int
    removed: int
    unchanged: int

    @property
    def changed(self) -> bool:
        """True when the texts differ in at least one line."""
        return bool(self.added or self.removed)


def _lines(text: str) -> list[str]:
    """Sanitized lines of ``text`` (trailing whitespace ignored)."""
    return [line.rstrip() for line in sanitize(text).split("\n")]


def diff_stats(previous: str, updated: str) -> DiffStats:
    """Lines added, removed and unchanged going from ``previous`` to ``updated``."""
    old, new = _lines(previous), _lines(updated)
    added = removed = unchanged = 0
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            unchanged += i2 - i1
        else:
            removed += i2 - i1
            added += j2 - j1
    return DiffStats(added=added, removed=removed, unchanged=unchanged)


def _word_diff(old_line: str, new_line: str) -> tuple[Text, Text]:
    """The removed and added versions of a replaced line, changed words highlighted."""
    old_words = _WORD_RE.findall(old_line)
    new_words = _WORD_RE.findall(new_line)
    removed = Text("- ", style=REMOVED_STYLE)
    added = Text("+ ", style=ADDED_STYLE)
    matcher = difflib.SequenceMatcher(a=old_words, b=new_words, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        old_part = "".join(old_words[i1:i2])
        new_part = "".join(new_words[j1:j2])
        if tag == "equal":
            removed.append(old_part, style=REMOVED_STYLE)
            added.append(new_part, style=ADDED_STYLE)
        else:
            removed.append(old_part, style=REMOVED_WORD_STYLE)
            added.append(new_part, style=ADDED_WORD_STYLE)
    return removed, added


def summary_diff_text(previous: str, updated: str, *, context: int = 2) -> Text:
    """A line diff of two summaries as ``Text``: ``-`` removed (red), ``+`` added (green),
    changed words highlighted inside replaced lines, unchanged runs longer than
    ``2 * context`` lines folded to ``⋯ N unchanged lines``.
    """
    old, new = _lines(previous), _lines(updated)
    out = Text(end="")
    stats = diff_stats(previous, updated)
    header = Text(f"+{stats.added} added  -{stats.removed} removed  ", style="bold")
    header.append(f"{stats.unchanged} unchanged", style=CONTEXT_STYLE)
    out.append_text(header)
    out.append("\n")
    if not stats.changed:
        out.append("The summaries are identical.", style=CONTEXT_STYLE)
        return out
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    rows: list[Text] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            run = old[i1:i2]
            if len(run) > 2 * context:
                rows.extend(Text("  " + line, style=CONTEXT_STYLE) for line in run[:context])
                hidden = len(run) - 2 * context
                rows.append(Text(f"  ⋯ {hidden} unchanged lines", style="dim italic"))
                rows.extend(Text("  " + line, style=CONTEXT_STYLE) for line in run[-context:])
            else:
                rows.extend(Text("  " + line, style=CONTEXT_STYLE) for line in run)
        elif tag == "replace" and i2 - i1 == j2 - j1:
            for old_line, new_line in zip(old[i1:i2], new[j1:j2], strict=True):
                removed, added = _word_diff(old_line, new_line)
                rows.extend((removed, added))
        else:
            rows.extend(Text("- " + line, style=REMOVED_STYLE) for line in old[i1:i2])
            rows.extend(Text("+ " + line, style=ADDED_STYLE) for line in new[j1:j2])
    out.append_text(Text("\n").join(rows))
    return out


class SummaryDiff(VerticalScroll):
    """A scrolling view of ``summary_diff_text(previous, updated)``."""

    DEFAULT_CSS = """
    SummaryDiff {
        height: 1fr;
    }
    SummaryDiff > Static {
        width: 1fr;
        padding: 0 1;
    }
    """

    def __init__(
        self,
        previous: str = "",
        updated: str = "",
        *,
        name: str | None = None,
        id: str | None = None,  # noqa: A002 - Textual's parameter name
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.previous = previous
        self.updated = updated

    def compose(self):  # type: ignore[no-untyped-def]
        """The diff as one static text."""
        yield Static(self._render_diff(), id="summary-diff-body")

    def _render_diff(self) -> Text:
        if not self.previous:
            return Text("No previous summary: this compaction starts a new one.", style="dim")
        return summary_diff_text(self.previous, self.updated)

    def show(self, previous: str, updated: str) -> None:
        """Compare two other summaries."""
        self.previous, self.updated = previous, updated
        self.query_one("#summary-diff-body", Static).update(self._render_diff())
