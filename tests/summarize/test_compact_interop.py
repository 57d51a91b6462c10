"""Interop: what ``compact`` and ``navigate`` write is loaded by pi 0.73.1 and shows in its context.

Uses ``tests/support/pi_session_probe.mjs`` (pi's own ``SessionManager`` +
``buildSessionContext``). Skips with the reason only when Node or the pi package is missing.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.summarize.helpers import write_navigation
from tests.support.pi_probe import pi_sees
from tui_compactor.cli import main
from tui_compactor.engine.branch import plan_navigation
from tui_compactor.engine.tokens import get_counter
from tui_compactor.session.reader import load_session
from tui_compactor.summarize.navigation import prepare_navigation
from tui_compactor.summarize.providers import make_summarizer

pytestmark = pytest.mark.node

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"


def test_pi_sees_the_compact_command_summary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    path = tmp_path / "session.jsonl"
    shutil.copy(FIXTURES / "sessions" / "refactor-session-v3.jsonl", path)
    assert main(["compact", str(path), "--yes", "--json", "--quiet-window", "0"]) == 0
    report = json.loads(capsys.readouterr().out)
    seen = pi_sees(path)
    assert seen["leafId"] == report["entryId"]
    first = seen["messages"][0]
    assert first["role"] == "compactionSummary"
    assert first["summary"] == report["summary"]


@pytest.mark.asyncio
async def test_pi_sees_our_branch_summary(tmp_path: Path) -> None:
    path = tmp_path / "tree.jsonl"
    shutil.copy(FIXTURES / "oracle" / "sessions" / "tree-branches.jsonl", path)
    session = load_session(path)
    target = session.entry_by_id("2afc4f95").index
    plan = plan_navigation(session, session.leaf, target, get_counter("bytes"))
    result = await prepare_navigation(plan, summarizer=make_summarizer(None))
    assert result.summary is not None
    written = write_navigation(session, plan, result.record, quiet_seconds=0)
    seen = pi_sees(path)
    assert seen["leafId"] == written.ids[0]
    last = seen["messages"][-1]
    assert last["role"] == "branchSummary"
    assert last["summary"] == result.summary.summary
