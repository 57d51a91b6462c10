"""The navigation dialog: move the leaf to another node, with or without a branch summary.

Shown when the user presses ``enter`` on a node. It explains what would happen (target, new
leaf, common ancestor, how many entries of the branch being left would be summarized and how
many tokens they hold, from an engine ``NavigationPlan``) and offers: no summary, summarize, or
summarize with custom instructions that are added to or replace the default prompt. It returns a
``NavigationChoice`` through ``dismiss`` (``None`` when cancelled); the app runs the summary and
moves the leaf. Everything works from the keyboard: arrows and ``enter`` (or ``1``/``2``/``3``)
pick an option; with custom instructions, ``tab`` reaches the prompt mode and the Navigate
button; ``escape`` cancels. ``i`` (or the Requests button) shows the exact request the summary
would send, with the instructions typed so far, and sends nothing. On a file that takes no
appends (read-only) a move cannot be made, with a summary or without (it appends an entry): the
dialog offers no option and no Navigate button, only why, the facts, the requests and Cancel;
if the write gate opens while it is shown (an agent finished its line), the options come back.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, ClassVar

from rich.text import Text
from textual import on
from textual._time import get_time  # the clock of events' ``time``
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.css.query import NoMatches
from textual.widgets import Button, Label, OptionList, RadioButton, RadioSet, Static, TextArea
from textual.widgets.option_list import Option

from tui_compactor.textsafe import sanitize
from tui_compactor.ui.bindings import focus_input
from tui_compactor.ui.screens.tinted import TintedModalScreen
from tui_compactor.ui.widgets.labels import entry_kind, format_tokens
from tui_compactor.workbench.preview import entry_preview

__all__ = [
    "SummaryMode",
    "NavigationChoice",
    "NavigateDialog",
    "describe_node",
    "dialog_widget_classes",
]

PREVIEW_WIDTH = 70
"""Characters of an entry's text shown in the dialog."""


class SummaryMode(StrEnum):
    """What to do with the branch being left."""

    NONE = "none"
    SUMMARIZE = "summarize"
    CUSTOM = "custom"


@dataclass(frozen=True, slots=True)
class NavigationChoice:
    """What the user chose in the navigation dialog."""

    target: int
    """Entry index the user pressed ``enter`` on."""
    new_leaf: int | None
    """Where the leaf moves (``None``: before the first entry), from the plan."""
    mode: SummaryMode
    instructions: str | None = None
    """Custom instructions for the summarizer (``CUSTOM`` only, stripped, never empty)."""
    replace_prompt: bool = False
    """True: the instructions replace the default summary prompt; False: they are added to it."""

    @property
    def summarize(self) -> bool:
        """True when a branch summary should be generated."""
        return self.mode is not SummaryMode.NONE


def describe_node(
    session: Any, index: int | None, *, rules: str, width: int = PREVIEW_WIDTH
) -> Text:
    """``#index kind  preview`` for one entry (its preview under ``rules``), as ``Text`` from
    sanitized text."""
    if index is None:
        return Text("before the first entry (root)", style="italic")
    try:
        entry = session.entries[index]
    except (IndexError, AttributeError):
        return Text(f"#{index}", style="bold")
    text = Text(f"#{index} ", style="bold")
    text.append(f"{entry_kind(entry)} ", style="cyan")
    label = getattr(session, "labels", {}).get(index)
    if label:
        text.append(f"[{sanitize(label, single_line=True, max_len=30)}] ", style="magenta")
    text.append(sanitize(entry_preview(entry, rules), single_line=True, max_len=width))
    return text


class MarkedRadioButton(RadioButton):
    """A radio button whose state is in its glyph (``●`` pressed, ``○`` not), not only in its
    colour: Textual draws ``▐●▌`` for both, told apart by a tint a 16-colour terminal or a
    dimmed theme can flatten."""

    @property
    def BUTTON_INNER(self) -> str:  # type: ignore[override]  # noqa: N802
        return "●" if self.value else "○"


