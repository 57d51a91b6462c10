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
        self.messages = 0

    def count_text(self, text: str) -> int:
        self.calls += 1
        self.counted += 1
        return self.inner.count_text(text)

    def count_message(self, message: Any) -> int:
        self.calls += 1
        self.counted += 1
        self.messages += 1
        return self.inner.count_message(message)

    def count_texts(self, texts: Sequence[str]) -> list[int]:
        self.calls += 1
        self.counted += len(texts)
        return [self.inner.count_text(text) for text in texts]

    def count_messages(self, messages: Sequence[Any]) -> list[int]:
        self.calls += 1
        self.counted += len(messages)
        self.messages += len(messages)
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
    without a budget and with one that stops the walk part way (and then counts few beyond
    where it stops)."""
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
            # A part is cut to what the rest of the budget is expected to take: the walk
            # counts few messages beyond where it stops (it counted up to a part of 64-1024
            # entries beyond it).
            beyond = counter.counted - len(batched.selected)
            assert beyond <= len(batched.selected) // 10 + 16, (beyond, len(batched.selected))


FIXTURE_SESSIONS = sorted((Path(__file__).resolve().parents[1] / "fixtures").rglob("*.jsonl"))


def _shake_figures(previews: list[Any], sizes: list[tuple[int, int]]) -> list[Any]:
    return [
        {**preview.to_json(), "freed": preview.tokens_freed, "size": size}
        for preview, size in zip(previews, sizes, strict=True)
    ]


@pytest.mark.parametrize("path", [SAMPLE, *FIXTURE_SESSIONS], ids=lambda path: path.name)
def test_shake_previews_count_in_a_few_calls_the_same_figures(path: Path) -> None:
    """The three shake configs at the leaf (the app's shake preview): their protected tails,
    regions, savings and the context before and after each, counted together in a few calls
    of the counter (the messages' counts from the session's cache), are what each config
    counted alone, text by text with no cache, gives."""
    from tui_compactor.engine.shake import (
        SHAKE_CONFIGS,
        context_after_shake,
        contexts_after_shake,
        shake_preview,
        shake_previews,
    )

    session = load_session(path)
    leaf = session.leaf
    counter = CallCounter()
    cache = TokenCache(session, counter)  # type: ignore[arg-type]
    previews = shake_previews(session, leaf, list(SHAKE_CONFIGS), counter, cache)  # type: ignore[arg-type]
    sizes = contexts_after_shake(session, leaf, previews, counter, cache)  # type: ignore[arg-type]
    alone = Cl100kCounter(preload=False)
    expected = [shake_preview(session, leaf, name, alone) for name in SHAKE_CONFIGS]
    expected_sizes = [context_after_shake(session, leaf, one, alone) for one in expected]
    assert _shake_figures(previews, sizes) == _shake_figures(expected, expected_sizes)
    assert counter.calls <= 14, (counter.calls, counter.counted)


def test_a_shake_preview_counts_a_long_branch_in_a_few_calls_and_not_back_to_its_root(
    tmp_path: Path,
) -> None:
    """A branch of ~380 entries with no compaction: the protected tails (16k tokens at most
    from the leaf) are measured walking back from the leaf, a part at a time, and the walk
    stops there, not at the root; the regions' texts are counted in one call. Before, each
    message and text was a call of its own (thousands of requests to the counting process),
    the whole branch counted for each config twice."""
    import json

    from tui_compactor.engine.shake import SHAKE_CONFIGS, shake_preview, shake_previews

    bare = tmp_path / "no-compaction.jsonl"
    with SAMPLE.open(encoding="utf-8") as source, bare.open("w", encoding="utf-8") as target:
        for line in source:
            if json.loads(line).get("type") != "compaction":
                target.write(line)
    session = load_session(bare)
    leaf = session.leaf
    assert leaf is not None
    branch = len(session.path_to(leaf))
    assert branch > 300
    counter = CallCounter()
    previews = shake_previews(session, leaf, list(SHAKE_CONFIGS), counter)  # type: ignore[arg-type]
    assert counter.calls <= 10, (counter.calls, counter.counted)
    alone = Cl100kCounter(preload=False)
    expected = [shake_preview(session, leaf, name, alone).to_json() for name in SHAKE_CONFIGS]
    assert [preview.to_json() for preview in previews] == expected
    assert all(preview["ungatedRegionCount"] > 50 for preview in expected)
    assert 10 < counter.messages < branch // 3, (counter.messages, branch)


def test_a_shake_preview_asks_the_counting_process_a_few_requests() -> None:
    """The real counting process (the app's counter): requests counted where they are sent."""
    from tui_compactor.engine.shake import SHAKE_CONFIGS, contexts_after_shake, shake_previews
    from tui_compactor.engine.token_process import Cl100kProcessCounter

    counter = Cl100kProcessCounter(preload=False)
    sent: list[int] = []
    original = counter._request

    def traced(encoded: list[bytes]) -> list[int]:
        sent.append(len(encoded))
        return original(encoded)

    counter._request = traced  # type: ignore[method-assign]
    try:
        session = load_session(SAMPLE)
        cache = TokenCache(session, counter)
        previews = shake_previews(session, session.leaf, list(SHAKE_CONFIGS), counter, cache)
        sizes = contexts_after_shake(session, session.leaf, previews, counter, cache)
        alone = Cl100kCounter(preload=False)
        assert [p.to_json() for p in previews] == [
            p.to_json() for p in shake_previews(session, session.leaf, list(SHAKE_CONFIGS), alone)
        ]
        assert sizes == contexts_after_shake(session, session.leaf, previews, alone)
        assert sum(sent) > 1000 and len(sent) <= 16, (len(sent), sum(sent))
    finally:
        counter.close()


def test_a_counted_walk_counts_only_what_it_reaches_a_growing_part_at_a_time() -> None:
    """The walk back to a usage: nothing is counted until the walk asks, then the item asked
    for and the next ones it reaches (16, then 32, ...) in one call; the items left when it
    stops are only counted in number, never sent to the counter."""
    from tui_compactor.engine.tokens import CountedWalk

    parts: list[list[int]] = []

    def count_part(part: list[int]) -> list[int]:
        parts.append(part)
        return [item * 10 for item in part]

    walk = CountedWalk(range(1000), count_part)
    assert next(walk) == 0 and parts == []  # reached, not asked: not counted
    seen = [next(walk) for _ in range(3)]
    assert [walk.count(item) for item in seen[-1:]] == [30]
    assert parts == [list(range(3, 19))]
    asked = []
    for item in walk:
        asked.append(walk.count(item))
        if item == 40:
            break
    assert asked == [item * 10 for item in range(4, 41)]
    assert [len(part) for part in parts] == [16, 32]  # 3..18, then 19..50
    assert sum(1 for _ in walk) == 1000 - 41  # the rest: not counted
    assert [len(part) for part in parts] == [16, 32]
    parts.clear()
    stopping = CountedWalk(range(1000), count_part, lambda item: item == 10)
    for item in stopping:  # a walk back to its usage (10): nothing past it is counted
        if item == 10:
            break
        assert stopping.count(item) == item * 10
    assert parts == [list(range(10))]


def _tally(items: list[Any], counter: Any) -> Any:
    """The context's figure item by item, each message counted alone (the reference)."""
    from tui_compactor.engine.context import ContextTally

    tally = ContextTally()
    for item in items:
        tally.add(item, counter.count_message(item.message))
    return tally.result()


@pytest.mark.parametrize("rules", ["pi", "omp"])
def test_the_window_tabs_context_figure_counts_only_the_tail_after_the_usage(rules: str) -> None:
    """The context's size walked back from the leaf to its last usage (the gauge, the plan, the
    Window tab's figure): only the messages after the usage are counted, a few calls for all
    of them, and the figure is the one counting every message alone gives. Before, the walk
    counted the messages after the usage one call each (the Window tab) or every message of
    the context before the usage too (the gauge's walk); now nothing past the usage."""
    from tui_compactor.engine.context import (
        build_context,
        context_tokens_at,
        estimate_context_tokens,
    )

    session = load_session(SAMPLE)
    alone = Cl100kCounter(preload=False)
    checked = 0
    for leaf in range(40, len(session.entries), 37):
        items = build_context(session, leaf, rules=rules).items
        expected = _tally(items, alone)
        if expected.last_usage_index is None:
            continue
        trailing = len(items) - 1 - expected.last_usage_index
        counter = CallCounter()
        cache = TokenCache(session, counter)  # type: ignore[arg-type]
        ctx = build_context(session, leaf, rules=rules)
        tokens = estimate_context_tokens(ctx, counter, cache, local=False)  # type: ignore[arg-type]
        if rules == "omp":  # oh-my-pi measures every item (its figure carries the estimate)
            assert tokens.tokens == expected.tokens
            continue
        assert (tokens.tokens, tokens.usage_tokens, tokens.last_usage_index) == (
            expected.tokens,
            expected.usage_tokens,
            expected.last_usage_index,
        )
        assert counter.messages <= trailing, (leaf, counter.messages, trailing)
        assert counter.calls <= 6, (leaf, counter.calls)
        walked = CallCounter()
        at = context_tokens_at(session, leaf, walked, TokenCache(session, walked))  # type: ignore[arg-type]
        assert (at.tokens, at.last_usage_index) == (expected.tokens, expected.last_usage_index)
        assert walked.messages <= trailing, (leaf, walked.messages, trailing)
        checked += 1 if expected.last_usage_index > 100 else 0
    assert rules == "omp" or checked > 5


def test_a_shake_preview_reads_no_record_before_the_kept_part() -> None:
    """A shake never reaches before the latest compaction's kept part: the records there (the
    sample's first 550 entries) are not read, not even for the tool calls of the results it
    may shake (read from the leaf back, as far as a result's call is). Before, every
    assistant turn of the branch was read for its calls (25k records on the 100k session)."""
    from tests.engine.test_context_walk import WatchedEntry
    from tui_compactor.engine.shake import SHAKE_CONFIGS, shake_preview, shake_previews

    session = load_session(SAMPLE)
    leaf = session.leaf
    assert leaf is not None
    counter = Cl100kCounter(preload=False)
    expected = [shake_preview(session, leaf, name, counter).to_json() for name in SHAKE_CONFIGS]
    kept = session.index_of(expected[0]["keepBoundaryId"])
    assert kept is not None and kept > 500
    reads: set[int] = set()
    session.entries = [WatchedEntry(entry, reads) for entry in session.entries]  # type: ignore[misc]
    previews = shake_previews(session, leaf, list(SHAKE_CONFIGS), counter)
    assert [preview.to_json() for preview in previews] == expected
    assert reads and min(reads) >= kept, (min(reads), kept)


def test_the_context_tab_walked_again_asks_nothing_once_counted(
    handle: SessionHandle, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Context tab (and its gauge) at a node after a compaction, walked a second time on
    the same token cache (the next cursor move there): nothing left to count. The compaction
    summary, read from its entry under pi's rules, is the entry's count in the cache; it was
    counted again, one request of one text, at every walk. The figures are the same."""
    settings = Settings.defaults().edited("app", rules="pi", tokens="cl100k")
    counter = CallCounter()
    monkeypatch.setitem(tokens._COUNTERS, "cl100k", counter)
    cache = TokenCache(handle.session, counter)  # type: ignore[arg-type]
    with handle.read() as snapshot:
        leaf = snapshot.leaf
        assert leaf is not None

        def blocks() -> list[Any]:
            return [b[2] for b in gauge_at(snapshot, leaf, settings, cache, sent=True).blocks]

        first = blocks()
        assert counter.calls > 0
        counter.calls = counter.counted = 0
        assert blocks() == first
        assert counter.calls == 0, counter.counted
        alone = Cl100kCounter(preload=False)
        monkeypatch.setitem(tokens._COUNTERS, "cl100k", alone)
        assert [
            b[2]
            for b in gauge_at(
                snapshot, leaf, settings, TokenCache(handle.session, alone), sent=True
            ).blocks
        ] == first
