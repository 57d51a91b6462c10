"""Figures of one session file for the cross-session table (``stats`` and the picker).

Size, entries, branches (leaves of the tree), compactions and branch summaries, the peak
context (the largest provider-counted context of any assistant turn, on any branch) and the
worst hindsight score of its compactions (``engine.hindsight``). ``file_stats`` loads the file
itself so it can run in a worker process; a file that cannot be used gives a row with its
``problem`` and no figures. ``measure_files`` measures many files in parallel worker processes:
the ``stats`` command and the picker both call it.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tui_compactor.engine.context import usage_tokens
from tui_compactor.engine.hindsight import audit_compactions

__all__ = ["SessionStats", "STATS_COLUMNS", "file_stats", "measure_files", "session_stats"]

STATS_COLUMNS: dict[str, str] = {
    "size": "Size",
    "entries": "Entries",
    "branches": "Branches",
    "compactions": "Compactions",
    "peak": "Peak context",
    "worst": "Worst hindsight",
}
"""Column key -> header, shared by ``stats`` and the picker (sorting uses the same keys)."""


@dataclass(frozen=True, slots=True)
class SessionStats:
    """The cross-session figures of one file."""

    path: str
    size: int
    entries: int | None = None
    branches: int | None = None
    compactions: int | None = None
    branch_summaries: int | None = None
    peak_context: int | None = None
    worst_score: float | None = None
    """Lowest hindsight score of its compactions (None without compactions)."""
    worst_entry: str | None = None
    """Id of the compaction with that score."""
    problem: str | None = None

    def sort_key(self, column: str) -> tuple[Any, ...]:
        """Key for sorting by a ``STATS_COLUMNS`` column: ``(known, value, path)``; a missing
        figure has ``known`` False (``stats`` sorts largest first: those come last)."""
        value = {
            "size": self.size,
            "entries": self.entries,
            "branches": self.branches,
            "compactions": self.compactions,
            "peak": self.peak_context,
            "worst": self.worst_score,
        }.get(column)
        return (value is not None, value if value is not None else 0, self.path)

    def to_json(self) -> dict[str, Any]:
        """One ``stats --json`` row."""
        return {
            "path": self.path,
            "size": self.size,
            "entries": self.entries,
            "branches": self.branches,
            "compactions": self.compactions,
            "branchSummaries": self.branch_summaries,
            "peakContext": self.peak_context,
            "worstScore": round(self.worst_score, 3) if self.worst_score is not None else None,
            "worstEntryId": self.worst_entry,
            "problem": self.problem,
        }


def session_stats(session: Any, rules: str = "pi") -> SessionStats:
    """The figures of a loaded session."""
    entries = session.entries
    compactions = branch_summaries = 0
    peak = 0
    for entry in entries:
        kind = entry.type
        if kind == "compaction":
            compactions += 1
        elif kind == "branch_summary":
            branch_summaries += 1
        elif kind == "message" and entry.role == "assistant":
            message = entry.message or {}
            usage = message.get("usage")
            if isinstance(usage, dict) and message.get("stopReason") not in ("aborted", "error"):
                peak = max(peak, usage_tokens(usage))
    worst = worst_entry = None
    if compactions:
        audits = audit_compactions(session, rules)
        lowest = min(audits, key=lambda audit: audit.score)
        worst, worst_entry = lowest.score, str(entries[lowest.entry_index].id)
    size = session.path.stat().st_size if Path(session.path).exists() else 0
    return SessionStats(
        path=str(session.path),
        size=size,
        entries=len(entries),
        branches=len(session.leaves),
        compactions=compactions,
        branch_summaries=branch_summaries,
        peak_context=peak or None,
        worst_score=worst,
        worst_entry=worst_entry,
    )


def file_stats(path: str | Path, rules: str | None = None) -> SessionStats:
    """Load ``path`` and compute its figures (never raises: problems go in the row). ``rules``
    None: the rules that follow the session (``session.flavor.detect_flavor``)."""
    from tui_compactor.session.flavor import detect_flavor
    from tui_compactor.session.reader import load_session

    path = Path(path)
    try:
        size = path.stat().st_size
    except OSError as error:
        return SessionStats(str(path), 0, problem=f"cannot read: {error.strerror or error}")
    try:
        session = load_session(path)
        if str(getattr(session, "verdict", "")) == "refuse" or not session.entries:
            reasons = "; ".join(str(d) for d in session.diagnostics[:1]) or "no entries"
            return SessionStats(str(path), size, problem=reasons)
        try:
            return session_stats(session, rules or detect_flavor(session).rules)
        finally:
            close = getattr(session, "close", None)
            if callable(close):
                close()
    except Exception as error:  # one bad file must not stop the table
        return SessionStats(str(path), size, problem=f"{type(error).__name__}: {error}")


def measure_files(
    paths: Sequence[str | Path],
    rules: str | None = None,
    *,
    jobs: int | None = None,
    on_row: Callable[[SessionStats, int, int], None] | None = None,
    cancel: threading.Event | None = None,
) -> list[SessionStats]:
    """``file_stats`` of every path, in completion order, computed by up to ``jobs`` worker
    processes (default: the CPU count; with one file or one job, here).

    ``on_row(row, done, total)`` is called here after each file (progress). Setting
    ``cancel`` stops the measuring: files not started are skipped, the rows so far returned.
    Workers are spawned rather than forked when this process runs other threads (the app):
    forking a threaded process may copy a lock some other thread holds.
    """
    total = len(paths)
    jobs = max(1, min(jobs or os.cpu_count() or 1, total))
    rows: list[SessionStats] = []

    def done(row: SessionStats) -> None:
        rows.append(row)
        if on_row is not None:
            on_row(row, len(rows), total)

    if jobs == 1:
        for path in paths:
            if cancel is not None and cancel.is_set():
                break
            done(file_stats(path, rules))
        return rows
    import multiprocessing
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

    threaded = threading.active_count() > 1
    if threaded:
        _start_resource_tracker()
    context = multiprocessing.get_context("spawn" if threaded else None)
    pool = ProcessPoolExecutor(max_workers=jobs, mp_context=context)
    try:
        pending = {pool.submit(file_stats, path, rules) for path in paths}
        while pending:
            finished, pending = wait(pending, timeout=0.2, return_when=FIRST_COMPLETED)
            for future in finished:
                done(future.result())
            if cancel is not None and cancel.is_set():
                break
    finally:
        pool.shutdown(wait=cancel is None or not cancel.is_set(), cancel_futures=True)
    return rows


def _start_resource_tracker() -> None:
    """Start multiprocessing's resource tracker (spawned pools need it) with a real stderr.

    Under a full-screen UI ``sys.stderr`` is a capture object whose ``fileno()`` is -1, which
    the tracker's launch would hand to the new process and fail on; for that moment the
    process's own stderr stands in.
    """
    import sys
    from multiprocessing import resource_tracker

    try:
        usable = sys.stderr is not None and sys.stderr.fileno() >= 0
    except (AttributeError, OSError, ValueError):
        usable = True  # no descriptor at all: the tracker starts without one
    if usable:
        resource_tracker.ensure_running()
        return
    captured, sys.stderr = sys.stderr, sys.__stderr__
    try:
        resource_tracker.ensure_running()
    finally:
        sys.stderr = captured
