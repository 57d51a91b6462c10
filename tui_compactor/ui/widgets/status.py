"""The status line, the read-only banner and the indexing progress bar."""

from __future__ import annotations

from typing import Any

from rich.cells import cell_len
from rich.text import Text
from textual.containers import Horizontal
from textual.geometry import Size
from textual.message import Message
from textual.timer import Timer
from textual.widgets import Label, ProgressBar, Static

from tui_compactor.textsafe import cut_cells, sanitize

FILE_NAME_CELLS = 60
"""Columns the status line and the indexing bar give the session's file name at most (a CJK or
emoji name takes two columns a character: a cap in characters would let it run off the line)."""

FILE_NAME_MIN_CELLS = 24
"""Columns the file name keeps on a narrow line, where it gives the rest to the facts after it
(the entry count, the verdict, the rules)."""

NAME_CELLS = 50
"""Columns the session's own name (pi's ``session_info``; oh-my-pi's title under its rules) gets
at most, when the line has room."""

_NAME_READ = 400
"""Characters of a name read before it is cut to its cells (a file name is at most 255 bytes)."""


def shown_file_name(name: str, cells: int = FILE_NAME_CELLS) -> str:
    """The session's file name as the status line and the indexing bar show it: made
    terminal-safe and cut to ``cells`` columns."""
    return cut_cells(sanitize(name, single_line=True, max_len=_NAME_READ), cells)


def issue_count(count: int) -> str:
    """``1 issue``, ``6 issues``: how the header and the load note count a file's issues."""
    return f"{count} issue" if count == 1 else f"{count} issues"


class SessionStatus(Static):
    """One line: file name, session name, entries, version, verdict, filter, counter, jobs.

    A click on it while the file has load issues posts ``IssuesRequested`` (the app opens the
    Issues view)."""

    class IssuesRequested(Message):
        """The user clicked the status line of a file with load issues."""

    has_issues = False

    DEFAULT_CSS = """
    SessionStatus { height: 1; background: $panel; color: $text; padding: 0 1; }
    """

    def show(
        self,
        session: Any,
        *,
        filter_name: str,
        counter_name: str,
        jobs: int,
        following: bool,
        rules: str | None = None,
        rules_source: str = "",
    ) -> None:
        """Describe ``session`` (only its file name: full paths are noise and unstable)."""
        own_name = session.name_under(rules)
        name = shown_file_name(own_name, NAME_CELLS) if own_name else ""
        line = Text(no_wrap=True, overflow="ellipsis")
        if session.preview:
            line.append(f"  last {len(session.entries):,} entries (indexing the rest)")
        else:
            line.append(f"  {len(session.entries):,} entries")
        if session.version is not None:
            line.append(f"  v{session.version}")
        verdict = str(session.verdict)
        verdict_style = {"open": "green", "open+warn": "yellow"}.get(verdict, "bold red")
        if not session.preview:  # a preview is judged once the whole file is read
            line.append(f"  {verdict}", style=verdict_style)
        from tui_compactor.session.flavor import session_issues

        issues = session_issues(session, rules)  # what the Issues view lists
        self.has_issues = bool(issues)
        if issues:
            line.append(f" ({issue_count(len(issues))} · I)", style="yellow underline")
        if not session.complete and not session.preview:
            line.append("  partial", style="bold red")
        if rules is not None:
            # Which agent's rules plan this session, and why (``o`` switches).
            line.append(f"  {rules} rules", style="bold cyan")
            why = rules_source.removeprefix("session: ")
            if why.startswith("config file"):
                why = "config"
            line.append(f" ({sanitize(why, single_line=True, max_len=30)})", style="dim")
        if jobs:
            line.append(f"  ⟳ {jobs} running", style="bold yellow")
        if following:
            line.append("  ● live", style="green")
        tail = Text(f"  filter: {filter_name}  tokens: {counter_name}", style="dim")
        self._parts = (session.path.name, name, line, tail)
        self._fit()

    _parts: tuple[str, str, Text, Text] | None = None
    """The line's file name, session name, the facts and the view settings, kept to fit them
    again on a resize."""

    def _fit(self) -> None:
        """Show the line, measured in cells; on a narrow terminal the file name gives way (down
        to ``FILE_NAME_MIN_CELLS``) and the session name too (shortened with an ellipsis, or
        left out) to the facts (the entries, the verdict, the rules and why, running jobs, the
        live mark), and the filter and counter, last, are cut at the edge."""
        if self._parts is None:
            return
        file_name, name, facts, tail = self._parts
        width = self.content_size.width
        cells = FILE_NAME_CELLS
        if width > 0:
            cells = min(cells, max(FILE_NAME_MIN_CELLS, width - facts.cell_len))
        line = Text(no_wrap=True, overflow="ellipsis")
        line.append(shown_file_name(file_name, cells), style="bold")
        if name and width > 0:
            # Measured and cut in cells: a CJK or emoji name takes two columns a character.
            room = width - line.cell_len - facts.cell_len - cell_len("  “”")
            if room < cell_len(name):
                name = "" if room < 8 else cut_cells(name, room)
        if name:
            line.append(f"  “{name}”")
        line.append_text(facts)
        line.append_text(tail)
        self.update(line, layout=False)  # one row, the screen's width: its size never changes

    def on_resize(self) -> None:
        """Fit the line to the new width."""
        self._fit()

    def _size_updated(
        self, size: Size, virtual_size: Size, container_size: Size, layout: bool = True
    ) -> bool:
        """A layout gave the line its width: fit it here, before a frame is drawn at that
        width (the app fills the line before the first layout, and not every layout that
        resizes a widget sends it a ``Resize``)."""
        resized = super()._size_updated(size, virtual_size, container_size, layout)
        if resized:
            self._fit()
        return resized

    def on_click(self) -> None:
        """Clicking the issue count opens the Issues view."""
        if self.has_issues:
            self.post_message(self.IssuesRequested())


