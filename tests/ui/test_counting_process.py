"""The app counts cl100k tokens in a counting process (its own GIL builds the encoder): the
same counts and gauge as counting in the app's process, no counting process left after the
app quits or dies, and the chars/4 estimate, said why, when the process cannot start."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.ui.app_helpers import (
    SIZE,
    TREE_BRANCHES,
    TREE_COMPACTED,
    copy_fixture,
    make_app,
    raised_notes,
    screen_text,
    settle,
)
from tests.ui.test_tmux import EXIT_MARK, FIXTURES, TmuxApp, tmux_app  # noqa: F401 - fixture
from tui_compactor.engine import token_process, tokens
from tui_compactor.engine.token_process import Cl100kProcessCounter
from tui_compactor.engine.tokens import Cl100kCounter, TokenCache
from tui_compactor.ui.widgets.gauge import ContextGauge
from tui_compactor.ui.widgets.status import SessionStatus
from tui_compactor.ui.widgets.tree import SessionTree
from tui_compactor.workbench.views import gauge_at

COMMAND_MARK = "tui_compactor.engine.cl100k import serve"
"""What the counting process's command line says."""


@pytest.fixture
def no_counter_yet() -> Iterator[None]:
    """This test process as a fresh app's: no cl100k counter made yet (the app makes its own);
    the one the app made is closed afterwards and the earlier one put back."""
    earlier = tokens._COUNTERS.pop("cl100k", None)
    try:
        yield
    finally:
        made = tokens._COUNTERS.pop("cl100k", None)
        if isinstance(made, Cl100kProcessCounter):
            made.close()
        if earlier is not None:
            tokens._COUNTERS["cl100k"] = earlier


@pytest.mark.asyncio
@pytest.mark.parametrize("path", [TREE_COMPACTED, TREE_BRANCHES], ids=lambda p: p.stem)
async def test_the_app_counts_in_a_counting_process_the_same_counts_and_gauge(
    path: Path, no_counter_yet: None
) -> None:
    app = make_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        counter = tokens._COUNTERS["cl100k"]
        assert isinstance(counter, Cl100kProcessCounter) and app.counter is counter
        assert counter.loaded and counter.pid is not None
        session = app.session
        assert session is not None and app.handle is not None
        local = TokenCache(session, Cl100kCounter(preload=False))
        counted = app.query_one(SessionTree).token_counts
        expected = {
            index: count
            for index in range(len(session.entries))
            if (count := local.entry_tokens(index)) is not None
        }
        assert counted == expected
        gauge = app.query_one(ContextGauge)
        assert gauge.data is not None and not gauge.provisional
        with app.handle.read() as snapshot:
            measured = gauge_at(snapshot, gauge.data.entry_index, app.settings, local)
        assert gauge.data.tokens == measured.tokens
        assert "≈ chars/4" not in screen_text(app)


@pytest.mark.asyncio
async def test_a_counting_process_that_cannot_start_leaves_the_chars4_estimate_said_why(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, no_counter_yet: None
) -> None:
    monkeypatch.setattr(token_process.sys, "executable", str(tmp_path / "no-python"))
    app = make_app(TREE_BRANCHES)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        notes = raised_notes(app)
        assert [
            note
            for note in notes
            if "token table could not be loaded" in note
            and "the counting process could not start" in note
        ], notes
        assert app.settings.tokens == "pi"
        assert "≈ chars/4" in str(app.query_one(SessionStatus).render())
        assert app.query_one(SessionTree).token_counts  # counted, with the estimate


class _HeldCounter(Cl100kCounter):
    """An in-process cl100k counter whose token worker's batches wait until ``release`` is
    set (the gauge and the plan count in batches too, holding the session while they
    measure it, as they always did)."""

    def __init__(self) -> None:
        super().__init__(preload=False)
        self.waiting = threading.Event()
        self.release = threading.Event()

    def count_messages(self, messages: Sequence[Any]) -> list[int]:
        if any(frame.name == "count_tokens" for frame in traceback.extract_stack()):
            self.waiting.set()
            self.release.wait(30)
        return super().count_messages(messages)


