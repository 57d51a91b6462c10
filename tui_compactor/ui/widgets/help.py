"""The help screen: every key as the user types it, with its id (for ``[ui.keymap]``).

Groups: the app, the tree, the compaction review (its keys answer wherever focus is while a
compaction is shown), the search box, the plan's budget inputs and the dialogs. Keys are shown
the way they are typed (``?``, ``[``, ``esc``), never by Textual's internal names, and every
text is built as ``Text`` so nothing in it is read as markup.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, ClassVar

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.keys import format_key
from textual.widgets import Static

from tui_compactor.ui.screens.tinted import TintedModalScreen

__all__ = ["HelpScreen", "bindings_table", "key_label", "keys_label", "help_groups", "LEGEND"]

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

HelpRow = tuple[str, str, str]
"""(keys as typed, what they do, binding id or "")."""

SEARCH_KEYS: list[HelpRow] = [
    (
        "enter",
        "find the text in ids, previews, labels and entry types "
        "(compaction, branch summary, label)",
        "",
    ),
    ("esc", "close the search box", ""),
    ("n / N", "next / previous match, with its place (3/7) and a note when it wraps", ""),
]
"""Keys while the search box is open (it is an input: no binding ids)."""

PLAN_INPUT_KEYS: list[HelpRow] = [
    ("0-9 k m . ,", "type a figure: 20000, 20k, 1.5M (blank reserve: the default)", ""),
    ("tab / shift+tab", "next / previous input", ""),
    ("esc", "back to the tree (the plan follows what you typed)", ""),
]
"""Keys in the plan pane's keep / reserve / window inputs."""

DIALOG_KEYS: list[HelpRow] = [
    ("↑ / ↓, enter", "navigation dialog: pick an option", ""),
    ("tab", "navigation dialog: reach the instructions and the Navigate button", ""),
    ("y / n, esc", "questions (quit over a running or unaccepted summary): yes / no", ""),
    ("a", "quit over an unaccepted summary: accept it instead (and stay)", ""),
    ("enter, esc", "issues view: jump to the entry / close", ""),
]
"""Keys in dialogs that are not bindings of their own."""


WORD_KEYS = frozenset({"enter", "tab", "space", "backspace", "delete"})
"""Keys shown by their name, as on the keyboard (not as a symbol)."""


def key_label(key: str) -> str:
    """One key as the user types it: ``question_mark`` → ``?``, ``ctrl+r`` → ``ctrl+r``."""
    *modifiers, name = key.strip().split("+")
    shown = name if name in WORD_KEYS else format_key(name)
    if len(name) == 1 or len(shown) == 1:
        shown = shown if len(shown) == 1 else name
    return "+".join([*modifiers, shown])


def keys_label(keys: str) -> str:
    """A comma-separated key list as typed: ``question_mark,f1`` → ``?, f1``."""
    return ", ".join(key_label(key) for key in keys.split(",") if key.strip())


def _keys_of(binding: Binding, keymap: dict[str, str]) -> str:
    """The keys a binding answers to now (the user's keymap wins), as typed."""
    return keys_label(keymap.get(binding.id or "", binding.key))


def bindings_table(groups: Sequence[tuple[str, Iterable[Any]]], keymap: dict[str, str]) -> Table:
    """A table of (keys, what it does, id) per binding, grouped.

    A group lists ``Binding`` objects or ``HelpRow`` tuples (keys that are not bindings).
    """
    table = Table(box=None, expand=True, header_style="bold", pad_edge=False)
    table.add_column(Text("keys"), no_wrap=True, style="bold")
    table.add_column(Text("does"), ratio=1)
    table.add_column(Text("id (for [ui.keymap])"), no_wrap=True, style="dim")
    for title, rows in groups:
        # The title goes in the wrapping column: in the keys column it would widen it.
        table.add_row(Text(""), Text(title, style="bold underline"), Text(""))
        for row in rows:
            if isinstance(row, Binding):
                table.add_row(
                    Text(_keys_of(row, keymap)), Text(row.description), Text(row.id or "")
                )
            elif isinstance(row, tuple) and len(row) == 3:
                keys, does, binding_id = row
                table.add_row(Text(keys), Text(does), Text(binding_id))
    return table


def help_groups(
    app_bindings: Sequence[Binding], tree_bindings: Sequence[Any], dialog_bindings: Sequence[Any]
) -> list[tuple[str, list[Any]]]:
    """The help's groups: app keys (review keys apart), tree, review, search, inputs, dialogs."""
    review_actions = (
        "accept_compaction",
        "discard_compaction",
        "regenerate_compaction",
        "compaction_diff",
        "pick_candidate",
    )
    review_bindings = [b for b in app_bindings if b.action.startswith(review_actions)]
    candidates = [b for b in review_bindings if b.action.startswith("pick_candidate")]
    review: list[Any] = [b for b in review_bindings if not b.action.startswith("pick_candidate")]
    if candidates:
        first, last = candidates[0], candidates[-1]
        review.append(
            (
                f"{key_label(first.key)}-{key_label(last.key)}",
                "pick a candidate (with several; otherwise the tab keys)",
                f"{first.id} … {last.id}",
            )
        )
    review.append(("esc", "cancel the summaries in flight (nothing is written)", "cancel"))
    app = [b for b in app_bindings if not b.action.startswith(review_actions)]
    return [
        ("App", app),
        ("Tree", list(tree_bindings)),
        ("Compaction review (wherever focus is, while a compaction is shown)", review),
        ("Search box (/)", SEARCH_KEYS),
        ("Plan budget inputs (e)", PLAN_INPUT_KEYS),
        ("Dialogs", [*dialog_bindings, *DIALOG_KEYS]),
    ]


class HelpScreen(TintedModalScreen[None]):
    """Every key of the app, the tree, the review, the inputs and the dialogs; esc or ? closes.

    Notifications are not drawn over it (at 80x24 they would cover a third of the keys); they
    stay the app's and show again, if not expired, when the help closes.
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,question_mark,f1,q", "dismiss", "Close", id="help.close"),
    ]

    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen ToastHolder { display: none; }
    HelpScreen > VerticalScroll { width: 100; max-width: 100%; height: 95%;
                                  border: thick $accent; background: $panel; padding: 0 1; }
    """

    def __init__(
        self,
        groups: Sequence[tuple[str, Iterable[Any]]],
        keymap: dict[str, str],
        *,
        keymap_read: bool = True,
    ) -> None:
        """``keymap_read``: False when the app reads no config file (the demo), so the note
        under the keys does not offer a ``[ui.keymap]`` that would not apply."""
        super().__init__()
        self.groups = list(groups)
        self.keymap = keymap
        self.keymap_read = keymap_read

    def compose_dialog(self) -> ComposeResult:
        """Title, legend, the bindings table."""
        with VerticalScroll():
            yield Static(Text("tui-compactor — keys", style="bold"))
            yield Static(LEGEND)
            yield Static(bindings_table(self.groups, self.keymap), id="help-table")
            keys = (
                'Change keys in config.toml: [ui.keymap] plan = "c,f5"'
                if self.keymap_read
                else "The demo reads no config file: its keys are the defaults ([ui.keymap] in "
                "config.toml changes them on your own sessions)"
            )
            yield Static(Text(keys + "  ·  ctrl+p opens the command palette", style="dim"))
