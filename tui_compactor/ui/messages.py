"""Messages that workers post to the app.

Workers never touch widgets: they compute in a thread (or an async task) and post one of these
messages; the app's handlers apply the result to the screen. Progress messages replace each
other in the queue (``can_replace``) so a slow UI never falls behind a fast worker.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from textual.message import Message

from tui_compactor.workbench.views import ChartData, GaugeData, PlanReport

if TYPE_CHECKING:
    from collections.abc import Mapping

    from rich.text import Text

    from tui_compactor.engine.branch import NavigationPlan
    from tui_compactor.engine.plan import CompactionPlan
    from tui_compactor.engine.tokens import TokenCache
    from tui_compactor.session.outline import OutlineRows
    from tui_compactor.workbench.handle import SessionHandle
    from tui_compactor.workbench.settings import Settings


class LoadProgressed(Message):
    """Indexing progress of the file being opened."""

    def __init__(self, bytes_done: int, bytes_total: int, entries: int) -> None:
        super().__init__()
        self.bytes_done = bytes_done
        self.bytes_total = bytes_total
        self.entries = entries

    def can_replace(self, message: Message) -> bool:
        """A newer progress report makes an older, still queued one useless."""
        return isinstance(message, LoadProgressed)


class IndexStarted(Message):
    """The whole file's index starts (after the preview's first frame, if there is one)."""

    def __init__(self, file_name: str) -> None:
        super().__init__()
        self.file_name = file_name


class PreviewLoaded(Message):
    """The file's tail, read before the whole file is indexed (``reader.load_tail_preview``)."""

    def __init__(
        self, session: Any, rows: OutlineRows, settings: Settings, drawn: threading.Event
    ) -> None:
        super().__init__()
        self.session = session
        self.rows = rows
        """Its outline (the default filter at open)."""
        self.settings = settings
        """The app's settings with what follows the preview (rules, the model's window)."""
        self.drawn = drawn
        """Set once the preview is on screen: the index waits for it (a second at most)."""


class SessionLoaded(Message):
    """The session finished loading (possibly stopped early: ``session.complete`` is False)."""

    def __init__(
        self,
        session: Any,
        seconds: float,
        settings: Settings,
        orphans: list[str],
        rows: OutlineRows,
        filter_index: int,
    ) -> None:
        super().__init__()
        self.session = session
        self.seconds = seconds
        self.settings = settings
        """The app's settings with what follows the session (rules, the model's window)."""
        self.orphans = orphans
        """What ``session.agents.orphaned_appends`` found, worded for the user."""
        self.rows = rows
        """Its outline under ``filter_index`` (the filter when the open started), no folds."""
        self.filter_index = filter_index


class LoadFailed(Message):
    """The session could not be loaded at all (the loader itself raised)."""

    def __init__(self, path: str, error: str) -> None:
        super().__init__()
        self.path = path
        self.error = error


class OutlineReady(Message):
    """A freshly built list of tree rows (after load, fold, filter or refresh)."""

    def __init__(self, rows: OutlineRows, keep_entry: int | None, generation: int) -> None:
        super().__init__()
        self.rows = rows
        self.keep_entry = keep_entry
        """Entry index the cursor should stay on, if it is still visible."""
        self.generation = generation


class TokensCounted(Message):
    """Token counts for a batch of entries (entry index -> tokens)."""

    def __init__(self, counts: dict[int, int], cache: TokenCache | None = None) -> None:
        super().__init__()
        self.counts = counts
        self.cache = cache
        """The token cache that counted them (a replaced cache's counts are dropped)."""


class CountingRestarted(Message):
    """The counting process ended and was started again; the counts it had in flight were
    sent again (``reason``: why it ended)."""

    def __init__(self, reason: str) -> None:
        super().__init__()
        self.reason = reason


class StylesAhead(Message):
    """Widget classes whose CSS the app may parse ahead of a dialog's first opening (the
    navigation dialog's, its module imported by the worker that posts this)."""

    def __init__(self, classes: list[type[Any]]) -> None:
        super().__init__()
        self.classes = classes


class GaugeReady(Message):
    """The context at the selected node was measured (``provisional``: with a chars/4 count
    while the counter's table loads; the real measure follows)."""

    def __init__(self, data: GaugeData, *, provisional: bool = False) -> None:
        super().__init__()
        self.data = data
        self.provisional = provisional


class ChartReady(Message):
    """Context size along the active path, one point per assistant turn."""

    def __init__(self, chart: ChartData) -> None:
        super().__init__()
        self.chart = chart


