"""Helpers for the app's Pilot tests: open a copy of a fixture, wait until all work settled,
summarize through the loopback LLM server."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from textual.pilot import Pilot
from textual.worker import WorkerCancelled, WorkerFailed, WorkerState

from tests.support.llm_server import LLMServer
from tui_compactor.config import Config, Profile
from tui_compactor.engine.tokens import TokenTableError
from tui_compactor.session.session import Session
from tui_compactor.ui.app import CompactorApp

if TYPE_CHECKING:
    from tui_compactor.engine.plan import CompactionPlan
    from tui_compactor.ui.widgets.compaction import CompactionPanel

ROOT = Path(__file__).resolve().parents[2]
ORACLE_SESSIONS = ROOT / "tests" / "fixtures" / "oracle" / "sessions"
BAD = ROOT / "tests" / "fixtures" / "bad"
TREE_BRANCHES = ORACLE_SESSIONS / "tree-branches.jsonl"
TREE_COMPACTED = ORACLE_SESSIONS / "tree-compacted.jsonl"
SIZE = (120, 36)
OTHER_BRANCH_TIP = 33
"""In tree-branches.jsonl: the assistant reply ending the side branch that forks at #8."""
SERVER_KEY_ENV = "TUI_COMPACTOR_TEST_KEY"
"""Where ``server_config``'s profile reads its API key."""


def copy_fixture(source: Path, directory: Path) -> Path:
    """Copy ``source`` into ``directory`` (tests that write never touch the fixtures)."""
    target = directory / source.name
    shutil.copyfile(source, target)
    return target


def added_records(before: bytes, after: bytes) -> list[dict]:  # type: ignore[type-arg]
    """The records appended to a file (asserting nothing else changed)."""
    assert after.startswith(before), "bytes the user had were changed"
    tail = after[len(before) :]
    assert tail.endswith(b"\n")
    return [json.loads(line) for line in tail.splitlines()]


def active_compactions(session: Session) -> list[int]:
    """The compaction entries on the path from the root to the leaf, oldest first."""
    entries = session.entries
    return [i for i in session.path_to(session.leaf) if entries[i].type == "compaction"]


def make_app(path: Path, **options: object) -> CompactorApp:
    """An app that measures at once (no debounce timers), does not poll the file, and keeps
    every note it raises (``raised_notes``)."""
    options.setdefault("follow", False)
    app = CompactorApp(path, **options)  # type: ignore[arg-type]
    app.gauge_debounce = 0
    app.settings_debounce = 0
    raised: list[str] = []
    notify = app.notify

    def recording(message: str, *args: Any, **kwargs: Any) -> None:
        raised.append(str(message))
        notify(message, *args, **kwargs)

    app.notify = recording  # type: ignore[method-assign]
    app._raised_notes = raised  # type: ignore[attr-defined]
    return app


