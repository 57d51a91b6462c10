"""Preview tabs whose content is built the first time it is shown or used.

The first screen shows the Details tab only; the other tabs' views (the Plan form alone is ~45
widgets) would be composed and styled at start-up for nothing. Each of them is built when its
tab is first shown (by key, mouse or palette) or when the app first hands it something to show.
Mounting takes a frame, so what the app asks of a view that is not built yet waits in order and
runs once it is (``with_view``); a view that was never built is skipped where the fresh view
would show the same thing (``build=False``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from textual.widget import Widget
from textual.widgets import TabPane

if TYPE_CHECKING:
    from textual.app import App

ViewT = TypeVar("ViewT", bound=Widget)

LAZY_VIEWS: dict[str, tuple[str, str]] = {
    "ContextView": ("tab-context", "context"),
    "PlanView": ("tab-plan", "plan"),
    "SummaryDiff": ("tab-diff", "summary-diff"),
    "BreakdownView": ("tab-breakdown", "breakdown"),
}
"""View class name -> (its tab's id, the view's id)."""

LAZY_TABS = (
    ("Context", "tab-context"),
    ("Plan", "tab-plan"),
    ("Diff", "tab-diff"),
    ("Window", "tab-breakdown"),
    ("Compaction", "tab-compaction"),
)
"""The preview's tabs after Details, in order (title, id): each built on first use by the
app's ``pane_content``."""

LAZY_PANES = frozenset(pane_id for _title, pane_id in LAZY_TABS)


class LazyPanes:
    """Mixin of the app: build tabs on first use (``pane_content`` says what goes in each)."""

    _pane_queue: dict[str, list[Callable[[], None]] | None]
    """Tab id -> actions waiting while it is built (None once built; absent: never built)."""
    _panes_mounted: set[str]
    """Tabs whose content is mounted (what waited may still be running)."""

    def pane_content(self, pane_id: str) -> list[Widget]:
        """The widgets of the tab ``pane_id`` (the app says)."""
        raise NotImplementedError

    def pane_built(self, pane_id: str) -> bool:
        """True once the tab's content is mounted."""
        self._queue()
        return pane_id in self._panes_mounted

    def build_pane(self, pane_id: str) -> None:
        """Start building the tab ``pane_id`` unless it is built or being built."""
        queue = self._queue()
        if pane_id in queue or pane_id not in LAZY_PANES:
            return
        app: App[None] = self  # type: ignore[assignment]
        pane = app.query_one(f"#{pane_id}", TabPane)
        queue[pane_id] = []
        mounted = pane.mount(*self.pane_content(pane_id))

        async def run_waiting() -> None:
            await mounted
            self._panes_mounted.add(pane_id)
            waiting = queue[pane_id] or []
            while waiting:
                waiting.pop(0)()
            queue[pane_id] = None

        app.call_next(run_waiting)

    def with_pane(self, pane_id: str, action: Callable[[], None], *, build: bool = True) -> None:
        """Run ``action`` now if the tab is built, else once it is (building it; with
        ``build=False`` a tab never built is left alone and ``action`` dropped)."""
        queue = self._queue()
        if pane_id not in queue:
            if not build:
                return
            self.build_pane(pane_id)
        waiting = queue.get(pane_id)
        if waiting is None:
            action()
        else:
            waiting.append(action)

    def view(self, view_type: type[ViewT]) -> ViewT | None:
        """The view of a lazy tab once it is mounted, else None."""
        pane_id, view_id = LAZY_VIEWS[view_type.__name__]
        if not self.pane_built(pane_id):
            return None
        app: App[None] = self  # type: ignore[assignment]
        return app.query_one(f"#{view_id}", view_type)

    def with_view(
        self, view_type: type[ViewT], action: Callable[[ViewT], None], *, build: bool = True
    ) -> None:
        """``action(view)`` now if its tab is built, else once it is (``with_pane``)."""
        pane_id, view_id = LAZY_VIEWS[view_type.__name__]
        app: App[None] = self  # type: ignore[assignment]
        self.with_pane(
            pane_id, lambda: action(app.query_one(f"#{view_id}", view_type)), build=build
        )

    def _queue(self) -> dict[str, list[Callable[[], None]] | None]:
        try:
            return self._pane_queue
        except AttributeError:
            self._pane_queue = {}
            self._panes_mounted = set()
            return self._pane_queue
