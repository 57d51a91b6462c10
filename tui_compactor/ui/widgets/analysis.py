"""Analysis views: what fills the window at a node, the cut sweep in the plan pane, and the
hindsight audit of a compaction node.

These widgets only render what the engine computed (``engine.breakdown``, ``engine.deps``,
``engine.hindsight``) in the app's thread workers; all session text is sanitized.
"""

from __future__ import annotations

from typing import Any

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from tui_compactor.textsafe import sanitize
from tui_compactor.ui.widgets.labels import format_tokens
from tui_compactor.ui.widgets.plan_view import NEIGHBOUR_CUTS, SWEEP_DEPENDENCIES_SHOWN
from tui_compactor.wording import count_of, provider_gap

SPARK = "▁▂▃▄▅▆▇█"

KIND_STYLES = {
    "user": "bold",
    "assistant": "",
    "thinking": "magenta",
    "tool_call": "cyan",
    "tool_result": "blue",
    "image": "yellow",
    "bash": "green",
    "bash_excluded": "dim",
    "compaction_summary": "bold yellow",
    "branch_summary": "bold green",
    "custom": "italic",
}
"""Bar colour per breakdown kind."""


def sparkline(
    values: list[int], width: int, marks: dict[int, str] | None = None, style: str = ""
) -> Text:
    """``values`` as block characters bucketed to ``width`` columns (each column shows the
    largest value of its bucket); ``marks`` styles the columns holding the given indices."""
    out = Text()
    if not values:
        return out
    columns = max(1, min(width, len(values)))
    top = max(values) or 1
    styled: dict[int, str] = {}
    for index, mark in (marks or {}).items():
        styled[index * columns // len(values)] = mark
    for column in range(columns):
        lo = column * len(values) // columns
        hi = max(lo + 1, (column + 1) * len(values) // columns)
        value = max(values[lo:hi])
        glyph = SPARK[min(len(SPARK) - 1, value * (len(SPARK) - 1) // top)] if value else " "
        out.append(glyph, style=styled.get(column, style))
    return out


BAR_WIDTH = 16
"""Cells of the largest possible bar in the Window tab (every kind's tokens in one)."""
BAR_MIN_WIDTH = 8
"""Cells the bars keep on a narrow pane before they give way (the names give way first)."""


class ShareBar:
    """A bar as long as ``share`` (0..1) of the cells it is given, at most ``BAR_WIDTH``: on a
    narrow pane every bar shrinks alike, so different shares keep different lengths."""

    def __init__(self, share: float, style: str) -> None:
        self.share = share
        self.style = style

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement(1, BAR_WIDTH).with_maximum(options.max_width)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        cells = min(BAR_WIDTH, options.max_width)
        yield Text("█" * max(1, round(cells * self.share)), style=self.style, no_wrap=True)


class BreakdownTable:
    """Tokens per kind with a bar and the share of the window, laid out for the width it is
    drawn at. Where the full names fit beside the figures and ``BAR_MIN_WIDTH`` cells of bar,
    they are shown (``tool results: read``); on a narrower pane (80×24) every name takes its
    short form (``result: read``: a tool's name stays whole, so two tools' rows differ; cut,
    both read ``tool resu…``) and the columns one cell apart instead of two, and a name still
    too long is cut at its end with an ellipsis. The figures are never cut, and the bars keep
    at least ``BAR_MIN_WIDTH`` cells, so their lengths follow the shares."""

    def __init__(self, breakdown: Any) -> None:
        self.breakdown = breakdown

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield self.table(options.max_width)

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement(options.max_width, options.max_width)

    def table(self, width: int) -> Table:
        """The table for ``width`` cells."""
        breakdown = self.breakdown
        window = breakdown.window
        parts = list(breakdown.parts)
        figures = [format_tokens(part.tokens) for part in parts]
        shares = [f"{part.tokens / window:.1%}" if window else "" for part in parts]
        numbers = max([len("tokens"), *map(len, figures)]) + max([len("window"), *map(len, shares)])
        names = [_safe_name(part.label) for part in parts]
        compact = max(map(cell_len, names), default=0) + numbers + BAR_MIN_WIDTH + 6 > width
        if compact:
            names = [_safe_name(_short_label(part)) for part in parts]
        gaps = 3 if compact else 6
        room = max(1, width - numbers - BAR_MIN_WIDTH - gaps)
        table = Table(
            expand=True,
            box=None,
            show_edge=False,
            pad_edge=False,
            collapse_padding=compact,
            header_style="bold",
        )
        table.add_column("what", width=min(room, max(map(cell_len, ["what", *names]))))
        table.add_column("tokens", justify="right", no_wrap=True)
        table.add_column("window", justify="right", no_wrap=True)
        table.add_column("", ratio=1, width=BAR_MIN_WIDTH, no_wrap=True, overflow="crop")
        total = breakdown.total or 1
        for part, name, figure, share in zip(parts, names, figures, shares, strict=True):
            table.add_row(
                Text(name, no_wrap=True, overflow="ellipsis"),
                Text(figure),
                Text(share, style="dim"),
                ShareBar(part.tokens / total, KIND_STYLES.get(part.kind, "")),
            )
        return table


def _safe_name(label: str) -> str:
    return sanitize(label, single_line=True, max_len=32)


def _short_label(part: Any) -> str:
    """The part's short name; a part named otherwise than by its kind keeps its name."""
    short = getattr(part, "short_label", None)
    return short if isinstance(short, str) else str(part.label)


def breakdown_table(breakdown: Any) -> BreakdownTable:
    """Tokens per kind, laid out when drawn (``BreakdownTable``)."""
    return BreakdownTable(breakdown)


def breakdown_summary(breakdown: Any, session: Any) -> Text:
    """The headline: total, share of the window, usage, what a compaction would free."""
    out = Text()
    leaf_id = sanitize(str(session.entries[breakdown.leaf].id), single_line=True, max_len=24)
    out.append(f"What fills the window at #{breakdown.leaf} ({leaf_id})\n", style="bold")
    out.append(f"{format_tokens(breakdown.total)} tokens in messages [{breakdown.counter_name}]")
    if breakdown.window:
        share = breakdown.total / breakdown.window
        out.append(f" = {share:.1%} of {format_tokens(breakdown.window)}")
    out.append("\n")
    if breakdown.usage_tokens is not None:
        why = provider_gap(breakdown.context_tokens - breakdown.total, format_tokens)
        out.append(
            f"provider-counted context {format_tokens(breakdown.context_tokens)} ({why})\n",
            style="dim",
        )
    if breakdown.compaction_prepared:
        out.append(
            f"a compaction here would free ~{format_tokens(breakdown.tokens_freed)} and keep "
            f"~{format_tokens(breakdown.tokens_kept)} (+ its summary)\n",
            style="bold green",
        )
    else:
        reason = sanitize(str(breakdown.compaction_reason or ""), single_line=True, max_len=120)
        out.append(f"no compaction here: {reason}\n", style="dim")
    return out


class OneLine:
    """``text`` and, where it fits on the same line, ``extra``: one line at any width (a
    largest entry's id wrapped onto a second line at 80×24, so the list showed half as many);
    ``text`` itself is cut at its end with an ellipsis where even it does not fit."""

    def __init__(self, text: Text, extra: Text) -> None:
        self.text = text
        self.extra = extra

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement(1, self.text.cell_len + self.extra.cell_len)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = options.max_width
        line = self.text.copy()
        if line.cell_len + self.extra.cell_len <= width:
            line.append_text(self.extra)
        line.truncate(width, overflow="ellipsis")
        line.no_wrap = True
        yield line


class BreakdownView(VerticalScroll):
    """Tokens per kind at the selected node and its largest entries (enter jumps to one)."""

    DEFAULT_CSS = """
    BreakdownView { padding: 0 1; }
    BreakdownView > Static { height: auto; }
    BreakdownView > #breakdown-largest { height: auto; max-height: 12; border: none;
                                          padding: 0; }
    """

    class JumpRequested(Message):
        """The user chose one of the largest entries."""

        def __init__(self, entry_index: int) -> None:
            super().__init__()
            self.entry_index = entry_index

    shown_leaf: int | None = None

    def compose(self) -> ComposeResult:
        """Headline, table, and the largest entries as a list."""
        yield Static(
            Text("move the cursor: what fills the window at that node", style="dim"),
            id="breakdown-head",
        )
        yield Static(id="breakdown-parts")
        yield Static(
            Text("largest entries (enter jumps to one)", style="bold"), id="breakdown-largest-title"
        )
        yield OptionList(id="breakdown-largest")

    def show_pending(self, leaf: int) -> None:
        """Say a breakdown is being computed."""
        self.query_one("#breakdown-head", Static).update(
            Text(f"measuring the context at #{leaf}…", style="dim")
        )

    def show(self, breakdown: Any, session: Any) -> None:
        """Draw ``breakdown``."""
        self.shown_leaf = breakdown.leaf
        self.query_one("#breakdown-head", Static).update(breakdown_summary(breakdown, session))
        self.query_one("#breakdown-parts", Static).update(breakdown_table(breakdown))
        options = self.query_one("#breakdown-largest", OptionList)
        options.clear_options()
        for item in breakdown.largest:
            entry = session.entries[item.entry_index]
            what = item.role + (f" {item.tool}" if item.tool else "")
            line = Text()
            line.append(f"#{item.entry_index:<7}", style="dim")
            line.append(f"{format_tokens(item.tokens):>7} ", style="bold")
            line.append(sanitize(what, single_line=True, max_len=30))
            entry_id = Text(f"  {sanitize(str(entry.id), single_line=True, max_len=12)}", "dim")
            options.add_option(Option(OneLine(line, entry_id), id=str(item.entry_index)))

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        """Enter on a largest entry: ask the app to jump there."""
        event.stop()
        if event.option.id is not None:
            self.post_message(self.JumpRequested(int(event.option.id)))


def sweep_renderable(sweep: Any, session: Any, width: int = 48) -> RenderableType:
    """The sweep over every valid cut: kept tokens and crossing dependencies as sparklines with
    the planned cut marked, the crossings at it, and the best cuts."""
    plan = sweep.plan
    rows = sweep.rows
    out = Text()
    if not rows:
        return Text("no valid cut point to sweep", style="dim")
    planned = plan.first_kept_index if plan.prepared else None
    marks = {}
    for number, row in enumerate(rows):
        if row.branch_index == planned:
            marks[number] = "bold yellow reverse"
    out.append(f"sweep over {len(rows)} valid cuts (left: keep most)\n", style="bold")
    out.append("kept   ", style="dim")
    out.append_text(sparkline([row.tokens_kept for row in rows], width, marks, "green"))
    out.append("\ndeps   ", style="dim")
    out.append_text(sparkline([row.dependencies for row in rows], width, marks, "red"))
    out.append("\n")
    current = sweep.row_at(planned) if planned is not None else None
    if current is not None:
        crossing = count_of(current.dependencies, "dependency", "dependencies")
        verb = "crosses" if current.dependencies == 1 else "cross"
        out.append(
            f"this cut: {crossing} {verb} it, keeps {format_tokens(current.tokens_kept)}\n",
            style="bold",
        )
        out.append_text(cut_choices(rows, rows.index(current)))
    best = [row for row in sweep.best_rows() if row.branch_index != planned][:3]
    if best:
        shown = ", ".join(
            f"#{row.entry_index} ({format_tokens(row.tokens_kept)} kept, "
            f"{count_of(row.dependencies, 'dep')})"
            for row in best
        )
        out.append(f"fewer crossings: {shown}\n", style="green")
    parts: list[RenderableType] = [out]
    if planned is not None:
        deps = sweep.dependencies_at(planned)
        if deps:
            table = Table(box=None, show_edge=False, pad_edge=False, show_header=False, expand=True)
            table.add_column("kind", style="dim", no_wrap=True)
            table.add_column("fact", ratio=1, no_wrap=True, overflow="ellipsis")
            table.add_column("where", style="dim", no_wrap=True)
            for dep in deps[:SWEEP_DEPENDENCIES_SHOWN]:
                fact = Text(sanitize(dep.text, single_line=True, max_len=80))
                table.add_row(
                    Text(dep.kind), fact, Text(f"#{dep.summarized_entry}→#{dep.kept_entry}")
                )
            parts.append(table)
            if len(deps) > SWEEP_DEPENDENCIES_SHOWN:
                more = len(deps) - SWEEP_DEPENDENCIES_SHOWN
                parts.append(Text(f"… {more} more (plan --sweep --json)", style="dim"))
    return Group(*parts)


def cut_choices(rows: list[Any], at: int) -> Text:
    """The planned cut and its neighbouring valid cuts, one per line, each with the
    dependencies crossing it and the tokens it keeps: what ``[`` and ``]`` would pick."""
    out = Text()
    out.append("cuts within reach ([ earlier, ] later):\n", style="dim")
    first, last = max(0, at - NEIGHBOUR_CUTS), min(len(rows), at + NEIGHBOUR_CUTS + 1)
    for number in range(first, last):
        row = rows[number]
        this = number == at
        out.append(f" {'▶' if this else ' '} #{row.entry_index:<7}", style="bold" if this else "")
        style = "bold yellow" if this else "red" if row.dependencies else "green"
        noun = "dep " if row.dependencies == 1 else "deps"
        out.append(f"{row.dependencies:>4} {noun}", style=style)
        out.append(f"  {format_tokens(row.tokens_kept):>6} kept\n", style="dim")
    return out


def hindsight_head(audit: Any) -> Text:
    """The headline of a compaction's hindsight audit."""
    out = Text()
    style = "green" if audit.score >= 0.9 else "yellow" if audit.score >= 0.6 else "red"
    out.append("Hindsight: ", style="bold")
    out.append(f"score {audit.score:.2f}", style=f"bold {style}")
    out.append(
        f" — {audit.used - len(audit.lost)} of {audit.used} facts used later were "
        f"carried; {count_of(len(audit.rereads), 'file')} re-read after it"
    )
    if audit.warning:
        out.append("\n" + sanitize(audit.warning, single_line=True), style="yellow")
    if audit.lost or audit.rereads:
        out.append("\nenter on a row jumps to where it was needed", style="dim")
    return out


def hindsight_row(what: str, style: str, text: str, start: int, end: int) -> Text:
    """One lost fact or re-read: what, the fact, where lost → where needed (entry indices)."""
    line = Text()
    line.append(f"{what:<17}", style=style)
    line.append(sanitize(text, single_line=True, max_len=70))
    line.append(f"  #{start} → #{end}", style="dim")
    return line


class HindsightView(Vertical):
    """The hindsight audit under a compaction's details; enter on a row jumps to the entry
    where the fact was needed (or the file re-read)."""

    DEFAULT_CSS = """
    HindsightView { height: auto; }
    HindsightView > Static { height: auto; }
    HindsightView > OptionList { height: auto; max-height: 12; border: none; padding: 0; }
    """

    class JumpRequested(Message):
        """The user chose a lost fact or a re-read."""

        def __init__(self, entry_index: int) -> None:
            super().__init__()
            self.entry_index = entry_index

    MAX_ROWS = 40
    """Rows listed (the CLI lists every one)."""

    def compose(self) -> ComposeResult:
        """Headline and the rows."""
        yield Static(id="hindsight-head")
        yield OptionList(id="hindsight-rows")

    def show_pending(self) -> None:
        """Say the audit is being computed."""
        self.query_one("#hindsight-head", Static).update(
            Text("auditing this compaction in hindsight…", style="dim")
        )
        self.query_one("#hindsight-rows", OptionList).clear_options()

    def show(self, audit: Any) -> None:
        """Draw ``audit``."""
        self.query_one("#hindsight-head", Static).update(hindsight_head(audit))
        rows = self.query_one("#hindsight-rows", OptionList)
        rows.clear_options()
        options = [
            Option(
                hindsight_row(f"lost {fact.kind}", "red", fact.text, fact.lost_at, fact.needed_at),
                id=f"{number}:{fact.needed_at}",
            )
            for number, fact in enumerate(audit.lost)
        ] + [
            Option(
                hindsight_row("re-read", "yellow", item.path, item.read_at, item.reread_at),
                id=f"r{number}:{item.reread_at}",
            )
            for number, item in enumerate(audit.rereads)
        ]
        rows.add_options(options[: self.MAX_ROWS])
        rows.display = bool(options)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        """Enter on a row: ask the app to jump to where it was needed."""
        event.stop()
        if event.option.id is not None:
            self.post_message(self.JumpRequested(int(event.option.id.rsplit(":", 1)[1])))
