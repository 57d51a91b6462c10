"""Compaction methods written by tui-compactor: ``soft`` and ``handoff``; ``shake`` refused.

On oh-my-pi's own session (``omp-methods.jsonl``); what we append is reloaded by our reader and,
when Bun and the oh-my-pi install are present, by oh-my-pi's own ``SessionManager`` and
``buildSessionContext`` (the oracle kit).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.summarize.helpers import write_compaction
from tests.support.omp_oracle import omp_golden
from tui_compactor.engine.methods import carried_preserve_data
from tui_compactor.engine.plan import prepare_compaction
from tui_compactor.engine.settings import CompactionSettings
from tui_compactor.engine.tokens import get_counter
from tui_compactor.session.reader import load_session
from tui_compactor.summarize.base import SummaryRequest
from tui_compactor.summarize.compaction import CompactionJob
from tui_compactor.summarize.offline import OfflineSummarizer

ROOT = Path(__file__).resolve().parents[2]
OMP_METHODS = ROOT / "tests" / "fixtures" / "oracle-omp" / "sessions" / "omp-methods.jsonl"
SNAPCOMPACT = 107
"""Entry index of the snapcompact compaction in omp-methods."""


class RecordingOffline(OfflineSummarizer):
    """The offline summarizer, keeping every request it was given."""

    def __init__(self) -> None:
        super().__init__()
        self.requests: list[SummaryRequest] = []

    def stream(self, request: SummaryRequest) -> AsyncIterator[str]:
        self.requests.append(request)
        return super().stream(request)


def copy(tmp_path: Path, edit: Any = None) -> Path:
    """A copy of omp-methods; ``edit(record)`` may change records on the way."""
    target = tmp_path / "omp-methods.jsonl"
    if edit is None:
        shutil.copyfile(OMP_METHODS, target)
        return target
    lines = []
    for line in OMP_METHODS.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        edit(record)
        lines.append(json.dumps(record, ensure_ascii=False))
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return target


def plan_at(path: Path, leaf: int | None = None, keep_recent: int = 500) -> tuple[Any, Any, Any]:
    session = load_session(path)
    settings = CompactionSettings(keep_recent_tokens=keep_recent, rules="omp")
    plan = prepare_compaction(
        session, session.leaf if leaf is None else leaf, settings, get_counter("bytes")
    )
    assert plan.prepared, plan.reason
    return session, plan, settings


def appended(path: Path) -> dict[str, Any]:
    record: dict[str, Any] = json.loads(path.read_text(encoding="utf-8").splitlines()[-1])
    return record


def test_carried_preserve_data_drops_provider_payloads_and_archives() -> None:
    assert carried_preserve_data(None) is None
    assert carried_preserve_data({"preserveData": {"openaiRemoteCompaction": {}}}) is None
    previous = {
        "preserveData": {
            "snapcompact": {"frames": []},
            "anthropicCompaction": {"x": 1},
            "openaiRemoteCompaction": {"provider": "openai"},
            "todoState": {"open": 2},
        }
    }
    assert carried_preserve_data(previous) == {"todoState": {"open": 2}}


@pytest.mark.asyncio
async def test_soft_writes_method_and_carries_preserve_data(tmp_path: Path) -> None:
    """oh-my-pi's compact(): preserveData continues from the previous compaction without the
    snapcompact archive, whose source text joins the previous summary given to the model."""

    def edit(record: dict[str, Any]) -> None:
        if record.get("method") == "snapcompact":
            record["preserveData"]["todoState"] = {"open": ["wire the cache"]}

    path = copy(tmp_path, edit)
    session, plan, settings = plan_at(path, leaf=SNAPCOMPACT + 20)
    assert session.entries[plan.branch[plan.previous_compaction_index]].index == SNAPCOMPACT
    summarizer = RecordingOffline()
    job = CompactionJob(plan, session, summarizer, settings)
    result = await job.run()
    write_compaction(session, plan, result.entry)
    record = appended(path)
    assert record["type"] == "compaction" and record["method"] == "soft"
    assert record["preserveData"] == {"todoState": {"open": ["wire the cache"]}}
    assert record["parentId"] == session.entries[SNAPCOMPACT + 20].id
    history = next(r for r in summarizer.requests if r.kind in ("summary", "update"))
    assert history.previous_summary is not None
    assert history.previous_summary.startswith("Resume prior conversation.")
    assert "Source text of the earlier snapcompact archive" in history.previous_summary
    # The archive's newline glyphs became newlines.
    assert "[Summary of earlier history] ## Goal\nFinish the entry cache" in (
        history.previous_summary
    )
    reloaded = load_session(path)
    assert reloaded.entries[-1].data["method"] == "soft"


@pytest.mark.asyncio
async def test_soft_without_preserve_data_writes_none(tmp_path: Path) -> None:
    path = copy(tmp_path)
    session, plan, settings = plan_at(path, leaf=SNAPCOMPACT + 20)
    job = CompactionJob(plan, session, OfflineSummarizer(), settings)
    write_compaction(session, plan, (await job.run()).entry)
    record = appended(path)
    assert record["method"] == "soft"
    assert "preserveData" not in record  # the archive is not carried, nothing else was there


@pytest.mark.asyncio
async def test_handoff_commits_like_omp_and_reloads_in_omp_with_its_wrapper(
    tmp_path: Path,
) -> None:
    path = copy(tmp_path)
    session, plan, settings = plan_at(path, leaf=SNAPCOMPACT + 20)
    summarizer = RecordingOffline()
    job = CompactionJob(
        plan,
        session,
        summarizer,
        settings,
        method="handoff",
        instructions="keep the cache rework state",
    )
    result = await job.run()
    # One request, on the whole live context, with the handoff prompt and the focus.
    assert [r.kind for r in summarizer.requests] == ["handoff"]
    request = summarizer.requests[0]
    assert "fresh copy of yourself" in request.prompt
    assert request.prompt.endswith("Additional focus: keep the cache rework state")
    assert request.focus == "keep the cache rework state"
    assert result.method == "handoff" and result.turn_prefix_summary is None
    appended_id = write_compaction(session, plan, result.entry).ids[0]
    record = appended(path)
    assert record["method"] == "handoff"
    assert "shortSummary" not in record and "preserveData" not in record
    assert record["firstKeptEntryId"] == plan.first_kept_entry_id
    assert record["tokensBefore"] == plan.tokens_before
    assert record["summary"].rstrip().endswith("</files>")
    assert record["details"]["modifiedFiles"]

    golden = omp_golden(path)
    assert golden["load"]["accepted"] and golden["leafId"] == appended_id
    leaf_context = golden["contexts"][0]
    first = leaf_context["items"][0]
    assert first["role"] == "compactionSummary" and first["entryId"] == appended_id
    assert first["method"] == "handoff"
    # oh-my-pi wraps it in its handoff wrapper: the same offset as the file's own handoff,
    # not the one of its ordinary compaction wrapper.
    offsets = {
        item["method"]: item["llm"][0]["summaryOffset"]
        for context in golden["contexts"]
        for item in context["items"]
        if item["role"] == "compactionSummary" and item["entryId"] != appended_id
    }
    assert first["llm"][0]["summaryOffset"] == offsets["handoff"] != offsets["soft"]
    entries = {entry["id"]: entry for entry in golden["entries"]}
    assert entries[appended_id]["method"] == "handoff"
    assert entries[appended_id]["firstKeptEntryId"] == plan.first_kept_entry_id


def test_compact_command_refuses_shake_and_writes_handoff(tmp_path: Path) -> None:
    path = copy(tmp_path)
    before = path.read_bytes()
    shake = subprocess.run(
        [sys.executable, "-m", "tui_compactor", "compact", str(path), "--method", "shake", "--yes"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert shake.returncode == 2
    assert "rewriting the whole session file" in shake.stderr
    assert path.read_bytes() == before
    handoff = subprocess.run(
        [
            sys.executable,
            "-m",
            "tui_compactor",
            "compact",
            str(path),
            "--method",
            "handoff",
            "--rules",
            "omp",
            "--keep-recent",
            "500",
            "--leaf",
            f"#{SNAPCOMPACT + 20}",
            "--yes",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert handoff.returncode == 0, handoff.stderr
    report = json.loads(handoff.stdout)
    assert report["written"] and report["method"] == "handoff"
    assert report["shortSummary"] is None
    assert appended(path)["method"] == "handoff"
