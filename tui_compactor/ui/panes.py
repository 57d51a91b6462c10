"""Parts of the main screen that are built the first time they are shown or used.

The first screen shows the Details tab only; the other tabs' views (the Plan form alone is ~45
widgets) and the hindsight audit under a compaction's details would be composed and styled at
start-up for nothing. Each part is built when its tab is first shown (by key, mouse or palette)
or when the app first hands it something to show. Mounting takes a frame, so what the app asks
of a view that is not built yet waits in order and runs once it is (``with_view``); a view that
was never built is skipped where the fresh view would show the same thing (``build=False``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from textual.widget import Widget

from tui_compactor.ui.widgets.tabs import TabbedPanes

if TYPE_CHECKING:
    from textual.app import App
    from textual.screen import Screen

ViewT = TypeVar("ViewT", bound=Widget)

TABS = (
    ("Details", "tab-details"),
    ("Context", "tab-context"),
    ("Plan", "tab-plan"),
    ("Diff", "tab-diff"),
    ("Compaction", "tab-compaction"),
    ("Window", "tab-breakdown"),
)
"""The preview's tabs in order (title, id), the order of their digit keys ``1``-``6``
(``bindings``); each after Details is built on first use by the app's ``pane_content``."""

LAZY_TABS = TABS[1:]
"""The tabs whose panes are built on first use."""

PREVIEW_ID = "preview"
"""The id of the preview's ``TabbedPanes``: a tab's pane is added to it with its content."""

LAZY_PARTS: dict[str, str] = {
    **{pane_id: PREVIEW_ID for _title, pane_id in LAZY_TABS},
    "hindsight": "tab-details",
}
"""Part -> the id of the widget its content is mounted in (a tab's content goes in a new pane
of the preview, under the tab's id)."""

LAZY_VIEWS: dict[str, tuple[str, str]] = {
    "ContextView": ("tab-context", "context"),
    "PlanView": ("tab-plan", "plan"),
    "SummaryDiff": ("tab-diff", "summary-diff"),
    "BreakdownView": ("tab-breakdown", "breakdown"),
    "HindsightView": ("hindsight", "hindsight"),
}
"""View class name -> (its part, the view's id)."""


class LazyPanes:
    """Mixin of the app: build parts on first use (``pane_content`` says what goes in each)."""

    _pane_queue: dict[str, list[Callable[[], None]] | None]
    """Part -> actions waiting while it is built (None once built; absent: never built)."""
    _panes_mounted: set[str]
    """Parts whose content is mounted (what waited may still be running)."""

    def pane_content(self, part: str) -> list[Widget]:
        """The widgets of ``part`` (the app says)."""
        raise NotImplementedError

    def pane_built(self, part: str) -> bool:
        """True once the part's content is mounted."""
        self._queue()
        return part in self._panes_mounted

    def pane_started(self, part: str) -> bool:
        """True once the part is built or being built (what is asked of it then is kept)."""
        return part in self._queue()

    def build_pane(self, part: str) -> None:
        """Start building ``part`` unless it is built or being built (not a lazy part: no-op)."""
        queue = self._queue()
        if part in queue or part not in LAZY_PARTS:
            return
        queue[part] = []
        parent = self._main_screen().query_one(f"#{LAZY_PARTS[part]}")
        if isinstance(parent, TabbedPanes):
            mounted = parent.add_pane(part, *self.pane_content(part))
        else:
            mounted = parent.mount(*self.pane_content(part))
        app: App[None] = self  # type: ignore[assignment]

        async def run_waiting() -> None:
            await mounted
            self._panes_mounted.add(part)
            waiting = queue[part] or []
            if not app.is_running:
                waiting.clear()
            while waiting:
                waiting.pop(0)()
            queue[part] = None

        app.call_next(run_waiting)

    def with_pane(self, part: str, action: Callable[[], None], *, build: bool = True) -> None:
        """Run ``action`` now if ``part`` is built, else once it is (building it; with
        ``build=False`` a part never built is left alone and ``action`` dropped). Nothing
        runs once the app shuts down (a debounce timer may still fire: its views are gone)."""
        app: App[None] = self  # type: ignore[assignment]
        if not app.is_running:
            return
        queue = self._queue()
        if part not in queue:
            if not build:
                return
            self.build_pane(part)
        waiting = queue.get(part)
        if waiting is None:
            action()
        else:
            waiting.append(action)

    def view(self, view_type: type[ViewT]) -> ViewT | None:
        """The view of a lazy part once it is mounted, else None."""
        part, view_id = LAZY_VIEWS[view_type.__name__]
        if not self.pane_built(part):
            return None
        return self._main_screen().query_one(f"#{view_id}", view_type)

    def with_view(
        self, view_type: type[ViewT], action: Callable[[ViewT], None], *, build: bool = True
    ) -> None:
        """``action(view)`` now if its part is built, else once it is (``with_pane``)."""
        part, view_id = LAZY_VIEWS[view_type.__name__]
        self.with_pane(
            part,
            lambda: action(self._main_screen().query_one(f"#{view_id}", view_type)),
            build=build,
        )

    def _main_screen(self) -> Screen[Any]:
        """The screen the parts live on (a dialog may be shown over it)."""
        app: App[None] = self  # type: ignore[assignment]
        return app.screen_stack[0] if app.screen_stack else app.screen

    def _queue(self) -> dict[str, list[Callable[[], None]] | None]:
        try:
            return self._pane_queue
        except AttributeError:
            self._pane_queue = {}
            self._panes_mounted = set()
            return self._pane_queue
