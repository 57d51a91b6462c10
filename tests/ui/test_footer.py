"""The footer draws, lights and presses its keys exactly as Textual's footer does, as one widget.

Each check runs the same little app twice, once with Textual's ``Footer`` and once with
``StateFooter`` (its keys asked of ``footer_actions`` in the bindings' order), and compares the
footer line cell by cell: character, colours, bold and dim.
"""

from __future__ import annotations

from typing import Any

import pytest
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.widget import Widget
from textual.widgets import Footer, Static

from tui_compactor.ui.widgets.footer import StateFooter

pytestmark = pytest.mark.asyncio

SIZE = (100, 10)


class KeysApp(App[None]):
    """Three keys (one disabled) and the palette key in the footer."""

    BINDINGS = [
        Binding("c", "plan", "Plan"),
        Binding("r", "run", "Compact"),
        Binding("x", "locked", "Locked"),
        Binding("q", "quit", "Quit", id="quit"),  # wins over Textual's ctrl+q, as in the app
    ]

    def __init__(self, footer: Widget) -> None:
        super().__init__()
        self.footer = footer
        self.pressed: list[str] = []

    def compose(self) -> ComposeResult:
        yield Static("body")
        yield self.footer

    def footer_actions(self) -> list[str]:
        return ["plan", "run", "locked", "quit"]

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return None if action == "locked" else True  # None: shown, disabled

    def action_plan(self) -> None:
        self.pressed.append("plan")

    def action_run(self) -> None:
        self.pressed.append("run")


def footer_cells(app: App[Any]) -> list[tuple[str, object, object, bool, bool]]:
    """The bottom line, cell by cell (a blank's foreground does not show: not compared)."""
    cells = []
    for segment in app.screen._compositor.render_strips()[-1]:
        style = segment.style
        assert style is not None
        for char in segment.text:
            color = None if char == " " else style.color
            cells.append((char, color, style.bgcolor, bool(style.bold), bool(style.dim)))
    return cells


async def drawn(footer: Widget, hover_x: int | None = None) -> list[Any]:
    app = KeysApp(footer)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        if hover_x is not None:
            await pilot.hover(offset=(hover_x, SIZE[1] - 1))
            await pilot.pause()
        return footer_cells(app)


async def test_the_keys_look_as_in_textuals_footer() -> None:
    ours = await drawn(StateFooter())
    assert "".join(cell[0] for cell in ours).startswith(" c Plan  r Compact  x Locked  q Quit")
    assert ours == await drawn(Footer())


async def test_a_hovered_key_is_lit_as_in_textuals_footer() -> None:
    for x in (4, 12, SIZE[0] - 5):  # Plan, Compact, the palette key
        ours = await drawn(StateFooter(), hover_x=x)
        assert ours == await drawn(Footer(), hover_x=x), x
        assert ours != await drawn(StateFooter()), x


async def test_a_click_presses_the_key_and_a_disabled_key_does_nothing() -> None:
    app = KeysApp(StateFooter())
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        footer = app.query_one(StateFooter)
        items = {item.description: item for item in footer.items}
        assert not items["Locked"].enabled and items["Plan"].enabled
        await pilot.click(StateFooter, offset=(items["Compact"].start + 1, 0))
        await pilot.click(StateFooter, offset=(items["Plan"].end - 1, 0))
        await pilot.click(StateFooter, offset=(items["Locked"].start + 1, 0))
        await pilot.pause()
        assert app.pressed == ["run", "plan"]


class WideKeysApp(KeysApp):
    """The same keys described in Chinese: each character takes two columns."""

    BINDINGS = [
        Binding("c", "plan", "计划"),
        Binding("r", "run", "压缩会话"),
        Binding("x", "locked", "锁定"),
        Binding("q", "quit", "退出", id="quit"),
    ]


@pytest.mark.parametrize("width", range(12, 50, 3))
async def test_keys_with_wide_descriptions_are_dropped_rather_than_cut_at_the_edge(
    width: int,
) -> None:
    """Which keys fit is measured in cells, as they are drawn: a key that does not fit whole is
    left out, never cut at the right edge, and the palette key shows only with room for it."""
    app = WideKeysApp(StateFooter())
    async with app.run_test(size=(width, 10)) as pilot:
        await pilot.pause()
        items = app.query_one(StateFooter).items
        assert items and all(item.end <= width for item in items), (width, items)
        line = "".join(cell[0] for cell in footer_cells(app))
        for item in items:
            assert item.description in line, (width, line)
        assert items[0].description == "计划"
