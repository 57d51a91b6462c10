"""Compaction settings, reserve resolution and the "should we compact now?" threshold.

Two rule sets:

* ``pi`` (pi 0.73.1): ``reserveTokens`` defaults to 16384 and compaction triggers when
  ``contextTokens > window - reserveTokens``. No percentage rules.
* ``omp`` (oh-my-pi): the reserve is at least 15% of the window (``effective_reserve``); an
  unset reserve that would leave less than 15% of the window for the context falls back to
  the proportional reserve (``budget_reserve``); ``threshold_tokens`` / ``threshold_percent``
  override the reserve-derived threshold.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Literal

__all__ = [
    "DEFAULT_RESERVE_TOKENS",
    "DEFAULT_KEEP_RECENT_TOKENS",
    "DEFAULT_CONTEXT_WINDOW",
    "BRANCH_SUMMARY_RESERVE_TOKENS",
    "Rules",
    "RulesDefaults",
    "rules_defaults",
    "CompactionSettings",
    "effective_reserve",
    "budget_reserve",
    "threshold_tokens",
    "should_compact",
    "reserve_window_warning",
    "branch_summary_budget",
]

DEFAULT_RESERVE_TOKENS = 16384
DEFAULT_KEEP_RECENT_TOKENS = 20000
DEFAULT_CONTEXT_WINDOW = 128000
"""The window both agents assume when the model does not declare one (branch summaries)."""
BRANCH_SUMMARY_RESERVE_TOKENS = 16384
RESERVE_FRACTION = 0.15

Rules = Literal["pi", "omp"]


@dataclass(frozen=True, slots=True)
class RulesDefaults:
    """What a rule set means when the user sets nothing else."""

    tokens: str
    """Token counter: pi's own estimate is opt-in; oh-my-pi counts with its byte heuristic."""
    calibrate: bool
    """Keep-recent calibration by the usage/estimate ratio (oh-my-pi always calibrates)."""


_RULES_DEFAULTS = {
    "pi": RulesDefaults(tokens="cl100k", calibrate=False),
    "omp": RulesDefaults(tokens="bytes", calibrate=True),
}


def rules_defaults(rules: str) -> RulesDefaults:
    """The counter and calibration ``rules`` implies unless overridden (``--tokens``,
    ``--calibrate`` / ``--no-calibrate``)."""
    return _RULES_DEFAULTS["omp" if rules == "omp" else "pi"]


@dataclass(frozen=True, slots=True)
class CompactionSettings:
    """What the user chose (or the defaults). ``None`` reserve means "not set"."""

    keep_recent_tokens: int = DEFAULT_KEEP_RECENT_TOKENS
    reserve_tokens: int | None = None
    context_window: int | None = None
    threshold_percent: float = -1
    threshold_tokens: float = -1
    rules: Rules = "pi"
    calibrate: bool | None = None
    """oh-my-pi's keep-recent calibration by the usage/estimate ratio (omp rules only; None =
    the rules' default: on, as oh-my-pi always calibrates)."""
    enabled: bool = True

    def with_changes(self, **changes: object) -> CompactionSettings:
        """A copy with some fields replaced."""
        return replace(self, **changes)  # type: ignore[arg-type]


def _finite_positive(value: float | None) -> bool:
    return value is not None and math.isfinite(value) and value > 0


def effective_reserve(window: int, settings: CompactionSettings) -> int:
    """Tokens kept free for the reply: pi uses the setting; omp takes at least 15% of the window."""
    reserve = (
        settings.reserve_tokens if settings.reserve_tokens is not None else DEFAULT_RESERVE_TOKENS
    )
    if settings.rules == "pi":
        return reserve
    return max(math.floor(window * RESERVE_FRACTION), reserve)


