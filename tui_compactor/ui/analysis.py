"""The app's analysis views: the Window tab (what fills the window at the selected node), the
cut sweep in the plan pane, the hindsight audit of a selected compaction, and the compaction
timeline screen.

``AnalysisMixin`` is mixed into ``CompactorApp``. Each view is computed by the engine in a
thread worker (exclusive per view, so moving on replaces stale work) on a consistent snapshot
of the session (``SessionHandle.read()``: a live-follow refresh waits until it is done) and
posts one message tagged with the snapshot's generation. The handlers draw it if it still
matches what is on screen and the session has not grown since; a result of an older
generation is dropped and computed again on the new state.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from textual.css.query import NoMatches
from textual.message import Message

from tui_compactor.ui.bindings import key_of
from tui_compactor.ui.widgets.tabs import TabbedPanes
from tui_compactor.ui.workers import work

if TYPE_CHECKING:
    from tui_compactor.engine.breakdown import TokenBreakdown
    from tui_compactor.engine.deps import CutSweep
    from tui_compactor.engine.hindsight import CompactionAudit
    from tui_compactor.engine.plan import CompactionPlan
    from tui_compactor.engine.settings import CompactionSettings
    from tui_compactor.engine.tokens import TokenCache, TokenCounter
    from tui_compactor.session.session import Session
    from tui_compactor.ui.state import AppState
    from tui_compactor.ui.widgets.analysis import BreakdownView, HindsightView
    from tui_compactor.ui.widgets.plan_view import PlanView
    from tui_compactor.workbench.handle import SessionHandle
    from tui_compactor.workbench.settings import Settings

__all__ = ["AnalysisMixin", "BreakdownReady", "SweepReady", "HindsightReady"]


class BreakdownReady(Message):
    """The token breakdown at ``entry_index``, measured at session generation ``generation``."""

    def __init__(self, entry_index: int, breakdown: TokenBreakdown, generation: int) -> None:
        super().__init__()
        self.entry_index = entry_index
        self.breakdown = breakdown
        self.generation = generation


class SweepReady(Message):
    """The sweep over every valid cut of the plan of request ``request``, computed at
    session generation ``generation``."""

    def __init__(self, request: int, sweep: CutSweep, generation: int) -> None:
        super().__init__()
        self.request = request
        self.sweep = sweep
        self.generation = generation


class HindsightReady(Message):
    """The hindsight audit of the compaction at ``entry_index``, at generation ``generation``."""

    def __init__(self, entry_index: int, audit: CompactionAudit, generation: int) -> None:
        super().__init__()
        self.entry_index = entry_index
        self.audit = audit
        self.generation = generation


class AnalysisMixin:
    """Workers and handlers of the analysis views (see the module docstring)."""

    # Provided by CompactorApp.
    state: AppState
    settings: Settings

    if TYPE_CHECKING:

        @property
        def session(self) -> Session | None: ...

        @property
        def handle(self) -> SessionHandle | None: ...

        @property
        def counter(self) -> TokenCounter: ...

        @property
        def token_cache(self) -> TokenCache | None: ...

    @property
    def selected_entry(self) -> int | None:
        """The entry under the tree cursor (the app's state)."""
        raise NotImplementedError

    @property
    def plan_generation(self) -> int:
        """The latest plan request (the app's state)."""
        raise NotImplementedError

    def _analysis_ok(self) -> bool:
        return self.handle is not None and getattr(self, "is_running", False)

    def _current(self, generation: int) -> bool:
        """A result of ``generation`` may be drawn: the app runs and the session has not
        grown since it was computed."""
        return (
            self._analysis_ok()
            and self.handle is not None
            and (generation == self.handle.generation)
        )

    # ----- Window tab: what fills the window ---------------------------------------------

    def breakdown_shown(self) -> bool:
        """True while the Window tab is the visible one."""
        try:
            preview = self.query_one(TabbedPanes)  # type: ignore[attr-defined]
        except NoMatches:
            return False
        return bool(preview.active == "tab-breakdown")

    def request_breakdown(self, *, again: bool = False) -> None:
        """Measure the breakdown at the selected node (when the Window tab shows);
        ``again``: even when the view shows that node (its result was stale)."""
        if not self._analysis_ok() or self.selected_entry is None or not self.breakdown_shown():
            return
        from tui_compactor.ui.widgets.analysis import BreakdownView

        selected = self.selected_entry

        def request(view: BreakdownView) -> None:
            if view.shown_leaf == selected and not again:
                return
            assert self.handle is not None and self.token_cache is not None
            view.show_pending(selected)
            settings = self.settings
            self.compute_breakdown(
                self.handle,
                selected,
                settings.counter(),
                settings.counter_label,
                settings.compaction(),
                self.token_cache,
            )

        self.with_view(BreakdownView, request)  # type: ignore[attr-defined]

    @work(thread=True, exclusive=True, exit_on_error=False, group="breakdown")
    def compute_breakdown(
        self,
        handle: SessionHandle,
        entry_index: int,
        counter: TokenCounter,
        counter_label: str,
        settings: CompactionSettings,
        cache: TokenCache,
    ) -> None:
        """The engine's breakdown in a thread, on one snapshot, named after the counter that
        made its figures (``counter_label``: as the app names it, marked when the estimate
        stands in for cl100k)."""
        from tui_compactor.engine.breakdown import token_breakdown

        with handle.read() as snapshot:
            breakdown = token_breakdown(snapshot.session, entry_index, counter, settings, cache)
            generation = snapshot.generation
        breakdown = dataclasses.replace(breakdown, counter_name=counter_label)
        self.post_message(BreakdownReady(entry_index, breakdown, generation))  # type: ignore[attr-defined]

    def on_breakdown_ready(self, message: BreakdownReady) -> None:
        """Draw it if the cursor is still there (measure again if the session grew)."""
        from tui_compactor.ui.widgets.analysis import BreakdownView

        if not self._analysis_ok() or message.entry_index != self.selected_entry:
            return
        if not self._current(message.generation):
            self.request_breakdown(again=True)
            return
        breakdown = message.breakdown
        if breakdown.counter_name != self.settings.counter_label:
            return  # counted before the counter changed: its count again is on its way
        self.with_view(  # type: ignore[attr-defined]
            BreakdownView,
            lambda view: view.show(breakdown, self.session),
        )

    def on_breakdown_view_jump_requested(self, message: BreakdownView.JumpRequested) -> None:
        """Enter on one of the largest entries: move the tree cursor to it."""
        self._jump_into_tree(message.entry_index)

    # ----- plan pane: the sweep ----------------------------------------------------------

    _swept: tuple[CutSweep, SessionHandle | None, int] | None = None
    """The sweep drawn last, the session handle and generation it was computed on."""

    def request_sweep(self, plan: CompactionPlan, request: int) -> None:
        """Sweep every valid cut of ``plan`` (after the plan itself is drawn). When ``plan``
        only moved the cut of the sweep drawn last (``[`` / ``]``), that sweep is drawn again
        for it at once: no worker, no "sweeping" frame."""
        if not self._analysis_ok():
            return
        if not plan.valid_cut_points:
            # Nothing to sweep (nothing to compact, as when the node is a compaction): the
            # last plan's sweep and its ✂ counts on the rows go with it. A plan refused at its
            # cut that has valid cuts is swept: the sweep shows what each of them would keep.
            from rich.text import Text

            from tui_compactor.ui.widgets.tree import SessionTree

            self.show_sweep(Text())
            self.query_one(SessionTree).set_cut_dependencies({})  # type: ignore[attr-defined]
            return
        from tui_compactor.engine.deps import sweep_for_plan

        swept = self._swept
        if swept is not None and swept[1] is self.handle and self._current(swept[2]):
            again = sweep_for_plan(swept[0], plan)
            if again is not None:
                self._draw_sweep(again, swept[2])
                return
        assert self.handle is not None and self.token_cache is not None
        self.show_sweep("sweeping every valid cut…", pending=True)
        self.compute_sweep(
            self.handle, plan, self.counter, self.settings.compaction(), self.token_cache, request
        )

    @work(thread=True, exclusive=True, exit_on_error=False, group="sweep")
    def compute_sweep(
        self,
        handle: SessionHandle,
        plan: CompactionPlan,
        counter: TokenCounter,
        settings: CompactionSettings,
        cache: TokenCache,
        request: int,
    ) -> None:
        """The engine's sweep in a thread, on one snapshot (the plan's token cache is
        shared)."""
        from tui_compactor.engine.deps import cut_sweep

        with handle.read() as snapshot:
            sweep = cut_sweep(snapshot.session, plan.leaf, settings, counter, cache, plan=plan)
            generation = snapshot.generation
        self.post_message(SweepReady(request, sweep, generation))  # type: ignore[attr-defined]

    def on_sweep_ready(self, message: SweepReady) -> None:
        """Draw the sweep under the plan. A sweep of an older plan request is dropped; one
        computed before the session grew is swept again (the plan is re-made on growth)."""
        if not self._analysis_ok() or message.request != self.plan_generation:
            return
        if not self._current(message.generation):
            plan = getattr(self, "plan", None)
            if plan is not None:
                self.request_sweep(plan, message.request)
            return
        self._draw_sweep(message.sweep, message.generation)

    def _draw_sweep(self, sweep: CutSweep, generation: int) -> None:
        """Draw ``sweep`` under the plan and its crossing counts on the tree's rows."""
        from tui_compactor.ui.widgets.analysis import sweep_renderable
        from tui_compactor.ui.widgets.tree import SessionTree

        self._swept = (sweep, self.handle, generation)
        self.show_sweep(sweep_renderable(sweep, self.session))
        self.query_one(SessionTree).set_cut_dependencies(  # type: ignore[attr-defined]
            {row.entry_index: row.dependencies for row in sweep.rows}
        )

    def show_sweep(self, renderable: Any, *, pending: bool = False) -> None:
        """Put ``renderable`` in the plan pane's sweep area (``pending``: a message while the
        sweep is made; the last sweep stays, dimmed, so the pane keeps its height)."""
        from tui_compactor.ui.widgets.plan_view import PlanView

        def show(view: PlanView) -> None:
            if pending:
                view.show_sweeping(renderable)
            else:
                view.show_sweep(renderable)

        self.with_view(PlanView, show, build=False)  # type: ignore[attr-defined]

    # ----- details pane: hindsight of a compaction ---------------------------------------

    def request_hindsight(self) -> None:
        """Audit the selected entry when it is a compaction (else hide the audit)."""
        if not self._analysis_ok():
            return
        index = self.selected_entry
        handle = self.handle
        assert handle is not None
        compaction = index is not None and handle.session.entries[index].type == "compaction"
        if not compaction and not self.pane_started("hindsight"):  # type: ignore[attr-defined]
            return  # nothing to hide
        from tui_compactor.ui.widgets.analysis import HindsightView

        def show(area: HindsightView) -> None:
            if index is None or not compaction:
                area.display = False
                return
            area.display = True
            area.show_pending()
            self.compute_hindsight(handle, index, self.settings.rules)

        # Built with the first compaction node shown (hidden until then).
        self.with_view(HindsightView, show, build=compaction)  # type: ignore[attr-defined]

    @work(thread=True, exclusive=True, exit_on_error=False, group="hindsight")
    def compute_hindsight(self, handle: SessionHandle, entry_index: int, rules: str) -> None:
        """The engine's hindsight audit of one compaction, in a thread, on one snapshot."""
        from tui_compactor.engine.hindsight import audit_compaction

        with handle.read() as snapshot:
            audit = audit_compaction(snapshot.session, entry_index, rules, handle.entry_facts())
            generation = snapshot.generation
        self.post_message(HindsightReady(entry_index, audit, generation))  # type: ignore[attr-defined]

    def on_hindsight_ready(self, message: HindsightReady) -> None:
        """Show the audit under the entry's details (audit again if the session grew: the
        entries after a compaction decide what it lost)."""
        from tui_compactor.ui.widgets.analysis import HindsightView

        if not self._analysis_ok() or message.entry_index != self.selected_entry:
            return
        if not self._current(message.generation):
            self.request_hindsight()
            return
        self.with_view(  # type: ignore[attr-defined]
            HindsightView,
            lambda area: area.show(message.audit),
        )

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

        if self.handle is None:
            return

        def chosen(entry_index: int | None) -> None:
            if entry_index is not None:
                self._jump_to(entry_index, "entry")  # type: ignore[attr-defined]

        # j, k, enter typed right after T move in its rows once they are computed.
        self.hold_keys()  # type: ignore[attr-defined]
        self.push_screen(  # type: ignore[attr-defined]
            TimelineScreen(self.handle, self.counter, self.settings.rules), chosen
        )

    def action_inspect_requests(self) -> None:
        """Show the exact requests the shown plan's compaction would send (none is sent)."""
        report = self.state.plan_report
        plan = report.plan if report is not None else None
        if self.handle is None or report is None or plan is None or not plan.prepared:
            said = f"plan first ({key_of(self, 'plan')}): the requests are the plan's"
            self.notify(said, timeout=3)  # type: ignore[attr-defined]
            return
        method, focus, replace = self.compaction_options  # type: ignore[attr-defined]
        options = {
            "method": method,
            "instructions": focus.strip() or None,
            "replace_instructions": replace,
        }
        self._show_requests(plan, report.generation, options, branch=False)

    def inspect_branch_requests(
        self, nav_plan: Any, generation: int, instructions: str | None, replace: bool
    ) -> None:
        """Show the exact requests the branch summary of ``nav_plan`` would send (none is
        sent), over the navigation dialog."""
        if self.handle is None:
            return
        options = {"instructions": instructions, "replace_instructions": replace}
        self._show_requests(nav_plan, generation, options, branch=True)

    def _show_requests(
        self, plan: Any, generation: int, options: dict[str, Any], *, branch: bool
    ) -> None:
        """Open the request inspector with the summarizer of a compaction or a branch summary;
        a configuration problem is said and nothing opens."""
        from tui_compactor.ui.screens.requests import RequestsScreen

        handle = self.handle
        if handle is None:
            return
        try:
            summarizer = self.summarizer_for(compaction=not branch)  # type: ignore[attr-defined]
        except Exception as error:  # a config problem: say it, keep running
            self.notify(str(error)[:300], title="no summarizer", severity="error")  # type: ignore[attr-defined]
            return
        self.push_screen(  # type: ignore[attr-defined]
            RequestsScreen(
                plan, generation, handle, summarizer, self.settings, options, branch=branch
            )
        )

    def analysis_node_measured(self) -> None:
        """The cursor rested on a node: refresh the views that follow it."""
        self.request_breakdown()
        self.request_hindsight()
