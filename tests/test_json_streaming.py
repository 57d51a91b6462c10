"""``write_json_for_terminal`` writes exactly what ``json_for_terminal`` returns, in pieces.

The commands' ``--json`` output goes through it so a 200,000-row list is never one string;
the text must stay byte for byte what the goldens and every JSON reader saw before.
"""

from __future__ import annotations

import io
import random
from typing import Any

import pytest

from tui_compactor import textsafe
from tui_compactor.textsafe import (
    JsonText,
    json_for_terminal,
    json_list_chunks,
    write_json_for_terminal,
)

SCALARS: list[Any] = [1, -7, 2.5, float("nan"), float("inf"), "a\u202eb\x1b[2J", "é", None,
                      True, "x\ny", "\ud800", [], {}]  # fmt: skip


def _value(rng: random.Random, depth: int = 0) -> Any:
    roll = rng.random()
    if depth > 5 or roll < 0.35:
        return rng.choice(SCALARS)
    if roll < 0.6:
        return [_value(rng, depth + 1) for _ in range(rng.randint(0, 6))]
    keys: list[Any] = ["a", "b", "é", 3, None, True, 1.5]
    return {rng.choice(keys): _value(rng, depth + 1) for _ in range(rng.randint(0, 5))}


class _Writes(io.StringIO):
    def __init__(self) -> None:
        super().__init__()
        self.largest = 0

    def write(self, text: str) -> int:
        self.largest = max(self.largest, len(text))
        return super().write(text)


@pytest.mark.parametrize(("chunk", "big"), [(1, 1), (3, 3), (2, 5), (512, 256)])
def test_streamed_json_is_the_same_text(
    chunk: int, big: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(textsafe, "JSON_CHUNK_ITEMS", chunk)
    monkeypatch.setattr(textsafe, "STREAM_MIN_ITEMS", big)
    rng = random.Random(chunk * 31 + big)
    for _ in range(200):
        value = _value(rng)
        for ascii_only in (True, False):
            out = io.StringIO()
            write_json_for_terminal(out, value, ensure_ascii=ascii_only)
            assert out.getvalue() == json_for_terminal(value, ensure_ascii=ascii_only) + "\n"
        if isinstance(value, dict):
            rows = [_value(rng) for _ in range(rng.randint(0, 8))]
            whole = {**value, "rows": rows, "after": 1}
            streamed = {**value, "rows": JsonText(json_list_chunks(iter(rows))), "after": 1}
            out = io.StringIO()
            write_json_for_terminal(out, streamed)
            assert out.getvalue() == json_for_terminal(whole) + "\n"


def test_a_big_nested_list_is_written_in_pieces() -> None:
    value = {"plans": [{"messages": {"entryIds": [f"{n:08x}" for n in range(100_000)]}}]}
    out = _Writes()
    write_json_for_terminal(out, value)
    assert out.getvalue() == json_for_terminal(value) + "\n"
    assert out.largest < len(out.getvalue()) / 50
