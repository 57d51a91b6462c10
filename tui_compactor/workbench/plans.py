"""The compaction plan both front-ends show, and the one rule for whether it may be run.

``make_plan`` is the only way the app and the commands plan a compaction: same settings
object, same counter, same cache rules, so ``plan``, ``compact`` and the app's plan pane cut at
the same entry by construction. ``run_refusal`` says why a plan may not be run or accepted
(``None`` when it may).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tui_compactor.engine.plan import CompactionPlan, prepare_compaction
from tui_compactor.engine.tokens import TokenCache
from tui_compactor.workbench.exits import Refusal

if TYPE_CHECKING:
    from tui_compactor.session.session import Session
    from tui_compactor.workbench.settings import Settings

__all__ = ["make_plan", "plan_refusal", "run_refusal"]


def make_plan(
    session: Session,
    leaf: int | None,
    settings: Settings,
    cut: int | None = None,
    *,
    cache: TokenCache | None = None,
) -> CompactionPlan:
    """Plan a compaction of the branch ending at ``leaf`` (None: the file's leaf).

    Args:
        session: the loaded session (a consistent snapshot when other threads refresh it).
        leaf: entry index of the node to compact at.
        settings: the resolved settings (keep-recent, reserve, rules, counter, calibration).
        cut: entry index of a manual cut point, or None for the computed one.
        cache: a token cache for ``session`` and ``settings.counter()`` to reuse, if any.
    """
    counter = settings.counter()
    if cache is None or cache.counter is not counter or cache.session is not session:
        cache = TokenCache(session, counter)
    plan = prepare_compaction(session, leaf, settings.compaction(), counter, cut, cache=cache)
    if cut is None and not settings.split_turns and plan.prepared and plan.is_split_turn:
        # "Don't split turns": cut where the split turn starts instead, so the whole turn is
        # kept and no turn-prefix summary is needed.
        turn_start = plan.branch[plan.turn_start_index]
        plan = prepare_compaction(
            session, leaf, settings.compaction(), counter, turn_start, cache=cache
        )
        plan.manual_cut = False  # the rule chose this cut, not the user
        plan.warnings.append(
            f"split turns are off: the cut moved back to the turn start #{turn_start}"
        )
    return plan


def plan_refusal(plan: CompactionPlan | None, settings: Settings | None) -> Refusal | None:
    """Why ``plan`` may not be run or accepted (the one rule; ``run_refusal`` words it); None
    when it may. ``settings`` None checks the plan alone (``actions.propose_compaction``)."""
    if plan is None:
        return Refusal("there is no plan yet", "plan")
    problem = settings.blocking_problem() if settings is not None else None
    if problem is not None:
        return Refusal(f"{problem.field} ({problem.source}): {problem.reason}", "settings")
    if not plan.prepared:
        return Refusal(plan.reason or "the plan was not prepared", "plan")
    if plan.is_empty:
        keep = plan.effective_keep_recent_tokens
        return Refusal(
            "nothing would be summarized: every message after the previous compaction is kept "
            f"(keep-recent {keep} tokens covers them)",
            "nothing-to-compact",
            "lower keep-recent or pick an earlier cut",
        )
    return None


def run_refusal(plan: CompactionPlan | None, settings: Settings) -> str | None:
    """Why ``plan`` may not be run or accepted, in words for the user; None when it may."""
    refusal = plan_refusal(plan, settings)
    if refusal is None:
        return None
    return f"{refusal.reason}; {refusal.hint}" if refusal.hint else refusal.reason
