"""The compaction timeline: every compaction and branch summary of the tree, in order.

One row each: where (entry, on the active path or not), what (compaction or branch summary,
method), tokens before → after, summary length, who wrote it, the hindsight score and the
files re-read after it. ``enter`` closes the screen and jumps to the row's entry (the screen
returns its entry index through ``dismiss``); ``escape`` closes it. The rows are computed by
``engine.hindsight.compaction_timeline`` in a thread worker, on one consistent snapshot of
the session, while the screen says so, with the facts the session's handle keeps (each
entry's record is read once for the app's life, shared with the compaction details' audit);
rows of a generation the session has since grown past are computed again.

The ten columns need about 90 cells; on a narrower screen (80×24) the table drops or narrows
columns in ``NARROW_ORDER`` until the rest fit (``fit_columns``), and the key line says which
are not shown; it is laid out again when the screen is resized.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from rich.cells import cell_len
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from tui_compactor.textsafe import sanitize
from tui_compactor.ui.bindings import LIST_BINDINGS, ListSteps
from tui_compactor.ui.widgets.labels import format_tokens
from tui_compactor.ui.workers import work
from tui_compactor.wording import count_of

if TYPE_CHECKING:
    from tui_compactor.engine.hindsight import TimelineRow
    from tui_compactor.engine.tokens import TokenCounter
    from tui_compactor.workbench.handle import SessionHandle

__all__ = ["COLUMNS", "NARROW_ORDER", "TimelineScreen", "fit_columns"]

COLUMNS = (
    "entry",
    "id",
    "what",
    "before",
    "after",
    "summary",
    "score",
    "lost",
    "re-reads",
    "written by",
)
"""The timeline's columns, left to right (each drawn with one blank cell either side)."""
WRITER = "written by"
WRITER_MIN = 12
"""Cells the writer's name keeps (cut with an ellipsis) before its column is dropped."""
NARROW_ORDER = ("id", "summary", "what", WRITER, "lost", "re-reads", WRITER, "before")
"""What gives way, first to last, when the columns do not all fit: the id (the entry's
number stays, and ``enter`` jumps there), the summary's length, what it is in its short form
(the tree's glyph and the method: ``▣ handoff``), the writer's name cut to ``WRITER_MIN``
cells, the lost and re-read counts (the score stays), the writer, the tokens before. The
entry, what it is, the tokens after and the score always show."""
SHORT = ("what",)
"""The columns with a short form (the rest are dropped when their turn comes)."""
PADDING = 2
"""Blank cells a column adds to its content (DataTable's cell padding, both sides)."""


def fit_columns(
    widths: dict[str, int],
    room: int,
    short: dict[str, int] | None = None,
    empty: frozenset[str] = frozenset(),
) -> tuple[dict[str, int], set[str]]:
    """The columns shown in ``room`` cells with each one's content width, and those drawn in
    their short form, from each column's natural content ``widths`` and short forms' widths
    (``short``; headers included), giving way in ``NARROW_ORDER``, after the columns no row
    fills (``empty``: nothing is lost with them). What is left may still exceed ``room`` (the
    table then scrolls sideways)."""
    shown = dict(widths)
    shortened: set[str] = set()
    blank = [name for name in COLUMNS if name in empty and name in NARROW_ORDER]
    writer_cut = False  # the writer's first turn only cuts its name; its second drops it
    for step, name in enumerate([*blank, *NARROW_ORDER]):
        over = sum(width + PADDING for width in shown.values()) - room
        if over <= 0:
            break
        if name not in shown:
            continue
        if name in SHORT:
            if short is not None and name in short and short[name] < shown[name]:
                shown[name] = short[name]
                shortened.add(name)
        elif name == WRITER and step >= len(blank) and not writer_cut:
            writer_cut = True
            shown[name] = max(min(WRITER_MIN, shown[name]), shown[name] - over)
        else:
            del shown[name]
    return shown, shortened


