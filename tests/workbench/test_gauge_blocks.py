"""The gauge and ``context`` walk the same context: for every node of the shared fixtures, under
both rule sets, the gauge's blocks are ``context --json``'s items (the ones sent) with the same
tokens, and its figure is the command's. The blocks are held compactly."""

from __future__ import annotations

import io
import json
import tracemalloc
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from tui_compactor.cli import main
from tui_compactor.engine.tokens import get_counter
from tui_compactor.session.reader import load_session
from tui_compactor.workbench.handle import SessionHandle
from tui_compactor.workbench.settings import Settings
from tui_compactor.workbench.views import ContextBlocks, gauge_at

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = [
    ROOT / "tests" / "fixtures" / "oracle" / "sessions" / "tree-compacted.jsonl",
    ROOT / "tests" / "fixtures" / "oracle" / "sessions" / "tree-branches.jsonl",
    ROOT / "tests" / "fixtures" / "oracle-omp" / "sessions" / "omp-basic.jsonl",
    ROOT / "tests" / "fixtures" / "oracle-omp" / "sessions" / "omp-methods.jsonl",
    ROOT / "tests" / "fixtures" / "sessions" / "refactor-session-v3.jsonl",
]


@pytest.mark.parametrize("rules", ["pi", "omp"])
@pytest.mark.parametrize("path", FIXTURES, ids=lambda path: path.stem)
def test_gauge_blocks_are_the_context_commands_items(path: Path, rules: str) -> None:
    session = load_session(path)
    handle = SessionHandle(session)
    settings = Settings(tokens="pi", rules=rules)
    cache = handle.token_cache(get_counter("pi"))
    nodes = sorted({*session.leaves, len(session.entries) // 2, session.leaf})
    for node in nodes:
        out = io.StringIO()
        with redirect_stdout(out):
            status = main(
                [
                    "context",
                    str(path),
                    "--at",
                    session.entries[node].id,
                    "--tokens",
                    "pi",
                    "--rules",
                    rules,
                    "--json",
                ]
            )
        assert status == 0
        data = json.loads(out.getvalue())
        with handle.read() as snapshot:
            gauge = gauge_at(snapshot, node, settings, cache)
        sent = [
            (row["entryIndex"], row["tokens"])
            for row in data["items"]
            if not row.get("excludeFromContext")
        ]
        assert [(index, tokens) for _, _, tokens, index in gauge.blocks] == sent
        figure = data["contextTokens"]
        assert (gauge.tokens, gauge.local_estimate) == (figure["tokens"], figure["localEstimate"])


def test_context_blocks_read_back_what_was_added() -> None:
    rows = [
        ("user", "plain", 12, 0),
        ("summary:remote ⚠", "héllo wörld 日本 🎉", 123_456, 7),
        ("tool", "", 0, None),
        ("user", "x" * 200, 1_234_567_890, 200_000),
    ]
    blocks = ContextBlocks(rows)
    assert list(blocks) == rows
    assert blocks[-1] == rows[-1] and blocks[1:3] == rows[1:3]
    assert len(blocks) == 4 and blocks.labels == ["user", "summary:remote ⚠", "tool"]
    assert (blocks.max_tokens, blocks.max_entry_index) == (1_234_567_890, 200_000)
    with pytest.raises(IndexError):
        blocks[4]
    assert list(ContextBlocks()) == [] and ContextBlocks().max_entry_index == -1


def test_a_200k_block_context_takes_a_few_megabytes() -> None:
    """A list of (label, preview, tokens, index) tuples took ~45 MB for the 200k-deep chain."""
    tracemalloc.start()
    try:
        blocks = ContextBlocks()
        for index in range(200_000):
            blocks.append(
                "user" if index % 2 else "assistant", f"step {index}: ok", index % 50 + 3, index
            )
        size, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert blocks[123_457] == ("user", "step 123457: ok", 123_457 % 50 + 3, 123_457)
    assert size < 10 * 1024 * 1024


def test_a_cancelled_measure_stops_and_an_uncancelled_one_is_unchanged(tmp_path: Path) -> None:
    from tui_compactor.workbench.views import CANCEL_CHECK_EVERY, MeasureCancelled

    lines = [json.dumps({"type": "session", "version": 3, "id": "s", "timestamp": "t", "cwd": "/"})]
    for number in range(1, 10_001):
        role = "user" if number % 2 else "assistant"
        lines.append(
            json.dumps(
                {
                    "type": "message",
                    "id": f"{number:08x}",
                    "parentId": f"{number - 1:08x}" if number > 1 else None,
                    "timestamp": "t",
                    "message": {
                        "role": role,
                        "content": [{"type": "text", "text": f"step {number}"}],
                    },
                }
            )
        )
    path = tmp_path / "chain.jsonl"
    path.write_text("\n".join(lines) + "\n")
    session = load_session(path)
    handle = SessionHandle(session)
    settings = Settings(tokens="pi")
    cache = handle.token_cache(get_counter("pi"))
    asked: list[int] = []

    def never() -> bool:
        asked.append(1)
        return False

    with handle.read() as snapshot:
        whole = gauge_at(snapshot, session.leaf, settings, cache)
        watched = gauge_at(snapshot, session.leaf, settings, cache, cancelled=never)
        with pytest.raises(MeasureCancelled):
            gauge_at(snapshot, session.leaf, settings, cache, cancelled=lambda: True)
    assert len(asked) == -(-10_000 // CANCEL_CHECK_EVERY)
    assert (watched.tokens, watched.local_estimate) == (whole.tokens, whole.local_estimate)
    assert whole.blocks is not None and len(whole.blocks) == 10_000
    assert list(watched.blocks or []) == list(whole.blocks)
