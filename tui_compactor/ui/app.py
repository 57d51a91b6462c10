"""The tui-compactor app: the session tree, the context gauge and chart, and the preview pane.

The app renders what the session, engine and summarize layers compute and dispatches work to
them; it holds no algorithm. Every slow call runs in a worker (``@work``); workers post a message
from ``ui.messages`` and only the handlers below touch widgets.
"""

from __future__ import annotations

import bisect
import functools
import importlib
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from rich.text import Text
from textual import events, on
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.geometry import Region
from textual.notifications import Notification, Notify, SeverityLevel
from textual.reactive import reactive
from textual.screen import Screen
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Input, Static
from textual.worker import Worker, WorkerState, get_current_worker

if TYPE_CHECKING:
    from textual.actions import ActionParseResult
    from textual.dom import DOMNode
    from textual.driver import Driver

    from tui_compactor.config import Config
    from tui_compactor.engine.branch import NavigationPlan
    from tui_compactor.engine.plan import CompactionPlan
    from tui_compactor.session.outline import OutlineRows
    from tui_compactor.session.reader import LoadProgress
    from tui_compactor.summarize.base import Summarizer
    from tui_compactor.summarize.compaction import CompactionJob, CompactionResult
    from tui_compactor.summarize.runner import Event
    from tui_compactor.ui.screens.navigate import NavigationChoice
    from tui_compactor.ui.widgets.compaction import CompactionPanel
    from tui_compactor.ui.widgets.context_view import (
        ContextView,
    )
    from tui_compactor.ui.widgets.plan_view import PlanView
    from tui_compactor.ui.widgets.summary_diff import SummaryDiff
    from tui_compactor.workbench.actions import (
        Proposal,
    )
from tui_compactor.engine.tokens import (
    ESTIMATE_COUNTER,
    TokenCache,
    TokenCounter,
    TokenTableError,
    get_counter,
)
from tui_compactor.session.session import Session, gc_paused
from tui_compactor.textsafe import sanitize
from tui_compactor.ui import collector
from tui_compactor.ui.analysis import AnalysisMixin
from tui_compactor.ui.bindings import (
    APP_ACTIONS,
    APP_BINDINGS,
    focus_input,
    keymap_conflicts,
    known_binding_ids,
    opener_keys,
    takes_text,
    validated_keymap,
)
from tui_compactor.ui.commands import CompactorCommands
from tui_compactor.ui.extras import SessionExtras, entry_search_text, match_rows
from tui_compactor.ui.frames import FrameWaits
from tui_compactor.ui.messages import (
    BranchSummaryProgress,
    ChartReady,
    CompactionAppendFailed,
    CountingRestarted,
    EntryAppended,
    GaugeData,
    GaugeReady,
    IndexStarted,
    LoadFailed,
    LoadProgressed,
    NavigationPlanned,
    OutlineReady,
    PlanReady,
    PreviewLoaded,
    SearchDone,
    SearchExtended,
    SessionLoaded,
    SessionRefreshed,
    StylesAhead,
    SummaryDiffReady,
    TokensCounted,
    WorkFailed,
    WriteStale,
)
from tui_compactor.ui.panes import PREVIEW_ID, TABS, LazyPanes
from tui_compactor.ui.review import REVIEW_ACTIONS, ReviewKeys
from tui_compactor.ui.screens.styled import ShownBeneath, StyledOnce, add_default_css
from tui_compactor.ui.state import AppOptions, AppState
from tui_compactor.ui.widgets.chart import ContextChart
from tui_compactor.ui.widgets.details import EntryDetails, load_markdown, markdown_loaded
from tui_compactor.ui.widgets.footer import StateFooter
from tui_compactor.ui.widgets.gauge import ContextGauge
from tui_compactor.ui.widgets.redraw import InlineInput, keep_scrollbar_lines
from tui_compactor.ui.widgets.status import (
    LoadingBar,
    ReadOnlyBanner,
    SessionStatus,
    issue_count,
)
from tui_compactor.ui.widgets.tabs import TabbedPanes, TabPanel
from tui_compactor.ui.widgets.tree import SessionTree
from tui_compactor.ui.workers import work
from tui_compactor.wording import ESTIMATE_MARK, NO_TABLE_MARK, count_of
from tui_compactor.workbench.handle import SessionHandle
from tui_compactor.workbench.settings import Settings
from tui_compactor.workbench.views import (
    MeasureCancelled,
    PlanReport,
    chart_points,
    gauge_at,
    plan_report,
    previous_summary,
)

LATER_MODULES = (
    "tui_compactor.ui.widgets.plan_view",
    "tui_compactor.ui.widgets.context_view",
    "tui_compactor.ui.widgets.summary_diff",
    "tui_compactor.ui.widgets.analysis",
    "tui_compactor.workbench.actions",
    "tui_compactor.ui.screens.navigate",
)
"""Modules of what the first screen does not show (the tabs after Details, the hindsight
audit, writing to the file, the navigation dialog): imported where they are used, and in a
worker once the first screen is drawn (``load_details_markdown``), not before it."""

STYLE_AHEAD_STEP_S = 0.02
"""Seconds between two classes whose CSS the app parses ahead of a dialog's first opening
(``_style_ahead``): a few ms of the UI thread each, never all in one tick."""

FILTER_NAMES = ("DEFAULT", "NO_TOOLS", "USER_ONLY", "LABELED", "ALL")
"""Outline filters in the order ``f`` cycles through them."""

WHOLE_FILE_ACTIONS = frozenset(
    {
        "plan",
        "cut_earlier",
        "cut_later",
        "edit_settings",
        "run_compaction",
        "run_candidates",
        "undo",
        "edit_label",
        "show_issues",
        "timeline",
        "inspect_requests",
        "toggle_rules",
        "reload",
    }
)
"""Actions that wait for the whole file while a tail-first preview is shown."""

TOKEN_BATCH = 400
"""Entries counted per message by the token worker (tail first)."""

SEARCH_BATCH = 256
"""Entries the search worker reads at once (``_records_once``) and looks at between two offers
of the GIL to the UI thread."""


def _records_once(session: Session, indices: Sequence[int]) -> Sequence[dict[str, Any] | None]:
    """The records of ``indices`` for a pass that reads each once (``Session.records_once``):
    not kept in the session's cache of parsed records. Kept, a search's records pushed out the
    records the app shows, and, parsed on the worker thread while the cache freed as many old
    ones, they piled up in the collector's youngest generation without a collection (CPython
    counts allocations minus frees): the UI thread's next young collections scanned the last
    4096 of them, ~20k containers, 10-20 ms of one frame on the 100k session. All None when
    they cannot be read so: each entry's own ``data`` is read, and a record that fails is shown
    as the tree shows it (``entry_preview``: "unreadable")."""
    try:
        return session.records_once(indices)
    except Exception:  # noqa: BLE001 - bad input: read again one by one, as the tree does
        return [None] * len(indices)


SEARCH_NOTE_AFTER = 0.5
"""Seconds a search runs before a note says it is still running."""

PREVIEW_HEAD_START = 0.5
"""Seconds at most the index waits for the preview's first frame (leaf, gauge, details)."""

INLINE_OPEN_BYTES = 1024 * 1024
"""Files up to this size are indexed before the first frame, on the UI thread (~1 ms per
100 KB): the first frame shows them whole, with no frame of an empty window first. A bigger
file shows its tail in the first frame (``reader.load_tail_preview``, read there too) when it
has one; else the window first and the rows once a worker has indexed it."""

FIRST_SCREEN_WAIT = 0.5
"""Seconds at most token counting waits for the first gauge to be drawn."""

WHOLE_SCREEN_WAIT = 2.0
"""Seconds after the whole file is shown at most that the chart, the Markdown renderer and
the later tabs' modules wait for its first screen to complete (``_check_whole_screen``)."""

FRAME_WRITE_WAIT = 0.1
"""Seconds at most the UI thread waits for a frame to be on the terminal before it starts what
waited for that frame (``post_display_hook``; a terminal that reads slowly keeps the pipe
full)."""

START_UP_HOLD = 2.0
"""Seconds after mounting at most that the collector stays paused for the first screen
(``collector.hold_for_start_up``; a file that cannot be shown never draws a gauge)."""

FOLLOW_INTERVAL = 1.0
"""Seconds between live-follow checks of the open file."""
TOAST_REPAINT_DELAY = 0.25
"""Seconds before a toast's timeout when the area of the toasts is noted, and after it when
that area is painted again (``notify``)."""

GAUGE_DEBOUNCE = 0.05
"""Seconds the cursor must rest before the context at it is measured."""

SETTINGS_DEBOUNCE = 0.3
"""Seconds after the last keystroke in a budget input before re-planning."""

IDLE_COLLECT_CHECK = 10.0
"""Seconds between checks whether a deep garbage collection is due (``ui.collector``)."""

KEY_HOLD_LIMIT = 10.0
"""Seconds at most that keys typed while an input is being built wait for it (``hold_keys``);
then they go wherever the focus is. A safety net for an opener that never focuses its input,
not a wait anyone sees: on a loaded machine building the budget editor took over 2 s, and keys
handed on at 2 s were lost (to the tree, or an app binding)."""
IDLE_AFTER = 30.0
"""Seconds without a key or click (and no worker running) before a deep collection may run:
it holds the UI for up to a second on a 100k-entry session, so only while the user reads."""

REGION_STYLES = {
    "summarize": "on red",
    "turn_prefix": "on yellow",
    "keep": "on green",
    "metadata": "dim",
}
"""Legend swatches in the plan pane (the tree uses the theme's matching colours)."""


HandlerT = TypeVar("HandlerT", bound=Callable[..., None])


class MainScreen(StyledOnce, ShownBeneath, Screen[None]):
    """The app's main screen (tree, gauge, tabs), styled once before it first shows
    (``ui.screens.styled``): at start-up Textual's second and third passes would change nothing
    yet re-resolve every widget's and component class's rules and ask for another layout,
    another frame before the first screen. It counts its changes for the dialogs above it."""


def _while_running(handler: HandlerT) -> HandlerT:
    """Ignore a worker's result that is handled while the app shuts down.

    A thread worker may post a result after the user quit; by then the screen's widgets are
    gone. Handled while the app runs, a missing widget is still a bug and raises.
    """

    @functools.wraps(handler)
    def guarded(self: CompactorApp, *args: object) -> None:
        if self.is_running:
            handler(self, *args)

    return cast("HandlerT", guarded)