@pytest.mark.asyncio
async def test_the_agent_appending_does_not_wait_for_a_batch_of_counts(
    tmp_path: Path, no_counter_yet: None
) -> None:
    """The token worker waits for a batch's counts (big tool results take a counting process
    a while) without holding the session: a refresh goes through meanwhile."""
    counter = tokens._COUNTERS["cl100k"] = _HeldCounter()
    app = make_app(copy_fixture(TREE_BRANCHES, tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        try:
            for _ in range(1000):
                if counter.waiting.is_set():
                    break
                await pilot.pause(0.01)
            assert counter.waiting.is_set(), "the token worker never asked for a batch"
            handle = app.handle
            assert handle is not None
            refreshed = threading.Thread(target=handle.refresh, daemon=True)
            refreshed.start()
            refreshed.join(10)
            assert not refreshed.is_alive(), "the refresh waited for the counts"
        finally:
            counter.release.set()
        await settle(pilot)
        assert app.query_one(SessionTree).token_counts


def _descendants(pid: int) -> list[int]:
    """Every process under ``pid`` (by their parents, read from /proc)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as stat:
                    parent = int(stat.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry))
    found: list[int] = []
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _counting_processes(pids: list[int]) -> list[int]:
    """Those of ``pids`` that are running counting processes."""
    found = []
    for pid in pids:
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if COMMAND_MARK in command and state != "Z":
            found.append(pid)
    return found


def _ended(pids: list[int], seconds: float = 20) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not _counting_processes(pids):
            return True
        time.sleep(0.05)
    return False


def _started_app(start: Callable[[list[str]], TmuxApp]) -> tuple[TmuxApp, int, list[int]]:
    """The app on a session in tmux, its counts shown: (the tmux app, the app's pid, its
    counting process)."""
    app = start([str(FIXTURES / "oracle" / "sessions" / "tree-compacted.jsonl")])
    app.wait_for(lambda screen: "entries" in screen.splitlines()[0], "the loaded tree")
    app.wait_for(lambda screen: " tokens" in screen and "≈" not in screen, "cl100k counts")
    shell = int(app._tmux("display-message", "-p", "-t", app.target, "#{pane_pid}").strip())
    under = _descendants(shell)
    counting = _counting_processes(under)
    assert len(counting) == 1, under
    app_pid = [pid for pid in under if counting[0] in _descendants(pid)]
    assert app_pid, under
    return app, app_pid[-1], counting


@pytest.mark.tmux
def test_quitting_the_app_ends_its_counting_process(
    tmux_app: Callable[[list[str]], TmuxApp],  # noqa: F811 - the fixture
) -> None:
    app, _, counting = _started_app(tmux_app)
    app.send("q")
    done = app.wait_for_text(EXIT_MARK)
    assert f"{EXIT_MARK} 0]" in done, done
    assert _ended(counting), "the counting process outlived the app"


@pytest.mark.tmux
@pytest.mark.parametrize("signal", ["KILL", "TERM", "HUP", "INT"])
def test_an_app_killed_leaves_no_counting_process(
    signal: str,
    tmux_app: Callable[[list[str]], TmuxApp],  # noqa: F811 - the fixture
) -> None:
    """A crash (``kill -9``), a ``kill``, a closed terminal, an interrupt sent from outside."""
    app, app_pid, counting = _started_app(tmux_app)
    subprocess.run(["kill", f"-{signal}", str(app_pid)], check=True)
    app.wait_for_text(EXIT_MARK)
    assert _ended(counting), f"the counting process outlived the app killed with SIG{signal}"


def _appended_user_message(path: Path, text: str) -> None:
    """The agent appends a user message under the file's last entry."""
    import json

    last = json.loads(path.read_text(encoding="utf-8").splitlines()[-1])
    record = {
        "type": "message",
        "id": "c0ffee01",
        "parentId": last["id"],
        "timestamp": "2026-01-12T10:00:00.000Z",
        "message": {"role": "user", "content": text},
    }
    with path.open("a", encoding="utf-8") as file:
        file.write(json.dumps(record) + "\n")


@pytest.mark.asyncio
async def test_a_counting_process_killed_mid_session_comes_back_said_once_and_counts_exact(
    tmp_path: Path, no_counter_yet: None
) -> None:
    """SIGKILL of the counting process while the app runs (the OOM killer, a user's kill): the
    next count starts it again, the counts stay cl100k and exact (not the chars/4 estimate),
    and one note says why; the killed process is gone."""
    path = copy_fixture(TREE_BRANCHES, tmp_path)
    app = make_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        counter = tokens._COUNTERS["cl100k"]
        assert isinstance(counter, Cl100kProcessCounter) and counter.loaded
        killed = counter.pid
        assert killed is not None
        os.kill(killed, signal.SIGKILL)
        deadline = time.monotonic() + 20
        while _counting_processes([killed]) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _counting_processes([killed])
        text = "please count this new message exactly: " + "tokens " * 300
        _appended_user_message(path, text)
        handle = app.handle
        assert handle is not None
        app.refresh_session(handle)
        await settle(pilot)
        session = app.session
        assert session is not None
        added = len(session.entries) - 1
        assert session.entries[added].type == "message"
        local = TokenCache(session, Cl100kCounter(preload=False))
        assert app.query_one(SessionTree).token_counts.get(added) == local.entry_tokens(added)
        notes = [note for note in raised_notes(app) if "counting process" in note]
        assert notes == [
            "the counting process was killed (SIGKILL): it was started again, and the counts "
            "go on (cl100k, exact)"
        ], raised_notes(app)
        assert app.settings.tokens == "cl100k" and app.state.table_error is None
        assert "≈ chars/4" not in screen_text(app)
        assert counter.restarts == 1 and counter.pid not in (None, killed)
        assert _counting_processes([counter.pid or 0])


@pytest.mark.asyncio
async def test_a_counting_process_that_keeps_dying_leaves_the_marked_estimate_said_why(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, no_counter_yet: None
) -> None:
    """The restarts spent (a process that dies at once each time): the chars/4 estimate,
    marked, with the reason, as when it cannot start; no count shown as exact."""
    dying = tmp_path / "dying-python"
    dying.write_text("#!/bin/sh\nexit 9\n", encoding="utf-8")
    dying.chmod(0o755)
    monkeypatch.setattr(token_process.sys, "executable", str(dying))
    monkeypatch.setattr(token_process, "RESTART_WAITS_S", (0.0, 0.05, 0.1))
    app = make_app(TREE_BRANCHES)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        notes = raised_notes(app)
        assert [
            note
            for note in notes
            if "token table could not be loaded" in note
            and "ended (exit code 9); started again 3 times in a row" in note
        ], notes
        assert not [note for note in notes if "it was started again" in note], notes
        assert app.settings.tokens == "pi"
        assert "≈ chars/4" in str(app.query_one(SessionStatus).render())
        assert app.query_one(SessionTree).token_counts


@pytest.mark.tmux
def test_a_counting_process_started_again_ends_with_the_app(
    tmux_app: Callable[[list[str]], TmuxApp],  # noqa: F811 - the fixture
    tmp_path: Path,
) -> None:
    """Killed, started again as the agent appends (the app follows the file), and still no
    counting process outlives the app once it quits."""
    path = copy_fixture(FIXTURES / "oracle" / "sessions" / "tree-compacted.jsonl", tmp_path)
    app = tmux_app([str(path)])
    app.wait_for(lambda screen: "entries" in screen.splitlines()[0], "the loaded tree")
    app.wait_for(lambda screen: " tokens" in screen and "≈" not in screen, "cl100k counts")
    shell = int(app._tmux("display-message", "-p", "-t", app.target, "#{pane_pid}").strip())
    killed = _counting_processes(_descendants(shell))
    assert len(killed) == 1
    os.kill(killed[0], signal.SIGKILL)
    _appended_user_message(path, "one more message from the agent")
    app.wait_for_text("token counting", "SIGKILL")  # the note (its text wraps)
    again = _counting_processes(_descendants(shell))
    assert len(again) == 1 and again != killed
    app.send("q")
    done = app.wait_for_text(EXIT_MARK)
    assert f"{EXIT_MARK} 0]" in done, done
    assert _ended(again), "the counting process started again outlived the app"
