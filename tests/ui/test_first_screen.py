"""The first screen: only what it shows is built, and the gauge does not wait for the token
table. The tabs after Details are built when first shown (key, mouse) or first handed
something to show, and then show exactly what they would have shown had they existed."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Input, Static

from tests.ui.app_helpers import (
    SIZE,
    TREE_COMPACTED,
    make_app,
    record_frames,
    scroll_to_plan_form,
    settle,
)
from tui_compactor.engine import tokens
from tui_compactor.ui import app as app_module
from tui_compactor.ui.widgets import details as details_module
from tui_compactor.ui.widgets.analysis import BreakdownView
from tui_compactor.ui.widgets.context_view import BlockList, ContextView
from tui_compactor.ui.widgets.details import EntryDetails
from tui_compactor.ui.widgets.gauge import ContextGauge
from tui_compactor.ui.widgets.plan_view import PlanView
from tui_compactor.ui.widgets.summary_diff import SummaryDiff
from tui_compactor.ui.widgets.tabs import TabStrip
from tui_compactor.ui.widgets.tree import SessionTree

pytestmark = pytest.mark.asyncio


def _screen_text(app: Any) -> str:
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


async def test_only_the_details_tab_is_built_at_start_and_each_tab_builds_on_first_key() -> None:
    app = make_app(TREE_COMPACTED)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        for view in (ContextView, PlanView, SummaryDiff, BreakdownView):
            assert not app.query(view), f"{view.__name__} built before it was shown"
        assert not app.query("#compaction-host")
        assert not app.query("#hindsight")  # built with the first compaction node shown

        await pilot.press("2")
        await settle(pilot)
        context = app.query_one(ContextView)
        assert app.gauge_data is not None
        assert context.shown is app.gauge_data  # the context measured before the tab existed
        assert app.query_one(BlockList).blocks == app.gauge_data.blocks

        await pilot.press("3")
        await settle(pilot)
        assert "press c for the compaction plan" in str(app.query_one("#plan-text").render())

        await pilot.press("6")
        await settle(pilot)
        assert app.query_one(BreakdownView).shown_leaf == app.selected_entry

        await pilot.press("5")
        await settle(pilot)
        assert "then r runs the compaction here" in _screen_text(app)

        await pilot.press("4")
        await settle(pilot)
        assert app.query_one(SummaryDiff).display
        assert "select a compaction node" in _screen_text(app)


async def test_a_tab_opened_by_mouse_is_built_and_shown() -> None:
    app = make_app(TREE_COMPACTED)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        strip = app.query_one(TabStrip)
        await pilot.click(TabStrip, offset=(strip.column_of("tab-breakdown") or 0, 0))
        await settle(pilot)
        assert app.query_one(BreakdownView).shown_leaf == app.selected_entry
        assert "What fills the window at" in _screen_text(app)
        await pilot.click(TabStrip, offset=(strip.column_of("tab-context") or 0, 1))
        await settle(pilot)
        assert app.query_one(ContextView).shown is app.gauge_data


async def test_what_is_asked_of_a_tab_before_it_is_built_happens_in_order() -> None:
    """``c`` as the very first key: the settings, "planning…" and the plan reach the Plan tab
    that is built meanwhile, in that order (the plan, not "planning…", is what stays)."""
    app = make_app(TREE_COMPACTED)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert not app.query(PlanView)
        await pilot.press("c")
        await settle(pilot)
        assert app.plan is not None
        assert "Plan for leaf" in str(app.query_one("#plan-text", Static).render())
        await scroll_to_plan_form(pilot)
        # Building the form is not an edit: no setting became the app's, nothing re-planned.
        assert app.settings.source_of("summary_reasoning_effort") == "default"
        keep = app.query_one("#plan-keep", Input).value
        assert (
            keep and int(keep.replace(",", "").replace("_", "")) == app.settings.keep_recent_tokens
        )


async def test_the_first_gauge_is_drawn_before_the_token_table_loads_then_measured(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A cl100k counter whose table is still loading: the gauge shows a chars/4 frame, said
    as such, and the app's measured gauge (and the tree's counts) come with the table."""
    release = threading.Event()
    counter = tokens.Cl100kCounter(preload=False)
    load = counter._load

    def held_load() -> Any:
        release.wait(20)
        return load()

    monkeypatch.setattr(counter, "_load", held_load)
    monkeypatch.setitem(tokens._COUNTERS, "cl100k", counter)
    app = make_app(TREE_COMPACTED)
    assert app.settings.tokens == "cl100k"
    async with app.run_test(size=SIZE) as pilot:
        gauge = app.query_one(ContextGauge)
        for _ in range(500):
            await asyncio.sleep(0.01)
            if gauge.data is not None:
                break
        await pilot.pause()
        assert gauge.data is not None and gauge.provisional
        assert app.gauge_data is None  # nothing measured with the chosen counter yet
        assert "≈ chars/4" in _screen_text(app)
        release.set()
        await settle(pilot)
        assert not gauge.provisional and app.gauge_data is not None
        assert gauge.data is app.gauge_data
        assert "≈ chars/4" not in _screen_text(app)
        assert counter.loaded
        assert app.query_one("#tree").token_counts  # type: ignore[attr-defined]


