"""Deep side branches in a narrow pane: a row whose branch is nested deeper than the pane has
room for prints its depth as a number and keeps its kind and preview readable (at 80×24 a
nesting of 12 or more levels used to fill the tree's ~40 cells with indent and an ellipsis)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.ui.app_helpers import make_app, settle
from tui_compactor.ui.widgets.tree import MAX_VISIBLE_INDENT, SessionTree

pytestmark = pytest.mark.asyncio

LEVELS = 30


def _message(ident: str, parent: str | None, text: str) -> dict[str, object]:
    return {
        "type": "message", "id": ident, "parentId": parent,
        "timestamp": "2026-01-12T09:00:00.000Z",
        "message": {"role": "user", "content": [{"type": "text", "text": text}],
                    "timestamp": 1768208400000},
    }  # fmt: skip


def deep_session(path: Path) -> Path:
    """Off the active path, a branch nested ``LEVELS`` deep: each node's older child is a stub
    (it continues the line) and its newer child opens the next level."""
    records: list[dict[str, object]] = [
        {"type": "session", "version": 3, "id": "s1", "timestamp": "2026-01-12T09:00:00.000Z",
         "cwd": "/tmp"},
        _message("root", None, "root"),
    ]  # fmt: skip
    parent = "root"
    for level in range(LEVELS):
        records.append(_message(f"stub{level:03d}", parent, f"stub {level}"))
        records.append(_message(f"deep{level:03d}", parent, f"deep level {level} text"))
        parent = f"deep{level:03d}"
    records.append(_message("leaf", "root", "the active leaf"))
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    return path


@pytest.mark.parametrize("size", [(80, 24), (200, 60)])
async def test_a_deep_row_keeps_its_kind_and_preview_in_any_pane(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    app = make_app(deep_session(tmp_path / "deep.jsonl"))
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        tree = app.query_one(SessionTree)
        width = tree.scrollable_content_region.width
        positions = range(len(tree.rows))
        texts = [tree.row_text(position, width).plain for position in positions]
        assert max(tree.rows[position].indent for position in positions) > MAX_VISIBLE_INDENT
        entries = app.session.entries
        stubs = [p for p in positions if entries[tree.rows.index_at(p)].id.startswith("stub")]
        assert len(stubs) == LEVELS
        for position in stubs:
            assert "user stub" in texts[position], f"no kind or preview: {texts[position]!r}"
        # Deep rows say how deep they are; the indent never takes more than a third of a row.
        deep_rows = [text for text in texts if "›" in text]
        assert deep_rows
        for text in deep_rows:
            assert text.index("user") <= width // 3 + 4, text
