"""The compaction review as a user meets it: keys that do what the buttons say wherever focus is,
an honest header, buttons that go with a discarded review, reasons instead of silence, a quit
that asks while a (possibly paid) summary runs, and read-only files reviewed with Accept off.

Real parts: the bundled demo session and fixture files copied to a temp dir, the offline
summarizer and the loopback LLM server; assertions on widgets, notifications and file bytes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Button, Static

from tests.summarize.helpers import plan_for, split_turn_session
from tests.support.llm_server import LLMServer
from tests.ui.app_helpers import (
    BAD,
    ROOT,
    TREE_COMPACTED,
    copy_fixture,
    make_app,
    raised_notes,
    run_review,
    scroll_to_plan_form,
    server_app,
    settle,
)
from tui_compactor.commands.demo import copy_sample
from tui_compactor.summarize.compaction import CompactionJob
from tui_compactor.summarize.providers import make_summarizer
from tui_compactor.ui.screens.confirm import ConfirmDialog
from tui_compactor.ui.widgets.compaction import CandidateView, CompactionPanel
from tui_compactor.ui.widgets.footer import FooterItem, StateFooter
from tui_compactor.ui.widgets.tree import SessionTree

pytestmark = pytest.mark.asyncio


def notes(app: Any) -> list[str]:
    """The messages of every notification raised so far (expired ones too)."""
    return raised_notes(app)


def footer_keys(app: Any) -> dict[str, FooterItem]:
    """Footer keys that are fully on screen, by description."""
    footer = app.screen.query_one(StateFooter)
    return {item.description: item for item in footer.items if item.end <= footer.size.width}


def header(panel: CompactionPanel) -> str:
    return str(panel.query_one("#compaction-header").render())


async def test_review_keys_work_from_the_tree_and_the_footer_shows_them(tmp_path: Path) -> None:
    app = make_app(copy_fixture(TREE_COMPACTED, tmp_path), append_quiet_seconds=0)
    async with app.run_test(size=(120, 36)) as pilot:
        panel = await run_review(pilot)
        tree = app.query_one(SessionTree)
        assert app.focused is tree and panel.state == "ready"
        cursor = tree.cursor
        keys = footer_keys(app)
        assert {"Accept", "Discard", "Regenerate", "Keep missing"} <= set(keys)
        cancel = panel.query_one("#compaction-cancel", Button)
        assert not cancel.display and "Cancel" not in keys  # nothing left to cancel
        await pilot.press("g")  # regenerate, not "first row of the tree"
        await settle(pilot)
        assert panel.candidates[0].state.runs == 2
        assert tree.cursor == cursor
        missing = panel.candidates[0].state.result.audit.missing  # type: ignore[union-attr]
        await pilot.press("G")
        await settle(pilot)
        assert tree.cursor == cursor
        if missing:
            assert panel.candidates[0].state.runs == 3
        else:
            assert "the audit found nothing missing: g regenerates" in notes(app)
        await pilot.press("d")
        await settle(pilot)
        # The review closed: g is the tree's again, and the footer no longer offers Accept.
        await pilot.press("g")
        await pilot.pause()
        assert tree.cursor == 0
        assert "Accept" not in footer_keys(app)


async def test_digits_pick_candidates_wherever_focus_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = copy_fixture(TREE_COMPACTED, tmp_path)
    with LLMServer() as server:
        app = server_app(server, path, monkeypatch)
        async with app.run_test(size=(120, 36)) as pilot:
            panel = await run_review(pilot, "R")
            assert len(panel.candidates) == 2
            assert app.focused is app.query_one(SessionTree)
            await pilot.press("2")
            await pilot.pause()
            assert panel.selected == 1
            assert app.query_one("#preview").active == "tab-compaction"
            await pilot.press("1")
            await pilot.pause()
            assert panel.selected == 0
            await pilot.press("3")  # not a candidate: the tab key it always was
            await pilot.pause()
            assert app.query_one("#preview").active == "tab-plan"


async def test_header_says_split_turn_only_when_there_is_a_turn_prefix(tmp_path: Path) -> None:
    app = make_app(copy_sample(tmp_path))
    async with app.run_test(size=(140, 40)) as pilot:
        panel = await run_review(pilot)
        plan = panel.plan
        assert plan.is_split_turn and not plan.has_turn_prefix  # pi's "split" at a turn start
        assert "split turn" not in header(panel)
        assert "turn prefix" not in header(panel)
        assert "pane-turn_prefix" not in {pane.id for pane in panel.candidates[0].panes.values()}
    # A plan that really cuts a turn says so.
    session, plan, settings = plan_for(split_turn_session(tmp_path / "split.jsonl"))
    assert plan.has_turn_prefix
    split_panel = CompactionPanel([CompactionJob(plan, session, make_summarizer(None), settings)])
    assert "split turn" in str(split_panel._header_text())


async def test_discard_takes_the_buttons_away(tmp_path: Path) -> None:
    path = copy_fixture(TREE_COMPACTED, tmp_path)
    before = path.read_bytes()
    app = make_app(path, append_quiet_seconds=0)
    async with app.run_test(size=(120, 36)) as pilot:
        await run_review(pilot)
        assert app.query("#compaction-accept")
        await pilot.press("d")
        await settle(pilot)
        assert not app.query(CompactionPanel)
        assert not app.query("#compaction-accept") and not app.query("#compaction-discard")
        outcome = str(app.query_one("#compaction-outcome").render())
        assert "discarded: nothing written" in outcome
    assert path.read_bytes() == before


async def test_accept_while_streaming_says_why_and_quit_asks_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = copy_fixture(TREE_COMPACTED, tmp_path)
    before = path.read_bytes()
    with LLMServer() as server:
        server.behaviour.latency = 30.0  # the reply would take far longer than the test
        app = server_app(server, path, monkeypatch)
        async with app.run_test(size=(120, 36)) as pilot:
            panel = await run_review(pilot, wait=False)
            assert panel.running
            assert panel.query_one("#compaction-cancel", Button).display
            await pilot.press("a")
            await pilot.pause()
            assert any("still streaming" in note for note in notes(app))
            assert panel.state == "running"
            await pilot.press("q")
            await pilot.pause()
            assert isinstance(app.screen, ConfirmDialog)
            await pilot.press("n")
            await pilot.pause()
            assert not isinstance(app.screen, ConfirmDialog) and panel.running
            assert app.is_running
            await pilot.press("q")
            await pilot.pause()
            await pilot.press("y")
            await pilot.pause()
            assert app._exit
    assert path.read_bytes() == before


async def test_quit_asks_over_a_finished_review_not_yet_accepted(tmp_path: Path) -> None:
    path = copy_fixture(TREE_COMPACTED, tmp_path)
    before = path.read_bytes()
    app = make_app(path, append_quiet_seconds=0)
    async with app.run_test(size=(120, 36)) as pilot:
        panel = await run_review(pilot)
        assert panel.state == "ready" and not panel.running
        await pilot.press("q")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmDialog)
        assert "Quit without accepting" in str(app.screen.query_one("#confirm-question").render())
        await pilot.press("n")
        await pilot.pause()
        assert app.is_running and not app._exit and panel.state == "ready"
        await pilot.press("d")  # discarded: nothing left to lose
        await settle(pilot)
        await pilot.press("q")
        await pilot.pause()
        assert not isinstance(app.screen, ConfirmDialog) and app._exit
    assert path.read_bytes() == before


async def test_the_quit_question_over_a_finished_review_takes_the_a_it_names(
    tmp_path: Path,
) -> None:
    """The question says "a accepts it": `a` typed in it closes it and appends the compaction,
    and the app stays (the key did nothing, and the question stayed up)."""
    path = copy_fixture(TREE_COMPACTED, tmp_path)
    lines = path.read_bytes().count(b"\n")
    app = make_app(path, append_quiet_seconds=0)
    async with app.run_test(size=(120, 36)) as pilot:
        panel = await run_review(pilot)
        await pilot.press("q")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmDialog)
        assert "a accepts it" in str(app.screen.query_one("#confirm-question").render())
        assert app.screen.query_one("#confirm-also", Button).label.plain == "Accept a"
        await pilot.press("a")
        await settle(pilot)
        for _ in range(50):
            if path.read_bytes().count(b"\n") > lines:
                break
            await pilot.pause(0.1)
        assert not isinstance(app.screen, ConfirmDialog)
        assert app.is_running and not app._exit
        assert panel.state == "accepted"
    written = path.read_bytes().splitlines()
    assert len(written) == lines + 1 and b'"type":"compaction"' in written[-1]


async def test_the_quit_question_while_a_summary_runs_offers_no_accept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = copy_fixture(TREE_COMPACTED, tmp_path)
    before = path.read_bytes()
    with LLMServer() as server:
        server.behaviour.latency = 30.0
        app = server_app(server, path, monkeypatch)
        async with app.run_test(size=(120, 36)) as pilot:
            panel = await run_review(pilot, wait=False)
            await pilot.press("q")
            await pilot.pause()
            assert isinstance(app.screen, ConfirmDialog)
            assert not app.screen.query("#confirm-also")
            await pilot.press("a")
            await pilot.pause()
            assert isinstance(app.screen, ConfirmDialog) and panel.running
            await pilot.press("y")
            await pilot.pause()
            assert app._exit
    assert path.read_bytes() == before


async def test_a_part_with_nothing_to_summarize_says_what_the_entry_carries(
    tmp_path: Path,
) -> None:
    """oh-my-pi's rules, keep-recent 3000 on omp-tree.jsonl: the cut splits the branch's first
    turn, so there is no history to summarize (`compact --dry-run` writes "No prior history.").
    The history pane said "waiting for the summarizer…" for ever once the review was done."""
    from tui_compactor.config import Config

    omp_tree = ROOT / "tests" / "fixtures" / "oracle-omp" / "sessions" / "omp-tree.jsonl"
    path = copy_fixture(omp_tree, tmp_path)
    config = Config.model_validate({"compaction": {"rules": "omp", "keep_recent_tokens": 3000}})
    app = make_app(path, config=config, append_quiet_seconds=0)
    async with app.run_test(size=(120, 36)) as pilot:
        panel = await run_review(pilot)
        assert panel.state == "ready"
        plan = panel.jobs[0].plan
        assert plan.is_split_turn and not plan.messages_to_summarize
        view = panel.query_one(CandidateView)
        assert view.panes["history"].text == "No prior history."
        title = str(view.part_titles["history"].render())
        assert "nothing to summarize" in title, title
        assert view.panes["turn_prefix"].text.strip(), "the turn prefix was summarized"
        assert "done in" in str(view.part_titles["turn_prefix"].render())


async def test_a_handoff_review_says_it_writes_no_short_summary(tmp_path: Path) -> None:
    """The handoff method writes one document: the short-summary pane said "after the
    summaries above" (and a split turn's prefix pane "waiting for the summarizer…") for ever."""
    from textual.widgets import Select

    app = make_app(copy_fixture(TREE_COMPACTED, tmp_path), append_quiet_seconds=0)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        await scroll_to_plan_form(pilot)
        app.query_one("#plan-method", Select).value = "handoff"
        await settle(pilot)
        app.query_one(SessionTree).focus()
        panel = await run_review(pilot)
        assert panel.state == "ready" and panel.jobs[0].method == "handoff"
        view = panel.query_one(CandidateView)
        assert view.panes["history"].text.strip(), "the handoff document"
        for part in [p for p in view.panes if p != "history"]:
            assert view.panes[part].text == ""
            assert view.panes[part].placeholder == "the handoff method writes none"
            assert str(view.part_titles[part].render()).endswith(" · none")


