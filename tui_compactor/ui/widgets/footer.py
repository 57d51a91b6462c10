"""The footer: the few keys that matter in the current state, in a fixed order.

Textual's ``Footer`` lists every shown binding of the focused chain in chain order, so at 80
columns the keys that matter most (``r Compact`` while browsing, ``a Accept`` while reviewing)
fall off the right edge. ``StateFooter`` asks the app which actions to show (``footer_actions``)
and shows exactly those, in that order, when their bindings are active; everything else is in
help (``?``) and the palette (``ctrl+p``).

It draws the keys as Textual's footer does (the same theme colours, padding, the palette key
at the right edge behind a thin rule; a hovered key lit, a disabled one dimmed, a click presses
the key) but as one line of one widget: Textual's footer is a widget per key, each styled, laid
out and rebuilt whenever the bindings change, a tenth of the first screen's start-up.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding
from textual.strip import Strip
from textual.widget import Widget

from tui_compactor.ui.bindings import takes_text

__all__ = ["FooterItem", "StateFooter"]


@dataclass(frozen=True, slots=True)
class FooterItem:
    """One key as the footer shows it: columns ``start``..``end`` of the line."""

    key: str
    """The key pressed when the item is clicked."""
    key_display: str
    description: str
    enabled: bool
    tooltip: str
    start: int
    end: int


class StateFooter(Widget, can_focus=False):
    """A footer whose keys and their order come from ``app.footer_actions()``."""

    ALLOW_SELECT = False
    COMPONENT_CLASSES = {
        "footer-key--key",
        "footer-key--description",
        "footer-key--hover",
        "footer-key--separator",
    }
    DEFAULT_CSS = """
    StateFooter {
        dock: bottom;
        height: 1;
        text-wrap: nowrap;
        color: $footer-foreground;
        background: $footer-background;
        & > .footer-key--key {
            color: $footer-key-foreground;
            background: $footer-key-background;
            text-style: bold;
        }
        & > .footer-key--description {
            color: $footer-description-foreground;
            background: $footer-description-background;
        }
        & > .footer-key--hover {
            color: $footer-key-foreground;
            background: $block-hover-background;
        }
        & > .footer-key--separator {
            color: $foreground 20%;
        }
    }
    """

    _shown: tuple[object, ...] | None = None
    """What the footer shows now (keys, their state, the width): a repaint that would show
    the same is skipped (bindings change on every focus move and refresh)."""
    _chosen: tuple[list[tuple[Binding, bool, str]], Any] = ([], None)
    _hover: int | None = None
    """The item under the mouse."""

    def on_mount(self) -> None:
        """Follow the screen's bindings."""
        self.screen.bindings_updated_signal.subscribe(self, self._bindings_changed)

    def on_unmount(self) -> None:
        self.screen.bindings_updated_signal.unsubscribe(self)

    def on_resize(self) -> None:
        """Which keys fit depends on the width: choose again."""
        self._update()

    def _bindings_changed(self, screen: Any) -> None:
        if screen.app.app_focus and self.is_attached and screen is self.screen:
            self._update()

    def _update(self) -> None:
        """Choose the keys; repaint only when what they show changed."""
        chosen = self._choose()
        signature = self._signature(*chosen)
        if signature != self._shown:
            self._shown = signature
            self._chosen = chosen
            self.refresh()

    def _cells(self, binding: Binding) -> int:
        """Columns one footer key takes: key, space, description, padding (measured in cells,
        as ``_layout`` draws it: a wide character takes two)."""
        return cell_len(self.app.get_key_display(binding)) + cell_len(binding.description) + 3

    def _signature(
        self, chosen: list[tuple[Binding, bool, str]], palette: Any
    ) -> tuple[object, ...]:
        """What the keys show (compared before repainting them)."""
        keys = tuple(
            (binding.key, binding.action, binding.description, enabled)
            for binding, enabled, _tooltip in chosen
        )
        return (self.app.size.width, keys, palette is not None)

    def _wanted(self) -> list[str] | None:
        """The actions to show, most important first: the screen's ``footer_actions``, else
        the app's on a screen that is not a dialog (the main screen); None on a dialog without
        its own choice: its shown keys, in the order Textual's footer lists them."""
        screen = self.screen
        choose = getattr(screen, "footer_actions", None)
        if choose is None and not screen.is_modal:
            choose = getattr(self.app, "footer_actions", None)
        return None if choose is None else list(choose())

    def _choose(self) -> tuple[list[tuple[Binding, bool, str]], Any]:
        """The keys to show, most important first, that fit; and the palette key if it fits.

        The keys are those of the screen this footer is on (a dialog's own under a dialog:
        Textual's binding chain stops at a modal screen), less those the focused widget takes
        as text (``c`` typed into an input is a ``c``, not the plan)."""
        wanted = self._wanted()
        focused = self.screen.focused
        by_action: dict[str, tuple[Binding, bool, str]] = {}
        for node, binding, enabled, tooltip in self.screen.active_bindings.values():
            if focused is not None and node is not focused and takes_text(focused, binding.key):
                continue
            known = by_action.get(binding.action)
            # The project's own binding (it has an id) wins over Textual's (``ctrl+q`` quit).
            if known is None or (binding.id and not known[0].id):
                by_action[binding.action] = (binding, enabled, tooltip)
        if wanted is None:
            chosen = [entry for entry in by_action.values() if entry[0].show]
        else:
            chosen = [by_action[action] for action in wanted if action in by_action]
        palette = None
        if self.app.ENABLE_COMMAND_PALETTE:
            palette = self.screen.active_bindings.get(self.app.COMMAND_PALETTE_BINDING)
        # Keys are listed most important first: drop from the end until they fit, and drop
        # the palette key (it is in help) before any of them.
        room = self.app.size.width
        while chosen and sum(self._cells(binding) for binding, _e, _t in chosen) > room:
            chosen.pop()
        if palette is not None and (
            sum(self._cells(binding) for binding, _e, _t in chosen) + self._cells(palette[1]) > room
        ):
            palette = None
        return chosen, palette

    @property
    def items(self) -> tuple[FooterItem, ...]:
        """The keys shown, left to right (the palette key last)."""
        return self._layout()[1]

    def _layout(self) -> tuple[list[tuple[str, str, int | None]], tuple[FooterItem, ...]]:
        """The line as pieces (text, role, the item it belongs to) and the items it shows.

        Roles: ``key`` and ``description`` of an item, ``rule`` (before the palette key),
        ``pad`` (an item's padding), ``gap`` (the footer's background). Textual's footer pads a
        key (`` c Plan ``); its palette key at the right edge is compact (``^p palette``).
        """
        pieces: list[tuple[str, str, int | None]] = []
        items: list[FooterItem] = []
        column = 0

        def put(text: str, role: str, number: int | None) -> None:
            nonlocal column
            pieces.append((text, role, number))
            column += cell_len(text)

        def add(binding: Binding, enabled: bool, tooltip: str, *, compact: bool = False) -> None:
            number, start = len(items), column
            shown = self.app.get_key_display(binding)
            if not binding.description:
                put(shown, "key", number)
            elif compact:
                put(shown, "key", number)
                put(f" {binding.description}", "description", number)
            else:
                put(f" {shown} ", "key", number)
                put(f"{binding.description} ", "description", number)
            items.append(
                FooterItem(binding.key, shown, binding.description, enabled, tooltip, start, column)
            )

        chosen, palette = self._chosen
        for binding, enabled, tooltip in chosen:
            add(binding, enabled, tooltip)
        if palette is not None:
            _node, binding, enabled, _tooltip = palette
            shown = self.app.get_key_display(binding)
            width = 1 + cell_len(shown) + 1 + cell_len(binding.description) + 1
            put(" " * max(0, self.size.width - column - width), "gap", None)
            put("▏", "rule", len(items))
            add(binding, enabled, binding.tooltip or binding.description, compact=True)
            put(" ", "pad", len(items) - 1)
        return pieces, tuple(items)

    def render_line(self, y: int) -> Strip:
        """The keys from the left, the palette key at the right edge (drawn as segments: a
        blank between keys carries only the background, as Textual's footer draws it)."""
        pieces, items = self._layout()
        base = self.rich_style  # resolving it walks the ancestors: once per paint
        blank = Style(bgcolor=base.bgcolor)
        partial = {
            role: self.get_component_rich_style(f"footer-key--{role}", partial=True)
            for role in ("key", "description")
        }
        segments: list[Segment] = []
        for text, role, number in pieces:
            if number is None:
                segments.append(Segment(text, blank))
                continue
            item = (
                self.get_component_rich_style("footer-key--hover")
                if number == self._hover
                else base
            )
            if not items[number].enabled:
                item += Style(dim=True)
            if role == "rule":
                rule = self.get_component_rich_style("footer-key--separator")
                segments.append(Segment(text, Style(color=rule.color, bgcolor=item.bgcolor)))
            elif role == "pad":
                segments.append(Segment(text, Style(bgcolor=item.bgcolor)))
            else:
                segments.append(Segment(text, item + partial[role]))
        return Strip(segments).crop_extend(0, self.size.width, blank)

    def _item_at(self, x: int) -> int | None:
        for number, item in enumerate(self.items):
            if item.start <= x < item.end:
                return number
        return None

    def on_mouse_move(self, event: events.MouseMove) -> None:
        """Light the key under the mouse (and show its tooltip)."""
        hover = self._item_at(event.x)
        if hover != self._hover:
            self._hover = hover
            self.tooltip = self.items[hover].tooltip or None if hover is not None else None
            self.refresh()

    def on_leave(self) -> None:
        if self._hover is not None:
            self._hover = None
            self.tooltip = None
            self.refresh()

    def on_mouse_down(self, event: events.MouseDown) -> None:
        """A click on a key presses it (a disabled key rings the bell)."""
        number = self._item_at(event.x)
        if number is None:
            return
        item = self.items[number]
        if item.enabled:
            self.app.simulate_key(item.key)
        else:
            self.app.bell()
