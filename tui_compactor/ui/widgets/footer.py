"""The footer: the few keys that matter in the current state, in a fixed order.

Textual's ``Footer`` lists every shown binding of the focused chain in chain order, so at 80
columns the keys that matter most (``r Compact`` while browsing, ``a Accept`` while reviewing)
fall off the right edge. ``StateFooter`` asks the app which actions to show (``footer_actions``)
and shows exactly those, in that order, when their bindings are active; everything else is in
help (``?``) and the palette (``ctrl+p``).
"""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

__all__ = ["StateFooter"]


class StateFooter(Footer):
    """A footer whose keys and their order come from ``app.footer_actions()``."""

    def _cells(self, binding: Binding) -> int:
        """Columns one footer key takes: key, space, description, padding."""
        return len(self.app.get_key_display(binding)) + len(binding.description) + 3

    _shown: tuple[object, ...] | None = None
    """What the footer shows now (keys, their state, the width): a recompose that would show
    the same is skipped (bindings change on every focus move and refresh)."""

    def on_resize(self) -> None:
        """Which keys fit depends on the width: choose again."""
        self.call_after_refresh(self.recompose)

    async def recompose(self) -> None:
        """Rebuild the keys only when what they show changed."""
        if self._bindings_ready and getattr(self.app, "footer_actions", None) is not None:
            if self._signature(*self._choose()) == self._shown and self.children:
                return
        await super().recompose()

    def _signature(
        self, chosen: list[tuple[Binding, bool, str]], palette: Any
    ) -> tuple[object, ...]:
        """What the keys show (compared before rebuilding them)."""
        keys = tuple((binding.key, binding.action, binding.description, enabled)
                     for binding, enabled, _tooltip in chosen)
        return (self.app.size.width, keys, palette is not None)

    def _choose(self) -> tuple[list[tuple[Binding, bool, str]], Any]:
        """The keys to show, most important first, that fit; and the palette key if it fits."""
        wanted = self.app.footer_actions  # type: ignore[attr-defined]
        by_action: dict[str, tuple[Binding, bool, str]] = {}
        for _node, binding, enabled, tooltip in self.screen.active_bindings.values():
            known = by_action.get(binding.action)
            # The project's own binding (it has an id) wins over Textual's (``ctrl+q`` quit).
            if known is None or (binding.id and not known[0].id):
                by_action[binding.action] = (binding, enabled, tooltip)
        chosen = [by_action[action] for action in wanted() if action in by_action]
        palette = None
        if self.show_command_palette and self.app.ENABLE_COMMAND_PALETTE:
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

    def compose(self) -> ComposeResult:
        """One key per wanted action, in the app's order; then the palette key if it fits."""
        wanted = getattr(self.app, "footer_actions", None)
        if not self._bindings_ready or wanted is None:
            self._shown = None
            yield from super().compose()
            return
        chosen, palette = self._choose()
        self._shown = self._signature(chosen, palette)
        self.styles.grid_size_columns = len(chosen)
        for binding, enabled, tooltip in chosen:
            yield FooterKey(
                binding.key,
                self.app.get_key_display(binding),
                binding.description,
                binding.action,
                disabled=not enabled,
                tooltip=tooltip,
            ).data_bind(compact=Footer.compact)
        if palette is not None:
            _node, binding, enabled, tooltip = palette
            yield FooterKey(
                binding.key,
                self.app.get_key_display(binding),
                binding.description,
                binding.action,
                classes="-command-palette",
                disabled=not enabled,
                tooltip=binding.tooltip or binding.description,
            )
