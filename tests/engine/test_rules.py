"""oh-my-pi rules, manual cuts, context warnings and robustness on the bad corpus."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tui_compactor.engine.branch import plan_navigation
from tui_compactor.engine.context import build_context, estimate_context_tokens
from tui_compactor.engine.cutpoint import is_cut_point
from tui_compactor.engine.plan import prepare_compaction
from tui_compactor.engine.settings import CompactionSettings
from tui_compactor.engine.tokens import get_counter
from tui_compactor.session.reader import load_session

TESTS = Path(__file__).resolve().parents[1]
ORACLE = TESTS / "fixtures" / "oracle" / "sessions"
GENERATED = TESTS / "engine" / "data" / "oracle" / "sessions"
BAD = TESTS / "fixtures" / "bad"
PI = get_counter("pi")
PI_RULES = CompactionSettings(rules="pi")
OMP_RULES = CompactionSettings(rules="omp")


@pytest.fixture(scope="module")
def compacted():
    return load_session(ORACLE / "tree-compacted.jsonl")


def test_omp_boundary_starts_at_the_previous_first_kept_entry(compacted) -> None:
    """oh-my-pi 18.2.3, like pi, summarizes what the last compaction kept again."""
    pi = prepare_compaction(compacted, None, PI_RULES.with_changes(keep_recent_tokens=5000), PI)
    omp = prepare_compaction(compacted, None, OMP_RULES.with_changes(keep_recent_tokens=5000), PI)
    assert pi.previous_compaction_index == omp.previous_compaction_index == 92
    assert pi.boundary_start == omp.boundary_start == 84
    kept_last_time = {position for position in range(84, 92)} & {
        item.branch_index for item in pi.messages_to_summarize
    }
    assert kept_last_time
    assert kept_last_time <= {item.branch_index for item in omp.messages_to_summarize}
    assert omp.prepared and omp.previous_summary == pi.previous_summary
    # the previous compaction is marked fromHook: pi skips its details, oh-my-pi only honours
    # fromExtension, so they feed its file lists
    assert "SHOULD_NOT_APPEAR.py" not in json.dumps(pi.file_ops.to_json("pi"))
    assert "SHOULD_NOT_APPEAR.py" in json.dumps(omp.file_ops.to_json("omp"))
    # tokensBefore: pi = usage + trailing estimate; omp = the last valid usage alone
    assert omp.tokens_before == 23605


def test_omp_calibration_is_on_by_default_and_can_be_switched_off(compacted) -> None:
    plain = prepare_compaction(compacted, None, OMP_RULES.with_changes(calibrate=False), PI)
    calibrated = prepare_compaction(compacted, None, OMP_RULES, PI)
    assert plain.effective_keep_recent_tokens == 20000
    # usage prompt tokens (3 + 20054 + 3536 = 23593) over the local estimate after the boundary
    estimate = sum(
        PI.count_message(entry.message)
        for index in calibrated.branch[calibrated.boundary_start :]
        if (entry := compacted.entries[index]).type == "message"
    )
    ratio = 23593 / estimate
    assert ratio > 1 and calibrated.calibration == (23593, estimate, ratio)
    assert calibrated.effective_keep_recent_tokens == int(20000 / ratio)
    assert calibrated.first_kept_index >= plain.first_kept_index
    # pi rules ignore the switch
    pi = prepare_compaction(compacted, None, PI_RULES.with_changes(calibrate=True), PI)
    assert pi.effective_keep_recent_tokens == 20000


def test_omp_refuses_when_nothing_to_summarize_pi_does_not(compacted) -> None:
    huge = 10**9
    pi = prepare_compaction(compacted, None, PI_RULES.with_changes(keep_recent_tokens=huge), PI)
    omp = prepare_compaction(compacted, None, OMP_RULES.with_changes(keep_recent_tokens=huge), PI)
    assert pi.prepared and pi.is_empty  # pi still prepares (and would call the model)
    assert omp.prepared is False
    assert omp.reason == "nothing to summarize (the cut is at the start of the region)"


def test_omp_file_ops_strip_selectors_and_skip_urls() -> None:
    session = load_session(GENERATED / "gen-setting-changes.jsonl")
    settings = CompactionSettings(keep_recent_tokens=0)
    pi = prepare_compaction(session, None, settings, PI).file_ops.to_json("pi")
    omp = prepare_compaction(session, None, settings.with_changes(rules="omp"), PI)
    omp_ops = omp.file_ops.to_json("omp")
    assert "src/app.py:10-40" in pi["read"] and "https://example.com/spec.md" in pi["read"]
    assert "src/app.py:10-40" not in omp_ops["read"]
    assert not any("://" in path for path in omp_ops["read"])


def test_omp_context_drops_aborted_turns_and_pi_keeps_them() -> None:
    session = load_session(GENERATED / "gen-setting-changes.jsonl")
    pi = build_context(session, session.leaf)
    omp = build_context(session, session.leaf, rules="omp")
    aborted = [i for i in pi.items if i.message.get("stopReason") == "aborted"]
    assert len(aborted) == 1
    assert all(i.message.get("stopReason") != "aborted" for i in omp.items)
    assert len(omp.items) == len(pi.items) - 1


def _write(path: Path, records: list[dict]) -> Path:
    header = {"type": "session", "version": 3, "id": "s1", "timestamp": "2026-01-01T00:00:00.000Z"}
    lines = [json.dumps(header)] + [json.dumps(record) for record in records]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _msg(ident: str, parent: str | None, second: int, message: dict) -> dict:
    stamp = f"2026-01-01T00:00:{second:02d}.000Z"
    return {
        "type": "message",
        "id": ident,
        "parentId": parent,
        "timestamp": stamp,
        "message": message,
    }


def test_reset_boundary_restarts_omp_context_and_plan(tmp_path: Path) -> None:
    records = [
        _msg("a", None, 1, {"role": "user", "content": "first " * 50}),
        _msg("b", "a", 2, {"role": "assistant", "content": [{"type": "text", "text": "x" * 400}]}),
        {"type": "reset_boundary", "id": "r", "parentId": "b", "timestamp": "2026-01-01T00:00:03Z"},
        _msg("c", "r", 4, {"role": "user", "content": "second " * 50}),
        _msg("d", "c", 5, {"role": "assistant", "content": [{"type": "text", "text": "y" * 400}]}),
    ]
    session = load_session(_write(tmp_path / "reset.jsonl", records))
    assert [i.entry_index for i in build_context(session, 4).items] == [0, 1, 3, 4]
    assert [i.entry_index for i in build_context(session, 4, rules="omp").items] == [3, 4]
    plan = prepare_compaction(session, 4, OMP_RULES.with_changes(keep_recent_tokens=50), PI)
    assert plan.boundary_start == 3


def test_cut_point_roles_differ_for_custom_messages() -> None:
    class Fake:
        type = "message"

        def __init__(self, role: str) -> None:
            self.message = {"role": role}

    assert is_cut_point(Fake("custom"), "pi") and not is_cut_point(Fake("custom"), "omp")
    assert is_cut_point(Fake("hookMessage"), "omp") and not is_cut_point(Fake("hookMessage"), "pi")
    assert not is_cut_point(Fake("toolResult"), "pi")


def test_manual_cut_refusals(compacted) -> None:
    entries = compacted.entries
    by_id = {entry.id: entry.index for entry in entries}

    def plan_at(ident: str):
        return prepare_compaction(compacted, None, PI_RULES, PI, cut=by_id[ident])

    refused = plan_at("09255190")  # a tool result
    assert not refused.prepared and "tool result" in refused.reason
    assert refused.nearest_cut_points == [87, 89]
    before = plan_at(entries[compacted.path_to(compacted.leaf)[10]].id)
    assert not before.prepared and "before the compaction boundary" in before.reason
    compaction = plan_at("b770d0dd")
    assert not compaction.prepared and "compaction" in compaction.reason
    thinking = plan_at("b3a596a4")
    assert not thinking.prepared and "thinking_level_change" in thinking.reason
    off_path = next(
        i for i in range(len(entries)) if i not in set(compacted.path_to(compacted.leaf))
    )
    off = prepare_compaction(compacted, None, PI_RULES, PI, cut=off_path)
    assert not off.prepared and "not on the path" in off.reason
    good = plan_at("7480c90c")  # a user message: not a split turn
    assert good.prepared and good.first_kept_index == 94 and not good.is_split_turn
    assert good.region_of(93) == "metadata" and good.region_of(90) == "summarize"
    assert good.region_of(10) == "before" and good.region_of(100) == "keep"


def test_region_tokens_add_up(compacted) -> None:
    plan = prepare_compaction(compacted, None, PI_RULES.with_changes(keep_recent_tokens=5000), PI)
    regions = plan.region_tokens
    assert regions["summarize"] == sum(
        PI.count_message(item.message) for item in plan.messages_to_summarize
    )
    assert regions["turn_prefix"] == 8027  # the golden's turnPrefixMessages.estimatedTokens
    assert plan.tokens_after == regions["keep"] > 0
    assert {plan.region_of(i) for i in range(len(plan.branch))} == {
        "before",
        "summarize",
        "turn_prefix",
        "keep",
        "metadata",
    }


def test_missing_first_kept_entry_keeps_nothing_and_warns() -> None:
    session = load_session(BAD / "compaction-firstKept-missing.jsonl")
    ctx = build_context(session, session.leaf)
    assert ctx.compaction_index is not None
    assert ctx.warnings and "not on the path" in ctx.warnings[0]
    assert ctx.items[0].role == "compactionSummary"
    assert all(item.entry_index > ctx.compaction_index for item in ctx.items[1:])


@pytest.mark.parametrize("path", sorted(BAD.glob("*.jsonl")), ids=lambda p: p.name)
def test_engine_never_raises_on_the_bad_corpus(path: Path, tmp_path: Path) -> None:
    """Every leaf of every bad file: context, estimates, plans (both rules), navigation."""
    copy = tmp_path / path.name
    shutil.copyfile(path, copy)
    session = load_session(copy)
    leaves = list(session.leaves)[:20]
    counters = [PI, get_counter("bytes")]
    for leaf in leaves:
        for counter in counters:
            ctx = build_context(session, leaf)
            estimate_context_tokens(ctx, counter)
            build_context(session, leaf, rules="omp")
            for settings in (PI_RULES, OMP_RULES):
                plan = prepare_compaction(session, leaf, settings, counter)
                plan.to_json()
                for position in range(len(plan.branch)):
                    plan.region_of(position)
            if session.leaf is not None:
                plan_navigation(session, session.leaf, leaf, counter, 100).to_json()
    assert copy.read_bytes() == path.read_bytes()


ALL_SESSIONS = sorted([*ORACLE.glob("*.jsonl"), *GENERATED.glob("*.jsonl"), *BAD.glob("*.jsonl")])


@pytest.mark.parametrize("path", ALL_SESSIONS, ids=lambda p: p.name)
def test_fast_context_tokens_equal_the_built_context(path: Path) -> None:
    """The backward scan the planner uses gives pi's estimateContextTokens at every node."""
    from tui_compactor.engine.context import context_tokens_at

    session = load_session(path)
    for leaf in range(0, len(session.entries), max(1, len(session.entries) // 60)):
        built = estimate_context_tokens(build_context(session, leaf), PI)
        fast = context_tokens_at(session, leaf, PI)
        assert (fast.tokens, fast.usage_tokens, fast.trailing_tokens, fast.last_usage_index) == (
            built.tokens,
            built.usage_tokens,
            built.trailing_tokens,
            built.last_usage_index,
        ), leaf


@pytest.mark.parametrize(("flag", "rules", "by_extension"), [
    ("fromHook", "pi", True),  # pi 0.73.1 writes and reads ``fromHook``
    ("fromHook", "omp", False),  # oh-my-pi reads only ``fromExtension``
    ("fromExtension", "omp", True),
    ("fromExtension", "pi", False),  # pi 0.73.1 never reads ``fromExtension``
])  # fmt: skip
def test_a_compaction_is_named_extension_exactly_when_its_details_are_left_out(
    tmp_path: Path, flag: str, rules: str, by_extension: bool
) -> None:
    """One decision: the previous compaction (its details name SHOULD_NOT_APPEAR.py) is named
    as written by an extension (tree row and ``tree`` command, details, context block) under
    the rules that leave its details out of the file lists, and as a legacy summary under the
    rules that carry them on."""
    from tui_compactor.engine.methods import compaction_method
    from tui_compactor.workbench.preview import entry_preview

    path = tmp_path / "flagged.jsonl"
    records = [
        json.loads(line)
        for line in (ORACLE / "tree-compacted.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    for record in records:
        if record.get("type") == "compaction" and record.pop("fromHook", None):
            record[flag] = True
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    session = load_session(path)
    settings = CompactionSettings(rules=rules).with_changes(keep_recent_tokens=5000)
    plan = prepare_compaction(session, None, settings, PI)
    assert plan.previous_compaction_index == 92
    previous = session.entries[plan.branch[92]]
    assert previous.type == "compaction" and previous.data[flag] is True
    assert previous.data.get("details")
    carried = "SHOULD_NOT_APPEAR.py" in json.dumps(plan.file_ops.to_json(rules))
    assert carried is not by_extension
    assert compaction_method(previous.data, rules) == ("extension" if by_extension else "legacy")
    assert entry_preview(previous, rules).startswith("extension · ") is by_extension
