"""Differential tests: the engine in ``--rules pi --tokens pi`` mode against pi 0.73.1 goldens.

Goldens come from ``tools/oracle/pi_oracle.mjs`` (the reference package run on each session).
The shared ones live in ``tests/fixtures/oracle/``; ``tests/engine/data/oracle/`` holds more
made by ``tests/engine/gen_sessions.py`` (branchy, compacted twice, long turns, several roots,
cuts on thinking/model changes). v1 files get random ids in the reference, so every
comparison goes through entry indices (``entries[].id`` maps a golden id to its index).
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from tui_compactor.engine.branch import collect_branch_entries, new_leaf_for, select_branch_entries
from tui_compactor.engine.context import build_context, estimate_context_tokens
from tui_compactor.engine.cutpoint import find_cut_point
from tui_compactor.engine.fileops import compute_file_lists, format_pi_file_ops
from tui_compactor.engine.jstext import utf16_len
from tui_compactor.engine.messages import convert_to_llm, message_from_entry
from tui_compactor.engine.plan import CompactionPlan, prepare_compaction
from tui_compactor.engine.serialize import serialize_pi
from tui_compactor.engine.settings import CompactionSettings, should_compact
from tui_compactor.engine.tokens import TokenCache, get_counter
from tui_compactor.session.reader import load_session

TESTS = Path(__file__).resolve().parents[1]
SOURCES = [TESTS / "fixtures" / "oracle", TESTS / "engine" / "data" / "oracle"]
CASES = sorted(
    (source / "sessions" / golden.with_suffix(".jsonl").name, golden)
    for source in SOURCES
    if (source / "golden").is_dir()
    for golden in (source / "golden").glob("*.json")
)
IDS = [golden.stem for _, golden in CASES]
PI = get_counter("pi")


class Case:
    """One session, its golden and index maps between the two."""

    def __init__(self, session_path: Path, golden_path: Path) -> None:
        self.session = load_session(session_path)
        self.golden: dict[str, Any] = json.loads(golden_path.read_text(encoding="utf-8"))
        self.index_of_id = {row["id"]: row["index"] for row in self.golden["entries"]}
        self.cache = TokenCache(self.session, PI)

    def idx(self, golden_id: str | None) -> int | None:
        """Entry index of a golden id (None stays None)."""
        return None if golden_id is None else self.index_of_id[golden_id]

    def indices(self, listing: dict[str, Any]) -> list[int | None]:
        assert not listing["truncated"]
        return [self.idx(golden_id) for golden_id in listing["items"]]

    def plan(self, leaf: int, keep: int) -> CompactionPlan:
        settings = CompactionSettings(keep_recent_tokens=keep, rules="pi")
        return prepare_compaction(self.session, leaf, settings, PI, cache=self.cache)


@cache
def _case(index: int) -> Case:
    return Case(*CASES[index])


@pytest.fixture(params=range(len(CASES)), ids=IDS)
def case(request: pytest.FixtureRequest) -> Case:
    return _case(request.param)


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def roles(messages: list[dict[str, Any]]) -> dict[str, int]:
    return dict(Counter(message.get("role") for message in messages))


def test_cases_found() -> None:
    assert len(CASES) >= 3


def test_entries(case: Case) -> None:
    """Entry order, types, roles, token estimates, tree shape and the leaf."""
    session, golden = case.session, case.golden
    v1 = golden["header"]["originalVersion"] == 1
    assert len(session.entries) == len(golden["entries"])
    assert session.leaf == golden["leafIndex"]
    branch = session.path_to(session.leaf)
    assert branch == golden["branch"]["entryIndices"]["items"]
    on_branch = set(branch)
    for entry, row in zip(session.entries, golden["entries"], strict=True):
        assert entry.index == row["index"]
        assert entry.type == row["type"], row
        assert entry.role == row["role"], row
        if not v1:
            assert entry.id == row["id"]
            assert entry.parent_id == row["parentId"]
        assert entry.parent == case.index_of_id.get(row["parentId"]), row
        assert (entry.index in on_branch) == row["onCurrentBranch"]
        tokens = case.cache.entry_tokens(entry.index)
        if row["estimateTokens"] is not None:
            assert tokens == row["estimateTokens"], row
        if "derivedMessageTokens" in row:
            assert tokens == row["derivedMessageTokens"], row
        if row["type"] == "compaction":
            first_kept = session.entry_by_id(entry.data.get("firstKeptEntryId"))
            assert (first_kept.index if first_kept else None) == row["firstKeptEntryIndex"]


def test_tree_shape(case: Case) -> None:
    """Children in getTree order, depths, labels, roots, leaves, session name."""
    session, golden = case.session, case.golden
    for entry, row in zip(session.entries, golden["entries"], strict=True):
        assert session.children(entry.index) == [case.idx(c) for c in row["childIds"]], row
        assert session.depth(entry.index) == row["depth"]
        assert session.labels.get(entry.index) == row["label"]
    assert session.roots == [case.idx(i) for i in golden["roots"]]
    assert session.leaves == [case.idx(i) for i in golden["leaves"]]
    assert session.name == golden["misc"]["sessionName"]


def _check_context(case: Case, leaf: int, expected: dict[str, Any]) -> None:
    ctx = build_context(case.session, leaf)
    assert [item.role for item in ctx.items] == expected["roles"]
    est = estimate_context_tokens(ctx, PI, case.cache).to_json()
    want = expected["estimateContextTokens"]
    assert {key: est[key] for key in want} == want
    if "items" in expected:
        for item, row in zip(ctx.items, expected["items"], strict=True):
            assert item.entry_index == row["entryIndex"], row
            assert PI.count_message(item.message) == row["estimateTokens"]
            assert item.excluded == row.get("excludeFromContext", False)
            if "kind" in row:
                assert item.role == row["kind"]
        assert ctx.thinking_level == expected["thinkingLevel"]
        assert ctx.model == expected["model"]
        assert len(convert_to_llm(ctx.messages)) == expected["llmMessageCount"]


def test_context(case: Case) -> None:
    """Context at the file's leaf: roles, source entries, estimates, model, thinking level."""
    _check_context(case, case.session.leaf, case.golden["context"])


