"""The compaction review's keys and life cycle, as a mixin of the app.

While a compaction is shown (its panel exists: running, ready to accept, or failed), its keys
— ``a`` accept, ``d`` discard, ``g`` regenerate, ``G`` regenerate keeping the audit's missing
anchors, ``v`` diff, digits for candidates — work wherever focus is: they are app bindings with
priority, so the tree's ``g``/``G`` (first/last row) and the tab digits yield to them until the
review closes. A review closes when it is discarded, cancelled or appended; the panel goes and a
line says what happened. Typing in an input or a dialog is never taken over.

``q`` asks first while a summary runs (a model request may be in flight and billed) or a
finished review waits to be accepted; an ``r`` still waiting for its plan has sent nothing and
quits at once.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from rich.text import Text
from textual import events
from textual.geometry import Size
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import Static
from textual.worker import WorkerState

from tui_compactor.ui.bindings import key_of, opener_keys, takes_text

if TYPE_CHECKING:
    from textual.app import App

    from tui_compactor.ui.widgets.compaction import CompactionPanel

    _Base = App[None]
else:
    _Base = object

__all__ = ["ReviewKeys", "REVIEW_ACTIONS"]

REVIEW_ACTIONS = frozenset(
    {
        "regenerate_compaction",
        "pick_candidate",
        "compaction_diff",
        "accept_compaction",
        "discard_compaction",
        "zoom_compaction",
    }
)
"""App actions that exist only while a compaction review is shown."""

SUMMARY_GROUPS = ("compaction", "branch", "accept")
"""Worker groups whose work a quit would cut off (summaries and their appends)."""

ZOOM_BELOW = (120, 30)
"""A review opened on a terminal narrower or shorter than this fills the screen at once (the
side pane is too small to read a summary in); ``z`` toggles it at any size."""

QUIT_ACTIONS = ("quit", "app.quit", "help_quit", "app.help_quit")
"""The actions that quit (the first two), and ``ctrl+c``'s, which says how to."""


