"""A yes/no question in a small dialog (``y`` / ``n``, ``escape`` is no), with an optional
third answer of its own key (the quit question's ``a``: accept the summary instead)."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Static

from tui_compactor.ui.screens.tinted import TintedModalScreen

__all__ = ["ConfirmDialog"]


ALSO_KEY = "a"
"""The key of a question's third answer (its own: the app's keymap does not move it)."""


class ConfirmDialog(TintedModalScreen[bool | None]):
    """Ask one question; dismisses with True (yes), False (no, escape) or None (the third
    answer, ``also``, when the question offers one)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Yes", id="confirm.yes"),
        Binding("n,escape", "answer(False)", "No", id="confirm.no"),
        Binding(ALSO_KEY, "also", "Accept", id="confirm.also"),
    ]

    DEFAULT_CSS = """
    ConfirmDialog { align: center middle; }
    ConfirmDialog > Vertical { width: 64; max-width: 100%; height: auto;
                               border: thick $warning; background: $panel; padding: 0 1; }
    ConfirmDialog #confirm-question { height: auto; margin-bottom: 1; }
    ConfirmDialog Horizontal { height: auto; }
    ConfirmDialog Button { margin-right: 2; min-width: 0; width: auto; }
    """

    def __init__(
        self, question: Text | str, *, yes: str = "Yes", no: str = "No", also: str | None = None
    ) -> None:
        super().__init__()
        self.question = question if isinstance(question, Text) else Text(question)
        self.yes_label = yes
        self.no_label = no
        self.also_label = also
        """The third answer's label (its key is ``a``), or None: a plain yes/no question."""

    def compose_dialog(self) -> ComposeResult:
        """The question and two buttons."""
        with Vertical():
            yield Static(self.question, id="confirm-question")
            with Horizontal():
                yield Button(f"{self.yes_label} y", id="confirm-yes", variant="error", compact=True)
                yield Button(f"{self.no_label} n", id="confirm-no", variant="primary", compact=True)
                if self.also_label is not None:
                    yield Button(f"{self.also_label} a", id="confirm-also", compact=True)

    def on_mount(self) -> None:
        """No is the default."""
        self.query_one("#confirm-no", Button).focus()

    def ask(self, question: Text, *, also: str | None = None) -> None:
        """Ask another question in place (what was asked changed while it was shown): its
        text, and the third answer it offers (its button comes or goes with it)."""
        self.question = question
        self.also_label = also
        self.query_one("#confirm-question", Static).update(question)
        for button in self.query("#confirm-also"):
            button.remove()
        if also is not None:
            self.query_one("#confirm-no", Button).parent.mount(  # type: ignore[union-attr]
                Button(f"{also} {ALSO_KEY}", id="confirm-also", compact=True)
            )
        self.refresh_bindings()

    def action_answer(self, answer: bool) -> None:
        """Key: answer and close."""
        self.dismiss(answer)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """``a`` answers (and shows in the footer) only when the question offers a third
        answer."""
        if action == "also":
            return self.also_label is not None
        return True

    def action_also(self) -> None:
        """Key: the third answer."""
        self.dismiss(None)

    @on(Button.Pressed, "#confirm-yes")
    def _yes(self) -> None:
        self.dismiss(True)

    @on(Button.Pressed, "#confirm-no")
    def _no(self) -> None:
        self.dismiss(False)

    @on(Button.Pressed, "#confirm-also")
    def _also(self) -> None:
        self.dismiss(None)