async def test_quit_while_r_waits_for_its_plan_quits_at_once_with_nothing_sent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading

    import tui_compactor.ui.app as app_module

    path = copy_fixture(TREE_COMPACTED, tmp_path)
    release = threading.Event()
    real_plan_report = app_module.plan_report

    def slow_plan_report(*args: Any, **kwargs: Any) -> Any:
        release.wait(10)  # the plan is still being computed when q is pressed
        return real_plan_report(*args, **kwargs)

    monkeypatch.setattr(app_module, "plan_report", slow_plan_report)
    with LLMServer() as server:
        app = server_app(server, path, monkeypatch)
        try:
            async with app.run_test(size=(120, 36)) as pilot:
                await settle(pilot)
                await pilot.press("r")  # no plan yet: plans first, runs when it comes
                await pilot.pause()
                assert app.state.run_after_plan == "single"
                await pilot.press("q")
                await pilot.pause()
                assert not isinstance(app.screen, ConfirmDialog) and app._exit
        finally:
            release.set()
        assert server.requests == []


@pytest.mark.parametrize("name", ["v2-hookMessage.jsonl", "truncated-last-line.jsonl"])
async def test_read_only_file_runs_and_reviews_with_accept_disabled(
    tmp_path: Path, name: str
) -> None:
    path = copy_fixture(BAD / name, tmp_path)
    before = path.read_bytes()
    app = make_app(path, append_quiet_seconds=0)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        refusal = app.session.append_refusal
        assert refusal
        app.settings = app.settings.edited(keep_recent_tokens=10)
        panel = await run_review(pilot)
        assert panel.state == "ready" and panel.selected_result is not None
        accept = app.query_one("#compaction-accept", Button)
        assert accept.disabled
        shown = str(app.query_one("#compaction-readonly").render())
        assert "Accept is disabled" in shown and refusal[:30] in shown
        await pilot.press("a")
        await settle(pilot)
        assert any(note.startswith("read-only: ") for note in notes(app))
        assert panel.state == "ready"
    assert path.read_bytes() == before


