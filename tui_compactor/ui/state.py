"""The app's state: one typed object, changed only by handlers on the UI thread.

Workers never read it: they receive what they need (the session handle, the settings, a token
cache) as arguments and post messages; the handlers update this object and the widgets.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tui_compactor.workbench.settings import Settings

if TYPE_CHECKING:
    from tui_compactor.engine.tokens import TokenCache
    from tui_compactor.workbench.handle import SessionHandle
    from tui_compactor.workbench.views import GaugeData, PlanReport

__all__ = ["AppOptions", "AppState"]


@dataclass(frozen=True, slots=True)
class AppOptions:
    """What the app was started with (does not change while it runs)."""

    sessions_dirs: tuple[Path, ...] = ()
    """Extra directories the session picker lists."""
    profile_name: str | None = None
    """``--profile``: the summarizer profile for compactions and branch summaries."""
    follow: bool = True
    """Watch the file for new entries (live follow)."""
    append_quiet_seconds: float | None = None
    """Passed to the writer's live-writer check (None: the writer's default)."""
    ignore_agents: bool = False
    """The user's explicit override of the writer's running-agent refusal."""
    picker_dirs_only: bool = False
    """The picker lists ``sessions_dirs`` only (``tui-compactor DIR``), not pi's and omp's."""


@dataclass(slots=True)
class AppState:
    """Everything the app knows that changes while it runs."""

    settings: Settings
    """The resolved settings (``workbench.settings``); an edit replaces the object."""
    session_path: Path | None = None
    handle: SessionHandle | None = None
    """The loaded session shared with the workers (snapshots, refresh, generation)."""
    token_cache: TokenCache | None = None
    load_cancel: threading.Event = field(default_factory=threading.Event)
    load_seconds: float | None = None
    preview_drawn: threading.Event | None = None
    """While a tail-first preview is shown: set once its gauge is drawn (the index waits)."""
    first_screen: threading.Event = field(default_factory=threading.Event)
    """Set once the first gauge is drawn: token counting (and the cl100k table it loads)
    waits for it, so the first screen does not share the GIL with them."""
    whole_file_gauge: bool = False
    """The gauge shows a node of the session loaded last (not of the tail preview before it)."""
    whole_screen: threading.Event = field(default_factory=threading.Event)
    """Set once the whole file's first screen is complete: indexed, its gauge shown and the
    rows on screen counted (or the index ended with nothing to measure). The chart and the
    imports that screen does not need (the Markdown renderer, the later tabs) wait for it, so
    they do not share the GIL with the index and that screen."""

    selected_entry: int | None = None
    folded: set[int] = field(default_factory=set)
    search_query: str = ""
    search_request: int = 0
    """Bumped per search asked for; the matches of an older one are dropped."""
    search_from: int | None = None
    """While a search runs: the entry the cursor was on when it was asked for (the first match
    is jumped to only if the cursor is still there when the matches arrive); None otherwise."""
    search_covered: int = 0
    """How many entries (from the first) the search has looked in: entries live follow adds
    past them are searched as they arrive, so ``n`` reaches an agent's new matching entries."""
    outline_request: int = 0
    """Bumped per outline rebuild; older results are dropped."""
    token_count_pending: bool = False
    """Count tokens once the next rows are shown (what is visible is counted first)."""
    table_error: str | None = None
    """Why the cl100k table could not be loaded, once a count found out: from then on the
    settings count with the chars/4 estimate (``Settings.without_table``)."""
    gauge_data: GaugeData | None = None
    gauges_in_flight: set[tuple[Any, ...]] = field(default_factory=set)
    """What the gauge workers still running measure (entry, generation, settings, token
    cache, as sent): a request already on its way is not started again (``G``, ``g``, ``G``
    at the leaf of a 200k-deep chain built two 200k-item contexts at once, ~70 MB each)."""

    plan_report: PlanReport | None = None
    """The shown plan with the session generation it was made at."""
    plan_request: int = 0
    """Bumped per plan request; older results are dropped."""
    plan_leaf: int | None = None
    plan_cut: int | None = None
    plan_answered: int = 0
    """The plan request the shown plan answers (``plan_request`` is ahead while one is made)."""
    cut_steps: int = 0
    """``[`` (-1) / ``]`` (+1) typed before the plan they move arrived: applied to it."""
    run_after_plan: str = ""
    """``r`` without a plan: plan first, then run (``single`` or ``candidates``)."""
    compaction_basis: PlanReport | None = None
    """The plan report the running compaction was started from (re-checked at accept)."""
    compaction_options: tuple[str, str, bool] = ("soft", "", False)
    """Method, focus text and replace-the-prompt flag for the next compaction (plan pane)."""

    file_gone: bool = False
    """Live follow found the file deleted or moved away: what was loaded stays shown."""
    pending_targets: set[int] = field(default_factory=set)
    """Targets of navigations still running."""
    move_asked: int | None = None
    """The node whose move is being planned or asked about in the navigation dialog: another
    ``enter`` waits for that answer (two typed fast ask once, and write once at most)."""
    running_jobs: int = 0
    """Writes and summaries in flight (shown in the status line)."""

    last_input: float = 0.0
    """``time.monotonic()`` of the last key or click (a deep collection waits for a pause)."""

    user_keymap: dict[str, str] = field(default_factory=dict)
    """Binding id -> keys from the config (shown in help)."""
    config_problems: list[str] = field(default_factory=list)
    """Problems found in ``[ui]`` (unknown binding ids...), also shown as notifications."""
    config_stamp: tuple[Path, tuple[int, int] | None] | None = None
    """The config file read at start and its (mtime, size) then, until the app said that it
    changed (it keeps the settings it read: their sources would no longer be true of the file)."""
