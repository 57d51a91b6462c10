"""The help screen: every key binding with its id (for ``[ui.keymap]``), and the legend."""

from __future__ import annotations

from typing import Any, ClassVar

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

LEGEND = Text.assemble(
    ("Tree: ", "bold"),
    "┃ active path (what the model sees at the leaf) · ◆ leaf (where the agent continues) · "
    "▾/▸ branch point (open/folded, +N hidden) · ✂ cut · numbers at the right are tokens.\n",
    ("Plan column: ", "bold"),
    "S summarized · P turn prefix (split turn, summarized apart) · K kept verbatim · "
    "· metadata (never sent).\n",
    ("Gauge: ", "bold"),
    "█ context · ▓ keep-recent band · ┃ compaction threshold · ░ reserve · ? = window assumed.",
)


def _keys_of(binding: Binding, keymap: dict[str, str]) -> str:
    """The keys a binding answers to now (the user's keymap wins)."""
    keys = keymap.get(binding.id or "", binding.key)
    return ", ".join(part.strip() for part in keys.split(","))


def bindings_table(groups: list[tuple[str, list[Any]]], keymap: dict[str, str]) -> Table:
    """A table of (keys, what it does, id) per binding, grouped."""
    table = Table(box=None, expand=True, header_style="bold", pad_edge=False)
    table.add_column("keys", no_wrap=True, style="bold")
    table.add_column("does", ratio=1)
    table.add_column("id (for [ui.keymap])", no_wrap=True, style="dim")
    for title, bindings in groups:
        table.add_row(Text(title, style="bold underline"), "", "")
        for binding in bindings:
            if not isinstance(binding, Binding):
                continue
            table.add_row(Text(_keys_of(binding, keymap)), Text(binding.description),
                          Text(binding.id or ""))
    return table


class HelpScreen(ModalScreen[None]):
    """Every binding of the app, the tree and the compaction panel; escape or ? closes."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,question_mark,f1,q", "dismiss", "Close", id="help.close"),
    ]

    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll { width: 100; max-width: 100%; height: 90%;
                                  border: thick $accent; background: $panel; padding: 0 1; }
    """

    def __init__(self, groups: list[tuple[str, list[Any]]], keymap: dict[str, str]) -> None:
        super().__init__()
        self.groups = groups
        self.keymap = keymap

    def compose(self) -> ComposeResult:
        """Title, legend, the bindings table."""
        with VerticalScroll():
            yield Static(Text("tui-compactor — keys", style="bold"))
            yield Static(LEGEND)
            yield Static(bindings_table(self.groups, self.keymap))
            yield Static(Text("Change keys in config.toml: [ui.keymap] plan = \"c,f5\"  ·  "
                              "ctrl+p opens the command palette", style="dim"))
