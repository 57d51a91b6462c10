"""The navigation dialog, driven by keys only, on a real session and a real engine plan."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.app import App, ComposeResult
from textual.widgets import OptionList, Static, TextArea

from tui_compactor.engine.branch import plan_navigation
from tui_compactor.engine.tokens import get_counter
from tui_compactor.session.reader import load_session
from tui_compactor.ui.screens.navigate import NavigateDialog, NavigationChoice, SummaryMode

SESSION = (
    Path(__file__).resolve().parents[1]
    / "fixtures"
    / "oracle"
    / "sessions"
    / ("tree-branches.jsonl")
)


class DialogHost(App[None]):
    """A bare app that opens the dialog and records the result."""

    def __init__(self, target: int, **dialog_options: object) -> None:
        super().__init__()
        self.session = load_session(SESSION)
        self.plan = plan_navigation(self.session, self.session.leaf, target, get_counter("pi"))
        self.dialog_options = dialog_options
        self.results: list[NavigationChoice | None] = []

    def compose(self) -> ComposeResult:
        yield Static("tree")

    def on_mount(self) -> None:
        dialog = NavigateDialog(self.plan, self.session, **self.dialog_options)  # type: ignore[arg-type]
        self.push_screen(dialog, self.results.append)


def _facts(app: DialogHost) -> str:
    return str(app.screen.query_one("#navigate-facts", Static).render())


@pytest.mark.asyncio
async def test_dialog_explains_the_move_from_the_plan() -> None:
    app = DialogHost(target=25, summarizer_label="offline")
    async with app.run_test(size=(100, 30)):
        facts = _facts(app)
        # Target 25 is an assistant entry: it becomes the leaf; ancestor 15; leaving leaf 42.
        assert "#25 assistant Committed as 3f2c1ab." in facts
        assert "#15 assistant Fixed: the window now starts" in facts
        assert "#42 assistant Added a Fixed entry" in facts
        plan = app.plan
        assert f"{len(plan.selected)} of {len(plan.entries)} entries left behind" in facts
        assert f"{plan.total_tokens} tokens to summarize" in facts
        assert "offline" in str(app.screen.query_one(OptionList).get_option_at_index(1).prompt)


@pytest.mark.asyncio
async def test_enter_on_the_first_option_moves_without_summary() -> None:
    app = DialogHost(target=25)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("enter")
        await pilot.pause()
    assert app.results == [NavigationChoice(target=25, new_leaf=25, mode=SummaryMode.NONE)]


@pytest.mark.asyncio
async def test_arrow_then_enter_summarizes() -> None:
    app = DialogHost(target=33)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("down", "enter")
        await pilot.pause()
    (choice,) = app.results
    assert choice is not None and choice.summarize and choice.mode is SummaryMode.SUMMARIZE
    assert choice.target == 33 and choice.instructions is None


@pytest.mark.asyncio
async def test_custom_instructions_replace_the_prompt_keyboard_only() -> None:
    app = DialogHost(target=33)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("3")
        area = app.screen.query_one(TextArea)
        assert area.has_focus and app.screen.query_one("#navigate-custom").display
        await pilot.press(*"keep [b]x[/b]")
        await pilot.press("enter")  # a newline inside the instructions, not a submit
        await pilot.press(*"files")
        assert app.results == []
        # tab to the prompt mode, choose "replace", tab to Navigate, press it.
        await pilot.press("tab", "right", "enter", "tab", "enter")
        await pilot.pause()
    (choice,) = app.results
    assert choice == NavigationChoice(
        target=33,
        new_leaf=33,
        mode=SummaryMode.CUSTOM,
        instructions="keep [b]x[/b]\nfiles",
        replace_prompt=True,
    )


@pytest.mark.asyncio
async def test_custom_without_text_is_a_plain_summary_and_escape_cancels() -> None:
    app = DialogHost(target=33)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("down", "down", "enter")
        assert app.screen.query_one(TextArea).has_focus
        await pilot.press("tab", "tab", "enter")
        await pilot.pause()
    assert app.results[0] is not None and app.results[0].mode is SummaryMode.SUMMARIZE
    app = DialogHost(target=33)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("escape")
        await pilot.pause()
    assert app.results == [None]


@pytest.mark.asyncio
async def test_read_only_file_offers_no_move_and_says_why() -> None:
    """A move appends an entry, with a summary or without: on a file that takes no appends the
    dialog offers no option and no Navigate button (it offered "No summary", which the app
    then refused), says why in full (the terminal's escapes removed), and its keys only say
    so; ``enter`` on the focused Cancel closes it, nothing chosen."""
    from textual.widgets import Button

    app = DialogHost(target=33, append_refusal="pre-v3 file \x1b]0;x\x07(v1)", inspect=print)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        dialog = app.screen
        why = str(dialog.query_one("#navigate-read-only", Static).render())
        assert why.startswith("Read-only: no move can be made") and why.endswith("file (v1)")
        options = dialog.query_one(OptionList)
        assert not options.display and not dialog.query_one("#navigate-go").display
        assert all(options.get_option_at_index(i).disabled for i in range(3))
        assert dialog.query_one("#navigate-requests", Button).display
        assert dialog.query_one("#navigate-cancel", Button).has_focus
        await pilot.press("1", "2", "3")
        await pilot.pause()
        assert app.results == [] and app.screen is dialog
        assert not dialog.query_one(TextArea).has_focus
        await pilot.press("enter")
        await pilot.pause()
    assert app.results == [None]


@pytest.mark.asyncio
async def test_nothing_to_summarize_offers_a_plain_move() -> None:
    app = DialogHost(target=42)  # the current leaf: nothing on the way to summarize
    async with app.run_test(size=(100, 30)) as pilot:
        assert "nothing to summarize" in _facts(app)
        options = app.screen.query_one(OptionList)
        assert options.get_option_at_index(1).disabled
        assert not app.screen.query_one("#navigate-read-only").display
        await pilot.press("2")  # refused: nothing can be summarized
        assert app.results == []
        await pilot.press("enter")
        await pilot.pause()
    assert app.results[0] is not None and app.results[0].mode is SummaryMode.NONE


@pytest.mark.asyncio
async def test_i_asks_for_the_requests_with_the_instructions_typed() -> None:
    """``i`` on the options (or the Requests button) hands the inspector what a run would
    use: no instructions for a plain summary, the typed ones (and replace) for custom."""
    from textual.widgets import Button

    asked: list[tuple[str | None, bool]] = []
    app = DialogHost(target=33, inspect=lambda text, replace: asked.append((text, replace)))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("i")
        assert asked == [(None, False)]
        await pilot.press("3")
        await pilot.press(*"only the tests")
        assert asked == [(None, False)], "i typed into the instructions is text"
        await pilot.press("tab", "down", "space")  # the prompt mode: replace
        app.screen.query_one("#navigate-requests", Button).press()
        await pilot.pause()
        assert asked[-1] == ("only the tests", True)
        assert app.results == [], "inspecting does not navigate"


@pytest.mark.asyncio
async def test_no_inspector_when_nothing_would_be_summarized() -> None:
    from textual.widgets import Button

    asked: list[tuple[str | None, bool]] = []
    app = DialogHost(target=42, inspect=lambda text, replace: asked.append((text, replace)))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("i")
        await pilot.pause()
        assert asked == []
        assert app.screen.query_one("#navigate-requests", Button).disabled


def _drawn_row(app: DialogHost, widget_id: str) -> str:
    """The screen row the widget is drawn on, as characters (80x24, after layout)."""
    widget = app.screen.query_one(widget_id)
    strips = app.screen._compositor.render_strips()
    return "".join(segment.text for segment in strips[widget.region.y])


@pytest.mark.asyncio
async def test_the_prompt_modes_draw_which_one_is_pressed_at_80x24() -> None:
    """Choosing "replace" moves the dot: the pressed mode draws ``●``, the other ``○`` (both
    drew ``▐●▌``, told apart only by a tint)."""
    app = DialogHost(target=33)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("3")
        await pilot.pause()
        row = _drawn_row(app, "#navigate-append")
        assert "▐●▌ Add to the default prompt" in row
        assert "▐○▌ Replace the default prompt" in row
        await pilot.press("tab", "right", "enter")
        await pilot.pause()
        row = _drawn_row(app, "#navigate-append")
        assert "▐○▌ Add to the default prompt" in row
        assert "▐●▌ Replace the default prompt" in row
