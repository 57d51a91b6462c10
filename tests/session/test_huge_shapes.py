"""Huge shapes stay within memory: a deep parent chain is printed and walked as a stream.

A 200,000-deep chain (``benchmarks/gen_huge.py chain-200k``) must fit in half the file size
+ 150 MB; these tests check the mechanisms on a chain small enough for CI: the commands write
their rows as they make them (no single write holds the whole output), and walking the
context of a lazily read session holds neither its items nor their records.
"""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from tui_compactor.cli import main
from tui_compactor.session.reader import load_session

CHAIN = 20_000
HEADER = {"type": "session", "version": 3, "id": "0199a3b0-huge-7000-8000-000000000001",
          "timestamp": "2025-11-03T09:00:00.000Z", "cwd": "/home/dev/project"}  # fmt: skip


def _write_chain(path: Path, count: int) -> Path:
    """``count`` short user/assistant messages, each the child of the one before."""
    lines = [json.dumps(HEADER)]
    parent = None
    for n in range(1, count + 1):
        entry_id = f"{n:08x}"
        role = "user" if n % 2 else "assistant"
        content = [{"type": "text", "text": f"step {n}: ok"}]
        message: dict[str, Any] = {"role": role, "content": content,
                                   "timestamp": 1762160400000 + n}  # fmt: skip
        if role == "assistant":
            message.update(api="anthropic-messages", provider="anthropic",
                           model="claude-sonnet-4-5", stopReason="stop")  # fmt: skip
        stamp = f"2025-11-03T09:{n // 60000 % 60:02d}:{n // 1000 % 60:02d}.{n % 1000:03d}Z"
        lines.append(json.dumps({"type": "message", "id": entry_id, "parentId": parent,
                                 "timestamp": stamp, "message": message}))  # fmt: skip
        parent = entry_id
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture(scope="module")
def chain(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _write_chain(tmp_path_factory.mktemp("huge") / "chain.jsonl", CHAIN)


class _Recorder:
    """A stdout that keeps only the text's total and its largest single write."""

    def __init__(self) -> None:
        self.total = 0
        self.largest = 0
        self.head = ""

    def write(self, text: str) -> int:
        self.total += len(text)
        self.largest = max(self.largest, len(text))
        if len(self.head) < 4096:
            self.head += text[:4096]
        return len(text)

    def flush(self) -> None:
        pass


@pytest.mark.parametrize(
    "command",
    [
        ["context", "--json", "--tokens", "pi"],
        ["context", "--tokens", "pi"],
        ["tree", "--json"],
        ["tree"],
    ],  # fmt: skip
)
def test_commands_stream_the_rows_of_a_deep_chain(
    chain: Path, command: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    out = _Recorder()
    monkeypatch.setattr("sys.stdout", out)
    assert main([*command, str(chain)]) == 0
    assert out.total > 500_000  # one row per entry of the chain
    assert out.largest < 1_000_000, f"{command}: one write of {out.largest} of {out.total} chars"


def test_context_json_of_a_deep_chain_is_whole(
    chain: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["context", "--json", "--tokens", "pi", str(chain)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["length"] == len(data["items"]) == CHAIN
    assert data["llmMessageCount"] == CHAIN
    assert data["contextTokens"]["localEstimate"] == sum(row["tokens"] for row in data["items"])
    assert [row["entryIndex"] for row in data["items"]] == list(range(CHAIN))
    assert list(data)[-2:] == ["items", "threshold"]


def test_walking_the_context_of_a_lazy_chain_holds_no_items_or_records(
    chain: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tui_compactor.engine.context import item_llm, item_tokens, stream_context
    from tui_compactor.engine.tokens import TokenCache, get_counter

    monkeypatch.setattr("tui_compactor.session.session.CACHE_MAX_RECORDS", 256)
    session = load_session(chain, lazy=True)
    counter = get_counter("pi")
    cache = TokenCache(session, counter)
    try:
        tracemalloc.start()
        try:
            ctx, items = stream_context(session, session.leaf)
            count = sent = 0
            for item in items:
                count += 1
                sent += len(item_llm(item))
                item_tokens(item, counter, cache)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    finally:
        session.close()
    assert count == sent == CHAIN
    # The path (8 bytes an entry), the token counts (8 bytes an entry) and the session's
    # bounded cache of re-read records may be held; not the items and their messages
    # (about 20,000 x 0.7 KB).
    assert peak < 3_000_000, f"walking {CHAIN} items held {peak / 1e6:.1f} MB"


def test_the_context_walk_holds_one_message_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``ContextWalk.items`` counts a batch in one call, but an item holds its message only
    when it is yielded: on a lazily read session with big messages a walk never keeps a
    batch of parsed messages alive (it held 512 before the first was used)."""
    from tui_compactor.engine.context import ContextItem, item_tokens, stream_context
    from tui_compactor.engine.tokens import TokenCache, get_counter
    from tui_compactor.workbench.views import WALK_BATCH, ContextWalk

    count = WALK_BATCH + 88
    path = _write_chain(tmp_path / "big.jsonl", count)
    lines = path.read_text().splitlines()
    big = "x" * 20_000
    path.write_text(
        "\n".join(lines[:1] + [line.replace(": ok", f": {big}") for line in lines[1:]]) + "\n"
    )
    monkeypatch.setattr("tui_compactor.session.session.CACHE_MAX_RECORDS", 4)
    holds = 0
    hold = ContextItem.hold

    def counted_hold(item: ContextItem) -> ContextItem:
        nonlocal holds
        holds += 1
        return hold(item)

    monkeypatch.setattr(ContextItem, "hold", counted_hold)
    counter = get_counter("pi")
    session = load_session(path, lazy=True)
    try:
        cache = TokenCache(session, counter)
        walk = ContextWalk(session, session.leaf, counter, "pi", cache)
        tokens = []
        for walked, (_item, figure) in enumerate(walk.items(), start=1):
            assert holds <= walked, f"{holds} items held by the time item {walked} is used"
            tokens.append(figure)
        assert len(tokens) == count
        # The same counts as one item at a time.
        fresh = TokenCache(session, counter)
        _ctx, items = stream_context(session, session.leaf)
        assert tokens == [item_tokens(item, counter, fresh) for item in items]
        # Walked again (every count cached): the walk itself holds a few messages at most.
        tracemalloc.start()
        try:
            for _ in ContextWalk(session, session.leaf, counter, "pi", cache).items():
                pass
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    finally:
        session.close()
    assert peak < 2_000_000, f"walking held {peak / 1e6:.1f} MB"


def test_the_gauges_walk_and_the_counts_read_records_past_the_session_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The gauge's context walk (``gauge_at``) and the counting worker's pass
    (``TokenCache.uncounted``) read every record of a context once: through the session's
    cache of parsed records, the 200k chain's ~800k reads cycled it, pushing out the records
    the app shows. They read past it, and count what reading each entry's ``data`` counts."""
    from tui_compactor.engine.context import item_tokens, stream_context
    from tui_compactor.engine.tokens import TokenCache, get_counter
    from tui_compactor.session import session as session_module
    from tui_compactor.workbench.handle import SessionHandle
    from tui_compactor.workbench.settings import Settings
    from tui_compactor.workbench.views import gauge_at

    count = 300
    path = _write_chain(tmp_path / "chain.jsonl", count)
    counter = get_counter("pi")
    eager = load_session(path)
    # What reading each entry's own record gives (an eagerly read session: no cache).
    fresh = TokenCache(eager, counter)
    _ctx, items = stream_context(eager, eager.leaf)
    expected = [item_tokens(item, counter, fresh) for item in items]
    loaded: list[int] = []
    load_record = session_module._LazyRecords.load_record

    def recorded(source: object, entry: Any) -> object:
        loaded.append(entry.index)
        return load_record(source, entry)  # type: ignore[arg-type]

    monkeypatch.setattr(session_module._LazyRecords, "load_record", recorded)
    session = load_session(path, lazy=True)
    try:
        assert session.lazy and session.leaf is not None
        shown = session.entries[5].data  # a record the app shows, in the cache
        loaded.clear()
        cache = TokenCache(session, counter)
        wanted, messages = cache.uncounted(range(count))
        assert wanted == list(range(count))
        assert messages == [message_of(eager, index) for index in range(count)]
        cache.keep_counts(wanted, counter.count_messages(messages))
        assert [cache.message_tokens(index) for index in range(count)] == [
            fresh.message_tokens(index) for index in range(count)
        ]
        walk_cache = TokenCache(session, counter)  # the walk counts what it reads too
        with SessionHandle(session).read() as snapshot:
            gauge = gauge_at(snapshot, session.leaf, Settings(), walk_cache, blocks=False)
        with SessionHandle(eager).read() as snapshot:
            walked = TokenCache(eager, counter)
            read = gauge_at(snapshot, eager.leaf, Settings(), walked, blocks=False)
        read.generation = gauge.generation  # each handle numbers its own loads
        assert gauge == read
        assert gauge.tokens > 0
        assert [walk_cache.message_tokens(i) for i in range(count)] == expected
        # Only the newest assistant turn's (the context's model, read as settings are).
        assert loaded == [session.leaf], f"{len(loaded)} records kept in the session's cache"
        assert session.entries[5].data is shown  # still cached
    finally:
        session.close()
        eager.close()


def message_of(session: Any, index: int) -> Any:
    """Entry ``index``'s message as its own ``data`` gives it."""
    from tui_compactor.engine.messages import message_from_entry

    return message_from_entry(session.entries[index].data)