class TimelineScreen(ListSteps, Screen[int | None]):
    """Compactions and branch summaries in file order; enter jumps to one."""

    DEFAULT_CSS = """
    TimelineScreen > #timeline-head { height: auto; padding: 0 1; }
    TimelineScreen > DataTable { height: 1fr; }
    """

    escape_ends_key_hold = True
    """The keys typed while the rows are computed wait for them (``CompactorApp.hold_keys``),
    except ``escape``: it closes the screen at once, and the keys typed before it go too."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "close", "Close", id="timeline.close"),
        Binding("enter", "jump", "Jump to it", id="timeline.jump"),
        *LIST_BINDINGS,
    ]

    class Computed(Message):
        """The timeline rows are ready (posted by the worker)."""

        def __init__(
            self, rows: list[TimelineRow], ids: list[str], generation: int, error: str | None = None
        ) -> None:
            super().__init__()
            self.rows = rows
            self.ids = ids
            """The entry id of each row."""
            self.generation = generation
            self.error = error

    def __init__(self, handle: SessionHandle, counter: TokenCounter, rules: str = "pi") -> None:
        super().__init__()
        self.handle = handle
        self.counter = counter
        self.rules = rules
        self.rows: list[TimelineRow] = []
        self._cells: list[dict[str, Text]] = []
        """The rows' cells by column (every column; ``_lay_out`` picks those shown)."""
        self._short: list[dict[str, Text]] = []
        """The rows' cells in their short form, for the columns that have one (``SHORT``)."""
        self._laid_out_for: int | None = None
        """The room the table was laid out for."""
        self._headline = Text("")

    def compose(self) -> ComposeResult:
        """Headline, table, footer."""
        yield Static(
            Text(
                "computing the timeline and the hindsight audit of every compaction…", style="dim"
            ),
            id="timeline-head",
        )
        table: DataTable[Text] = DataTable(cursor_type="row", zebra_stripes=True)
        yield table
        yield Footer()

    def on_mount(self) -> None:
        """Set the columns and start computing."""
        table = self.query_one(DataTable)
        for label in COLUMNS:
            table.add_column(label, key=label)
        table.focus()
        self.compute_rows(self.handle, self.counter, self.rules)

    @work(thread=True, exclusive=True, exit_on_error=False, group="timeline")
    def compute_rows(self, handle: SessionHandle, counter: TokenCounter, rules: str) -> None:
        """The timeline in a thread (it audits every compaction), on one snapshot."""
        from tui_compactor.engine.hindsight import compaction_timeline

        with handle.read() as snapshot:
            generation = snapshot.generation
            try:
                rows = compaction_timeline(
                    snapshot.session, counter, rules=rules, facts=handle.entry_facts()
                )
            except Exception as error:  # shown on the screen; the app keeps running
                self.post_message(
                    self.Computed([], [], generation, f"{type(error).__name__}: {error}")
                )
                return
            ids = [str(snapshot.session.entries[row.entry_index].id) for row in rows]
        self.post_message(self.Computed(rows, ids, generation))

    def on_timeline_screen_computed(self, message: Computed) -> None:
        """Fill the table (compute again if the session grew meanwhile), then hand it the keys
        typed while it was computed (the app held them: ``hold_keys``)."""
        if message.generation != self.handle.generation:
            self.compute_rows(self.handle, self.counter, self.rules)
            return
        self._fill(message)
        release_keys = getattr(self.app, "release_keys", None)
        if release_keys is not None:
            release_keys()

    def _fill(self, message: Computed) -> None:
        """The headline and a table row per compaction or branch summary (or the error)."""
        head = self.query_one("#timeline-head", Static)
        if message.error:
            head.update(Text(sanitize(message.error, max_len=300), style="bold red"))
            return
        self.rows = message.rows
        audits = [(row.audit, row.entry_index) for row in self.rows if row.audit is not None]
        branch = len(self.rows) - len(audits)
        line = Text(
            f"{count_of(len(audits), 'compaction')}, "
            f"{count_of(branch, 'branch summary', 'branch summaries')}",
            style="bold",
        )
        if audits:
            worst, at = min(audits, key=lambda pair: pair[0].score)
            line.append(f" · worst hindsight score {worst.score:.2f} at #{at}", style="yellow")
        self._headline = line
        self._cells = [
            _cells(row, entry_id) for row, entry_id in zip(self.rows, message.ids, strict=True)
        ]
        self._short = [{"what": _short_what(row)} for row in self.rows]
        self._lay_out(force=True)

    def _room(self) -> int:
        """Cells the table's columns have (a vertical scroll bar's taken off when the rows
        need one)."""
        table = self.query_one(DataTable)
        room = table.size.width
        if len(self._cells) + 1 > table.size.height:
            room -= table.styles.scrollbar_size_vertical
        return room

    def _lay_out(self, force: bool = False) -> None:
        """The table's columns for its width (``fit_columns``), its rows, and the key line
        naming the columns left out; the cursor stays on its row."""
        if not self.rows or not self.is_mounted:
            if force:
                self.query_one("#timeline-head", Static).update(self._keys_under([]))
            return
        room = self._room()
        if room == self._laid_out_for and not force:
            return
        self._laid_out_for = room
        widths = {
            name: max(cell_len(name), *(cells[name].cell_len for cells in self._cells))
            for name in COLUMNS
        }
        short = {
            name: max(cell_len(name), *(cells[name].cell_len for cells in self._short))
            for name in SHORT
        }
        empty = frozenset(
            name for name in COLUMNS if not any(cells[name].plain for cells in self._cells)
        )
        shown, shortened = fit_columns(widths, room, short, empty)
        hidden = [name for name in COLUMNS if name not in shown and name not in empty]
        self.query_one("#timeline-head", Static).update(self._keys_under(hidden, room))
        table = self.query_one(DataTable)
        cursor = table.cursor_row
        table.clear(columns=True)
        for name in shown:
            table.add_column(name, width=shown[name], key=name)
        for row, cells, short_cells in zip(self.rows, self._cells, self._short, strict=True):
            drawn = {**cells, **{name: short_cells[name] for name in shortened}}
            table.add_row(
                *(_narrowed(drawn[name], shown[name]) for name in shown),
                key=str(row.entry_index),
            )
        if 0 < cursor < len(self.rows):
            table.move_cursor(row=cursor)

    def _keys_under(self, hidden: list[str], room: int | None = None) -> Text:
        """The headline, and the keys on a line of their own (after the headline they wrapped
        mid-phrase at 80x24), then the columns not shown (on a line of their own where they
        would wrap; a column no row fills is not named)."""
        line = self._headline.copy()
        keys = "enter jumps, esc closes; * on the active path"
        line.append("\n" + keys, style="dim")
        if hidden:
            note = f"not shown: {', '.join(hidden)}"
            fits = room is None or len(keys) + len(note) + 3 <= room - 2  # the head's padding
            line.append((" · " if fits else "\n") + note, style="dim")
        return line

    def on_resize(self) -> None:
        """Lay the table out again for its new width (once it has it)."""
        self.call_after_refresh(self._lay_out)

    def action_jump(self) -> None:
        """Close and jump to the highlighted row's entry."""
        table = self.query_one(DataTable)
        if not self.rows or table.cursor_row < 0:
            return
        self.dismiss(self.rows[table.cursor_row].entry_index)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """Enter (or a click) on a row jumps to it."""
        event.stop()
        if event.row_key.value is not None:
            self.dismiss(int(event.row_key.value))

    def action_close(self) -> None:
        """Close without moving."""
        self.dismiss(None)


