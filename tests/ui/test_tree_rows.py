"""Tree rows drawn piece by piece: each row is exactly the pane's width, cut as Rich would cut
it (CJK, emoji, combining marks, labels), and printable ASCII rows are cut without splitting
their text into graphemes (the per-row cost that made a new screenful of rows stall)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
import rich.cells
from rich.segment import Segment
from rich.text import Text

from tests.ui.app_helpers import SIZE, make_app, settle
from tui_compactor.engine.messages import text_of
from tui_compactor.ui.widgets.tree import SessionTree

pytestmark = pytest.mark.asyncio

SAMPLE = Path(__file__).resolve().parents[2] / "tui_compactor" / "data" / "sample-session.jsonl"
WIDE_TEXTS = (
    "中文字符测试一二三四五六七八九十" * 5,
    "e\u0301e\u0301 combining marks " * 10,
    "emoji 👍🏽👨‍👩‍👧 " * 12,
    "a中b文c" * 30,
    "ｗｉｄｅ" * 20,
)


def _wide_session(directory: Path) -> Path:
    """The sample session with wide, combining and emoji text before each message's text,
    and labels (CJK, long, accented) on a few entries."""
    chooser = random.Random(3)
    records = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()]
    for record in records:
        message = record.get("message") if record.get("type") == "message" else None
        if not isinstance(message, dict):
            continue
        if isinstance(message.get("content"), str):
            message["content"] = chooser.choice(WIDE_TEXTS) + message["content"]
        elif isinstance(message.get("content"), list):
            for part in message["content"]:
                if part.get("type") == "text":
                    part["text"] = chooser.choice(WIDE_TEXTS) + part["text"]
    ids = [record["id"] for record in records if record.get("id")]
    parent = ids[-1]
    for number, target in enumerate(ids[5:40:3]):
        label_id = f"label{number}"
        records.append({"type": "label", "id": label_id, "parentId": parent,
                        "timestamp": records[-1].get("timestamp"), "targetId": target,
                        "label": chooser.choice(["标签中文", "x" * 50, "né"])})  # fmt: skip
        parent = label_id
    path = directory / "wide.jsonl"
    path.write_text(
        "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records),
        encoding="utf-8",
    )
    return path


def _rich_row(tree: SessionTree, position: int, width: int) -> list[Segment]:
    """Rich's own drawing of the row: its left part cut with an ellipsis to leave room for
    the right part, padded, then the whole cut to ``width`` (the pieces are read at a width
    where nothing is cut: left, the padding, right)."""
    pieces = tree._row_pieces(position, 100_000, wait=True)
    pad = max(range(len(pieces)), key=lambda i: len(pieces[i][0]) if pieces[i][1] is None else 0)
    left = Text(no_wrap=True, overflow="ellipsis", end="")
    for text, style in pieces[:pad]:
        left.append(text, style)
    right = Text(no_wrap=True, end="")
    for text, style in pieces[pad + 1 :]:
        right.append(text, style)
    left.truncate(max(width - right.cell_len, 8), overflow="ellipsis", pad=True)
    left.append_text(right)
    left.truncate(width, pad=True)
    base = tree._row_base_style(False)
    left.style = base
    return list(Segment.simplify(left.render(tree.app.console)))


async def test_rows_fit_the_width_as_rich_cuts_them_wide_text_included(tmp_path: Path) -> None:
    """At widths from 9 to 200 columns, every row (wide characters, emoji, combining
    marks, labels, plan marks, search matches, token counts) is exactly the width and shows
    what Rich's cutting of the same row shows, styles included."""
    app = make_app(_wide_session(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        tree = app.query_one(SessionTree)
        assert tree.plan_regions and tree.session.labels, "plan marks and labels are drawn"
        tree.search_matches = {tree.rows.index_at(p) for p in range(0, len(tree.rows), 3)}
        for width in (9, 20, 41, 80, 200):
            for position in range(len(tree.rows)):
                strip = tree._row_strip(position, width, False)
                assert strip.cell_length == width
                assert rich.cells.cell_len(strip.text) == width
                assert list(strip) == _rich_row(tree, position, width), (position, width)


async def test_one_cell_rows_are_cut_without_splitting_graphemes(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A screenful of rows whose previews are one cell a character (ASCII, and ✓ — … as
    agents write them) is cut by length: Rich's grapheme splitting of the whole row (a tenth
    of a millisecond a row) is never reached."""
    records = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()]
    for record in records:
        message = record.get("message") if record.get("type") == "message" else None
        if isinstance(message, dict) and message.get("role") == "user":
            message["content"] = "✓ tests pass — next… " + text_of(message.get("content"), " ")
    path = tmp_path / "ticks.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), "utf-8")
    app = make_app(path)
    async with app.run_test(size=(60, 36)) as pilot:
        await settle(pilot)
        tree = app.query_one(SessionTree)
        ticked = [
            position
            for position in range(len(tree.rows))
            if tree.preview_of(tree.rows.index_at(position)).startswith("✓")
        ]
        assert len(ticked) > 20
        splits: list[str] = []
        split_graphemes = rich.cells.split_graphemes

        def counted(text: str, *args: object, **kwargs: object) -> object:
            splits.append(text)
            return split_graphemes(text, *args, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(rich.cells, "split_graphemes", counted)
        cut = [tree.row_text(position, 40).plain for position in ticked]
        assert sum("…" in row for row in cut) > 10, "most rows are cut at 40 columns"
        assert all(rich.cells.cell_len(row) == 40 for row in cut)
        assert splits == []


async def test_a_row_is_cut_where_every_cut_to_a_width_cuts_never_inside_a_flag(
    tmp_path: Path,
) -> None:
    """A flag is two regional indicators that make one grapheme: a row cut at any width
    keeps both or neither, and its text before the "…" is the head the status line's
    ``cut_cells`` keeps of the same text (one rule for every cut to a width)."""
    from tui_compactor.textsafe import cut_cells

    records = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()]
    for record in records:
        message = record.get("message") if record.get("type") == "message" else None
        if isinstance(message, dict) and message.get("role") == "user":
            message["content"] = "trip 🇫🇷🇯🇵 " * 20
    path = tmp_path / "flags.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), "utf-8")
    app = make_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        tree = app.query_one(SessionTree)
        flagged = [
            position
            for position in range(len(tree.rows))
            if "🇫🇷" in tree.preview_of(tree.rows.index_at(position))
        ]
        assert flagged
        position = flagged[0]
        whole = tree.row_text(position, 100_000).plain.rstrip()
        cut_rows = 0
        for width in range(20, 80):
            row = tree.row_text(position, width).plain
            assert rich.cells.cell_len(row) == width
            indicators = sum(0x1F1E6 <= ord(char) <= 0x1F1FF for char in row)
            assert indicators % 2 == 0, (width, row)
            if "…" in row:
                cut_rows += 1
                upto = row[: row.index("…") + 1]  # the row's left part, cut
                cells = rich.cells.cell_len(upto)
                assert cut_cells(whole, cells)[:-1].rstrip(" ") == upto[:-1].rstrip(" "), width
        assert cut_rows > 40


async def test_rows_take_the_new_theme_at_once() -> None:
    """A theme switched from the command palette redraws the rows in its colours (the rows'
    strips are cached, and the cache would keep the old theme's)."""
    from tests.ui.app_helpers import TREE_COMPACTED

    app = make_app(TREE_COMPACTED)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        tree = app.query_one(SessionTree)

        def row_styles() -> set[str]:
            return {str(segment.style) for segment in tree.render_line(0)}

        before = row_styles()
        app.theme = "textual-light" if app.theme != "textual-light" else "nord"
        await settle(pilot)
        assert row_styles() != before


async def test_a_narrower_terminal_remeasures_the_rows_and_the_scroll_range(
    tmp_path: Path,
) -> None:
    """The terminal narrows: the tree's scrollable size is its new width by its rows, its
    scroll range follows, and the cursor row stays in view."""
    from textual.geometry import Size

    from tests.session.test_preview import big_session

    app = make_app(big_session(tmp_path / "s.jsonl", 300))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        tree = app.query_one(SessionTree)
        wide = tree.size.width
        await pilot.resize_terminal(100, 30)
        await settle(pilot)
        assert tree.size.width < wide
        assert tree.virtual_size == Size(tree.size.width, len(tree.rows))
        assert tree.max_scroll_y == len(tree.rows) - tree.size.height
        top = int(tree.scroll_y)
        assert top <= tree.cursor < top + tree.size.height
