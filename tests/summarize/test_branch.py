"""Branch summaries and navigate(): real tree sessions, the loopback server, the writer."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.summarize.helpers import write_navigation
from tests.support.llm_server import LLMServer
from tui_compactor.config import Profile
from tui_compactor.engine.branch import plan_navigation
from tui_compactor.engine.context import build_context
from tui_compactor.engine.tokens import get_counter
from tui_compactor.session.reader import load_session
from tui_compactor.session.writer import is_leaf_marker
from tui_compactor.summarize.branch import NO_CONTENT, run_branch_summary
from tui_compactor.summarize.navigation import prepare_navigation
from tui_compactor.summarize.prompts import load_prompt
from tui_compactor.summarize.providers import make_summarizer
from tui_compactor.summarize.runner import PartFinished, PartStarted
from tui_compactor.workbench.actions import ActionRefused

TREE = (
    Path(__file__).resolve().parents[1]
    / "fixtures"
    / "oracle"
    / "sessions"
    / ("tree-branches.jsonl")
)


def tree_copy(tmp_path: Path) -> Path:
    path = tmp_path / "tree.jsonl"
    shutil.copy(TREE, path)
    return path


def server_summarizer(server: LLMServer) -> Any:
    return make_summarizer(
        Profile(
            provider="anthropic",
            base_url=server.anthropic_base_url,
            model="claude-test",
            timeout=10,
        ),
        retry_base_delay=0.01,
    )


def nav_plan(session: Any, target_id: str) -> Any:
    target = session.entry_by_id(target_id).index
    return plan_navigation(session, session.leaf, target, get_counter("bytes"))


@pytest.mark.asyncio
async def test_branch_summary_with_preamble_files_and_budget(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    session = load_session(tree_copy(tmp_path))
    plan = nav_plan(session, "2afc4f95")  # a user message on another branch
    assert plan.messages
    events: list[Any] = []
    result = await run_branch_summary(plan, server_summarizer(llm_server), on_event=events.append)
    (recorded,) = llm_server.requests
    assert recorded.body["max_tokens"] == 2048
    assert recorded.prompt.startswith("<conversation>\n")
    assert recorded.prompt.rstrip().endswith(load_prompt("branch-summary"))
    assert result.summary.startswith(load_prompt("branch-preamble") + "## Goal\nbranch reply")
    if result.read_files or result.modified_files:
        assert "<files>" in result.summary
    assert result.entry["type"] == "branch_summary"
    assert result.entry["generator"]["summarizer"] == "anthropic:claude-test"
    assert isinstance(events[0], PartStarted) and events[0].part == "branch"
    assert isinstance(events[-1], PartFinished)


@pytest.mark.asyncio
@pytest.mark.parametrize("replace", [False, True])
async def test_custom_instructions_append_or_replace(
    llm_server: LLMServer, tmp_path: Path, replace: bool
) -> None:
    session = load_session(tree_copy(tmp_path))
    await run_branch_summary(
        nav_plan(session, "2afc4f95"),
        server_summarizer(llm_server),
        instructions="list the shell commands",
        replace_instructions=replace,
    )
    prompt = llm_server.requests[0].prompt
    if replace:
        assert prompt.endswith("</conversation>\n\nlist the shell commands")
    else:
        assert prompt.endswith(
            load_prompt("branch-summary") + "\n\nAdditional focus: list the shell commands"
        )


@pytest.mark.asyncio
async def test_empty_branch_has_no_content(tmp_path: Path) -> None:
    session = load_session(tree_copy(tmp_path))
    leaf_parent = session.entries[session.leaf].parent
    plan = plan_navigation(session, leaf_parent, session.leaf, get_counter("bytes"))
    assert not plan.messages
    result = await run_branch_summary(plan, make_summarizer(None))
    assert result.summary == NO_CONTENT and result.empty


@pytest.mark.asyncio
async def test_several_branch_summaries_run_at_once(llm_server: LLMServer, tmp_path: Path) -> None:
    llm_server.behaviour.latency = 0.3
    session = load_session(tree_copy(tmp_path))
    summarizer = server_summarizer(llm_server)
    plans = [nav_plan(session, "2afc4f95"), nav_plan(session, "a1f3adbb")]
    results = await asyncio.gather(*(run_branch_summary(p, summarizer) for p in plans))
    assert llm_server.max_in_flight == 2
    assert all(r.summary.startswith(load_prompt("branch-preamble")) for r in results)


@pytest.mark.asyncio
async def test_navigate_appends_branch_summary_at_the_new_leaf(tmp_path: Path) -> None:
    path = tree_copy(tmp_path)
    original = path.read_bytes()
    session = load_session(path)
    plan = nav_plan(session, "2afc4f95")  # user message: the leaf goes to its parent
    new_leaf_id = session.entries[plan.new_leaf].id
    prepared = await prepare_navigation(plan, summarizer=make_summarizer(None))
    written = write_navigation(session, plan, prepared.record, quiet_seconds=0)
    assert path.read_bytes().startswith(original)
    reloaded = load_session(path)
    entry = reloaded.entries[-1]
    assert entry.type == "branch_summary" and entry.id == written.ids[0]
    assert entry.parent_id == new_leaf_id and entry.data["fromId"] == new_leaf_id
    assert entry.data["generator"]["summarizer"] == "offline"
    assert reloaded.leaf == entry.index
    roles = [item.message.get("role") for item in build_context(reloaded, entry.index).items]
    assert roles[-1] == "branchSummary"


@pytest.mark.asyncio
async def test_navigate_without_summary_writes_a_leaf_marker(tmp_path: Path) -> None:
    path = tree_copy(tmp_path)
    session = load_session(path)
    plan = nav_plan(session, "d1b91c71")  # an assistant message: it becomes the leaf
    prepared = await prepare_navigation(plan)
    assert prepared.summary is None and prepared.record is None
    write_navigation(session, plan, prepared.record, quiet_seconds=0)
    entry = load_session(path).entries[-1]
    assert is_leaf_marker(entry.data) and entry.parent_id == "d1b91c71"


@pytest.mark.asyncio
async def test_navigate_preview_and_noop_write_nothing(tmp_path: Path) -> None:
    path = tree_copy(tmp_path)
    original = path.read_bytes()
    session = load_session(path)
    preview = await prepare_navigation(
        nav_plan(session, "2afc4f95"), summarizer=make_summarizer(None)
    )
    assert preview.record is not None and preview.record["type"] == "branch_summary"
    still = plan_navigation(session, session.leaf, session.leaf, get_counter("bytes"))
    noop = await prepare_navigation(still, summarizer=make_summarizer(None))
    assert noop.noop and noop.record is None and noop.summary is None
    with pytest.raises(ActionRefused, match="nothing to do"):
        write_navigation(session, still, None, quiet_seconds=0)
    assert path.read_bytes() == original


@pytest.mark.asyncio
async def test_branch_overflow_retries_with_the_newest_half(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    from tests.summarize.helpers import SessionBuilder

    builder = SessionBuilder()
    root = builder.user("start")
    for turn in range(40):
        builder.user(f"branch request {turn} " + "b" * 1500)
        builder.assistant(f"branch answer {turn} " + "c" * 1500)
    builder.raw(
        {
            "type": "message",
            "parentId": root,
            "message": {
                "role": "assistant",
                "content": [{"type": "text", "text": "other side"}],
                "stopReason": "stop",
                "timestamp": 1,
            },
        }
    )
    session = load_session(builder.write(tmp_path / "big.jsonl"))
    old_leaf = session.entry_by_id(builder.lines[-2]["id"]).index
    plan = plan_navigation(session, old_leaf, session.leaf, get_counter("bytes"))
    llm_server.behaviour.overflow_over_chars = 70000
    summarizer = make_summarizer(
        Profile(
            provider="openai", base_url=llm_server.openai_base_url, model="m", context_window=60000
        )
    )
    result = await run_branch_summary(plan, summarizer)
    first, second = llm_server.requests
    assert first.fault == "overflow" and second.fault is None
    assert len(second.prompt) < 70000 < len(first.prompt)
    assert "earlier characters truncated" in second.prompt
    assert "branch answer 39" in second.prompt  # the newest text is what was kept
    assert result.summary.startswith(load_prompt("branch-preamble"))
