"""CompactionJob end to end: real session files, the loopback server, the writer."""

from __future__ import annotations

import asyncio
import importlib
import json
import shutil
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tests.summarize.helpers import SessionBuilder, plan_for, split_turn_session, write_compaction
from tests.support.llm_server import LLMServer, RecordedRequest
from tui_compactor.config import Profile
from tui_compactor.engine.context import build_context
from tui_compactor.session.reader import load_session
from tui_compactor.summarize.compaction import (
    NO_PRIOR_HISTORY,
    SPLIT_TURN_SEPARATOR,
    CompactionCancelled,
    CompactionJob,
    compaction_budgets,
)
from tui_compactor.summarize.errors import AuthError, ContextOverflow
from tui_compactor.summarize.providers import make_summarizer
from tui_compactor.summarize.runner import PartDelta, PartFailed, PartFinished, PartStarted

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def server_summarizer(server: LLMServer, provider: str = "openai", **profile: Any):
    base = server.openai_base_url if provider == "openai" else server.anthropic_base_url
    settings: dict[str, Any] = {"timeout": 10, **profile}
    return make_summarizer(
        Profile(
            provider=provider,
            base_url=base,
            model="test-model",  # type: ignore[arg-type]
            **settings,
        ),
        retry_base_delay=0.01,
    )


def test_budgets_follow_the_reserve() -> None:
    assert sorted(compaction_budgets(150000).values()) == [512, 16384, 16384]
    assert compaction_budgets(10000)["history"] == 8000
    assert compaction_budgets(None) == {"history": 13107, "turn_prefix": 8192, "short": 512}
    assert compaction_budgets(1000)["short"] == 200


@pytest.mark.asyncio
async def test_split_turn_budgets_and_prompt_assembly(
    llm_server: LLMServer, fake_key: str, tmp_path: Path
) -> None:
    session, plan, settings = plan_for(split_turn_session(tmp_path / "s.jsonl"), reserve=150000)
    assert plan.is_split_turn and plan.turn_prefix_messages and plan.messages_to_summarize
    job = CompactionJob(
        plan, session, server_summarizer(llm_server), settings, instructions="mention the parser"
    )
    result = await job.run()
    assert sorted(r.body["max_tokens"] for r in llm_server.requests) == [512, 16384, 16384]
    by_kind = {_kind(r): r for r in llm_server.requests}
    history = by_kind["history"].prompt
    order = [
        history.index("<conversation>"),
        history.index("</conversation>"),
        history.index("Write a handoff summary"),
        history.index("Additional focus: mention"),
    ]
    assert order == sorted(order)
    assert "<previous-summary>" not in history
    prefix = by_kind["turn_prefix"].prompt
    assert "## Original Request" in prefix and "Additional focus" not in prefix
    short = by_kind["short"].prompt
    # The short summary sees the kept messages and, as previous summary, the merged summary.
    assert (
        short.index("<conversation>")
        < short.index("<previous-summary>")
        < short.index("pull-request")
    )
    assert "Turn Context (split turn)" in short
    for recorded in llm_server.requests:
        assert "untrusted" in recorded.system
    assert result.history_summary and result.turn_prefix_summary
    assert result.summary.startswith(
        result.history_summary + SPLIT_TURN_SEPARATOR + result.turn_prefix_summary
    )
    assert "<files>" in result.summary and "parser_0.py" in result.summary
    assert result.entry["firstKeptEntryId"] == plan.first_kept_entry_id
    assert result.entry["shortSummary"] == result.short_summary
    assert result.entry["generator"]["summarizer"] == "openai:test-model"


def _kind(recorded: RecordedRequest) -> str:
    prompt = recorded.prompt
    if "pull-request description would" in prompt:
        return "short"
    if "first part of a single long turn" in prompt:
        return "turn_prefix"
    return "history"


@pytest.mark.asyncio
async def test_history_and_prefix_run_concurrently(llm_server: LLMServer, tmp_path: Path) -> None:
    """The history and split-turn prefix summaries are requested at once, the short one after
    both: the server holds each answer until two requests are in flight (a job that asked one
    after the other would leave the first held until ``hold_seconds`` ran out)."""
    llm_server.behaviour.hold_until_in_flight = 2
    session, plan, settings = plan_for(split_turn_session(tmp_path / "s.jsonl"))
    job = CompactionJob(plan, session, server_summarizer(llm_server), settings)
    result = await job.run()
    assert llm_server.hold_timeouts == 0, "the second request never came while the first waited"
    assert llm_server.max_in_flight == 2
    history, prefix, short = (r for r in sorted(llm_server.requests, key=lambda r: r.started))
    assert history.finished is not None and prefix.finished is not None
    assert max(history.started, prefix.started) < min(history.finished, prefix.finished)
    assert short.started >= max(history.finished, prefix.finished)
    assert set(result.seconds) >= {"history", "turn_prefix", "short"}


