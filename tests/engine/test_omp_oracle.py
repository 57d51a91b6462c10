"""Differential tests: ``--rules omp`` (nothing else set) against oh-my-pi 18.2.3's own answers.

The goldens in ``tests/fixtures/oracle-omp/golden`` were made by the shared oracle kit running
oh-my-pi's code under Bun on the sessions in ``tests/fixtures/oracle-omp/sessions`` (written
through oh-my-pi's API) and on the pi oracle's sessions (``golden/pi-<name>.json`` for
``tests/fixtures/oracle/sessions/<name>.jsonl``). Every value is checked (see
``omp_golden``): the load facts, the tree, every entry field and token count, contexts (items,
roles, the messages oh-my-pi sends for each item with their text hashes, context tokens), cut
points at eight keep-recent values, the keep-recent
sweep, branch-summary collection at six budgets, other leaves' cut rows, the three shake
previews and ``misc`` (latest compaction, usage figures, thresholds per window, labels, the
session name). Ids are compared by entry index.
"""

from __future__ import annotations

import copy
import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from tests.engine.omp_golden import compare
from tui_compactor.session.reader import load_session

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
GOLDEN = FIXTURES / "oracle-omp" / "golden"


def _session_for(golden: Path) -> Path:
    if golden.stem.startswith("pi-"):
        return FIXTURES / "oracle" / "sessions" / f"{golden.stem[3:]}.jsonl"
    return FIXTURES / "oracle-omp" / "sessions" / f"{golden.stem}.jsonl"


CASES = sorted(GOLDEN.glob("*.json"))


@cache
def _loaded(name: str) -> tuple[Any, dict[str, Any]]:
    golden = GOLDEN / f"{name}.json"
    return load_session(_session_for(golden)), json.loads(golden.read_text(encoding="utf-8"))


@cache
def _result(name: str) -> tuple[int, list[tuple[str, Any, Any]]]:
    session, golden = _loaded(name)
    return compare(session, golden)


@pytest.mark.parametrize("name", [golden.stem for golden in CASES])
def test_every_field_matches_oh_my_pi(name: str) -> None:
    checks, mismatches = _result(name)
    assert _loaded(name)[1]["notes"] == []  # oh-my-pi agreed with the oracle's own restatements
    print(f"{name}: {checks - len(mismatches)} of {checks} golden values match under --rules omp")
    assert checks > 1000
    shown = "\n".join(
        f"{where}: expected {exp!r}, got {got!r}" for where, exp, got in mismatches[:20]
    )
    assert not mismatches, f"{len(mismatches)} of {checks} differ:\n{shown}"


def test_total_match_count() -> None:
    total = bad = 0
    for golden in CASES:
        checks, mismatches = _result(golden.stem)
        total += checks
        bad += len(mismatches)
    print(f"oh-my-pi goldens: {total - bad} of {total} values match under --rules omp")
    assert len(CASES) == 6 and total > 100_000 and bad == 0


def test_the_comparison_notices_a_wrong_value() -> None:
    """The diff is not vacuous: one changed value anywhere is reported at its path."""
    session, golden = _loaded("omp-methods")
    changed = copy.deepcopy(golden)
    changed["contexts"][0]["items"][0]["llm"][0]["textSha256"] = "0" * 64
    changed["cutPoints"][3]["firstKeptEntryIndex"] += 1
    changed["shake"][2]["regions"][0]["tokens"] += 1
    _, mismatches = compare(session, changed)
    assert [where for where, _, _ in mismatches] == [
        "contexts[0].items[0].llm[0].textSha256",
        "cutPoints[3].firstKeptEntryIndex",
        "shake[2].regions[0].tokens",
    ]


def test_known_cut_on_tree_branches() -> None:
    """The issue's example: at keep-recent 2000 oh-my-pi cuts tree-branches at 874c8415."""
    session, golden = _loaded("pi-tree-branches")
    row = next(row for row in golden["cutPoints"] if row["keepRecentTokens"] == 2000)
    assert row["firstKeptEntryId"] == "874c8415"
    from tests.engine.omp_golden import Ours

    plan = Ours(session).plan(session.leaf, 2000)
    assert plan.first_kept_entry_id == "874c8415"


def test_rules_omp_alone_on_the_command_line_gives_oh_my_pis_cut(capsys) -> None:
    """``plan --rules omp`` with no other flag counts with the byte heuristic and calibrates;
    ``--tokens`` and ``--no-calibrate`` still override."""
    from tui_compactor.cli import main

    session = str(FIXTURES / "oracle" / "sessions" / "tree-branches.jsonl")

    def first_kept(*extra: str) -> tuple[str, str, int]:
        assert main(["plan", session, "--keep-recent", "2000", "--json", *extra]) == 0
        data = json.loads(capsys.readouterr().out)
        row = data["plans"][0]
        return row["firstKeptEntryId"], row["tokens"], row["effectiveKeepRecentTokens"]

    assert first_kept("--rules", "omp") == ("874c8415", "bytes", 1063)
    assert first_kept("--rules", "omp", "--no-calibrate")[1:] == ("bytes", 2000)
    assert first_kept("--rules", "omp", "--tokens", "pi")[1] == "pi"
    assert first_kept()[:2] == ("b2d530e2", "cl100k")


