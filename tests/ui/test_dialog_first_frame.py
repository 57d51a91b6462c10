"""A dialog's first frame: its widgets are styled once as it first shows (its size classes set
when it is made, no restyle at its first showing), and they look exactly as a full restyle
would make them look, at 80x24, 120x36 and 200x60. Keys pressed while the dialog opens act on
it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
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


NAVIGATE_IMPORT = r"""
import asyncio, sys, threading
from pathlib import Path
from tests.ui.app_helpers import OTHER_BRANCH_TIP, make_app, settle
from tui_compactor.ui.widgets.tree import SessionTree

NAME = "tui_compactor.ui.screens.navigate"
importers: list[str] = []


class Probe:
    def find_spec(self, name, path=None, target=None):
        if name == NAME:
            importers.append(threading.current_thread().name)
        return None


async def main() -> None:
    assert NAME not in sys.modules
    sys.meta_path.insert(0, Probe())
    app = make_app(Path(sys.argv[1]))
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        assert app.query_one(SessionTree).move_to_entry(OTHER_BRANCH_TIP)
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        print("DIALOG", type(app.screen).__name__)
    print("IMPORTED IN", importers)

asyncio.run(main())
"""


def test_the_navigation_dialog_module_is_imported_off_the_ui_thread() -> None:
    """The dialog's module and the Textual widgets it uses are imported by the worker that
    plans the move, not by the handler that opens the dialog (a fresh process)."""
    result = subprocess.run(
        [sys.executable, "-c", NAVIGATE_IMPORT, str(TREE_BRANCHES)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert "DIALOG NavigateDialog" in result.stdout, result.stderr[-2000:]
    line = next(x for x in result.stdout.splitlines() if x.startswith("IMPORTED IN "))
    importers = line.removeprefix("IMPORTED IN ")
    assert importers != "[]" and "MainThread" not in importers, importers


@pytest.mark.asyncio
async def test_the_navigation_dialog_css_is_parsed_before_it_first_opens(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once the first screen is shown, the app parses the CSS of the navigation dialog's
    widgets while idle: the dialog's first opening parses none of it on the UI thread (it was
    parsed again at each of its mount steps), and it looks as a full restyle makes it look."""
    import asyncio

    from textual.css.stylesheet import Stylesheet

    from tui_compactor.ui.screens.navigate import dialog_widget_classes

    app = make_app(copy_fixture(TREE_BRANCHES, tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        wanted = {
            f"{base.__name__}.DEFAULT_CSS"
            for cls in dialog_widget_classes()
            for base in cls._css_bases(cls)
            if base.__dict__.get("DEFAULT_CSS")
        }

        def styled_ahead() -> bool:
            return wanted <= {class_var for _path, class_var in app.stylesheet.source}

        for _ in range(200):
            if styled_ahead():
                break
            await asyncio.sleep(0.05)
        assert styled_ahead(), sorted(
            wanted - {class_var for _path, class_var in app.stylesheet.source}
        )
        sources = len(app.stylesheet.source)
        parses: list[Stylesheet] = []
        parse = Stylesheet.parse

        def counted(stylesheet: Stylesheet) -> None:
            parses.append(stylesheet)
            parse(stylesheet)

        monkeypatch.setattr(Stylesheet, "parse", counted)
        await _open_navigation(pilot)
        dialog = app.screen
        assert not parses, "the dialog's first opening parsed CSS"
        assert len(app.stylesheet.source) == sources
        monkeypatch.undo()
        shown = _styles_of(dialog)
        app.stylesheet.update(dialog)
        await pilot.pause()
        assert _styles_of(dialog) == shown


@pytest.mark.asyncio
async def test_a_dialog_opening_lays_out_no_screen_beneath_it_and_draws_it_dimmed_once(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The dialog's first ``Resize`` (the size did not change) does not lay out the main screen
    again: its scrollbars stay as they were, so the dimmed picture of it is drawn once. A real
    resize while the dialog is open still lays the main screen out at the new size."""
    from textual.screen import Screen

    from tui_compactor.ui.screens import tinted

    app = make_app(copy_fixture(TREE_BRANCHES, tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        main = app.screen
        laid_out: list[Screen[Any]] = []
        refresh_layout = Screen._refresh_layout

        def counted(screen: Screen[Any], *args: Any, **kwargs: Any) -> None:
            laid_out.append(screen)
            refresh_layout(screen, *args, **kwargs)

        drawn: list[int] = []
        rich_console = tinted._TintedBackground.__rich_console__

        def drawing(background: Any, console: Any, options: Any) -> Any:
            drawn.append(1)
            return rich_console(background, console, options)

        monkeypatch.setattr(Screen, "_refresh_layout", counted)
        monkeypatch.setattr(tinted._TintedBackground, "__rich_console__", drawing)
        await _open_navigation(pilot)
        await settle(pilot)
        assert main not in laid_out
        assert len(drawn) == 1
        await pilot.resize_terminal(100, 30)
        await settle(pilot)
        assert main in laid_out
        assert main.size == (100, 30)
        assert len(drawn) > 1  # drawn again at the new size
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is main
        assert main.size == (100, 30)
