"""``json_for_terminal`` writes through orjson when it can: the text must be byte for byte
the stdlib's (every ``--json`` output and its goldens depend on it)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from tui_compactor import textsafe
from tui_compactor.textsafe import json_for_terminal


def stdlib_text(value: Any, monkeypatch: pytest.MonkeyPatch, **options: Any) -> str:
    with monkeypatch.context() as patch:
        patch.setattr(textsafe, "orjson", None)
        return json_for_terminal(value, **options)


def random_text(rng: random.Random) -> str:
    pools = [(0, 0x7F), (0x80, 0x9F), (0xA0, 0x2FFF), (0x2028, 0x2029), (0x200B, 0x200F),
             (0xE000, 0xFFFF), (0x10000, 0x10FFFF)]  # fmt: skip
    out = []
    for _ in range(rng.randint(0, 16)):
        low, high = rng.choice(pools)
        out.append(chr(rng.randint(low, high)))
    return "".join(out)


def random_value(rng: random.Random, depth: int = 0) -> Any:
    roll = rng.random()
    if depth > 4 or roll < 0.35:
        return rng.choice(
            [
                random_text(rng),
                rng.randint(-(2**63), 2**64 - 1),
                rng.choice([0, -1, 2**63 - 1, -(2**63), 2**64 - 1, 2**64, -(2**63) - 1, 10**30]),
                True,
                False,
                None,
                "\x1b[31mred\x07",
            ]
        )
    if roll < 0.6:
        return [random_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    if roll < 0.7:
        return tuple(random_value(rng, depth + 1) for _ in range(rng.randint(0, 3)))
    return {random_text(rng): random_value(rng, depth + 1) for _ in range(rng.randint(0, 4))}


def test_same_text_as_the_stdlib_on_random_values(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(7)
    for _ in range(3000):
        value = random_value(rng)
        assert json_for_terminal(value) == stdlib_text(value, monkeypatch), value


@pytest.mark.parametrize(
    "value",
    [
        {"role": "user", "tokens": 12, "llm": [{"role": "user", "text": "hi\u2028\u202e"}]},
        {"x": 1e-05, "y": 1e16, "z": 0.1, "n": [float("nan"), float("inf")]},  # floats
        {"lone": "\ud800 surrogate"},
        {1: "int key", None: "null key"},
        {"deep": [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]},
        "\x00\x1f\x7f\x9b",
        [],
        {},
        {"empty": {}, "list": [], "nested": {"a": [{}]}},
    ],
)
def test_same_text_as_the_stdlib_on_edge_values(
    value: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert json_for_terminal(value) == stdlib_text(value, monkeypatch)


def test_deeper_than_orjson_goes_the_usual_way(monkeypatch: pytest.MonkeyPatch) -> None:
    value: Any = 1
    for _ in range(400):
        value = [value]
    assert json_for_terminal(value) == stdlib_text(value, monkeypatch)


def test_other_options_are_the_stdlibs(monkeypatch: pytest.MonkeyPatch) -> None:
    value = {"a": ["é", 1, None]}
    for options in ({"indent": None}, {"ensure_ascii": True}, {"indent": 4}):
        assert json_for_terminal(value, **options) == stdlib_text(value, monkeypatch, **options)