class ReadOnlyBanner(Static):
    """Shown when the append gate refuses writes: says why, in plain words."""

    DEFAULT_CSS = """
    ReadOnlyBanner { height: auto; max-height: 3; background: $error 30%; color: $text;
                     padding: 0 1; display: none; }
    ReadOnlyBanner.-shown { display: block; }
    """

    def show_reason(self, reason: str | None) -> None:
        """Show the banner with ``reason`` or hide it for None."""
        if reason:
            text = Text("read-only: ", style="bold")
            text.append(sanitize(reason, max_len=300))
            self.update(text)
            self.add_class("-shown")
        else:
            self.remove_class("-shown")


class LoadingBar(Horizontal):
    """Progress of indexing a file; Escape stops it and shows what was read.

    The label and the bar are built the first time the bar shows: most files are indexed
    before that, and the first screen does not style widgets nobody sees."""

    DEFAULT_CSS = """
    LoadingBar { height: 1; padding: 0 1; display: none; }
    LoadingBar.-shown { display: block; }
    LoadingBar > Label { width: auto; margin-right: 2; }
    LoadingBar > ProgressBar { width: 1fr; }
    """

    SHOW_AFTER = 0.2
    """Seconds of indexing before the bar shows: a small file is indexed before that, and
    the first screen is not laid out twice for a bar nobody could read."""

    tail_entries: int | None = None
    """While a tail-first preview is shown: how many of the file's last entries it has."""

    _show_timer: Timer | None = None
    _label_text: Text = Text("indexing…")
    """What the label says (kept while the label is not built yet)."""
    _label_cells = 0
    """Columns the label keeps (``LABEL_ROOM``), so a growing count does not resize it."""

    LABEL_ROOM = 6
    """Columns the label reserves past its text for the entry count's next digits: the count
    grows from 0 to 100,000 while a file indexes, and a label that changes width lays the
    whole screen out again (a few per file, each taking the GIL from the index)."""
    _progress: tuple[int, int] | None = None
    """Bytes done and total (kept while the bar is not built yet); None: not known yet."""

    def _built(self) -> tuple[Label, ProgressBar] | None:
        """The label and the bar, once the bar has shown."""
        if not self.children:
            return None
        label = self.query_one("#loading-label", Label)
        return label, self.query_one("#loading-progress", ProgressBar)

    def _set_label(self, text: Text) -> None:
        # The label is as wide as its text, padded to the columns it keeps: the screen is laid
        # out again only when the text outgrows them (a layout per progress report took the
        # GIL from the index it reports on).
        resized = text.cell_len > self._label_cells
        if resized:
            self._label_cells = text.cell_len + self.LABEL_ROOM
        text = text.copy()
        text.pad_right(self._label_cells - text.cell_len)
        self._label_text = text
        built = self._built()
        if built is not None:
            built[0].update(text, layout=resized)

    def start(self, file_name: str) -> None:
        """Show the bar for ``file_name``."""
        self.tail_entries = None
        self._progress = None
        self._label_cells = 0
        self._set_label(Text(f"indexing {shown_file_name(file_name)} (esc stops)"))
        if self._show_timer is None and not self.has_class("-shown"):
            self._show_timer = self.set_timer(self.SHOW_AFTER, self._show)

    def _show(self) -> None:
        if self._show_timer is not None:
            self._show_timer.stop()
            self._show_timer = None
        if not self.children:
            bar = ProgressBar(total=None, show_eta=False, id="loading-progress")
            if self._progress is not None:
                done, total = self._progress
                bar.update(total=max(total, 1), progress=done)
            self.mount(Label(self._label_text, id="loading-label"), bar)
        self.add_class("-shown")

    def showing_tail(self, entries: int) -> None:
        """Say that the tree shows the file's last ``entries`` entries until the index is done."""
        self.tail_entries = entries
        self._set_label(self._label(0))
        self._show()

    def _label(self, entries: int) -> Text:
        text = Text(f"indexing: {entries:,} entries (esc stops)")
        if self.tail_entries is not None:
            text = Text(f"showing the last {self.tail_entries:,} entries; ", style="bold")
            text.append(
                f"indexing {entries:,} (plan, writes and the rest of the tree follow; esc stops)",
                style="not bold",
            )
        return text

    def advance(self, bytes_done: int, bytes_total: int, entries: int) -> None:
        """Move the bar."""
        self._progress = (bytes_done, bytes_total)
        built = self._built()
        if built is not None:
            built[1].update(total=max(bytes_total, 1), progress=bytes_done)
        self._set_label(self._label(entries))

    def stop(self) -> None:
        """Hide the bar."""
        self.tail_entries = None
        if self._show_timer is not None:
            self._show_timer.stop()
            self._show_timer = None
        self.remove_class("-shown")
