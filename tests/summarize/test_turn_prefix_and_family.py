"""A turn prefix is never silently cut; the summarizer's model family decides thinking and
Harmony escaping; oh-my-pi's branch instructions replace the prompt.

Requests go to the loopback server through the real providers.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.summarize.helpers import SessionBuilder, plan_for
from tests.support.llm_server import LLMServer
from tui_compactor.config import Profile
from tui_compactor.summarize.base import SummaryRequest
from tui_compactor.summarize.compaction import CompactionJob
from tui_compactor.summarize.family import (
    drops_thinking,
    escape_harmony_tokens,
    model_family,
    uses_harmony,
)
from tui_compactor.summarize.providers import make_summarizer
from tui_compactor.summarize.runner import PartStarted

SMALL_WINDOW = 8192
"""A summarizer window whose per-request budget (1,024 tokens) is far below the long turn."""


def summarizer(
    server: LLMServer, model: str = "test-model", window: int = 128000, provider: str = "openai"
) -> Any:
    base = server.openai_base_url if provider == "openai" else server.anthropic_base_url
    return make_summarizer(
        Profile(
            provider=provider,
            base_url=base,
            model=model,  # type: ignore[arg-type]
            context_window=window,
            timeout=10,
        ),
        retry_base_delay=0.01,
    )


def long_turn(path: Path, *, steps: int = 12, huge_output: int = 0) -> Path:
    """Two short turns, then one turn of many tool steps, each output marked ``MARK-n``."""
    builder = SessionBuilder()
    for turn in range(2):
        builder.user(f"Turn {turn}: fix src/mod_{turn}.py")
        builder.assistant(f"Done with turn {turn}.")
    builder.user("Refactor the whole tokenizer and run `make test` after every step")
    for step in range(steps):
        text = f"Step {step}. " + "y" * 600
        if huge_output and step == 0:  # assistant text is not cut like tool output is
            text = "HEAD-OF-HUGE " + "h" * huge_output + " END-OF-HUGE"
        builder.assistant(text, tool="bash", arguments={"command": f"make test STEP={step}"})
        builder.result(f"MARK-{step} " + "z" * 1200)
    builder.assistant("All steps finished.")
    return builder.write(path)


def prefix_requests(server: LLMServer) -> list[str]:
    return [r.prompt for r in server.requests if "first part of a single long turn" in r.prompt]


@pytest.mark.asyncio
async def test_long_turn_prefix_folds_in_a_small_window_and_loses_nothing(
    llm_server: LLMServer, fake_key: str, tmp_path: Path
) -> None:
    session, plan, settings = plan_for(
        long_turn(tmp_path / "s.jsonl"), keep_recent=400, reserve=8192
    )
    assert plan.is_split_turn and len(plan.turn_prefix_messages) > 10
    events: list[Any] = []
    job = CompactionJob(plan, session, summarizer(llm_server, window=SMALL_WINDOW), settings)
    result = await job.run(events.append)
    prompts = prefix_requests(llm_server)
    assert len(prompts) > 2  # folded over several requests
    # Every step of the prefix reached the summarizer, none was cut.
    sent = "".join(prompts)
    prefix_steps = [i for i in range(12) if f"MARK-{i} " in sent]
    assert prefix_steps and prefix_steps == list(range(len(prefix_steps)))
    assert "more characters truncated]" not in sent
    # Later windows merge into the running prefix summary.
    assert "<previous-summary>" not in prompts[0]
    assert all("<previous-summary>" in p and "summarized in pieces" in p for p in prompts[1:])
    windows = {e.windows for e in events if isinstance(e, PartStarted) and e.part == "turn_prefix"}
    assert max(windows) == len(prompts)
    assert not [w for w in result.warnings if "turn_prefix" in w]


@pytest.mark.asyncio
async def test_one_huge_prefix_message_keeps_its_end_and_warns(
    llm_server: LLMServer, fake_key: str, tmp_path: Path
) -> None:
    path = long_turn(tmp_path / "s.jsonl", huge_output=60_000)
    session, plan, settings = plan_for(path, keep_recent=400, reserve=8192)
    events: list[Any] = []
    job = CompactionJob(plan, session, summarizer(llm_server, window=SMALL_WINDOW), settings)
    result = await job.run(events.append)
    sent = "".join(prefix_requests(llm_server))
    assert "END-OF-HUGE" in sent and "HEAD-OF-HUGE" not in sent  # the end is kept
    notes = [e.note for e in events if isinstance(e, PartStarted) and e.note]
    assert any(n.startswith("turn_prefix:") and "only the end was sent" in n for n in notes)
    assert any("only the end was sent" in w for w in result.warnings)  # JSON carries these


def test_model_family_from_the_model_not_the_provider() -> None:
    assert model_family("anthropic/claude-sonnet-4.5") == "claude"
    assert model_family("claude-3-5-haiku-latest") == "claude"
    assert model_family("openai/gpt-oss-120b") == "openai"
    assert model_family("gpt-4o-mini") == "openai"
    assert model_family("o3-mini") == "openai"
    assert model_family("qwen2.5-coder-14b") == "other"
    assert model_family("llama-3-gpt-style") == "other"
    assert model_family(None) == "other"
    assert drops_thinking("openrouter/anthropic/claude-opus-4") and not drops_thinking("gpt-5")
    assert uses_harmony("gpt-oss-20b") and not uses_harmony("claude-sonnet-4")
    assert escape_harmony_tokens("a<|channel|>b<|message|>c<|start|>d<|end|>e<|foo|>") == (
        "a<\\|channel\\|>b<\\|message\\|>c<\\|start\\|>d<\\|end\\|>e<|foo|>"
    )


def thinking_session(path: Path) -> Path:
    builder = SessionBuilder()
    builder.user("Fix src/a.py and tell me <|channel|>analysis<|message|> what you found")
    builder._entry(
        {
            "message": {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "SECRET-THOUGHT about a.py"},
                    {"type": "text", "text": "Fixed <|end|> it."},
                ],
                "api": "openai-completions",
                "provider": "test",
                "model": "m",
                "usage": {
                    "input": 100,
                    "output": 10,
                    "cacheRead": 0,
                    "cacheWrite": 0,
                    "totalTokens": 110,
                },
                "stopReason": "stop",
                "timestamp": 0,
            }
        }
    )
    for turn in range(4):
        builder.user(f"Next {turn}: " + "n" * 800)
        builder.assistant(f"Done {turn}. " + "d" * 800)
    return builder.write(path)


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("model", "provider", "thinking_sent", "escaped"),
    [
        ("anthropic/claude-sonnet-4", "openai", False, False),  # Claude behind a gateway
        ("test-model", "anthropic", True, False),  # not Claude, even on the Messages API
        ("gpt-oss-120b", "openai", True, True),
    ],
)
@pytest.mark.asyncio
async def test_thinking_and_harmony_follow_the_model_family(
    llm_server: LLMServer,
    fake_key: str,
    tmp_path: Path,
    model: str,
    provider: str,
    thinking_sent: bool,
    escaped: bool,
) -> None:
    session, plan, settings = plan_for(thinking_session(tmp_path / "s.jsonl"), keep_recent=300)
    assert plan.prepared
    job = CompactionJob(plan, session, summarizer(llm_server, model, provider=provider), settings)
    await job.run()
    history = next(
        r
        for r in llm_server.requests
        if "<conversation>" in r.prompt and "pull-request" not in r.prompt
    )
    assert ("SECRET-THOUGHT" in history.prompt) is thinking_sent
    assert ("<|channel|>" in history.prompt) is not escaped
    assert ("<\\|channel\\|>analysis<\\|message\\|>" in history.prompt) is escaped


@pytest.mark.asyncio
async def test_omp_branch_instructions_replace_the_prompt(
    llm_server: LLMServer, fake_key: str, tmp_path: Path
) -> None:
    from tui_compactor.engine.branch import plan_navigation
    from tui_compactor.engine.tokens import get_counter
    from tui_compactor.session.reader import load_session
    from tui_compactor.summarize.branch import run_branch_summary

    path = thinking_session(tmp_path / "s.jsonl")
    session = load_session(path)
    prompts = {}
    for rules in ("pi", "omp"):
        llm_server.reset()
        nav = plan_navigation(session, session.leaf, 2, get_counter("bytes"), rules=rules)
        await run_branch_summary(nav, summarizer(llm_server), instructions="ONLY list the files")
        prompts[rules] = llm_server.requests[0].prompt
    assert "Additional focus: ONLY list the files" in prompts["pi"]
    assert prompts["omp"].endswith("</conversation>\n\nONLY list the files")


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("provider", "effort"), [("openai", "low"), ("anthropic", "high"), ("openai", "off")]
)
async def test_reasoning_effort_is_sent_per_profile(
    llm_server: LLMServer, fake_key: str, provider: str, effort: str
) -> None:
    base = llm_server.openai_base_url if provider == "openai" else llm_server.anthropic_base_url
    summarizer = make_summarizer(
        Profile(
            provider=provider,
            base_url=base,
            model="m",  # type: ignore[arg-type]
            reasoning_effort=effort,
            timeout=10,
        )
    )
    request = SummaryRequest(kind="summary", system="s", prompt="p", max_tokens=4000)
    await summarizer.complete(request)
    body: dict[str, Any] = llm_server.requests[-1].body
    if provider == "openai":
        assert body.get("reasoning_effort") == (None if effort == "off" else effort)
    else:
        assert body["thinking"] == {"type": "enabled", "budget_tokens": 16384}
        assert body["max_tokens"] == 4000 + 16384  # the summary keeps its own budget


def test_the_plan_and_json_say_a_long_prefix_is_folded_for_a_small_summarizer(
    llm_server: LLMServer,
    fake_key: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    import json

    from tui_compactor.cli import main

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    path = long_turn(tmp_path / "s.jsonl")
    status = main(
        [
            "compact",
            str(path),
            "--keep-recent",
            "400",
            "--reserve",
            "8192",
            "--tokens",
            "bytes",
            "--provider",
            "openai",
            "--base-url",
            llm_server.openai_base_url,
            "--model",
            "m",
            "--summary-window",
            str(SMALL_WINDOW),
            "--dry-run",
            "--json",
        ]
    )
    out, err = capsys.readouterr()
    assert status == 0, err
    report = json.loads(out)
    notes = report["plan"]["summarizerNotes"]
    assert any(note.startswith("turn prefix:") and "nothing is cut" in note for note in notes)
    assert "note: turn prefix:" in err
    assert len(prefix_requests(llm_server)) > 1  # and it was folded