async def test_a_message_shown_before_markdown_loads_keeps_its_look_until_another_is_shown(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The first screen does not wait for the Markdown renderer (its imports): the leaf's text
    shows plain and stays plain while it is selected (no swap to Markdown under the reader's
    eyes, not even when its token count arrives); the next entry shown, and the leaf shown
    again, are Markdown."""
    records = [
        {
            "type": "session",
            "version": 3,
            "id": "s",
            "timestamp": "2026-01-01T00:00:00Z",
            "cwd": "/w",
        },
        {
            "type": "message",
            "id": "u1",
            "parentId": None,
            "timestamp": "2026-01-01T00:00:01Z",
            "message": {"role": "user", "content": "hello", "timestamp": 1},
        },
        {
            "type": "message",
            "id": "a1",
            "parentId": "u1",
            "timestamp": "2026-01-01T00:00:02Z",
            "message": {
                "role": "assistant",
                "stopReason": "stop",
                "timestamp": 2,
                "content": [{"type": "text", "text": "the **plan** works"}],
            },
        },
    ]
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    monkeypatch.setattr(details_module, "_markdown_class", None)  # not loaded yet
    release = threading.Event()

    def held_load() -> None:
        release.wait(20)
        details_module.load_markdown()

    monkeypatch.setattr(app_module, "load_markdown", held_load)
    app = make_app(path)
    async with app.run_test(size=SIZE) as pilot:
        details = app.query_one(EntryDetails)
        tree = app.query_one(SessionTree)
        for _ in range(1000):  # the first screen, then the leaf's count (details drawn again)
            await asyncio.sleep(0.01)
            if app.gauge_data is not None and 1 in tree.token_counts:
                break
        await pilot.pause()
        assert details.shown_entry == app.selected_entry == 1
        assert details.shown_plain and "the plan works" not in _screen_text(app)
        first_look = _screen_text(app)
        release.set()
        await settle(pilot)
        assert details_module.markdown_loaded()
        app._show_details(1)  # drawn again (a count, the indexed file): the same look
        await settle(pilot)
        assert details.shown_entry == 1 and details.shown_plain
        assert _screen_text(app) == first_look
        await pilot.press("up")  # another entry: Markdown from now on
        await settle(pilot)
        assert details.shown_entry == 0 and not details.shown_plain
        await pilot.press("down")
        await settle(pilot)
        assert details.shown_entry == 1 and not details.shown_plain
        assert "the plan works" in _screen_text(app)  # the details (the tree row: "**plan**")


async def test_the_first_frame_shows_a_small_file_whole() -> None:
    """A small file is indexed before the first frame: that frame already shows its rows (the
    leaf marked), the leaf's details and its gauge, not an empty window drawn first."""
    app = make_app(TREE_COMPACTED)
    frames = record_frames(app)
    async with app.run_test(size=SIZE) as pilot:
        for _ in range(500):
            if frames:
                break
            await asyncio.sleep(0.01)
        first = frames[0]
        assert "◆ leaf" in first and "compact at" in first, first
        session = app.session
        assert session is not None and session.complete and not session.preview
        leaf = session.entries[session.leaf]
        assert f"#{leaf.index}  line {leaf.line}" in first  # the details' header
        await settle(pilot)
        assert app.gauge_data is not None and app.gauge_data.entry_index == session.leaf
        await pilot.press("k")  # the keys work as ever
        await settle(pilot)
        assert app.query_one(EntryDetails).shown_entry == app.selected_entry != session.leaf


async def test_the_first_screen_draws_the_leafs_details_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The leaf's details are drawn for the first frame; the tree's ``Highlighted`` for the
    leaf, arriving after that frame, does not draw the same thing again (it did: 5 ms of the
    UI thread on the 100k session's leaf while its first screen was being drawn). What does
    change (its token count, another entry) is drawn."""
    shown: list[tuple[Any, ...]] = []
    real = EntryDetails.show_entry

    def noted(self: EntryDetails, entry: Any, tokens: Any, label: Any, **kwargs: Any) -> None:
        shown.append((entry.index, entry.id, tokens, label, kwargs))
        real(self, entry, tokens, label, **kwargs)

    monkeypatch.setattr(EntryDetails, "show_entry", noted)
    app = make_app(TREE_COMPACTED)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        session = app.session
        assert session is not None and shown and shown[0][0] == session.leaf
        assert all(one != after for one, after in zip(shown, shown[1:], strict=False)), shown
        details = app.query_one(EntryDetails)
        assert details.shown_entry == session.leaf
        before = len(shown)
        await pilot.press("k", "j")  # away and back: drawn again, from its top
        await settle(pilot)
        assert [one[0] for one in shown[before:]][-1] == session.leaf
        assert details.shown_entry == session.leaf


def _styles_of(app: Any) -> dict[str, Any]:
    """Every widget's resolved rules and component styles on the main screen, by DOM path."""
    found = {}
    for number, node in enumerate(app.screen.walk_children(with_self=True)):
        key = f"{number} {type(node).__name__}#{node.id}"
        components = {name: styles.get_rules() for name, styles in node._component_styles.items()}
        found[key] = (node.styles.base.get_rules(), components, node.rich_style)
    return found


@pytest.mark.parametrize("size", [SIZE, (80, 24), (200, 60)])
async def test_the_first_screen_is_styled_as_a_full_restyle_would_style_it(
    size: tuple[int, int],
) -> None:
    """The main screen skips Textual's restyle of every widget at its first showing (it was
    styled as it was mounted, size classes included): nothing may differ from a full one."""
    app = make_app(TREE_COMPACTED)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        shown = _styles_of(app)
        app.stylesheet.update(app.screen)
        await pilot.pause()
        assert _styles_of(app) == shown
        assert app.screen.has_class("-wide") == (size[0] >= 160)
        assert app.screen.has_class("-short") == (size[1] < 30)


async def test_the_first_screen_waits_for_the_frame_that_shows_the_gauge(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What starts once the first screen is up (token counting, the collector, a preview's
    index) waits until a frame with the gauge's content was written to the terminal, even when
    the gauge's change reaches the screen late: Textual does not promise in which order a
    widget's refresh and the app's after-refresh callbacks are handled."""
    from tui_compactor.ui.widgets.gauge import ContextGauge

    def late_show(
        self: ContextGauge, data: Any, message: str = "", *, provisional: bool = False
    ) -> None:
        self.data, self.message_text, self.provisional = data, message, provisional
        self.set_timer(0.3, self.refresh)  # idle, laid out and drawn well after the others

    monkeypatch.setattr(ContextGauge, "show", late_show)
    app = make_app(TREE_COMPACTED)
    frames = record_frames(app)
    frames_at_release: list[int] = []
    release = app._first_screen_drawn

    def first_screen_drawn() -> None:
        frames_at_release.append(len(frames))
        release()

    app._first_screen_drawn = first_screen_drawn  # type: ignore[method-assign]
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        for _ in range(200):
            if frames_at_release:
                break
            await asyncio.sleep(0.01)
        assert frames_at_release, "the first screen was never marked drawn"
        before = frames[: frames_at_release[0]]
        assert any("compact at" in frame for frame in before), "released before the gauge"
        assert app.state.first_screen.is_set()


FIRST_SCREEN_MODULES = r"""
import asyncio, json, sys
from pathlib import Path
from tui_compactor.ui.app import CompactorApp

async def main() -> None:
    app = CompactorApp(Path(sys.argv[1]), follow=False)
    loaded: list[str] = []
    drawn = app._first_screen_drawn

    def first_screen_drawn() -> None:
        loaded.extend(sys.modules)
        drawn()

    app._first_screen_drawn = first_screen_drawn
    async with app.run_test(size=(120, 40)):
        for _ in range(2000):
            if loaded:
                break
            await asyncio.sleep(0.01)
    print("MODULES", json.dumps(loaded))

asyncio.run(main())
"""


async def test_the_first_screen_imports_no_view_it_does_not_show() -> None:
    """The modules of the tabs after Details, the hindsight audit and the file writer are not
    imported before the first screen is drawn (a fresh process: nothing imported them)."""
    import subprocess
    import sys

    result = subprocess.run(
        [sys.executable, "-c", FIRST_SCREEN_MODULES, str(TREE_COMPACTED)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=Path(__file__).resolve().parents[2],
    )
    line = next((x for x in result.stdout.splitlines() if x.startswith("MODULES ")), None)
    assert line is not None, result.stderr[-2000:]
    loaded = set(json.loads(line.removeprefix("MODULES ")))
    assert "tui_compactor.ui.widgets.tree" in loaded  # the probe saw the first screen's own
    early = loaded & set(app_module.LATER_MODULES)
    assert not early, f"imported before the first screen: {sorted(early)}"
