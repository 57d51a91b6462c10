"""The summary diff (difflib, rendered as Text) and the buffered streaming text pane."""

from __future__ import annotations

import pytest
from textual.app import App, ComposeResult

from tui_compactor.ui.widgets.stream_text import StreamText
from tui_compactor.ui.widgets.summary_diff import SummaryDiff, diff_stats, summary_diff_text

PREVIOUS = """## Goal
Port the selector [bold]now[/]
## Progress
- [x] read theme.md
- [ ] port user-message-selector.ts
one
two
three
four
five
six
## Next Steps
write tests"""

UPDATED = PREVIOUS.replace("- [ ] port user", "- [x] port user").replace(
    "write tests", "write tests for the selector\nrun npm test \x1b]0;PWNED\x07"
)


def test_diff_marks_added_removed_and_changed_words() -> None:
    text = summary_diff_text(PREVIOUS, UPDATED)
    lines = text.plain.split("\n")
    assert lines[0].startswith("+3 added  -2 removed")
    assert "- - [ ] port user-message-selector.ts" in lines
    assert "+ - [x] port user-message-selector.ts" in lines
    assert "- write tests" in lines
    assert "+ write tests for the selector" in lines
    assert "+ run npm test" in lines  # escape sequence removed, not shown or interpreted
    assert "  Port the selector [bold]now[/]" in lines  # brackets are text
    assert "  ⋯ 3 unchanged lines" in lines  # one..six folded to 2 + 2 context lines
    # The changed word "x" inside the replaced checkbox line is highlighted on its own.
    added_line_start = text.plain.index("+ - [x] port")
    highlighted = [
        text.plain[span.start : span.end]
        for span in text.spans
        if "on green" in str(span.style) and span.start >= added_line_start
    ]
    assert highlighted[0] == "x"
    assert not any("\x1b" in line for line in lines)


def test_identical_and_stats() -> None:
    assert not diff_stats(PREVIOUS, PREVIOUS).changed
    assert "identical" in summary_diff_text(PREVIOUS, PREVIOUS).plain
    stats = diff_stats("a\nb\nc", "a\nc\nd")
    assert (stats.added, stats.removed, stats.unchanged) == (1, 1, 2)


class PaneHost(App[None]):
    """A bare app with one stream pane and one diff view."""

    def compose(self) -> ComposeResult:
        yield StreamText("waiting for the model…", id="pane")
        yield SummaryDiff(id="diff")


@pytest.mark.asyncio
async def test_stream_pane_buffers_deltas_and_wraps_sanitized_text() -> None:
    app = PaneHost()
    async with app.run_test(size=(40, 20)) as pilot:
        pane = app.query_one(StreamText)
        assert "waiting for the model" in pane.render_line(0).text
        deltas = (
            ["## Go", "al\n", "[red]not red[/] "] + ["word "] * 300 + ["\x1b[2J\x1b]0;T\x07end"]
        )
        for delta in deltas:
            pane.append(delta)
        # Nothing is drawn per delta: it is buffered until the next timer flush.
        assert pane.flush_count == 0 and pane.has_pending
        pane.flush()
        assert pane.flush_count == 1 and not pane.has_pending
        assert pane.text == "".join(deltas)
        visible = pane.visible_text
        assert visible.startswith("## Goal\n[red]not red[/] word")
        assert "\x1b" not in visible and visible.endswith("end")
        assert max(len(line) for line in visible.split("\n")) <= 38  # wrapped to the pane
        # Auto-scrolled to the end.
        await pilot.pause()
        assert pane.scroll_offset.y == pane.max_scroll_y > 0
        # The timer flushes on its own.
        pane.append("\nmore")
        await pilot.wait_for_scheduled_animations()
        while pane.has_pending:
            await pilot.pause(0.02)
        assert pane.visible_text.endswith("end\nmore")
        # What is drawn follows the tail: the last non-empty row on screen is the new line.
        await pilot.pause()
        drawn = [pane.render_line(y).text.rstrip() for y in range(pane.size.height)]
        assert [row for row in drawn if row][-1] == "more"
        assert pane.scroll_offset.y == pane.max_scroll_y
        # Narrower pane: re-wrapped, nothing lost.
        await pilot.resize_terminal(25, 20)
        await pilot.pause()
        assert max(len(line) for line in pane.visible_text.split("\n")) <= 23
        assert pane.visible_text.replace("\n", "").count("word") == 300


@pytest.mark.asyncio
async def test_diff_view_shows_the_diff_and_a_first_summary_note() -> None:
    app = PaneHost()
    async with app.run_test(size=(60, 30)) as pilot:
        view = app.query_one(SummaryDiff)
        body = view.query_one("#summary-diff-body")
        assert "No previous summary" in str(body.render())
        view.show(PREVIOUS, UPDATED)
        await pilot.pause()
        assert "+ run npm test" in str(body.render())
