"""The session picker: every pi / oh-my-pi session on this machine, searchable and sortable.

Shown when ``tui-compactor`` starts without a file. Files are found and described in a thread
worker (``session.discover``: bounded reads, nothing written); rows appear in batches while the
scan runs. The screen dismisses with the chosen ``Path``, or ``None`` when the user backs out.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Input, Static

from tui_compactor.engine.stats import STATS_COLUMNS, SessionStats
from tui_compactor.session.discover import SessionRoot, SessionSummary, discover_sessions
from tui_compactor.textsafe import sanitize
from tui_compactor.ui.workers import work

__all__ = ["SessionPicker", "SORT_COLUMNS", "format_size", "matches_query"]

SORT_COLUMNS: dict[str, str] = {
    "project": "Project",
    "title": "Name / first message",
    "date": "Modified",
    "size": "Size",
    "entries": "Entries",
    **{key: STATS_COLUMNS[key] for key in ("branches", "compactions", "peak", "worst")},
}
"""Column key -> header label, in display order (the last four are ``stats``'s columns,
measured by a worker after the scan)."""

ASCENDING_FIRST = frozenset({"project", "title", "worst"})
"""Columns whose first sort is ascending (text A to Z, the worst hindsight score first)."""

TITLE_WIDTH = 60
"""Characters of a session's name or first message shown in its row."""
PROJECT_WIDTH = 32
"""Characters of a project path shown (the end of the path is kept)."""
TITLE_MIN = 30
PROJECT_MIN = 12
"""Cells the name and the project keep at least when they give way on a narrow terminal."""
GUTTER = 2
"""Cells of the table's width not given to columns (its vertical scrollbar)."""
STATS_SORTED = frozenset({"branches", "compactions", "peak", "worst"})
"""The columns measured by ``stats`` after the scan."""
SUGGESTION = "tui-compactor --sessions-dir DIR, or tui-compactor demo for a sample session"
"""What the picker suggests when it finds nothing to list."""
BATCH_SECONDS = 0.1
"""The scan posts found sessions at most this often."""


def format_size(size: int) -> str:
    """A file size for people: ``980 B``, ``12.3 KB``, ``4.1 MB``."""
    value = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1000 or unit == "GB":
            return f"{int(value)} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1000
    return f"{value:.1f} GB"  # pragma: no cover - the loop always returns


def _short_project(project: str, home: str) -> str:
    """A project path with ``~`` for the home directory, cut from the left to fit."""
    if home and (project == home or project.startswith(home + "/")):
        project = "~" + project[len(home) :]
    project = sanitize(project, single_line=True)
    if len(project) > PROJECT_WIDTH:
        project = "…" + project[-(PROJECT_WIDTH - 1) :]
    return project


def matches_query(summary: SessionSummary, query: str) -> bool:
    """True when every whitespace-separated term of ``query`` occurs (case-insensitively) in the
    session's project, name, first message or file name."""
    terms = query.casefold().split()
    if not terms:
        return True
    haystack = " ".join(
        part
        for part in (summary.project, summary.name, summary.first_message, summary.path.name)
        if part
    ).casefold()
    return all(term in haystack for term in terms)


def _sort_key(
    column: str, summary: SessionSummary, stats: SessionStats | None = None
) -> tuple[object, ...] | None:
    """Key for sorting rows by ``column``, or None when the row has no figure there (entries
    not counted, a file not measured yet, no compaction to score): such rows go after the
    others whichever way the column is sorted. Ties fall back to the newest file first."""
    if column in STATS_SORTED:
        key = stats.sort_key(column) if stats is not None else None
        return key if key is not None and key[0] else None
    if column == "project":
        return (summary.project.casefold(), -summary.modified.timestamp())
    if column == "title":
        return (summary.title.casefold(), -summary.modified.timestamp())
    if column == "size":
        return (summary.size,)
    if column == "entries":
        return (summary.entries,) if summary.entries is not None else None
    return (summary.modified.timestamp(),)