class CompactorApp(ReviewKeys, SessionExtras, AnalysisMixin, LazyPanes, App[None]):
    """Inspector and workbench for pi / oh-my-pi session compaction."""

    CSS_PATH = Path(__file__).with_name("app.tcss")
    TITLE = "tui-compactor"
    BINDINGS = cast("list[BindingType]", APP_BINDINGS)
    COMMANDS = App.COMMANDS | {CompactorCommands}
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (160, "-wide")]
    VERTICAL_BREAKPOINTS = [(0, "-short"), (30, "-tall")]
    ALLOW_IN_MAXIMIZED_VIEW = "Footer, StateFooter"
    """A zoomed pane (the review) keeps the footer's keys on screen."""

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
        """Open ``path`` (None: the session picker) with ``settings`` (default: those of
        ``config``, else the defaults)."""
        super().__init__()
        if settings is None:
            settings = Settings.from_config(config) if config is not None else Settings.defaults()
        self.options = AppOptions(
            tuple(sessions_dirs or ()),
            profile_name,
            follow,
            append_quiet_seconds,
            ignore_agents,
            picker_dirs_only,
        )
        self.state = AppState(settings, Path(path) if path is not None else None)
        self.gauge_debounce = GAUGE_DEBOUNCE
        """Seconds the cursor rests before measuring (tests set 0: measure at once)."""
        self.settings_debounce = SETTINGS_DEBOUNCE
        """Seconds after the last keystroke in a budget input before re-planning."""
        self._new_entries_note: tuple[Notification, int] | None = None
        """The live follow's last note and the entries it counts: ``_note_new_entries``."""
        self._new_entries_arrived = False
        """Whether that note has reached the toasts (``notify`` only posts it)."""
        self._notes_superseded: set[str] = set()
        """Notes replaced before they reached the toasts: dropped when they arrive."""
        self._debounce: dict[str, Timer] = {}
        """Debounce and follow timers by name (``gauge``, ``settings``, ``follow``)."""
        self._frame_waits = FrameWaits()
        """What waits for a widget's change to reach the terminal (``ui.frames``)."""
        self._plan_start_queued = False
        """``_start_plan`` runs once the keys already queued are handled."""
        self._plan_wanted = False
        """A plan was asked for whose worker has not started (``request_plan``)."""
        self._held_keys: list[events.Key] | None = None
        """Keys typed while an input is being built, in order (``hold_keys``)."""
        self._key_hold_timer: Timer | None = None
        self._hold_claimed = False
        """Whether an action took over the held keys (``hold_keys``)."""
        self._opener_keys: dict[str, str] | None = None
        """Key -> the action it runs that opens an input, under the keymap (``opener_keys``)."""
        self._tree: SessionTree | None = None
        """The tree (made in ``compose``): read at every key, not looked up in the DOM."""
        # cl100k counts come from a counting process (``token_process``): building the encoder
        # holds a GIL 0.1-0.3 s, its own there. It starts once the first screen is drawn (not
        # to share the CPU with it; ``_first_screen_drawn``) or at the first count; the first
        # gauge is drawn from a chars/4 count until it is ready, then measured again.
        # A counting process that ends (the OOM killer, a kill) is started again by the counter
        # (``token_process.RESTART_WAITS_S``), its counts sent again: the user is told once.
        counter = get_counter("cl100k", preload=False, process=True)
        if hasattr(counter, "on_restart"):
            counter.on_restart = lambda reason: self.post_message(CountingRestarted(reason))

    # ----- read-only views of the state ---------------------------------------------------

    @property
    def settings(self) -> Settings:
        """The settings in use (the app's edits included)."""
        return self.state.settings

    @settings.setter
    def settings(self, settings: Settings) -> None:
        """Every change of the settings: the tree's previews follow their rules; once the
        cl100k table could not be loaded, they count with the chars/4 estimate."""
        if self.state.table_error is not None:
            settings = settings.without_table()
        self.state.settings = settings
        self.query_one(SessionTree).use_rules(settings.rules)

    @property
    def config(self) -> Config:
        """The configuration the settings were resolved from (profiles, ``[ui]``)."""
        return self.state.settings.config

    @property
    def counter(self) -> TokenCounter:
        """The token counter the settings name."""
        return self.state.settings.counter()

    @property
    def handle(self) -> SessionHandle | None:
        """The loaded session's handle, once a session is loaded."""
        return self.state.handle

    @property
    def session(self) -> Session | None:
        """The loaded session (read it through ``handle.read()`` off the UI thread)."""
        return self.state.handle.session if self.state.handle is not None else None

    def _loaded(self) -> Session:
        """The loaded session; handlers that run only after loading use it."""
        assert self.state.handle is not None, "no session loaded"
        return self.state.handle.session

    @property
    def token_cache(self) -> TokenCache | None:
        """Token counts of the loaded session under the settings' counter."""
        return self.state.token_cache

    @property
    def plan(self) -> CompactionPlan | None:
        """The compaction plan shown in the Plan tab, if any."""
        return self.state.plan_report.plan if self.state.plan_report is not None else None

    @property
    def plan_generation(self) -> int:
        """The latest plan request (a result for an older one is dropped)."""
        return self.state.plan_request

    @property
    def selected_entry(self) -> int | None:
        """The entry under the tree cursor: what every key acts on (a key typed right after a
        move arrives before the tree's ``Highlighted``, which ``state.selected_entry``, the
        entry the panes show, waits for). None while the tree shows another file's rows."""
        tree = self._tree
        if tree is None:
            return None
        return tree.cursor_entry if tree.session is self.session else None

    @property
    def gauge_data(self) -> GaugeData | None:
        """What the gauge shows for the selected entry."""
        return self.state.gauge_data

    @property
    def pending_targets(self) -> set[int]:
        """Targets of navigations still running."""
        return self.state.pending_targets

    @property
    def compaction_options(self) -> tuple[str, str, bool]:
        """Method, focus and replace-the-prompt flag for the next compaction."""
        return self.state.compaction_options

    @property
    def config_problems(self) -> list[str]:
        """Problems found in ``[ui]`` of the config."""
        return self.state.config_problems

    # ----- layout ------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        """Status, banner and progress on top; tree left; gauge, chart and tabs right."""
        yield SessionStatus(id="status")
        yield ReadOnlyBanner(id="banner")
        yield LoadingBar(id="loading")
        with Horizontal(id="main"):
            self._tree = SessionTree(id="tree", rules=self.settings.rules)
            yield self._tree
            with Vertical(id="side"):
                yield ContextGauge(id="gauge")
                yield ContextChart(id="chart")
                # The other tabs' panes are added when first shown (ui.panes); the hindsight
                # audit under the details likewise.
                details = TabPanel(EntryDetails(id="details"), id="tab-details")
                yield TabbedPanes(list(TABS), details, initial="tab-details", id=PREVIEW_ID)
        yield StateFooter()  # the search box (``search_box``) is built when first opened

    def get_default_screen(self) -> Screen[Any]:
        """The main screen, its size classes set before its widgets are first styled."""
        return MainScreen(id="_default")

    def pane_content(self, pane_id: str) -> list[Widget]:
        """What a preview tab (or the hindsight area under the details) holds, built the
        first time it is shown or used (``ui.panes``)."""
        # Each view's module is imported with its first use: the first screen needs none.
        if pane_id == "hindsight":
            from tui_compactor.ui.widgets.analysis import HindsightView

            return [HindsightView(id="hindsight")]
        if pane_id == "tab-context":
            from tui_compactor.ui.widgets.context_view import ContextView

            context = ContextView(id="context")
            context.pending = self.state.gauge_data  # drawn when the tab shows
            return [context]
        if pane_id == "tab-plan":
            from tui_compactor.ui.widgets.plan_view import PlanView

            planning = self.state.plan_leaf is not None  # built by ``c``: its plan comes
            return [PlanView(self.state.settings, planning=planning, id="plan")]
        if pane_id == "tab-diff":
            from tui_compactor.ui.widgets.summary_diff import SummaryDiff

            return [SummaryDiff(id="summary-diff")]
        if pane_id == "tab-breakdown":
            from tui_compactor.ui.widgets.analysis import BreakdownView

            return [BreakdownView(id="breakdown")]
        assert pane_id == "tab-compaction", pane_id
        empty = Static(
            Text(
                "plan with c, then r runs the compaction here (history and turn "
                "prefix side by side)",
                style="dim",
            ),
            id="compaction-empty",
        )
        return [Vertical(empty, id="compaction-host")]

    def on_mount(self) -> None:
        """Apply the theme and keymap, then start indexing the file."""
        collector.install()
        keep_scrollbar_lines()
        self.set_timer(START_UP_HOLD, collector.release_start_up)
        self._debounce["collect"] = self.set_interval(IDLE_COLLECT_CHECK, self._collect_when_idle)
        self._apply_config()
        self.query_one(SessionTree).focus()
        if self.state.session_path is not None:
            self._open_in_first_frame(self.state.session_path)
        else:
            self.call_after_refresh(collector.release_start_up)
            self.pick_session()

    async def on_unmount(self) -> None:
        """Hand the garbage collector back to its defaults; close the summaries' HTTP client
        (its keep-alive connections), if a summary made one."""
        collector.uninstall()
        providers = sys.modules.get("tui_compactor.summarize.providers")
        if providers is not None:
            await providers.aclose_shared_clients()

    async def run_action(
        self,
        action: str | ActionParseResult,
        default_namespace: DOMNode | None = None,
        namespaces: Mapping[str, DOMNode] | None = None,
    ) -> bool:
        """Run ``action``; one that waits for the whole file (dimmed while a big file is
        indexed) says so instead of doing nothing without a word."""
        if await super().run_action(action, default_namespace, namespaces):
            return True
        if not isinstance(action, str) or default_namespace not in (None, self):
            return False
        name = action.removeprefix("app.").partition("(")[0]
        session = self.session
        if name in WHOLE_FILE_ACTIONS and session is not None and session.preview:
            described = next(
                (
                    b.description
                    for b in APP_BINDINGS
                    if isinstance(b, Binding) and b.action == action
                ),
                name.replace("_", " "),
            )
            self.notify(
                f"{described} waits for the whole file: it is being indexed (the bar above the "
                "tree says how far)",
                timeout=3,
            )
            return True
        return False

    async def on_event(self, event: events.Event) -> None:
        """Remember when the user last typed or clicked (deep collections wait for a pause);
        drop a key typed before the dialog that would take it as an answer (``asked_at``)."""
        if isinstance(event, events.InputEvent):
            self.state.last_input = time.monotonic()
            if isinstance(event, events.Key) and not event.is_forwarded:
                asked_at = getattr(self.screen, "asked_at", None)
                if asked_at is not None and event.time < asked_at and event.key != "escape":
                    return  # typed before the dialog was on screen: not an answer to it
                if self.state.move_asked is not None and self.screen is self._main_screen():
                    # Typed after ``enter`` while its move is planned: ``esc`` cancels that
                    # move (no dialog comes), the quit keys quit; any other key is dropped
                    # (the dialog coming would drop it, ``asked_at``), being no main-screen
                    # key either (an ``o`` would switch the rules, a ``u`` undo, an ``e``
                    # open the budget editor).
                    if event.key == "escape":
                        self.cancel_move_asked()
                        return
                    if not self.is_quit_key(event.key):
                        return
                if self._held_keys is not None:
                    if event.key != "escape" or not getattr(
                        self.screen, "escape_ends_key_hold", False
                    ):
                        self._held_keys.append(event)
                        return
                    # esc closes the screen the keys are held for (the timeline still being
                    # computed) now: what was typed before it was for that screen.
                    self._held_keys = []
                    self.release_keys()
                if await self._open_input(event):
                    return
        await super().on_event(event)

    async def _open_input(self, event: events.Key) -> bool:
        """Run a key that opens an input (``INPUT_OPENERS``) as it arrives, not once it has
        gone through the focused widget and back: the keys typed after it are still queued
        behind it, and are held from here on (``hold_keys``). Returns whether it ran."""
        if takes_text(self.focused, event.key):
            return False  # text being typed
        screen = self.screen
        if screen is not self._main_screen():
            # A dialog's key that opens an input of its own (``input_opener``), else its keys.
            opener = getattr(screen, "input_opener", None)
            action = opener(event.key) if opener is not None else None
            namespace: Screen[Any] | None = screen
        else:
            if self._opener_keys is None:
                self._opener_keys = opener_keys(self._bindings, self._keymap)
            action = self._opener_keys.get(event.key)
            namespace = None
        if action is None:
            return False
        self._held_keys = []
        self._hold_claimed = False
        ran = await self.run_action(action, namespace)
        if not self._hold_claimed:  # it opened nothing (nothing to label, say)
            self.release_keys()
        return ran

    def hold_keys(self) -> None:
        """Keep the keys typed from now on until an input takes the focus (``on_descendant_focus``
        gives them to it): focus moves only once the input is built and a later refresh runs,
        and a key typed in between (``e`` then ``q`` in one burst) would reach the tree or an app
        binding (quit). Released after ``KEY_HOLD_LIMIT`` seconds whatever happens."""
        if self._held_keys is None:
            self._held_keys = []
        self._hold_claimed = True
        if self._key_hold_timer is None:
            self._key_hold_timer = self.set_timer(KEY_HOLD_LIMIT, self.release_keys)

    def release_keys(self) -> None:
        """Send the held keys, in order, to what has the focus now (before any key typed later:
        those are still in the app's queue)."""
        held, self._held_keys = self._held_keys, None
        self._hold_claimed = False
        if self._key_hold_timer is not None:
            self._key_hold_timer.stop()
            self._key_hold_timer = None
        target = self.focused or self.screen
        for event in held or ():
            target._forward_event(event)

    def _collect_when_idle(self) -> None:
        """Collect cycles among long-lived objects while nobody is waiting for the app."""
        if time.monotonic() - self.state.last_input < IDLE_AFTER:
            return
        if any(
            worker.state in (WorkerState.PENDING, WorkerState.RUNNING) for worker in self.workers
        ):
            return
        collector.deep_collect_if_due()

    def pick_session(self) -> None:
        """Show the session picker; open what the user picks, quit if they close it."""
        from tui_compactor.session.discover import SessionRoot, default_session_roots
        from tui_compactor.ui.screens.picker import SessionPicker

        def chosen(path: Path | None) -> None:
            if path is None:
                if self.session is None:
                    self.exit()
                return
            self.state.session_path = Path(path)
            self.open_session(self.state.session_path)

        if self.options.picker_dirs_only:
            roots = [
                SessionRoot(Path(path).expanduser(), "dir") for path in self.options.sessions_dirs
            ]
        else:
            roots = default_session_roots(extra=list(self.options.sessions_dirs))
        self.push_screen(SessionPicker(roots), chosen)

    def _apply_config(self) -> None:
        """Theme and keymap from ``[ui]`` of the config (none read: Textual's defaults)."""
        if not self.settings.config_read:
            return  # the built-in [ui] is Textual's own theme and keys: nothing to apply
        if self.config.source is not None:
            self.state.config_stamp = (self.config.source, _file_stamp(self.config.source))
        ui = self.config.ui
        if ui.theme in self.available_themes:
            self.theme = ui.theme
        else:
            source = (
                "TUI_COMPACTOR_THEME"
                if os.environ.get("TUI_COMPACTOR_THEME")
                else f"config file {self.config.source}"
            )
            self.notify(
                f"unknown theme {sanitize(str(ui.theme), max_len=40)!r} (from {source}): "
                f"{self.theme} is used; themes: {', '.join(sorted(self.available_themes))}",
                title="config",
                severity="warning",
                timeout=15,
            )
        if ui.keymap:
            tree_bindings = list(SessionTree.BINDINGS)  # type: ignore[arg-type]
            keymap, problems = validated_keymap(
                ui.keymap,
                known_binding_ids(APP_BINDINGS, tree_bindings),  # type: ignore[arg-type]
            )
            problems += keymap_conflicts(keymap, self._merge_bindings())
            self.set_keymap(keymap)
            self._opener_keys = None  # they may have moved
            self.state.user_keymap = keymap
            self.state.config_problems = problems
            for problem in problems:
                self.notify(problem, title="config", severity="warning", timeout=15)

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = False,
    ) -> None:
        """Every notification of this app (and of its screens and widgets, which pass
        ``markup=True`` by default) is plain text: messages quote session text and file names,
        where ``[...]`` is content, not styling.

        Once its toast has gone, where the toasts were is painted again: after a scroll (the
        plan pane scrolled to a field), Textual's next layout compares against a widget map
        rebuilt lazily after the toast was already removed, so the region under it was never
        repainted and the toast stayed on screen (over the budget editor at 80x24)."""
        self._raise_note(message, title=title, severity=severity, timeout=timeout)

    def _raise_note(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
    ) -> Notification:
        """Post a plain-text note (``notify``); return it, so it can be replaced before it
        reaches the toasts."""
        shown = self.NOTIFICATION_TIMEOUT if timeout is None else timeout
        note = Notification(message, title, severity, shown, markup=False)
        self.post_message(Notify(note))
        self.set_timer(max(shown - TOAST_REPAINT_DELAY, 0.0), self._repaint_toasts_later)
        return note

    def _on_notify(self, event: Notify) -> None:
        """Every note joins the toasts here: one equal to a shown one replaces it, and older,
        less severe ones make room so the toasts keep to the lower half (``ui.toasts``)."""
        from tui_compactor.ui.toasts import toasts_to_drop

        identity = event.notification.identity
        if identity in self._notes_superseded:
            self._notes_superseded.discard(identity)
            event.prevent_default()  # Textual's own handler would still add it
            return
        last = self._new_entries_note
        if last is not None and last[0].identity == identity:
            self._new_entries_arrived = True
        for note in toasts_to_drop(self._notifications, event.notification, self.size):
            self._unnotify(note, refresh=False)
        super()._on_notify(event)

    def _repaint_toasts_later(self) -> None:
        """Note the area the toasts cover now (the one about to expire among them) and paint
        it again once that toast has gone (no layout, only that area)."""
        if not self.is_running:
            return
        screen = self.screen
        regions = [toast.region for toast in screen.query("Toast")]
        if not regions:
            return
        area = Region.from_union(regions).grow((1, 0, 1, 0))  # the toasts' top margins

        def repaint() -> None:
            if self.is_running and self.screen is screen:
                screen.refresh(area)

        self.set_timer(2 * TOAST_REPAINT_DELAY, repaint)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The review's keys exist only while a compaction is shown (footer stays short); over
        a full screen of its own (the session picker) the main screen's keys are off except quit
        and help, while Textual's own (Tab, the command palette) keep working."""
        if (
            len(self.screen_stack) > 1
            and not self.screen.is_modal
            and action in APP_ACTIONS
            and action not in ("quit", "help")
        ):
            return False
        if action in REVIEW_ACTIONS:
            return self.check_review_action(action, parameters)
        if action in WHOLE_FILE_ACTIONS and self.session is not None and self.session.preview:
            return None  # shown dimmed until the whole file is indexed
        return True

    @property
    def filter_name(self) -> str:
        """The outline filter in use, as the user reads it."""
        return FILTER_NAMES[self.filter_index].lower().replace("_", " ")

    # ----- loading -----------------------------------------------------------------------

    def open_session(
        self,
        path: Path,
        *,
        preview: bool | None = None,
        after: threading.Event | None = None,
    ) -> None:
        """Start indexing ``path``; the window is already up and shows progress. A first open
        of a big file shows its tail first (``PreviewLoaded``; ``preview`` False: not tried
        again, or ``after``: the tail already shown, the index waits until it is drawn), a
        reload keeps what is shown."""
        self.state.load_cancel = threading.Event()
        self.load_session_file(
            path,
            self.state.load_cancel,
            self.settings,
            self.filter_index,
            preview=self.session is None if preview is None else preview,
            after=after,
        )

    def _open_in_first_frame(self, path: Path) -> None:
        """Open ``path`` from ``on_mount``, so that the first frame already shows the tree,
        the details and the gauge (each frame drawn before them is a layout of the whole
        screen): a small file whole (``INLINE_OPEN_BYTES``), a big one's tail with the index
        started in a worker once that frame is written; else the (empty) window first, then
        the index (it holds the GIL in slices and would delay the first frame)."""
        try:
            small = path.stat().st_size <= INLINE_OPEN_BYTES
        except OSError:
            small = False
        if small:
            self.state.load_cancel = threading.Event()
            self._show_loaded(
                self._index_file(path, self.state.load_cancel, self.settings, self.filter_index)
            )
            self._show_first_gauge()
            return
        from tui_compactor.session.outline import OutlineFilter, build_outline
        from tui_compactor.session.reader import load_tail_preview

        tail = load_tail_preview(path)
        if tail is None:
            self.call_after_refresh(self.open_session, path, preview=False)
            return
        view = getattr(OutlineFilter, FILTER_NAMES[self.filter_index])
        drawn = threading.Event()
        settings = self._settings_for(self.settings, tail)
        self._show_preview(PreviewLoaded(tail, build_outline(tail, view=view), settings, drawn))
        self._show_first_gauge()
        self.open_session(path, preview=False, after=drawn)

    def _show_first_gauge(self) -> None:
        """The selected entry's details and gauge now (a chars/4 gauge while the counter's
        table is not loaded), not after the tree's ``Highlighted`` and a worker's message."""
        entry_index = self.selected_entry
        if entry_index is None or self.handle is None or self.token_cache is None:
            return
        self._show_details(entry_index)
        data, provisional = self._quick_gauge(
            self.handle, entry_index, self.settings, self.token_cache
        )
        self._show_gauge(GaugeReady(data, provisional=provisional))

    @staticmethod
    def _settings_for(settings: Settings, session: Session) -> Settings:
        """``settings`` with what follows the session: its agent's rules unless chosen, and its
        model's window unless set (worker threads call this; it may read records)."""
        from tui_compactor.workbench.settings import with_session_window

        return with_session_window(settings.for_session(session), session)

    @work(thread=True, exclusive=True, exit_on_error=False, group="index")
    def load_session_file(
        self,
        path: Path,
        cancel: threading.Event,
        settings: Settings,
        filter_index: int,
        *,
        preview: bool,
        after: threading.Event | None = None,
    ) -> None:
        """Index the file in a thread. With ``preview``, first post the file's tail (the leaf,
        its context and the rows around it) and give the UI a moment to draw it (``after``:
        the tail already shown, set once drawn); then post progress, and the whole session
        (``_index_file``)."""
        from tui_compactor.session.outline import OutlineFilter, build_outline
        from tui_compactor.session.reader import load_tail_preview

        started = time.perf_counter()
        view = getattr(OutlineFilter, FILTER_NAMES[filter_index])
        tail = load_tail_preview(path) if preview else None
        if tail is not None and not cancel.is_set():
            after = threading.Event()
            self.post_message(
                PreviewLoaded(
                    tail, build_outline(tail, view=view), self._settings_for(settings, tail), after
                )
            )
        if after is not None:
            after.wait(PREVIEW_HEAD_START)  # the index would slow the first frame (the GIL)
        self.post_message(IndexStarted(path.name))

        def progress(report: LoadProgress) -> None:  # every PROGRESS_INTERVAL (the reader's)
            self.post_message(LoadProgressed(report.bytes_done, report.bytes_total, report.entries))

        self.post_message(self._index_file(path, cancel, settings, filter_index, progress, started))

    def _index_file(
        self,
        path: Path,
        cancel: threading.Event,
        settings: Settings,
        filter_index: int,
        progress: Callable[[LoadProgress], None] | None = None,
        started: float | None = None,
    ) -> SessionLoaded | LoadFailed:
        """Index the whole file: the session with its settings, its first rows and the
        orphaned-append findings, all decided here so the UI thread only shows them."""
        from tui_compactor.session.agents import orphaned_appends
        from tui_compactor.session.outline import OutlineFilter, build_outline
        from tui_compactor.session.reader import load_session

        if started is None:
            started = time.perf_counter()
        view = getattr(OutlineFilter, FILTER_NAMES[filter_index])
        try:
            session = load_session(path, progress=progress, cancel=cancel, hash_thread=True)
            seconds = time.perf_counter() - started
            settings = self._settings_for(settings, session)
            orphans = [orphan.message(session) for orphan in orphaned_appends(session)]
            rows = build_outline(session, view=view)
        except Exception as error:  # none of these should raise: if one does, the load
            # failed (said, and what waits for the whole file is released), it does not hang
            return LoadFailed(str(path.name), f"{type(error).__name__}: {error}")
        return SessionLoaded(session, seconds, settings, orphans, rows, filter_index)

    def _show_loaded(self, message: SessionLoaded | LoadFailed) -> None:
        """Show what ``_index_file`` made."""
        if isinstance(message, LoadFailed):
            self._show_load_failure(message)
        else:
            self._show_session(message)

    @_while_running
    def on_preview_loaded(self, message: PreviewLoaded) -> None:
        """Show the file's tail while the whole file is indexed."""
        self._show_preview(message)

    def _show_preview(self, message: PreviewLoaded) -> None:
        """The file's tail: the leaf under the cursor, its details and gauge; the keys that
        move, filter, search and show tabs work on it."""
        if self.session is not None and not self.session.preview:
            message.drawn.set()
            return
        session = message.session
        self.state.handle = handle = SessionHandle(session)
        self.settings = message.settings
        self.state.token_cache = handle.token_cache(self.counter)
        self.state.preview_drawn = message.drawn
        self._update_status()
        self.state.outline_request += 1
        self.state.token_count_pending = True
        self._show_rows(message.rows, session.leaf)

    @_while_running
    def _preview_drawn(self) -> None:
        """The preview's first screen is on the terminal: the index starts, then the bar (how
        much of the file is shown) and the dimmed whole-file keys show; drawn with the first
        screen, they would lay it out and restyle it again while its first frame waits."""
        drawn = self.state.preview_drawn
        if drawn is None or drawn.is_set():
            return
        drawn.set()
        self.query_one(LoadingBar).showing_tail(len(self._loaded().entries))
        self.refresh_bindings()

    @_while_running
    def on_index_started(self, message: IndexStarted) -> None:
        """The index runs: the bar shows if it takes a while (with a preview: now, saying how
        much is shown). Started when the file is opened, its timer could lay out the screen
        for the bar while the preview's first frame waits."""
        if self.session is not None and self.session.preview:
            self._preview_drawn()  # at once if the preview's first frame came late or not
        else:
            self.query_one(LoadingBar).start(message.file_name)

    @_while_running
    def on_load_progressed(self, message: LoadProgressed) -> None:
        """Move the progress bar."""
        self.query_one(LoadingBar).advance(message.bytes_done, message.bytes_total, message.entries)

    @_while_running
    def on_load_failed(self, message: LoadFailed) -> None:
        """Say the file could not be read at all."""
        self._show_load_failure(message)

    def _show_load_failure(self, message: LoadFailed) -> None:
        """Say the file could not be read at all."""
        self.state.whole_screen.set()
        self.query_one(LoadingBar).stop()
        self.notify(
            sanitize(f"{message.path}: {message.error}"),
            title="cannot open",
            severity="error",
            timeout=10,
        )

    @_while_running
    def on_session_loaded(self, message: SessionLoaded) -> None:
        """Show the session."""
        self._show_session(message)

    def _show_session(self, message: SessionLoaded) -> None:
        """The session: status, banner, diagnostics, outline, token counts, follow."""
        self.query_one(LoadingBar).stop()
        collector.rebase()  # the index was frozen on purpose: not a reason to collect
        previous = self.session
        session = message.session
        self.state.whole_file_gauge = False  # the gauge shows the tail or the file before
        # A reload keeps the cursor's entry; another file starts at its leaf, as when opened.
        same_file = previous is not None and previous.path == session.path
        keep = self.selected_entry if same_file else session.leaf
        if previous is not None and previous.preview:
            # Entry indices of the preview count from its first line: carry the cursor by id.
            if keep is not None and keep < len(previous.entries):
                keep = session.index_of(previous.entries[keep].id)
            self.state.folded.clear()
            self.query_one(SessionTree).search_matches = set()
            self.state.preview_drawn = None
            self.refresh_bindings()
        self.state.handle = handle = SessionHandle(session)
        self.state.load_seconds = message.seconds
        self.settings = message.settings
        self.state.token_cache = handle.token_cache(self.counter)
        self.clear_plan()  # its entry indices are the old session's (a plan on its way too)
        tree = self.query_one(SessionTree)
        tree.token_counts.clear()
        self._show_write_gate()
        self._update_status()
        self._report_diagnostics(session)
        self._report_orphaned_appends(message.orphans)
        if not session.complete:
            self.notify(
                f"stopped after {len(session.entries):,} entries: showing what was "
                "read (read-only)",
                title="indexing stopped",
                severity="warning",
            )
        if session.leaf is None:  # no gauge to wait for (the chart is measured below)
            self.state.whole_screen.set()
        elif not self.state.whole_screen.is_set():  # in case no gauge comes
            self.set_timer(WHOLE_SCREEN_WAIT, self._whole_screen_shown)
        self.state.token_count_pending = True  # started once the rows (and what is visible) exist
        if message.filter_index == self.filter_index and not self.state.folded:
            self.state.outline_request += 1
            self._show_rows(message.rows, keep)
        else:  # the filter changed or branches were folded while the file was read
            self.rebuild_outline(keep_entry=keep)
        if self.state.whole_screen.is_set():  # else once the first screen of it is complete
            self.measure_chart(self.handle, self.settings)
        if self.options.follow and message.session.complete and "follow" not in self._debounce:
            self._debounce["follow"] = self.set_interval(FOLLOW_INTERVAL, self._follow_tick)

    def action_toggle_rules(self) -> None:
        """Plan, count and rebuild the context under the other rule set (pi <-> oh-my-pi)."""
        if self.session is None:
            return
        other = "pi" if self.settings.rules == "omp" else "omp"
        self.settings = self.settings.edited("app", rules=other)
        self._count_again()
        self.notify(
            f"{other} rules ({'oh-my-pi' if other == 'omp' else 'pi'}): plan, context "
            f"and tokens ({getattr(self.counter, 'name', '?')}) follow",
            timeout=4,
        )

    def _recounts(self) -> dict[str, Callable[[], None]]:
        """The one list of the workers (by group) that count with the app's counter, each with
        what starts its count again after a change of counter (``_count_again``). A worker
        that is not here (a navigation's plan, a shake preview) is asked for again by the
        user (``_count_without_table`` tells them)."""
        return {
            "tokens": self._recount_tree,
            "plan": self._replan_at_default_cut,
            "sweep": self._replan_at_default_cut,  # made for each plan that arrives
            "gauge": self._measure_selected,
            "chart": self._recount_chart,
            "breakdown": self._recount_breakdown,
        }

    def _count_again(self) -> None:
        """The counter or the rules changed: every worker of ``_recounts`` counts again (the
        tree's counts, the plan and its sweep, the gauge, the chart, the Window tab)."""
        assert self.handle is not None
        self.state.token_cache = self.handle.token_cache(self.counter)
        self._update_status()
        for count_again in dict.fromkeys(self._recounts().values()):  # each step once
            count_again()

    def _recount_tree(self) -> None:
        """The tree's token counts, visible rows first."""
        self.query_one(SessionTree).token_counts.clear()
        self.state.token_count_pending = True
        self.rebuild_outline()

    def _replan_at_default_cut(self) -> None:
        """The plan (and its sweep), at the cut the new counts choose."""
        self.state.plan_cut = None
        self.request_plan()

    def _recount_chart(self) -> None:
        """The chart of the whole active path."""
        if self.handle is not None:
            self.measure_chart(self.handle, self.settings)

    def _recount_breakdown(self) -> None:
        """The Window tab, if it was ever shown."""
        if self.pane_started("tab-breakdown"):
            self.request_breakdown(again=True)

    def _count_without_table(self, error: TokenTableError, what: str) -> None:
        """A count found that the cl100k table cannot be loaded (``what``: the worker that
        counted). The one place the app decides what follows: it counts with the chars/4
        estimate from now on (``Settings.without_table``, via the settings setter), marked
        on the status line, the gauge, the plan's settings and the Window tab, and counts
        everything shown again; the user is told once. A worker that is not counted again
        here (a navigation's plan, a shake preview) says so, to be asked again."""
        if self.state.table_error is None:
            self.state.table_error = error.reason
            self.settings = self.settings  # the setter applies the estimate
            gauge = self.query_one(ContextGauge)
            gauge.table_error = error.reason
            gauge.refresh()
            if self.handle is not None:
                self._count_again()
            self.notify(
                sanitize(
                    f"the cl100k token table could not be loaded ({error.reason}): every "
                    f"count here is a chars/4 estimate (marked {NO_TABLE_MARK}); --tokens pi "
                    "or bytes count without the table",
                    max_len=400,
                ),
                title="no token table",
                severity="error",
                timeout=10,
            )
        if what not in self._recounts():
            self.notify(
                f"{what} needed the cl100k token table; it counts {ESTIMATE_MARK} now: try again",
                title="no token table",
                severity="warning",
                timeout=6,
            )

    @_while_running
    def on_counting_restarted(self, message: CountingRestarted) -> None:
        """The counting process ended and was started again: the counts go on, exact (what it
        had in flight was sent again); said once. When it ends too often in a row the counts
        fail, and ``_count_without_table`` takes over."""
        self.notify(
            sanitize(
                f"{message.reason}: it was started again, and the counts go on (cl100k, exact)",
                max_len=400,
            ),
            title="token counting",
            severity="warning",
            timeout=8,
        )

    def _report_diagnostics(self, session: Session) -> None:
        """One notification summing up load problems (details are in `tui-compactor lint`),
        counting what the Issues view lists."""
        from tui_compactor.session.flavor import session_issues

        diagnostics = session_issues(session, self.settings.rules)
        if not diagnostics:
            return
        first_problem = diagnostics[0]
        where = Path(first_problem.path).name + (
            f":{first_problem.line}" if first_problem.line is not None else ""
        )
        first = sanitize(f"{where}: {first_problem.message}", single_line=True, max_len=160)
        more = f" (+{len(diagnostics) - 1} more; I lists them)" if len(diagnostics) > 1 else ""
        verdict = str(session.verdict)
        severity: SeverityLevel = "error" if verdict in ("refuse", "read-only") else "warning"
        self.notify(
            first + more,
            title=f"{verdict}: {issue_count(len(diagnostics))}",
            severity=severity,
            timeout=8,
        )

    def _report_orphaned_appends(self, messages: list[str] | None = None) -> None:
        """Say so when an agent's later entry left one of our appends off the active path, and
        how to put it back (the same finding and fix as `tui-compactor lint`); ``messages``
        when a worker found them already."""
        if messages is None:
            from tui_compactor.session.agents import orphaned_appends

            session = self._loaded()
            messages = [orphan.message(session) for orphan in orphaned_appends(session)]
        for text in messages:
            text += " Here: select it and press enter (navigate)."
            self.notify(
                sanitize(text, max_len=700),
                title="an agent left our entry behind",
                severity="warning",
                timeout=15,
            )

    def _update_status(self) -> None:
        """Refresh the status line."""
        if self.session is None:
            return
        self.query_one(SessionStatus).show(
            self.session,
            filter_name=self.filter_name,
            counter_name=self.settings.counter_label,
            jobs=self.state.running_jobs,
            following="follow" in self._debounce,
            rules=self.settings.rules,
            rules_source=self.settings.source_of("rules"),
        )

    # ----- outline -----------------------------------------------------------------------

    def rebuild_outline(self, keep_entry: int | None = None) -> None:
        """Rebuild the tree rows off the UI thread (fold, filter, refresh)."""
        if self.session is None:
            return
        self.state.outline_request += 1
        if keep_entry is None:
            keep_entry = self.selected_entry
        assert self.handle is not None
        self.build_rows(
            self.handle,
            set(self.state.folded),
            self.filter_index,
            keep_entry,
            self.state.outline_request,
        )

    @work(thread=True, exclusive=True, exit_on_error=False, group="outline")
    def build_rows(
        self,
        handle: SessionHandle,
        folded: set[int],
        filter_index: int,
        keep_entry: int | None,
        generation: int,
    ) -> None:
        """Flatten the session into rows in a thread."""
        from tui_compactor.session.outline import OutlineFilter, build_outline

        view = getattr(OutlineFilter, FILTER_NAMES[filter_index])
        with handle.read() as snapshot:
            rows = build_outline(snapshot.session, folded=folded, view=view)
        self.post_message(OutlineReady(rows, keep_entry, generation))

    @_while_running
    def on_outline_ready(self, message: OutlineReady) -> None:
        """Show the rows (stale generations are dropped)."""
        if message.generation != self.state.outline_request:
            return
        self._show_rows(message.rows, message.keep_entry)

    def _shown_ancestor(self, rows: OutlineRows, entry: int | None) -> int | None:
        """``entry`` if a row shows it, else its nearest ancestor a row shows: a filter, a fold
        or an append (a bookkeeping leaf is shown only while it is the leaf) that hides the
        cursor's entry leaves the cursor where ``p`` would take it, not on whatever entry
        now has its row. ``entry`` itself when no ancestor shows (or it is not in the file)."""
        session = self.session
        if entry is None or session is None or entry in rows.positions:
            return entry
        parents = session.parent_column()
        node = entry
        while 0 <= node < len(parents) and node not in rows.positions:
            node = parents[node]
        return node if 0 <= node < len(parents) else entry

    def _show_rows(self, rows: OutlineRows, keep_entry: int | None) -> None:
        """Put fresh rows in the tree (cursor on ``keep_entry`` if shown) and count what shows."""
        tree = self.query_one(SessionTree)
        tree.set_rows(self.session, rows, self._shown_ancestor(rows, keep_entry))
        # What the cursor is on now, before its ``Highlighted`` arrives: a key handled in
        # between (``c``) must not act on an entry of the rows (or the file) shown before.
        self.state.selected_entry = tree.cursor_entry
        if tree.cursor_entry is None:  # no row shows: nothing of the file shown before either
            reason = (
                "no entries in this file"
                if self.session is None or not len(self.session.entries)
                else "no entries to show with this filter"
            )
            self.query_one(EntryDetails).show_nothing(reason)
            self.state.gauge_data = None
            self.query_one(ContextGauge).show(None, reason)
        if self.state.token_count_pending:
            self.state.token_count_pending = False
            self.start_token_count()

    @on(SessionTree.Highlighted)
    def _entry_highlighted(self, message: SessionTree.Highlighted) -> None:
        """Show the entry and, after a short rest, measure the context at it."""
        tree = message.tree
        if not tree.is_attached:
            return  # the app is closing (a quit as the index lands): no screen to show it on
        if message.entry_index != tree.cursor_entry:
            return  # the cursor moved on, or the rows are new (another file's): stale
        self.state.selected_entry = message.entry_index
        self._show_details(message.entry_index)
        row = (
            tree.rows[tree.row_of_entry[message.entry_index]]
            if message.entry_index in tree.row_of_entry
            else None
        )
        on_path = row is not None and row.on_active_path
        # The chart is the active path's: mark a column only for nodes on that path.
        self.query_one(ContextChart).select(message.entry_index if on_path else None)
        if self.query_one(TabbedPanes).active == "tab-diff":
            self.show_summary_diff()
        # The first measure of a session is not debounced: it completes the first screen.
        delay = self.gauge_debounce if self.state.gauge_data is not None else 0
        self._restart_timer("gauge", delay, self._measure_selected)

    def _show_details(self, entry_index: int) -> None:
        """The entry in the details pane, with its token count once the counting worker has
        it (counting here could wait for the token table or a long record: the UI stalls)."""
        session = self._loaded()
        tokens = self.query_one(SessionTree).token_counts.get(entry_index)
        details = self.query_one(EntryDetails)
        label = session.label_of(entry_index)
        located = not session.preview
        handle = self.handle
        shown_as = (
            handle.generation if handle is not None else None,
            entry_index,
            tokens,
            label,
            self.settings.rules,
            located,
        )
        if shown_as == details.shown_as and details.scroll_offset == (0, 0):
            # Shown from the same file and the same facts, from its top: drawing it again
            # would change nothing on screen. The first screen shows the leaf's details at
            # once, and the tree's ``Highlighted`` for it arrives after that frame (5 ms of
            # the UI thread on the 100k session's leaf, while the screen is being drawn).
            return
        details.show_entry(
            session.entries[entry_index], tokens, label, rules=self.settings.rules, located=located
        )
        details.shown_as = shown_as
        if not markdown_loaded() and not any(worker.group == "markdown" for worker in self.workers):
            self.load_details_markdown()

    @work(thread=True, exclusive=True, exit_on_error=False, group="markdown")
    def load_details_markdown(self) -> None:
        """Load the details' Markdown renderer once the whole file is indexed and shown
        (``whole_screen``: its imports would share the GIL with the index and the first
        screen). The entry shown keeps its plain text until another is selected
        (``EntryDetails.shown_plain``): no visible swap. Then import the views the first
        screen does not show (``LATER_MODULES``), so the first key that shows one does not
        wait for its imports."""
        worker = get_current_worker()
        while not self.state.whole_screen.wait(0.25):
            if worker.is_cancelled:
                return
        load_markdown()
        for name in LATER_MODULES:
            importlib.import_module(name)

    @work(thread=True, exclusive=True, exit_on_error=False, group="style-ahead")
    def style_dialogs_ahead(self) -> None:
        """Once the whole first screen is shown: the navigation dialog's module imported here,
        off the UI thread, then the CSS of its widgets parsed on it, a class at a time
        (``_style_ahead``)."""
        from tui_compactor.ui.screens.navigate import dialog_widget_classes

        if not get_current_worker().is_cancelled:
            self.post_message(StylesAhead(list(dialog_widget_classes())))

    def on_styles_ahead(self, message: StylesAhead) -> None:
        """Start parsing the CSS of the classes a worker found (``style_dialogs_ahead``)."""
        self._style_ahead(message.classes)

    def _style_ahead(self, classes: list[type[Any]]) -> None:
        """Parse the CSS of ``classes`` (the navigation dialog's widgets), one class every
        ``STYLE_AHEAD_STEP_S``: its first opening then parses none of it on the UI thread
        (``styled.add_default_css``)."""
        if not classes or not self.is_running:
            return
        add_default_css(self, classes[0])
        if classes[1:]:
            self.set_timer(STYLE_AHEAD_STEP_S, lambda: self._style_ahead(classes[1:]))

    def _restart_timer(self, name: str, delay: float, callback: Callable[[], None]) -> None:
        """Debounce: cancel the pending ``name`` timer and run ``callback`` after ``delay``
        (at once when ``delay`` is 0; not once the app shuts down: its widgets are gone)."""
        timer = self._debounce.pop(name, None)
        if timer is not None:
            timer.stop()
        if delay <= 0:
            callback()
        else:
            self._debounce[name] = self.set_timer(
                delay, lambda: callback() if self.is_running else None
            )

    def _context_view(self) -> ContextView | None:
        """The Context tab's view once it is built (its module is imported with it)."""
        if not self.pane_built("tab-context"):
            return None
        from tui_compactor.ui.widgets.context_view import ContextView

        return self.view(ContextView)

    def _measure_selected(self, *, list_blocks: bool = False) -> None:
        """Start measuring the context at the selected entry (and count what is on screen);
        its blocks are listed only for the Context tab (shown, or ``list_blocks``)."""
        selected = self.selected_entry
        if self.handle is not None and self.token_cache is not None and selected is not None:
            context = self._context_view()
            sent = context is not None and context.as_sent
            blocks = list_blocks or (context is not None and context.is_on_screen)
            request = (
                selected,
                self.handle.generation,
                self.settings,
                self.token_cache,
                sent,
                blocks,
            )
            if request not in self.state.gauges_in_flight:  # else its result is on the way
                self.measure_node(
                    self.handle,
                    selected,
                    self.settings,
                    self.token_cache,
                    sent=sent,
                    blocks=blocks,
                    request=request,
                )
            self._count_visible_first()
            self.analysis_node_measured()

    def _count_visible_first(self) -> None:
        """Rows on screen without a token count: restart counting with them first (counts
        already made are cached, so a restart costs little)."""

        if not self.state.token_count_pending and self._visible_uncounted():
            self.start_token_count()

    def _visible_uncounted(self) -> bool:
        """Whether a message row on screen has no token count yet."""
        from tui_compactor.engine.messages import MESSAGE_BEARING_TYPES

        tree = self.query_one(SessionTree)
        top = int(tree.scroll_y)
        entries = self._loaded().entries
        return any(
            row.index not in tree.token_counts and entries[row.index].type in MESSAGE_BEARING_TYPES
            for row in tree.rows[top : top + tree.size.height]
        )

    def _check_whole_screen(self) -> None:
        """The whole file's first screen is complete once the gauge shows a node of it and the
        rows on screen have their counts: what waited for it starts (``_whole_screen_shown``)
        after the screen's next refresh, which draws it."""
        if (
            not self.state.whole_screen.is_set()
            and self.state.whole_file_gauge
            and not self._loaded().preview
            and not self._visible_uncounted()
        ):
            self.call_after_refresh(self._whole_screen_shown)

    def _loaded_here(self, generation: int) -> bool:
        """Whether a result made at ``generation`` is of the file shown now."""
        return self.handle is not None and self.handle.is_loaded_at(generation)

    def _whole_screen_shown(self) -> None:
        """Start what the whole file's first screen does not need, now that it is complete:
        the chart (reading the usage of every assistant turn on the active path: ~0.5 s of the
        GIL on 100k entries), the Markdown renderer and the later tabs' modules."""
        if self.state.whole_screen.is_set() or self.session is None:
            return
        self.state.whole_screen.set()
        self.measure_chart(self.handle, self.settings)
        self.style_dialogs_ahead()

    @on(SessionTree.FoldToggled)
    def _fold_toggled(self, message: SessionTree.FoldToggled) -> None:
        """Fold or unfold a branch point and rebuild the rows."""
        if message.entry_index in self.state.folded:
            self.state.folded.discard(message.entry_index)
        else:
            self.state.folded.add(message.entry_index)
        self.rebuild_outline(keep_entry=message.entry_index)

    # ----- tokens, gauge, chart ----------------------------------------------------------

    def start_token_count(self) -> None:
        """Count tokens per entry in a worker: rows on screen first, then newest first (a
        tail-first preview: the rows on screen only, the index needs the time)."""
        tree = self.query_one(SessionTree)
        top = int(tree.scroll_y)
        visible = [row.index for row in tree.rows[top : top + tree.size.height + 1]]
        if self.handle is not None and self.token_cache is not None:
            self.count_tokens(
                self.handle, self.token_cache, visible, only_first=self.handle.session.preview
            )

    @work(thread=True, exclusive=True, exit_on_error=False, group="tokens")
    def count_tokens(
        self,
        handle: SessionHandle,
        cache: TokenCache,
        first: list[int] | None = None,
        *,
        only_first: bool = False,
    ) -> None:
        """Count tokens per entry (thread); posts batches at most ~10 times a second.

        The session is read in batches under the handle's shared lock, so a refresh can run
        between batches but never in the middle of one.
        """
        worker = get_current_worker()
        self.state.first_screen.wait(FIRST_SCREEN_WAIT)
        batch: dict[int, int] = {}
        last_post = time.monotonic()
        with handle.read() as snapshot:
            count = snapshot.entry_count
        first = list(first or [])

        def chunks() -> Iterator[Sequence[int]]:
            # The rows on screen, then newest first, TOKEN_BATCH entries at a time.
            if first:
                yield first
            if not only_first:
                for top in range(count, 0, -TOKEN_BATCH):
                    yield range(top - 1, max(top - TOKEN_BATCH, 0) - 1, -1)

        for chunk in chunks():
            if worker.is_cancelled:
                return
            # The records are read once (``TokenCache.uncounted``: not kept in the session's
            # cache of parsed records, which they pushed out the records the app shows with),
            # with the collector paused: no young collection of the UI thread scans them.
            with handle.read(), gc_paused():
                wanted, messages = cache.uncounted(chunk)
            # One request to a counting process, without holding the session: a refresh (the
            # agent appending) need not wait for the counts of big tool results.
            cache.keep_counts(wanted, cache.counter.count_messages(messages))
            with handle.read():
                for index in chunk:
                    tokens = cache.entry_tokens(index)
                    if tokens is not None:
                        batch[index] = tokens
            time.sleep(0)  # let the UI thread take the GIL between batches
            now = time.monotonic()
            if batch and (chunk is first or now - last_post >= 0.1):  # the screenful at once
                self.post_message(TokensCounted(batch, cache))
                batch, last_post = {}, now
        if batch:
            self.post_message(TokensCounted(batch, cache))

    @_while_running
    def on_tokens_counted(self, message: TokensCounted) -> None:
        """Show a batch of counts in the tree (not those of a session or counter replaced
        since: a preview's indices, the other rule set's counts)."""
        if message.cache is not None and message.cache is not self.token_cache:
            return
        self.query_one(SessionTree).add_token_counts(message.counts)
        self._check_whole_screen()
        selected = self.selected_entry
        if (
            selected is not None
            and selected in message.counts
            and (self.query_one(EntryDetails).shown_entry == selected)
        ):
            self._show_details(selected)  # its count was not known when it was shown

    @work(thread=True, exclusive=True, exit_on_error=False, group="gauge")
    def measure_node(
        self,
        handle: SessionHandle,
        entry_index: int,
        settings: Settings,
        cache: TokenCache,
        *,
        sent: bool = False,
        blocks: bool = False,
        request: tuple[Any, ...],
    ) -> None:
        """Measure the context at a node (``workbench.views.gauge_at``) in a thread; with
        ``blocks`` also list its blocks, with ``sent`` what the agent sends for each item (the
        Context tab's list and its "as sent").

        While the counter's table is not loaded yet (the first screen), the gauge is first drawn
        from a chars/4 count, marked as such, and measured again once the first screen is up.

        ``request`` is in ``gauges_in_flight`` exactly while this body runs: a worker cancelled
        before it ran, or before it measured, leaves nothing behind that would stop the next
        request for that node.
        """
        in_flight = self.state.gauges_in_flight
        in_flight.add(request)
        worker = get_current_worker()
        state = self.state

        def abandoned() -> bool:
            # Cancelled by a newer request, and the cursor is elsewhere: nobody waits for it.
            return worker.is_cancelled and state.selected_entry != entry_index

        try:
            self._measure(
                handle, entry_index, settings, cache, sent=sent, blocks=blocks, cancelled=abandoned
            )
        except MeasureCancelled:
            in_flight.discard(request)
            # The cursor may have come back meanwhile (its request skipped as on its way).
            self.call_later(self._measure_if_selected, entry_index)
        finally:
            in_flight.discard(request)

    def _measure_if_selected(self, entry_index: int) -> None:
        """Measure ``entry_index`` if it is still the selected node (after an abandoned walk)."""
        if self.selected_entry == entry_index:
            self._measure_selected()

    def _measure(
        self,
        handle: SessionHandle,
        entry_index: int,
        settings: Settings,
        cache: TokenCache,
        *,
        sent: bool,
        blocks: bool,
        cancelled: Callable[[], bool],
    ) -> None:
        if not getattr(cache.counter, "loaded", True):
            data, _ = self._quick_gauge(handle, entry_index, settings, cache)
            self.post_message(GaugeReady(data, provisional=True))
            # Measured even if a newer request cancelled this worker meanwhile: a request for
            # this node made while it waited was skipped as on its way (a cancelled result for
            # a node no longer selected is dropped when it arrives).
            self.state.first_screen.wait(FIRST_SCREEN_WAIT)
        # Measuring reads the context's entries into the session's cache of parsed entries
        # (~20k containers on the 100k session, kept): made with the collector paused, then
        # frozen (as the indexer does), the UI thread's next young collection does not scan
        # them (5-25 ms of CPU in whatever frame it lands in: the Context tab's, the plan's).
        with handle.read() as snapshot, gc_paused():
            data = gauge_at(
                snapshot,
                entry_index,
                settings,
                cache,
                describe=_describe_block,
                blocks=blocks,
                sent=sent,
                cancelled=cancelled,
            )
        self.post_message(GaugeReady(data))

    @staticmethod
    def _quick_gauge(
        handle: SessionHandle, entry_index: int, settings: Settings, cache: TokenCache
    ) -> tuple[GaugeData, bool]:
        """The gauge at ``entry_index`` without its blocks, and whether it is provisional: a
        chars/4 count while ``cache``'s counter has not loaded its table."""
        provisional = not getattr(cache.counter, "loaded", True)
        with handle.read() as snapshot:
            if provisional:
                cache = TokenCache(snapshot.session, get_counter(ESTIMATE_COUNTER))
            return gauge_at(snapshot, entry_index, settings, cache, blocks=False), provisional

    def _first_screen_drawn(self) -> None:
        """The first screen is up: token counting may start (the counter loads its table), the
        collector may run."""
        self.state.first_screen.set()
        collector.release_start_up()
        preload = getattr(self.counter, "preload", None)
        if preload is not None:
            preload()

    @_while_running
    def on_gauge_ready(self, message: GaugeReady) -> None:
        """Draw the gauge and the context view for the selected node."""
        self._show_gauge(message)

    def _show_gauge(self, message: GaugeReady) -> None:
        """The gauge and the context view for the selected node (``GaugeReady``)."""
        if message.data.entry_index != self.selected_entry or not self._loaded_here(
            message.data.generation
        ):
            return  # another node's, or measured on the file loaded before
        gauge = self.query_one(ContextGauge)
        if not self.state.first_screen.is_set():
            self._frame_waits.after_drawn(gauge, self._first_screen_drawn)
        if self.state.preview_drawn is not None:  # the preview is on screen: index now
            self._frame_waits.after_drawn(gauge, self._preview_drawn)
        if message.provisional:
            gauge.show(message.data, provisional=True)
            return
        self.state.gauge_data = message.data
        gauge.show(message.data)
        if not self._loaded().preview:
            self.state.whole_file_gauge = True
            self._check_whole_screen()
        if not self.pane_started("tab-context"):
            return  # the Context tab, built later, starts from ``gauge_data``
        from tui_compactor.ui.widgets.context_view import ContextView

        view = self.view(ContextView)
        if view is not None and (
            (view.as_sent and message.data.sent is None)
            or (view.is_on_screen and message.data.blocks is None)
        ):
            # Measured without what the Context tab shows (its blocks: asked while the tab was
            # hidden; "as sent": asked before `s`/`S`; a thread finishing after the one that
            # has it): the view keeps what it shows and asks again.
            self._measure_selected()
            return
        self.with_view(ContextView, lambda view: view.show(message.data), build=False)

    def get_driver_class(self) -> type[Driver]:
        """Textual's driver for this terminal; on Linux and macOS the one whose frames can be
        waited for until they are on the terminal (``ui.driver``)."""
        driver = super().get_driver_class()
        # Textual imported its Linux driver only where it chose it (it needs termios).
        if (driver.__module__, driver.__name__) == ("textual.drivers.linux_driver", "LinuxDriver"):
            from tui_compactor.ui.driver import WrittenDriver

            return WrittenDriver
        return driver

    def post_display_hook(self) -> None:
        """A frame was handed to the terminal: run what waited for it (``ui.frames``), after
        this display, once its bytes are on the terminal: the first screen's callbacks start
        workers that hold the GIL (a big file's index), which Textual's writer thread needs to
        write the frame (``ui.driver``)."""
        ready = self._frame_waits.frame_written()
        if not ready:
            return
        wait_written = getattr(self._driver, "wait_written", None)
        if wait_written is not None:
            wait_written(FRAME_WRITE_WAIT)
        for callback in ready:
            self.call_later(callback)

    @work(thread=True, exclusive=True, exit_on_error=False, group="chart")
    def measure_chart(self, handle: SessionHandle, settings: Settings) -> None:
        """Context size after every assistant turn on the active path (thread)."""
        with handle.read() as snapshot:
            chart = chart_points(snapshot, settings)
        self.post_message(ChartReady(chart))

    @_while_running
    def on_chart_ready(self, message: ChartReady) -> None:
        """Draw the chart."""
        chart = message.chart
        if not self._loaded_here(chart.generation):
            return  # measured on the file loaded before
        self.query_one(ContextChart).show(
            chart.points, chart.compactions, chart.window, chart.threshold
        )

    # ----- plan --------------------------------------------------------------------------

    def action_plan(self) -> None:
        """Plan a compaction with the selected node as the leaf (no LLM involved)."""
        from tui_compactor.ui.widgets.plan_view import PlanView

        if self.session is None or self.selected_entry is None:
            return
        self._check_config_file()
        self.state.plan_leaf = self.selected_entry
        self.state.plan_cut = None
        self.state.cut_steps = 0
        self.state.run_after_plan = ""  # a new plan: an r still waiting for the last is dropped
        settings = self.settings

        self.with_view(PlanView, lambda view: view.show_settings(settings))
        self.action_show_tab("tab-plan")
        self.request_plan()

    def request_plan(self) -> None:
        """(Re)start planning for the current leaf, cut and settings. The plan is asked for at
        once (``r`` waits for it); its worker starts once the keys already typed are handled,
        and not while another plan is being made (it starts when that one ends): ``[`` typed
        five times faster than plans arrive (or replayed on the plan they were typed for)
        makes one plan at the last cut, not one per key."""
        from tui_compactor.ui.widgets.plan_view import PlanView

        if self.session is None or self.state.plan_leaf is None:
            return
        self.state.plan_request += 1
        planning = f"planning at #{self.state.plan_leaf}…"
        self.with_view(PlanView, lambda view: view.show_planning(planning))
        self._plan_wanted = True
        if not self._plan_start_queued:
            self._plan_start_queued = True
            self.call_later(self._start_plan)

    def _start_plan(self) -> None:
        """Start the plan worker for the plan asked for last (``request_plan``), unless one is
        being made (``_worker_state_changed`` calls this again as it ends)."""
        self._plan_start_queued = False
        if not self._plan_wanted or self.handle is None or self.state.plan_leaf is None:
            return
        if any(
            worker.group == "plan" and worker.state in (WorkerState.PENDING, WorkerState.RUNNING)
            for worker in self.workers
        ):
            return
        self._plan_wanted = False
        self.make_plan(
            self.handle,
            self.state.plan_leaf,
            self.settings,
            self.state.plan_cut,
            self.state.plan_request,
            self.token_cache,
            self.options.profile_name,
        )

    @work(thread=True, exclusive=True, exit_on_error=False, group="plan")
    def make_plan(
        self,
        handle: SessionHandle,
        leaf: int,
        settings: Settings,
        cut: int | None,
        request: int,
        cache: TokenCache | None,
        profile_name: str | None,
    ) -> None:
        """Plan in a thread with everything the pane shows computed (``views.plan_report``),
        its text included (the plan; where each of its settings came from, shown under the
        sweep): the handler only draws."""
        # The sweep that follows the plan imports these on the UI thread: imported here, in
        # the worker, the frame that draws the plan does not wait for their first import.
        import tui_compactor.engine.deps  # noqa: F401
        import tui_compactor.ui.widgets.analysis  # noqa: F401
        from tui_compactor.ui.widgets.plan_view import plan_summary, settings_text

        with handle.read() as snapshot:
            report = plan_report(snapshot, leaf, settings, cut, cache)
            # What ``plan`` warns of, in the same words: the plan's own warnings (a cut moved
            # back to keep a turn whole…) and settings that are ignored or clamped.
            notes = [
                *report.plan.warnings,
                *settings.warnings(),
                *_fold_notes(report.plan, profile_name, settings),
            ]
            text = plan_summary(report.plan, snapshot.session, REGION_STYLES, report.refusal, notes)
        sources = settings_text(settings.plan_source_items())
        self.post_message(PlanReady(report, request, text, sources))

    @_while_running
    def on_plan_ready(self, message: PlanReady) -> None:
        """Colour the tree by region and describe the plan."""
        from tui_compactor.ui.widgets.plan_view import PlanView

        if message.request != self.state.plan_request:
            return
        plan = message.plan
        self.state.plan_report = message.report
        self.state.plan_answered = message.request
        tree = self.query_one(SessionTree)
        tree.set_plan(message.regions, message.cut_entry)
        steps, self.state.cut_steps = self.state.cut_steps, 0
        if steps and plan.prepared:  # brackets typed before this plan: move its cut now
            for _ in range(abs(steps)):
                self._move_cut(1 if steps > 0 else -1)
            if self.state.plan_request != message.request:  # the moved plan is on its way
                self.with_view(PlanView, lambda view: view.show_plan(message.text, message.sources))
                return  # an ``r`` waiting for a plan runs that one
        if self.state.run_after_plan:
            mode, self.state.run_after_plan = self.state.run_after_plan, ""
            self._start_compaction(candidates=mode == "candidates")
        cut_entry = message.cut_entry
        if (
            self.state.plan_cut is not None
            and cut_entry is not None
            and (cut_entry in tree.row_of_entry)
        ):
            tree.scroll_to_center_row(tree.row_of_entry[cut_entry])
        self.with_view(PlanView, lambda view: view.show_plan(message.text, message.sources))
        self.request_sweep(plan, message.request)

    def _move_cut(self, step: int) -> None:
        """Snap the cut to the previous (-1) or next (+1) valid cut point."""
        plan = self.plan
        if self._plan_on_its_way() and self.state.plan_cut is None:
            # ``c`` (or a settings edit) asked for a plan that has not come: its cut is moved
            # when it comes (the shown plan, if any, is of another node or other settings).
            self.state.cut_steps += step
            return
        if plan is None or not plan.prepared:
            self.notify("press c to plan first", timeout=2)
            return
        cuts = sorted(plan.valid_cut_points)
        current = plan.first_kept_index
        if self.state.plan_cut is not None:
            # Keys pressed faster than plans arrive step on from the cut last asked for (the
            # branch and its valid cuts are those of the same leaf and settings).
            current = bisect.bisect_left(plan.branch, self.state.plan_cut)
        if step < 0:
            candidates = [cut for cut in cuts if cut < current]
            chosen = candidates[-1] if candidates else None
        else:
            candidates = [cut for cut in cuts if cut > current]
            chosen = candidates[0] if candidates else None
        if chosen is None:
            self.notify("no valid cut point further " + ("back" if step < 0 else "on"), timeout=2)
            return
        self.state.plan_cut = plan.branch[chosen]
        self.request_plan()

    def _plan_failed(self) -> None:
        """The plan being made failed. A plan asked for since (a settings edit, a cut key, ``c``
        while it was made) is made now: what was asked last is still on its way. Otherwise
        nothing waits for it any more (an ``r`` typed for it does not run a later plan by
        itself; cut keys typed for it are dropped), and the pane says so."""
        from tui_compactor.ui.widgets.plan_view import PlanView

        if self._plan_wanted:
            self._start_plan()
            return
        self.state.plan_answered = self.state.plan_request
        self.state.cut_steps = 0
        self._plan_wanted = False
        if self.state.run_after_plan:
            self.state.run_after_plan = ""
            self.notify("the plan failed: no compaction started", severity="warning", timeout=6)
        failed = "planning failed (see the note); c plans again"
        self.with_view(PlanView, lambda view: view.show_plan_failed(failed))

    def _plan_on_its_way(self) -> bool:
        """A plan was asked for (``c``, a cut key, a settings edit) and has not come yet."""
        return (
            self.state.plan_leaf is not None and self.state.plan_request != self.state.plan_answered
        )

    def action_cut_earlier(self) -> None:
        """Move the cut to the previous valid cut point (summarize less)."""
        self._move_cut(-1)

    def action_cut_later(self) -> None:
        """Move the cut to the next valid cut point (summarize more)."""
        self._move_cut(1)

    def action_edit_settings(self) -> None:
        """Edit keep-recent / reserve / window in place."""
        from tui_compactor.ui.widgets.plan_view import PlanView

        self.hold_keys()  # until the keep field has the focus
        self.action_show_tab("tab-plan")
        settings = self.settings

        def edit(view: PlanView) -> None:
            view.show_settings(settings)
            view.focus_inputs()

        self.with_view(PlanView, edit)

    def on_plan_view_settings_edited(self, message: PlanView.SettingsEdited) -> None:
        """Re-plan and re-measure shortly after the user stops typing.

        Any figures are accepted; the plan pane says why settings that make no sense cannot
        be run (``Settings.problems``).
        """
        settings = self.settings
        changes: dict[str, int | None] = {}
        # Only the figures the user changed become the app's (each setting keeps its source).
        if message.keep_recent != settings.keep_recent_tokens:
            changes["keep_recent_tokens"] = message.keep_recent
        if message.reserve != settings.reserve_tokens:
            changes["reserve_tokens"] = message.reserve
        if message.window is not None and message.window != settings.context_window:
            changes["context_window"] = message.window  # the user's figure now, not the model's
        if not changes:
            return
        try:
            self.settings = self.settings.edited("app", **changes)
        except ValueError as error:
            self.notify(str(error), title="setting not applied", severity="warning")
            return
        self._restart_timer("settings", self.settings_debounce, self._apply_settings)

    def on_plan_view_more_settings_edited(self, message: PlanView.MoreSettingsEdited) -> None:
        """Thresholds, split turns, branch summaries, summarizer effort and window."""
        try:
            self.settings = self.settings.edited("app", **message.changes)
        except ValueError as error:
            self.notify(
                sanitize(str(error), max_len=200),
                title="setting not changed",
                severity="warning",
                timeout=5,
            )
            return
        self._restart_timer("settings", self.settings_debounce, self._apply_settings)

    def on_plan_view_options_edited(self, message: PlanView.OptionsEdited) -> None:
        """Method and focus of the next compaction (``--method`` / ``--instructions``)."""
        self.state.compaction_options = (message.method, message.focus, message.replace)

    def _apply_settings(self) -> None:
        """The budget changed: plan, gauge and chart follow."""
        self._replan_at_default_cut()
        self._measure_selected()
        self._recount_chart()

    def clear_plan(self) -> None:
        """Forget the plan (a plan on its way too) and remove its marks from the tree."""
        self.state.plan_report = None
        self.state.plan_leaf = None
        self.state.plan_cut = None
        self.state.cut_steps = 0
        self.state.run_after_plan = ""
        self.state.plan_request += 1
        self.query_one(SessionTree).set_plan({}, None)
        if not self.pane_started("tab-plan"):
            return  # no plan shown (its module is not imported before the first screen)
        from tui_compactor.ui.widgets.plan_view import PlanView

        self.with_view(
            PlanView,
            lambda view: view.show_message("press c for the compaction plan of the selected node"),
            build=False,
        )

    # ----- compaction --------------------------------------------------------------------

    @property
    def compaction_panel(self) -> CompactionPanel | None:
        """The panel of the current compaction, if one is shown."""
        return self.review_panel

    def action_run_compaction(self) -> None:
        """Run the shown plan: summaries stream in the Compaction tab while the user browses."""
        self._start_compaction(candidates=False)

    def action_run_candidates(self) -> None:
        """Run the plan with several profiles side by side, to compare before accepting."""
        self._start_compaction(candidates=True)

    def candidate_summarizers(self) -> list[Summarizer]:
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
        """Checks, then the compaction panel with one job per summarizer."""
        if self.session is None:
            return
        if self.compaction_options[0] == "shake":  # a preview: no plan, summarizer or write
            leaf = self.plan.leaf if self.plan is not None else self.selected_entry
            if leaf is not None and self.handle is not None:
                self.preview_shake(self.handle, leaf, self.settings)
            return
        stale = (
            self.state.plan_report is not None
            and self.handle is not None
            and self.state.plan_report.generation != self.handle.generation
        )
        asked = self._plan_on_its_way()  # the shown plan (if any) is not the one asked for
        if self.plan is None or stale or asked:
            if asked:  # run once it comes (with the cut keys typed after ``c``)
                self.request_plan()
            elif self.plan is None:
                self.action_plan()
            else:
                self.notify("the session grew since this plan: planning again first", timeout=4)
                self._replan_after_growth()
            self.state.run_after_plan = "candidates" if candidates else "single"
            return
        from tui_compactor.workbench.plans import run_refusal

        refusal = run_refusal(self.plan, self.settings)
        if refusal is not None:
            self.notify(
                sanitize(refusal, max_len=300),
                title="cannot compact",
                severity="warning",
                timeout=8,
            )
            return
        panel = self.compaction_panel
        if panel is not None and panel.running:
            self.notify("a compaction is already running (esc cancels it)", timeout=3)
            return
        from tui_compactor.summarize.compaction import CompactionJob

        try:
            summarizers = (
                self.candidate_summarizers()
                if candidates
                else [self.summarizer_for(compaction=True)]
            )
        except Exception as error:
            self.notify(sanitize(str(error), max_len=300), title="no summarizer", severity="error")
            return
        if candidates and len(summarizers) < 2:
            self.notify(
                sanitize(no_candidates_text(self.config), max_len=600),
                title="nothing to compare",
                severity="warning",
                timeout=15,
            )
            return
        method, focus, replace = self.compaction_options
        jobs = [
            CompactionJob(
                self.plan,
                self.session,
                summarizer,
                self.settings.compaction(),
                files_format=self.settings.files_format,
                method=method,  # type: ignore[arg-type]
                instructions=focus.strip() or None,
                replace_instructions=replace,
            )
            for summarizer in summarizers
        ]
        self.state.compaction_basis = self.state.plan_report
        # A file the append gate refuses can still be summarized and reviewed (as
        # `compact --dry-run` can); the panel keeps Accept disabled and shows why.
        from tui_compactor.ui.widgets.compaction import CompactionPanel

        session = self.session
        panel = CompactionPanel(jobs, write_refusal=lambda: session.append_refusal)
        names = ", ".join(sanitize(summarizer.label, max_len=40) for summarizer in summarizers)

        def show_panel() -> None:
            host = self.query_one("#compaction-host", Vertical)
            host.remove_children()
            host.mount(panel)
            self.action_show_tab("tab-compaction")
            self.open_review(panel)
            self.notify(
                f"compacting with {names}: a accepts, d discards, esc cancels, z zooms in and out",
                timeout=4,
            )

        self.with_pane("tab-compaction", show_panel)

    @work(thread=True, exclusive=True, exit_on_error=False, group="shake")
    def preview_shake(self, handle: SessionHandle, leaf: int, settings: Settings) -> None:
        """oh-my-pi's three shake configs at ``leaf``, and the context size now (thread)."""
        from tui_compactor.engine.shake import SHAKE_CONFIGS, contexts_after_shake, shake_previews

        counter = settings.counter()
        cache = handle.token_cache(counter)  # the messages' counts the app has already
        with handle.read() as snapshot:
            session = snapshot.session
            previews = shake_previews(session, leaf, list(SHAKE_CONFIGS), counter, cache)
            sizes = contexts_after_shake(session, leaf, previews, counter, cache)
        self.call_from_thread(self._show_shake, previews, sizes, leaf)

    def _show_shake(self, previews: list[Any], sizes: list[tuple[int, int]], leaf: int) -> None:
        """Show a shake preview in the Compaction tab (nothing can be accepted)."""
        from tui_compactor.ui.widgets.shake_view import ShakeView

        def show_view() -> None:
            host = self.query_one("#compaction-host", Vertical)
            host.remove_children()
            host.mount(ShakeView(previews, sizes, leaf))
            self.call_after_refresh(self.refresh_bindings)
            self.action_show_tab("tab-compaction")
            self.notify(
                "shake preview: oh-my-pi writes shakes by rewriting the file, so this "
                "is shown only",
                timeout=4,
            )

        self.with_pane("tab-compaction", show_view)

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

    def on_compaction_panel_discarded(self, message: CompactionPanel.Discarded) -> None:
        """Nothing was written; say so."""
        outcome = (
            "compaction cancelled: nothing written"
            if message.cancelled
            else "compaction discarded: nothing written"
        )
        self.close_review(outcome)
        self.notify(outcome, timeout=3)

    def on_compaction_panel_failed(self, message: CompactionPanel.Failed) -> None:
        """No candidate produced a summary."""
        self.refresh_bindings()
        self.notify(
            sanitize(message.error, max_len=400),
            title="compaction failed: nothing written",
            severity="error",
            timeout=10,
        )

    def on_compaction_panel_accepted(self, message: CompactionPanel.Accepted) -> None:
        """Append the accepted compaction in a thread (re-validated against the plan's
        generation: if the file grew, nothing is written and the plan is made again)."""
        basis = self.state.compaction_basis
        if self.handle is None or basis is None:
            return
        self.refresh_bindings()
        self.state.running_jobs += 1
        self._update_status()
        handle, panel, job, result = self.handle, message.panel, message.job, message.result
        changed = self._plan_changed_since(basis)
        if changed is None:
            self.append_compaction(handle, panel, job, result, basis)
            return
        from tui_compactor.ui.screens.confirm import ConfirmDialog

        def answered(yes: bool | None) -> None:
            if yes and handle is self.handle:
                self.append_compaction(handle, panel, job, result, basis)
            else:
                self.post_message(
                    CompactionAppendFailed(
                        panel,
                        "compaction not appended: nothing written (r summarizes the plan shown)",
                    )
                )

        question = Text("The plan changed since this summary was made\n\n", style="bold")
        question.append(changed + "\n\nAppend anyway?", style="")
        self.push_screen(ConfirmDialog(question, yes="Append"), answered)

    def _plan_changed_since(self, basis: PlanReport) -> str | None:
        """How the plan the screen shows (or was last asked for: a cut moved, rules switched,
        another leaf) differs from ``basis``, the plan a review summarized; None when it does
        not. Accepting writes what was summarized, so the user is told before."""
        summarized = basis.plan
        rules = self.settings.rules
        leaf = self.state.plan_leaf
        shown = self.state.plan_report
        cut = self.state.plan_cut
        if cut is None and shown is not None and shown.plan.leaf == leaf:
            cut = shown.cut_entry
        if leaf is None or (
            (leaf, cut if cut is not None else basis.cut_entry, rules)
            == (summarized.leaf, basis.cut_entry, summarized.rules)
        ):
            return None
        now = f"at leaf #{leaf}" + (f", cut before #{cut}" if cut is not None else "")
        return (
            f"This summary is of the plan at leaf #{summarized.leaf}, cut before "
            f"#{basis.cut_entry}, under {summarized.rules} rules; the plan asked for now is "
            f"{now}, under {rules} rules. Accepting writes what was summarized (the cut "
            f"before #{basis.cut_entry}); r summarizes the plan shown instead."
        )

    @work(thread=True, exclusive=True, exit_on_error=False, group="accept")
    def append_compaction(
        self,
        handle: SessionHandle,
        panel: CompactionPanel,
        job: CompactionJob,
        result: CompactionResult,
        basis: PlanReport,
        *,
        branching_confirmed: bool = False,
    ) -> None:
        """Propose the compaction entry at the plan's leaf and apply it (thread). A plan made
        above the file's leaf would take entries off the active path: the user is asked
        first (``confirm_branching_compaction``), as ``u`` asks."""
        from tui_compactor.workbench.actions import (
            ActionRefused,
            StaleProposal,
            apply,
            propose_compaction,
        )

        try:
            with handle.read() as snapshot:
                before = snapshot.entry_count
                proposal = propose_compaction(
                    snapshot,
                    job.plan,
                    result.entry,
                    generation=basis.generation,
                    file_leaf=basis.file_leaf,
                )
        except ActionRefused as refused:
            self.post_message(CompactionAppendFailed(panel, refused.reason))
            return
        except StaleProposal as stale:  # summarized on the file before it was rewritten
            self.post_message(
                WriteStale("compaction", str(stale), stale.leaf, [], panel=panel, reloaded=True)
            )
            return
        if proposal.leaving and not branching_confirmed:
            self.call_from_thread(
                self.confirm_branching_compaction, handle, panel, job, result, basis, proposal
            )
            return
        try:
            apply(handle, proposal, **self.append_options())
        except StaleProposal as stale:
            self.post_message(
                WriteStale(
                    "compaction",
                    str(stale),
                    stale.leaf,
                    self._added_since(handle, before),
                    panel=panel,
                    reloaded=stale.reloaded,
                )
            )
            return
        except Exception as error:
            self.post_message(CompactionAppendFailed(panel, _error_text(error)))
            return
        added = self._added_since(handle, before)
        self.post_message(
            EntryAppended(
                "compaction",
                "compaction appended: the agent will resume from its summary",
                added,
                added[-1] if added else None,
            )
        )

    def confirm_branching_compaction(
        self,
        handle: SessionHandle,
        panel: CompactionPanel,
        job: CompactionJob,
        result: CompactionResult,
        basis: PlanReport,
        proposal: Proposal,
    ) -> None:
        """Ask before a compaction planned above the file's leaf is appended there (the
        entries below it leave the active path); "no" writes nothing and keeps the review."""
        from tui_compactor.ui.screens.confirm import ConfirmDialog

        count = len(proposal.leaving)
        noun = "entry leaves" if count == 1 else "entries leave"

        def answered(yes: bool | None) -> None:
            if yes and handle is self.handle:
                self.append_compaction(handle, panel, job, result, basis, branching_confirmed=True)
            else:
                self.post_message(
                    CompactionAppendFailed(
                        panel,
                        "compaction not appended: nothing written (c at the leaf plans "
                        "there; l jumps to it)",
                    )
                )

        question = Text(
            f"Compact at #{proposal.parent}? {count} {noun} the active path\n\n", style="bold"
        )
        what = sanitize(proposal.description, max_len=2000)
        question.append(
            f"The plan was made at #{proposal.parent}, above the file's leaf #{proposal.leaf}. "
            + what[:1].upper()
            + what[1:]
            + " starts a new branch there.\n\nAppend anyway?",
            style="",
        )
        self.push_screen(ConfirmDialog(question, yes="Append"), answered)

    @_while_running
    def on_compaction_append_failed(self, message: CompactionAppendFailed) -> None:
        """Say why nothing was written; the panel may accept again."""
        self._job_ended()
        message.panel.reopen()
        self.refresh_bindings()
        self.notify(
            sanitize(message.error, max_len=400), title="not written", severity="error", timeout=10
        )

    # ----- writing: navigate, undo --------------------------------------------------------

    def append_options(self) -> dict[str, Any]:
        """Options for the writer's gate (the live-writer quiet window, when set)."""
        options: dict[str, Any] = {}
        if self.options.append_quiet_seconds is not None:
            options["quiet_seconds"] = self.options.append_quiet_seconds
        if self.options.ignore_agents:
            options["ignore_agents"] = True
        return options

    @staticmethod
    def _added_since(handle: SessionHandle, before: int) -> list[int]:
        """Entry indices the session gained since it had ``before`` entries."""
        with handle.read() as snapshot:
            return list(range(before, snapshot.entry_count))

    def _replan_after_growth(self, leaf: int | None = None) -> None:
        """Plan again after the file grew: at the new file leaf when the plan was at the old
        one, else at the same node. A cut the user moved stays where they put it (growth only
        appends, so its entry index holds; the plan says why if it is no longer valid). Shows
        the Plan tab."""
        if leaf is None and self.session is not None:
            leaf = self.session.leaf
        report = self.state.plan_report or self.state.compaction_basis
        if report is not None and self.state.plan_leaf == report.file_leaf and leaf is not None:
            self.state.plan_leaf = leaf
        if self.state.plan_leaf is None:
            self.state.plan_leaf = leaf
        self.action_show_tab("tab-plan")
        self.request_plan()

    @_while_running
    def on_write_stale(self, message: WriteStale) -> None:
        """The file grew before a write: nothing was written; show the new plan, ask again."""
        if message.reloaded:
            self._stale_after_reload(message)
            return
        self.after_growth(message.added, announce=False)
        title = "the session grew: nothing written"
        if message.kind == "compaction":
            self._compaction_not_written(
                "the session grew before this compaction was written, so it was "
                "not written. The plan was made again at the new leaf (Plan "
                "tab): r summarizes it, a accepts.",
                message.leaf,
            )
            self.notify(
                "planned again at the new leaf: check the plan, r runs it, a accepts",
                title=title,
                severity="warning",
                timeout=10,
            )
        elif message.kind == "navigate" and message.target is not None:
            self.notify(
                "planning the move again from the new leaf",
                title=title,
                severity="warning",
                timeout=8,
            )
            self.ask_move(message.target)
        elif message.kind == "undo" and message.target is not None:
            self.notify(
                "asking again with the new entries", title=title, severity="warning", timeout=8
            )
            self.ask_undo(message.target)

    def _job_ended(self) -> None:
        """A write or a summary is no longer in flight: the status line's count says so."""
        self.state.running_jobs = max(0, self.state.running_jobs - 1)
        self._update_status()

    def _compaction_not_written(self, reason: str, leaf: int | None) -> None:
        """A finished compaction was not written (the file changed first): its job ends, its
        review closes saying ``reason`` and the plan is made again (``_replan_after_growth``)."""
        self._job_ended()
        self.close_review(reason)
        self._replan_after_growth(leaf)

    def _stale_after_reload(self, message: WriteStale) -> None:
        """The file was rewritten on disk and loaded again after the write was proposed:
        nothing was written. A compaction is planned again on the file as it is now; a move
        or an undo is not asked again (its node was found in the old file: the user chooses
        again in the tree as it is now)."""
        title = "the file was rewritten on disk: nothing written"
        what = {"compaction": "this compaction", "navigate": "the move", "undo": "the undo"}
        said = (
            f"{what.get(message.kind, 'this write')} was made for the file as it was before it "
            "was rewritten and loaded again, so it was not written"
        )
        if message.kind == "compaction":
            # Indices of the old file mean nothing now: planned at the file's leaf, no cut.
            self.state.plan_leaf = self.state.plan_cut = None
            self._compaction_not_written(
                f"{said}. The plan was made again on the file as it is now (Plan tab): r "
                "summarizes it, a accepts.",
                self._loaded().leaf,
            )
            said += ": planned again on the file as it is now"
        else:
            said += ": choose again in the tree as it is now"
        self.notify(said, title=title, severity="warning", timeout=10)

    def summarizer_for(self, *, compaction: bool, settings: Settings | None = None) -> Summarizer:
        """The summarizer of the configured profile (offline without a config), under
        ``settings`` (default: the app's; a worker passes the settings it was given)."""
        settings = settings or self.settings
        return settings.summarizer(compaction=compaction, profile=self.options.profile_name)

    @on(SessionTree.Selected)
    def _node_selected(self, message: SessionTree.Selected) -> None:
        """Enter on a node: plan the move (worker), then ask how to leave the current branch."""
        if self.session is None or not self.session.complete:
            return
        if message.entry_index in self.pending_targets:
            self.notify("a summary for this node is already running", timeout=3)
            return
        self.ask_move(message.entry_index)

    def ask_move(self, target: int) -> None:
        """Plan the move to ``target`` and ask how (the dialog), unless a move is already being
        planned or asked about: the one place a navigation is asked for, so an ``enter`` typed
        before the dialog showed neither opens a second one nor writes a second time."""
        if self.handle is None or self.state.move_asked is not None:
            return
        self.state.move_asked = target
        self.plan_move(self.handle, target, self.settings)

    def cancel_move_asked(self) -> None:
        """Cancel the move being planned: no dialog opens for it; ``enter`` asks again."""
        self.state.move_asked = None
        self.workers.cancel_group(self, "navplan")
        self.notify("move cancelled before it was asked: nothing written", timeout=3)

    @work(thread=True, exclusive=True, exit_on_error=False, group="navplan")
    def plan_move(self, handle: SessionHandle, target: int, settings: Settings) -> None:
        """Collect the branch being left and what fits the summary budget (thread)."""
        # The dialog's module and the Textual widgets it uses are imported here, not by the
        # handler that opens it: ~10 ms of the UI thread the first time.
        import tui_compactor.ui.screens.navigate  # noqa: F401
        from tui_compactor.engine.branch import plan_navigation

        cache = handle.token_cache(settings.counter())
        # The plan holds tens of thousands of new containers (the branch being left, what fits
        # the budget) and the label may import the summarize stack: made with the collector
        # paused and then frozen, the collections while the dialog opens do not scan them
        # (30-60 ms of UI CPU each on the 100k session).
        with gc_paused():
            with handle.read() as snapshot:
                nav_plan = plan_navigation(
                    snapshot.session,
                    snapshot.leaf,
                    target,
                    settings.counter(),
                    settings.branch_budget(),
                    rules=settings.rules,
                    cache=cache,
                )
                generation = snapshot.generation
            label = self._branch_summarizer_label(settings)
        if get_current_worker().is_cancelled:
            return  # esc cancelled it, or a newer ask replaced it
        self.post_message(NavigationPlanned(target, nav_plan, generation, label))

    def _branch_summarizer_label(self, settings: Settings) -> str:
        """The name of the summarizer a branch summary would use, or why there is none."""
        try:
            label = self.summarizer_for(compaction=False, settings=settings).label
        except Exception as error:
            label = f"unavailable ({error})"
        return sanitize(label, max_len=60)

    @_while_running
    def on_navigation_planned(self, message: NavigationPlanned) -> None:
        """Open the navigation dialog; run what the user chooses."""
        from tui_compactor.ui.screens.navigate import NavigateDialog

        nav_plan = message.nav_plan
        if self.state.move_asked != nav_plan.target:
            return  # not the move asked for (any more)
        if getattr(nav_plan, "noop", False):
            from tui_compactor.workbench.actions import NOTHING_TO_DO

            self.state.move_asked = None
            self.notify(NOTHING_TO_DO, timeout=2)  # the words of `navigate`
            return
        if not self.settings.branch_summary_enabled:
            # Branch summaries are off (oh-my-pi's branchSummary.enabled = false): just move.
            from tui_compactor.ui.screens.navigate import NavigationChoice, SummaryMode

            self.state.move_asked = None
            self.start_navigation(
                nav_plan,
                NavigationChoice(nav_plan.target, nav_plan.new_leaf, SummaryMode.NONE),
                message.generation,
            )
            return
        label = message.summarizer_label

        def chosen(choice: NavigationChoice | None) -> None:
            self.state.move_asked = None
            if choice is not None:
                self.start_navigation(nav_plan, choice, message.generation)

        session = self._loaded()
        self.push_screen(
            NavigateDialog(
                nav_plan,
                session,
                summarizer_label=label,
                append_refusal=session.append_refusal,
                inspect=lambda instructions, replace: self.inspect_branch_requests(
                    nav_plan, message.generation, instructions, replace
                ),
            ),
            chosen,
        )

    def start_navigation(
        self, nav_plan: NavigationPlan, choice: NavigationChoice, generation: int
    ) -> None:
        """Run one navigation in the background (several may run at once)."""
        refusal = self._loaded().append_refusal
        if refusal:
            self.notify(
                sanitize(refusal, max_len=300),
                title="read-only: nothing written",
                severity="error",
                timeout=8,
            )
            return
        target = nav_plan.target
        self.pending_targets.add(target)
        self.state.running_jobs += 1
        self._update_status()
        tree = self.query_one(SessionTree)
        tree.set_progress(target, "⟳ summarizing…" if choice.summarize else "⟳ moving leaf…")
        assert self.handle is not None
        self.run_navigation(self.handle, nav_plan, choice, generation)

    @work(exclusive=False, exit_on_error=False, group="branch")
    async def run_navigation(
        self,
        handle: SessionHandle,
        nav_plan: NavigationPlan,
        choice: NavigationChoice,
        generation: int,
    ) -> None:
        """Summarize the branch being left (if asked), then apply the move (re-validated
        against the generation it was planned at)."""
        import asyncio

        from tui_compactor.summarize.navigation import prepare_navigation
        from tui_compactor.summarize.runner import PartDelta
        from tui_compactor.workbench.actions import StaleProposal, apply, propose_navigation

        target = nav_plan.target
        streamed = 0
        last_report = 0.0

        def on_event(event: Event) -> None:
            nonlocal streamed, last_report
            if isinstance(event, PartDelta):
                streamed += len(event.text)
                now = time.monotonic()
                if now - last_report > 0.1:
                    last_report = now
                    self.post_message(BranchSummaryProgress(target, f"⟳ {streamed:,} chars"))

        try:
            summarizer = self.summarizer_for(compaction=False) if choice.summarize else None
            prepared = await prepare_navigation(
                nav_plan,
                summarizer=summarizer,
                instructions=choice.instructions,
                replace_instructions=choice.replace_prompt,
                on_event=on_event,
                files_format=self.settings.files_format,
            )
            before = handle.session.entries and len(handle.session.entries)

            def write() -> None:
                with handle.read() as snapshot:
                    proposal = propose_navigation(
                        snapshot, nav_plan, prepared.record, generation=generation
                    )
                apply(handle, proposal, **self.append_options())

            await asyncio.to_thread(write)
        except asyncio.CancelledError:
            self.post_message(BranchSummaryProgress(target, None))
            self.post_message(WorkFailed("navigation cancelled", "nothing was written"))
            raise
        except StaleProposal as stale:
            self.post_message(BranchSummaryProgress(target, None))
            self.post_message(
                WriteStale(
                    "navigate",
                    str(stale),
                    stale.leaf,
                    self._added_since(handle, int(before or 0)),
                    target=target,
                    reloaded=stale.reloaded,
                )
            )
            return
        except Exception as error:
            self.post_message(BranchSummaryProgress(target, None))
            self.post_message(WorkFailed("navigation failed: nothing written", _error_text(error)))
            return
        added = self._added_since(handle, int(before or 0))
        self.post_message(BranchSummaryProgress(target, None))
        new_node = added[-1] if added else None
        what = "branch summary attached" if choice.summarize else "leaf moved"
        new_leaf = nav_plan.new_leaf
        where = "before the first entry" if new_leaf is None else f"at #{new_leaf}"
        self.post_message(EntryAppended("navigate", f"{what} {where}", added, new_node))

    @_while_running
    def on_branch_summary_progress(self, message: BranchSummaryProgress) -> None:
        """Show a background summary's progress on its target row (None: it ended)."""
        self.query_one(SessionTree).set_progress(message.target, message.text)
        if message.text is None:
            self.pending_targets.discard(message.target)
            self._job_ended()

    def action_undo(self) -> None:
        """Undo a compaction: move the leaf back to the compaction's parent (nothing deleted).

        The rules are ``undo``'s (``workbench.actions.propose_undo``): what the command
        refuses is refused here with the same reason, and where the command needs ``--force``
        (entries would leave the active path) the app asks first.
        """
        if self.session is None or self.selected_entry is None:
            return
        entry = self.session.entries[self.selected_entry]
        if entry.type != "compaction":
            self.notify("select a compaction node to undo it", timeout=3)
            return
        self.ask_undo(entry.index)

    def ask_undo(self, compaction: int) -> None:
        """Propose the undo of ``compaction``; ask when entries leave the active path.

        The proposal reads the session in a worker: a refresh waiting behind a long reader
        (an analysis) never holds the UI thread.
        """
        handle = self.handle
        if handle is None:
            return
        if handle.session.append_refusal:
            self.notify(
                sanitize(handle.session.append_refusal, max_len=300),
                title="read-only: nothing written",
                severity="error",
                timeout=8,
            )
            return
        self.propose_undo_in_worker(handle, compaction)

    @work(thread=True, exclusive=True, exit_on_error=False, group="undo-propose")
    def propose_undo_in_worker(self, handle: SessionHandle, compaction: int) -> None:
        """``propose_undo`` under a snapshot (thread); the answer is handled on the UI thread."""
        from tui_compactor.workbench.actions import ActionRefused, propose_undo

        with handle.read() as snapshot:
            try:
                proposal = propose_undo(snapshot, compaction)
            except ActionRefused as refused:
                if not refused.needs_force:
                    self.call_from_thread(
                        self.notify,
                        sanitize(refused.reason, max_len=300),
                        title="cannot undo",
                        severity="warning",
                        timeout=8,
                    )
                    return
                proposal = propose_undo(snapshot, compaction, force=True)
        self.call_from_thread(self.confirm_undo, handle, proposal, compaction)

    def confirm_undo(self, handle: SessionHandle, proposal: Proposal, compaction: int) -> None:
        """Apply an undo that abandons nothing; ask first when entries leave the active path."""
        if handle is not self.handle:
            return
        if not proposal.leaving:
            self.undo_compaction(handle, proposal, compaction)
            return
        from tui_compactor.ui.screens.confirm import ConfirmDialog

        count = len(proposal.leaving)
        noun = "entry leaves" if count == 1 else "entries leave"

        def answered(yes: bool | None) -> None:
            if yes and self.handle is not None:
                self.undo_compaction(self.handle, proposal, compaction)
            else:
                self.notify("undo declined: nothing written", timeout=3)

        question = Text(f"Undo? {count} {noun} the active path\n\n", style="bold")
        question.append(sanitize(proposal.description, max_len=2000) + "\n\nUndo anyway?", style="")
        self.push_screen(ConfirmDialog(question, yes="Undo"), answered)

    @work(thread=True, exclusive=True, exit_on_error=False, group="undo")
    def undo_compaction(self, handle: SessionHandle, proposal: Proposal, compaction: int) -> None:
        """Apply the undo proposal: a leaf marker under the compaction's parent (thread)."""
        from tui_compactor.workbench.actions import StaleProposal, apply, entry_place

        parent = proposal.parent
        with handle.read() as snapshot:
            before = snapshot.entry_count
            where = "the start" if parent is None else entry_place(snapshot.session, parent)
        try:
            apply(handle, proposal, **self.append_options())
        except StaleProposal as stale:
            self.post_message(
                WriteStale(
                    "undo",
                    str(stale),
                    stale.leaf,
                    self._added_since(handle, before),
                    target=compaction,
                    reloaded=stale.reloaded,
                )
            )
            return
        except Exception as error:
            self.post_message(WorkFailed("undo failed: nothing written", _error_text(error)))
            return
        added = self._added_since(handle, before)
        self.post_message(
            EntryAppended("undo", f"compaction undone: leaf moved back to {where}", added, parent)
        )

    # ----- live follow -------------------------------------------------------------------

    def _check_config_file(self) -> None:
        """Say once that the config file read at start changed on disk: the app keeps the
        settings it read (the plan's sources show them), a restart reads the new file."""
        stamp = self.state.config_stamp
        if stamp is None or _file_stamp(stamp[0]) == stamp[1]:
            return
        self.state.config_stamp = None
        self.notify(
            f"{sanitize(str(stamp[0]), max_len=120)} changed on disk: this app keeps the settings "
            "it read at start (the plan's sources show them); restart it to use the new file",
            title="config",
            severity="warning",
            timeout=10,
        )

    def _follow_tick(self) -> None:
        """Start a refresh check unless one is running."""
        self._check_config_file()
        if self.handle is not None and self.handle.session.complete:
            self.refresh_session(self.handle)

    @work(thread=True, exclusive=True, exit_on_error=False, group="follow")
    def refresh_session(self, handle: SessionHandle) -> None:
        """Re-stat the file and parse only what was appended (readers never see it half-way)."""
        result = handle.refresh()
        if result.status != "unchanged":
            self.post_message(SessionRefreshed(result.status, list(result.added)))

    @_while_running
    def on_session_refreshed(self, message: SessionRefreshed) -> None:
        """New entries appear without losing the cursor; a rewritten file is reloaded."""
        if message.status == "rewritten":
            path = self._loaded().path
            if not path.exists():
                # Deleted or moved away (an editor or an agent may write a new one in its
                # place): what was loaded stays shown, read-only, until a file is back.
                if not self.state.file_gone:
                    self.state.file_gone = True
                    gone = "the file is gone (deleted or moved): what was loaded stays shown"
                    # The one write gate (every write key, the review's accept) reads it.
                    self._loaded().append_refusal = gone
                    self._show_write_gate()
                    self._update_status()
                    self.refresh_bindings()
                    self.notify(f"{gone}; it is loaded again when it is back", severity="warning")
                return
            self.state.file_gone = False
            self.notify("the file was rewritten on disk: reloading", severity="warning")
            self.open_session(path)
            return
        self.after_growth(message.added)

    def _show_write_gate(self) -> None:
        """Show what the one write gate (``Session.append_refusal``) says now: the banner, the
        review's Accept (the button and ``a`` ask the gate itself) and an open navigation
        dialog's summary options."""
        session = self.session
        refusal = session.append_refusal if session else None
        self.query_one(ReadOnlyBanner).show_reason(refusal)
        panel = self.review_panel
        if panel is not None:
            panel.gate_changed()
        # A dialog that offers a write (the navigation's summaries) follows the gate; looked up
        # by its method, so the dialog's module is not imported before one is opened.
        for screen in self.screen_stack:
            gate_changed = getattr(screen, "gate_changed", None)
            if gate_changed is not None:
                gate_changed(refusal)

    def after_growth(
        self, added: list[int], *, announce: bool = True, select: int | None = None
    ) -> None:
        """Show entries the file gained (live follow or our own append; ``select``: the entry
        to put the cursor on, else it stays where it is)."""
        handle = self.handle
        assert handle is not None
        tree = self.query_one(SessionTree)
        tree.file_leaf = handle.session.leaf
        self._show_write_gate()
        self._update_status()
        self.rebuild_outline(keep_entry=self.selected_entry if select is None else select)
        self.state.token_count_pending = True  # started once the rows (and what is visible) exist
        self.measure_chart(handle, self.settings)
        if added:
            self._report_orphaned_appends()
        if added:
            self._search_new_entries()
        if added and announce:
            self._note_new_entries(len(added))

    def _note_new_entries(self, count: int) -> None:
        """Say how many entries live follow read: one note, counting what arrived while it is
        shown (an agent appending every few hundred milliseconds raised one per refresh,
        stacked over the tree)."""

        last = self._new_entries_note
        if last is not None:
            note, counted = last
            # The running count is the app's own: the last note may not have reached the
            # toasts yet (two refreshes handled in one tick), so it is not looked for there.
            if not self._new_entries_arrived:
                count += counted
                self._notes_superseded.add(note.identity)
            elif note in self._notifications and not note.has_expired:
                count += counted
                self._unnotify(note, refresh=False)
        message = count_of(count, "new entry", "new entries")
        self._new_entries_note = (self._raise_note(message, timeout=2), count)
        self._new_entries_arrived = False

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
            self.notify(
                f"the {what} is hidden by the filter or a fold", severity="warning", timeout=3
            )

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
        position = tree.rows.next_branch_point(tree.cursor, step)
        if position is not None:
            tree.move_cursor(position, center=True)
            return
        self.notify("no more branch points", timeout=2)

    def action_jump_branch(self) -> None:
        """Cursor to the next branch point."""
        self._jump_branch(1)

    def action_jump_branch_back(self) -> None:
        """Cursor to the previous branch point."""
        self._jump_branch(-1)

    def action_unfold_all(self) -> None:
        """Unfold every folded branch point."""
        self.state.folded.clear()
        self.rebuild_outline()

    def action_select_node(self) -> None:
        """Navigate to the selected node (same as enter in the tree)."""
        self.query_one(SessionTree).action_select()

    def action_context_as_sent(self) -> None:
        """Context tab: switch between the compact list and every item's role and exact
        text as the agent sends it."""
        from tui_compactor.ui.widgets.context_view import ContextView

        self.build_pane("tab-context")
        self.query_one(TabbedPanes).active = "tab-context"

        def toggle(view: ContextView) -> None:
            view.set_as_sent(not view.as_sent)
            data = self.gauge_data
            if view.as_sent and (data is None or data.sent is None):
                self._measure_selected()

        self.with_view(ContextView, toggle)

    def action_context_zoom(self) -> None:
        """Context tab as sent, filling the screen (its text focused, so the keys scroll it);
        again (or esc) gives the tree back."""
        from tui_compactor.ui.widgets.context_view import ContextView, SentText

        view = self.view(ContextView)
        if view is not None and self.screen.maximized is view:
            self.screen.minimize()
            self.query_one(SessionTree).focus()
            return
        if view is None or not view.as_sent:
            self.action_context_as_sent()
        self.query_one(TabbedPanes).active = "tab-context"

        def zoom(view: ContextView) -> None:
            self.screen.maximize(view, container=False)
            view.query_one(SentText).focus()

        self.with_view(ContextView, zoom)

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        """An input taking the focus gets the keys held for it (``hold_keys``), in the order
        typed, whoever opened it. A key that moves the focus out of the full-screen Context
        text (``/``, ``e``, a search landing on the tree...) gives the layout back: nothing is
        typed or moved unseen."""
        from textual.dom import NoScreen

        if self._held_keys is not None and takes_text(event.widget):
            self.release_keys()
        try:
            screen = event.widget.screen
        except NoScreen:  # focus moving while the app shuts down
            return
        zoomed = screen.maximized
        if zoomed is None:
            return
        from tui_compactor.ui.widgets.context_view import ContextView

        if isinstance(zoomed, ContextView) and zoomed not in event.widget.ancestors_with_self:
            screen.minimize()

    @on(TabbedPanes.TabActivated)
    def _tab_activated(self, event: TabbedPanes.TabActivated) -> None:
        """A tab is built the first time it shows; the Context tab draws only when shown.
        Another tab shown over a full-screen Context (``c``, a tab key) gives the layout back,
        so what it shows is seen."""
        from tui_compactor.ui.widgets.context_view import ContextView

        tab_id = event.tab_id
        if tab_id != "tab-context" and isinstance(self.screen.maximized, ContextView):
            self.screen.minimize()
        self.build_pane(tab_id)
        if tab_id == "tab-context":

            def show(view: ContextView) -> None:
                view.show_pending()
                data = self.gauge_data
                if data is not None and data.blocks is None:
                    self._measure_selected(list_blocks=True)

            self.with_view(ContextView, show)
        elif tab_id == "tab-breakdown":
            self.request_breakdown()
        elif tab_id == "tab-diff":
            self.show_summary_diff()

    def show_summary_diff(self) -> None:
        """Diff a summary against the one it updates: the finished compaction's (if any),
        else the selected compaction node's against the previous compaction on its path."""
        from tui_compactor.ui.widgets.summary_diff import SummaryDiff

        panel = self.compaction_panel
        result = panel.selected_result if panel is not None else None
        if panel is not None and result is not None:
            previous, summary = panel.plan.previous_summary or "", result.summary
            self.with_view(SummaryDiff, lambda diff: diff.show(previous, summary))
            return
        if self.handle is None or self.selected_entry is None:
            return
        self.load_summary_diff(self.handle, self.selected_entry)

    @work(thread=True, exclusive=True, exit_on_error=False, group="diff")
    def load_summary_diff(self, handle: SessionHandle, entry_index: int) -> None:
        """Read a compaction's summary and the previous one (thread)."""
        with handle.read() as snapshot:
            pair = previous_summary(snapshot, entry_index)
        self.post_message(SummaryDiffReady(entry_index, pair))

    @_while_running
    def on_summary_diff_ready(self, message: SummaryDiffReady) -> None:
        """Show the diff (or say what to select)."""
        from tui_compactor.ui.widgets.summary_diff import SummaryDiff

        if message.entry_index != self.selected_entry:
            return
        pair = message.pair

        def show(diff: SummaryDiff) -> None:
            if pair is None:
                diff.show("", "")
                diff.query_one(Static).update(
                    Text(
                        "select a compaction node (or run a compaction) to see what its summary "
                        "changed against the previous one",
                        style="dim",
                    )
                )
                return
            diff.show(*pair)

        self.with_view(SummaryDiff, show)

    def action_show_tab(self, tab_id: str) -> None:
        """Switch the preview pane."""
        preview = self.query_one(TabbedPanes)
        if preview.strip.index_of(tab_id) is not None:
            self.build_pane(tab_id)
            preview.active = tab_id

    # ----- search ------------------------------------------------------------------------

    def search_box(self, *, build: bool = False) -> Input | None:
        """The search box above the footer; built the first time it opens (``build``)."""
        found = self.screen.query("#search")
        if found:
            return found.only_one(Input)
        if not build:
            return None
        search = InlineInput(placeholder="search entries (enter: find, esc: close)", id="search")
        self.screen.mount(search, before=self.query_one(StateFooter))
        return search

    def action_search(self) -> None:
        """Open the search box."""
        self.hold_keys()  # until the box has the focus
        search = self.show_search_box(True)
        search.value = self.state.search_query
        focus_input(search)

    def show_search_box(self, shown: bool) -> Input:
        """Show (building it the first time) or hide the search box. It lies over the bottom
        rows of the panes (a layer of its own: no pane is laid out again); the tree keeps its
        cursor row above it."""
        search = self.search_box(build=True)
        assert search is not None
        search.display = shown
        tree = self.query_one(SessionTree)
        height = search.styles.height
        tree.cover_bottom((height.cells or 0) if shown and height is not None else 0)
        return search

    @on(Input.Submitted, "#search")
    def _search_submitted(self, event: Input.Submitted) -> None:
        """Find the query in every entry (worker), then jump to the first match after the cursor."""
        self.state.search_query = event.value.strip()
        self.show_search_box(False)
        self.query_one(SessionTree).focus()
        if self.state.search_query and self.handle is not None:
            entry = self.selected_entry
            self.state.search_from = -1 if entry is None else entry
            self.state.search_request += 1
            self.set_timer(SEARCH_NOTE_AFTER, self._note_search_running)
            # After the frame without the search box: the search worker would take the GIL
            # from it half of the time.
            self.call_after_refresh(
                self.find_matches,
                self.handle,
                self.state.search_query,
                self.query_one(SessionTree).row_of_entry,
                self.state.search_request,
            )
        else:
            self._clear_search()

    def _clear_search(self) -> None:
        """Forget the search: its marks, its query and the results still on their way (a
        search running, or entries live follow added being searched, must not mark again)."""
        self.state.search_query = ""
        self.state.search_from = None
        self.state.search_request += 1
        self.query_one(SessionTree).clear_search()

    def _note_search_running(self) -> None:
        """Say a search is still running (a big session's search takes seconds)."""
        if self.state.search_from is not None:
            self.notify(f"searching {self._shown_query()}…", timeout=2)

    def _shown_query(self) -> str:
        """The search query as notes quote it: made safe and cut."""
        return f"“{sanitize(self.state.search_query, single_line=True, max_len=40)}”"

    @work(thread=True, exclusive=True, exit_on_error=False, group="search")
    def find_matches(
        self, handle: SessionHandle, query: str, positions: Mapping[int, int], request: int
    ) -> None:
        """Every entry whose id, kind, label or preview contains ``query`` (case-insensitive),
        and their rows in ``positions`` (the tree's when the search started)."""
        with handle.read() as snapshot:
            session = snapshot.session
            count = snapshot.entry_count
        matches = self._matching(session, query, 0, count)
        if matches is None:
            return
        rows = (positions, match_rows(positions, matches))
        self.post_message(SearchDone(matches, handle, rows, request, count))

    def _search_new_entries(self) -> None:
        """Search the entries live follow added since the finished search looked (none while
        it runs: it hands over where it stopped)."""
        handle = self.handle
        state = self.state
        if not state.search_query or state.search_from is not None or handle is None:
            return
        if len(handle.session.entries) > state.search_covered:
            self.search_added(
                handle, state.search_query, state.search_covered, state.search_request
            )

    @work(thread=True, exclusive=True, exit_on_error=False, group="search-added")
    def search_added(self, handle: SessionHandle, query: str, start: int, request: int) -> None:
        """``find_matches`` over the entries from ``start`` on (what the agent appended)."""
        with handle.read() as snapshot:
            session = snapshot.session
            count = snapshot.entry_count
        matches = self._matching(session, query, start, count)
        if matches is not None:
            self.post_message(SearchExtended(matches, handle, request, count))

    def _matching(self, session: Any, query: str, start: int, stop: int) -> set[int] | None:
        """The entries from ``start`` to ``stop`` whose search text contains ``query``
        (case-insensitive): the one rule of both searches (thread); None once the worker is
        cancelled. A refresh only appends, so these entries stay as read."""
        worker = get_current_worker()
        needle = query.casefold()
        rules = self.settings.rules
        entries = session.entries
        matches: set[int] = set()
        for first in range(start, stop, SEARCH_BATCH):
            if worker.is_cancelled:
                return None
            batch = range(first, min(first + SEARCH_BATCH, stop))
            for index, data in zip(batch, _records_once(session, batch), strict=True):
                entry = entries[index]
                if needle in entry_search_text(session, entry, rules, data).casefold():
                    matches.add(entry.index)
            time.sleep(0)  # hand the GIL to a waiting UI thread (else it waits up to 5 ms)
        return matches

    @_while_running
    def on_search_extended(self, message: SearchExtended) -> None:
        """Mark the new entries that match; say so (``n`` reaches them)."""
        state = self.state
        if message.request != state.search_request or state.search_from is not None:
            return
        if message.handle is not self.handle:
            return  # the file was read again since: its entries are not these
        state.search_covered = max(state.search_covered, message.covered)
        if message.matches:
            tree = self.query_one(SessionTree)
            tree.mark_matches(tree.search_matches | message.matches)
            found = count_of(len(message.matches), "match", "matches")
            self.notify(
                f"{self._shown_query()}: {found} in new entries · n reaches them", timeout=3
            )

    @_while_running
    def on_search_done(self, message: SearchDone) -> None:
        """Mark matches and jump to the first one after the cursor."""
        matches = message.matches
        if message.request != self.state.search_request:
            return  # a search asked for since replaces this one
        started_at, self.state.search_from = self.state.search_from, None
        if message.handle is not None and message.handle is not self.handle:
            # Searched in a preview the whole session has replaced since.
            self.notify(f"{self._shown_query()}: the file was read again; search again", timeout=3)
            return
        tree = self.query_one(SessionTree)
        tree.mark_matches(matches)
        self.remember_match_rows(message.rows[0], matches, message.rows[1])
        self.state.search_covered = message.covered
        self._search_new_entries()  # what the agent appended while it ran
        visible = len(self.shown_match_rows())
        moved = started_at is not None and started_at != self.selected_entry
        found = f"{self._shown_query()}: {count_of(len(matches), 'match', 'matches')}" + (
            f", {visible} shown" if visible != len(matches) else ""
        )
        if moved or not visible:  # the user went elsewhere while it ran: the cursor stays there
            self.notify(found + (" · n jumps to the next" if visible else ""), timeout=3)
        if not moved:
            # One note says what was found and where the cursor went: two would crowd out each
            # other (and the count) under the notes already shown at 80x24.
            self._search_step(1, found if visible else "")

    def _search_step(self, step: int, found: str = "") -> None:
        """Move to the next (``step`` 1) or previous (-1) visible match, wrapping around
        (``found``: what the search that just ended found, said in the same note)."""
        tree = self.query_one(SessionTree)
        if self.state.search_from is not None:
            self.notify(f"still searching {self._shown_query()}…", timeout=2)
            return
        if not tree.search_matches or not tree.rows:
            if self.state.search_query:
                self.notify("no matches", timeout=2)
            return
        shown = self.shown_match_rows()
        if not shown:
            return
        if step > 0:
            number = bisect.bisect_right(shown, tree.cursor)
            wrapped = number == len(shown)
            if wrapped:
                number = 0
        else:
            number = bisect.bisect_left(shown, tree.cursor) - 1
            wrapped = number < 0
            if wrapped:
                number = len(shown) - 1
        tree.move_cursor(shown[number], center=True)
        self.report_search_position(number, wrapped, step, found)

    def action_search_next(self) -> None:
        """Next match."""
        self._search_step(1)

    def action_search_previous(self) -> None:
        """Previous match."""
        self._search_step(-1)

    # ----- cancel, help, errors ----------------------------------------------------------

    def action_cancel(self) -> None:
        """Escape: close search (while indexing, clear its matches first), stop indexing,
        cancel running summaries."""
        from textual.widgets import Checkbox, Select

        from tui_compactor.ui.widgets.context_view import SentText

        search = self.search_box()
        if search is not None and search.display:
            self.show_search_box(False)
            self.query_one(SessionTree).focus()
            return
        # Leave a field of the plan form (an input, a checkbox, a select: esc does the same in
        # each) or the context text (zoomed or not): back to the tree; the next esc cancels.
        if isinstance(self.focused, Input | Checkbox | Select | SentText):
            if self.screen.maximized is not None:
                self.screen.minimize()
            self.query_one(SessionTree).focus()
            return
        if self.session is None or not self.session.complete or self._indexing():
            tree = self.query_one(SessionTree)
            if tree.search_matches:  # the esc that leaves a search must not stop the index
                self._clear_search()  # nor search what the agent appends next
                self.notify("search cleared; esc again stops indexing", timeout=3)
                return
            self.state.load_cancel.set()
            return
        if self.state.run_after_plan:  # r was pressed and waits for its plan: not run now
            self.state.run_after_plan = ""
            self.notify("compaction cancelled before it started: nothing written", timeout=3)
            return
        if not self.cancel_work() and self.plan is not None:
            self.clear_plan()

    def _indexing(self) -> bool:
        """True while the index worker runs."""
        return any(
            worker.group == "index" and worker.state in (WorkerState.PENDING, WorkerState.RUNNING)
            for worker in self.workers
        )

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
        self.push_screen(
            HelpScreen(groups, dict(self.state.user_keymap), keymap_read=not self.config.fixed)
        )

    @_while_running
    def on_work_failed(self, message: WorkFailed) -> None:
        """A worker reported a failure the user must know about."""
        self.notify(
            sanitize(message.error, max_len=400), title=message.what, severity="error", timeout=10
        )

    @_while_running
    def on_entry_appended(self, message: EntryAppended) -> None:
        """Our own append landed: show the new node at once and say what happened."""
        self.notify(message.description, title=message.kind, timeout=4)
        if message.kind == "compaction":
            self._job_ended()
            self.clear_plan()
            self.close_review(message.description)
        self.after_growth(message.added, announce=False, select=message.select_entry)

    @on(Worker.StateChanged)
    def _worker_state_changed(self, event: Worker.StateChanged) -> None:
        """One place that turns worker crashes into notifications (the app keeps running);
        a plan asked for while another was made starts as that one ends."""
        if event.worker.group == "plan" and event.state in (
            WorkerState.SUCCESS,
            WorkerState.CANCELLED,
        ):
            self._start_plan()
        if event.worker.group == "navplan" and event.state in (
            WorkerState.ERROR,
            WorkerState.CANCELLED,
        ):
            self.state.move_asked = None  # no dialog is coming: enter asks again
        if event.state != WorkerState.ERROR:
            return
        error = event.worker.error
        what = event.worker.group or event.worker.name
        if what == "search":
            self.state.search_from = None  # no matches are coming: n must not wait for them
        if what == "plan":
            self._plan_failed()
        if what == "sweep":
            # No sweep is coming: the pane stops waiting for it (the form is made once in view).
            self.show_sweep(Text("the sweep failed (see the note)", style="dim"))
        if isinstance(error, TokenTableError):
            self._count_without_table(error, what)
            return
        self.notify(
            sanitize(f"{type(error).__name__}: {error}", max_len=400),
            title=f"{what} failed",
            severity="error",
            timeout=10,
        )
        if event.worker.group == "index":
            self.query_one(LoadingBar).stop()


