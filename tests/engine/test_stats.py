"""``stats`` across sessions: every figure checked against the files read here with plain json,
and the worst score against ``audit``; worker processes, progress, bad files."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import cli_json
from tui_compactor.engine.stats import measure_files

TESTS = Path(__file__).resolve().parents[1]
ROOT = TESTS.parent
SOURCES = [
    TESTS / "fixtures" / "sessions" / "refactor-session-v3.jsonl",
    TESTS / "fixtures" / "oracle" / "sessions" / "tree-compacted.jsonl",
    TESTS / "fixtures" / "oracle" / "sessions" / "tree-branches.jsonl",
]


def expected_figures(path: Path) -> dict[str, Any]:
    records = [json.loads(line) for line in path.read_text().splitlines()[1:] if line.strip()]
    parents = {r.get("parentId") for r in records}
    peak = 0
    for record in records:
        message = record.get("message") or {}
        usage = message.get("usage") if message.get("role") == "assistant" else None
        if isinstance(usage, dict) and message.get("stopReason") not in ("aborted", "error"):
            total = usage.get("totalTokens") or sum(
                usage.get(k) or 0 for k in ("input", "output", "cacheRead", "cacheWrite")
            )
            peak = max(peak, total)
    return {
        "size": path.stat().st_size,
        "entries": len(records),
        "branches": sum(1 for r in records if r["id"] not in parents),
        "compactions": sum(1 for r in records if r["type"] == "compaction"),
        "branchSummaries": sum(1 for r in records if r["type"] == "branch_summary"),
        "peakContext": peak or None,
    }


@pytest.fixture
def sessions_dir(tmp_path: Path) -> Path:
    root = tmp_path / "sessions"
    (root / "--home-dev-project--").mkdir(parents=True)
    for source in SOURCES:
        shutil.copyfile(source, root / "--home-dev-project--" / source.name)
    (root / "notes.txt").write_text("not a session")
    (root / "empty.jsonl").write_text("")
    return root


def test_stats_figures_match_the_files(sessions_dir: Path) -> None:
    data = cli_json("stats", str(sessions_dir), "--jobs", "2", timeout=300)
    rows = {Path(row["path"]).name: row for row in data["sessions"]}
    assert set(rows) == {source.name for source in SOURCES} | {"empty.jsonl"}
    assert rows["empty.jsonl"]["problem"]
    for source in SOURCES:
        row = rows[source.name]
        assert row["problem"] is None
        for key, value in expected_figures(source).items():
            assert row[key] == value, (source.name, key)
        audits = cli_json("audit", str(source), timeout=300)["compactions"]
        worst = min((a["score"] for a in audits), default=None)
        assert row["worstScore"] == worst
    # Sorted by size, largest first (the default); --sort worst puts the lowest score last.
    sizes = [row["size"] for row in data["sessions"]]
    assert sizes == sorted(sizes, reverse=True)
    by_worst = cli_json("stats", str(sessions_dir), "--sort", "worst", timeout=300)["sessions"]
    scored = [row["worstScore"] for row in by_worst if row["worstScore"] is not None]
    assert scored == sorted(scored, reverse=True)


def test_parallel_and_serial_agree_and_progress_is_drawn(sessions_dir: Path) -> None:
    """``measure_files`` (the command's and the picker's one path): worker processes give the
    rows measuring here gives, progress is reported once per file, and a cancel stops it."""
    import threading

    paths = sorted(sessions_dir.rglob("*.jsonl"))
    seen: list[tuple[int, int]] = []
    parallel_rows = measure_files(
        paths, "pi", jobs=2, on_row=lambda row, done, total: seen.append((done, total))
    )
    assert seen == [(done, len(paths)) for done in range(1, len(paths) + 1)]
    parallel = {row.path: row for row in parallel_rows}
    serial = {row.path: row for row in measure_files(paths, "pi", jobs=1)}
    assert parallel == serial and len(serial) == len(paths)
    # Spawned workers (what the app's threaded process uses) agree too.
    stop = threading.Event()
    holder = threading.Thread(target=stop.wait)
    holder.start()
    try:
        spawned = {row.path: row for row in measure_files(paths, "pi", jobs=2)}
    finally:
        stop.set()
        holder.join()
    assert spawned == serial
    cancel = threading.Event()
    cancel.set()
    assert measure_files(paths, "pi", jobs=1, cancel=cancel) == []
    # The command draws the bar on a terminal's stderr.
    result = subprocess.run(
        ["script", "-qec", f"{sys.executable} -m tui_compactor stats {sessions_dir} --jobs 2",
         "/dev/null"], cwd=ROOT, capture_output=True, timeout=120,
    )  # fmt: skip
    out = result.stdout.decode(errors="replace")
    assert f"{len(paths)}/{len(paths)} files" in out and "stats [" in out