def test_context_at_other_leaves(case: Case) -> None:
    for other in case.golden["otherLeaves"]:
        _check_context(case, other["leafIndex"], other["context"])


def _check_messages(case: Case, plan: CompactionPlan, attr: str, want: dict[str, Any]) -> None:
    items = getattr(plan, attr)
    assert len(items) == want["count"]
    assert [item.entry_index for item in items] == case.indices(want["entryIds"])
    assert roles([item.message for item in items]) == want["roleCounts"]
    assert sum(PI.count_message(item.message) for item in items) == want["estimatedTokens"]
    text = serialize_pi([item.message for item in items])
    assert utf16_len(text) == want["serialized"]["length"]
    assert sha(text) == want["serialized"]["sha256"]


def test_cut_points(case: Case) -> None:
    """Every ``cutPoints`` row: boundary, cut, split turn, tokens, lists, file ops."""
    leaf = case.session.leaf
    for row in case.golden["cutPoints"]:
        plan = case.plan(leaf, row["keepRecentTokens"])
        assert plan.prepared == row["prepared"], row.get("reason")
        assert plan.boundary_start == row["boundaryStart"]
        assert plan.boundary_end == row["boundaryEnd"]
        assert plan.previous_compaction_index == row["previousCompactionIndex"]
        if not row["prepared"]:
            continue
        assert plan.first_kept_index == row["firstKeptEntryIndex"]
        assert plan.branch[plan.first_kept_index] == row["firstKeptEntryEntriesIndex"]
        assert plan.turn_start_index == row["turnStartIndex"]
        assert plan.is_split_turn == row["isSplitTurn"]
        assert plan.tokens_before == row["tokensBefore"]
        raw = row["findCutPoint"]
        assert (plan.first_kept_index, plan.turn_start_index, plan.is_split_turn) == (
            raw["firstKeptEntryIndex"],
            raw["turnStartIndex"],
            raw["isSplitTurn"],
        )
        first_kept = case.session.entries[plan.branch[plan.first_kept_index]]
        assert first_kept.type == row["firstKeptEntryType"]
        assert first_kept.role == row["firstKeptEntryRole"]
        if row["turnStartEntryId"] is not None:
            turn_start = plan.branch[plan.turn_start_index]
            assert turn_start == case.idx(row["turnStartEntryId"])
        summary = row["previousSummary"]
        assert (plan.previous_summary is not None) == summary["present"]
        if summary["present"]:
            assert sha(plan.previous_summary or "") == summary["sha256"]
        _check_messages(case, plan, "messages_to_summarize", row["messagesToSummarize"])
        _check_messages(case, plan, "turn_prefix_messages", row["turnPrefixMessages"])
        ops = plan.file_ops.to_json("pi")
        for key in ("read", "written", "edited", "readFiles", "modifiedFiles"):
            assert ops[key] == row["fileOps"][key], key
        read_files, modified = compute_file_lists(plan.file_ops)
        assert format_pi_file_ops(read_files, modified) == row["formatFileOperations"]
        # What stays in context after the compaction (kept messages, appendMessage rules).
        kept = [
            item
            for item in plan.recent_messages
            if not (item.message.get("role") == "branchSummary" and not item.message["summary"])
        ]
        after = row["afterCompaction"]
        assert len(kept) == after["keptMessageCount"]
        assert sum(PI.count_message(item.message) for item in kept) == after["keptEstimatedTokens"]
        assert roles([item.message for item in kept]) == after["keptRoleCounts"]
        assert after["contextLength"] == len(kept) + 1
        if kept:
            assert kept[0].entry_index == case.idx(after["keptFirstEntryId"])
            assert kept[-1].entry_index == case.idx(after["keptLastEntryId"])