def _file_stamp(path: Path) -> tuple[int, int] | None:
    """``path``'s (mtime in ns, size), None when it cannot be read: a change of either is a
    change of the file."""
    try:
        stat = path.stat()
    except OSError:
        return None
    return stat.st_mtime_ns, stat.st_size


def _fold_notes(plan: CompactionPlan, profile_name: str | None, settings: Settings) -> list[str]:
    """Regions the compaction summarizer must fold (its window is smaller than them). Run in
    the plan worker: the configuration (pydantic) and the summarizer's provider (httpx) load
    on first use, ~0.2 s."""
    from tui_compactor.summarize.compaction import fold_notes

    try:
        summarizer = settings.summarizer(compaction=True, profile=profile_name)
    except Exception:  # noqa: BLE001 - a bad profile is reported when a run starts
        return []
    if getattr(summarizer, "offline", False):
        return []  # the offline summarizer reads any size at once
    return fold_notes(plan, summarizer.context_window, settings.reserve_tokens)


def _describe_block(item: Any, message: dict[str, Any], entry: Any, rules: str) -> tuple[str, str]:
    """Label and one-line preview of a context block (the Context tab's wording)."""
    from tui_compactor.ui.widgets.context_view import block_label, block_preview

    return block_label(item, message, entry, rules), block_preview(message, entry)


