"""How the work scales with the session size, and what hostile sizes cost.

For each generated session (10k, 100k; add ``--entries 1000000`` for the million, not in CI)
one fresh process measures, in order: the ``json.loads`` floor, open + index, plan, context
and navigate (``pi`` tokens) and its peak resident memory (``VmHWM``); then the app's "tree
complete" process of ``bench_speed.py``. Each figure is compared with the 100k one (target for
the million: <= 11x) and peak RSS with the budget half the file size + 150 MB. The table ends
with a text chart of seconds against entries (log-log).

``--huge`` adds the hostile files of ``gen_huge.py`` (a 1 GB line, a million tiny entries, a
200,000-deep chain, a node with 100,000 children): time and peak RSS of ``lint``, ``tree``,
``plan`` and ``context`` processes (text and ``--json``, printed to ``/dev/null``) against
the same budget. A command that refuses (exit 2) names the memory limit instead of growing.
The chain and the fan are also opened in the app (headless, 120x40: to the last row and back,
until every count is in) for its time and peak RSS against the same budget.
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import Any

from bench_speed import run_probe, tree_complete

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
MB = 1024 * 1024

PROBE = r"""
import json, sys, time
path = sys.argv[1]
out = {}
t = time.perf_counter()
with open(path, "rb") as handle:
    for line in handle:
        if line.strip():
            json.loads(line)
