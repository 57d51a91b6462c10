"""The commands under ``--rules omp`` against oh-my-pi 18.2.3 run live on random trees.

What a user runs, not the engine underneath: ``plan --json`` (every keep-recent of the
oracle's list: the cut, the split turn, ``tokensBefore``, the calibration; the threshold),
``context --json`` (entries, tokens, what is sent), ``serialize --format omp`` (oh-my-pi's
transcript of what it summarizes), ``navigate --dry-run --json`` (the branch summary's entries
per budget) and ``compact --dry-run --json`` (the plan it would run) on ``omp_random`` trees.
CI runs two seeds; ``TUIC_OMP_SWEEP=N`` runs seeds 1..N at two sizes (a wider sweep, minutes
per ten seeds). Skips with the reason without Bun.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.engine.omp_golden import sha
from tests.engine.omp_random import random_session
from tests.support.omp_oracle import omp_golden, skip_reason

pytestmark = pytest.mark.skipif(skip_reason() is not None, reason=skip_reason() or "")

SWEEP = int(os.environ.get("TUIC_OMP_SWEEP", "0") or 0)
CASES = (
    [(seed, turns) for seed in range(1, SWEEP + 1) for turns in (25, 60)]
    if SWEEP
    else [(11, 40), (12, 25)]
)
PLAN_FIELDS = (
    "prepared",
    "effectiveKeepRecentTokens",
    "boundaryStart",
    "boundaryEnd",
    "previousCompactionIndex",
    "resetBoundaryIndex",
    "regionMessageCount",
    "firstKeptEntryId",
    "firstKeptEntryIndex",
    "turnStartIndex",
    "isSplitTurn",
    "tokensBefore",
)


def _run(*argv: str, refused: bool = False) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "tui_compactor", *argv],
        capture_output=True,
        timeout=300,
        check=False,
    )
    assert (done.returncode != 0) is refused, done.stderr.decode("utf-8", "replace")[-2000:]
    return done.stdout.decode("utf-8")


@pytest.mark.parametrize(("seed", "turns"), CASES)
def test_commands_match_oh_my_pi(seed: int, turns: int, tmp_path: Path) -> None:
    path = random_session(tmp_path / f"random-{seed}-{turns}.jsonl", seed, turns=turns)
    golden = omp_golden(path)
    rows = golden["cutPoints"]
    keeps = ",".join(str(row["keepRecentTokens"]) for row in rows)
    plan = json.loads(_run("plan", str(path), "--rules", "omp", "--json", "--keep-recent", keeps,
                           "--window", "200000"))  # fmt: skip
    differ: list[str] = []
    for ours, theirs in zip(plan["plans"], rows, strict=True):
        for field in PLAN_FIELDS:
            if field in theirs and ours.get(field) != theirs[field]:
                where = f"plan K={theirs['keepRecentTokens']} {field}"
                differ.append(f"{where}: {ours.get(field)!r} != {theirs[field]!r}")

    expected = golden["contexts"][0]
    context = json.loads(_run("context", str(path), "--rules", "omp", "--json"))
    if [item["entryIndex"] for item in context["items"]] != expected["entryIndices"]:
        differ.append("context entries")
    if [item["tokens"] for item in context["items"]] != [i["tokens"] for i in expected["items"]]:
        differ.append("context tokens")
    for ours_item, theirs_item in zip(context["items"], expected["items"], strict=False):
        if [(r["role"], sha(r["text"]), r.get("toolCallIds")) for r in ours_item["llm"]] != [
            (r["role"], r["textSha256"], r.get("toolCallIds")) for r in theirs_item["llm"]
        ]:
            differ.append(f"context llm of #{ours_item['entryIndex']}")
    if context["contextTokens"]["tokens"] != expected["contextTokens"]["tokens"]:
        differ.append("context tokens total")
    # the threshold `plan` checks is the one oh-my-pi's figures give at that window
    window = next(
        (row for row in golden["misc"]["windows"] if row["window"] == plan["threshold"]["window"]),
        None,
    )
    assert window is not None, plan["threshold"]
    shown = plan["threshold"]
    got = (shown["thresholdTokens"], plan["contextTokens"]["tokens"], shown["shouldCompact"])
    if got != (
        window["thresholdTokens"],
        window["contextTokens"],
        window["shouldCompact"],
    ):
        differ.append(f"plan threshold {plan['threshold']} != {window}")

    # `navigate --dry-run` collects and selects what oh-my-pi's branch summary would
    budgets = ",".join(str(budget) for budget in golden["oracle"]["branchBudgets"])
    for target in golden["branchSummary"][:2]:
        to = f"#{target['targetIndex']}"
        moved = json.loads(_run("navigate", str(path), "--rules", "omp", "--dry-run", "--json",
                                "--to", to, "--budget", budgets))  # fmt: skip
        where = f"navigate to #{target['targetIndex']}"
        if (moved["newLeafIndex"], moved["entryIds"]) != (
            target["navigateNewLeafIndex"],
            target["entryIds"]["items"],
        ):
            differ.append(f"{where}: new leaf or entries")
        for ours_row, row in zip(moved["prepared"], target["prepared"], strict=True):
            got = (ours_row["messageCount"], ours_row["totalTokens"], ours_row["entryIds"])
            if got != (row["messageCount"], row["totalTokens"], row["entryIds"]["items"]):
                differ.append(f"{where} budget {row['tokenBudget']}")

    # `serialize` writes the context at a node; where that context is exactly what oh-my-pi
    # summarizes at a keep-recent (same entries, none rewritten), its text must be oh-my-pi's
    # transcript
    for row in [row for row in rows if row.get("prepared")][:3]:
        summarized: dict[str, Any] = row["messagesToSummarize"]
        indices = summarized["entryIndices"]["items"]
        if not indices or summarized["entryIndices"]["truncated"]:
            continue
        at = f"#{indices[-1]}"
        there = json.loads(_run("context", str(path), "--at", at, "--rules", "omp", "--json"))
        if [item["entryIndex"] for item in there["items"]] != indices or any(
            item.get("rewritten") for item in there["items"]
        ):
            continue  # the context drops or rewrites (dangling calls) what it summarizes
        text = _run("serialize", str(path), "--at", at, "--rules", "omp", "--format", "omp")
        if sha(text) != summarized["serialized"]["sha256"]:
            differ.append(f"serialize at {at} (K={row['keepRecentTokens']})")

    # compact runs what oh-my-pi prepares, and refuses where it prepares nothing
    row = next(row for row in rows if row["keepRecentTokens"] == 1000)
    dry = _run("compact", str(path), "--rules", "omp", "--dry-run", "--json", "--provider",
               "offline", "--keep-recent", "1000", refused=not row["prepared"])  # fmt: skip
    if row["prepared"]:
        planned = json.loads(dry[dry.index("{") :])["plan"]
        for field in ("firstKeptEntryId", "tokensBefore", "isSplitTurn"):
            if planned.get(field) != row[field]:
                differ.append(f"compact --dry-run {field}: {planned[field]!r} != {row[field]!r}")
    assert not differ, "\n".join(differ[:30])
