"""The context chart: context size along the active path, turn by turn.

Hand-drawn with eighth-block characters so it needs no plotting dependency: one column per turn
(or per group of turns when the path is longer than the chart is wide), the threshold as a dashed
line, the window as the top of the chart, compactions marked under the axis where the context
dropped, and the selected node's column highlighted.
"""

from __future__ import annotations

from bisect import bisect_right

from rich.style import Style
from rich.text import Text
from textual.widget import Widget

from tui_compactor.ui.widgets.gauge import append_cells, fit_lines
from tui_compactor.ui.widgets.labels import format_tokens

EIGHTHS = " ▁▂▃▄▅▆▇█"
"""Partial block characters, index = eighths of a cell filled."""


class ContextChart(Widget):
    """Column chart of context tokens along the active path."""

    COMPONENT_CLASSES = {
        "chart--bar",
        "chart--over",
        "chart--threshold",
        "chart--compaction",
        "chart--selected",
        "chart--axis",
    }

    DEFAULT_CSS = """
    ContextChart { height: 6; padding: 0 1; }
    ContextChart > .chart--bar { color: $primary; }
    ContextChart > .chart--over { color: $error; }
    ContextChart > .chart--threshold { color: $warning; }
    ContextChart > .chart--compaction { color: $warning; text-style: bold; }
    ContextChart > .chart--selected { color: $accent; background: $accent 20%; }
    ContextChart > .chart--axis { color: $text-muted; }
    """

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002 - Textual's name
        super().__init__(id=id)
        self.points: list[tuple[int, int]] = []
        self.compactions: list[int] = []
        self.window: int | None = None
        self.threshold: int | None = None
        self.selected_entry: int | None = None
        self._entry_keys: list[int] = []
        """Entry index of each point (ascending along the path), for bisecting."""
        self._buckets: tuple[int, list[tuple[int, bool, int, int]]] | None = None
        """Cached resampling: (width, [(max value, compaction, start, end)])."""

    def show(
        self,
        points: list[tuple[int, int]],
        compactions: list[int],
        window: int | None,
        threshold: int | None,
    ) -> None:
        """Replace the data and repaint."""
        self.points = points
        self.compactions = compactions
        self.window = window
        self.threshold = threshold
        self._entry_keys = [entry_index for entry_index, _ in points]
        self._buckets = None
        self.refresh()

    def select(self, entry_index: int | None) -> None:
        """Highlight the column of the selected entry (the nearest earlier turn); a move that
        stays on the same turn draws nothing."""
        before = self._selected_position()
        self.selected_entry = entry_index
        if self._selected_position() != before:
            self.refresh()

    def _style(self, name: str) -> Style:
        return self.get_component_rich_style(f"chart--{name}", partial=True)

    def render(self) -> Text:
        """Bars over ``height - 1`` rows plus an axis row with compaction marks."""
        width = max(self.content_region.width, 10)
        height = max(self.content_region.height - 1, 1)
        if not self.points:
            return Text(
                "context chart: no assistant turns with a size on the active path",
                style=self._style("axis"),
            )
        plot_width = max(width - 14, 5)
        columns = self._columns(plot_width)
        peak = max(value for value, _, _ in columns)  # the columns cover every point
        # Scale to the window when the session gets anywhere near the threshold; otherwise to
        # the peak, so a young session's curve is still readable.
        near = self.threshold is not None and peak >= self.threshold * 0.5
        scale_max = max(self.window or 0, peak, 1) if near else max(int(peak * 1.25), 1)
        threshold_row = None
        if self.threshold and self.threshold <= scale_max:
            threshold_row = min(height - 1, int(self.threshold / scale_max * height))
        bar, over, threshold, selected = (
            self._style(name) for name in ("bar", "over", "threshold", "selected")
        )
        compaction, axis = self._style("compaction"), self._style("axis")
        lines: list[Text] = []
        for row in range(height - 1, -1, -1):
            cells: list[tuple[str, Style]] = []
            for value, _has_compaction, is_selected in columns:
                filled = value / scale_max * height - row
                eighths = max(0, min(8, round(filled * 8)))
                is_over = self.threshold is not None and value >= self.threshold
                style = over if is_over else bar
                if eighths == 0 and row == threshold_row:
                    cells.append(("╌", threshold + selected if is_selected else threshold))
                else:
                    cells.append((EIGHTHS[eighths], style + selected if is_selected else style))
            out = Text()
            append_cells(out, cells)
            if row == height - 1:
                top = "window" if near and self.window else "scale"
                out.append(f" {format_tokens(scale_max)} {top}", axis)
            elif row == threshold_row:
                out.append(f" {format_tokens(self.threshold)} compact", threshold)
            elif row == 0:
                out.append(f" peak {format_tokens(peak)}", axis)
            lines.append(out)
        marks: list[tuple[str, Style]] = []
        for _value, has_compaction, is_selected in columns:
            style = compaction if has_compaction else axis
            marks.append(
                ("▲" if has_compaction else "─", style + selected if is_selected else style)
            )
        out = Text()
        append_cells(out, marks)
        out.append(f" {len(self.points)} turns", axis)
        lines.append(out)
        return fit_lines(lines, width)

    def _columns(self, plot_width: int) -> list[tuple[int, bool, bool]]:
        """Resample points to at most ``plot_width`` columns: (max value, compaction, selected)."""
        if self._buckets is None or self._buckets[0] != plot_width:
            count = len(self.points)
            buckets = min(count, plot_width)
            compaction_positions = sorted(self.compactions)
            resampled: list[tuple[int, bool, int, int]] = []
            for bucket in range(buckets):
                start = bucket * count // buckets
                end = max((bucket + 1) * count // buckets, start + 1)
                peak = max(tokens for _, tokens in self.points[start:end])
                first = bisect_right(compaction_positions, start - 1)
                has_compaction = first < len(compaction_positions) and (
                    compaction_positions[first] < end
                )
                resampled.append((peak, has_compaction, start, end))
            self._buckets = (plot_width, resampled)
        selected_position = self._selected_position()
        return [
            (
                peak,
                has_compaction,
                selected_position is not None and start <= selected_position < end,
            )
            for peak, has_compaction, start, end in self._buckets[1]
        ]

    def _selected_position(self) -> int | None:
        """Position in ``points`` of the last turn at or before the selected entry."""
        if self.selected_entry is None:
            return None
        position = bisect_right(self._entry_keys, self.selected_entry) - 1
        return position if position >= 0 else None
