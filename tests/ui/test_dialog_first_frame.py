"""A dialog's first frame: its widgets are styled once as it first shows (its size classes set
when it is made, no restyle at its first showing), and they look exactly as a full restyle
would make them look, at 80x24, 120x36 and 200x60. Keys pressed while the dialog opens act on
it."""

from __future__ import annotations

from typing import Any

import pytest
from textual.dom import DOMNode

from tests.ui.app_helpers import (
    OTHER_BRANCH_TIP,
    SIZE,
    TREE_BRANCHES,
    copy_fixture,
    make_app,
    settle,
)
from tui_compactor.ui.screens.confirm import ConfirmDialog
from tui_compactor.ui.screens.navigate import NavigateDialog
from tui_compactor.ui.widgets.help import HelpScreen
from tui_compactor.ui.widgets.tree import SessionTree

SIZES = [(80, 24), SIZE, (200, 60)]


def _styles_of(screen: Any) -> dict[str, Any]:
    """Every node's resolved rules, component classes' rules and Rich style, by DOM path."""
    found: dict[str, Any] = {}
    for node in screen.walk_children(with_self=True):
        key = "/".join(f"{type(n).__name__}#{n.id}" for n in node.ancestors_with_self)
        components = {name: styles.get_rules() for name, styles in node._component_styles.items()}
        found[key] = (node.styles.base.get_rules(), components, node.rich_style)
    return found


def _count_restyles(monkeypatch: pytest.MonkeyPatch) -> list[DOMNode]:
    """From now on, the node of each whole-subtree restyle (``update_node_styles``)."""
    restyled: list[DOMNode] = []
    update_node_styles = DOMNode.update_node_styles

    def counted(node: DOMNode, animate: bool = True) -> None:
        restyled.append(node)
        update_node_styles(node, animate)

    monkeypatch.setattr(DOMNode, "update_node_styles", counted)
    return restyled


async def _open_navigation(pilot: Any) -> None:
    app = pilot.app
    assert app.query_one(SessionTree).move_to_entry(OTHER_BRANCH_TIP)
    await settle(pilot)
    await pilot.press("enter")
    await settle(pilot)
    assert isinstance(app.screen, NavigateDialog)


@pytest.mark.asyncio
@pytest.mark.parametrize("size", SIZES)
async def test_each_dialog_is_styled_once_as_it_first_shows_as_a_full_restyle_styles_it(
    size: tuple[int, int], tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = make_app(copy_fixture(TREE_BRANCHES, tmp_path))
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        openers = {
            "navigation": _open_navigation,
            "help": lambda pilot: pilot.press("question_mark"),
            "confirm": lambda pilot: app.push_screen(ConfirmDialog("Write it?")),
        }
        for name, open_dialog in openers.items():
            restyled = _count_restyles(monkeypatch)
            await open_dialog(pilot)
            await settle(pilot)
            dialog = app.screen
            assert isinstance(dialog, (NavigateDialog, HelpScreen, ConfirmDialog)), name
            assert dialog not in restyled, f"{name}: the whole dialog was styled again"
            assert dialog.has_class("-wide") == (size[0] >= 160), name
            assert dialog.has_class("-short") == (size[1] < 30), name
            shown = _styles_of(dialog)
            app.stylesheet.update(dialog)
            await pilot.pause()
            assert _styles_of(dialog) == shown, f"{name}: a full restyle changes it"
            monkeypatch.undo()
            await pilot.press("escape")
            await settle(pilot)
            assert len(app.screen_stack) == 1, name
