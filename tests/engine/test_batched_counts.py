"""The views count the messages they need that are not counted yet in one call of the
counter (a counting process: one request, ~35 us a round trip), not one a message: the gauge,
the Context tab, the plan, its sweep and the Window tab on a fresh session. The counts are
the same as counting each message alone."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from tui_compactor.engine import tokens
from tui_compactor.engine.breakdown import token_breakdown
from tui_compactor.engine.deps import cut_sweep
from tui_compactor.engine.tokens import Cl100kCounter, TokenCache
from tui_compactor.session.reader import load_session
from tui_compactor.workbench.handle import SessionHandle
from tui_compactor.workbench.settings import Settings
from tui_compactor.workbench.views import gauge_at, plan_report

SAMPLE = Path(__file__).resolve().parents[2] / "tui_compactor" / "data" / "sample-session.jsonl"
"""1014 entries, two compactions: hundreds of messages after the last one."""


class CallCounter:
    """The cl100k counter, each call a request (as the counting process's): how many calls
    were made, and how many texts and messages they counted."""

    name = "cl100k"

    def __init__(self) -> None:
        self.inner = Cl100kCounter(preload=False)
        self.calls = 0
        self.counted = 0

    def count_text(self, text: str) -> int:
        self.calls += 1
        self.counted += 1
        return self.inner.count_text(text)

    def count_message(self, message: Any) -> int:
        self.calls += 1
        self.counted += 1
        return self.inner.count_message(message)

    def count_texts(self, texts: Sequence[str]) -> list[int]:
        self.calls += 1
        self.counted += len(texts)
        return [self.inner.count_text(text) for text in texts]

    def count_messages(self, messages: Sequence[Any]) -> list[int]:
        self.calls += 1
        self.counted += len(messages)
        return [self.inner.count_message(message) for message in messages]


@pytest.fixture(scope="module")
def handle() -> SessionHandle:
    return SessionHandle(load_session(SAMPLE))


@pytest.mark.parametrize("rules", ["pi", "omp"])
def test_the_views_count_a_fresh_sessions_messages_in_a_few_calls_the_same_counts(
    handle: SessionHandle, rules: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = Settings.defaults().edited("app", rules=rules, tokens="cl100k")
    one_by_one = TokenCache(handle.session, Cl100kCounter(preload=False))
    with handle.read() as snapshot:
        leaf = snapshot.leaf
        assert leaf is not None
        views = {
            "gauge": lambda cache: gauge_at(snapshot, leaf, settings, cache).tokens,
            "context": lambda cache: [
                block[2] for block in gauge_at(snapshot, leaf, settings, cache, sent=True).blocks
            ],
            "plan": lambda cache: (
                plan_report(snapshot, leaf, settings, None, cache).plan.region_tokens
            ),
            "sweep": lambda cache: [
                (row.tokens_kept, row.tokens_summarized)
                for row in cut_sweep(
                    snapshot.session, leaf, settings.compaction(), cache.counter, cache
                ).rows
            ],
            "breakdown": lambda cache: token_breakdown(
                snapshot.session, leaf, cache.counter, settings.compaction(), cache
            ).to_json(snapshot.session),
        }
        for view, measure in views.items():
            counter = CallCounter()
            monkeypatch.setitem(tokens._COUNTERS, "cl100k", counter)  # the settings' counter
            batched = measure(TokenCache(handle.session, counter))  # type: ignore[arg-type]
            monkeypatch.setitem(tokens._COUNTERS, "cl100k", one_by_one.counter)
            expected = measure(TokenCache(handle.session, one_by_one.counter))
            assert batched == expected, view
            assert counter.counted > 100, (view, counter.counted)
            assert counter.calls <= 8, (view, counter.calls, counter.counted)


def test_a_plan_on_a_session_without_usage_counts_its_context_in_a_few_calls(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without usage the context's size is every message's count (the walk back to the last
    usage never stops early): counted ahead of the walk, a few calls, the same figures."""
    import json

    bare = tmp_path / "no-usage.jsonl"
    with SAMPLE.open(encoding="utf-8") as source, bare.open("w", encoding="utf-8") as target:
        for line in source:
            record = json.loads(line)
            if isinstance(record.get("message"), dict):
                record["message"].pop("usage", None)
            target.write(json.dumps(record) + "\n")
    handle = SessionHandle(load_session(bare))
    settings = Settings.defaults().edited("app", rules="pi", tokens="cl100k")
    counter = CallCounter()
    monkeypatch.setitem(tokens._COUNTERS, "cl100k", counter)
    with handle.read() as snapshot:
        assert snapshot.leaf is not None
        cache = TokenCache(handle.session, counter)  # type: ignore[arg-type]
        plan = plan_report(snapshot, snapshot.leaf, settings, None, cache).plan
        assert plan.context_tokens is not None and plan.context_tokens.last_usage_index is None
        assert counter.counted > 100 and counter.calls <= 16, (counter.calls, counter.counted)
        monkeypatch.setitem(tokens._COUNTERS, "cl100k", Cl100kCounter(preload=False))
        alone = TokenCache(handle.session, tokens._COUNTERS["cl100k"])
        again = plan_report(snapshot, snapshot.leaf, settings, None, alone).plan
        assert (plan.tokens_before, plan.region_tokens) == (
            again.tokens_before,
            again.region_tokens,
        )


@pytest.mark.parametrize("rules", ["pi", "omp"])
def test_the_navigation_summary_walk_counts_its_messages_in_a_few_calls_the_same_figures(
    handle: SessionHandle, rules: str
) -> None:
    """Navigating to the first entry walks the whole branch (hundreds of messages and, with
    omp's rules, tool results): counted ahead in a few calls of the counter, not one a
    message; the selection (and so the summary's request) is the same as counted one by one,
    without a budget and with one that stops the walk part way."""
    from tui_compactor.engine.branch import plan_navigation

    session = handle.session
    first = 0
    for budget in (0, 50_000):
        counter = CallCounter()
        batched = plan_navigation(
            session,
            session.leaf,
            first,
            counter,  # type: ignore[arg-type]
            budget,
            rules=rules,
            cache=TokenCache(session, counter),  # type: ignore[arg-type]
        )
        alone = Cl100kCounter(preload=False)
        expected = plan_navigation(
            session,
            session.leaf,
            first,
            alone,
            budget,
            rules=rules,
            cache=TokenCache(session, alone),
        )
        assert (batched.selected, batched.total_tokens) == (
            expected.selected,
            expected.total_tokens,
        ), budget
        assert batched.file_ops.to_json() == expected.file_ops.to_json()
        if budget == 0:
            assert len(batched.selected) > 100, len(batched.selected)
            assert counter.counted > 100 and counter.calls <= 16, (counter.calls, counter.counted)
        else:
            assert 50 < len(batched.selected) < len(expected.entries)
            assert counter.calls <= 12, (counter.calls, counter.counted)
