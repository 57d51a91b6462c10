"""The context gauge: how full the model's window is at the selected node.

One bar, window-wide: used tokens (coloured by state: fine / near the threshold / over it), the
keep-recent band inside them, the threshold as a tick and the reserve as a hatched tail; one line
of numbers above it and one of sources below: which figure the headline trusts (usage-anchored,
as pi compacts on it, or the local estimate when there is no usage), the other figure, and a
flag when the two are ``DISAGREEMENT_RATIO`` times apart. Lines never wrap and are never cut in
the middle of a word: the least important parts are left out first (``fit_parts``).
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import groupby
from operator import itemgetter

from rich.style import Style
from rich.text import Text
from textual.widget import Widget

from tui_compactor.engine.estimates import disagreement, ratio
from tui_compactor.textsafe import sanitize
from tui_compactor.ui.messages import GaugeData
from tui_compactor.ui.widgets.labels import format_tokens
from tui_compactor.wording import ESTIMATE_MARK, NO_TABLE_MARK

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


def append_cells(text: Text, cells: Iterable[tuple[str, Style]]) -> None:
    """Append ``cells`` (character, style) to ``text`` as one span per run of equal styles:
    Textual converts each span's style on every paint, and a bar or chart drawn a span per
    cell pays that for every cell (~5 ms a paint for the chart)."""
    for style, run in groupby(cells, key=itemgetter(1)):
        text.append("".join(char for char, _ in run), style)


Part = tuple[Text, int, Text | None]
"""A piece of a gauge line: its text, its rank (0 is kept longest) and a shorter form."""


def fit_parts(parts: list[Part], width: int, separator: str = "  ") -> Text:
    """Join ``parts`` in order so the line fits ``width``: leave out parts ranked 2 and more,
    then use short forms, then leave out the rest but the first — each step taking the highest
    rank (the later part on a tie) first. Only a first part still too long is cut."""
    kept = list(parts)

    def joined() -> Text:
        line = Text(no_wrap=True)
        for number, (part, _rank, _brief) in enumerate(kept):
            if number:
                line.append(separator)
            line.append_text(part)
        return line

    def worst(indices: list[int]) -> int | None:
        return max(indices, key=lambda i: (kept[i][1], i)) if indices else None

    line = joined()
    while line.cell_len > width:
        later = range(1, len(kept))
        if (index := worst([i for i in later if kept[i][1] >= 2])) is not None:
            del kept[index]
        elif (index := worst([i for i in range(len(kept)) if kept[i][2] is not None])) is not None:
            _part, rank, brief = kept[index]
            kept[index] = (brief or _part, rank, None)
        elif (index := worst(list(later))) is not None:
            del kept[index]
        else:
            break
        line = joined()
    line.truncate(width, overflow="ellipsis")
    return line


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
        self.provisional = False
        """The figures are a chars/4 count until the counter's table is loaded."""
        self.table_error: str | None = None
        """Why the cl100k table could not be loaded: the figures are a chars/4 estimate."""
        self.draws = 0
        """Renders so far (``ui.frames``: the first screen waits for the gauge's frame)."""

    def show(self, data: GaugeData | None, message: str = "", *, provisional: bool = False) -> None:
        """Draw ``data`` (or ``message`` when there is nothing to draw); ``provisional``: its
        figures are a chars/4 count, said on the sources line."""
        self.data = data
        self.message_text = message
        self.provisional = provisional
        self.refresh()

    def _style(self, name: str) -> Style:
        return self.get_component_rich_style(f"gauge--{name}", partial=True)

    def render(self) -> Text:
        """Three lines: numbers, bar, sources."""
        self.draws += 1
        data = self.data
        if data is None:
            return Text(self.message_text, style=self._style("dim"))
        width = max(self.content_region.width, 10)
        state_style = self._style(gauge_state(data))
        numbers = fit_parts(self._number_parts(data, state_style), width)
        sources = fit_parts(self._source_parts(data), width, separator=" · ")
        return fit_lines([numbers, self._bar(data, width, state_style), sources], width)

    def _number_parts(self, data: GaugeData, state_style: Style) -> list[Part]:
        """The headline and the budget figures, ranked (the headline and a warning stay)."""
        state = gauge_state(data)
        headline = Text(format_tokens(data.tokens), state_style + self._style("title"))
        if data.window:
            percent = ratio(100 * data.tokens, data.window)
            assumed = "?" if data.window_assumed else ""
            headline.append(
                f" / {format_tokens(data.window)}{assumed} ({percent:.0f}%)", state_style
            )
        else:
            headline.append(" (window unknown)", self._style("dim"))
        parts: list[Part] = [(headline, 0, None)]
        if state == "over":
            warning = Text("⚠ would compact", state_style + self._style("title"))
            parts.append((warning, 0, None))
        elif state == "near":
            parts.append((Text("near the threshold", state_style), 2, None))
        if data.threshold is not None:
            figure = format_tokens(data.threshold)
            parts.append(
                (
                    Text(f"compact at {figure}", self._style("threshold")),
                    1,
                    Text(f"at {figure}", self._style("threshold")),
                )
            )
        if data.reserve is not None:
            parts.append(
                (Text(f"reserve {format_tokens(data.reserve)}", self._style("reserve")), 3, None)
            )
        parts.append(
            (Text(f"keep {format_tokens(data.keep_recent)}", self._style("keep")), 4, None)
        )
        return parts

    def _source_parts(self, data: GaugeData) -> list[Part]:
        """Which figure the headline trusts, the other one, a disagreement flag, the window."""
        dim = self._style("dim")
        warn = self._style("near")
        local = format_tokens(data.local_estimate)
        parts: list[Part] = []
        if self.table_error is not None:
            parts.append((Text(NO_TABLE_MARK, dim), 0, Text(ESTIMATE_MARK, dim)))
        elif self.provisional:
            parts.append(
                (
                    Text(f"{ESTIMATE_MARK} while the token table loads", dim),
                    0,
                    Text(ESTIMATE_MARK, dim),
                )
            )
        if data.usage_tokens is not None:
            usage = format_tokens(data.usage_tokens)
            since = data.tokens - data.usage_tokens
            trusted = Text(f"from usage {usage}", dim)
            brief = Text(f"usage {usage}", dim)
            if since:
                trusted.append(f" + {format_tokens(since)} estimated since", dim)
                brief.append(f" + {format_tokens(since)} est.", dim)
            parts.append((trusted, 0, brief))
            apart = disagreement(data.tokens, data.local_estimate)
            if apart is not None:
                flag = Text(
                    f"⚠ local estimate {local} is {apart:.1f}× apart: usage may be "
                    "stale or from another model",
                    warn,
                )
                parts.append((flag, 1, Text(f"⚠ local {local}: {apart:.1f}× apart", warn)))
            else:
                parts.append((Text(f"local estimate {local}", dim), 3, None))
        else:
            parts.append(
                (
                    Text("local estimate (no usage data on this path)", dim),
                    0,
                    Text("local estimate (no usage)", dim),
                )
            )
        if data.window_model:
            model = sanitize(data.window_model, single_line=True, max_len=40)
            parts.append((Text(f"window of {model}", dim), 2, None))
        elif data.window_assumed:
            parts.append(
                (Text("window assumed: set --window", warn), 1, Text("window assumed", warn))
            )
        return parts

    def _bar(self, data: GaugeData, width: int, used_style: Style) -> Text:
        """The window as ``width`` cells: used ▮, keep band, free, threshold tick, reserve."""
        scale_max = data.window or max(data.tokens, data.threshold or 0, 1)

        def cell(tokens: int) -> int:
            return round(max(0.0, min(width, ratio(width * tokens, scale_max))))

        used_cells = cell(data.tokens)
        keep_start = cell(max(data.tokens - data.keep_recent, 0))
        threshold_cell = cell(data.threshold) if data.threshold is not None else None
        reserve_start = cell(scale_max - data.reserve) if data.reserve and data.window else width
        threshold_style = self._style("threshold")
        keep_style = self._style("keep")
        reserve_style = self._style("reserve")
        free_style = self._style("free")

        def cells() -> Iterable[tuple[str, Style]]:
            for position in range(width):
                if threshold_cell is not None and position == min(threshold_cell, width - 1):
                    yield "┃", threshold_style
                elif position < keep_start:
                    yield "█", used_style
                elif position < used_cells:
                    yield "▓", keep_style
                elif position >= reserve_start:
                    yield "░", reserve_style
                else:
                    yield "─", free_style

        bar = Text(no_wrap=True)
        append_cells(bar, cells())
        return bar
