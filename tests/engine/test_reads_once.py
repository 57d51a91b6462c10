"""What the plan and the context tally read from a lazily read session: each region entry once.

A lazily read session builds an ``Entry`` (and may read its record from the file) each time one
is asked for. The plan's file operations come from the entries of the plan's own branch, told
apart by the same rule as its message lists; the context tally tells an assistant turn by the
item's own type and role, so it asks for no entry of any other item. Both give the figures a
plain reading of the whole session gives.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tui_compactor.engine.context import ContextTally, build_context, usage_tokens
from tui_compactor.engine.fileops import FileOps, extract_file_ops
from tui_compactor.engine.messages import message_from_entry
from tui_compactor.engine.plan import prepare_compaction
from tui_compactor.engine.settings import CompactionSettings
from tui_compactor.engine.tokens import TokenCache, get_counter
from tui_compactor.session.reader import load_session
from tui_compactor.session.table import EntryTable

FIXTURE = Path(__file__).parent.parent / "fixtures" / "sessions" / "refactor-session-v3.jsonl"


def _count_built(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Every entry index the session's table builds an ``Entry`` for from now on."""
    built: list[int] = []
    build = EntryTable._entry

    def counting(self: EntryTable, i: int, entry_id: str | None = None) -> Any:
        built.append(i)
        return build(self, i, entry_id)

    monkeypatch.setattr(EntryTable, "_entry", counting)
    return built


@pytest.mark.parametrize("rules", ["pi", "omp"])
def test_file_ops_build_each_summarized_entry_once(
    monkeypatch: pytest.MonkeyPatch, rules: str
) -> None:
    session = load_session(FIXTURE, lazy=True)
    assert session.lazy
    counter = get_counter("bytes")
    cache = TokenCache(session, counter)
    for index in range(len(session.entries)):  # counted already (the tree's counts, say)
        cache.message_tokens(index)
    settings = CompactionSettings(keep_recent_tokens=20000, rules=rules)  # type: ignore[arg-type]
    plan = prepare_compaction(session, None, settings, counter, cache=cache)
    assert plan.prepared and plan.message_count("summarize") > 100
    regions = [
        (plan.boundary_start, plan.history_end),
        (plan.turn_start_index, plan.first_kept_index) if plan.is_split_turn else (0, 0),
    ]
    built = _count_built(monkeypatch)
    ops = plan.file_ops
    # One entry per branch position of the regions (their token totals are read in the same
    # pass), no second one for a summarized message.
    every = [*regions, (plan.first_kept_index, plan.boundary_end)]
    assert sorted(built) == sorted(
        plan.branch[p] for first, stop in every for p in range(first, stop)
    )

    # The same operations as every summarized assistant turn read plainly from a fresh load.
    monkeypatch.undo()
    whole = load_session(FIXTURE, lazy=False)
    expected = FileOps()
    for first, stop in regions:
        for index in plan.branch[first:stop]:
            entry = whole.entries[index]
            if entry.type == "message" and entry.role == "assistant":
                extract_file_ops(message_from_entry(entry) or {}, expected, rules)
    assert ops.to_json(rules) == expected.to_json(rules)
    assert ops.to_json(rules)["read"], "the fixture's summarized turns read files"


def test_context_tally_reads_only_assistant_turns(monkeypatch: pytest.MonkeyPatch) -> None:
    session = load_session(FIXTURE, lazy=True)
    ctx = build_context(session, session.leaf)
    assistants = [item for item in ctx.items if item.kind == "message" and item.role == "assistant"]
    assert 0 < len(assistants) < len(ctx.items)
    built = _count_built(monkeypatch)
    tally = ContextTally()
    for item in ctx.items:
        tally.add(item, 1)
    result = tally.result()
    assert sorted(built) == sorted(item.entry_index for item in assistants)

    # The anchor is the newest valid assistant usage, as a plain reading of the entries says.
    monkeypatch.undo()
    whole = load_session(FIXTURE, lazy=False)
    anchors = [
        position
        for position, item in enumerate(ctx.items)
        if item.kind == "message"
        and (message := whole.entries[item.entry_index].message or {}).get("role") == "assistant"
        and message.get("stopReason") not in ("aborted", "error")
        and message.get("usage")
    ]
    newest = anchors[-1]
    usage = whole.entries[ctx.items[newest].entry_index].message["usage"]
    assert result.last_usage_index == newest
    assert result.usage_tokens == usage_tokens(usage)
    assert result.trailing_tokens == len(ctx.items) - newest - 1