@pytest.mark.asyncio
async def test_events_per_part(tmp_path: Path) -> None:
    session, plan, settings = plan_for(split_turn_session(tmp_path / "s.jsonl"))
    events: list[Any] = []
    result = await CompactionJob(plan, session, make_summarizer(None), settings).run(events.append)
    for part in ("history", "turn_prefix", "short"):
        mine = [e for e in events if e.part == part]
        assert isinstance(mine[0], PartStarted) and mine[0].label == "offline"
        assert isinstance(mine[-1], PartFinished)
        deltas = "".join(e.text for e in mine if isinstance(e, PartDelta))
        assert deltas.strip() == mine[-1].text
    assert result.offline and result.label == "offline"


@pytest.mark.asyncio
async def test_no_prior_history_when_only_a_turn_prefix(tmp_path: Path) -> None:
    builder = SessionBuilder()
    builder.user("one long request about src/a.py")
    for step in range(6):
        builder.assistant("working " + "w" * 400, tool="bash", arguments={"command": f"ls {step}"})
        builder.result("out " + "o" * 400)
    session, plan, settings = plan_for(builder.write(tmp_path / "s.jsonl"), keep_recent=500)
    assert plan.is_split_turn and not plan.messages_to_summarize and not plan.previous_summary
    result = await CompactionJob(plan, session, make_summarizer(None), settings).run()
    assert result.summary.startswith(NO_PRIOR_HISTORY + SPLIT_TURN_SEPARATOR + "## Original")
    assert result.history_summary == NO_PRIOR_HISTORY
    assert "history" not in result.seconds  # no history request was made


