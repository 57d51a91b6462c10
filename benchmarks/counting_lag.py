"""Does the counting process's work slow the app's event loop? The same browsing, with the
counting running and with it paused, side by side.

The app counts the whole session's cl100k tokens after its open: its tokens worker reads the
records and sends their texts to the counting process (``engine/token_process.py``), which
counts them on the other core for a minute or more (100k entries). Meanwhile a user browses.
This opens the big session headless (``bench_ui``), waits for the tree, and then, while the
counting still runs, alternates windows of ``--window`` seconds: counting running, counting
paused (``SIGSTOP`` to the counting process: its CPU stops, and the app's tokens worker waits
for its answer with the GIL released), ... In every window the same keys are typed (``j`` or
``k`` every 0.1 s: the cursor moves, the details pane and the gauge follow) under a 5 ms lag
timer (``bench_ui.LagSampler``). Per window: the loop's lateness (max, p99) and the UI thread's
CPU between two ticks (max, p99); at the end the medians per state. Each run is a fresh
process::

    python benchmarks/counting_lag.py --runs 3 --windows 4 --window 8

A window counts as "running" only if the tokens worker was still at work when it ended (else
the counting was over and the window is dropped: use a shorter ``--window``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bench_ui  # noqa: E402


def _counting(app: Any) -> bool:
    """Whether the app's tokens worker is still at work."""
    from textual.worker import WorkerState

    return any(
        w.group == "tokens" and w.state in (WorkerState.PENDING, WorkerState.RUNNING)
        for w in app.workers
    )


async def _windows(path: Path, windows: int, window: float) -> list[dict[str, Any]]:
    from tui_compactor.engine.tokens import get_counter

    app = bench_ui._make_app(path)
    sampler = bench_ui.LagSampler()
    rows: list[dict[str, Any]] = []
    async with app.run_test(size=bench_ui.SIZE) as pilot:
        await bench_ui._until(
            pilot,
            lambda: app.session is not None and app.session.complete and bench_ui._tree_rows(app),
            "the tree",
            300,
        )
        counter = get_counter("cl100k", preload=False, process=True)
        await bench_ui._until(pilot, lambda: getattr(counter, "loaded", False), "the counter", 120)
        await bench_ui._until(pilot, lambda: _counting(app), "the counting", 120)
        await asyncio.sleep(2.0)  # past the first screen's own work
        sampler.start()
        key = "j"
        try:
            for number in range(windows):
                state = "running" if number % 2 == 0 else "paused"
                pid = counter.pid
                if state == "paused" and pid is not None:
                    os.kill(pid, signal.SIGSTOP)
                sampler.flow = f"{number}"
                started = time.monotonic()
                presses = 0
                while time.monotonic() - started < window:
                    await pilot.press(key)
                    presses += 1
                    if presses % 20 == 0:
                        key = "k" if key == "j" else "j"
                    await asyncio.sleep(0.1)
                still = _counting(app)
                sampler.flow = "between"
                if state == "paused" and pid is not None:
                    os.kill(pid, signal.SIGCONT)
                lag = sampler.samples.get(f"{number}", [0.0])
                cpu = sampler.cpu.get(f"{number}", [0.0])
                rows.append(
                    {
                        "state": state,
                        "counting": still,
                        "max": max(lag) * 1000,
                        "p99": bench_ui._percentile(lag, 0.99) * 1000,
                        "cpu_max": max(cpu) * 1000,
                        "cpu_p99": bench_ui._percentile(cpu, 0.99) * 1000,
                        "ticks": len(lag),
                        "load": os.getloadavg()[0],
                    }
                )
                await asyncio.sleep(0.5)
        finally:
            sampler.stop()
            pid = counter.pid
            if pid is not None:
                try:
                    os.kill(pid, signal.SIGCONT)
                except ProcessLookupError:
                    pass
        app.exit()
    return rows


def _windows_run(path: str, windows: int, window: float) -> list[dict[str, Any]]:
    """``_windows`` in a fresh Python process (``bench_speed.probe_env``), as a user's app
    starts; its rows passed back as JSON."""
    from bench_speed import probe_env

    code = (
        f"import asyncio, json, sys; sys.path.insert(0, {str(HERE)!r}); import counting_lag; "
        f"from pathlib import Path; rows = asyncio.run(counting_lag._windows(Path({path!r}), "
        f"{windows}, {window})); open(sys.argv[1], 'w').write(json.dumps(rows))"
    )
    with tempfile.TemporaryDirectory(prefix="tuic-bench-run-") as tmp, probe_env() as env:
        out = Path(tmp) / "rows.json"
        subprocess.run([sys.executable, "-c", code, str(out)], env=env, check=True)
        rows: list[dict[str, Any]] = json.loads(out.read_text())
        return rows


def main(argv: list[str] | None = None) -> int:
    from gen_session import generate

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="runs (a fresh app each)")
    parser.add_argument("--windows", type=int, default=4, help="windows per run (alternating)")
    parser.add_argument("--window", type=float, default=8.0, help="seconds per window")
    parser.add_argument("--entries", type=int, default=100000, help="session size")
    args = parser.parse_args(argv)
    path = generate(args.entries)
    kept: dict[str, list[dict[str, Any]]] = {"running": [], "paused": []}
    for run in range(args.runs):
        rows = _windows_run(str(path), args.windows, args.window)
        for number, row in enumerate(rows):
            usable = row["state"] == "paused" or row["counting"]
            print(
                f"run {run + 1} window {number + 1}: {row['state']:8} max {row['max']:6.1f}  "
                f"p99 {row['p99']:5.1f}  UI CPU max {row['cpu_max']:5.1f}  p99 "
                f"{row['cpu_p99']:4.1f}  ticks {row['ticks']}  load {row['load']:.1f}"
                + ("" if usable else "  (counting over: dropped)"),
                flush=True,
            )
            if usable:
                kept[row["state"]].append(row)
    print(f"medians over windows (ms; load {os.getloadavg()[0]:.1f}):")
    for state, rows in kept.items():
        if rows:
            print(
                f"  {state:8} max {statistics.median(r['max'] for r in rows):6.1f}  "
                f"p99 {statistics.median(r['p99'] for r in rows):5.1f}  "
                f"UI CPU max {statistics.median(r['cpu_max'] for r in rows):5.1f}  "
                f"p99 {statistics.median(r['cpu_p99'] for r in rows):4.1f}  "
                f"({len(rows)} windows)"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
