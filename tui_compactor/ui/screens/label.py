"""A small dialog to add, change or clear the label of one entry (like pi's ``/tree``)."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.widgets import Input, Static

from tui_compactor.ui.screens.tinted import TintedModalScreen
from tui_compactor.workbench.actions import label_text

__all__ = ["LabelDialog", "LABEL_MAX_CHARS"]

LABEL_MAX_CHARS = 200
"""Longest label accepted (pi shows labels inline in its tree)."""


class LabelDialog(TintedModalScreen[str | None]):
    """Edit one label: ``enter`` saves (an empty text clears it), ``escape`` cancels.

    Dismisses with the new label (``""`` to clear) or None when cancelled or unchanged.
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="label.cancel"),
    ]

    DEFAULT_CSS = """
    LabelDialog { align: center middle; }
    LabelDialog > Vertical { width: 70; max-width: 100%; height: auto; border: thick $accent;
                             background: $panel; padding: 0 1; }
    LabelDialog #label-what { height: auto; margin-bottom: 1; }
    LabelDialog #label-hint { height: 1; color: $text-muted; }
    """

    def __init__(self, what: Text, current: str | None) -> None:
        """Args:
        what: the entry being labeled, as shown to the user (built from sanitized text).
        current: its label now, if any.
        """
        super().__init__()
        self.what = what
        self.current = current or ""

    def compose_dialog(self) -> ComposeResult:
        """What is labeled, the input, a hint."""
        with Vertical():
            yield Static(self.what, id="label-what")
            yield Input(
                value=self.current,
                placeholder="label (empty: clear it)",
                max_length=LABEL_MAX_CHARS,
                id="label-input",
            )
            yield Static(
                Text("enter: save (appends a label entry) · empty: clear · esc: cancel"),
                id="label-hint",
            )

    def on_mount(self) -> None:
        """Type straight away."""
        self.query_one(Input).focus()

    def action_cancel(self) -> None:
        """Close without a change."""
        self.dismiss(None)

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        label = label_text(event.value)
        self.dismiss(None if label == self.current else label)
