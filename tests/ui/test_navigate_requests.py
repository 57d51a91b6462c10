"""The request inspector in the navigation dialog: ``i`` shows the exact request the branch
summary would send (built by ``summarize.requests.branch_requests``, nothing sent, no key
shown), checked against what the loopback server receives when the user then summarizes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.llm_server import LLMServer
from tests.ui.app_helpers import (
    OTHER_BRANCH_TIP,
    SIZE,
    TREE_BRANCHES,
    copy_fixture,
    server_app,
    settle,
)
from tui_compactor.ui.screens.navigate import NavigateDialog
from tui_compactor.ui.screens.requests import RequestsScreen
from tui_compactor.ui.widgets.tree import SessionTree

pytestmark = pytest.mark.asyncio

KEY = "sk-inspector-secret-123"


def screen_text(app: Any) -> str:
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


async def open_dialog(pilot: Any, app: Any) -> NavigateDialog:
    assert app.query_one(SessionTree).move_to_entry(OTHER_BRANCH_TIP)
    await settle(pilot)
    await pilot.press("enter")
    await settle(pilot)
    assert isinstance(app.screen, NavigateDialog)
    return app.screen


async def test_inspected_branch_request_is_what_the_server_receives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = copy_fixture(TREE_BRANCHES, tmp_path)
    before = path.read_bytes()
    with LLMServer() as server:
        app = server_app(server, path, monkeypatch, key=KEY)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            await open_dialog(pilot, app)
            await pilot.press("i")
            await settle(pilot)
            screen = app.screen
            assert isinstance(screen, RequestsScreen)
            shown = list(screen.requests)
            assert [item.part for item in shown] == ["branch"]
            text = screen_text(app)
            assert "1 request this branch summary would send" in text  # was "1 requests"
            assert "── system prompt" in text and "── user prompt" in text
            assert "max_tokens" in text and "test-model" in text
            assert KEY not in text and all(KEY not in str(item.to_json()) for item in shown)
            assert server.requests == [], "inspecting sent a request"
            assert path.read_bytes() == before
            await pilot.press("escape")  # back to the dialog, which still offers the choice
            await settle(pilot)
            assert isinstance(app.screen, NavigateDialog)
            await pilot.press("2")
            await settle(pilot)
            await settle(pilot)
        assert len(server.requests) == 1
        received = server.requests[0]
        assert shown[0].body == received.body
        assert shown[0].url == server.openai_base_url + "/chat/completions"
        assert shown[0].system == received.system and shown[0].prompt == received.prompt
        assert shown[0].max_tokens == received.body["max_tokens"]
        assert received.headers.get("authorization") == f"Bearer {KEY}"
        assert path.read_bytes() != before  # the real summary was written


async def test_inspected_request_carries_the_custom_instructions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = copy_fixture(TREE_BRANCHES, tmp_path)
    with LLMServer() as server:
        app = server_app(server, path, monkeypatch, key=KEY)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            dialog = await open_dialog(pilot, app)
            await pilot.press("3")
            await pilot.press(*"keep the TODO list")
            assert "i" in dialog.query_one("#navigate-instructions").text  # typed, not a key
            dialog.query_one("#navigate-requests").press()
            await settle(pilot)
            screen = app.screen
            assert isinstance(screen, RequestsScreen)
            assert "keep the TODO list" in screen.requests[0].prompt
            assert server.requests == []
            await pilot.press("escape")
            await settle(pilot)
            assert app.screen is dialog
            dialog.query_one("#navigate-go").press()
            await settle(pilot)
            await settle(pilot)
        assert len(server.requests) == 1
        assert server.requests[0].body == screen.requests[0].body


async def test_enter_on_the_leaf_says_what_navigate_says(tmp_path: Path) -> None:
    """A move to the leaf itself writes nothing in both front-ends; the app said "already at
    this node" where `navigate` says "nothing to do: the target is the current leaf"."""
    from tests.support.cli import cli
    from tests.ui.app_helpers import make_app, raised_notes

    path = copy_fixture(TREE_BRANCHES, tmp_path)
    before = path.read_bytes()
    app = make_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("l", "enter")
        await settle(pilot)
        assert not isinstance(app.screen, NavigateDialog)
        leaf_id = app.handle.session.entries[app.handle.session.leaf].id
        notes = raised_notes(app)
    command = cli("navigate", str(path), "--to", leaf_id, "--yes")
    assert command.returncode == 0
    said = command.stdout.decode().strip().splitlines()[-1]
    assert said == "nothing to do: the target is the current leaf"
    assert said in notes, notes
    assert path.read_bytes() == before
