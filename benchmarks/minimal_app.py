"""The floor for "first full screen": a minimal Textual app that fills a 120x40 terminal.

A header line, a dozen ``Static`` widgets in two columns and a footer, nothing computed. The
benchmark starts it in tmux exactly like the real app and waits for its last widget's text
(``MINIMAL-READY``) on screen.

    python benchmarks/minimal_app.py
"""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Footer, Static

READY_TEXT = "MINIMAL-READY"


class MinimalApp(App[None]):
    """Twelve static panes and a footer."""

    CSS = """
    Static { height: 1fr; border: round $accent; }
    """
    BINDINGS = [("q", "quit", "Quit")]

    def compose(self) -> ComposeResult:
        yield Static("minimal textual app: first full screen floor", classes="title")
        with Horizontal():
            with Vertical():
                for n in range(6):
                    yield Static(f"left pane {n}: some text to draw " * 2)
            with Vertical():
                for n in range(5):
                    yield Static(f"right pane {n}: some text to draw " * 2)
                yield Static(READY_TEXT)
        yield Footer()


if __name__ == "__main__":
    MinimalApp().run()