def test_cut_point_sweep(case: Case) -> None:
    """Every ``cutPointSweep`` row (every K at which the answer can change)."""
    sweep = case.golden["cutPointSweep"]
    branch = case.session.path_to(case.session.leaf)
    path = [case.session.entries[i] for i in branch]
    start = sweep["boundaryStart"]
    assert sweep["rows"]
    for keep, first_kept, turn_start, split in sweep["rows"]:
        point = find_cut_point(
            path, start, len(path), keep, lambda pos: case.cache.message_tokens(branch[pos])
        )
        got = (point.first_kept_index, point.turn_start_index, int(point.is_split_turn))
        assert got == (first_kept, turn_start, split), keep


def test_serialized_context_and_branch(case: Case) -> None:
    """sha256 of the summarizer text for the context and for every message on the branch."""
    session = case.session
    expected = case.golden["serialized"]
    ctx = build_context(session, session.leaf)
    text = serialize_pi(ctx.messages)
    assert len(ctx.items) == expected["context"]["messageCount"]
    assert utf16_len(text) == expected["context"]["length"]
    assert sha(text) == expected["context"]["sha256"]
    messages = [message_from_entry(session.entries[i]) for i in session.path_to(session.leaf)]
    messages = [message for message in messages if message is not None]
    text = serialize_pi(messages)
    assert len(messages) == expected["branch"]["messageCount"]
    assert sha(text) == expected["branch"]["sha256"]


def test_branch_summaries(case: Case) -> None:
    """Every navigation target: new leaf, common ancestor, collected entries, every budget."""
    session = case.session
    assert case.golden["branchSummary"]
    for row in case.golden["branchSummary"]:
        target = case.idx(row["targetId"])
        old_leaf = case.idx(row["oldLeafId"])
        assert target == row["targetIndex"]
        assert new_leaf_for(session, target) == case.idx(row["navigateNewLeafId"])
        collected, ancestor = collect_branch_entries(session, old_leaf, target)
        assert ancestor == row["commonAncestorIndex"]
        assert collected == case.indices(row["entryIds"])
        for budget_row in row["prepared"]:
            selection = select_branch_entries(
                session, collected, PI, budget_row["tokenBudget"], cache=case.cache
            )
            assert len(selection.messages) == budget_row["messageCount"]
            assert selection.total_tokens == budget_row["totalTokens"]
            assert roles(selection.messages) == budget_row["roleCounts"]
            assert selection.selected == case.indices(budget_row["entryIds"])
            ops = selection.file_ops.to_json("pi")
            for key in ("read", "written", "edited", "readFiles", "modifiedFiles"):
                assert ops[key] == budget_row["fileOps"][key], key
            assert sha(serialize_pi(selection.messages)) == budget_row["serialized"]["sha256"]


def test_other_leaves_cut_points(case: Case) -> None:
    """The compact plan rows for every other leaf of the tree."""
    for other in case.golden["otherLeaves"]:
        leaf = other["leafIndex"]
        assert case.session.path_to(leaf) == case.indices(other["branchIds"])
        for row in other["cutPoints"]:
            plan = case.plan(leaf, row["keepRecentTokens"])
            assert plan.prepared == row["prepared"]
            if not row["prepared"]:
                continue
            assert plan.first_kept_index == row["firstKeptEntryIndex"]
            assert plan.turn_start_index == row["turnStartIndex"]
            assert plan.is_split_turn == row["isSplitTurn"]
            assert plan.tokens_before == row["tokensBefore"]
            assert len(plan.messages_to_summarize) == row["messagesToSummarizeCount"]
            assert len(plan.turn_prefix_messages) == row["turnPrefixMessagesCount"]
            assert (plan.previous_summary is not None) == row["previousSummary"]
            read_files, modified = compute_file_lists(plan.file_ops)
            assert read_files == row["readFiles"] and modified == row["modifiedFiles"]


def test_misc_should_compact_and_latest_compaction(case: Case) -> None:
    misc = case.golden["misc"]
    ctx = build_context(case.session, case.session.leaf)
    tokens = estimate_context_tokens(ctx, PI, case.cache).tokens
    settings = CompactionSettings(rules="pi")
    for window, expected in misc["shouldCompact"].items():
        assert should_compact(tokens, int(window), settings) == expected, window
    latest = misc["latestCompactionOnBranch"]
    plan = case.plan(case.session.leaf, 20000)
    if latest is None:
        assert plan.previous_compaction_index == -1
    else:
        assert plan.branch[plan.previous_compaction_index] == latest["index"]
