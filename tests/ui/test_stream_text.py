"""Streamed text panes never lose or double a character at a line wrap.

The property test checks the wrapping function on random texts and widths; the Pilot tests check
what a pane actually draws (its rows through ``render_line``) while text streams in and a
scrollbar appears, and in the app's compaction panel at 80 and 140 columns.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.cells import cell_len
from textual.app import App, ComposeResult
from textual.pilot import Pilot

from tests.ui.app_helpers import make_app, run_review
from tui_compactor.commands.demo import copy_sample
from tui_compactor.ui.widgets.stream_text import StreamText, wrap_cells

LONG_LINE = (
    "- Read: `/Users/badlogic/workspaces/pi-mono/packages/coding-agent/src/cli/"
    "file-processor.ts` and then ran `npm run check && git add -A && git commit -m wip` "
    "twice; 这是一个很长的中文句子用来检查宽字符 👍 at the end"
)

TEXTS = st.text(
    alphabet=st.sampled_from(list("abc xyz/-._`&") + ["\t", "中", "文", "👍", "é", "\u0301"]),
    max_size=300,
)


@settings(max_examples=300, deadline=None)
@given(text=TEXTS, width=st.integers(min_value=1, max_value=120))
def test_wrapped_rows_joined_give_back_the_text(text: str, width: int) -> None:
    rows = wrap_cells(text, width)
    assert "".join(rows) == text
    for row in rows:
        visible = row.rstrip()
        # Only a single character wider than the row may overflow it.
        assert cell_len(visible) <= width or len(visible) == 1, (row, width)


def test_wrap_breaks_after_spaces_and_keeps_every_character() -> None:
    rows = wrap_cells("&& git commit -m wip", 9)
    assert rows == ["&& git ", "commit -m ", "wip"]
    assert wrap_cells("src/cli/file-processor.ts", 10) == ["src/cli/fi", "le-process", "or.ts"]


def drawn_rows(pane: StreamText) -> list[str]:
    """What the pane draws for every row of its content (scrolling through it)."""
    height = pane.scrollable_content_region.height
    total = pane.virtual_size.height
    rows: list[str] = []
    original = pane.scroll_offset
    top = 0
    while top < total:
        pane.set_reactive(StreamText.scroll_y, top)
        rows.extend(pane.render_line(y).text for y in range(min(height, total - top)))
        top += height
    pane.set_reactive(StreamText.scroll_y, original.y)
    return rows


def assert_nothing_lost(pane: StreamText) -> None:
    """Every non-space character of the pane's text is drawn, once, in order."""
    rows = drawn_rows(pane)
    width = pane.scrollable_content_region.width
    assert all(cell_len(row.rstrip()) <= width for row in rows)
    assert "".join("".join(rows).split()) == "".join(pane.text.split())


class PaneHost(App[None]):
    """One pane in a column of a given width."""

    CSS = "StreamText { height: 8; width: 50; }"

    def compose(self) -> ComposeResult:
        yield StreamText("waiting", id="pane")


@pytest.mark.asyncio
async def test_streaming_until_a_scrollbar_appears_rewraps_to_the_narrower_width() -> None:
    app = PaneHost()
    async with app.run_test(size=(80, 24)) as pilot:
        pane = app.query_one(StreamText)
        for number in range(12):
            for start in range(0, len(LONG_LINE), 17):  # deltas split words and paths
                pane.append(LONG_LINE[start : start + 17])
                if start % 3 == 0:
                    pane.flush()
                    await pilot.pause()
            pane.append(f" ({number})\n")
            pane.flush()
            await pilot.pause()
            assert_nothing_lost(pane)
        assert pane.virtual_size.height > pane.size.height  # it scrolls: a scrollbar shows


async def _compaction_panes(pilot: Pilot[None]) -> list[StreamText]:
    panel = await run_review(pilot)
    assert panel.state == "ready"
    return [pane for view in panel.candidates for pane in view.panes.values() if pane.text]


@pytest.mark.asyncio
@pytest.mark.parametrize("size", [(80, 24), (140, 40)])
async def test_compaction_panes_draw_every_character_of_the_summaries(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    app = make_app(copy_sample(tmp_path))
    async with app.run_test(size=size) as pilot:
        panes = await _compaction_panes(pilot)
        assert {pane.id for pane in panes} >= {"pane-history", "pane-short"}
        history = next(pane for pane in panes if pane.id == "pane-history")
        assert "/" in history.text and len(history.text) > 20 * history.size.width  # it wraps
        for pane in panes:
            assert_nothing_lost(pane)


class SizedPane(App[None]):
    """One pane filling the screen (at 80x24 and 200x60)."""

    def compose(self) -> ComposeResult:
        yield StreamText("waiting", id="pane")


STREAMED = "".join(
    f"- [x] step {n}: edited `src/module_{n}.py`, then {LONG_LINE[: 40 + 7 * n]}\n"
    for n in range(30)
)


@pytest.mark.asyncio
@pytest.mark.parametrize("size", [(80, 24), (200, 60)])
async def test_finished_text_replaces_the_streamed_text_rewrapping_only_what_changed(
    size: tuple[int, int],
) -> None:
    """A part's final text (spaces stripped, an escape removed near the end) replaces what
    streamed: the pane then shows exactly the final text, and the lines both share keep the
    rows already wrapped instead of being wrapped again."""
    final = STREAMED.replace("step 27:", "step 27 (checked):").strip()
    app = SizedPane()
    async with app.run_test(size=size) as pilot:
        pane = app.query_one(StreamText)
        for start in range(0, len(STREAMED), 23):
            pane.append(STREAMED[start : start + 23])
            if start % 5 == 0:
                pane.flush()
        pane.flush()
        await pilot.pause()
        before = list(pane._strips)
        shared_rows = pane._line_ends[26]  # lines 0-26 are the same in both texts
        pane.set_text(final)
        kept = sum(1 for a, b in zip(pane._strips, before[:shared_rows], strict=False) if a is b)
        assert kept == shared_rows  # the shared lines' rows are the very same strips
        assert pane._strips[shared_rows] is not before[shared_rows]
        await pilot.pause()
        assert pane.text == final
        assert pane.is_vertical_scroll_end  # still following the end
        fresh = StreamText(id="fresh")
        await app.mount(fresh)
        fresh.styles.width = pane.size.width
        fresh.styles.height = pane.size.height
        await pilot.pause()
        fresh.set_text(final)
        await pilot.pause()
        assert pane.visible_text == fresh.visible_text
        assert "".join(pane.visible_text.split()) == "".join(final.split())
        assert_nothing_lost(pane)
