"""A yes/no question before a write that takes entries off the active path.

The question shows the workbench proposal's own words (what is appended, where, what leaves the
active path); ``y`` or the Yes button confirms, ``n``, ``escape`` or No declines. The screen
returns True or False through ``dismiss``.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from tui_compactor.textsafe import sanitize

__all__ = ["ConfirmWrite"]


class ConfirmWrite(ModalScreen[bool]):
    """Ask before a write; dismisses with True (write) or False (write nothing)."""

    DEFAULT_CSS = """
    ConfirmWrite { align: center middle; }
    ConfirmWrite > Vertical { width: 80; height: auto; max-height: 80%; border: thick $warning;
                              background: $surface; padding: 1 2; }
    ConfirmWrite #confirm-title { text-style: bold; margin-bottom: 1; }
    ConfirmWrite #confirm-buttons { height: auto; margin-top: 1; align-horizontal: right; }
    ConfirmWrite Button { margin-left: 2; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Yes", show=False),
        Binding("n", "answer(False)", "No", show=False),
        Binding("escape", "answer(False)", "No", show=False),
    ]

    def __init__(self, title: str, body: str, *, yes: str = "Yes") -> None:
        super().__init__()
        self.title_text = title
        self.body = body
        self.yes_label = yes

    def compose(self) -> ComposeResult:
        """Title, the proposal's description, and the two buttons."""
        with Vertical():
            yield Static(Text(sanitize(self.title_text, single_line=True, max_len=76)),
                         id="confirm-title")
            yield Static(Text(sanitize(self.body, max_len=2000)), id="confirm-body")
            with Horizontal(id="confirm-buttons"):
                yield Button(f"{self.yes_label} (y)", id="confirm-yes", variant="warning")
                yield Button("No (n)", id="confirm-no", variant="primary")

    def on_mount(self) -> None:
        """No is focused: enter alone never writes."""
        self.query_one("#confirm-no", Button).focus()

    def action_answer(self, answer: bool) -> None:
        """Close with ``answer``."""
        self.dismiss(answer)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "confirm-yes")