def _cells(row: TimelineRow, entry_id: str) -> dict[str, Text]:
    """One row's cells by column."""
    what = "compaction" if row.kind == "compaction" else "branch summary"
    if row.method:
        what += f" ({sanitize(row.method, single_line=True, max_len=12)})"
    audit = row.audit
    score = Text("")
    if audit is not None:
        style = "green" if audit.score >= 0.9 else "yellow" if audit.score >= 0.6 else "red"
        score = Text(f"{audit.score:.2f}", style=style)
    cells = (
        Text(f"{row.entry_index}{'*' if row.on_active_path else ' '}"),
        Text(sanitize(entry_id, single_line=True, max_len=12)),
        Text(what, style="yellow" if row.kind == "compaction" else "green"),
        Text(format_tokens(row.tokens_before) if row.tokens_before is not None else "-"),
        Text(format_tokens(row.tokens_after)),
        Text(f"{row.summary_chars:,} ch"),
        score,
        Text(str(len(audit.lost)) if audit is not None else ""),
        Text(str(len(audit.rereads)) if audit is not None else ""),
        Text(sanitize(row.model or "", single_line=True, max_len=30), style="dim"),
    )
    return dict(zip(COLUMNS, cells, strict=True))


def _short_what(row: TimelineRow) -> Text:
    """What the row is, as the tree marks it: ``▣ handoff`` (the method, or ``compaction``),
    ``⎇ branch summary``."""
    from tui_compactor.ui.widgets.tree import KIND_TAGS

    if row.kind != "compaction":
        return Text(KIND_TAGS["branch"][0], style="green")
    tag = KIND_TAGS["compaction"][0]
    if row.method:
        tag = f"{tag.split(' ')[0]} {sanitize(row.method, single_line=True, max_len=12)}"
    return Text(tag, style="yellow")


def _narrowed(cell: Text, width: int) -> Text:
    """``cell`` cut to ``width`` cells with an ellipsis (only the writer's name is narrowed)."""
    if cell.cell_len <= width:
        return cell
    cut = cell.copy()
    cut.truncate(width, overflow="ellipsis")
    return cut
