"""Every oh-my-pi compaction method read and shown: tree rows, details pane, context view.

The session is oh-my-pi's own (``omp-methods.jsonl``, written through its ``SessionManager``):
one compaction of every method in a row. A copy with a ``warning`` stamped on the soft
compaction and a shaken tool result (as oh-my-pi's progress guard and ``/shake`` leave them)
covers the two fields oh-my-pi only writes by rewriting the file.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rich.console import Console, Group

from tests.ui.app_helpers import ROOT, SIZE, make_app, scroll_to_plan_form, settle
from tui_compactor.session.reader import load_session
from tui_compactor.ui.widgets.context_view import BlockList, ContextView
from tui_compactor.ui.widgets.details import EntryDetails, entry_renderable
from tui_compactor.ui.widgets.tree import SessionTree
from tui_compactor.workbench.preview import entry_preview

OMP_METHODS = ROOT / "tests" / "fixtures" / "oracle-omp" / "sessions" / "omp-methods.jsonl"
SOFT, HANDOFF, SNAPCOMPACT, REMOTE, EXTENSION = 41, 74, 107, 157, 182
"""Entry indices of the five compactions (oh-my-pi's golden numbers them the same)."""
WARNING = (
    "Compaction freed too little context to make progress — pausing automatic maintenance to "
    "avoid a compaction loop."
)
SHAKEN_INDEX = 44  # the read result after the soft compaction
PLACEHOLDER = "[shaken ~812 tokens — recover: artifact://7 (region 1)]"


def rendered(entry: object, rules: str = "omp") -> str:
    """The details pane of ``entry`` (under ``rules``) as plain text, wide enough to keep lines
    whole."""
    console = Console(width=400, record=True, color_system=None)
    console.print(Group(entry_renderable(entry, None, None, rules=rules)))
    return console.export_text()


def with_warning_and_shake(directory: Path) -> Path:
    """omp-methods with a dead-end warning on the soft compaction and one shaken result."""
    shaken_id = load_session(OMP_METHODS).entries[SHAKEN_INDEX].id
    records = [json.loads(line) for line in OMP_METHODS.read_text(encoding="utf-8").splitlines()]
    for record in records:
        if record.get("type") == "compaction" and record.get("method") == "soft":
            record["warning"] = WARNING
        if record.get("id") == shaken_id:
            assert record["message"]["role"] == "toolResult"
            record["message"]["content"] = [{"type": "text", "text": PLACEHOLDER}]
            record["message"]["prunedAt"] = 1770373000000
    target = directory / "omp-methods-shaken.jsonl"
    target.write_text(
        "\n".join(json.dumps(r, ensure_ascii=False) for r in records) + "\n", encoding="utf-8"
    )
    return target


def test_rows_show_method_and_short_summary_not_the_summary() -> None:
    session = load_session(OMP_METHODS)
    rows = {
        index: entry_preview(session.entries[index], "omp")
        for index in (SOFT, HANDOFF, SNAPCOMPACT, REMOTE, EXTENSION)
    }
    assert rows[SOFT].startswith("soft · 7,329 tokens before · I continued the work shown")
    assert "Fake summary" not in rows[SOFT]  # the divider text, not the summary
    # A handoff has no shortSummary: the document itself is the row text.
    assert rows[HANDOFF].startswith("handoff · 8,868 tokens before · ## Goal")
    assert rows[SNAPCOMPACT].startswith("snapcompact · 7,960 tokens before · Archived 9,294")
    assert rows[REMOTE] == "remote · 12,027 tokens before · Remote compaction"
    assert rows[EXTENSION].startswith("extension · 4,996 tokens before · I continued")


def test_details_say_what_each_method_is_and_which_are_read_only() -> None:
    session = load_session(OMP_METHODS)
    soft = rendered(session.entries[SOFT])
    assert "method soft — LLM summary" in soft
    assert "divider text (shortSummary, never sent to the model)" in soft
    assert "read-only" not in soft
    assert "7,329 tokens before · 2,087 after" in soft

    handoff = rendered(session.entries[HANDOFF])
    assert "method handoff" in handoff and "handoff wrapper" in handoff
    assert "shortSummary" not in handoff

    snap = rendered(session.entries[SNAPCOMPACT])
    assert "read-only here" in snap and "vision model" in snap
    assert "0 image frame(s) (~0 tokens, 5,024 per frame) · 9,294 characters archived" in snap
    assert "text head (9,294 characters)" in snap
    assert "[Summary of earlier history]" in snap  # the archived text itself is shown

    remote = rendered(session.entries[REMOTE])
    assert "read-only here" in remote and "opaque payload" in remote
    assert "placeholder summary (what the file holds)" in remote
    assert "provider openai: instead of the kept messages, 4 replacement item(s)" in remote
    assert "message/user: On GPT 1:" in remote
    assert "compaction: encrypted provider state" in remote

    extension = rendered(session.entries[EXTENSION])
    assert "method extension — summary written by an extension" in extension


def test_warning_and_shaken_result_are_shown(tmp_path: Path) -> None:
    session = load_session(with_warning_and_shake(tmp_path))
    soft_row = entry_preview(session.entries[SOFT], "omp")
    assert soft_row.startswith("soft · ⚠ Compaction freed too little context to make progress")
    assert "I continued the work shown" in soft_row  # the divider text still follows
    details = rendered(session.entries[SOFT])
    assert details.lstrip().split("\n")[3].startswith("⚠ warning: Compaction freed too little")
    shaken_row = entry_preview(session.entries[SHAKEN_INDEX], "omp")
    assert shaken_row == f"read shaken: {PLACEHOLDER}"
    shaken = rendered(session.entries[SHAKEN_INDEX])
    assert "the model receives the placeholder, not the original" in shaken
    assert PLACEHOLDER in shaken


@pytest.mark.asyncio
async def test_app_tree_details_and_context_view_on_the_methods_session(tmp_path: Path) -> None:
    path = with_warning_and_shake(tmp_path)
    app = make_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        tree = app.query_one(SessionTree)
        position = next(i for i, row in enumerate(tree.rows) if row.index == REMOTE)
        assert (
            "remote · 12,027 tokens before · Remote compaction"
            in tree.row_text(position, 200).plain
        )
        soft_position = next(i for i, row in enumerate(tree.rows) if row.index == SOFT)
        assert "⚠ Compaction freed" in tree.row_text(soft_position, 200).plain
        # The entry right after the remote compaction: details and context view.
        assert tree.move_to_entry(REMOTE + 1)
        await settle(pilot)
        assert app.query_one(EntryDetails).shown_entry == REMOTE + 1
        assert app.gauge_data is not None and app.gauge_data.entry_index == REMOTE + 1
        assert app.gauge_data.blocks is None  # listed only for the Context tab
        await pilot.press("2")  # the context tab: its blocks are listed now
        await settle(pilot)
        assert app.query_one(ContextView).is_on_screen
        assert app.gauge_data is not None and app.gauge_data.entry_index == REMOTE + 1
        blocks = app.gauge_data.blocks
        assert blocks is not None and app.query_one(BlockList).blocks is blocks
        labels = [label for label, _, _, _ in blocks]
        assert labels[0] == "summary:remote"
        assert blocks[0][1].startswith("[4 provider item(s) replace the kept history for openai]")
        # After the soft compaction with its dead-end warning, the summary block says so.
        assert tree.move_to_entry(SOFT + 1)
        await settle(pilot)
        blocks = app.gauge_data.blocks
        assert blocks is not None and blocks[0][0] == "summary ⚠"
        assert "summary ⚠" in app.query_one(BlockList).render_line(1).text


@pytest.mark.asyncio
async def test_app_writes_a_handoff_with_the_focus_typed_in_the_plan_pane(
    tmp_path: Path,
) -> None:
    from textual.widgets import Checkbox, Input, Select

    from tests.ui.app_helpers import added_records, copy_fixture
    from tui_compactor.config import Config
    from tui_compactor.ui.widgets.compaction import CompactionPanel

    path = copy_fixture(OMP_METHODS, tmp_path)
    before = path.read_bytes()
    config = Config.model_validate({"compaction": {"rules": "omp", "keep_recent_tokens": 500}})
    app = make_app(path, config=config, append_quiet_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        tree = app.query_one(SessionTree)
        target = next(i for i in range(SNAPCOMPACT + 20, REMOTE) if i in tree.row_of_entry)
        assert tree.move_to_entry(target)
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        assert app.plan is not None and app.plan.prepared
        await scroll_to_plan_form(pilot)
        app.query_one("#plan-method", Select).value = "handoff"
        focus = app.query_one("#plan-focus", Input)
        focus.focus()
        await pilot.press(*"keep the cache rework")
        app.query_one("#plan-replace", Checkbox).value = False
        await settle(pilot)
        assert app.compaction_options == ("handoff", "keep the cache rework", False)
        tree.focus()
        await pilot.press("r")
        await settle(pilot)
        panel = app.query_one(CompactionPanel)
        assert panel.state == "ready"
        job = panel.jobs[0]
        assert job.method == "handoff" and job.instructions == "keep the cache rework"
        await pilot.press("a")
        await settle(pilot)
        # Planned above the file's leaf: the later entries would leave the active path, so
        # the app asks first (the user chose this node: yes).
        assert path.read_bytes() == before
        await pilot.press("y")
        await settle(pilot)
    records = added_records(before, path.read_bytes())
    assert len(records) == 1 and records[0]["method"] == "handoff"
    assert "shortSummary" not in records[0]


@pytest.mark.asyncio
async def test_app_previews_a_shake_and_never_writes_it(tmp_path: Path) -> None:
    from textual.widgets import Select

    from tests.ui.app_helpers import TREE_COMPACTED, copy_fixture
    from tui_compactor.engine.shake import shake_preview
    from tui_compactor.ui.widgets.shake_view import ShakeView

    path = copy_fixture(TREE_COMPACTED, tmp_path)  # oh-my-pi's aggressive shake elides 9
    before = path.read_bytes()
    app = make_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        await scroll_to_plan_form(pilot)
        app.query_one("#plan-method", Select).value = "shake"
        await settle(pilot)
        app.query_one(SessionTree).focus()
        await pilot.press("r")
        await settle(pilot)
        view = app.query_one(ShakeView)
        leaf = app.session.leaf
        expected = shake_preview(app.session, leaf, "aggressive", app.settings.counter())
        shown = {preview.config.name: preview for preview in view.previews}
        assert set(shown) == {"default", "aggressive", "rescue"}
        assert [(r.entry_index, r.tokens) for r in shown["aggressive"].regions] == [
            (r.entry_index, r.tokens) for r in expected.regions
        ]
        assert expected.regions, "the fixture has something to shake"
        text = "\n".join(strip.text for strip in app.screen._compositor.render_strips())
        assert "cannot be written: oh-my-pi saves a shake by rewriting" in text
        assert "the whole session file" in text
        assert "[shaken ~" in text
        from tui_compactor.engine.shake import context_after_shake

        size = context_after_shake(app.session, leaf, expected, app.settings.counter())
        assert view.sizes[[p.config.name for p in view.previews].index("aggressive")] == size
        assert size[1] < size[0]  # the model would see less after it
        assert app.compaction_panel is None  # nothing to accept
    assert path.read_bytes() == before