@dataclass
class _SortState:
    """Which column the rows are sorted by, and in which direction."""

    column: str = "date"
    descending: bool = True


class SessionPicker(Screen[Path | None]):
    """Pick a session file from the pi / oh-my-pi session directories.

    Type to search (every word must match project, name, first message or file name); ``enter``
    opens the highlighted session; ``escape`` clears the search, then closes the picker. In the
    table, ``p`` / ``n`` / ``d`` / ``s`` / ``e`` sort by project / name / date / size / entries,
    ``b`` / ``c`` / ``k`` / ``w`` by branches / compactions / peak context / worst hindsight score
    (``stats``'s columns, filled in as a worker measures each file) — again: reverse —
    as does clicking a column header.
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back", id="picker.back"),
        Binding("enter", "choose", "Open", id="picker.open"),
        Binding("slash", "focus_search", "Search", id="picker.search", show=False),
        Binding("p", "sort('project')", "Sort project", id="picker.sort_project", show=False),
        Binding("n", "sort('title')", "Sort name", id="picker.sort_name", show=False),
        Binding("d", "sort('date')", "Sort date", id="picker.sort_date"),
        Binding("s", "sort('size')", "Sort size", id="picker.sort_size", show=False),
        Binding("e", "sort('entries')", "Sort entries", id="picker.sort_entries", show=False),
        Binding("b", "sort('branches')", "Sort branches", id="picker.sort_branches", show=False),
        Binding(
            "c", "sort('compactions')", "Sort compactions", id="picker.sort_compactions", show=False
        ),
        Binding("k", "sort('peak')", "Sort peak context", id="picker.sort_peak", show=False),
        Binding("w", "sort('worst')", "Sort worst hindsight", id="picker.sort_worst", show=False),
    ]

    DEFAULT_CSS = """
    SessionPicker {
        layout: vertical;
    }
    SessionPicker #picker-heading {
        height: 1;
        padding: 0 1;
        text-style: bold;
        background: $panel;
    }
    SessionPicker #picker-search {
        margin: 0 0;
    }
    SessionPicker #picker-table {
        height: 1fr;
    }
    SessionPicker #picker-status {
        height: auto;
        max-height: 3;
        padding: 0 1;
        color: $text-muted;
    }
    """

    class Found(Message):
        """A batch of described sessions from the scan worker."""

        def __init__(self, summaries: list[SessionSummary]) -> None:
            super().__init__()
            self.summaries = summaries

    class Measured(Message):
        """Figures of some sessions from the stats worker (``engine.stats``): ``done`` of
        ``total`` files measured so far."""

        def __init__(self, stats: list[SessionStats], done: int, total: int) -> None:
            super().__init__()
            self.stats = stats
            self.done = done
            self.total = total

    class ScanFinished(Message):
        """The scan worker has described every session file."""

        def __init__(self, seconds: float) -> None:
            super().__init__()
            self.seconds = seconds

    def __init__(
        self,
        roots: Sequence[SessionRoot],
        *,
        home: Path | None = None,
        name: str | None = None,
        id: str | None = None,  # noqa: A002 - Textual's parameter name
    ) -> None:
        """Args:
        roots: directories to scan (``discover.default_session_roots``).
        home: home directory shown as ``~`` in project paths (default: the user's).
        """
        super().__init__(name=name, id=id)
        self.roots = list(roots)
        self.sessions: list[SessionSummary] = []
        """Every session found so far."""
        self.visible_sessions: list[SessionSummary] = []
        """The sessions shown, filtered and sorted, in row order."""
        self.scan_finished = False
        self._sort = _SortState()
        self._home = str(Path.home() if home is None else home)
        self._cancel_scan = threading.Event()
        self.stats: dict[str, SessionStats] = {}
        """Path -> figures of the sessions measured so far."""
        self.measuring: tuple[int, int] | None = None
        """(done, total) files while the stats worker measures."""

    @property
    def sort_column(self) -> str:
        """Key of the column the rows are sorted by (see ``SORT_COLUMNS``)."""
        return self._sort.column

    @property
    def sort_descending(self) -> bool:
        """True when the sort is descending."""
        return self._sort.descending

    def compose(self) -> ComposeResult:
        """Heading, search box, table and status line."""
        with Vertical():
            yield Static(Text("Open a session"), id="picker-heading")
            yield Input(placeholder="Search project, name, first message…", id="picker-search")
            yield DataTable(id="picker-table", cursor_type="row", zebra_stripes=True)
            yield Static(Text("Looking for sessions…"), id="picker-status")
        yield Footer()

    def on_mount(self) -> None:
        """Set up the columns and start the scan."""
        table = self.query_one("#picker-table", DataTable)
        for key in SORT_COLUMNS:
            table.add_column(self._header_label(key), key=key)
        self.query_one("#picker-search", Input).focus()
        self.scan_sessions()

    def on_unmount(self) -> None:
        """Stop the scan when the picker goes away."""
        self._cancel_scan.set()

    @work(thread=True, exclusive=True, exit_on_error=False, group="discover")
    def scan_sessions(self) -> None:
        """Describe every session file under the roots, posting batches (thread worker)."""
        started = time.perf_counter()
        batch: list[SessionSummary] = []
        last_post = started
        for summary in discover_sessions(self.roots, cancel=self._cancel_scan):
            batch.append(summary)
            now = time.perf_counter()
            if now - last_post >= BATCH_SECONDS:
                self.post_message(self.Found(batch))
                batch = []
                last_post = now
        if batch:
            self.post_message(self.Found(batch))
        self.post_message(self.ScanFinished(time.perf_counter() - started))

    def on_session_picker_found(self, message: Found) -> None:
        """Add a batch of sessions to the table."""
        self.sessions.extend(message.summaries)
        self._refresh_rows()

    def on_session_picker_scan_finished(self, message: ScanFinished) -> None:
        """Note the end of the scan in the status line; measure the sessions found."""
        self.scan_finished = True
        self._refresh_rows()
        self.measure_sessions([summary.path for summary in self.sessions])

    @work(thread=True, exclusive=True, exit_on_error=False, group="stats")
    def measure_sessions(self, paths: list[Path]) -> None:
        """``stats``'s figures of every session: ``engine.stats.measure_files``, the command's
        own path (worker processes, so the app stays responsive), smallest files first so
        most rows fill in quickly; figures and progress are posted in batches."""
        from tui_compactor.engine.stats import measure_files

        ordered = sorted(paths, key=lambda path: path.stat().st_size if path.exists() else 0)
        batch: list[SessionStats] = []
        last_post = time.perf_counter()

        def measured(row: SessionStats, done: int, total: int) -> None:
            nonlocal batch, last_post
            batch.append(row)
            now = time.perf_counter()
            if now - last_post >= BATCH_SECONDS or done == total:
                self.post_message(self.Measured(batch, done, total))
                batch, last_post = [], now

        self.post_message(self.Measured([], 0, len(ordered)))
        measure_files(ordered, on_row=measured, cancel=self._cancel_scan)

    def on_session_picker_measured(self, message: Measured) -> None:
        """Fill in the figures of the sessions measured."""
        for row in message.stats:
            self.stats[row.path] = row
        self.measuring = (message.done, message.total) if message.done < message.total else None
        self._refresh_rows()

    @on(Input.Changed, "#picker-search")
    def _search_changed(self) -> None:
        self._refresh_rows()

    @on(Input.Submitted, "#picker-search")
    def _search_submitted(self) -> None:
        self.action_choose()

    @on(DataTable.HeaderSelected, "#picker-table")
    def _header_clicked(self, event: DataTable.HeaderSelected) -> None:
        self.action_sort(str(event.column_key.value))

    @on(DataTable.RowSelected, "#picker-table")
    def _row_selected(self, event: DataTable.RowSelected) -> None:
        self.dismiss(Path(str(event.row_key.value)))

    def on_key(self, event: events.Key) -> None:
        """``down`` in the search box moves into the table."""
        if event.key == "down" and self.query_one("#picker-search", Input).has_focus:
            self.query_one("#picker-table", DataTable).focus()
            event.stop()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Letter keys sort only while the table has focus (in the search box they type)."""
        if action == "sort" and self.query_one("#picker-search", Input).has_focus:
            return False
        return True

    def action_focus_search(self) -> None:
        """Move the focus to the search box."""
        self.query_one("#picker-search", Input).focus()

    def action_back(self) -> None:
        """Clear the search if there is one, else close the picker with no choice."""
        search = self.query_one("#picker-search", Input)
        if search.value:
            search.value = ""
            search.focus()
            return
        self.dismiss(None)

    def action_choose(self) -> None:
        """Open the highlighted session."""
        chosen = self.highlighted_session
        if chosen is not None:
            self.dismiss(chosen.path)

    def action_sort(self, column: str) -> None:
        """Sort by ``column``; choosing the current column again reverses the order."""
        if column not in SORT_COLUMNS:
            return
        if self._sort.column == column:
            self._sort.descending = not self._sort.descending
        else:
            # Dates, sizes and counts read best largest first; text A to Z.
            self._sort = _SortState(column, descending=column not in ASCENDING_FIRST)
        self._refresh_rows()

    @property
    def highlighted_session(self) -> SessionSummary | None:
        """The session under the table cursor, if any."""
        table = self.query_one("#picker-table", DataTable)
        row = table.cursor_row
        if 0 <= row < len(self.visible_sessions):
            return self.visible_sessions[row]
        return None

    def _header_label(self, key: str) -> Text:
        """A column header, with an arrow on the sorted column."""
        label = SORT_COLUMNS[key]
        if key == self._sort.column:
            label += " ▼" if self._sort.descending else " ▲"
        return Text(label)

    def _row_cells(self, summary: SessionSummary) -> list[Text]:
        """The cells of one row, built as ``Text`` from sanitized session text."""
        title_style = "" if summary.name else "italic"
        title = Text(sanitize(summary.title, single_line=True, max_len=TITLE_WIDTH), title_style)
        if summary.problem:
            title = Text(sanitize(summary.path.name, single_line=True, max_len=TITLE_WIDTH))
            title.append(f"  ({summary.problem})", style="yellow")
        entries = "?" if summary.entries is None else f"{summary.entries:,}"
        figures = self._stats_cells(self.stats.get(str(summary.path)))
        return [
            Text(_short_project(summary.project, self._home) or "—", style="cyan"),
            title,
            Text(summary.modified.astimezone().strftime("%Y-%m-%d %H:%M")),
            Text(format_size(summary.size), justify="right"),
            Text(entries, justify="right"),
            *figures,
        ]

    def _stats_cells(self, stats: SessionStats | None) -> list[Text]:
        """Branches, compactions, peak context, worst hindsight score (``…`` while measuring)."""
        if stats is None:
            return [Text("…", style="dim", justify="right") for _ in range(4)]
        if stats.problem:
            return [Text("-", style="dim", justify="right") for _ in range(4)]
        worst = stats.worst_score
        style = (
            ""
            if worst is None
            else "green"
            if worst >= 0.9
            else "yellow"
            if worst >= 0.6
            else "red"
        )
        return [
            Text(str(stats.branches), justify="right"),
            Text(str(stats.compactions), justify="right"),
            Text(f"{stats.peak_context:,}" if stats.peak_context else "-", justify="right"),
            Text(f"{worst:.2f}" if worst is not None else "-", style=style, justify="right"),
        ]

    def _refresh_rows(self) -> None:
        """Rebuild the table from the sessions found, the search and the sort, keeping the
        highlighted session under the cursor."""
        table = self.query_one("#picker-table", DataTable)
        previous = self.highlighted_session
        query = self.query_one("#picker-search", Input).value
        column = self._sort.column
        shown = [summary for summary in self.sessions if matches_query(summary, query)]
        keyed = [
            (_sort_key(column, summary, self.stats.get(str(summary.path))), summary)
            for summary in shown
        ]
        known = [(key, summary) for key, summary in keyed if key is not None]
        known.sort(key=lambda pair: pair[0], reverse=self._sort.descending)
        self.visible_sessions = [summary for _, summary in known] + sorted(
            (summary for key, summary in keyed if key is None),
            key=lambda summary: -summary.modified.timestamp(),
        )
        table.clear(columns=True)
        rows = [self._row_cells(summary) for summary in self.visible_sessions]
        headers = [self._header_label(key) for key in SORT_COLUMNS]
        # Sized to the widest cell here: measured by the table itself, the columns of the
        # first batch came out as wide as their headers (``/home/d``, a size cut off).
        widths = [
            max([header.cell_len, *(row[number].cell_len for row in rows)])
            for number, header in enumerate(headers)
        ]
        room = table.size.width or self.app.size.width
        self._give_way(widths, rows, room)
        for key, header, width in zip(SORT_COLUMNS, headers, widths, strict=True):
            table.add_column(header, key=key, width=width)
        # Still too wide: the table scrolls sideways to keep the sorted column on screen.
        number = list(SORT_COLUMNS).index(column)
        right = sum(width + 2 for width in widths[: number + 1])
        table.scroll_to(x=max(0, right - (table.size.width or room) + GUTTER), animate=False)
        for summary, cells in zip(self.visible_sessions, rows, strict=True):
            table.add_row(*cells, key=str(summary.path))
        if previous is not None and previous in self.visible_sessions:
            table.move_cursor(row=self.visible_sessions.index(previous), animate=False)
        self._update_status(query)

    @staticmethod
    def _give_way(widths: list[int], rows: list[list[Text]], room: int) -> None:
        """Narrow the name, then the project, so that every column fits in ``room`` cells
        (at 80 columns the figures a sort key orders by stay on screen); their cells are cut
        with an ellipsis."""
        spare = sum(width + 2 for width in widths) + GUTTER - room  # 1 cell padding a side
        for key, narrowest in (("title", TITLE_MIN), ("project", PROJECT_MIN)):
            if spare <= 0:
                return
            number = list(SORT_COLUMNS).index(key)
            cut = min(spare, widths[number] - narrowest)
            if cut <= 0:
                continue
            widths[number] -= cut
            spare -= cut
            for row in rows:
                row[number].truncate(widths[number], overflow="ellipsis")

    def _update_status(self, query: str) -> None:
        """Counts, scan state and where we looked."""
        status = self.query_one("#picker-status", Static)
        where = ", ".join(str(root.path).replace(self._home, "~", 1) for root in self.roots)
        if not self.roots:
            text = (
                "No session directories found (~/.pi/agent/sessions, ~/.omp/agent/sessions). "
                f"Try {SUGGESTION}."
            )
        elif not self.sessions and self.scan_finished:
            text = f"No sessions found in {where}. Try {SUGGESTION}."
        else:
            shown = len(self.visible_sessions)
            total = len(self.sessions)
            noun = "session" if total == 1 else "sessions"
            text = f"{shown} of {total} {noun}" if query else f"{total} {noun}"
            text += " · scanning…" if not self.scan_finished else f" in {where}"
            if self.measuring is not None:
                done, total = self.measuring
                text += f" · measuring {done}/{total} files"
        status.update(Text(sanitize(text, single_line=True)))
