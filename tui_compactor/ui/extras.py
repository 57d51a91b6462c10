"""The app's Issues view, label editing and search feedback, as a mixin of the app.

* ``I`` (or the palette, or a click on the status line's issue count) opens the Issues view of
  the load diagnostics; ``enter`` there moves the cursor to the entry.
* ``L`` adds, changes or clears the selected entry's label. The change is a workbench proposal
  (``propose_label``: a pi ``label`` entry, child of the file's leaf, as pi's
  ``appendLabelChange`` does) applied through the writer's append gate like every other write;
  a file the gate refuses says why.
* Search matches entry types too (``compaction``, ``branch summary``, ``label``) and labels;
  ``n``/``N`` say which match this is (``3/7``) and when they wrapped.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast

from rich.text import Text

from tui_compactor.textsafe import sanitize
from tui_compactor.ui.messages import EntryAppended, WorkFailed
from tui_compactor.ui.widgets.labels import entry_kind
from tui_compactor.ui.widgets.status import SessionStatus
from tui_compactor.ui.widgets.tree import KIND_TAGS, SessionTree
from tui_compactor.ui.workers import work
from tui_compactor.workbench.handle import SessionHandle
from tui_compactor.workbench.preview import entry_preview

if TYPE_CHECKING:
    from textual.app import App

    _Base = App[None]
else:
    _Base = object

__all__ = ["SessionExtras", "entry_search_text"]


def entry_search_text(
    session: Any, entry: Any, rules: str, data: dict[str, Any] | None = None
) -> str:
    """What search looks in for one entry: its id, its kind as the tree names it (``▣
    compaction``, ``⎇ branch summary``, ``label``...), its type, its label and its preview
    (under ``rules``, as the tree shows it; ``data``: the record, when read already)."""
    kind = entry_kind(entry)
    tag = KIND_TAGS.get(kind, (kind, ""))[0]
    label = session.label_of(entry.index) or ""
    preview = entry_preview(entry, rules, data=data)
    return " ".join((entry.id, tag, kind, str(entry.type).replace("_", " "), label, preview))


class SessionExtras(_Base):
    """Issues view, label editing, search position."""

    # ----- issues ---------------------------------------------------------------------------

    def action_show_issues(self) -> None:
        """Open the Issues view of the load diagnostics."""
        from tui_compactor.ui.screens.issues import IssueJump, IssuesScreen

        session = getattr(self, "session", None)
        if session is None:
            return
        from tui_compactor.session.flavor import session_issues

        issues = session_issues(session, cast(Any, self).settings.rules)
        if not issues:
            self.notify("no issues: the file loaded cleanly", timeout=3)
            return

        def jump(choice: IssueJump | None) -> None:
            if choice is None:
                return
            if not self.query_one(SessionTree).move_to_entry(choice.entry_index):
                self.notify(
                    f"#{choice.entry_index} is hidden by the filter or a fold "
                    "(f: filter, u… space: unfold)",
                    severity="warning",
                    timeout=4,
                )
            elif choice.note:
                self.notify(choice.note, timeout=4)

        self.push_screen(IssuesScreen(session, issues, str(session.verdict)), jump)

    def on_session_status_issues_requested(self, _message: SessionStatus.IssuesRequested) -> None:
        """The status line's issue count was clicked."""
        self.action_show_issues()

    # ----- labels ---------------------------------------------------------------------------

    def action_edit_label(self) -> None:
        """Add, change or clear the selected entry's label (appends a ``label`` entry).

        The label is proposed against the session as it is when the dialog opens
        (``workbench.actions.propose_label``) and applied through the append gate.
        """
        from tui_compactor.ui.screens.label import LabelDialog
        from tui_compactor.ui.screens.navigate import describe_node

        app: Any = self
        handle: SessionHandle | None = app.handle
        # The row under the cursor now (a key typed right after a move arrives before the
        # tree's Highlighted message would update ``selected_entry``).
        selected = self.query_one(SessionTree).cursor_entry
        if handle is None or selected is None:
            return
        session = handle.session
        if session.append_refusal:
            self.notify(
                sanitize(session.append_refusal, max_len=300),
                title="read-only: labels cannot be written",
                severity="error",
                timeout=8,
            )
            return
        # The state the user decides on. Read without waiting for the session's lock (a
        # reader holding it must not freeze the UI): the generation first, then the leaf, so a
        # refresh in between shows as a stale proposal that ``apply`` refuses.
        basis = (handle.generation, session.leaf)
        what = Text("Label of ", style="bold")
        what.append_text(describe_node(session, selected, rules=app.settings.rules))

        def chosen(text: str | None) -> None:
            if text is None:
                return
            if app.handle is not handle:  # the file was rewritten and loaded again meanwhile
                app.notify(
                    "the file was rewritten on disk and loaded again while the label was "
                    "typed: not written (its entry was found in the old file); label it again",
                    title="label not written",
                    severity="warning",
                    timeout=10,
                )
                return
            self.append_label(handle, selected, text, basis)

        app.hold_keys()  # until the dialog's input has the focus
        self.push_screen(LabelDialog(what, session.label_of(selected)), chosen)

    @work(thread=True, exclusive=True, exit_on_error=False, group="label")
    def append_label(
        self, handle: SessionHandle, target: int, text: str, basis: tuple[int, int | None]
    ) -> None:
        """Propose the label against ``basis`` (the generation and leaf the dialog opened at)
        and apply it (thread). A label does not depend on the leaf, so when the session grew
        since the dialog opened it is proposed again at the new leaf and the user is told
        where it went; it is never written onto the old leaf."""
        from tui_compactor.ui.app import _error_text
        from tui_compactor.workbench.actions import (
            MAX_REPLANS,
            ActionRefused,
            StaleProposal,
            apply,
            propose_label,
        )

        app: Any = self
        generation: int | None
        generation, file_leaf = basis
        grew = False
        for _attempt in range(MAX_REPLANS + 1):
            with handle.read() as snapshot:
                before = snapshot.entry_count
                try:
                    proposal = propose_label(
                        snapshot, target, text, generation=generation, file_leaf=file_leaf
                    )
                except ActionRefused as refused:
                    self.post_message(WorkFailed("label not written", refused.reason))
                    return
            try:
                apply(handle, proposal, **app.append_options())
                break
            except StaleProposal:
                grew = True
                generation = file_leaf = None  # propose again on the session as it is now
            except Exception as error:
                self.post_message(WorkFailed("label not written", _error_text(error)))
                return
        else:
            self.post_message(
                WorkFailed("label not written", "the session kept growing; nothing written")
            )
            return
        added = app._added_since(handle, before)
        label = str(proposal.extra["label"])
        what = f"label “{label}” set" if label else "label cleared"
        where = f" (the session grew meanwhile: written after the new leaf #{proposal.parent})"
        self.post_message(
            EntryAppended(
                "label",
                sanitize(
                    f"{what} on #{target}" + (where if grew else ""), single_line=True, max_len=160
                ),
                added,
                target,
            )
        )

    # ----- search ---------------------------------------------------------------------------

    _match_rows: tuple[Mapping[int, int], set[int], list[int]] | None = None
    """The rows of the visible matches, ascending, with the row map and match set they came
    from (compared by identity: rebuilt rows and a new search bring new objects)."""

    def shown_match_rows(self) -> list[int]:
        """Rows of the matches the tree shows, ascending (computed once per search and rows)."""
        tree = self.query_one(SessionTree)
        cached = self._match_rows
        if (
            cached is not None
            and cached[0] is tree.row_of_entry
            and cached[1] is tree.search_matches
        ):
            return cached[2]
        positions = tree.row_of_entry
        shown = match_rows(positions, tree.search_matches)
        self._match_rows = (positions, tree.search_matches, shown)
        return shown

    def remember_match_rows(
        self, positions: Mapping[int, int], matches: set[int], shown: list[int]
    ) -> None:
        """``match_rows`` of a search, computed off the UI thread on the rows it started on
        (used while the tree shows those rows and those matches)."""
        self._match_rows = (positions, matches, shown)

    def report_search_position(
        self, number: int, wrapped: bool, step: int, found: str = ""
    ) -> None:
        """Say which visible match the cursor is on (``number`` counts from 0 in
        ``shown_match_rows``: ``3/7``) and whether the step wrapped, after ``found`` (what the
        search that just ended found) when given."""
        tree = self.query_one(SessionTree)
        shown = self.shown_match_rows()
        text = (f"{found} · " if found else "") + f"match {number + 1}/{len(shown)}"
        hidden = len(tree.search_matches) - len(shown)
        if hidden:
            text += f" ({hidden} more hidden by the filter or folds)"
        if wrapped:
            text += " · wrapped to the " + ("top" if step > 0 else "bottom")
        # One search note at a time: the previous position goes, other notes stay.
        for note in list(self._notifications):
            if note.title == "search":
                self._unnotify(note)
        self.notify(
            text, title="search", timeout=3, severity="warning" if wrapped else "information"
        )


def match_rows(positions: Mapping[int, int], matches: set[int]) -> list[int]:
    """Rows of ``matches`` that have one in ``positions`` (entry -> row), ascending: tens of
    milliseconds for a common word in a 100k-entry session, so the search worker makes them."""
    return sorted(row for row in map(positions.get, matches) if row is not None)