class ReviewKeys(_Base):
    """Review keys wherever focus is, closing the review, and a quit that asks first."""

    ESCAPE_TO_MINIMIZE = False
    """Escape cancels summaries in flight, as the footer says; ``z`` restores a zoomed review."""

    @property
    def review_panel(self) -> CompactionPanel | None:
        """The compaction panel while a review is shown.

        Asked for every binding each time the footer or the key map is refreshed: a plain walk
        of the widget tree (a CSS query matched selectors on every node, ~8 ms a call). The
        panel's module (the summarize stack) is imported when the first compaction starts, not
        at start-up: until then no panel can exist."""
        module = sys.modules.get("tui_compactor.ui.widgets.compaction")
        if module is None:
            return None
        panels = self.walk_children(module.CompactionPanel)
        return panels[0] if panels else None

    def review_keys_active(self) -> bool:
        """True when the review's keys should answer: a review is shown on the main screen
        and the user is not typing into an input."""
        if not self.is_running or len(self.screen_stack) > 1 or self.review_panel is None:
            return False
        return not takes_text(self.focused)

    def check_review_action(self, action: str, parameters: tuple[object, ...]) -> bool:
        """Whether a review action answers now (False lets the key reach the tree or tabs)."""
        if not self.review_keys_active():
            return False
        if action == "pick_candidate":
            panel = self.review_panel
            count = len(panel.candidates) if panel is not None else 0
            number = parameters[0] if parameters else 0
            return count > 1 and isinstance(number, int) and 1 <= number <= count
        return True

    def footer_actions(self) -> list[str]:
        """The actions the footer shows now, most important first (``StateFooter``)."""
        if takes_text(self.focused) and self.is_running:
            # Typing into the budget editor, the search box or the focus text: the letter keys
            # are text; esc goes back to the tree, tab to the next field.
            return ["cancel", "app.focus_next", "help", "quit"]
        panel = self.review_panel if self.review_keys_active() else None
        # The panel's state, not its workers: it is "running" from the moment it is mounted
        # (before its workers start), so the footer never shows a ready review too early.
        if panel is not None and panel.state == "running":
            return ["accept_compaction", "cancel", "zoom_compaction", "help", "quit"]
        if panel is not None:
            return [
                "accept_compaction",
                "discard_compaction",
                "regenerate_compaction(False)",
                "regenerate_compaction(True)",
                "zoom_compaction",
                "help",
                "quit",
            ]
        return ["plan", "run_compaction", "search", "cycle_filter", "select", "help", "quit"]

    def action_regenerate_compaction(self, with_missing: bool) -> None:
        """Run the selected candidate again (optionally keeping the audit's missing anchors)."""
        panel = self.review_panel
        if panel is not None:
            panel.regenerate(with_missing)

    def action_pick_candidate(self, number: int) -> None:
        """Select candidate ``number`` for accept."""
        panel = self.review_panel
        if panel is not None:
            panel.select(number)

    def action_compaction_diff(self) -> None:
        """Show the selected summary against the previous one (and back)."""
        panel = self.review_panel
        if panel is not None:
            panel.toggle_diff()

    def open_review(self, panel: CompactionPanel) -> None:
        """A review was mounted: the chart yields its rows; on a small terminal the review
        fills the screen."""
        self.screen.add_class("-reviewing")
        self._review_size = self.size
        width, height = self.size
        if width < ZOOM_BELOW[0] or height < ZOOM_BELOW[1]:
            self.call_after_refresh(self.zoom_review, panel)
        self.call_after_refresh(self.refresh_bindings)

    def zoom_review(self, panel: CompactionPanel) -> None:
        """The review fills the screen with the focus on the panel itself: the hidden tree
        gives its focus up, and Textual would hand it to the panel's first button (Cancel while
        it streams, Accept once done), where the ``enter`` a user presses by reflex would
        cancel the run or append it."""
        if not panel.is_attached or self.review_panel is not panel:
            return  # closed by a key typed before this frame (discard, cancel)
        self.screen.maximize(panel, container=False)
        panel.focus()

    def unzoom_review(self, panel: CompactionPanel) -> None:
        """The tree comes back beside the review, and the focus to the tree if it was in the
        review (``zoom_review`` put it there)."""
        self.screen.minimize()
        self.focus_out_of_review(panel)

    def focus_out_of_review(self, panel: CompactionPanel) -> None:
        """Give the focus to the tree if it is in ``panel`` (unzoomed or closing)."""
        focused = self.focused
        if focused is not None and panel in focused.ancestors_with_self:
            from tui_compactor.ui.widgets.tree import SessionTree

            self.query_one(SessionTree).focus()

    def on_resize(self, event: events.Resize) -> None:
        """The terminal crossed ``ZOOM_BELOW`` while a review is shown: made small, the review
        fills the screen (as when it opens there); made big again, the tree comes back."""
        before = getattr(self, "_review_size", None)
        self._review_size = event.size
        panel = self.review_panel
        if panel is None or before is None or len(self.screen_stack) > 1:
            return

        def small(size: Size) -> bool:
            return size.width < ZOOM_BELOW[0] or size.height < ZOOM_BELOW[1]

        if small(event.size) and not small(before) and self.screen.maximized is None:
            self.zoom_review(panel)
        elif small(before) and not small(event.size) and self.screen.maximized is panel:
            self.unzoom_review(panel)

    def action_zoom_compaction(self) -> None:
        """Key: let the review fill the screen, or give the tree back."""
        panel = self.review_panel
        if panel is None:
            return
        if self.screen.maximized is panel:
            self.unzoom_review(panel)
        else:
            self.zoom_review(panel)

    def close_review(self, outcome: str) -> None:
        """Remove the panel (its buttons go with it) and say what happened in its place."""
        panel = self.review_panel
        if panel is None:
            return
        host = panel.parent
        if self.screen.maximized is panel:
            self.screen.minimize()
        self.focus_out_of_review(panel)
        self.screen.remove_class("-reviewing")
        panel.remove()
        if isinstance(host, Widget):
            line = Text(outcome, style="bold")
            line.append(
                f"\nplan with {key_of(self, 'plan')}, then {key_of(self, 'compact')} runs a "
                "compaction here",
                style="dim",
            )
            host.mount(Static(line, id="compaction-outcome"))
        self.call_after_refresh(self.refresh_bindings)

    def work_quit_would_lose(self, panel: CompactionPanel | None = None) -> tuple[str, str] | None:
        """What quitting now would throw away, as (question, detail), or None: the one rule
        behind ``q``.

        Summaries in flight (a model request may be billed) and a finished review not yet
        accepted or discarded (its summaries may have been paid for) are lost by a quit. An
        ``r`` still waiting for its plan has sent nothing yet: the plan is recomputed for free,
        so it does not count, and neither does a review whose result could not be written.
        ``panel``: the review's panel when it is not on the screen shown (under the question
        itself); the shown one's unless told."""
        panel = panel if panel is not None else self.review_panel
        running = 1 if panel is not None and panel.running else 0
        running += sum(
            1
            for worker in self.workers
            if worker.group in SUMMARY_GROUPS
            and worker.group != "compaction"
            and worker.state in (WorkerState.PENDING, WorkerState.RUNNING)
        )
        if running:
            return (
                "Quit while a summary is running?",
                f"{running} summary job(s) still running: a model request may be in flight "
                "(and billed). Quitting cancels it; nothing is written to the session.",
            )
        if panel is not None and panel.state == "ready" and not panel.accept_refusal:
            from tui_compactor.ui.screens.confirm import ALSO_KEY

            return (
                "Quit without accepting the summary?",
                "The finished summary (a model may have billed for it) has not been accepted: "
                # The question's own key, not the review's: in it the keymap's accept key
                # (``y`` after ``accept = "y"``) may be its yes, which quits.
                f"quitting drops it; nothing is written to the session. {ALSO_KEY} accepts it "
                "(and stays).",
            )
        return None

    def action_help_quit(self) -> None:
        """``ctrl+c`` does not quit (in an input it copies): say which keys do. Textual's own
        note writes them in markup, and every note of this app is plain text (``notify``), so
        it showed ``Press [b]ctrl+q[/b]``."""
        keys = {
            key
            for key, active in self.active_bindings.items()
            if active.binding.action in QUIT_ACTIONS[:2]
        }
        if self.screen.is_modal:
            # Under a dialog only the app's priority keys (ctrl+q) reach past it.
            keys.update(
                key
                for _node, bindings in self.screen._binding_chain
                for key, binding in bindings
                if binding.priority and binding.action in QUIT_ACTIONS[:2]
            )
        if keys:
            shown = " or ".join(sorted(keys, key=lambda key: (len(key), key)))  # q, ctrl+q
            self.notify(f"press {shown} to quit the app", title="Do you want to quit?")

    def is_quit_key(self, key: str) -> bool:
        """Whether ``key`` is one of the app's quit keys, or ``ctrl+c`` (which says how to
        quit), with the user's keymap applied."""
        return key in opener_keys(self._bindings, self._keymap, QUIT_ACTIONS)

    async def action_quit(self) -> None:
        """Quit; ask first when it would lose work (``work_quit_would_lose``)."""
        lost = self.work_quit_would_lose()
        if lost is None or isinstance(self.screen, ModalScreen):
            self.exit()
            return
        from tui_compactor.ui.screens.confirm import ConfirmDialog

        question = Text(lost[0] + "\n", style="bold")
        question.append(lost[1])

        panel = self.review_panel
        # A finished review offers its accept here too (the question says "a accepts it"):
        # the one accept, with its own checks, once the question has closed.
        accept = panel is not None and panel.state == "ready" and not panel.accept_refusal

        def answered(quit_now: bool | None) -> None:
            if quit_now:
                self.exit()
            elif quit_now is None and panel is not None and panel is self.review_panel:
                self.call_later(panel.accept)

        dialog = ConfirmDialog(question, yes="Quit", no="Stay", also="Accept" if accept else None)
        self.push_screen(dialog, answered)
        if panel is not None and panel.running:
            # The run may end while the question is shown: it then asks what quitting would
            # lose now (a finished review's question, with its accept), not what it did.
            def run_ended() -> None:
                if panel.running or dialog not in self.screen_stack:
                    return
                now = self.work_quit_would_lose(panel)
                if now is None:
                    now = ("Quit?", "The summary run has ended: quitting loses nothing.")
                asked = Text(now[0] + "\n", style="bold")
                asked.append(now[1])
                ready = panel.state == "ready" and not panel.accept_refusal
                dialog.ask(asked, also="Accept" if ready else None)

            dialog.watch(panel, "state", run_ended, init=False)
