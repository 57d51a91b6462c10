"""The compaction panel in a small host app: offline summarizer and the loopback LLM server.

Assertions are on the panel's state, its messages, what the panes show and the file's bytes;
waits are on workers and on conditions, never fixed sleeps.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import pytest
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.message import Message

from tests.summarize.helpers import plan_for, split_turn_session, write_compaction
from tests.support.llm_server import LLMServer
from tui_compactor.config import Profile
from tui_compactor.summarize.compaction import CompactionJob
from tui_compactor.summarize.providers import make_summarizer
from tui_compactor.ui.widgets.compaction import CompactionPanel

KEY_ENV = {"OPENAI_API_KEY": "sk-test-not-a-real-key"}


def _local_summarizer(server: LLMServer) -> Any:
    profile = Profile(
        name="local",
        provider="openai",
        base_url=server.openai_base_url,
        model="test-model",
        max_retries=0,
        timeout=10,
    )
    return make_summarizer(profile, environ=KEY_ENV)


class PanelHost(App[None]):
    """Mounts a CompactionPanel built by ``make_jobs`` and records the messages it posts.

    Its keys stand in for the app's review keys (``ui/review.py``), which call the panel's
    public methods: the panel binds none of its own."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("a", "panel('accept')"),
        Binding("d", "panel('discard')"),
        Binding("escape", "panel('cancel')"),
        Binding("v", "panel('toggle_diff')"),
        Binding("g", "regenerate(False)"),
        Binding("G", "regenerate(True)"),
        *(Binding(str(n), f"pick({n})") for n in range(1, 10)),
    ]

    def action_panel(self, method: str) -> None:
        getattr(self.query_one(CompactionPanel), method)()

    def action_regenerate(self, with_missing: bool) -> None:
        self.query_one(CompactionPanel).regenerate(with_missing)

    def action_pick(self, number: int) -> None:
        self.query_one(CompactionPanel).select(number)

    def __init__(self, make_jobs: Callable[[], list[CompactionJob]]) -> None:
        super().__init__()
        self.make_jobs = make_jobs
        self.messages: list[Message] = []

    def compose(self) -> ComposeResult:
        yield CompactionPanel(self.make_jobs())

    def on_mount(self) -> None:
        self.query_one(CompactionPanel).focus()

    def on_compaction_panel_accepted(self, message: CompactionPanel.Accepted) -> None:
        self.messages.append(message)

    def on_compaction_panel_discarded(self, message: CompactionPanel.Discarded) -> None:
        self.messages.append(message)

    def on_compaction_panel_failed(self, message: CompactionPanel.Failed) -> None:
        self.messages.append(message)


@pytest.fixture
def split_session(tmp_path: Path) -> Path:
    return split_turn_session(tmp_path / "split.jsonl")


def _plan(path: Path) -> tuple[Any, Any, Any]:
    session, plan, settings = plan_for(path)
    assert plan.prepared and plan.is_split_turn and plan.turn_prefix_messages
    return session, plan, settings


