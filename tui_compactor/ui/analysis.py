"""The app's analysis views: the Window tab (what fills the window at the selected node), the
cut sweep in the plan pane, the hindsight audit of a selected compaction, and the compaction
timeline screen.

``AnalysisMixin`` is mixed into ``CompactorApp``. Each view is computed by the engine in a
thread worker (exclusive per view, so moving on replaces stale work) that posts one message;
the handlers here draw it if it still matches what is on screen.
"""

from __future__ import annotations

from typing import Any

from textual import work
from textual.css.query import NoMatches
from textual.message import Message
from textual.widgets import TabbedContent

from tui_compactor.ui.widgets.analysis import (
    BreakdownView,
    HindsightView,
    sweep_renderable,
)
from tui_compactor.ui.widgets.plan_view import PlanView

__all__ = ["AnalysisMixin", "BreakdownReady", "SweepReady", "HindsightReady"]


class BreakdownReady(Message):
    """The token breakdown at ``entry_index`` is computed."""

    def __init__(self, entry_index: int, breakdown: Any) -> None:
        super().__init__()
        self.entry_index = entry_index
        self.breakdown = breakdown


class SweepReady(Message):
    """The sweep over every valid cut of the plan of generation ``generation``."""

    def __init__(self, generation: int, sweep: Any) -> None:
        super().__init__()
        self.generation = generation
        self.sweep = sweep


class HindsightReady(Message):
    """The hindsight audit of the compaction at ``entry_index``."""

    def __init__(self, entry_index: int, audit: Any) -> None:
        super().__init__()
        self.entry_index = entry_index
        self.audit = audit