async def test_accept_follows_the_write_gate_when_the_file_goes_after_the_review_opened(
    tmp_path: Path,
) -> None:
    """The file is deleted while a finished review waits: the one write gate now refuses it,
    so the Accept button is disabled with the reason, ``a`` is answered with that reason, and
    nothing is written (no file is made in its place); quitting asks nothing (nothing can be
    accepted)."""
    path = copy_fixture(TREE_COMPACTED, tmp_path)
    app = make_app(path, append_quiet_seconds=0)
    async with app.run_test(size=(120, 36)) as pilot:
        panel = await run_review(pilot)
        accept = app.query_one("#compaction-accept", Button)
        assert panel.state == "ready" and not accept.disabled
        path.unlink()
        app._follow_tick()
        await settle(pilot)
        assert "gone" in (app.session.append_refusal or "")
        assert accept.disabled and "gone" in str(accept.tooltip)
        shown = str(app.query_one("#compaction-readonly").render())
        assert "Accept is disabled" in shown and "gone" in shown
        await pilot.press("a")
        await settle(pilot)
        assert any(note.startswith("read-only: ") and "gone" in note for note in notes(app))
        assert panel.state == "ready"
        assert app.work_quit_would_lose() is None
    assert list(tmp_path.iterdir()) == []


async def test_review_at_80x24_fills_the_screen_and_the_footer_keeps_its_keys(
    tmp_path: Path,
) -> None:
    app = make_app(copy_sample(tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert {"Plan", "Compact", "Help", "Quit"} <= set(footer_keys(app))
        panel = await run_review(pilot)
        assert app.screen.maximized is panel
        history = panel.candidates[0].panes["history"]
        assert history.size.height >= 5 and history.size.width >= 70
        assert {"Accept", "Discard", "Regenerate", "Keep missing", "Zoom"} <= set(footer_keys(app))
        await pilot.press("z")  # the tree comes back; z again zooms in
        await pilot.pause()
        assert app.screen.maximized is None
        await pilot.press("z")
        await pilot.pause()
        assert app.screen.maximized is panel
        await pilot.press("d")
        await settle(pilot)
        assert app.screen.maximized is None
        assert "Compact" in footer_keys(app)


async def test_review_at_200x60_keeps_the_tree_and_gives_the_chart_rows_to_the_summaries(
    tmp_path: Path,
) -> None:
    app = make_app(copy_sample(tmp_path))
    async with app.run_test(size=(200, 60)) as pilot:
        await settle(pilot)
        chart = app.query_one("#chart")
        assert chart.display and chart.size.height > 0
        panel = await run_review(pilot)
        assert app.screen.maximized is None
        assert chart.size.height == 0 or not chart.region.height
        history = panel.candidates[0].panes["history"]
        assert history.size.height >= 20
        await pilot.press("d")
        await settle(pilot)
        assert chart.region.height > 0


@pytest.mark.parametrize("width", [80, 140, 200])
async def test_gauge_lines_leave_parts_out_instead_of_cutting_words(
    tmp_path: Path, width: int
) -> None:
    app = make_app(copy_sample(tmp_path))
    async with app.run_test(size=(width, 40)) as pilot:
        await settle(pilot)
        gauge = app.query_one("#gauge")
        lines = str(gauge.render()).splitlines()
        assert app.gauge_data is not None and app.gauge_data.should_compact
        assert "⚠ would compact" in lines[0]
        for line in (lines[0], lines[2]):
            assert "…" not in line
            assert len(line) <= gauge.content_region.width
        if width >= 140:
            assert "window of claude-opus-4-5" in lines[2]


async def test_reserve_input_shows_the_number_the_gauge_uses(tmp_path: Path) -> None:
    app = make_app(copy_sample(tmp_path))
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        await scroll_to_plan_form(pilot)  # the form is made when its place comes into view
        reserve = app.query_one("#plan-reserve")
        assert reserve.value == ""  # left to its default, so a window change still moves it
        assert app.gauge_data is not None and app.gauge_data.reserve is not None
        assert reserve.placeholder == str(app.gauge_data.reserve)


@pytest.mark.parametrize(("size", "zoom"), [((80, 24), ""), ((80, 24), "zz"), ((120, 36), "z")])
async def test_enter_pressed_in_a_full_screen_review_neither_cancels_nor_accepts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, size: tuple[int, int], zoom: str
) -> None:
    """The review filling the screen (at 80x24 at once, or ``z``) hides the tree, which gives
    up the focus: the ``enter`` a user presses by reflex, while it streams or once it is
    done, must not land on the Cancel or the Accept button. Out of full screen the tree has
    the focus again."""
    path = copy_fixture(TREE_COMPACTED, tmp_path)
    before = path.read_bytes()
    with LLMServer() as server:
        server.behaviour.latency = 30.0  # streaming for the whole first part of the test
        app = server_app(server, path, monkeypatch)
        async with app.run_test(size=size) as pilot:
            panel = await run_review(pilot, then=zoom, wait=False)
            await pilot.press("enter")
            await pilot.pause()
            assert panel.running and panel.is_attached, "enter cancelled the running summary"
            assert not any("cancelled" in note for note in notes(app))
            await pilot.press("escape")  # the user's own cancel
            await settle(pilot)
            server.behaviour.latency = 0.0
            await pilot.press("r", *zoom)
            await settle(pilot)
            panel = app.query_one(CompactionPanel)
            assert panel.state == "ready"
            await pilot.press("enter")
            await settle(pilot)
            assert path.read_bytes() == before, "enter appended the compaction"
            assert panel.is_attached and panel.state == "ready"
            if app.screen.maximized is panel:
                await pilot.press("z")
                await pilot.pause()
            assert isinstance(app.focused, SessionTree)
            await pilot.press("d")
            await settle(pilot)
            assert isinstance(app.focused, SessionTree)
    assert path.read_bytes() == before


async def test_an_r_waiting_for_a_plan_that_fails_never_runs_a_later_plan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``r`` asks for a plan first; if that plan fails, the app says no compaction started,
    and the next plan the user asks for (``c``) is shown, not run: nothing reaches a model
    that the user did not ask for after the failure."""
    import tui_compactor.ui.app as app_module

    path = copy_fixture(TREE_COMPACTED, tmp_path)
    real_plan_report = app_module.plan_report
    failing = [True]

    def plan_report(*args: Any, **kwargs: Any) -> Any:
        if failing[0]:
            raise RuntimeError("planning broke")
        return real_plan_report(*args, **kwargs)

    monkeypatch.setattr(app_module, "plan_report", plan_report)
    with LLMServer() as server:
        app = server_app(server, path, monkeypatch)
        async with app.run_test(size=(120, 36)) as pilot:
            await settle(pilot)
            await pilot.press("r")  # no plan yet: plans first, runs when it comes
            await settle(pilot)
            assert app.state.run_after_plan == ""
            notes = [str(note.message) for note in app._notifications]
            assert any("no compaction started" in note for note in notes), notes
            failing[0] = False
            await pilot.press("c")
            await settle(pilot)
            assert app.plan is not None and app.plan.prepared
            assert app.review_panel is None, "the later plan was run by itself"
        assert server.requests == []


async def test_the_quit_question_follows_a_run_that_ends_while_it_is_shown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``q`` while the summary streams asks "Quit while a summary is running?"; the reply
    comes while the question is shown: it then asks the finished review's question, with its
    accept (it kept saying a summary was running, and offered no accept)."""
    path = copy_fixture(TREE_COMPACTED, tmp_path)
    with LLMServer() as server:
        server.behaviour.latency = 1.5
        app = server_app(server, path, monkeypatch)
        async with app.run_test(size=(120, 36)) as pilot:
            panel = await run_review(pilot, wait=False)
            assert panel.running
            await pilot.press("q")
            await pilot.pause()
            dialog = app.screen
            assert isinstance(dialog, ConfirmDialog)
            assert str(dialog.question).startswith("Quit while a summary is running?")
            for _ in range(200):
                if not panel.running:
                    break
                await pilot.pause(0.05)
            await settle(pilot)
            assert panel.state == "ready" and app.screen is dialog
            shown = str(dialog.query_one("#confirm-question", Static).render())
            assert shown.startswith("Quit without accepting the summary?"), shown
            assert dialog.query("#confirm-also")
            await pilot.press("a")  # the finished review's accept, from the question
            await settle(pilot)
            assert panel.state == "accepted" and app.is_running
