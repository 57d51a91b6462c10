"""Reserve resolution and thresholds: pi's plain rule and oh-my-pi's 15% rules."""

from __future__ import annotations

import pytest

from tui_compactor.engine.settings import (
    CompactionSettings,
    branch_summary_budget,
    budget_reserve,
    effective_reserve,
    reserve_window_warning,
    should_compact,
    threshold_tokens,
)

OMP = CompactionSettings(rules="omp")
PI = CompactionSettings(rules="pi")


@pytest.mark.parametrize(
    ("window", "reserve", "threshold"),
    [
        (200_000, 30_000, 170_000),
        (128_000, 19_200, 108_800),
        (32_768, 16_384, 16_384),
        (16_384, 2_457, 13_927),
    ],
)
def test_omp_worked_defaults(window: int, reserve: int, threshold: int) -> None:
    """The table in the facts file (§2.3), reserve unset."""
    assert budget_reserve(window, OMP) == reserve
    assert threshold_tokens(window, OMP) == threshold


def test_omp_explicit_reserve_is_honoured_even_at_the_default_value() -> None:
    """An explicit 16384 is not swapped for the proportional reserve (provenance matters)."""
    explicit = OMP.with_changes(reserve_tokens=16_384)
    # 16384-token window: unset -> proportional 2457; explicit 16384 >= window -> proportional too
    assert budget_reserve(16_384, explicit) == 2_457
    # 19000-token window: unset falls back (16384 >= 19000-2850), explicit keeps 16384
    assert budget_reserve(19_000, OMP) == 2_850
    assert budget_reserve(19_000, explicit) == 16_384
    assert budget_reserve(20_000, OMP) == 16_384  # 16384 < 20000-3000: no fallback
    assert effective_reserve(200_000, explicit) == 30_000


def test_omp_threshold_tokens_and_percent_override_the_reserve() -> None:
    assert threshold_tokens(200_000, OMP.with_changes(threshold_tokens=50_000)) == 50_000
    assert threshold_tokens(200_000, OMP.with_changes(threshold_tokens=500_000)) == 199_999
    assert threshold_tokens(200_000, OMP.with_changes(threshold_percent=75)) == 150_000
    assert threshold_tokens(200_000, OMP.with_changes(threshold_percent=150)) == 198_000
    # tokens win over percent
    both = OMP.with_changes(threshold_tokens=1_000, threshold_percent=50)
    assert threshold_tokens(200_000, both) == 1_000


def test_pi_threshold_is_window_minus_reserve() -> None:
    """pi 0.73.1: contextTokens > window - reserveTokens, reserve default 16384, no 15% rule."""
    assert threshold_tokens(200_000, PI) == 200_000 - 16_384
    assert threshold_tokens(200_000, PI.with_changes(reserve_tokens=1_000)) == 199_000
    # the golden's shouldCompact at 23605 tokens: 32k true, 128k false
    assert should_compact(23_605, 32_000, PI) is True
    assert should_compact(23_605, 128_000, PI) is False
    assert should_compact(200_000 - 16_384, 200_000, PI) is False  # strictly greater


def test_should_compact_disabled_and_empty_window() -> None:
    assert should_compact(10**9, 100_000, OMP.with_changes(enabled=False)) is False
    assert should_compact(10**9, 100_000, PI.with_changes(enabled=False)) is False
    assert should_compact(10, 0, OMP) is False
    assert should_compact(170_001, 200_000, OMP) is True
    assert should_compact(170_000, 200_000, OMP) is False


def test_branch_summary_budget_uses_the_raw_reserve() -> None:
    assert branch_summary_budget(None) == 111_616
    assert branch_summary_budget(200_000) == 183_616
    assert branch_summary_budget(200_000, 50_000) == 150_000


def test_reserve_at_or_above_the_window_is_clamped_and_explained() -> None:
    huge = 999_999_999
    pi = PI.with_changes(reserve_tokens=huge)
    assert threshold_tokens(1_000, pi) == 0  # never negative; pi still compacts any context
    assert should_compact(1, 1_000, pi) is True
    assert "clamped to 0" in (reserve_window_warning(1_000, pi) or "")
    omp = OMP.with_changes(reserve_tokens=huge)
    assert threshold_tokens(1_000, omp) == 850
    assert "proportional reserve 150" in (reserve_window_warning(1_000, omp) or "")
    assert reserve_window_warning(1_000, PI) is not None  # the default 16384 is too big too
    assert reserve_window_warning(200_000, PI) is None
    assert reserve_window_warning(None, pi) is None