class AnalysisMixin:
    """Workers and handlers of the analysis views (see the module docstring)."""

    # Provided by CompactorApp.
    session: Any
    counter: Any
    token_cache: Any
    settings: Any

    @property
    def selected_entry(self) -> int | None:
        """The entry under the tree cursor (the app's state)."""
        raise NotImplementedError

    @property
    def plan_generation(self) -> int:
        """The latest plan request (the app's state)."""
        raise NotImplementedError

    def _analysis_ok(self) -> bool:
        return self.session is not None and getattr(self, "is_running", False)

    # ----- Window tab: what fills the window ---------------------------------------------

    def breakdown_shown(self) -> bool:
        """True while the Window tab is the visible one."""
        try:
            preview = self.query_one("#preview", TabbedContent)  # type: ignore[attr-defined]
        except NoMatches:
            return False
        return bool(preview.active == "tab-breakdown")

    def request_breakdown(self) -> None:
        """Measure the breakdown at the selected node (when the Window tab shows)."""
        if not self._analysis_ok() or self.selected_entry is None or not self.breakdown_shown():
            return
        view = self.query_one(BreakdownView)  # type: ignore[attr-defined]
        if view.shown_leaf == self.selected_entry:
            return
        view.show_pending(self.selected_entry)
        self.compute_breakdown(self.session, self.selected_entry, self.settings.compaction())

    @work(thread=True, exclusive=True, exit_on_error=False, group="breakdown")
    def compute_breakdown(self, session: Any, entry_index: int, settings: Any) -> None:
        """The engine's breakdown in a thread."""
        from tui_compactor.engine.breakdown import token_breakdown

        breakdown = token_breakdown(session, entry_index, self.counter, settings,
                                    self.token_cache)
        self.post_message(BreakdownReady(entry_index, breakdown))  # type: ignore[attr-defined]

    def on_breakdown_ready(self, message: BreakdownReady) -> None:
        """Draw it if the cursor is still there."""
        if not self._analysis_ok() or message.entry_index != self.selected_entry:
            return
        self.query_one(BreakdownView).show(message.breakdown, self.session)  # type: ignore[attr-defined]

    def on_breakdown_view_jump_requested(self, message: BreakdownView.JumpRequested) -> None:
        """Enter on one of the largest entries: move the tree cursor to it."""
        self._jump_into_tree(message.entry_index)

    # ----- plan pane: the sweep ----------------------------------------------------------

    def request_sweep(self, plan: Any, generation: int) -> None:
        """Sweep every valid cut of ``plan`` (after the plan itself is drawn)."""
        if not self._analysis_ok() or not plan.valid_cut_points:
            return
        self.show_sweep("sweeping every valid cut…", pending=True)
        self.compute_sweep(self.session, plan, self.settings.compaction(), generation)

    @work(thread=True, exclusive=True, exit_on_error=False, group="sweep")
    def compute_sweep(self, session: Any, plan: Any, settings: Any, generation: int) -> None:
        """The engine's sweep in a thread (the plan's token cache is shared)."""
        from tui_compactor.engine.deps import cut_sweep

        sweep = cut_sweep(session, plan.leaf, settings, self.counter, self.token_cache,
                          plan=plan)
        self.post_message(SweepReady(generation, sweep))  # type: ignore[attr-defined]

    def on_sweep_ready(self, message: SweepReady) -> None:
        """Draw the sweep under the plan (stale plans are dropped)."""
        if not self._analysis_ok() or message.generation != self.plan_generation:
            return
        self.show_sweep(sweep_renderable(message.sweep, self.session))

    def show_sweep(self, renderable: Any, *, pending: bool = False) -> None:
        """Put ``renderable`` in the plan pane's sweep area (``pending``: a message while the
        sweep is made; the last sweep stays, dimmed, so the pane keeps its height)."""
        try:
            view = self.query_one(PlanView)  # type: ignore[attr-defined]
        except NoMatches:
            return
        if pending:
            view.show_sweeping(renderable)
        else:
            view.show_sweep(renderable)

    # ----- details pane: hindsight of a compaction ---------------------------------------

    def request_hindsight(self) -> None:
        """Audit the selected entry when it is a compaction (else hide the audit)."""
        if not self._analysis_ok():
            return
        try:
            area = self.query_one(HindsightView)  # type: ignore[attr-defined]
        except NoMatches:
            return
        index = self.selected_entry
        if index is None or self.session.entries[index].type != "compaction":
            area.display = False
            return
        area.display = True
        area.show_pending()
        self.compute_hindsight(self.session, index, self.settings.rules)

    @work(thread=True, exclusive=True, exit_on_error=False, group="hindsight")
    def compute_hindsight(self, session: Any, entry_index: int, rules: str) -> None:
        """The engine's hindsight audit of one compaction, in a thread."""
        from tui_compactor.engine.hindsight import audit_compaction

        audit = audit_compaction(session, entry_index, rules)
        self.post_message(HindsightReady(entry_index, audit))  # type: ignore[attr-defined]

    def on_hindsight_ready(self, message: HindsightReady) -> None:
        """Show the audit under the entry's details."""
        if not self._analysis_ok() or message.entry_index != self.selected_entry:
            return
        self.query_one(HindsightView).show(message.audit)  # type: ignore[attr-defined]

    def on_hindsight_view_jump_requested(self, message: HindsightView.JumpRequested) -> None:
        """Enter on a lost fact or a re-read: move the tree cursor to where it was needed."""
        self._jump_into_tree(message.entry_index)

    def _jump_into_tree(self, entry_index: int) -> None:
        """Move the tree cursor to ``entry_index`` and give the tree the keys again."""
        from tui_compactor.ui.widgets.tree import SessionTree

        self._jump_to(entry_index, "entry")  # type: ignore[attr-defined]
        self.query_one(SessionTree).focus()  # type: ignore[attr-defined]

    # ----- the timeline screen -----------------------------------------------------------

    def action_timeline(self) -> None:
        """Open the compaction timeline; enter on a row jumps to it."""
        from tui_compactor.ui.screens.timeline import TimelineScreen

        if self.session is None:
            return

        def chosen(entry_index: int | None) -> None:
            if entry_index is not None:
                self._jump_to(entry_index, "entry")  # type: ignore[attr-defined]

        self.push_screen(  # type: ignore[attr-defined]
            TimelineScreen(self.session, self.counter, self.settings.rules), chosen)

    def action_inspect_requests(self) -> None:
        """Show the exact requests the shown plan's compaction would send (none is sent)."""
        from tui_compactor.ui.screens.requests import RequestsScreen

        plan = getattr(self, "plan", None)
        if self.session is None or plan is None or not plan.prepared:
            self.notify("plan first (c): the requests are the plan's", timeout=3)  # type: ignore[attr-defined]
            return
        try:
            summarizer = self.summarizer_for(compaction=True)  # type: ignore[attr-defined]
        except Exception as error:  # a config problem: say it, keep running
            self.notify(str(error)[:300], title="no summarizer", severity="error")  # type: ignore[attr-defined]
            return
        method, focus, replace = self.compaction_options  # type: ignore[attr-defined]
        options = {"method": method, "instructions": focus.strip() or None,
                   "replace_instructions": replace}
        self.push_screen(  # type: ignore[attr-defined]
            RequestsScreen(plan, self.session, summarizer, self.settings, options))

    def analysis_node_measured(self) -> None:
        """The cursor rested on a node: refresh the views that follow it."""
        self.request_breakdown()
        self.request_hindsight()