@pytest.mark.parametrize("name", [golden.stem for golden in CASES])
def test_shake_command_matches_oh_my_pis_preview(name: str, capsys) -> None:
    """``shake --rules omp --json``: regions and tokens saved per region, per config, exactly as
    oh-my-pi's own preview in the golden; the file is never written."""
    from tui_compactor.cli import main

    golden_path = GOLDEN / f"{name}.json"
    session = _session_for(golden_path)
    before = session.read_bytes()
    assert main(["shake", str(session), "--rules", "omp", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    _, golden = _loaded(name)
    assert data["writable"] is False
    ids = {row["id"]: row["index"] for row in golden["entries"]}
    for ours, theirs in zip(data["previews"], golden["shake"], strict=True):
        for key in ("config", "regionCount", "gateSavings", "tokensFreedWithoutArtifact"):
            assert ours[key] == theirs[key], key
        assert [(r["entryIndex"], r["tokens"], r["kind"]) for r in ours["regions"]] == [
            (ids[r["entryId"]], r["tokens"], r["kind"]) for r in theirs["regions"]
        ]
    assert session.read_bytes() == before


@pytest.mark.parametrize("name", ["omp-basic", "omp-methods", "omp-tree"])
def test_context_json_llm_is_what_oh_my_pi_sends(name: str, capsys) -> None:
    """``context --rules omp --json``: each item's ``llm`` is the list of messages oh-my-pi
    sends for it (roles and the text's hash as in the golden), tokens and totals match."""
    from tests.engine.omp_golden import sha
    from tui_compactor.cli import main

    session, golden = _loaded(name)
    expected = golden["contexts"][0]
    assert main(["context", str(session.path), "--rules", "omp", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["tokens"] == "bytes"
    assert [item["entryIndex"] for item in data["items"]] == expected["entryIndices"]
    assert [item["tokens"] for item in data["items"]] == [i["tokens"] for i in expected["items"]]
    for ours, theirs in zip(data["items"], expected["items"], strict=True):
        assert [(row["role"], sha(row["text"])) for row in ours["llm"]] == [
            (row["role"], row["textSha256"]) for row in theirs["llm"]
        ]
    assert data["llmMessageCount"] == expected["llmMessageCount"]
    assert data["contextTokens"]["tokens"] == expected["contextTokens"]["tokens"]


def test_context_json_llm_under_pi_rules_uses_pis_wrappers(capsys) -> None:
    from tui_compactor.cli import main
    from tui_compactor.engine.messages import COMPACTION_SUMMARY_PREFIX, COMPACTION_SUMMARY_SUFFIX

    path = FIXTURES / "oracle" / "sessions" / "tree-compacted.jsonl"
    assert main(["context", str(path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    first = data["items"][0]
    summary = load_session(path).entries[first["entryIndex"]].data["summary"]
    assert first["llm"] == [
        {"role": "user", "text": COMPACTION_SUMMARY_PREFIX + summary + COMPACTION_SUMMARY_SUFFIX}
    ]
    assert all(isinstance(item["llm"], list) for item in data["items"])
    assert data["llmMessageCount"] == sum(len(item["llm"]) for item in data["items"])


def test_serialize_format_omp_is_oh_my_pis_transcript() -> None:
    """``serialize --format omp`` is oh-my-pi's ``serializeConversation`` (golden hash): on
    tree-branches at keep-recent 0 oh-my-pi summarizes exactly the context at the last
    summarized entry, so serializing that context gives its text."""
    import subprocess
    import sys

    from tests.engine.omp_golden import sha
    from tui_compactor.engine.context import build_context

    session, golden = _loaded("pi-tree-branches")
    summarized = golden["cutPoints"][0]["messagesToSummarize"]
    indices = summarized["entryIndices"]["items"]
    context = build_context(session, indices[-1], rules="omp").items
    assert [item.entry_index for item in context] == indices
    command = [sys.executable, "-m", "tui_compactor", "serialize", str(session.path)]
    done = subprocess.run(
        [*command, "--at", f"#{indices[-1]}", "--rules", "omp", "--format", "omp"],
        capture_output=True,
        check=True,
    )
    assert sha(done.stdout.decode("utf-8")) == summarized["serialized"]["sha256"]
