"""A turn prefix larger than the summarizer's window is never cut without a visible warning.

The session's last turn holds one assistant message of ~15k tokens; the compaction profile's
window is 8,192 tokens (1,024 tokens of conversation per request). Folding cannot split one
message, so only its end is sent (the part the kept messages follow). The plan says so before
anything runs (app plan pane, ``compact --json``'s ``summarizerNotes``), the stream panel marks
the turn-prefix pane while and after it runs, and the result's warnings (review, JSON) say it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from textual.widgets import Static

from tests.summarize.test_turn_prefix_and_family import SMALL_WINDOW, long_turn
from tests.support.llm_server import LLMServer
from tests.ui.app_helpers import SIZE, make_app, settle
from tui_compactor.config import Config
from tui_compactor.ui.widgets.compaction import CompactionPanel
from tui_compactor.workbench.settings import Settings

PLAN_NOTE = "only the end of each is sent"
RUN_NOTE = "only the end was sent"
KEY_ENV = "TUI_COMPACTOR_TEST_KEY"


def config_for(server: LLMServer) -> Config:
    return Config.model_validate(
        {
            "compaction": {"keep_recent_tokens": 400, "reserve_tokens": 8192, "tokens": "bytes"},
            "profiles": {
                "small": {
                    "provider": "openai",
                    "base_url": server.openai_base_url,
                    "model": "m",
                    "context_window": SMALL_WINDOW,
                    "api_key_env": KEY_ENV,
                    "max_retries": 0,
                }
            },
            "compaction_profile": "small",
        }
    )


@pytest.mark.asyncio
async def test_the_plan_pane_and_the_stream_panel_warn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-test")
    path = long_turn(tmp_path / "s.jsonl", huge_output=60_000)
    with LLMServer() as server:
        app = make_app(path, settings=Settings.from_config(config_for(server)))
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            await pilot.press("c")
            await settle(pilot)
            assert app.plan is not None and app.plan.is_split_turn
            plan_text = str(app.query_one("#plan-text", Static).render())
            assert PLAN_NOTE in plan_text
            assert "(nothing is cut)" not in plan_text
            await pilot.press("r")
            await settle(pilot)
            panel = app.query_one(CompactionPanel)
            assert panel.state == "ready"
            view = panel.candidates[0]
            heading = str(view.part_titles["turn_prefix"].render())
            assert "done in" in heading and "⚠ cut to fit" in heading  # stays after the run
            assert "⚠" not in str(view.part_titles["history"].render())
            audit = str(view.query_one(".candidate-audit", Static).render())
            assert RUN_NOTE in audit
            await pilot.press("d")
            await settle(pilot)
        sent = "".join(r.prompt for r in server.requests)
        assert "END-OF-HUGE" in sent and "HEAD-OF-HUGE" not in sent  # the end is what went


def test_the_json_warns_before_and_after(tmp_path: Path) -> None:
    path = long_turn(tmp_path / "s.jsonl", huge_output=60_000)
    env = {**os.environ, KEY_ENV: "sk-test", "XDG_CONFIG_HOME": str(tmp_path / "cfg")}
    with LLMServer() as server:
        flags = [
            "--keep-recent",
            "400",
            "--reserve",
            "8192",
            "--tokens",
            "bytes",
            "--provider",
            "openai",
            "--base-url",
            server.openai_base_url,
            "--model",
            "m",
            "--summary-window",
            str(SMALL_WINDOW),
            "--dry-run",
            "--json",
        ]
        env["OPENAI_API_KEY"] = "sk-test"

        def compact(*more: str) -> tuple[dict, str]:  # type: ignore[type-arg]
            done = subprocess.run(
                [sys.executable, "-m", "tui_compactor", "compact", str(path), *flags, *more],
                capture_output=True,
                text=True,
                env=env,
                timeout=300,
            )
            assert done.returncode == 0, done.stderr[-2000:]
            return json.loads(done.stdout), done.stderr

        planned, err = compact("--show-requests")
        assert not server.requests  # nothing was sent for the plan
        assert any(PLAN_NOTE in note for note in planned["plan"]["summarizerNotes"])
        assert PLAN_NOTE in err  # and the text output says it too
        ran, _ = compact()
        assert any(RUN_NOTE in warning for warning in ran["warnings"])
        assert any(PLAN_NOTE in note for note in ran["plan"]["summarizerNotes"])