out["floor"] = time.perf_counter() - t
from tui_compactor.session.reader import load_session
from tui_compactor.engine.branch import plan_navigation
from tui_compactor.engine.context import build_context, estimate_context_tokens
from tui_compactor.engine.plan import prepare_compaction
from tui_compactor.engine.settings import CompactionSettings
from tui_compactor.engine.tokens import TokenCache, get_counter
t = time.perf_counter()
session = load_session(path)
out["open+index"] = time.perf_counter() - t
out["entries"] = len(session.entries)
counter = get_counter("pi")
t = time.perf_counter()
prepare_compaction(session, None, CompactionSettings(), counter, cache=TokenCache(session, counter))
out["plan"] = time.perf_counter() - t
t = time.perf_counter()
context = build_context(session, session.leaf)
estimate_context_tokens(context, counter, TokenCache(session, counter), local=False)
out["context"] = time.perf_counter() - t
path_to_leaf = session.path_to(session.leaf)
t = time.perf_counter()
plan_navigation(session, session.leaf, path_to_leaf[len(path_to_leaf) // 2], counter, 111616,
                cache=TokenCache(session, counter))
out["navigate"] = time.perf_counter() - t
status = open("/proc/self/status").read()
out["peak_mb"] = int(status.split("VmHWM:")[1].split()[0]) / 1024
print("SCALE " + json.dumps(out))
"""

PHASES = ("floor", "open+index", "plan", "context", "navigate", "tree complete")


def _probe(path: Path) -> dict[str, float]:
    figures: dict[str, float] = json.loads(run_probe(PROBE, [str(path)], "SCALE", "scale probe"))
    return figures


APP_PROBE = r"""
import asyncio, os, sys, threading, time
from pathlib import Path
from tui_compactor.ui.app import CompactorApp
from textual.worker import WorkerState
from tui_compactor.ui.widgets.tree import SessionTree

def rss(pid: str, key: str) -> float:
    try:
        status = open(f"/proc/{pid}/status").read()
    except OSError:
        return 0.0
    return int(status.split(key)[1].split()[0]) / 1024

def counting() -> str | None:
    # The app's counting process (its cl100k counts), while it runs.
    from tui_compactor.engine import tokens
    pid = getattr(tokens._COUNTERS.get("cl100k"), "pid", None)
    return None if pid is None else str(pid)

together = [0.0]
def sample() -> None:
    # The RSS of the app and its counting process together, every 20 ms.
    while True:
        child = counting()
        now = rss("self", "VmRSS:") + (rss(child, "VmRSS:") if child else 0.0)
        together[0] = max(together[0], now)
        time.sleep(0.02)

def memory() -> tuple[float, float]:
    # MB: (peak, now) of the app and its counting process together: the peak is the largest
    # sampled sum, or the app's own peak if larger.
    child = counting()
    now = rss("self", "VmRSS:") + (rss(child, "VmRSS:") if child else 0.0)
    return max(together[0], now, rss("self", "VmHWM:")), now

threading.Thread(target=sample, daemon=True).start()

async def main() -> None:
    started = time.perf_counter()
    app = CompactorApp(Path(sys.argv[1]), follow=False)
    async with app.run_test(size=(120, 40)) as pilot:
        tree = app.query_one(SessionTree)
        while not (app.session is not None and app.session.complete and tree.rows):
            await asyncio.sleep(0.05)
        _, shown = memory()
        for key in ("G", "g", "G"):
            await pilot.press(key)
            await asyncio.sleep(0.2)
        # Until every worker is done (the leaf's gauge and context, the chart, every count)
        # and none started for a second.
        quiet = 0
        while quiet < 5 or app.gauge_data is None or (
                app.gauge_data.entry_index != app.selected_entry):
            busy = any(worker.state in (WorkerState.PENDING, WorkerState.RUNNING)
                       for worker in app.workers)
            quiet = 0 if busy else quiet + 1
            await asyncio.sleep(0.2)
        seconds = time.perf_counter() - started
        peak, now = memory()
        print("APP", seconds, peak, now, shown, flush=True)
    os._exit(0)

asyncio.run(main())
"""
"""The app opens a file headless (120x40), goes to the last row, the first and the last again,
and waits until every worker is done (counts, gauge, chart): seconds, peak and final RSS (with
its counting process's: their sum sampled every 20 ms)."""


def _app(path: Path) -> tuple[float, float, float, float]:
    """(seconds, peak MB, final MB, MB when the rows showed) of the app's probe on ``path`` in
    a fresh process."""
    seconds, peak, now, shown = map(
        float, run_probe(APP_PROBE, [str(path)], "APP", "app probe").split()
    )
    return seconds, peak, now, shown


APP_CASES = ("chain-200k", "fan-100k")
"""The hostile shapes the app is measured on (the others: ``lint``..``context`` only)."""

HUGE_COMMANDS = ("lint", "tree", "tree --json", "plan", "plan --json", "context", "context --json")
"""What each hostile file goes through (``--json`` too: a 200k-deep chain prints 50-90 MB)."""


def _command(path: Path, command: str) -> tuple[float, float, int]:
    """(seconds, peak MB, exit status) of ``tui-compactor COMMAND PATH`` in a fresh process.

    The output goes to ``/dev/null`` as a user's pipe would take it: held in memory, the 50 MB
    of a huge context's JSON would be counted as the command's own memory.
    """
    argv = [*command.split(), str(path)]
    code = (
        "import sys, os, contextlib\n"
        "from tui_compactor.cli import main\n"
        "with open(os.devnull, 'w') as sink, contextlib.redirect_stdout(sink):\n"
        f"    status = main({argv!r})\n"
        "peak = int(open('/proc/self/status').read().split('VmHWM:')[1].split()[0]) / 1024\n"
        "print('PEAK', peak, status)\n"
    )
    started = time.perf_counter()
    peak, status = run_probe(code, [], "PEAK", command).split()
    seconds = time.perf_counter() - started
    return seconds, float(peak), int(status)


def text_chart(series: dict[str, list[tuple[int, float]]], width: int = 60) -> str:
    """A log-log text chart: one row per phase and size, a bar per decade of seconds."""
    lines = ["seconds (log scale: each '=' is x1.26, '|' marks 0.1 s, 1 s, 10 s, 100 s)"]
    low = 0.01
    for phase, points in series.items():
        for entries, seconds in points:
            steps = max(0, int(round(10 * math.log10(max(seconds, low) / low))))
            bar = "".join("|" if n and n % 10 == 0 else "=" for n in range(1, steps + 1))
            lines.append(f"{phase:>14} {entries:>9,}  {bar[:width]} {seconds:.3f}s")
    return "\n".join(lines)


def run(ctx: Any) -> list[dict[str, Any]]:
    """Scaling rows (and the hostile files with ``--huge``)."""
    from gen_session import generate

    sizes = [10_000, 100_000] + list(ctx.extra.get("entries") or [])
    if ctx.quick:
        sizes = [1_000, 10_000]
    rows: list[dict[str, Any]] = []
    figures: dict[int, dict[str, float]] = {}
    for entries in sizes:
        path = generate(entries)
        size = path.stat().st_size
        try:
            measured = _probe(path)
            measured["tree complete"] = tree_complete(path)[0]
        except Exception as error:  # noqa: BLE001 - reported in the table
            rows.append({"case": f"{entries:>8} scale (failed)", "notes": str(error)[:200]})
            continue
        figures[entries] = measured
        budget = size / 2 / MB + 150
        reference = figures.get(100_000)
        for phase in PHASES:
            row: dict[str, Any] = {
                "case": f"{entries:>8} {phase}",
                "median_s": measured[phase],
                "runs": 1,
                "size_mb": size / 1e6,
            }
            if phase != "floor":
                row["ratio"] = measured[phase] / measured["floor"]
            if reference is not None and entries > 100_000:
                growth = measured[phase] / reference[phase]
                row["target"] = "<=11x the 100k"
                row["notes"] = f"{growth:.1f}x the 100k figure for {entries / 100_000:.0f}x entries"
            rows.append(row)
        rows.append(
            {
                "case": f"{entries:>8} peak RSS (load, plan, context, navigate)",
                "peak_rss_mb": measured["peak_mb"],
                "size_mb": size / 1e6,
                "target": f"<={budget:.0f} MB",
                "notes": f"budget 0.5 x file + 150 MB = {budget:.0f} MB",
            }
        )
    chart = text_chart(
        {
            phase: [(n, f[phase]) for n, f in sorted(figures.items())]
            for phase in ("floor", "open+index", "tree complete", "plan")
        }
    )
    ctx.extra.setdefault("charts", []).append(chart)
    if ctx.extra.get("huge"):
        from gen_huge import CASES
        from gen_huge import generate as generate_huge

        for name in CASES:
            path = generate_huge(name)
            size = path.stat().st_size
            budget = size / 2 / MB + 150
            for command in HUGE_COMMANDS:
                try:
                    seconds, peak, status = _command(path, command)
                except Exception as error:  # noqa: BLE001
                    rows.append({"case": f"{name} {command} (failed)", "notes": str(error)[:200]})
                    continue
                rows.append(
                    {
                        "case": f"{name} {command}",
                        "median_s": seconds,
                        "runs": 1,
                        "peak_rss_mb": peak,
                        "size_mb": size / 1e6,
                        "target": f"<={budget:.0f} MB",
                        "notes": ("refused (memory limit)" if status == 2 else f"exit {status}")
                        + ("" if peak <= budget else "; OVER the memory budget"),
                    }
                )
            if name in APP_CASES:
                try:
                    seconds, peak, now, shown = _app(path)
                except Exception as error:  # noqa: BLE001
                    rows.append({"case": f"{name} app (failed)", "notes": str(error)[:200]})
                    continue
                rows.append(
                    {
                        "case": f"{name} app (open, G/g, all counted)",
                        "median_s": seconds,
                        "runs": 1,
                        "peak_rss_mb": peak,
                        "size_mb": size / 1e6,
                        "target": f"<={budget:.0f} MB",
                        "notes": f"headless 120x40; {shown:.0f} MB when the rows show, "
                        f"{now:.0f} MB once idle"
                        + ("" if peak <= budget else "; OVER the memory budget"),
                    }
                )
    return rows