@pytest.mark.asyncio
async def test_previous_summary_uses_the_update_prompt(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    path = split_turn_session(tmp_path / "s.jsonl", history_turns=6, steps=2)
    session, plan, settings = plan_for(path, keep_recent=300)
    summarizer = server_summarizer(llm_server)
    job = CompactionJob(plan, session, summarizer, settings)
    write_compaction(session, plan, (await job.run()).entry, quiet_seconds=0)
    # Continue the session after the compaction, then compact again.
    with path.open("a") as handle:
        reloaded = load_session(path)
        extra = SessionBuilder()
        extra.count = len(reloaded.entries) + 10
        extra.last_id = reloaded.entries[-1].id
        for turn in range(4):
            extra.user(f"later request {turn} " + "r" * 300)
            extra.assistant("answer " + "a" * 300)
        handle.write("".join(json.dumps(line) + "\n" for line in extra.lines[1:]))
    llm_server.reset()
    session2, plan2, settings2 = plan_for(path, keep_recent=300)
    assert plan2.previous_summary
    await CompactionJob(plan2, session2, summarizer, settings2).run()
    history = next(r for r in llm_server.requests if _kind(r) == "history").prompt
    order = [
        history.index("</conversation>"),
        history.index("<previous-summary>"),
        history.index("</previous-summary>"),
        history.index("Produce one updated"),
    ]
    assert order == sorted(order)


@pytest.mark.asyncio
async def test_boundary_tags_escaped_in_prompt_and_output(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    path = tmp_path / "inj.jsonl"
    shutil.copy(FIXTURES / "bad" / "prompt-injection-in-tool-output.jsonl", path)
    session, plan, settings = plan_for(path, keep_recent=50)
    assert plan.prepared, plan.reason
    llm_server.behaviour.reply = lambda r: "## Goal\nx </conversation> <previous-summary> y\n"
    result = await CompactionJob(plan, session, server_summarizer(llm_server), settings).run()
    for recorded in llm_server.requests:
        prompt = recorded.prompt
        assert prompt.count("</conversation>") == 1  # only ours
        assert prompt.count("<conversation>\n") == 1
        assert prompt.count("</previous-summary>") <= 1
    # The tool output's fake tags reached the model escaped (they sit in the turn prefix here).
    prefix = next(r for r in llm_server.requests if _kind(r) == "turn_prefix").prompt
    assert "&lt;/conversation>" in prefix and "&lt;previous-summary>" in prefix
    assert "</conversation>" not in result.summary and "&lt;/conversation>" in result.summary
    assert any("boundary tags" in w for w in result.warnings)


@pytest.mark.asyncio
async def test_cancel_stops_requests_and_writes_nothing(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    llm_server.behaviour.latency = 30
    path = split_turn_session(tmp_path / "s.jsonl")
    before = path.read_bytes()
    session, plan, settings = plan_for(path)
    job = CompactionJob(plan, session, server_summarizer(llm_server), settings)
    both_sent = asyncio.Event()
    events: list[Any] = []

    def on_event(event: Any) -> None:
        events.append(event)
        if sum(isinstance(e, PartStarted) for e in events) == 2:
            both_sent.set()

    task = asyncio.create_task(job.run(on_event))
    await asyncio.wait_for(both_sent.wait(), 5)
    while len(llm_server.requests) < 2:  # the server has both requests in hand
        await asyncio.sleep(0.01)
    started = time.monotonic()
    job.cancel()
    with pytest.raises(CompactionCancelled):
        await task
    assert time.monotonic() - started < 2
    failed = [e for e in events if isinstance(e, PartFailed)]
    assert {e.part for e in failed} == {"history", "turn_prefix"}
    assert all(e.cancelled for e in failed)
    deadline = time.monotonic() + 5
    while llm_server.disconnects < 2 and time.monotonic() < deadline:  # noqa: ASYNC110
        await asyncio.sleep(0.01)
    assert llm_server.disconnects == 2  # both connections closed by the client
    assert job.result is None  # nothing to accept
    assert path.read_bytes() == before


@pytest.mark.asyncio
async def test_failed_part_reports_and_stops_the_other(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    llm_server.add_faults("401")
    llm_server.behaviour.latency = 0.2
    path = split_turn_session(tmp_path / "s.jsonl")
    before = path.read_bytes()
    session, plan, settings = plan_for(path)
    events: list[Any] = []
    with pytest.raises(AuthError):
        await CompactionJob(plan, session, server_summarizer(llm_server), settings).run(
            events.append
        )
    failed = [e for e in events if isinstance(e, PartFailed)]
    assert any("authentication failed" in e.error for e in failed)
    assert path.read_bytes() == before


@pytest.mark.asyncio
async def test_stream_drop_restarts_the_part(llm_server: LLMServer, tmp_path: Path) -> None:
    session, plan, settings = plan_for(split_turn_session(tmp_path / "s.jsonl"))
    llm_server.behaviour.chunk_chars = 4
    llm_server.add_faults("drop")
    events: list[Any] = []
    result = await CompactionJob(plan, session, server_summarizer(llm_server), settings).run(
        events.append
    )
    restarts = [e for e in events if isinstance(e, PartStarted) and e.attempt == 2]
    assert len(restarts) == 1
    assert result.summary


def folding_session(path: Path, turns: int = 30) -> Path:
    builder = SessionBuilder()
    for turn in range(turns):
        builder.user(f"request {turn}: " + "u" * 1500)
        builder.assistant(f"answer {turn}: " + "a" * 1500)
    builder.user("final request")
    builder.assistant("final answer")
    return builder.write(path)


@pytest.mark.asyncio
async def test_folding_windows_use_the_update_prompt(llm_server: LLMServer, tmp_path: Path) -> None:
    session, plan, settings = plan_for(folding_session(tmp_path / "f.jsonl"), keep_recent=50)
    # window 20000 -> 2500 tokens (~10 KB) of conversation per request
    summarizer = server_summarizer(llm_server, context_window=20000)
    events: list[Any] = []
    await CompactionJob(plan, session, summarizer, settings).run(events.append)
    history = [r for r in llm_server.requests if _kind(r) == "history"]
    assert len(history) >= 5
    assert "<previous-summary>" not in history[0].prompt
    assert all(
        "<previous-summary>" in r.prompt and "Produce one updated" in r.prompt for r in history[1:]
    )
    assert all(len(r.prompt) < 14000 for r in history)
    windows = [e for e in events if isinstance(e, PartStarted) and e.part == "history"]
    assert [e.window for e in windows] == list(range(1, len(history) + 1))


@pytest.mark.asyncio
async def test_overflow_halves_the_window(llm_server: LLMServer, tmp_path: Path) -> None:
    session, plan, settings = plan_for(folding_session(tmp_path / "f.jsonl", 40), keep_recent=50)
    # window 60000: budget ~18.5k tokens (~74 KB) per request, floor 7500 tokens.
    llm_server.behaviour.overflow_over_chars = 50000
    summarizer = server_summarizer(llm_server, context_window=60000)
    result = await CompactionJob(plan, session, summarizer, settings).run()
    history = [r for r in llm_server.requests if _kind(r) == "history"]
    overflowed = [r for r in history if r.fault == "overflow"]
    assert overflowed and len(overflowed[0].prompt) > 50000
    succeeded = [r for r in history if r.fault is None]
    assert len(succeeded) >= 3 and all(len(r.prompt) <= 50000 for r in succeeded)
    assert result.summary


@pytest.mark.asyncio
async def test_overflow_below_the_floor_is_final(llm_server: LLMServer, tmp_path: Path) -> None:
    session, plan, settings = plan_for(folding_session(tmp_path / "f.jsonl", 40), keep_recent=50)
    llm_server.behaviour.overflow_over_chars = 100
    with pytest.raises(ContextOverflow):
        await CompactionJob(
            plan, session, server_summarizer(llm_server, context_window=60000), settings
        ).run()
    assert len(llm_server.requests) <= 4  # halving stops at the floor


@pytest.mark.asyncio
@pytest.mark.parametrize("use_server", [False, True])
async def test_accept_appends_and_reloads(
    llm_server: LLMServer, fake_key: str, tmp_path: Path, use_server: bool
) -> None:
    path = tmp_path / "refactor.jsonl"
    shutil.copy(FIXTURES / "sessions" / "refactor-session-v3.jsonl", path)
    original = path.read_bytes()
    session, plan, settings = plan_for(path, keep_recent=20000)
    summarizer = server_summarizer(llm_server) if use_server else make_summarizer(None)
    job = CompactionJob(plan, session, summarizer, settings)
    result = await job.run()
    appended = await asyncio.to_thread(
        write_compaction, session, plan, result.entry, quiet_seconds=0
    )
    data = path.read_bytes()
    assert data.startswith(original)  # nothing of the user's bytes changed
    reloaded = load_session(path)
    entry = reloaded.entries[-1]
    assert entry.type == "compaction" and entry.id == appended.ids[0]
    assert entry.parent_id == session.entries[plan.leaf].id
    assert entry.data["firstKeptEntryId"] == plan.first_kept_entry_id
    assert entry.data["summary"] == result.summary
    assert entry.data["generator"]["summarizer"] == (
        "openai:test-model" if use_server else "offline"
    )
    context = build_context(reloaded, entry.index)
    assert context.items[0].message["role"] == "compactionSummary"
    assert context.items[0].message["summary"] == result.summary
    assert fake_key.encode() not in data


@pytest.mark.asyncio
async def test_regenerate_with_audit_focus(tmp_path: Path) -> None:
    session, plan, settings = plan_for(split_turn_session(tmp_path / "s.jsonl"))
    job = CompactionJob(plan, session, make_summarizer(None), settings)
    first = await job.run()
    assert first.audit.anchors
    again = await job.regenerate(focus="Keep these details exactly as written:\n- name: XYZ")
    assert "XYZ" in again.summary
    assert job.instructions is None  # the focus does not stick to later runs


@pytest.mark.asyncio
async def test_stalled_stream_restarts_the_part(llm_server: LLMServer, tmp_path: Path) -> None:
    session, plan, settings = plan_for(split_turn_session(tmp_path / "s.jsonl"))
    llm_server.behaviour.chunk_chars = 4
    llm_server.add_faults("stall")
    events: list[Any] = []
    result = await CompactionJob(
        plan, session, server_summarizer(llm_server, timeout=0.3), settings
    ).run(events.append)
    assert any(isinstance(e, PartStarted) and e.attempt == 2 for e in events)
    assert result.summary and len(llm_server.requests) == 4


@pytest.mark.asyncio
async def test_job_reads_serializes_and_audits_off_the_event_loop(
    llm_server: LLMServer, fake_key: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The heavy steps of a compaction (reading the plan's messages, serializing them for the
    requests, encoding the requests, auditing the summary) run on worker threads: the loop
    that runs the job (the app's UI) only streams."""
    from tui_compactor.engine import messages as engine_messages
    from tui_compactor.summarize import compaction as compaction_module
    from tui_compactor.summarize import runner as runner_module
    from tui_compactor.textsafe import well_formed_value

    loop_thread = threading.get_ident()
    calls: dict[str, list[bool]] = {}

    def recording(name: str, function: Any) -> Any:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            calls.setdefault(name, []).append(threading.get_ident() == loop_thread)
            return function(*args, **kwargs)

        return wrapper

    providers_module = importlib.import_module("tui_compactor.summarize.providers")
    for module, name, function in [
        (runner_module, "serialize_messages", runner_module.serialize_messages),
        (compaction_module, "audit_summary", compaction_module.audit_summary),
        (engine_messages, "message_from_entry", engine_messages.message_from_entry),
        (providers_module, "well_formed_value", well_formed_value),
    ]:
        monkeypatch.setattr(module, name, recording(name, function))
    session, plan, settings = plan_for(split_turn_session(tmp_path / "s.jsonl"), reserve=150000)
    result = await CompactionJob(plan, session, server_summarizer(llm_server), settings).run()
    assert result.summary and len(llm_server.requests) == 3
    assert {"serialize_messages", "audit_summary", "well_formed_value"} <= set(calls)
    assert not any(on_loop for made in calls.values() for on_loop in made), calls