def count_layouts(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """From now on, one item per layout of any screen (a whole-screen re-arrangement)."""
    from textual.screen import Screen

    layouts: list[int] = []
    refresh_layout = Screen._refresh_layout

    def counted(screen: Screen[Any], *args: Any, **kwargs: Any) -> None:
        layouts.append(1)
        refresh_layout(screen, *args, **kwargs)

    monkeypatch.setattr(Screen, "_refresh_layout", counted)
    return layouts


def screen_text(app: CompactorApp) -> str:
    """The text of the app's screen as the compositor draws it now."""
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


def record_frames(app: CompactorApp) -> list[str]:
    """From now on, the screen's text at each frame written to the terminal, in order."""
    frames: list[str] = []
    hook = app.post_display_hook

    def written() -> None:
        frames.append(screen_text(app))  # what the compositor just wrote
        hook()

    app.post_display_hook = written  # type: ignore[method-assign]
    return frames


def raised_notes(app: CompactorApp) -> list[str]:
    """Every note ``app`` (made by ``make_app``) raised so far, in order. A toast leaves the
    screen after its timeout (3 s for most), and on a loaded machine a key and a pause can take
    longer than that: a test asks what was said here, not what is still on screen."""
    return app._raised_notes  # type: ignore[attr-defined, no-any-return]


def server_config(server: LLMServer, model: str = "test-model") -> Config:
    """A config whose one profile (``local``: the compaction's and the branch summary's) talks
    to the loopback ``server``, without retries."""
    profile = Profile(
        name="local",
        provider="openai",
        base_url=server.openai_base_url,
        model=model,
        api_key_env=SERVER_KEY_ENV,
        max_retries=0,
    )
    return Config(profiles={"local": profile}, default_profile="local")


def server_app(
    server: LLMServer,
    path: Path,
    monkeypatch: pytest.MonkeyPatch,
    *,
    key: str = "sk-test",
    model: str = "test-model",
) -> CompactorApp:
    """An app on ``path`` whose summaries come from ``server`` (``key`` in the profile's
    variable), appending without waiting for a quiet file."""
    monkeypatch.setenv(SERVER_KEY_ENV, key)
    return make_app(path, append_quiet_seconds=0, config=server_config(server, model))


def busy(app: CompactorApp) -> bool:
    """True while any worker is pending or running."""
    return any(w.state in (WorkerState.PENDING, WorkerState.RUNNING) for w in app.workers)


async def settle(pilot: Pilot[None], rounds: int = 50) -> None:
    """Wait until every worker finished and every message they posted was handled."""
    app = pilot.app
    for _ in range(rounds):
        try:
            await app.workers.wait_for_complete()
        except WorkerCancelled:
            pass  # an exclusive worker was replaced by a newer one while we waited: wait again
        except WorkerFailed as failed:
            # A count that met a cl100k table that cannot be loaded ends its worker: the app
            # counts again with the estimate (``_count_without_table``); wait for that.
            if not isinstance(failed.error, TokenTableError):
                raise
        await pilot.pause()
        if not busy(app):  # type: ignore[arg-type]
            await pilot.pause()
            if not busy(app):  # type: ignore[arg-type]
                return
    raise AssertionError("workers did not settle")


async def scroll_to_plan_form(pilot: Pilot[None]) -> None:
    """Scroll the plan pane to its end, as a user going to its form does (the form is made
    when its place comes into view), and wait until it is mounted."""
    from tui_compactor.ui.widgets.plan_view import PlanView

    pilot.app.query_one(PlanView).scroll_end(animate=False)
    await settle(pilot)
    await pilot.pause()
    await settle(pilot)


async def run_review(
    pilot: Pilot[None], key: str = "r", *, then: str = "", wait: bool = True
) -> CompactionPanel:
    """Plan at the selected node (``c``) and run the compaction (``key``: ``r``, or ``R`` for
    candidates side by side), then press the keys in ``then`` (``z`` zooms); returns the review
    panel once its summaries are done, or with ``wait=False`` while they stream."""
    from tui_compactor.ui.widgets.compaction import CompactionPanel

    await settle(pilot)
    await pilot.press("c")
    await settle(pilot)
    await pilot.press(key, *then)
    if wait:
        await settle(pilot)
    else:
        await pilot.pause()
    return pilot.app.query_one(CompactionPanel)


async def plan_with_earlier_cuts(
    pilot: Pilot[None], earlier: int
) -> tuple[CompactionPlan, list[int], int]:
    """Plan at the selected node (``c``), a plan with at least ``earlier`` valid cut points
    before its cut: the plan, its valid cut points in order, and where its cut is among
    them."""
    await settle(pilot)
    await pilot.press("c")
    await settle(pilot)
    plan = pilot.app.plan  # type: ignore[attr-defined]
    assert plan is not None and plan.prepared
    cuts = sorted(plan.valid_cut_points)
    position = cuts.index(plan.first_kept_index)
    assert position >= earlier, "the session has earlier valid cut points"
    return plan, cuts, position