def _region_positions(plan: Any) -> dict[str, set[int]]:
    """Branch positions of each region's message list (what the counts and JSON say)."""
    return {
        "summarize": {m.branch_index for m in plan.messages_to_summarize},
        "turn_prefix": {m.branch_index for m in plan.turn_prefix_messages},
        "keep": {m.branch_index for m in plan.recent_messages},
    }


@pytest.mark.parametrize("rules", ["pi", "omp"])
def test_the_tree_marks_a_row_with_the_region_whose_list_holds_it(
    tmp_path: Path, rules: str
) -> None:
    """The tree's S / P / K marks (``region_of``) and the plan's message lists are one
    decision: a message entry without a message object (a damaged line) is in no list, so
    it is marked as metadata, not counted nowhere yet marked as summarized."""
    records = [json.loads(line) for line in FIXTURE.read_text(encoding="utf-8").splitlines()]
    damaged = [
        r for r in records[600:900] if r.get("type") == "message" and r["message"]["role"] == "user"
    ][:3]
    for record in damaged:
        del record["message"]
    path = tmp_path / "damaged.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    session = load_session(path)
    settings = CompactionSettings(keep_recent_tokens=20000, rules=rules)  # type: ignore[arg-type]
    plan = prepare_compaction(session, None, settings, get_counter("bytes"))
    assert plan.prepared and plan.is_split_turn
    lists = _region_positions(plan)
    marks: dict[str, set[int]] = {}
    for position in range(len(plan.branch)):
        marks.setdefault(plan.region_of(position), set()).add(position)
    for name, positions in lists.items():
        assert marks.get(name, set()) == positions, name
    ids = {r["id"] for r in damaged}
    on_branch = [p for p in range(len(plan.branch)) if session.entries[plan.branch[p]].id in ids]
    assert on_branch and all(plan.region_of(p) == "metadata" for p in on_branch)


@pytest.mark.parametrize("rules", ["pi", "omp"])
def test_a_summarized_record_is_read_from_the_file_once_for_tokens_and_file_ops(
    monkeypatch: pytest.MonkeyPatch, rules: str
) -> None:
    """The region token totals and the file operations are read in one pass: with the
    session's record cache too small to help, no record is read from the file twice, and the
    figures are those of a plain reading."""
    import collections

    import tui_compactor.session.session as session_module

    monkeypatch.setattr(session_module, "CACHE_MAX_RECORDS", 1)
    reads: collections.Counter[int] = collections.Counter()
    read = session_module._LazyRecords._read

    def counted(self: Any, entry: Any) -> dict[str, Any]:
        reads[entry.index] += 1
        return read(self, entry)  # type: ignore[no-any-return]

    monkeypatch.setattr(session_module._LazyRecords, "_read", counted)
    session = load_session(FIXTURE, lazy=True)
    settings = CompactionSettings(keep_recent_tokens=20000, rules=rules)  # type: ignore[arg-type]
    counter = get_counter("bytes")
    plan = prepare_compaction(session, None, settings, counter)
    reads.clear()
    tokens, ops = plan.region_tokens, plan.file_ops.to_json(rules)
    assert reads and max(reads.values()) == 1, reads.most_common(3)

    monkeypatch.undo()
    whole = load_session(FIXTURE, lazy=False)
    plain = prepare_compaction(whole, None, settings, counter)
    assert tokens == plain.region_tokens and ops == plain.file_ops.to_json(rules)
    assert tokens["summarize"] > 0 and ops["read"]
