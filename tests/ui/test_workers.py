"""Starting a worker costs the UI thread nothing for its arguments (``ui.workers.work``)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from textual.app import App

from tui_compactor.ui.workers import work

UI = Path(__file__).resolve().parents[2] / "tui_compactor" / "ui"


class Costly:
    """An argument whose ``repr`` is counted (a plan's walks every message it holds)."""

    def __init__(self) -> None:
        self.reprs = 0

    def __repr__(self) -> str:
        self.reprs += 1
        return "Costly()"


class Host(App[None]):
    def __init__(self) -> None:
        super().__init__()
        self.received: list[object] = []

    @work(thread=True, exclusive=True, group="costly")
    def consume(self, argument: Costly, request: int) -> None:
        self.received.append((argument, request))


@pytest.mark.asyncio
async def test_a_worker_starts_without_formatting_its_arguments() -> None:
    """The worker runs with its arguments, named by its method, and none is ``repr``-ed."""
    app = Host()
    argument = Costly()
    async with app.run_test() as pilot:
        worker = app.consume(argument, 7)
        await worker.wait()
        await pilot.pause()
        assert app.received == [(argument, 7)]
        assert worker.description == "Host.consume"
        assert worker.group == "costly"
    assert argument.reprs == 0


def test_the_app_starts_its_workers_through_the_one_decorator() -> None:
    """No module of the app uses Textual's ``work`` directly (it formats every argument)."""
    direct = re.compile(r"^from textual import .*\bwork\b", re.MULTILINE)
    users = [
        path.name
        for path in UI.rglob("*.py")
        if path.name != "workers.py" and direct.search(path.read_text())
    ]
    assert users == [], users
