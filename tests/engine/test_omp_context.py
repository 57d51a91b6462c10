"""oh-my-pi's context rebuild under ``--rules omp``, one rule at a time.

Each test names the oh-my-pi 18.2.3 behaviour it encodes (``buildSessionContext`` and
``convertToLlm``). The sessions are oh-my-pi's own (``omp-tree``, ``omp-methods``) or written
by ``omp_sessions.rebuild_rules_session``; ``test_omp_live_oracle.py`` checks the same session
against oh-my-pi's code when Bun is installed, ``test_omp_oracle.py`` every golden value.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.engine.omp_sessions import rebuild_rules_session
from tui_compactor.engine.context import build_context, item_llm
from tui_compactor.engine.omp_messages import omp_format
from tui_compactor.session.reader import load_session

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
OMP = FIXTURES / "oracle-omp" / "sessions"


@pytest.fixture(scope="module")
def rules_session(tmp_path_factory: pytest.TempPathFactory):
    return load_session(rebuild_rules_session(tmp_path_factory.mktemp("omp") / "rules.jsonl"))


def _by_id(session, ident: str) -> int:
    return next(entry.index for entry in session.entries if entry.id == ident)


def _index_of_call(session, call: str, role: str = "assistant") -> int:
    for entry in session.entries:
        message = entry.message if entry.type == "message" else None
        if not message or message.get("role") != role:
            continue
        if role == "toolResult" and message.get("toolCallId") == call:
            return entry.index
        if role == "assistant" and any(
            block.get("id") == call for block in message.get("content") or []
        ):
            return entry.index
    raise AssertionError(call)


def test_dangling_tool_calls_are_stripped_with_redacted_thinking_and_signatures(rules_session):
    """A call without a result on the path goes; its turn loses redactedThinking and thinking
    signatures (Anthropic rejects a modified signed turn); the paired call stays."""
    ctx = build_context(rules_session, rules_session.leaf, rules="omp")
    turn = next(item for item in ctx.items if item.role == "assistant")
    assert turn.rewritten
    kinds = [block["type"] for block in turn.message["content"]]
    assert kinds == ["thinking", "text", "toolCall"]
    assert "thinkingSignature" not in turn.message["content"][0]
    assert [b.get("id") for b in turn.message["content"] if b["type"] == "toolCall"] == ["c8"]
    pi = build_context(rules_session, rules_session.leaf)
    assert not any(item.rewritten for item in pi.items)


def test_a_turn_left_empty_by_stripping_is_dropped() -> None:
    """omp-tree: the assistant whose only calls dangle (leaf taken at it) disappears."""
    session = load_session(OMP / "omp-tree.jsonl")
    ctx = build_context(session, 46, rules="omp")
    assert 46 not in [item.entry_index for item in ctx.items]
    assert 46 in [item.entry_index for item in build_context(session, 46).items]


def test_aborted_turns_go_with_their_tool_results(rules_session):
    aborted = _index_of_call(rules_session, "c6")
    result = _index_of_call(rules_session, "c6", "toolResult")
    leaf = result + 1
    omp = [item.entry_index for item in build_context(rules_session, leaf, rules="omp").items]
    pi = [item.entry_index for item in build_context(rules_session, leaf).items]
    assert aborted in pi and result in pi
    assert aborted not in omp and result not in omp


def test_retry_recovered_and_empty_error_turns_are_skipped(rules_session):
    retried = next(e.index for e in rules_session.entries if (e.message or {}).get("retryRecovery"))
    empty = retried + 1
    assert (rules_session.entries[empty].message or {}).get("content") == []
    leaf = empty + 2  # the answer's tool result
    omp = [item.entry_index for item in build_context(rules_session, leaf, rules="omp").items]
    assert retried not in omp and empty not in omp
    assert retried + 2 in omp


def test_reset_boundary_after_the_latest_compaction_drops_it(rules_session):
    reset = next(e.index for e in rules_session.entries if e.type == "reset_boundary")
    ctx = build_context(rules_session, rules_session.leaf, rules="omp")
    assert all(item.entry_index > reset for item in ctx.items)
    assert ctx.items[0].role == "user"  # no summary
    before = build_context(rules_session, reset - 1, rules="omp")
    assert before.items[0].role == "compactionSummary"


def test_shaken_tool_results_are_sent_joined(rules_session):
    result = _index_of_call(rules_session, "c2", "toolResult")
    ctx = build_context(rules_session, result, rules="omp")
    item = next(item for item in ctx.items if item.entry_index == result)
    assert item_llm(item, "omp") == [
        {"role": "toolResult", "text": "[shaken ~412 tokens] (full output offloaded)"}
    ]


def test_custom_messages_go_to_the_developer_role_images_to_a_user_message(rules_session):
    custom = next(e.index for e in rules_session.entries if e.type == "custom_message")
    ctx = build_context(rules_session, custom, rules="omp")
    sent = item_llm(ctx.items[-1], "omp")
    assert [row["role"] for row in sent] == ["developer", "user"]
    assert sent[1]["text"] == "Images attached to ledger-reminder."
    assert [row["role"] for row in item_llm(build_context(rules_session, custom).items[-1])] == [
        "user"
    ]


def test_excluded_bash_runs_send_nothing(rules_session):
    bash = next(
        e.index for e in rules_session.entries if e.type == "message" and e.role == "bashExecution"
    )
    item = build_context(rules_session, bash, rules="omp").items[-1]
    assert item.excluded and item_llm(item, "omp") == []


def test_wrappers_are_oh_my_pis_own_and_formatted(rules_session):
    """The compaction wrapper, the handoff wrapper (``method: handoff``) and the formatter's
    effect on the summary (trailing spaces, blank-line runs, table rows)."""
    compactions = [e.index for e in rules_session.entries if e.type == "compaction"]
    soft = build_context(rules_session, compactions[0], rules="omp").items[0]
    text = item_llm(soft, "omp")[0]["text"]
    assert text.startswith("Prior model work/tool state available.\nMUST build on prior work")
    assert "- [x] totals\n|a|b|\n|---|:---:|\n|1|2|" in text
    assert text.endswith("src/ledger.py (RW)\n</files>\n</summary>")
    handoff = build_context(rules_session, compactions[1], rules="omp").items[0]
    text = item_llm(handoff, "omp")[0]["text"]
    assert text.startswith("Context replaced. The <handoff> below is a handoff document")
    assert text.endswith("1. Finish render.py\n</handoff>")
    pi_text = item_llm(build_context(rules_session, compactions[1]).items[0], "pi")[0]["text"]
    assert pi_text.startswith("The conversation history before this point was compacted")


def test_branch_summaries_use_the_branch_return_wrapper() -> None:
    session = load_session(OMP / "omp-tree.jsonl")
    ctx = build_context(session, 13, rules="omp")
    item = ctx.items[-1]
    assert item.role == "branchSummary"
    assert item_llm(item, "omp")[0]["text"].startswith("Branch-return summary:\n\n<summary>\n")


def test_remote_compaction_replaces_the_kept_messages() -> None:
    """omp-methods #157: an OpenAI remote compaction; the replacement history rides on the
    summary (a placeholder) and none of the kept entries are re-emitted."""
    session = load_session(OMP / "omp-methods.jsonl")
    ctx = build_context(session, 157, rules="omp")
    assert [item.role for item in ctx.items] == ["compactionSummary"]
    assert ctx.items[0].message["providerPayload"] == {"type": "openaiResponsesHistory"}
    assert len(build_context(session, 157).items) > 1


def test_snapcompact_archive_comes_back_after_the_summary() -> None:
    """omp-methods #107: the archive's text edge is a block after the bare summary; its tokens
    count (oh-my-pi's golden: 2587)."""
    from tui_compactor.engine.tokens import get_counter

    session = load_session(OMP / "omp-methods.jsonl")
    item = build_context(session, 107, rules="omp").items[0]
    assert item.message["method"] == "snapcompact" and len(item.message["blocks"]) == 1
    assert get_counter("bytes").count_message(item.message) == 2587
    text = item_llm(item, "omp")[0]["text"]
    assert text.startswith(item.message["summary"])


def test_formatter_rules() -> None:
    """oh-my-pi's post-render pass: trailing whitespace trimmed, a run of 2+ blank lines removed
    entirely, blank lines before a closing tag dropped, fenced code left alone."""
    assert omp_format("a  \n\n\nb") == "a\nb"
    assert omp_format("a\n\nb") == "a\n\nb"
    assert omp_format("<x>\nbody\n\n</x>\n") == "<x>\nbody\n</x>"
    assert omp_format("```\n| a |  b |\n\n\n```") == "```\n| a |  b |\n\n\n```"
    assert omp_format("| a |  b |") == "|a|b|"


def test_item_tokens_count_what_is_sent_not_the_entry() -> None:
    """The app's gauge and ``context --json`` count a rewritten turn and a snapcompact summary
    as oh-my-pi does (the golden: 2587 for the summary with its archive)."""
    from tui_compactor.engine.context import item_tokens
    from tui_compactor.engine.tokens import TokenCache, get_counter

    counter = get_counter("bytes")
    methods = load_session(OMP / "omp-methods.jsonl")
    cache = TokenCache(methods, counter)
    summary = build_context(methods, 107, rules="omp").items[0]
    assert item_tokens(summary, counter, cache) == 2587 > cache.message_tokens(107)
    tree = load_session(OMP / "omp-tree.jsonl")
    cache = TokenCache(tree, counter)
    rewritten = next(item for item in build_context(tree, 27, rules="omp").items if item.rewritten)
    assert item_tokens(rewritten, counter, cache) < cache.message_tokens(rewritten.entry_index)


def test_shake_preview_shows_what_the_model_would_see_after_it(rules_session):
    """Shaking the fenced block of a user message and the tool results: the placeholder takes
    their place, the rest of the text stays, and the context shrinks by the tokens freed."""
    from tui_compactor.engine.shake import apply_regions, context_after_shake, shake_preview
    from tui_compactor.engine.tokens import get_counter

    counter = get_counter("bytes")
    leaf = _index_of_call(rules_session, "c5", "toolResult")
    preview = shake_preview(rules_session, leaf, "rescue", counter)
    block = next(region for region in preview.regions if region.kind == "block")
    message = rules_session.entries[block.entry_index].message
    after = apply_regions(message, [block])
    text = after["content"][0]["text"]
    assert text.startswith("Tidy the ledger totals. Current code:\n[shaken ~")
    assert text.endswith("tokens]\nKeep it fast.")
    result = next(region for region in preview.regions if region.kind == "toolResult")
    shaken = apply_regions(rules_session.entries[result.entry_index].message, [result])
    assert shaken["content"] == [{"type": "text", "text": f"[shaken ~{result.tokens} tokens]"}]
    before, after_tokens = context_after_shake(rules_session, leaf, preview, counter)
    assert before - after_tokens == preview.tokens_freed > 0


def test_a_result_is_shaken_when_it_carries_prunedAt_whatever_its_value() -> None:
    """oh-my-pi tests the key's presence (``"prunedAt" in message``): a ``null`` still counts,
    so the details pane, the context view and what we send agree with the agent."""
    from tui_compactor.engine.methods import shaken_result

    assert shaken_result({"role": "toolResult", "prunedAt": None})
    assert shaken_result({"role": "toolResult", "prunedAt": 1712345678})
    assert not shaken_result({"role": "toolResult"})
    assert not shaken_result({"role": "assistant", "prunedAt": 1})


class _Tally:
    """The pi counter, noting every message it counts."""

    name = "pi"

    def __init__(self) -> None:
        from tui_compactor.engine.tokens import PiCounter

        self.inner = PiCounter()
        self.counted = 0

    def count_message(self, message):
        self.counted += 1
        return self.inner.count_message(message)

    def count_messages(self, messages):
        return [self.count_message(message) for message in messages]

    def count_text(self, text: str) -> int:
        return self.inner.count_text(text)


@pytest.mark.parametrize(
    "path", [OMP / "omp-basic.jsonl", FIXTURES / "oracle" / "sessions" / "tree-compacted.jsonl"]
)
def test_the_thresholds_context_counts_the_messages_the_plan_then_finds_counted(
    path: Path,
) -> None:
    """``plan --rules omp`` measures the whole context for its threshold (its local estimate
    too), then plans: the messages the context read are counted once, into the plan's token
    cache, and the plan re-reads and re-counts none of them; the figures are those of a
    context and a plan counted apart."""
    from tui_compactor.engine.context import estimate_context_tokens, threshold_context_tokens
    from tui_compactor.engine.plan import prepare_compaction
    from tui_compactor.engine.settings import CompactionSettings
    from tui_compactor.engine.tokens import TokenCache

    session = load_session(path)
    settings = CompactionSettings(rules="omp")
    counter = _Tally()
    cache = TokenCache(session, counter)
    context = threshold_context_tokens(session, session.leaf, counter, "omp", cache)
    measured = counter.counted
    plan = prepare_compaction(session, None, settings, counter, cache=cache)
    assert plan.calibration is not None and plan.region_message_count > 0
    assert counter.counted == measured, "the plan counted messages the context had counted"

    apart = _Tally()
    alone = estimate_context_tokens(build_context(session, session.leaf, rules="omp"), apart)
    assert context == alone and context.local_estimate
    fresh = prepare_compaction(session, None, settings, apart, cache=TokenCache(session, apart))
    assert plan.to_json() == fresh.to_json()


@pytest.mark.parametrize("content", [True, 7, "partial text", None, ""])
def test_an_error_turn_with_corrupt_content_never_crashes_the_omp_context(
    tmp_path: Path, content, capsys
) -> None:
    """An ``error`` turn whose content is not a list (a corrupt file's ``true``): oh-my-pi's
    ``isEmptyErrorTurn`` would throw on it; ``context``, ``plan`` and ``lint`` under its rules
    crashed with a TypeError. Now it counts as content (as a block that is no object does),
    and the failed turn is left out of the context as any other."""
    import json

    from tui_compactor.cli import main

    records = [
        {"type": "session", "version": 3, "id": "s", "timestamp": "2026-01-01T00:00:00Z",
         "cwd": "/p"},
        {"type": "message", "id": "u", "parentId": None, "timestamp": "2026-01-01T00:00:01Z",
         "message": {"role": "user", "content": "hi"}},
        {"type": "message", "id": "a", "parentId": "u", "timestamp": "2026-01-01T00:00:02Z",
         "message": {"role": "assistant", "content": content, "stopReason": "error",
                     "provider": "p", "model": "m"}},
    ]  # fmt: skip
    path = tmp_path / "error-turn.jsonl"
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    before = path.read_bytes()
    session = load_session(path)
    roles = [item.role for item in build_context(session, session.leaf, rules="omp").items]
    assert roles == ["user"]  # an error turn is not sent (dropped as failed, empty or not)
    for command in ("context", "plan", "lint"):
        assert main([command, str(path), "--rules", "omp"]) in (0, 1, 2), command
    capsys.readouterr()
    assert path.read_bytes() == before
