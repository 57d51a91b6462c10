"""The compaction timeline: every compaction and branch summary of the tree, in order.

One row each: where (entry, on the active path or not), what (compaction or branch summary,
method), tokens before → after, summary length, who wrote it, the hindsight score and the
files re-read after it. ``enter`` closes the screen and jumps to the row's entry (the screen
returns its entry index through ``dismiss``); ``escape`` closes it. The rows are computed by
``engine.hindsight.compaction_timeline`` in a thread worker, on one consistent snapshot of
the session, while the screen says so, with the facts the session's handle keeps (each
entry's record is read once for the app's life, shared with the compaction details' audit);
rows of a generation the session has since grown past are computed again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

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

__all__ = ["TimelineScreen"]


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
        for label in (
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
        ):
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
        # The keys on a line of their own: after the headline they wrapped mid-phrase at 80x24.
        line.append("\nenter jumps, esc closes; * on the active path", style="dim")
        head.update(line)
        table = self.query_one(DataTable)
        table.clear()
        for row, entry_id in zip(self.rows, message.ids, strict=True):
            what = "compaction" if row.kind == "compaction" else "branch summary"
            if row.method:
                what += f" ({sanitize(row.method, single_line=True, max_len=10)})"
            audit = row.audit
            score = Text("")
            if audit is not None:
                style = "green" if audit.score >= 0.9 else "yellow" if audit.score >= 0.6 else "red"
                score = Text(f"{audit.score:.2f}", style=style)
            table.add_row(
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
                key=str(row.entry_index),
            )

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
