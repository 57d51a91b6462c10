"""JavaScript text semantics checked against node itself on thousands of random values."""

from __future__ import annotations

import json
import random
import shutil
import subprocess

import pytest

from tui_compactor.engine.jstext import js_slice, js_sorted, js_stringify, utf16_len

NODE = shutil.which("node")
pytestmark = [
    pytest.mark.node,
    pytest.mark.skipif(NODE is None, reason="node is not installed"),
]

SCRIPT = r"""
let input = "";
process.stdin.on("data", (chunk) => (input += chunk));
process.stdin.on("end", () => {
  const { values, strings } = JSON.parse(input);
  const out = {
    stringify: values.map((v) => JSON.stringify(v)),
    lengths: strings.map((s) => s.length),
    slices: strings.map((s) => s.slice(0, 7)),
    sorted: [...strings].sort(),
  };
  process.stdout.write(JSON.stringify(out));
});
"""

ALPHABET = ["a", "Z", "0", " ", '"', "\\", "\n", "\t", "\x01", "\x7f", "é", "ß", "中", "😀", "𝒳",
            "\u2028", "\ufeff", "\ud800", "\udfff", "<", "/"]  # fmt: skip


def _random_number(rng: random.Random) -> float | int:
    kind = rng.randrange(6)
    if kind == 0:
        return rng.randint(-(2**62), 2**62)
    if kind == 1:
        return float(rng.randint(-(10**6), 10**6))
    if kind == 2:
        return rng.uniform(-1, 1) * 10 ** rng.randint(-12, 25)
    if kind == 3:
        return round(rng.uniform(-1000, 1000), rng.randint(0, 6))
    if kind == 4:
        return rng.choice([0.1, 1e21, 1e-7, 1e-6, 123e-20, 5e-324, 1.7976931348623157e308])
    return rng.randint(-1000, 1000)


def _random_string(rng: random.Random) -> str:
    return "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 12)))


def _random_value(rng: random.Random, depth: int = 0) -> object:
    kind = rng.randrange(7 if depth < 3 else 4)
    if kind == 0:
        return _random_number(rng)
    if kind == 1:
        return _random_string(rng)
    if kind == 2:
        return rng.choice([True, False, None])
    if kind == 3:
        return rng.choice([0, -0.0, 1.0, 2.5])
    if kind == 4:
        return [_random_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    keys = [rng.choice(["path", "b", "a", "10", "2", "01", "-1", "4294967295", "x y", "é"])]
    keys += [_random_string(rng) for _ in range(rng.randint(0, 3))]
    return {key: _random_value(rng, depth + 1) for key in keys}


def test_stringify_length_slice_and_sort_match_node() -> None:
    rng = random.Random(20240601)
    values = [_random_value(rng) for _ in range(3000)]
    strings = [_random_string(rng) for _ in range(2000)]
    # ensure_ascii keeps lone surrogates representable in the JSON text node parses
    payload = json.dumps({"values": values, "strings": strings})
    result = subprocess.run(
        [NODE or "node", "-e", SCRIPT],
        input=payload.encode(),
        capture_output=True,
        timeout=120,
        check=True,
    )
    expected = json.loads(result.stdout)
    parsed = json.loads(payload)  # what a session loader hands the engine
    for value, want in zip(parsed["values"], expected["stringify"], strict=True):
        assert js_stringify(value) == want, value
    for text, length, sliced in zip(
        parsed["strings"], expected["lengths"], expected["slices"], strict=True
    ):
        assert utf16_len(text) == length
        assert js_slice(text, 7) == sliced
    assert js_sorted(parsed["strings"]) == expected["sorted"]
