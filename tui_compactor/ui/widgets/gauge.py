"""The context gauge: how full the model's window is at the selected node.

One bar, window-wide: used tokens (coloured by state: fine / near the threshold / over it), the
keep-recent band inside them, the threshold as a tick and the reserve as a hatched tail; one line
of numbers above it and one of sources (usage-anchored vs purely local estimate) below.
"""

from __future__ import annotations

from rich.style import Style
from rich.text import Text
from textual.widget import Widget

from tui_compactor.textsafe import sanitize
from tui_compactor.ui.messages import GaugeData
from tui_compactor.ui.widgets.labels import format_tokens

NEAR_THRESHOLD_RATIO = 0.85
"""Above this share of the threshold the gauge turns to the warning colour."""


def fit_lines(lines: list[Text], width: int) -> Text:
    """Join ``lines``, each cut to ``width`` cells (a line never wraps into the next)."""
    joined = Text()
    for number, line in enumerate(lines):
        line.truncate(width, overflow="ellipsis")
        if number:
            joined.append("\n")
        joined.append_text(line)
    return joined


def gauge_state(data: GaugeData) -> str:
    """``ok``, ``near`` or ``over`` (would compact now)."""
    if data.should_compact:
        return "over"
    if data.threshold and data.tokens >= data.threshold * NEAR_THRESHOLD_RATIO:
        return "near"
    return "ok"


class ContextGauge(Widget):
    """Bar and numbers for the context at one node."""

    COMPONENT_CLASSES = {
        "gauge--ok",
        "gauge--near",
        "gauge--over",
        "gauge--keep",
        "gauge--free",
        "gauge--reserve",
        "gauge--threshold",
        "gauge--dim",
        "gauge--title",
    }

    DEFAULT_CSS = """
    ContextGauge { height: 3; padding: 0 1; }
    ContextGauge > .gauge--ok { color: $success; }
    ContextGauge > .gauge--near { color: $warning; }
    ContextGauge > .gauge--over { color: $error; }
    ContextGauge > .gauge--keep { color: $accent; }
    ContextGauge > .gauge--free { color: $panel-lighten-2; }
    ContextGauge > .gauge--reserve { color: $error 60%; }
    ContextGauge > .gauge--threshold { color: $text; text-style: bold; }
    ContextGauge > .gauge--dim { color: $text-muted; }
    ContextGauge > .gauge--title { text-style: bold; }
    """

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002 - Textual's name
        super().__init__(id=id)
        self.data: GaugeData | None = None
        self.message_text = "no node selected"

    def show(self, data: GaugeData | None, message: str = "") -> None:
        """Draw ``data`` (or ``message`` when there is nothing to draw)."""
        self.data = data
        self.message_text = message
        self.refresh()

    def _style(self, name: str) -> Style:
        return self.get_component_rich_style(f"gauge--{name}", partial=True)

    def render(self) -> Text:
        """Three lines: numbers, bar, sources."""
        data = self.data
        if data is None:
            return Text(self.message_text, style=self._style("dim"))
        width = max(self.content_region.width, 10)
        state = gauge_state(data)
        state_style = self._style(state)
        out = Text()
        window = data.window
        out.append(f"{format_tokens(data.tokens)}", state_style + self._style("title"))
        if window:
            percent = 100 * data.tokens / window
            assumed = "?" if data.window_assumed else ""
            out.append(f" / {format_tokens(window)}{assumed} ({percent:.0f}%)", state_style)
        else:
            out.append(" (window unknown)", self._style("dim"))
        if data.threshold is not None:
            out.append(f"  compact at {format_tokens(data.threshold)}", self._style("threshold"))
        if data.reserve is not None:
            out.append(f"  reserve {format_tokens(data.reserve)}", self._style("reserve"))
        out.append(f"  keep {format_tokens(data.keep_recent)}", self._style("keep"))
        if state == "over":
            out.append("  ⚠ would compact", state_style + self._style("title"))
        bar = self._bar(data, width, state_style)
        sources = Text()
        if data.usage_tokens is not None:
            sources.append(
                f"usage {format_tokens(data.usage_tokens)} + est. "
                f"{format_tokens(data.tokens - data.usage_tokens)}",
                self._style("dim"),
            )
        else:
            sources.append("no usage data: local estimate", self._style("dim"))
        sources.append(f" · local estimate {format_tokens(data.local_estimate)}",
                       self._style("dim"))
        if data.window_model:
            model = sanitize(data.window_model, single_line=True, max_len=40)
            sources.append(f" · window of {model}", self._style("dim"))
        elif data.window_assumed:
            sources.append(" · window assumed: set --window", self._style("near"))
        return fit_lines([out, bar, sources], width)

    def _bar(self, data: GaugeData, width: int, used_style: Style) -> Text:
        """The window as ``width`` cells: used ▮, keep band, free, threshold tick, reserve."""
        scale_max = data.window or max(data.tokens, data.threshold or 0, 1)

        def cell(tokens: int) -> int:
            return max(0, min(width, round(width * tokens / scale_max)))

        used_cells = cell(data.tokens)
        keep_start = cell(max(data.tokens - data.keep_recent, 0))
        threshold_cell = cell(data.threshold) if data.threshold is not None else None
        reserve_start = cell(scale_max - data.reserve) if data.reserve and data.window else width
        bar = Text(no_wrap=True)
        for position in range(width):
            if threshold_cell is not None and position == min(threshold_cell, width - 1):
                bar.append("┃", self._style("threshold"))
            elif position < keep_start:
                bar.append("█", used_style)
            elif position < used_cells:
                bar.append("▓", self._style("keep"))
            elif position >= reserve_start:
                bar.append("░", self._style("reserve"))
            else:
                bar.append("─", self._style("free"))
        return bar
