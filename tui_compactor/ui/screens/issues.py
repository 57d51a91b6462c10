"""The Issues view: every problem found while loading the file, and a jump to its entry.

Opened with ``I``, from the palette, or by clicking the issue count in the status line. One row
per diagnostic: severity, physical line, byte offset, code and message (sanitized: messages
quote session text). ``enter`` closes the view and moves the tree's cursor to the entry the
problem is about (by id, else by line; a line that is not an entry — invalid JSON, say — goes
to the nearest entry before it); ``escape`` closes.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.widgets import DataTable, Static

from tui_compactor.textsafe import sanitize
from tui_compactor.ui.bindings import LIST_BINDINGS, ListSteps
from tui_compactor.ui.screens.tinted import TintedModalScreen

__all__ = ["IssuesScreen", "IssueJump", "entry_for_diagnostic"]

SEVERITY_STYLES = {"error": "bold red", "warning": "yellow", "info": "dim"}
MESSAGE_MIN = 12
"""Cells the message column keeps however narrow the dialog (past it the table scrolls sideways)."""
SCROLLBAR = 2
"""Cells kept free for the table's vertical scrollbar, there when the issues outnumber its rows."""


@dataclass(frozen=True, slots=True)
class IssueJump:
    """Where the user asked to go: an entry index, and a note when it is only the nearest."""

    entry_index: int
    note: str | None = None


def entry_for_diagnostic(session: Any, diagnostic: Any) -> IssueJump | None:
    """The entry a diagnostic is about: by its entry id, else by its line (the nearest entry
    before that line when the line itself is not an entry); None when there is none."""
    entry_id = getattr(diagnostic, "entry_id", None)
    if entry_id:
        index = session.index_of(entry_id)
        if index is not None:
            return IssueJump(index)
    line = getattr(diagnostic, "line", None)
    entries = session.entries
    if line is None or not entries:
        return None
    lines = [entry.line for entry in entries]
    position = bisect.bisect_right(lines, line) - 1
    if position >= 0 and lines[position] == line:
        return IssueJump(entries[position].index)
    if position >= 0:
        nearest = entries[position]
        return IssueJump(
            nearest.index,
            f"line {line} is not an entry: showing the entry on line {nearest.line} before it",
        )
    first = entries[0]
    return IssueJump(first.index, f"line {line} is not an entry: showing the first entry")


class IssuesScreen(ListSteps, TintedModalScreen[IssueJump | None]):
    """A table of the load diagnostics; dismisses with where to jump (None: just closed)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,I,q", "close", "Close", id="issues.close"),
        Binding("enter", "jump", "Jump to the entry", id="issues.jump"),
        *LIST_BINDINGS,
    ]

    DEFAULT_CSS = """
    IssuesScreen { align: center middle; }
    IssuesScreen > Vertical { width: 120; max-width: 100%; height: 80%; max-height: 100%;
                              border: thick $warning; background: $panel; padding: 0 1; }
    IssuesScreen #issues-title { height: auto; }
    IssuesScreen DataTable { height: 1fr; }
    IssuesScreen #issues-detail { height: auto; max-height: 6; margin-top: 1; }
    IssuesScreen #issues-hint { height: auto; color: $text-muted; }
    """

    def __init__(self, session: Any, diagnostics: Sequence[Any], verdict: str) -> None:
        super().__init__()
        self.session = session
        self.diagnostics = list(diagnostics)
        self.verdict = verdict

    def compose_dialog(self) -> ComposeResult:
        """Title, the table, a hint."""
        count = len(self.diagnostics)
        title = Text(f"{count} issue{'' if count == 1 else 's'} found while loading ", style="bold")
        title.append(f"(verdict: {sanitize(self.verdict, single_line=True)})", style="dim")
        with Vertical():
            yield Static(title, id="issues-title")
            yield DataTable(id="issues-table", cursor_type="row", zebra_stripes=True)
            yield Static(Text(""), id="issues-detail")
            yield Static(
                Text(
                    "enter: jump to the entry · esc: close · `tui-compactor lint "
                    "FILE` prints the same list"
                ),
                id="issues-hint",
            )

    def on_mount(self) -> None:
        """Fill the table."""
        self._fill()
        self.query_one(DataTable).focus()

    def on_resize(self) -> None:
        """Refit the message column to the new width (after the table has its new size)."""
        self.call_after_refresh(self._fill)

    def _fill(self) -> None:
        """The table's rows, the message column as wide as the room left by the others and each
        message cut to it with an ellipsis (at 80 columns it ran off the edge, cut mid-word with
        no mark that more followed; the detail line under the table shows it whole)."""
        table = self.query_one(DataTable)
        cursor = table.cursor_row
        rows = []
        for diagnostic in self.diagnostics:
            severity = str(getattr(diagnostic, "severity", "?"))
            line = getattr(diagnostic, "line", None)
            offset = getattr(diagnostic, "offset", None)
            rows.append(
                [
                    Text(severity, style=SEVERITY_STYLES.get(severity, "")),
                    Text("—" if line is None else str(line), justify="right"),
                    Text("—" if offset is None else f"{offset:,}", justify="right"),
                    Text(sanitize(str(getattr(diagnostic, "code", "")), single_line=True)),
                    Text(
                        sanitize(
                            str(getattr(diagnostic, "message", "")), single_line=True, max_len=300
                        ),
                        no_wrap=True,
                        overflow="ellipsis",
                    ),
                ]
            )
        headers = ["severity", "line", "byte", "code", "message"]
        widths = [
            max([len(header), *(row[n].cell_len for row in rows)])
            for n, header in enumerate(headers)
        ]
        # The table's own width once laid out; before that the dialog's: 120 cells at most,
        # less its border and padding (2 + 2).
        room = table.size.width or min(120, self.app.size.width) - 4
        others = sum(width + 2 for width in widths[:-1])  # one cell of padding a side
        widths[-1] = max(MESSAGE_MIN, min(widths[-1], room - others - 2 - SCROLLBAR))
        table.clear(columns=True)
        for header, width in zip(headers, widths, strict=True):
            table.add_column(Text(header), key=header, width=width)
        for number, row in enumerate(rows):
            table.add_row(*row, key=str(number))
        if rows:
            table.move_cursor(row=min(cursor, len(rows) - 1), animate=False)

    def action_close(self) -> None:
        """Close without moving."""
        self.dismiss(None)

    def action_jump(self) -> None:
        """Close and go to the highlighted diagnostic's entry."""
        table = self.query_one(DataTable)
        if not self.diagnostics or not 0 <= table.cursor_row < len(self.diagnostics):
            return
        jump = entry_for_diagnostic(self.session, self.diagnostics[table.cursor_row])
        if jump is None:
            self.notify("this issue is about no entry (the file as a whole)", timeout=3)
            return
        self.dismiss(jump)

    @on(DataTable.RowHighlighted)
    def _row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        """The highlighted issue in full under the table (the message column is cut)."""
        row = event.cursor_row
        if not 0 <= row < len(self.diagnostics):
            return
        diagnostic = self.diagnostics[row]
        detail = Text(f"{getattr(diagnostic, 'code', '')}: ", style="bold")
        detail.append(sanitize(str(getattr(diagnostic, "message", "")), max_len=1000))
        self.query_one("#issues-detail", Static).update(detail)

    @on(DataTable.RowSelected)
    def _row_selected(self) -> None:
        self.action_jump()
