"""The tui-compactor app: the session tree, the context gauge and chart, and the preview pane.

The app renders what the session, engine and summarize layers compute and dispatches work to
them; it holds no algorithm. Every slow call runs in a worker (``@work``); workers post a message
from ``ui.messages`` and only the handlers below touch widgets.
"""

from __future__ import annotations

import functools
import inspect
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar, cast

from rich.text import Text
from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, Vertical
from textual.css.query import NoMatches
from textual.notifications import SeverityLevel
from textual.reactive import reactive
from textual.widgets import Input, Static, TabbedContent, TabPane
from textual.worker import Worker, WorkerState, get_current_worker

from tui_compactor.config import Config
from tui_compactor.engine.tokens import TokenCache
from tui_compactor.textsafe import sanitize
from tui_compactor.ui.analysis import AnalysisMixin
from tui_compactor.ui.bindings import APP_BINDINGS, known_binding_ids, validated_keymap
from tui_compactor.ui.commands import CompactorCommands
from tui_compactor.ui.extras import SessionExtras, entry_search_text
from tui_compactor.ui.messages import (
    BranchSummaryProgress,
    ChartReady,
    CompactionAppendFailed,
    EntryAppended,
    GaugeData,
    GaugeReady,
    LoadFailed,
    LoadProgressed,
    NavigationPlanned,
    OutlineReady,
    PlanReady,
    SessionLoaded,
    SessionRefreshed,
    TokensCounted,
    WorkFailed,
)
from tui_compactor.ui.review import REVIEW_ACTIONS, ReviewKeys
from tui_compactor.ui.widgets.analysis import BreakdownView, HindsightView
from tui_compactor.ui.widgets.chart import ContextChart
from tui_compactor.ui.widgets.compaction import CompactionPanel
from tui_compactor.ui.widgets.context_view import ContextView, block_label, block_preview
from tui_compactor.ui.widgets.details import EntryDetails
from tui_compactor.ui.widgets.footer import StateFooter
from tui_compactor.ui.widgets.gauge import ContextGauge
from tui_compactor.ui.widgets.plan_view import PlanView
from tui_compactor.ui.widgets.status import LoadingBar, ReadOnlyBanner, SessionStatus
from tui_compactor.ui.widgets.summary_diff import SummaryDiff
from tui_compactor.ui.widgets.tree import SessionTree
from tui_compactor.workbench.settings import Settings

FILTER_NAMES = ("DEFAULT", "NO_TOOLS", "USER_ONLY", "LABELED", "ALL")
"""Outline filters in the order ``f`` cycles through them."""

TOKEN_BATCH = 400
"""Entries counted per message by the token worker (tail first)."""

FOLLOW_INTERVAL = 1.0
"""Seconds between live-follow checks of the open file."""

GAUGE_DEBOUNCE = 0.05
"""Seconds the cursor must rest before the context at it is measured."""

SETTINGS_DEBOUNCE = 0.3
"""Seconds after the last keystroke in a budget input before re-planning."""

REGION_STYLES = {
    "summarize": "on red",
    "turn_prefix": "on yellow",
    "keep": "on green",
    "metadata": "dim",
}
"""Legend swatches in the plan pane (the tree uses the theme's matching colours)."""


AppT = TypeVar("AppT", bound=type)


def _quiet_during_teardown(cls: AppT) -> AppT:
    """Let message handlers ignore missing widgets while the app is shutting down.

    Thread workers may post a result after the user quit; by the time it is handled the main
    screen's widgets are gone. That is not an error worth a traceback. At any other time a
    missing widget is a bug and still raises.
    """

    def wrap(handler: Callable[..., Any]) -> Callable[..., Any]:
        if inspect.iscoroutinefunction(handler):

            @functools.wraps(handler)
            async def async_wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
                try:
                    return await handler(self, *args, **kwargs)
                except NoMatches:
                    if self._exit or not self.is_running:
                        return None
                    raise

            return async_wrapper

        @functools.wraps(handler)
        def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
            try:
                return handler(self, *args, **kwargs)
            except NoMatches:
                if self._exit or not self.is_running:
                    return None
                raise

        return wrapper

    wrapped: dict[Any, Any] = {}
    for name, value in list(vars(cls).items()):
        if inspect.isfunction(value) and (name.startswith("on_") or hasattr(value, "_textual_on")):
            wrapped[value] = wrap(value)
            setattr(cls, name, wrapped[value])
    # ``@on`` handlers were collected when the class was created: point them at the wrappers.
    for handlers in vars(cls).get("_decorated_handlers", {}).values():
        handlers[:] = [(wrapped.get(method, method), selectors) for method, selectors in handlers]
    return cls