class NavigateDialog(TintedModalScreen[NavigationChoice | None]):
    """Ask how to navigate to ``plan.target``; dismiss with a ``NavigationChoice`` or None."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="navigate.cancel"),
        Binding("1", "choose('none')", "No summary", show=False, id="navigate.no_summary"),
        Binding("2", "choose('summarize')", "Summarize", show=False, id="navigate.summarize"),
        Binding("3", "choose('custom')", "Custom", show=False, id="navigate.custom"),
        Binding("i", "inspect_requests", "Requests", id="navigate.inspect_requests"),
    ]

    DEFAULT_CSS = """
    NavigateDialog {
        align: center middle;
    }
    NavigateDialog > #navigate-box {
        width: 90;
        max-width: 100%;
        height: auto;
        max-height: 100%;
        border: thick $accent;
        background: $panel;
        padding: 0 1;
    }
    NavigateDialog #navigate-title {
        text-style: bold;
        margin-bottom: 1;
    }
    NavigateDialog #navigate-facts {
        margin-bottom: 1;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    NavigateDialog #navigate-options {
        height: auto;
        border: none;
        padding: 0;
    }
    NavigateDialog #navigate-options:focus {
        border: none;
    }
    NavigateDialog #navigate-custom {
        height: auto;
        display: none;
    }
    NavigateDialog #navigate-custom.shown {
        display: block;
    }
    NavigateDialog #navigate-instructions {
        height: 5;
    }
    NavigateDialog #navigate-prompt-mode {
        layout: horizontal;
        height: auto;
        width: 100%;
        border: none;
    }
    NavigateDialog #navigate-buttons {
        height: auto;
        align-horizontal: right;
        margin-top: 1;
    }
    NavigateDialog #navigate-buttons Button {
        margin-left: 2;
    }
    NavigateDialog .warning {
        color: $warning;
    }
    NavigateDialog #navigate-read-only {
        height: auto;
        color: $warning;
        display: none;
    }
    NavigateDialog.read-only #navigate-read-only {
        display: block;
    }
    NavigateDialog.read-only #navigate-options, NavigateDialog.read-only #navigate-go,
    NavigateDialog.read-only #navigate-custom {
        display: none;
    }
    """

    def __init__(
        self,
        plan: Any,
        session: Any,
        *,
        summarizer_label: str = "offline",
        append_refusal: str | None = None,
        inspect: Callable[[str | None, bool], None] | None = None,
        name: str | None = None,
        id: str | None = None,  # noqa: A002 - Textual's parameter name
    ) -> None:
        """Args:
        plan: the engine's ``NavigationPlan`` from the current leaf to the target.
        session: the loaded session (for entry previews and labels).
        summarizer_label: which summarizer would write the summary (shown to the user).
        append_refusal: why nothing may be appended to this file, if so (summaries disabled).
        inspect: shows the requests the summary would send, given the custom instructions
            (None: none) and whether they replace the prompt; None: no inspector.
        """
        super().__init__(name=name, id=id)
        # Its enter moves the leaf at once: an enter typed before the dialog was on screen
        # (the second of two typed fast on the tree) must not answer it.
        self.asked_at = math.inf  # until its first frame is drawn (``on_mount``)
        self.plan = plan
        self.session = session
        self.summarizer_label = summarizer_label
        self.append_refusal = append_refusal
        self._shown_refusal = append_refusal
        """The gate its facts and options show (``compose_dialog``, ``_show_gate``)."""
        self.inspect = inspect
        self.mode = SummaryMode.NONE
        """The option currently highlighted."""

    @property
    def can_summarize(self) -> bool:
        """A summary needs something to summarize and a file we may append to."""
        return bool(self.plan.entries) and self.append_refusal is None

    @property
    def read_only(self) -> bool:
        """Nothing may be appended: no move can be made (each appends an entry)."""
        return self.append_refusal is not None

    def compose_dialog(self) -> ComposeResult:
        """Facts about the move, the three options, the custom-instructions area, buttons."""
        self._shown_refusal = self.append_refusal
        with Vertical(id="navigate-box"):
            yield Static(Text("Navigate to another point in the tree"), id="navigate-title")
            yield Static(self._facts(), id="navigate-facts")
            yield Static(self._read_only_text(), id="navigate-read-only")
            self.set_class(self.read_only, "read-only")
            disabled = not self.can_summarize
            yield OptionList(
                Option(
                    Text("1  No summary: just move the leaf"),
                    id=SummaryMode.NONE,
                    disabled=self.read_only,
                ),
                Option(
                    Text(f"2  Summarize the branch being left ({self.summarizer_label})"),
                    id=SummaryMode.SUMMARIZE,
                    disabled=disabled,
                ),
                Option(
                    Text("3  Summarize with custom instructions…"),
                    id=SummaryMode.CUSTOM,
                    disabled=disabled,
                ),
                id="navigate-options",
            )
            with Vertical(id="navigate-custom"):
                yield Label(Text("Custom instructions for the summarizer:"))
                yield TextArea(id="navigate-instructions", tab_behavior="focus")
                # oh-my-pi has no "add to": its custom instructions replace the prompt.
                omp = getattr(self.plan, "rules", "pi") == "omp"
                with RadioSet(id="navigate-prompt-mode"):
                    yield MarkedRadioButton(
                        Text("Add to the default prompt"),
                        value=not omp,
                        id="navigate-append",
                        disabled=omp,
                    )
                    yield MarkedRadioButton(
                        Text(
                            "Replace the default prompt"
                            + (" (oh-my-pi rules always replace)" if omp else "")
                        ),
                        value=omp,
                        id="navigate-replace",
                    )
            with Horizontal(id="navigate-buttons"):
                if self.inspect is not None:
                    yield Button(
                        "Requests (i)", id="navigate-requests", disabled=not self.plan.entries
                    )
                yield Button("Navigate", variant="primary", id="navigate-go")
                yield Button("Cancel", id="navigate-cancel")

    def on_mount(self) -> None:
        """Focus the options, first one highlighted; keys answer once it is drawn. A gate
        that changed while its widgets were being built (``gate_changed``) is shown now."""
        if self.append_refusal != self._shown_refusal:
            self._show_gate()
        else:
            self._focus_first()
        self.call_after_refresh(self._drawn)

    def _focus_first(self) -> None:
        """The options, the chosen one highlighted (the first when none was, or it can no
        longer be had); read-only (no option): Cancel, so a stray ``enter`` only closes the
        dialog. Custom instructions being typed when the file went read-only come back with
        their option and the focus when it is writable again (it went back to "No summary")."""
        if self.read_only:
            self.query_one("#navigate-cancel", Button).focus()
            return
        options = self.query_one("#navigate-options", OptionList)
        chosen = self.mode if self.mode is SummaryMode.NONE or self.can_summarize else None
        index = [SummaryMode.NONE, SummaryMode.SUMMARIZE, SummaryMode.CUSTOM].index(
            chosen or SummaryMode.NONE
        )
        options.highlighted = index
        if chosen is SummaryMode.CUSTOM:
            self.query_one("#navigate-custom").add_class("shown")
            self.call_after_refresh(focus_input, self.query_one("#navigate-instructions", TextArea))
            return
        options.focus()

    def _drawn(self) -> None:
        """On screen: keys typed from now on answer it (``TintedModalScreen.asked_at``)."""
        self.asked_at = get_time()

    def _facts(self) -> Text:
        """Target, new leaf, common ancestor, what would be summarized."""
        plan = self.plan
        # One line per fact (CSS: no wrap, ellipsis), so the labels stay aligned.
        facts = Text()
        rules = getattr(plan, "rules", "pi")
        rows: list[tuple[str, Text]] = [
            ("Target", describe_node(self.session, plan.target, rules=rules)),
            ("New leaf", describe_node(self.session, plan.new_leaf, rules=rules)),
            ("Common ancestor", describe_node(self.session, plan.common_ancestor, rules=rules)),
            ("Leaving", describe_node(self.session, plan.old_leaf, rules=rules)),
        ]
        for label, value in rows:
            facts.append(f"{label:>16}  ", style="dim")
            facts.append_text(value)
            facts.append("\n")
        entries = len(plan.entries)
        selected = len(getattr(plan, "selected", plan.entries))
        facts.append(f"{'Branch summary':>16}  ", style="dim")
        if entries == 0:
            facts.append("nothing to summarize: the target is on the current path", style="italic")
        else:
            facts.append(f"{selected:,}", style="bold")
            facts.append(f" of {entries:,} entries left behind · ")
            facts.append(format_tokens(int(plan.total_tokens)) or "0", style="bold")
            facts.append(" tokens to summarize")
        return facts

    def _read_only_text(self) -> Text:
        """Why no move is offered (wrapped whole: the reason is the one thing to read)."""
        if self.append_refusal is None:
            return Text("")
        text = Text("Read-only: no move can be made ", style="bold")
        text.append("(a move appends an entry, with a summary or without): ")
        text.append(sanitize(self.append_refusal, single_line=True, max_len=400))
        return text

    def gate_changed(self, append_refusal: str | None) -> None:
        """The write gate changed while the dialog is open (an agent's half-written record was
        finished, or the file went away): the facts and the summary options follow it. Told
        before its widgets exist (the app tells every screen on its stack, this one pushed in
        the same tick), it only keeps the gate: ``compose_dialog`` or ``on_mount`` shows it."""
        if append_refusal == self.append_refusal:
            return
        self.append_refusal = append_refusal
        try:
            self._show_gate()
        except NoMatches:
            return

    def _show_gate(self) -> None:
        """The facts and the summary options say what the write gate says now."""
        options = self.query_one("#navigate-options", OptionList)
        self.query_one("#navigate-read-only", Static).update(self._read_only_text())
        for mode in SummaryMode:
            if self.can_summarize if mode is not SummaryMode.NONE else not self.read_only:
                options.enable_option(mode)
            else:
                options.disable_option(mode)
        was_read_only = self.has_class("read-only")
        self.set_class(self.read_only, "read-only")
        if was_read_only != self.read_only or self.focused is None:
            self._focus_first()
        self._shown_refusal = self.append_refusal

    @on(OptionList.OptionHighlighted, "#navigate-options")
    def _option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        self.mode = SummaryMode(str(event.option.id))
        self.query_one("#navigate-custom").set_class(self.mode is SummaryMode.CUSTOM, "shown")

    @on(OptionList.OptionSelected, "#navigate-options")
    def _option_selected(self, event: OptionList.OptionSelected) -> None:
        self.action_choose(str(event.option.id))

    @on(Button.Pressed, "#navigate-go")
    def _go_pressed(self) -> None:
        self.action_navigate()

    @on(Button.Pressed, "#navigate-requests")
    def _requests_pressed(self) -> None:
        self.action_inspect_requests()

    @on(Button.Pressed, "#navigate-cancel")
    def _cancel_pressed(self) -> None:
        self.action_cancel()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Digit and letter shortcuts only while the options have focus (elsewhere they are
        typed; read-only, where no input is shown, wherever the focus is); the inspector only
        when there is one and something to summarize."""
        if action == "inspect_requests" and (self.inspect is None or not self.plan.entries):
            return False
        if action in ("choose", "inspect_requests"):
            return self.read_only or self.query_one("#navigate-options", OptionList).has_focus
        return True

    def input_opener(self, key: str) -> str | None:
        """The action of ``key`` when it opens an input: the custom option (``3``, or the keys
        the user's keymap gives it) while the options have the focus. The app runs it as the
        key arrives and holds the keys typed after it for the instructions area."""
        keys = getattr(self.app, "_keymap", {}).get("navigate.custom", "3").split(",")
        if key in keys and self.query_one("#navigate-options", OptionList).has_focus:
            return "choose('custom')"
        return None

    def action_choose(self, mode: str) -> None:
        """Pick an option: the first two navigate now; custom opens the instructions area."""
        chosen = SummaryMode(mode)
        if self.read_only:
            self._refuse_read_only()
            return
        if chosen is not SummaryMode.NONE and not self.can_summarize:
            self.notify("Nothing can be summarized here.", severity="warning")
            return
        options = self.query_one("#navigate-options", OptionList)
        index = [SummaryMode.NONE, SummaryMode.SUMMARIZE, SummaryMode.CUSTOM].index(chosen)
        options.highlighted = index
        self.mode = chosen
        if chosen is SummaryMode.CUSTOM:
            hold_keys = getattr(self.app, "hold_keys", None)
            if hold_keys is not None:
                hold_keys()  # the keys typed after 3 are the instructions
            self.query_one("#navigate-custom").add_class("shown")
            # Once shown: a hidden area takes no focus (the keys would stay on the options).
            self.call_after_refresh(focus_input, self.query_one("#navigate-instructions", TextArea))
            return
        self.action_navigate()

    def _instructions(self) -> tuple[str | None, bool]:
        """The custom instructions typed (None outside the custom option or when empty) and
        whether they replace the default prompt."""
        if self.mode is not SummaryMode.CUSTOM:
            return None, False
        instructions = self.query_one("#navigate-instructions", TextArea).text.strip() or None
        if instructions is None:
            return None, False
        return instructions, self.query_one("#navigate-replace", RadioButton).value

    def action_inspect_requests(self) -> None:
        """Show the exact request the branch summary would send (nothing is sent)."""
        if self.inspect is None or not self.plan.entries:
            return
        self.inspect(*self._instructions())

    def _refuse_read_only(self) -> None:
        self.notify(
            sanitize(self.append_refusal or "", max_len=300),
            title="read-only: the leaf cannot be moved",
            severity="warning",
        )

    def action_navigate(self) -> None:
        """Dismiss with the highlighted option (and the custom instructions, if any)."""
        if self.read_only:
            self._refuse_read_only()
            return
        mode = self.mode
        if mode is not SummaryMode.NONE and not self.can_summarize:
            mode = SummaryMode.NONE
        instructions, replace_prompt = (
            self._instructions() if mode is SummaryMode.CUSTOM else (None, False)
        )
        if mode is SummaryMode.CUSTOM and instructions is None:
            mode = SummaryMode.SUMMARIZE  # no instructions typed: a plain summary it is
        self.dismiss(
            NavigationChoice(
                target=self.plan.target,
                new_leaf=self.plan.new_leaf,
                mode=mode,
                instructions=instructions,
                replace_prompt=replace_prompt,
            )
        )

    def action_cancel(self) -> None:
        """Close without navigating."""
        self.dismiss(None)


def dialog_widget_classes() -> tuple[type[Any], ...]:
    """The classes of what the navigation dialog mounts (``compose_dialog`` and the footer):
    their CSS can be parsed before its first opening (``styled.add_default_css``)."""
    from tui_compactor.ui.widgets.footer import StateFooter

    return (
        NavigateDialog,
        Vertical,
        Horizontal,
        Static,
        Label,
        OptionList,
        TextArea,
        RadioSet,
        MarkedRadioButton,
        Button,
        StateFooter,
    )