async def _until(pilot: Any, condition: Callable[[], bool], seconds: float = 15.0) -> None:
    """Let the app run until ``condition`` holds (bounded)."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "condition not reached in time"
        await pilot.pause(0.01)


@pytest.mark.asyncio
async def test_offline_run_streams_side_by_side_then_accept_appends_one_entry(
    split_session: Path,
) -> None:
    session, plan, settings = _plan(split_session)
    before = split_session.read_bytes()
    job = CompactionJob(plan, session, make_summarizer(None), settings)
    app = PanelHost(lambda: [job])
    async with app.run_test(size=(140, 40)) as pilot:
        panel = app.query_one(CompactionPanel)
        view = panel.candidates[0]
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert panel.state == "ready"
        history, prefix = view.panes["history"], view.panes["turn_prefix"]
        # Side by side: same row, history on the left.
        assert history.region.y == prefix.region.y and history.region.x < prefix.region.x
        result = panel.selected_result
        assert result is not None
        assert history.text == result.history_summary
        assert prefix.text == result.turn_prefix_summary
        assert view.panes["short"].text == result.short_summary
        # Deltas were buffered: far fewer redraws than deltas.
        deltas = history.append_count + prefix.append_count
        assert deltas > 3
        assert history.flush_count + prefix.flush_count < deltas
        audit = str(view.query_one(".candidate-audit").render())
        assert "anchors kept" in audit
        assert split_session.read_bytes() == before  # the panel never writes
        await pilot.press("a")
        await pilot.pause()
        (accepted,) = app.messages
        assert isinstance(accepted, CompactionPanel.Accepted)
        assert accepted.result is result and accepted.job is job
        assert panel.state == "accepted"
        await pilot.press("a")  # a second accept does nothing
        await pilot.pause()
        assert len(app.messages) == 1
    # What the app does on Accepted: propose and apply the entry. Exactly one new line.
    write_compaction(job.session, job.plan, accepted.result.entry)
    after = split_session.read_bytes()
    assert after.startswith(before) and after.count(b"\n") == before.count(b"\n") + 1
    assert b'"type":"compaction"' in after[len(before) :].replace(b" ", b"")


@pytest.mark.asyncio
async def test_discard_posts_discarded_and_writes_nothing(split_session: Path) -> None:
    session, plan, settings = _plan(split_session)
    before = split_session.read_bytes()
    app = PanelHost(lambda: [CompactionJob(plan, session, make_summarizer(None), settings)])
    async with app.run_test(size=(120, 36)) as pilot:
        panel = app.query_one(CompactionPanel)
        await app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.press("d")
        await pilot.pause()
        (message,) = app.messages
        assert isinstance(message, CompactionPanel.Discarded) and not message.cancelled
        assert panel.state == "discarded"
    assert split_session.read_bytes() == before


@pytest.mark.asyncio
async def test_escape_cancels_both_streams_from_the_local_server(
    split_session: Path, llm_server: LLMServer
) -> None:
    session, plan, settings = _plan(split_session)
    before = split_session.read_bytes()
    llm_server.behaviour.chunk_delay = 0.05
    llm_server.behaviour.chunk_chars = 4
    app = PanelHost(lambda: [CompactionJob(plan, session, _local_summarizer(llm_server), settings)])
    async with app.run_test(size=(120, 36)) as pilot:
        panel = app.query_one(CompactionPanel)
        view = panel.candidates[0]
        # Both parts stream at the same time before the user gives up.
        await _until(
            pilot,
            lambda: bool(
                view.panes["history"].visible_text.strip()
                and view.panes["turn_prefix"].visible_text.strip()
            ),
        )
        assert llm_server.max_in_flight >= 2
        await pilot.press("escape")
        await app.workers.wait_for_complete()
        await pilot.pause()
        (message,) = app.messages
        assert isinstance(message, CompactionPanel.Discarded) and message.cancelled
        assert panel.state == "cancelled" and view.state.status == "cancelled"
        await _until(pilot, lambda: llm_server.in_flight == 0)
    assert split_session.read_bytes() == before


@pytest.mark.asyncio
async def test_server_error_posts_failed_with_the_reason(
    split_session: Path, llm_server: LLMServer
) -> None:
    session, plan, settings = _plan(split_session)
    llm_server.add_faults("401", "401")
    app = PanelHost(lambda: [CompactionJob(plan, session, _local_summarizer(llm_server), settings)])
    async with app.run_test(size=(120, 36)) as pilot:
        panel = app.query_one(CompactionPanel)
        await app.workers.wait_for_complete()
        await pilot.pause()
        (message,) = app.messages
        assert isinstance(message, CompactionPanel.Failed)
        assert "401" in message.error or "key" in message.error.lower()
        assert "sk-test" not in message.error
        assert panel.state == "failed" and panel.selected_result is None
        await pilot.press("a")  # nothing to accept
        await pilot.pause()
        assert len(app.messages) == 1


@pytest.mark.asyncio
async def test_candidates_compare_then_regenerate_with_missing_anchors(
    split_session: Path, llm_server: LLMServer
) -> None:
    session, plan, settings = _plan(split_session)
    jobs = [
        CompactionJob(plan, session, make_summarizer(None), settings),
        CompactionJob(plan, session, _local_summarizer(llm_server), settings),
    ]
    app = PanelHost(lambda: jobs)
    async with app.run_test(size=(160, 44)) as pilot:
        panel = app.query_one(CompactionPanel)
        await app.workers.wait_for_complete()
        await pilot.pause()
        offline, local = panel.candidates
        assert offline.region.x < local.region.x and offline.region.y == local.region.y
        for view in (offline, local):
            assert view.state.status == "done"
            title = str(view.query_one(".candidate-title").render())
            assert "tokens" in title and "audit" in title and " s" in title
        # The extractive summary keeps more anchors than the canned server reply: it is picked.
        assert offline.state.result.audit.coverage > local.state.result.audit.coverage
        assert panel.selected == 0
        # Choose the server's candidate and regenerate it keeping what its audit found missing.
        await pilot.press("2")
        assert panel.selected == 1 and local.has_class("-selected")
        missing = local.state.result.audit.missing
        assert missing
        requests_before = len(llm_server.requests)
        await pilot.press("G")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert local.state.runs == 2 and local.state.status == "done"
        rerun_prompts = [r.prompt + r.system for r in llm_server.requests[requests_before:]]
        assert any(missing[0].text in prompt for prompt in rerun_prompts)
        await pilot.press("a")
        await pilot.pause()
        (accepted,) = app.messages
        assert isinstance(accepted, CompactionPanel.Accepted) and accepted.job is jobs[1]


@pytest.mark.asyncio
async def test_cancelling_the_worker_group_cancels_the_job(
    split_session: Path, llm_server: LLMServer
) -> None:
    """The app may cancel the "compaction" worker group itself: same outcome as escape."""
    session, plan, settings = _plan(split_session)
    llm_server.behaviour.chunk_delay = 0.05
    app = PanelHost(lambda: [CompactionJob(plan, session, _local_summarizer(llm_server), settings)])
    async with app.run_test(size=(120, 36)) as pilot:
        panel = app.query_one(CompactionPanel)
        await _until(pilot, lambda: llm_server.in_flight >= 1)
        app.workers.cancel_group(panel, "compaction")
        await _until(pilot, lambda: bool(app.messages))
        (message,) = app.messages
        assert isinstance(message, CompactionPanel.Discarded) and message.cancelled
        assert panel.state == "cancelled" and panel.jobs[0].cancelled
        await _until(pilot, lambda: llm_server.in_flight == 0)


@pytest.mark.asyncio
async def test_diff_key_shows_the_update_against_the_previous_summary(tmp_path: Path) -> None:
    """A session that was compacted before: ``v`` shows what the update changed."""
    source = Path(__file__).resolve().parents[1] / "fixtures" / "sessions"
    path = tmp_path / "compacted.jsonl"
    path.write_bytes((source / "refactor-session-v3.jsonl").read_bytes())
    session, plan, settings = plan_for(path, keep_recent=20000)
    assert plan.prepared and plan.previous_summary
    app = PanelHost(lambda: [CompactionJob(plan, session, make_summarizer(None), settings)])
    async with app.run_test(size=(120, 40)) as pilot:
        panel = app.query_one(CompactionPanel)
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert panel.state == "ready" and not panel.showing_diff
        await pilot.press("v")
        await pilot.pause()
        assert panel.showing_diff
        assert panel.query_one("#compaction-diff").display
        assert not panel.query_one("#compaction-candidates").display
        body = str(panel.query_one("#summary-diff-body").render())
        assert body.startswith("+") and "added" in body and "removed" in body
        result = panel.selected_result
        assert result is not None
        first_new_line = next(line for line in result.summary.splitlines() if line.strip())
        assert first_new_line.strip() in body
        await pilot.press("v")
        await pilot.pause()
        assert not panel.showing_diff


@pytest.mark.asyncio
async def test_a_short_panel_holds_the_audit_to_three_rows_without_restyling_the_panel(
    split_session: Path,
) -> None:
    """In a short terminal the audit gets at most three rows (the summaries come first), six
    otherwise; deciding it at the panel's first resize must not make Textual match the CSS
    again for the whole panel (~50 widgets, in the frame that shows three candidates): a short
    panel is restyled as often as a tall one."""
    session, plan, settings = _plan(split_session)
    restyles: dict[int, int] = {}
    for height, audit_rows in ((24, 3), (50, 6)):
        jobs = [CompactionJob(plan, session, make_summarizer(None), settings) for _ in range(3)]
        app = PanelHost(lambda jobs=jobs: jobs)
        restyled: list[Any] = []

        def record(
            node: Any, *args: Any, restyled: list[Any] = restyled, app: Any = app, **kwargs: Any
        ) -> None:
            restyled.append(node)
            type(app).update_styles(app, node, *args, **kwargs)

        app.update_styles = record  # type: ignore[method-assign]
        async with app.run_test(size=(140, height)) as pilot:
            panel = app.query_one(CompactionPanel)
            await app.workers.wait_for_complete()
            await pilot.pause()
            for view in panel.candidates:
                audit = view.query_one(".candidate-audit")
                assert audit.styles.max_height is not None
                assert audit.styles.max_height.value == audit_rows
                assert audit.outer_size.height <= audit_rows
            restyles[height] = sum(node is panel for node in restyled)
    assert restyles[24] == restyles[50], restyles


@pytest.mark.asyncio
async def test_the_first_frame_draws_the_candidates_titles_and_their_panes_follow(
    split_session: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The frame that first shows the panel draws each candidate's box and title, not its
    ~10 pane widgets (one layout of them all, tens of ms of UI CPU); each candidate's panes
    and audit are mounted on a later frame, and a run's events that came before are shown."""
    from textual.strip import Strip

    from tui_compactor.ui.widgets.compaction import CandidateView
    from tui_compactor.ui.widgets.stream_text import StreamText

    session, plan, settings = _plan(split_session)
    panes_at_first_draw: list[int] = []
    render_lines = CandidateView.render_lines

    def drawn(view: CandidateView, crop: Any) -> list[Strip]:
        if not panes_at_first_draw:
            panes_at_first_draw.append(len(view.screen.query(StreamText)))
        return render_lines(view, crop)

    monkeypatch.setattr(CandidateView, "render_lines", drawn)
    jobs = [CompactionJob(plan, session, make_summarizer(None), settings) for _ in range(3)]
    app = PanelHost(lambda: jobs)
    async with app.run_test(size=(140, 40)) as pilot:
        panel = app.query_one(CompactionPanel)
        await _until(pilot, lambda: bool(panes_at_first_draw))
        assert panes_at_first_draw == [0], "the panes were drawn with the first frame"
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert panel.state == "ready"
        for view in panel.candidates:
            assert view.body_mounted
            result = view.state.result
            assert result is not None
            assert view.panes["history"].text == result.history_summary
            assert view.panes["short"].text == result.short_summary
            assert set(view.query(StreamText)) == set(view.panes.values())
            assert "anchors kept" in str(view.query_one(".candidate-audit").render())


@pytest.mark.asyncio
async def test_escape_pressed_as_the_panel_opens_cancels_and_discard_removes_it_cleanly(
    split_session: Path, llm_server: LLMServer
) -> None:
    """Keys pressed before the panes are in act as usual: escape cancels the runs at once;
    the panel removed before its panes were mounted leaves no work behind."""
    session, plan, settings = _plan(split_session)
    llm_server.behaviour.chunk_delay = 0.05
    app = PanelHost(lambda: [CompactionJob(plan, session, _local_summarizer(llm_server), settings)])
    async with app.run_test(size=(120, 36)) as pilot:
        panel = app.query_one(CompactionPanel)
        await pilot.press("escape")
        await app.workers.wait_for_complete()
        await pilot.pause()
        (message,) = app.messages
        assert isinstance(message, CompactionPanel.Discarded) and message.cancelled
        assert panel.state == "cancelled"
        await _until(pilot, lambda: llm_server.in_flight == 0)

    app = PanelHost(lambda: [CompactionJob(plan, session, make_summarizer(None), settings)])
    async with app.run_test(size=(120, 36)) as pilot:
        panel = app.query_one(CompactionPanel)
        await panel.remove()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert not app.query(CompactionPanel)