@_quiet_during_teardown
class CompactorApp(ReviewKeys, SessionExtras, AnalysisMixin, App[None]):
    """Inspector and workbench for pi / oh-my-pi session compaction."""

    CSS_PATH = Path(__file__).with_name("app.tcss")
    TITLE = "tui-compactor"
    BINDINGS = cast("list[BindingType]", APP_BINDINGS)
    COMMANDS = App.COMMANDS | {CompactorCommands}
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (160, "-wide")]
    VERTICAL_BREAKPOINTS = [(0, "-short"), (30, "-tall")]

    filter_index: reactive[int] = reactive(0, init=False)

    def __init__(
        self,
        path: Path | None = None,
        *,
        settings: Settings | None = None,
        config: Config | None = None,
        profile_name: str | None = None,
        follow: bool = True,
        append_quiet_seconds: float | None = None,
        sessions_dirs: list[Path] | None = None,
        picker_dirs_only: bool = False,
        ignore_agents: bool = False,
    ) -> None:
        super().__init__()
        self.session_path = Path(path) if path is not None else None
        self.sessions_dirs = list(sessions_dirs or [])
        self.picker_dirs_only = picker_dirs_only
        """The picker lists ``sessions_dirs`` only (``tui-compactor DIR``), not pi's and omp's."""
        if settings is None:
            settings = Settings.from_config(config or Config.model_validate({}))
        self.settings: Settings = settings
        """The resolved settings (``workbench.settings``); edits make a new copy."""
        self.config = settings.config
        self.profile_name = profile_name
        self.follow_enabled = follow
        self.append_quiet_seconds = append_quiet_seconds
        """Passed to the writer's live-writer check (None: the writer's default)."""
        self.ignore_agents = ignore_agents
        """The user's explicit override of the writer's running-agent refusal."""
        self.session: Any = None
        self.counter = settings.counter()
        self.token_cache: TokenCache | None = None
        self.folded: set[int] = set()
        self.selected_entry: int | None = None
        self.outline_generation = 0
        self.load_cancel = threading.Event()
        self.load_seconds: float | None = None
        self.search_query = ""
        self.plan: Any = None
        self.plan_cut: int | None = None
        self.plan_generation = 0
        self.plan_leaf: int | None = None
        self._settings_timer: Any = None
        self.config_problems: list[str] = []
        """Problems found in ``[ui]`` (unknown binding ids...), also shown as notifications."""
        self.user_keymap: dict[str, str] = {}
        """Binding id -> keys from the config (shown in help)."""
        self.refresh_lock = threading.Lock()
        """Serializes ``session.refresh()`` between live follow and our own appends."""
        self.run_after_plan = ""
        """``r`` without a plan: plan first, then run (``single`` or ``candidates``)."""
        self.compaction_options: tuple[str, str, bool] = ("soft", "", False)
        """Method, focus text and replace-the-prompt flag for the next compaction (plan pane)."""
        self.token_count_pending = False
        """Count tokens once the next rows are shown (what is visible is counted first)."""
        self.pending_targets: set[int] = set()
        """Targets of navigations still running."""
        self.gauge_data: GaugeData | None = None
        self.running_jobs = 0
        self._gauge_timer: Any = None
        self.gauge_debounce = GAUGE_DEBOUNCE
        """Seconds the cursor rests before measuring (tests set 0: measure at once)."""
        self.settings_debounce = SETTINGS_DEBOUNCE
        self._follow_timer: Any = None

    # ----- layout ------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        """Status, banner and progress on top; tree left; gauge, chart and tabs right."""
        yield SessionStatus(id="status")
        yield ReadOnlyBanner(id="banner")
        yield LoadingBar(id="loading")
        with Horizontal(id="main"):
            yield SessionTree(id="tree")
            with Vertical(id="side"):
                yield ContextGauge(id="gauge")
                yield ContextChart(id="chart")
                with TabbedContent(id="preview", initial="tab-details"):
                    with TabPane("Details", id="tab-details"):
                        yield EntryDetails(id="details")
                        yield HindsightView(id="hindsight")
                    with TabPane("Context", id="tab-context"):
                        yield ContextView(id="context")
                    with TabPane("Plan", id="tab-plan"):
                        yield PlanView(id="plan")
                    with TabPane("Diff", id="tab-diff"):
                        yield SummaryDiff(id="summary-diff")
                    with TabPane("Window", id="tab-breakdown"):
                        yield BreakdownView(id="breakdown")
                    with TabPane("Compaction", id="tab-compaction"):
                        with Vertical(id="compaction-host"):
                            yield Static(Text("plan with c, then r runs the compaction here "
                                              "(history and turn prefix side by side)",
                                              style="dim"), id="compaction-empty")
        yield Input(placeholder="search entries (enter: find, esc: close)", id="search")
        yield StateFooter()

    def on_mount(self) -> None:
        """Apply the theme and keymap, then start indexing the file."""
        self._apply_config()
        self.query_one("#search", Input).display = False
        self.query_one(SessionTree).focus()
        if self.session_path is not None:
            # Paint the (empty) window first, then start indexing: the indexer holds the GIL
            # in slices and would otherwise delay the first frame.
            self.call_after_refresh(self.open_session, self.session_path)
        else:
            self.pick_session()

    def pick_session(self) -> None:
        """Show UI-B's session picker; open what the user picks, quit if they close it."""
        from tui_compactor.session.discover import SessionRoot, default_session_roots
        from tui_compactor.ui.screens.picker import SessionPicker

        def chosen(path: Path | None) -> None:
            if path is None:
                if self.session is None:
                    self.exit()
                return
            self.session_path = Path(path)
            self.open_session(self.session_path)

        if self.picker_dirs_only:
            roots = [SessionRoot(Path(path).expanduser(), "dir") for path in self.sessions_dirs]
        else:
            roots = default_session_roots(extra=self.sessions_dirs)
        self.push_screen(SessionPicker(roots), chosen)

    def _apply_config(self) -> None:
        """Theme and keymap from ``[ui]`` of the config."""
        ui = self.config.ui
        if ui.theme in self.available_themes:
            self.theme = ui.theme
        if ui.keymap:
            tree_bindings = list(SessionTree.BINDINGS)  # type: ignore[arg-type]
            keymap, problems = validated_keymap(
                ui.keymap, known_binding_ids(APP_BINDINGS, tree_bindings)  # type: ignore[arg-type]
            )
            self.set_keymap(keymap)
            self.user_keymap = keymap
            self.config_problems = problems
            for problem in problems:
                self.notify(problem, title="config", severity="warning", timeout=15)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The review's keys exist only while a compaction is shown (footer stays short)."""
        if action in REVIEW_ACTIONS:
            return self.check_review_action(action, parameters)
        return True

    @property
    def filter_name(self) -> str:
        """The outline filter in use, as the user reads it."""
        return FILTER_NAMES[self.filter_index].lower().replace("_", " ")

    # ----- loading -----------------------------------------------------------------------

    def open_session(self, path: Path) -> None:
        """Start indexing ``path``; the window is already up and shows progress."""
        self.load_cancel = threading.Event()
        self.query_one(LoadingBar).start(path.name)
        self.load_session_file(path, self.load_cancel)

    @work(thread=True, exclusive=True, exit_on_error=False, group="index")
    def load_session_file(self, path: Path, cancel: threading.Event) -> None:
        """Index the file in a thread; posts progress and the loaded session."""
        from tui_compactor.session.reader import load_session

        started = time.perf_counter()
        last_post = 0.0

        def progress(report: Any) -> None:
            nonlocal last_post
            now = time.perf_counter()
            if now - last_post >= 0.1:
                last_post = now
                self.post_message(
                    LoadProgressed(report.bytes_done, report.bytes_total, report.entries)
                )

        try:
            session = load_session(path, progress=progress, cancel=cancel)
        except Exception as error:  # load_session promises not to raise; report if it does
            self.post_message(LoadFailed(str(path.name), f"{type(error).__name__}: {error}"))
            return
        self.post_message(SessionLoaded(session, time.perf_counter() - started))

    def on_load_progressed(self, message: LoadProgressed) -> None:
        """Move the progress bar."""
        self.query_one(LoadingBar).advance(message.bytes_done, message.bytes_total,
                                           message.entries)

    def on_load_failed(self, message: LoadFailed) -> None:
        """Say the file could not be read at all."""
        self.query_one(LoadingBar).stop()
        self.notify(sanitize(f"{message.path}: {message.error}"), title="cannot open",
                    severity="error", timeout=10)

    def on_session_loaded(self, message: SessionLoaded) -> None:
        """Show the session: status, banner, diagnostics, outline, token counts, follow."""
        self.query_one(LoadingBar).stop()
        previous = self.session
        self.session = message.session
        self.load_seconds = message.seconds
        self.settings = self.settings.for_session(self.session)  # rules follow the session
        self.counter = self.settings.counter()
        self.token_cache = TokenCache(self.session, self.counter)
        self.plan = None
        self.plan_cut = None
        if not self.settings.window_configured:
            self._adopt_model_window()
        tree = self.query_one(SessionTree)
        tree.token_counts.clear()
        tree.set_plan({}, None)
        self.query_one(ReadOnlyBanner).show_reason(self.session.append_refusal)
        self._update_status()
        self._report_diagnostics()
        self._report_orphaned_appends()
        if not self.session.complete:
            self.notify(f"stopped after {len(self.session.entries):,} entries: showing what was "
                        "read (read-only)", title="indexing stopped", severity="warning")
        keep = self.selected_entry if previous is not None else self.session.leaf
        self.rebuild_outline(keep_entry=keep)
        self.token_count_pending = True  # started once the rows (and what is visible) exist
        self.measure_chart(self.session)
        if self.follow_enabled and self.session.complete and self._follow_timer is None:
            self._follow_timer = self.set_interval(FOLLOW_INTERVAL, self._follow_tick)

    def action_toggle_rules(self) -> None:
        """Plan, count and rebuild the context under the other rule set (pi <-> oh-my-pi)."""
        if self.session is None:
            return
        from tui_compactor.engine.tokens import TokenCache

        other = "pi" if self.settings.rules == "omp" else "omp"
        self.settings = self.settings.edited("app", rules=other)
        self.counter = self.settings.counter()
        self.token_cache = TokenCache(self.session, self.counter)
        self.query_one(SessionTree).token_counts.clear()
        self.token_count_pending = True
        self._update_status()
        self.rebuild_outline()
        self._apply_settings()
        self.notify(f"{other} rules ({'oh-my-pi' if other == 'omp' else 'pi'}): plan, context "
                    f"and tokens ({getattr(self.counter, 'name', '?')}) follow", timeout=4)

    def _adopt_model_window(self) -> None:
        """Use the window of the session's own model (at the file's leaf) when it is known."""
        from tui_compactor.workbench.settings import with_session_window

        self.settings = with_session_window(self.settings, self.session)

    def _report_diagnostics(self) -> None:
        """One notification summing up load problems (details are in `tui-compactor lint`)."""
        diagnostics = self.session.diagnostics
        if not diagnostics:
            return
        first_problem = diagnostics[0]
        where = Path(first_problem.path).name + (
            f":{first_problem.line}" if first_problem.line is not None else "")
        first = sanitize(f"{where}: {first_problem.message}", single_line=True, max_len=160)
        more = f" (+{len(diagnostics) - 1} more; I lists them)" if len(diagnostics) > 1 else ""
        verdict = str(self.session.verdict)
        severity: SeverityLevel = "error" if verdict in ("refuse", "read-only") else "warning"
        self.notify(first + more, title=f"{verdict}: {len(diagnostics)} issues",
                    severity=severity, timeout=8)

    def _report_orphaned_appends(self) -> None:
        """Say so when an agent's later entry left one of our appends off the active path, and
        how to put it back (the same finding and fix as `tui-compactor lint`)."""
        from tui_compactor.session.agents import orphaned_appends

        for orphan in orphaned_appends(self.session):
            text = orphan.message(self.session) + " Here: select it and press enter (navigate)."
            self.notify(sanitize(text, max_len=700),
                        title="an agent left our entry behind", severity="warning", timeout=15)

    def _update_status(self) -> None:
        """Refresh the status line."""
        if self.session is None:
            return
        self.query_one(SessionStatus).show(
            self.session,
            filter_name=self.filter_name,
            counter_name=getattr(self.counter, "name", "?"),
            jobs=self.running_jobs,
            following=self._follow_timer is not None,
            rules=self.settings.rules,
            rules_source=self.settings.source_of("rules"),
        )

    # ----- outline -----------------------------------------------------------------------

    def rebuild_outline(self, keep_entry: int | None = None) -> None:
        """Rebuild the tree rows off the UI thread (fold, filter, refresh)."""
        if self.session is None:
            return
        self.outline_generation += 1
        if keep_entry is None:
            keep_entry = self.selected_entry
        self.build_rows(self.session, set(self.folded), self.filter_index, keep_entry,
                        self.outline_generation)

    @work(thread=True, exclusive=True, exit_on_error=False, group="outline")
    def build_rows(
        self, session: Any, folded: set[int], filter_index: int, keep_entry: int | None,
        generation: int,
    ) -> None:
        """Flatten the session into rows in a thread."""
        from tui_compactor.session.outline import OutlineFilter, build_outline

        view = getattr(OutlineFilter, FILTER_NAMES[filter_index])
        rows = build_outline(session, folded=folded, view=view)
        self.post_message(OutlineReady(rows, keep_entry, generation))

    def on_outline_ready(self, message: OutlineReady) -> None:
        """Show the rows (stale generations are dropped)."""
        if message.generation != self.outline_generation:
            return
        tree = self.query_one(SessionTree)
        tree.set_rows(self.session, message.rows, message.keep_entry)
        if self.token_count_pending:
            self.token_count_pending = False
            self.start_token_count()
        if not message.rows:
            self.query_one(ContextGauge).show(None, "no entries to show with this filter")

    @on(SessionTree.Highlighted)
    def _entry_highlighted(self, message: SessionTree.Highlighted) -> None:
        """Show the entry and, after a short rest, measure the context at it."""
        self.selected_entry = message.entry_index
        entry = self.session.entries[message.entry_index]
        tokens = self.token_cache.entry_tokens(message.entry_index) if self.token_cache else None
        self.query_one(EntryDetails).show_entry(entry, tokens,
                                                self.session.label_of(message.entry_index))
        tree = self.query_one(SessionTree)
        row = tree.rows[tree.row_of_entry[message.entry_index]] \
            if message.entry_index in tree.row_of_entry else None
        on_path = row is not None and row.on_active_path
        # The chart is the active path's: mark a column only for nodes on that path.
        self.query_one(ContextChart).select(message.entry_index if on_path else None)
        if self.query_one("#preview", TabbedContent).active == "tab-diff":
            self.show_summary_diff()
        if self._gauge_timer is not None:
            self._gauge_timer.stop()
        if self.gauge_debounce <= 0:
            self._measure_selected()
        else:
            self._gauge_timer = self.set_timer(self.gauge_debounce, self._measure_selected)

    def _measure_selected(self) -> None:
        """Start measuring the context at the selected entry (and count what is on screen)."""
        if self.session is not None and self.selected_entry is not None:
            self.measure_node(self.session, self.selected_entry, self.settings)
            self._count_visible_first()
            self.analysis_node_measured()

    def _count_visible_first(self) -> None:
        """Rows on screen without a token count: restart counting with them first (counts
        already made are cached, so a restart costs little)."""
        from tui_compactor.engine.messages import MESSAGE_BEARING_TYPES

        tree = self.query_one(SessionTree)
        top = int(tree.scroll_y)
        entries = self.session.entries
        missing = any(
            row.index not in tree.token_counts and entries[row.index].type in MESSAGE_BEARING_TYPES
            for row in tree.rows[top: top + tree.size.height]
        )
        if missing and not self.token_count_pending:
            self.start_token_count()

    @on(SessionTree.FoldToggled)
    def _fold_toggled(self, message: SessionTree.FoldToggled) -> None:
        """Fold or unfold a branch point and rebuild the rows."""
        if message.entry_index in self.folded:
            self.folded.discard(message.entry_index)
        else:
            self.folded.add(message.entry_index)
        self.rebuild_outline(keep_entry=message.entry_index)

    # ----- tokens, gauge, chart ----------------------------------------------------------

    def start_token_count(self) -> None:
        """Count tokens per entry in a worker: rows on screen first, then newest first."""
        tree = self.query_one(SessionTree)
        top = int(tree.scroll_y)
        visible = [row.index for row in tree.rows[top: top + tree.size.height + 1]]
        self.count_tokens(self.session, self.token_cache, visible)

    @work(thread=True, exclusive=True, exit_on_error=False, group="tokens")
    def count_tokens(self, session: Any, cache: Any, first: list[int] | None = None) -> None:
        """Count tokens per entry (thread); posts batches at most ~10 times a second."""
        worker = get_current_worker()
        batch: dict[int, int] = {}
        last_post = time.monotonic()
        order = list(first or []) + list(range(len(session.entries) - 1, -1, -1))
        for done, index in enumerate(order, 1):
            if worker.is_cancelled:
                return
            tokens = cache.entry_tokens(index)
            if tokens is not None:
                batch[index] = tokens
            if done % TOKEN_BATCH == 0:
                time.sleep(0)  # let the UI thread take the GIL between batches
                now = time.monotonic()
                if batch and (now - last_post >= 0.1 or done == len(first or [])):
                    self.post_message(TokensCounted(batch))
                    batch, last_post = {}, now
            elif done == len(first or []) and batch:
                self.post_message(TokensCounted(batch))  # the screenful, at once
                batch, last_post = {}, time.monotonic()
        if batch:
            self.post_message(TokensCounted(batch))

    def on_tokens_counted(self, message: TokensCounted) -> None:
        """Show a batch of counts in the tree."""
        self.query_one(SessionTree).add_token_counts(message.counts)

    @work(thread=True, exclusive=True, exit_on_error=False, group="gauge")
    def measure_node(self, session: Any, entry_index: int, settings: Settings) -> None:
        """Build the context at a node and estimate its size (thread)."""

        from tui_compactor.engine.context import build_context, estimate_context_tokens, item_tokens
        from tui_compactor.engine.settings import (
            effective_reserve,
            should_compact,
            threshold_tokens,
        )

        cache = self.token_cache
        if cache is None:
            return
        context = build_context(session, entry_index, rules=settings.rules)
        estimate = estimate_context_tokens(context, self.counter, cache)
        window = settings.context_window
        window_model = settings.window_model
        engine_settings = settings.compaction()
        blocks: list[tuple[str, str, int, int | None]] = []
        for item in context.items:
            if getattr(item, "excluded", False):
                continue
            message = item.message if isinstance(item.message, dict) else {}
            tokens = item_tokens(item, self.counter, cache)
            entry = session.entries[item.entry_index]
            blocks.append((block_label(item, message, entry), block_preview(message, entry),
                           tokens, item.entry_index))
        data = GaugeData(
            entry_index=entry_index,
            tokens=estimate.tokens,
            local_estimate=cast(int, estimate.local_estimate),  # local=True: always computed
            usage_tokens=estimate.usage_tokens if estimate.last_usage_index is not None else None,
            window=window,
            reserve=effective_reserve(window, engine_settings) if window else None,
            threshold=threshold_tokens(window, engine_settings) if window else None,
            keep_recent=settings.keep_recent_tokens,
            should_compact=window is not None
            and should_compact(estimate.tokens, window, engine_settings),
            blocks=blocks,
            window_assumed=not settings.window_configured and window_model is None,
            window_model=window_model,
        )
        self.post_message(GaugeReady(data))

    def on_gauge_ready(self, message: GaugeReady) -> None:
        """Draw the gauge and the context view for the selected node."""
        if message.data.entry_index != self.selected_entry:
            return
        self.gauge_data = message.data
        self.query_one(ContextGauge).show(message.data)
        self.query_one(ContextView).show(message.data)

    @work(thread=True, exclusive=True, exit_on_error=False, group="chart")
    def measure_chart(self, session: Any) -> None:
        """Context size after every assistant turn on the active path (from usage data)."""
        from tui_compactor.engine.context import usage_tokens

        points: list[tuple[int, int]] = []
        compactions: list[int] = []
        leaf = session.leaf
        path = session.path_to(leaf) if leaf is not None else []
        for index in path:
            entry = session.entries[index]
            if entry.type == "compaction":
                if points:
                    compactions.append(len(points) - 1)
                continue
            if entry.role != "assistant":  # known from the index: no record load
                continue
            message = entry.message
            if not message:
                continue
            usage = message.get("usage")
            if isinstance(usage, dict):
                total = usage_tokens(usage)
                if total:
                    points.append((index, total))
        self.post_message(ChartReady(points, compactions))

    def on_chart_ready(self, message: ChartReady) -> None:
        """Draw the chart."""
        window = self.settings.context_window
        threshold = None
        if window:
            from tui_compactor.engine.settings import threshold_tokens

            threshold = threshold_tokens(window, self.settings.compaction())
        self.query_one(ContextChart).show(message.points, message.compactions, window, threshold)

    # ----- plan --------------------------------------------------------------------------

    def action_plan(self) -> None:
        """Plan a compaction with the selected node as the leaf (no LLM involved)."""
        if self.session is None or self.selected_entry is None:
            return
        self.plan_leaf = self.selected_entry
        self.plan_cut = None
        self.query_one(PlanView).show_settings(self.settings)
        self.query_one(PlanView).show_more_settings(self.settings)
        self.action_show_tab("tab-plan")
        self.request_plan()

    def request_plan(self) -> None:
        """(Re)start planning for the current leaf, cut and settings."""
        if self.session is None or self.plan_leaf is None:
            return
        self.plan_generation += 1
        self.query_one(PlanView).show_message(f"planning at #{self.plan_leaf}…")
        self.make_plan(self.session, self.plan_leaf, self.settings, self.plan_cut,
                       self.plan_generation)

    @work(thread=True, exclusive=True, exit_on_error=False, group="plan")
    def make_plan(self, session: Any, leaf: int, settings: Settings, cut: int | None,
                  generation: int) -> None:
        """Plan in a thread (``workbench.plans``), with everything the pane shows computed."""
        from tui_compactor.workbench.plans import make_plan, run_refusal

        plan = make_plan(session, leaf, settings, cut, cache=self.token_cache)
        refusal = run_refusal(plan, settings)
        regions: dict[int, str] = {}
        cut_entry = None
        if plan.prepared:
            # Computed here, off the UI thread (cached on the plan): the pane only reads them.
            _ = plan.region_tokens, plan.file_ops
            regions = {entry_index: plan.region_of(position)
                       for position, entry_index in enumerate(plan.branch)}
            cut_entry = plan.branch[plan.first_kept_index]
        self.post_message(PlanReady(plan, generation, regions, cut_entry, refusal))

    def on_plan_ready(self, message: PlanReady) -> None:
        """Colour the tree by region and describe the plan."""
        if message.generation != self.plan_generation:
            return
        plan = message.plan
        self.plan = plan
        tree = self.query_one(SessionTree)
        tree.set_plan(message.regions, message.cut_entry)
        if self.run_after_plan:
            mode, self.run_after_plan = self.run_after_plan, ""
            self._start_compaction(candidates=mode == "candidates")
        if self.plan_cut is not None and message.cut_entry in tree.row_of_entry:
            tree.scroll_to_center_row(tree.row_of_entry[message.cut_entry])
        self.query_one(PlanView).show_plan(plan, self.session, REGION_STYLES, message.refusal,
                                           self._fold_notes(plan))
        self.request_sweep(plan, message.generation)

    def _fold_notes(self, plan: Any) -> list[str]:
        """Regions the compaction summarizer must fold (its window is smaller than them)."""
        from tui_compactor.summarize.compaction import fold_notes

        try:
            summarizer = self.summarizer_for(compaction=True)
        except Exception:  # noqa: BLE001 - a bad profile is reported when a run starts
            return []
        if getattr(summarizer, "offline", False):
            return []  # the offline summarizer reads any size at once
        return fold_notes(plan, summarizer.context_window, self.settings.reserve_tokens)

    def _move_cut(self, step: int) -> None:
        """Snap the cut to the previous (-1) or next (+1) valid cut point."""
        plan = self.plan
        if plan is None or not plan.prepared:
            self.notify("press c to plan first", timeout=2)
            return
        cuts = sorted(plan.valid_cut_points)
        current = plan.first_kept_index
        if step < 0:
            candidates = [cut for cut in cuts if cut < current]
            chosen = candidates[-1] if candidates else None
        else:
            candidates = [cut for cut in cuts if cut > current]
            chosen = candidates[0] if candidates else None
        if chosen is None:
            self.notify("no valid cut point further " + ("back" if step < 0 else "on"),
                        timeout=2)
            return
        self.plan_cut = plan.branch[chosen]
        self.request_plan()

    def action_cut_earlier(self) -> None:
        """Move the cut to the previous valid cut point (summarize less)."""
        self._move_cut(-1)

    def action_cut_later(self) -> None:
        """Move the cut to the next valid cut point (summarize more)."""
        self._move_cut(1)

    def action_edit_settings(self) -> None:
        """Edit keep-recent / reserve / window in place."""
        self.action_show_tab("tab-plan")
        plan_view = self.query_one(PlanView)
        plan_view.show_settings(self.settings)
        plan_view.show_more_settings(self.settings)
        plan_view.focus_inputs()

    @on(PlanView.SettingsEdited)
    def _settings_edited(self, message: PlanView.SettingsEdited) -> None:
        """Re-plan and re-measure shortly after the user stops typing.

        Any figures are accepted; the plan pane says why settings that make no sense cannot
        be run (``Settings.problems``).
        """
        changes: dict[str, int | None] = {
            "keep_recent_tokens": message.keep_recent, "reserve_tokens": message.reserve,
        }
        if message.window is not None and message.window != self.settings.context_window:
            changes["context_window"] = message.window  # the user's figure now, not the model's
        try:
            self.settings = self.settings.edited("app", **changes)
        except ValueError as error:
            self.notify(str(error), title="setting not applied", severity="warning")
            return
        if self._settings_timer is not None:
            self._settings_timer.stop()
        if self.settings_debounce <= 0:
            self._apply_settings()
        else:
            self._settings_timer = self.set_timer(self.settings_debounce, self._apply_settings)

    @on(PlanView.MoreSettingsEdited)
    def _more_settings_edited(self, message: PlanView.MoreSettingsEdited) -> None:
        """Thresholds, split turns, branch summaries, summarizer effort and window."""
        try:
            self.settings = self.settings.edited("app", **message.changes)
        except ValueError as error:
            self.notify(sanitize(str(error), max_len=200), title="setting not changed",
                        severity="warning", timeout=5)
            return
        if self._settings_timer is not None:
            self._settings_timer.stop()
        if self.settings_debounce <= 0:
            self._apply_settings()
        else:
            self._settings_timer = self.set_timer(self.settings_debounce, self._apply_settings)

    @on(PlanView.OptionsEdited)
    def _options_edited(self, message: PlanView.OptionsEdited) -> None:
        """Method and focus of the next compaction (``--method`` / ``--instructions``)."""
        self.compaction_options = (message.method, message.focus, message.replace)

    def _apply_settings(self) -> None:
        """The budget changed: plan, gauge and chart follow."""
        self.plan_cut = None
        self.request_plan()
        self._measure_selected()
        if self.session is not None:
            self.measure_chart(self.session)

    def clear_plan(self) -> None:
        """Remove the plan marks from the tree."""
        self.plan = None
        self.plan_leaf = None
        self.plan_cut = None
        self.plan_generation += 1
        self.query_one(SessionTree).set_plan({}, None)
        self.query_one(PlanView).show_message("press c for the compaction plan of the "
                                              "selected node")

    # ----- compaction --------------------------------------------------------------------

    @property
    def compaction_panel(self) -> Any:
        """UI-B's panel of the current compaction, if one is shown."""
        panels = self.query(CompactionPanel)
        return panels.first() if panels else None

    def action_run_compaction(self) -> None:
        """Run the shown plan: summaries stream in the Compaction tab while the user browses."""
        self._start_compaction(candidates=False)

    def action_run_candidates(self) -> None:
        """Run the plan with several profiles side by side, to compare before accepting."""
        self._start_compaction(candidates=True)

    def candidate_summarizers(self) -> list[Any]:
        """The compaction profile first, then the other configured ones and offline (max 3)."""
        from tui_compactor.config import OFFLINE_PROFILE
        from tui_compactor.summarize.providers import make_summarizer

        chosen = [self.summarizer_for(compaction=True)]
        profiles = list(self.config.profiles.values()) + [OFFLINE_PROFILE]
        for profile in profiles:
            if len(chosen) >= 3:
                break
            if all(profile.label != summarizer.label for summarizer in chosen):
                chosen.append(make_summarizer(self.settings.summarizer_profile(profile)))
        return chosen

    def _start_compaction(self, *, candidates: bool) -> None:
        """Checks, then UI-B's panel with one job per summarizer."""
        if self.session is None:
            return
        if self.compaction_options[0] == "shake":  # a preview: no plan, summarizer or write
            leaf = self.plan.leaf if self.plan is not None else self.selected_entry
            if leaf is not None:
                self.preview_shake(self.session, leaf, self.settings)
            return
        if self.plan is None:
            self.run_after_plan = "candidates" if candidates else "single"
            self.action_plan()
            return
        from tui_compactor.workbench.plans import run_refusal

        refusal = run_refusal(self.plan, self.settings)
        if refusal is not None:
            self.notify(sanitize(refusal, max_len=300), title="cannot compact",
                        severity="warning", timeout=8)
            return
        panel = self.compaction_panel
        if panel is not None and panel.running:
            self.notify("a compaction is already running (esc cancels it)", timeout=3)
            return
        from tui_compactor.summarize.compaction import CompactionJob

        try:
            summarizers = (self.candidate_summarizers() if candidates
                           else [self.summarizer_for(compaction=True)])
        except Exception as error:
            self.notify(sanitize(str(error), max_len=300), title="no summarizer",
                        severity="error")
            return
        if candidates and len(summarizers) < 2:
            self.notify(sanitize(no_candidates_text(), max_len=600),
                        title="nothing to compare", severity="warning", timeout=15)
            return
        method, focus, replace = self.compaction_options
        jobs = [CompactionJob(self.plan, self.session, summarizer, self.settings.compaction(),
                              files_format=self.settings.files_format,
                              method=method,  # type: ignore[arg-type]
                              instructions=focus.strip() or None, replace_instructions=replace)
                for summarizer in summarizers]
        host = self.query_one("#compaction-host", Vertical)
        host.remove_children()
        # A file the append gate refuses can still be summarized and reviewed (as
        # `compact --dry-run` can); the panel keeps Accept disabled and shows why.
        panel = CompactionPanel(jobs, accept_refusal=self.session.append_refusal)
        host.mount(panel)
        self.action_show_tab("tab-compaction")
        self.open_review(panel)
        names = ", ".join(sanitize(summarizer.label, max_len=40) for summarizer in summarizers)
        self.notify(f"compacting with {names}: a accepts, d discards, esc cancels, "
                    "z zooms in and out", timeout=4)

    @work(thread=True, exclusive=True, exit_on_error=False, group="shake")
    def preview_shake(self, session: Any, leaf: int, settings: Settings) -> None:
        """oh-my-pi's three shake configs at ``leaf``, and the context size now (thread)."""
        from tui_compactor.engine.shake import SHAKE_CONFIGS, context_after_shake, shake_preview

        counter = settings.counter()
        previews = [shake_preview(session, leaf, name, counter) for name in SHAKE_CONFIGS]
        sizes = [context_after_shake(session, leaf, preview, counter) for preview in previews]
        self.call_from_thread(self._show_shake, previews, sizes, leaf)

    def _show_shake(self, previews: list[Any], sizes: list[tuple[int, int]], leaf: int) -> None:
        """Show a shake preview in the Compaction tab (nothing can be accepted)."""
        from tui_compactor.ui.widgets.shake_view import ShakeView

        host = self.query_one("#compaction-host", Vertical)
        host.remove_children()
        host.mount(ShakeView(previews, sizes, leaf))
        self.call_after_refresh(self.refresh_bindings)
        self.action_show_tab("tab-compaction")
        self.notify("shake preview: oh-my-pi writes shakes by rewriting the file, so this is "
                    "shown only", timeout=4)

    def action_accept_compaction(self) -> None:
        """Accept the finished compaction (the panel posts Accepted)."""
        panel = self.compaction_panel
        if panel is None:
            self.notify("nothing to accept: plan with c, run with r", timeout=2)
            return
        panel.accept()

    def action_discard_compaction(self) -> None:
        """Discard the compaction (cancels it if still running); nothing is written."""
        panel = self.compaction_panel
        if panel is not None:
            panel.discard()

    @on(CompactionPanel.Discarded)
    def _compaction_discarded(self, message: CompactionPanel.Discarded) -> None:
        """Nothing was written; say so."""
        outcome = ("compaction cancelled: nothing written" if message.cancelled
                   else "compaction discarded: nothing written")
        self.close_review(outcome)
        self.notify(outcome, timeout=3)

    @on(CompactionPanel.Failed)
    def _compaction_failed(self, message: CompactionPanel.Failed) -> None:
        """No candidate produced a summary."""
        self.refresh_bindings()
        self.notify(sanitize(message.error, max_len=400),
                    title="compaction failed: nothing written", severity="error", timeout=10)

    @on(CompactionPanel.Accepted)
    def _compaction_accepted(self, message: Any) -> None:
        """Append the accepted compaction in a thread."""
        self.refresh_bindings()
        self.running_jobs += 1
        self._update_status()
        self.append_compaction(message.panel, message.job, message.result)

    @work(thread=True, exclusive=True, exit_on_error=False, group="accept")
    def append_compaction(self, panel: Any, job: Any, result: Any) -> None:
        """The writer appends the compaction entry at the plan's leaf (thread)."""
        try:
            job.accept(result, **self.append_options())
        except Exception as error:
            self.post_message(CompactionAppendFailed(panel, _error_text(error)))
            return
        added = self.refresh_after_append()
        self.post_message(EntryAppended("compaction", "compaction appended: the agent will "
                                        "resume from its summary", added,
                                        added[-1] if added else None))

    def on_compaction_append_failed(self, message: CompactionAppendFailed) -> None:
        """Say why nothing was written; the panel may accept again."""
        self.running_jobs = max(0, self.running_jobs - 1)
        self._update_status()
        message.panel.reopen()
        self.refresh_bindings()
        self.notify(sanitize(message.error, max_len=400), title="not written",
                    severity="error", timeout=10)

    # ----- writing: navigate, undo --------------------------------------------------------

    def append_options(self) -> dict[str, Any]:
        """Options for the writer: we refresh the session ourselves, under our lock."""
        options: dict[str, Any] = {"refresh": False}
        if self.append_quiet_seconds is not None:
            options["quiet_seconds"] = self.append_quiet_seconds
        if self.ignore_agents:
            options["ignore_agents"] = True
        return options

    def refresh_after_append(self) -> list[int]:
        """Re-read what the writer appended (thread side); returns the new entry indices."""
        with self.refresh_lock:
            result = self.session.refresh()
        return list(result.added)

    def summarizer_for(self, *, compaction: bool) -> Any:
        """The summarizer of the configured profile (offline without a config)."""
        from tui_compactor.summarize.providers import make_summarizer

        if compaction:
            profile = self.config.summarizer_profile(self.profile_name)
        else:
            profile = self.config.profile(self.profile_name)
        return make_summarizer(self.settings.summarizer_profile(profile))

    @on(SessionTree.Selected)
    def _node_selected(self, message: SessionTree.Selected) -> None:
        """Enter on a node: plan the move (worker), then ask how to leave the current branch."""
        if self.session is None or not self.session.complete:
            return
        if message.entry_index in self.pending_targets:
            self.notify("a summary for this node is already running", timeout=3)
            return
        self.plan_move(self.session, message.entry_index, self.settings)

    @work(thread=True, exclusive=True, exit_on_error=False, group="navplan")
    def plan_move(self, session: Any, target: int, settings: Settings) -> None:
        """Collect the branch being left and what fits the summary budget (thread)."""
        from tui_compactor.engine.branch import plan_navigation

        nav_plan = plan_navigation(session, session.leaf, target, self.counter,
                                   settings.branch_budget(),
                                   rules=settings.rules, cache=self.token_cache)
        self.post_message(NavigationPlanned(target, nav_plan))

    def on_navigation_planned(self, message: NavigationPlanned) -> None:
        """Open UI-B's navigation dialog; run what the user chooses."""
        from tui_compactor.ui.screens.navigate import NavigateDialog

        nav_plan = message.nav_plan
        if getattr(nav_plan, "noop", False):
            self.notify("already at this node", timeout=2)
            return
        if not self.settings.branch_summary_enabled:
            # Branch summaries are off (oh-my-pi's branchSummary.enabled = false): just move.
            from tui_compactor.ui.screens.navigate import NavigationChoice, SummaryMode

            self.start_navigation(nav_plan, NavigationChoice(
                nav_plan.target, nav_plan.new_leaf, SummaryMode.NONE))
            return
        try:
            label = self.summarizer_for(compaction=False).label
        except Exception as error:
            label = f"unavailable ({error})"

        def chosen(choice: Any) -> None:
            if choice is not None:
                self.start_navigation(nav_plan, choice)

        self.push_screen(
            NavigateDialog(nav_plan, self.session, summarizer_label=sanitize(label, max_len=60),
                           append_refusal=self.session.append_refusal),
            chosen,
        )

    def start_navigation(self, nav_plan: Any, choice: Any) -> None:
        """Run one navigation in the background (several may run at once)."""
        if self.session.append_refusal:
            self.notify(sanitize(self.session.append_refusal, max_len=300),
                        title="read-only: nothing written", severity="error", timeout=8)
            return
        target = nav_plan.target
        self.pending_targets.add(target)
        self.running_jobs += 1
        self._update_status()
        tree = self.query_one(SessionTree)
        tree.set_progress(target, "⟳ summarizing…" if choice.summarize else "⟳ moving leaf…")
        self.run_navigation(nav_plan, choice)

    @work(exclusive=False, exit_on_error=False, group="branch")
    async def run_navigation(self, nav_plan: Any, choice: Any) -> None:
        """Summarize the branch being left (if asked) and append at the new leaf."""
        import asyncio

        from tui_compactor.summarize.navigation import navigate
        from tui_compactor.summarize.runner import PartDelta

        target = nav_plan.target
        streamed = 0
        last_report = 0.0

        def on_event(event: Any) -> None:
            nonlocal streamed, last_report
            if isinstance(event, PartDelta):
                streamed += len(event.text)
                now = time.monotonic()
                if now - last_report > 0.1:
                    last_report = now
                    self.post_message(BranchSummaryProgress(target, f"⟳ {streamed:,} chars"))

        try:
            summarizer = self.summarizer_for(compaction=False) if choice.summarize else None
            result = await navigate(
                self.session, nav_plan, summarizer=summarizer,
                instructions=choice.instructions, replace_instructions=choice.replace_prompt,
                on_event=on_event, **self.append_options(),
            )
        except asyncio.CancelledError:
            self.post_message(BranchSummaryProgress(target, None))
            self.post_message(WorkFailed("navigation cancelled", "nothing was written"))
            raise
        except Exception as error:
            self.post_message(BranchSummaryProgress(target, None))
            self.post_message(WorkFailed("navigation failed: nothing written",
                                         _error_text(error)))
            return
        added = await asyncio.to_thread(self.refresh_after_append) if result.written else []
        self.post_message(BranchSummaryProgress(target, None))
        new_node = added[-1] if added else None
        what = "branch summary attached" if choice.summarize else "leaf moved"
        where = "before the first entry" if result.new_leaf is None else f"at #{result.new_leaf}"
        self.post_message(EntryAppended("navigate", f"{what} {where}", added, new_node))

    def on_branch_summary_progress(self, message: BranchSummaryProgress) -> None:
        """Show a background summary's progress on its target row (None: it ended)."""
        self.query_one(SessionTree).set_progress(message.target, message.text)
        if message.text is None:
            self.pending_targets.discard(message.target)
            self.running_jobs = max(0, self.running_jobs - 1)
            self._update_status()

    def action_undo(self) -> None:
        """Undo a compaction: move the leaf back to the compaction's parent (nothing deleted)."""
        if self.session is None or self.selected_entry is None:
            return
        entry = self.session.entries[self.selected_entry]
        if entry.type != "compaction":
            self.notify("select a compaction node to undo it", timeout=3)
            return
        if self.session.append_refusal:
            self.notify(sanitize(self.session.append_refusal, max_len=300),
                        title="read-only: nothing written", severity="error", timeout=8)
            return
        self.undo_compaction(entry.index)

    @work(thread=True, exclusive=True, exit_on_error=False, group="undo")
    def undo_compaction(self, compaction_index: int) -> None:
        """Append the writer's leaf marker under the compaction's parent (thread)."""
        from tui_compactor.session.writer import append_entry, make_leaf_marker

        session = self.session
        compaction = session.entries[compaction_index]
        leaf = session.leaf
        record = make_leaf_marker(
            reason="undo", undone_entry_id=compaction.id,
            previous_leaf_id=session.entries[leaf].id if leaf is not None else None,
        )
        try:
            append_entry(session, record, parent_index=compaction.parent, **self.append_options())
        except Exception as error:
            self.post_message(WorkFailed("undo failed: nothing written", _error_text(error)))
            return
        added = self.refresh_after_append()
        where = "the start" if compaction.parent is None else f"#{compaction.parent}"
        self.post_message(EntryAppended("undo", f"compaction undone: leaf moved back to {where}",
                                        added, compaction.parent))

    # ----- live follow -------------------------------------------------------------------

    def _follow_tick(self) -> None:
        """Start a refresh check unless one is running."""
        if self.session is not None and self.session.complete:
            self.refresh_session(self.session)

    @work(thread=True, exclusive=True, exit_on_error=False, group="follow")
    def refresh_session(self, session: Any) -> None:
        """Re-stat the file and parse only what was appended."""
        with self.refresh_lock:
            result = session.refresh()
        if result.status != "unchanged":
            self.post_message(SessionRefreshed(result.status, list(result.added)))

    def on_session_refreshed(self, message: SessionRefreshed) -> None:
        """New entries appear without losing the cursor; a rewritten file is reloaded."""
        if message.status == "rewritten":
            self.notify("the file was rewritten on disk: reloading", severity="warning")
            self.open_session(self.session.path)
            return
        self.after_growth(message.added)

    def after_growth(self, added: list[int], *, announce: bool = True) -> None:
        """Show entries the file gained (live follow or our own append)."""
        tree = self.query_one(SessionTree)
        tree.file_leaf = self.session.leaf
        self.query_one(ReadOnlyBanner).show_reason(self.session.append_refusal)
        self._update_status()
        self.rebuild_outline(keep_entry=self.selected_entry)
        self.token_count_pending = True  # started once the rows (and what is visible) exist
        self.measure_chart(self.session)
        if added:
            self._report_orphaned_appends()
        if added and announce:
            self.notify(f"{len(added)} new entries", timeout=2)

    def action_reload(self) -> None:
        """Re-read the file from scratch."""
        if self.session is not None:
            self.open_session(self.session.path)

    # ----- navigation keys ---------------------------------------------------------------

    def action_cycle_filter(self) -> None:
        """Next outline filter."""
        self.filter_index = (self.filter_index + 1) % len(FILTER_NAMES)

    def action_cycle_filter_back(self) -> None:
        """Previous outline filter."""
        self.filter_index = (self.filter_index - 1) % len(FILTER_NAMES)

    def watch_filter_index(self) -> None:
        """Rebuild the rows with the new filter."""
        self._update_status()
        self.notify(f"filter: {self.filter_name}", timeout=1.5)
        self.rebuild_outline()

    def _jump_to(self, entry_index: int | None, what: str) -> None:
        """Move the cursor to ``entry_index`` (unfolding/unfiltering is the user's choice)."""
        if entry_index is None:
            self.notify(f"no {what}", timeout=2)
            return
        if not self.query_one(SessionTree).move_to_entry(entry_index):
            self.notify(f"the {what} is hidden by the filter or a fold", severity="warning",
                        timeout=3)

    def action_jump_leaf(self) -> None:
        """Cursor to the file's leaf."""
        if self.session is not None:
            self._jump_to(self.session.leaf, "leaf")

    def action_jump_parent(self) -> None:
        """Cursor to the nearest visible ancestor of the selected entry."""
        if self.session is None or self.selected_entry is None:
            return
        tree = self.query_one(SessionTree)
        parent = self.session.entries[self.selected_entry].parent
        while parent is not None and parent not in tree.row_of_entry:
            parent = self.session.entries[parent].parent
        self._jump_to(parent, "parent")

    def _jump_branch(self, step: int) -> None:
        """Cursor to the next (step 1) or previous (-1) branch point row."""
        tree = self.query_one(SessionTree)
        position = tree.cursor + step
        while 0 <= position < len(tree.rows):
            if tree.rows[position].is_branch_point:
                tree.move_cursor(position, center=True)
                return
            position += step
        self.notify("no more branch points", timeout=2)

    def action_jump_branch(self) -> None:
        """Cursor to the next branch point."""
        self._jump_branch(1)

    def action_jump_branch_back(self) -> None:
        """Cursor to the previous branch point."""
        self._jump_branch(-1)

    def action_unfold_all(self) -> None:
        """Unfold every folded branch point."""
        self.folded.clear()
        self.rebuild_outline()

    def action_select_node(self) -> None:
        """Navigate to the selected node (same as enter in the tree)."""
        self.query_one(SessionTree).action_select()

    @on(TabbedContent.TabActivated)
    def _tab_activated(self, event: TabbedContent.TabActivated) -> None:
        """The Context tab draws lazily: only when it is shown."""
        if event.pane.id == "tab-context":
            self.query_one(ContextView).show_pending()
        elif event.pane.id == "tab-breakdown":
            self.request_breakdown()
        elif event.pane.id == "tab-diff":
            self.show_summary_diff()

    def show_summary_diff(self) -> None:
        """Diff a summary against the one it updates: the finished compaction's (if any),
        else the selected compaction node's against the previous compaction on its path."""
        diff = self.query_one(SummaryDiff)
        panel = self.compaction_panel
        result = panel.selected_result if panel is not None else None
        if result is not None:
            diff.show(panel.plan.previous_summary or "", result.summary)
            return
        if self.session is None or self.selected_entry is None:
            return
        entry = self.session.entries[self.selected_entry]
        if entry.type != "compaction":
            diff.show("", "")
            diff.query_one(Static).update(Text(
                "select a compaction node (or run a compaction) to see what its summary "
                "changed against the previous one", style="dim"))
            return
        previous = entry.parent
        while previous is not None and self.session.entries[previous].type != "compaction":
            previous = self.session.entries[previous].parent
        old = self.session.entries[previous].data.get("summary") if previous is not None else ""
        new = entry.data.get("summary")
        diff.show(old if isinstance(old, str) else "", new if isinstance(new, str) else "")

    def action_show_tab(self, tab_id: str) -> None:
        """Switch the preview pane."""
        preview = self.query_one("#preview", TabbedContent)
        if preview.query(f"#{tab_id}"):
            preview.active = tab_id

    # ----- search ------------------------------------------------------------------------

    def action_search(self) -> None:
        """Open the search box."""
        search = self.query_one("#search", Input)
        search.display = True
        search.value = self.search_query
        search.focus()

    @on(Input.Submitted, "#search")
    def _search_submitted(self, event: Input.Submitted) -> None:
        """Find the query in every entry (worker), then jump to the first match after the cursor."""
        self.search_query = event.value.strip()
        event.input.display = False
        self.query_one(SessionTree).focus()
        if self.search_query and self.session is not None:
            self.find_matches(self.session, self.search_query)
        else:
            self.query_one(SessionTree).search_matches = set()
            self.query_one(SessionTree).invalidate()

    @work(thread=True, exclusive=True, exit_on_error=False, group="search")
    def find_matches(self, session: Any, query: str) -> None:
        """Every entry whose id, kind, label or preview contains ``query`` (case-insensitive)."""
        worker = get_current_worker()
        needle = query.casefold()
        matches: set[int] = set()
        for entry in list(session.entries):
            if worker.is_cancelled:
                return
            if needle in entry_search_text(session, entry).casefold():
                matches.add(entry.index)
        self.call_from_thread(self._show_matches, query, matches)

    def _show_matches(self, query: str, matches: set[int]) -> None:
        """Mark matches and jump to the first one after the cursor."""
        tree = self.query_one(SessionTree)
        tree.search_matches = matches
        tree.invalidate()
        visible = sum(1 for index in matches if index in tree.row_of_entry)
        self.notify(f"“{sanitize(query, single_line=True, max_len=40)}”: {len(matches)} matches"
                    + (f", {visible} shown" if visible != len(matches) else ""), timeout=3)
        self.action_search_next()

    def _search_step(self, step: int) -> None:
        """Move to the next/previous visible match."""
        tree = self.query_one(SessionTree)
        if not tree.search_matches or not tree.rows:
            if self.search_query:
                self.notify("no matches", timeout=2)
            return
        count = len(tree.rows)
        for offset in range(1, count + 1):
            position = (tree.cursor + step * offset) % count
            if tree.rows[position].index in tree.search_matches:
                wrapped = position <= tree.cursor if step > 0 else position >= tree.cursor
                tree.move_cursor(position, center=True)
                self.report_search_position(position, wrapped, step)
                return

    def action_search_next(self) -> None:
        """Next match."""
        self._search_step(1)

    def action_search_previous(self) -> None:
        """Previous match."""
        self._search_step(-1)

    # ----- cancel, help, errors ----------------------------------------------------------

    def action_cancel(self) -> None:
        """Escape: close search, stop indexing, cancel running summaries."""
        search = self.query_one("#search", Input)
        if search.display:
            search.display = False
            self.query_one(SessionTree).focus()
            return
        if isinstance(self.focused, Input):  # leave a budget input, back to the tree
            self.query_one(SessionTree).focus()
            return
        if self.session is None or not self.session.complete or self._indexing():
            self.load_cancel.set()
            return
        if not self.cancel_work() and self.plan is not None:
            self.clear_plan()

    def _indexing(self) -> bool:
        """True while the index worker runs."""
        return any(worker.group == "index" and worker.state in (WorkerState.PENDING,
                                                                WorkerState.RUNNING)
                   for worker in self.workers)

    def cancel_work(self) -> bool:
        """Cancel every summary in flight; True if there was any."""
        cancelled = 0
        panel = self.compaction_panel
        if panel is not None and panel.running:
            panel.cancel()
            cancelled += 1
        for worker in self.workers:
            if worker.group in ("compaction", "branch") and worker.state == WorkerState.RUNNING:
                worker.cancel()
                cancelled += 1
        if cancelled:
            self.notify(f"cancelled {cancelled} running job(s); nothing written", timeout=3)
        return bool(cancelled)

    def action_help(self) -> None:
        """Show every binding with its id, and the legend."""
        from tui_compactor.ui.widgets.help import HelpScreen

        if isinstance(self.screen, HelpScreen):
            self.pop_screen()
            return
        from tui_compactor.ui.screens.navigate import NavigateDialog
        from tui_compactor.ui.widgets.help import help_groups

        groups = help_groups(APP_BINDINGS, SessionTree.BINDINGS, NavigateDialog.BINDINGS)
        self.push_screen(HelpScreen(groups, dict(self.user_keymap)))

    def on_work_failed(self, message: WorkFailed) -> None:
        """A worker reported a failure the user must know about."""
        self.notify(sanitize(message.error, max_len=400), title=message.what, severity="error",
                    timeout=10)

    def on_entry_appended(self, message: EntryAppended) -> None:
        """Our own append landed: show the new node at once and say what happened."""
        self.notify(message.description, title=message.kind, timeout=4)
        if message.kind == "compaction":
            self.running_jobs = max(0, self.running_jobs - 1)
            self.clear_plan()
            self.close_review(message.description)
        if message.select_entry is not None:
            self.selected_entry = message.select_entry
        self.after_growth(message.added, announce=False)

    @on(Worker.StateChanged)
    def _worker_state_changed(self, event: Worker.StateChanged) -> None:
        """One place that turns worker crashes into notifications (the app keeps running)."""
        if event.state != WorkerState.ERROR:
            return
        error = event.worker.error
        what = event.worker.group or event.worker.name
        self.notify(sanitize(f"{type(error).__name__}: {error}", max_len=400),
                    title=f"{what} failed", severity="error", timeout=10)
        if event.worker.group == "index":
            self.query_one(LoadingBar).stop()


def _error_text(error: BaseException) -> str:
    """A failure as the user reads it (the writer's refusals carry a reason and a hint)."""
    reason = getattr(error, "reason", None)
    hint = getattr(error, "hint", None)
    if reason:
        return f"{reason} {hint or ''}".strip()
    return f"{type(error).__name__}: {error}"


def no_candidates_text() -> str:
    """What ``R`` compares, and how to get a second candidate, when only offline is set up."""
    from tui_compactor.config import config_path

    return (
        "R runs the plan with up to three summarizer profiles side by side and compares their "
        "summaries: length, anchors kept by the audit, time. Only the offline summarizer is "
        f"configured, so there is nothing to compare (r runs it). Add a profile to "
        f"{config_path()}, e.g.\n[profiles.local]\nprovider = \"openai\"\n"
        "base_url = \"http://127.0.0.1:8080/v1\"\nmodel = \"qwen2.5-coder-14b\"\n"
        "then R runs it beside offline."
    )
