"""Helpers for the app's Pilot tests: open a copy of a fixture, wait until all work settled."""

from __future__ import annotations

import shutil
from pathlib import Path

from textual.pilot import Pilot
from textual.worker import WorkerCancelled, WorkerState

from tui_compactor.ui.app import CompactorApp

ROOT = Path(__file__).resolve().parents[2]
ORACLE_SESSIONS = ROOT / "tests" / "fixtures" / "oracle" / "sessions"
BAD = ROOT / "tests" / "fixtures" / "bad"
TREE_BRANCHES = ORACLE_SESSIONS / "tree-branches.jsonl"
TREE_COMPACTED = ORACLE_SESSIONS / "tree-compacted.jsonl"
SIZE = (120, 36)


def copy_fixture(source: Path, directory: Path) -> Path:
    """Copy ``source`` into ``directory`` (tests that write never touch the fixtures)."""
    target = directory / source.name
    shutil.copyfile(source, target)
    return target


def make_app(path: Path, **options: object) -> CompactorApp:
    """An app that measures at once (no debounce timers) and does not poll the file."""
    options.setdefault("follow", False)
    app = CompactorApp(path, **options)  # type: ignore[arg-type]
    app.gauge_debounce = 0
    app.settings_debounce = 0
    return app


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
        await pilot.pause()
        if not busy(app):  # type: ignore[arg-type]
            await pilot.pause()
            if not busy(app):  # type: ignore[arg-type]
                return
    raise AssertionError("workers did not settle")
