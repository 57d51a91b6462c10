"""Reserves and thresholds under ``--rules omp`` against oh-my-pi 18.2.3's own functions, live.

The goldens hold the four figures (``effectiveReserveTokens``, ``resolveBudgetReserveTokens``,
``resolveThresholdTokens``, ``shouldCompact``) for the default settings only; here
``omp_settings_probe.ts`` runs oh-my-pi's ``pi-agent-core/compaction`` on a grid of windows,
reserves (unset, small, the default value set explicitly, larger than the window), threshold
percents and fixed thresholds, with the context one token below, at and above our threshold,
and compaction on and off. Skips with the reason without Bun.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
from pathlib import Path
from typing import Any

import pytest

from tests.support.omp_oracle import run_bun, skip_reason
from tui_compactor.engine.settings import (
    CompactionSettings,
    budget_reserve,
    effective_reserve,
    should_compact,
    threshold_tokens,
)
from tui_compactor.workbench.settings import Settings

pytestmark = pytest.mark.skipif(skip_reason() is not None, reason=skip_reason() or "")

WINDOWS = (1, 1_000, 16_000, 32_000, 128_000, 200_000, 1_000_000)
RESERVES = (None, 0, 1_000, 16_384, 50_000, 2_000_000)
PERCENTS = (-1, 0, 0.5, 50, 80.5, 99.5, 100)
FIXED = (-1, 0, 0.5, 1, 5_000, 10_000_000)


def _cases() -> list[dict[str, Any]]:
    cases = []
    for window, reserve, percent, fixed in itertools.product(WINDOWS, RESERVES, PERCENTS, FIXED):
        settings = CompactionSettings(
            rules="omp", reserve_tokens=reserve, threshold_percent=percent, threshold_tokens=fixed
        )
        at = threshold_tokens(window, settings)
        for context, enabled in ((at - 1, True), (at, True), (at + 1, True), (at + 1, False)):
            theirs: dict[str, Any] = {
                "thresholdPercent": percent,
                "thresholdTokens": fixed,
                "enabled": enabled,
            }
            if reserve is not None:
                theirs["reserveTokens"] = reserve
            cases.append({"window": window, "contextTokens": context, "settings": theirs})
    return cases


def _ours(case: dict[str, Any]) -> dict[str, Any]:
    """Our four figures, through the settings layer every command and the app read (what
    ``Settings`` keeps of a value is what the engine decides with)."""
    given = case["settings"]
    kept = Settings(
        rules="omp",
        reserve_tokens=given.get("reserveTokens"),
        threshold_percent=given["thresholdPercent"],
        threshold_tokens=given["thresholdTokens"],
    )
    settings = dataclasses.replace(kept.compaction(), enabled=given["enabled"])
    window = case["window"]
    return {
        "effectiveReserveTokens": effective_reserve(window, settings),
        "budgetReserveTokens": budget_reserve(window, settings),
        "thresholdTokens": threshold_tokens(window, settings),
        "shouldCompact": should_compact(case["contextTokens"], window, settings),
    }


def test_reserves_and_thresholds_are_oh_my_pis(tmp_path: Path) -> None:
    cases = _cases()
    path = tmp_path / "cases.json"
    path.write_text(json.dumps(cases), encoding="utf-8")
    done = run_bun(Path(__file__).with_name("omp_settings_probe.ts"), str(path), timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    theirs = json.loads(done.stdout)
    differ = [
        f"{case}: ours {mine} != {expected}"
        for case, expected in zip(cases, theirs, strict=True)
        if (mine := _ours(case)) != expected
    ]
    print(f"{len(cases) - len(differ)} of {len(cases)} settings cases agree with oh-my-pi")
    assert not differ, f"{len(differ)} of {len(cases)} differ:\n" + "\n".join(differ[:20])


def test_a_fractional_fixed_threshold_acts_as_its_floor_as_in_oh_my_pi(tmp_path: Path) -> None:
    """oh-my-pi keeps a fractional ``thresholdTokens`` (at least 1) and compacts when
    ``contextTokens >`` it; we keep the whole tokens it stands for (``whole_tokens``, the
    figure every view prints): the same decision for every whole context around it. Below 1
    it is 1 there and here, never 0 (unset)."""
    cases = []
    fractions = (0.001, 0.5, 0.999, 1.5, 999.25, 1500.7)
    for window, fixed in itertools.product((1, 2, 1_000, 200_000), fractions):
        at = threshold_tokens(window, CompactionSettings(rules="omp", threshold_tokens=fixed))
        for context in (at - 1, at, at + 1, at + 2):
            given = {"thresholdPercent": -1, "thresholdTokens": fixed, "enabled": True}
            cases.append({"window": window, "contextTokens": context, "settings": given})
    path = tmp_path / "cases.json"
    path.write_text(json.dumps(cases), encoding="utf-8")
    done = run_bun(Path(__file__).with_name("omp_settings_probe.ts"), str(path), timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    for case, theirs in zip(cases, json.loads(done.stdout), strict=True):
        mine = _ours(case)
        assert mine["thresholdTokens"] == math.floor(theirs["thresholdTokens"]), case
        assert mine["shouldCompact"] == theirs["shouldCompact"], (case, theirs)
