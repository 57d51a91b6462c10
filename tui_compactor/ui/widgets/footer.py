"""The footer: the few keys that matter in the current state, in a fixed order.

Textual's ``Footer`` lists every shown binding of the focused chain in chain order, so at 80
columns the keys that matter most (``r Compact`` while browsing, ``a Accept`` while reviewing)
fall off the right edge. ``StateFooter`` asks the app which actions to show (``footer_actions``)
and shows exactly those, in that order, when their bindings are active; everything else is in
help (``?``) and the palette (``ctrl+p``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

if TYPE_CHECKING:
    from textual.screen import Screen

__all__ = ["StateFooter"]


class StateFooter(Footer):
    """A footer whose keys and their order come from ``app.footer_actions()``."""

    def _cells(self, binding: Binding) -> int:
        """Columns one footer key takes: key, space, description, padding."""
        return len(self.app.get_key_display(binding)) + len(binding.description) + 3

    def on_resize(self) -> None:
        """Which keys fit depends on the width: choose again."""
        self.call_after_refresh(self.recompose)

    def _choose(self) -> tuple[list[tuple[Binding, bool, str]], tuple[Binding, bool, str] | None]:
        """The keys to show (in the app's order, as many as fit) and the palette key, if any."""
        wanted = getattr(self.app, "footer_actions", None)
        assert wanted is not None
        by_action: dict[str, tuple[Binding, bool, str]] = {}
        for _node, binding, enabled, tooltip in self.screen.active_bindings.values():
            known = by_action.get(binding.action)
            # The project's own binding (it has an id) wins over Textual's (``ctrl+q`` quit).
            if known is None or (binding.id and not known[0].id):
                by_action[binding.action] = (binding, enabled, tooltip)
        chosen = [by_action[action] for action in wanted() if action in by_action]
        palette = None
        if self.show_command_palette and self.app.ENABLE_COMMAND_PALETTE:
            found = self.screen.active_bindings.get(self.app.COMMAND_PALETTE_BINDING)
            if found is not None:
                palette = (found[1], found[2], found[3])
        # Keys are listed most important first: drop from the end until they fit, and drop
        # the palette key (it is in help) before any of them.
        room = self.app.size.width
        while chosen and sum(self._cells(binding) for binding, _e, _t in chosen) > room:
            chosen.pop()
        if palette is not None and (
            sum(self._cells(binding) for binding, _e, _t in chosen) + self._cells(palette[0]) > room
        ):
            palette = None
        return chosen, palette

    def _shown_now(self) -> tuple[object, ...]:
        """What the footer would show now (keys, labels, enabled, tooltips), comparable."""
        return self._summary(*self._choose())

    @staticmethod
    def _summary(chosen: list[tuple[Binding, bool, str]],
                 palette: tuple[Binding, bool, str] | None) -> tuple[object, ...]:
        return tuple((binding.key, binding.action, binding.description, enabled, tooltip)
                     for binding, enabled, tooltip in [*chosen, *([palette] if palette else [])])

    def bindings_changed(self, screen: Screen) -> None:  # type: ignore[override]
        """Recompose only when the keys shown change: every focus change and every state
        change of a running compaction announces new bindings, and a recompose re-mounts every
        key and re-lays out the screen."""
        if (self._bindings_ready and getattr(self.app, "footer_actions", None) is not None
                and self.is_attached and screen is self.screen
                and self._shown == self._shown_now()):
            return
        super().bindings_changed(screen)

    _shown: tuple[object, ...] | None = None
    """What the last compose showed (``_shown_now``)."""

    def compose(self) -> ComposeResult:
        """One key per wanted action, in the app's order; then the palette key if it fits."""
        wanted = getattr(self.app, "footer_actions", None)
        if not self._bindings_ready or wanted is None:
            self._shown = None
            yield from super().compose()
            return
        chosen, palette = self._choose()
        self._shown = self._summary(chosen, palette)
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
            binding, enabled, tooltip = palette
            yield FooterKey(
                binding.key,
                self.app.get_key_display(binding),
                binding.description,
                binding.action,
                classes="-command-palette",
                disabled=not enabled,
                tooltip=binding.tooltip or binding.description,
            )