class PlanReady(Message):
    """A compaction plan with everything the pane and tree show (``workbench.views``)."""

    def __init__(self, report: PlanReport, request: int, text: Text, sources: Text) -> None:
        super().__init__()
        self.report = report
        self.request = request
        """The app's plan request this answers (older requests are dropped)."""
        self.text = text
        """The plan pane's description of the plan (``plan_view.plan_summary``)."""
        self.sources = sources
        """Where each setting the plan depends on came from (``plan_view.settings_text``)."""

    @property
    def plan(self) -> CompactionPlan:
        """The plan (``plan.prepared`` may be False with a reason)."""
        return self.report.plan

    @property
    def regions(self) -> dict[int, str]:
        """Entry index -> region, for colouring the tree (computed in the worker)."""
        return self.report.regions

    @property
    def cut_entry(self) -> int | None:
        """Entry index of the first kept entry, if prepared."""
        return self.report.cut_entry

    @property
    def refusal(self) -> str | None:
        """Why the plan may not be run (``workbench.plans.run_refusal``); None when it may."""
        return self.report.refusal


class SessionRefreshed(Message):
    """Live follow: the file was re-read; ``status`` is unchanged / grew / rewritten."""

    def __init__(self, status: str, added: list[int]) -> None:
        super().__init__()
        self.status = status
        self.added = added


class EntryAppended(Message):
    """The writer appended an entry to the file (compaction, branch summary or leaf marker)."""

    def __init__(
        self, kind: str, description: str, added: list[int], select_entry: int | None
    ) -> None:
        super().__init__()
        self.kind = kind
        self.description = description
        self.added = added
        """Entry indices the refresh after the append found."""
        self.select_entry = select_entry
        """Entry the cursor should move to (the new node), if any."""


class NavigationPlanned(Message):
    """The engine planned a move of the leaf to ``target``; the dialog can open."""

    def __init__(
        self,
        target: int,
        nav_plan: NavigationPlan,
        generation: int,
        summarizer_label: str,
    ) -> None:
        super().__init__()
        self.target = target
        self.nav_plan = nav_plan
        self.generation = generation
        """The session generation the move was planned at (re-checked when written)."""
        self.summarizer_label = summarizer_label
        """Which summarizer a branch summary would use, as the dialog names it (made by the
        planning worker: the first one imports the summarize stack)."""


class WorkFailed(Message):
    """A worker failed in a way the user must hear about (the file is unchanged)."""

    def __init__(self, what: str, error: str) -> None:
        super().__init__()
        self.what = what
        self.error = error


class BranchSummaryProgress(Message):
    """A background branch summary advanced (progress text shown on its target row)."""

    def __init__(self, target: int, text: str | None) -> None:
        super().__init__()
        self.target = target
        self.text = text
        """None when the job ended (landed or failed)."""


class CompactionAppendFailed(Message):
    """Accepting a compaction failed (nothing written); the panel can accept again."""

    def __init__(self, panel: Any, error: str) -> None:
        super().__init__()
        self.panel = panel
        self.error = error


class WriteStale(Message):
    """A write was not made because the session grew since it was proposed (``reloaded``:
    the file was rewritten on disk and loaded again since).

    ``kind`` is ``compaction``, ``navigate`` or ``undo``; ``leaf`` the file's leaf now;
    ``added`` the entries the refresh found; ``panel`` the compaction panel (compaction only);
    ``target`` the navigation target (navigate only).
    """

    def __init__(
        self,
        kind: str,
        reason: str,
        leaf: int | None,
        added: list[int],
        *,
        panel: Any = None,
        target: int | None = None,
        reloaded: bool = False,
    ) -> None:
        super().__init__()
        self.kind = kind
        self.reloaded = reloaded
        self.reason = reason
        self.leaf = leaf
        self.added = added
        self.panel = panel
        self.target = target


class SummaryDiffReady(Message):
    """The summary of a compaction node and the one it updated (``views.previous_summary``)."""

    def __init__(self, entry_index: int, pair: tuple[str, str] | None) -> None:
        super().__init__()
        self.entry_index = entry_index
        self.pair = pair
        """(previous summary, this summary); None when the entry is not a compaction."""


class SearchDone(Message):
    """The entries whose id or preview contain the query of search ``request``."""

    def __init__(
        self,
        matches: set[int],
        handle: SessionHandle | None,
        rows: tuple[Mapping[int, int], list[int]],
        request: int,
        covered: int = 0,
    ) -> None:
        super().__init__()
        self.request = request
        """The search request answered (``AppState.search_request``)."""
        self.covered = covered
        """How many entries, from the first, were searched (``AppState.search_covered``)."""
        self.matches = matches
        self.handle = handle
        """The session searched (a replaced one's matches are dropped)."""
        self.rows = rows
        """The tree's entry -> row positions when the search started, and the rows of the
        matches there, ascending (``extras.match_rows``)."""


class SearchExtended(Message):
    """Entries live follow added since search ``request`` looked, searched: those that match."""

    def __init__(
        self, matches: set[int], handle: SessionHandle, request: int, covered: int
    ) -> None:
        super().__init__()
        self.matches = matches
        self.handle = handle
        self.request = request
        self.covered = covered
        """How many entries, from the first, the search has now looked in."""
