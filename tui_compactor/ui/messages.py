"""Messages that workers post to the app.

Workers never touch widgets: they compute in a thread (or an async task) and post one of these
messages; the app's handlers apply the result to the screen. Progress messages replace each
other in the queue (``can_replace``) so a slow UI never falls behind a fast worker.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from textual.message import Message


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


class SessionLoaded(Message):
    """The session finished loading (possibly stopped early: ``session.complete`` is False)."""

    def __init__(self, session: Any, seconds: float) -> None:
        super().__init__()
        self.session = session
        self.seconds = seconds


class LoadFailed(Message):
    """The session could not be loaded at all (the loader itself raised)."""

    def __init__(self, path: str, error: str) -> None:
        super().__init__()
        self.path = path
        self.error = error


class OutlineReady(Message):
    """A freshly built list of tree rows (after load, fold, filter or refresh)."""

    def __init__(self, rows: list[Any], keep_entry: int | None, generation: int) -> None:
        super().__init__()
        self.rows = rows
        self.keep_entry = keep_entry
        """Entry index the cursor should stay on, if it is still visible."""
        self.generation = generation


class TokensCounted(Message):
    """Token counts for a batch of entries (entry index -> tokens)."""

    def __init__(self, counts: dict[int, int]) -> None:
        super().__init__()
        self.counts = counts


@dataclass(slots=True)
class GaugeData:
    """Everything the gauge draws for one node."""

    entry_index: int
    tokens: int
    """Estimated context tokens at the node (usage-based where the engine could anchor it)."""
    local_estimate: int
    """The purely local estimate, for comparison."""
    usage_tokens: int | None
    window: int | None
    reserve: int | None
    threshold: int | None
    keep_recent: int
    should_compact: bool
    blocks: list[tuple[str, str, int, int | None]]
    """What the model sees: (role/kind label, preview text, tokens, entry index) per block."""
    window_assumed: bool = False
    """The window is the default guess, not the user's setting (pi reads it from the model)."""
    window_model: str | None = None
    """The session's model id the window was looked up from (no ``--window`` given)."""


class GaugeReady(Message):
    """The context at the selected node was measured."""

    def __init__(self, data: GaugeData) -> None:
        super().__init__()
        self.data = data


class ChartReady(Message):
    """Context size along the active path, one point per assistant turn."""

    def __init__(self, points: list[tuple[int, int]], compactions: list[int]) -> None:
        super().__init__()
        self.points = points
        """(entry index, context tokens) in path order."""
        self.compactions = compactions
        """Positions in ``points`` right after which a compaction happened."""


class PlanReady(Message):
    """A compaction plan for a leaf (``plan.prepared`` may be False with a reason)."""

    def __init__(self, plan: Any, generation: int, regions: dict[int, str],
                 cut_entry: int | None, refusal: str | None = None) -> None:
        super().__init__()
        self.plan = plan
        self.generation = generation
        self.regions = regions
        """Entry index -> region, for colouring the tree (computed in the worker)."""
        self.cut_entry = cut_entry
        self.refusal = refusal
        """Why the plan may not be run (``workbench.plans.run_refusal``); None when it may."""


class SessionRefreshed(Message):
    """Live follow: the file was re-read; ``status`` is unchanged / grew / rewritten."""

    def __init__(self, status: str, added: list[int]) -> None:
        super().__init__()
        self.status = status
        self.added = added


class EntryAppended(Message):
    """The writer appended an entry to the file (compaction, branch summary or leaf marker)."""

    def __init__(self, kind: str, description: str, added: list[int],
                 select_entry: int | None) -> None:
        super().__init__()
        self.kind = kind
        self.description = description
        self.added = added
        """Entry indices the refresh after the append found."""
        self.select_entry = select_entry
        """Entry the cursor should move to (the new node), if any."""


class NavigationPlanned(Message):
    """The engine planned a move of the leaf to ``target``; the dialog can open."""

    def __init__(self, target: int, nav_plan: Any) -> None:
        super().__init__()
        self.target = target
        self.nav_plan = nav_plan


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