def budget_reserve(window: int, settings: CompactionSettings) -> int:
    """The reserve the threshold is computed from (oh-my-pi's ``resolveBudgetReserveTokens``).

    An unset reserve that would eat into the last 15% of the window is swapped for the
    proportional one; so is any reserve that is not smaller than the window.
    """
    effective = effective_reserve(window, settings)
    if settings.rules == "pi":
        return effective
    proportional = max(1, math.floor(window * RESERVE_FRACTION))
    unset = settings.reserve_tokens is None
    if (unset and effective >= window - proportional) or effective >= window:
        return proportional
    return effective


def check_threshold(name: str, value: object) -> None:
    """Refuse a ``threshold_percent`` or ``threshold_tokens`` value; the one rule for the
    flag, the config file and the variables. Any value <= 0 means unset, as in oh-my-pi's
    settings; a percent is at most 100.

    Raises:
        ValueError: naming ``name``: not a number, not finite, or a percent over 100."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{name}: {value!r} is not a number")
    if not math.isfinite(value):
        raise ValueError(f"{name}: {value!r} is not a finite number")
    if name == "threshold_percent" and value > 100:
        raise ValueError(f"{name}: {value} is over 100")


def whole_tokens(value: float) -> int:
    """A set (finite, positive) fixed threshold as the whole number of tokens it stands for
    (the one rule: the settings keep this figure, every view prints it, ``threshold_tokens``
    uses it, clamped below the window).

    oh-my-pi clamps a set ``thresholdTokens`` to at least 1 (``resolveThresholdTokens``), so
    0 < value < 1 is 1, never 0 (which would read as unset). Contexts are whole numbers of
    tokens, and compaction triggers strictly above the threshold (oh-my-pi keeps a fractional
    ``thresholdTokens`` and compares ``contextTokens > thresholdTokens``), so a fractional
    threshold acts as the whole number below it: floor.
    """
    return max(1, math.floor(value))


def threshold_tokens(window: int, settings: CompactionSettings) -> int:
    """Context size above which compaction triggers."""
    if settings.rules == "pi":
        # pi compares against window - reserve; a reserve at or above the window would give a
        # negative threshold (compact at any size): clamp it to 0, the same decision.
        return max(0, window - effective_reserve(window, settings))
    if _finite_positive(settings.threshold_tokens):
        return min(window - 1, whole_tokens(settings.threshold_tokens))
    if not _finite_positive(settings.threshold_percent):
        return max(0, min(window - 1, window - budget_reserve(window, settings)))
    percent = min(99.0, max(1.0, float(settings.threshold_percent)))
    return math.floor(window * percent / 100)


def should_compact(context_tokens: int, window: int, settings: CompactionSettings) -> bool:
    """True when ``context_tokens`` is strictly above the threshold for ``window``."""
    if not settings.enabled:
        return False
    if settings.rules == "omp" and window <= 0:
        return False
    return context_tokens > threshold_tokens(window, settings)


def reserve_window_warning(window: int | None, settings: CompactionSettings) -> str | None:
    """Why the threshold is clamped when the reserve is not smaller than ``window`` (else None).

    pi: the threshold ``window - reserve`` is clamped to 0, so any context compacts. omp: the
    reserve is swapped for the proportional one (``budget_reserve``).
    """
    if window is None or window <= 0:
        return None
    reserve = (
        settings.reserve_tokens if settings.reserve_tokens is not None else DEFAULT_RESERVE_TOKENS
    )
    if reserve < window:
        return None
    head = f"reserve {reserve} is not smaller than the context window {window}"
    if settings.rules == "pi":
        return f"{head}: the threshold is clamped to 0 (pi rules compact at any context size)"
    return (
        f"{head}: oh-my-pi rules use the proportional reserve "
        f"{budget_reserve(window, settings)} (15% of the window) instead"
    )


def branch_summary_budget(window: int | None, reserve: int | None = None) -> int:
    """Token budget for a branch summary's input: ``(window or 128000) - (reserve or 16384)``.

    Both agents use the raw reserve here (no 15% rule).
    """
    return (window or DEFAULT_CONTEXT_WINDOW) - (
        reserve if reserve is not None else BRANCH_SUMMARY_RESERVE_TOKENS
    )