def _error_text(error: BaseException) -> str:
    """A failure as the user reads it (the writer's refusals carry a reason and a hint)."""
    reason = getattr(error, "reason", None)
    hint = getattr(error, "hint", None)
    if reason:
        return f"{reason} {hint or ''}".strip()
    return f"{type(error).__name__}: {error}"


def no_candidates_text(config: Config) -> str:
    """What ``R`` compares, and how to get a second candidate, when only offline is set up
    (the demo reads no config file: it says where profiles work instead)."""
    from tui_compactor.config import config_path

    what = (
        "R runs the plan with up to three summarizer profiles side by side and compares their "
        "summaries: length, anchors kept by the audit, time. "
    )
    if config.fixed:
        return what + (
            "The demo runs the offline summarizer only and reads no config file, so there is "
            "nothing to compare here (r runs it). On your own sessions "
            f"(tui-compactor SESSION.jsonl), profiles in {config_path()} run side by side."
        )
    return what + (
        "Only the offline summarizer is configured, so there is nothing to compare (r runs "
        f'it). Add a profile to {config_path()}, e.g.\n[profiles.local]\nprovider = "openai"\n'
        'base_url = "http://127.0.0.1:8080/v1"\nmodel = "qwen2.5-coder-14b"\n'
        "then R runs it beside offline."
    )
