"""Where a first full screen's time goes: the app traced in tmux, step by step.

``bench_speed.py --first-screen`` measures process start to the screen seen; this says where
that time went, per session (and per checkout with ``--against``), medians of interleaved runs:
the wall time and the UI thread's CPU (``time.thread_time``) at each step: the interpreter up,
the app imported, ``on_mount``, the first frame after it handed to Textual's writer thread
(``post_display_hook`` called), the writer thread starting to write it (it has the GIL:
the bytes reach the terminal next) and its ``write`` returned (the GIL taken again after the
system call), and the probe seeing the screen (``bench_speed.app_ready``). The app
runs as ``tui-compactor open`` does (``cli.script``), its collector held during start-up as
``open`` holds it; the trace wraps the writer thread's output file,
``CompactorApp.post_display_hook`` and ``on_mount`` (a few microseconds a call) and appends
one line per step to a log file.

    python benchmarks/first_screen_trace.py --runs 9 --entries 10 --entries 100000 \\
        [--against ../main-checkout]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent

STEPS = ("started", "imported", "mounted", "queued", "writing", "written", "seen")
"""The steps of one run, in order (``seen`` is the probe's)."""


def launch(session: str) -> None:
    """Run the app on ``session`` with the trace (in the measured process)."""
    started = float(os.environ["TUIC_TRACE_T0"])
    log = open(os.environ["TUIC_TRACE_LOG"], "a", buffering=1)  # noqa: SIM115 - until exit

    def note(step: str) -> None:
        log.write(f"{step} {time.time() - started:.5f} {time.thread_time() * 1000:.2f}\n")

    note("started")
    from tui_compactor.ui import collector

    collector.hold_for_start_up()  # as ``open`` does before it imports the app
    from textual.drivers import _writer_thread

    from tui_compactor.ui.app import CompactorApp

    note("imported")
    state = {"mounted": False, "queued": False, "written": False}
    mount = CompactorApp.on_mount

    def on_mount(self: CompactorApp) -> None:
        state["mounted"] = state["frame"] = True  # the next big write is the first frame
        note("mounted")
        mount(self)

    CompactorApp.on_mount = on_mount  # type: ignore[method-assign]
    hook = CompactorApp.post_display_hook

    def post_display_hook(self: CompactorApp) -> None:
        # A frame's strings are in the writer thread's queue (before the app's own hook).
        if state["mounted"] and not state["queued"]:
            state["queued"] = True
            note("queued")
        hook(self)

    CompactorApp.post_display_hook = post_display_hook  # type: ignore[method-assign]

    class Output:
        """The writer thread's output: notes when the first frame's write returned."""

        def __init__(self, file: Any) -> None:
            self.file = file

        def write(self, text: str) -> int:
            frame = state.get("frame") and not state["written"] and len(text) > 1000
            if frame:
                note("writing")  # the writer thread has the frame and the GIL
            written = int(self.file.write(text))
            if frame:
                state["written"] = True
                note("written")  # its write returned (the GIL taken again after it)
            return written

        def __getattr__(self, name: str) -> Any:
            return getattr(self.file, name)

    init = _writer_thread.WriterThread.__init__

    def writer_init(self: Any, file: Any) -> None:
        init(self, Output(file))

    _writer_thread.WriterThread.__init__ = writer_init  # type: ignore[method-assign]
    sys.argv = ["tui-compactor", session, "--no-follow"]
    from tui_compactor.cli import script

    script()


def run_once(root: Path, session: Path) -> dict[str, tuple[float, float]] | None:
    """One traced run of ``root``'s app on ``session``: step -> (wall s, UI-thread CPU ms)."""
    import bench_speed

    with tempfile.NamedTemporaryFile("r", suffix=".log") as log:
        os.environ["TUIC_TRACE_LOG"] = log.name
        os.environ["TUIC_TRACE_T0"] = repr(time.time())
        saved = bench_speed.ROOT
        bench_speed.ROOT = root  # the tmux window's directory and PYTHONPATH
        try:
            seen = bench_speed.tmux_first_screen(
                [sys.executable, str(HERE / "first_screen_trace.py"), "--launch", str(session)],
                bench_speed.app_ready,
            )
        finally:
            bench_speed.ROOT = saved
            del os.environ["TUIC_TRACE_LOG"], os.environ["TUIC_TRACE_T0"]
        steps: dict[str, tuple[float, float]] = {}
        for line in log.read().splitlines():
            step, wall, cpu = line.split()
            steps.setdefault(step, (float(wall), float(cpu)))
    if seen is None or any(step not in steps for step in STEPS[:-1]):
        return None  # e.g. the screen seen (and the app ended) before the frame's write returned
    steps["seen"] = (seen, float("nan"))
    return steps


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=9, help="interleaved rounds (default 9)")
    parser.add_argument("--entries", type=int, action="append", default=None, metavar="N")
    parser.add_argument("--against", type=Path, action="append", default=[], metavar="DIR")
    parser.add_argument("--launch", help=argparse.SUPPRESS)  # the measured process
    args = parser.parse_args(argv)
    if args.launch:
        launch(args.launch)
        return 0
    sys.path.insert(0, str(HERE))
    from gen_session import generate  # type: ignore[import-not-found]

    sessions = [(n, generate(n)) for n in args.entries or [10, 100_000]]
    roots = [HERE.parent, *(path.resolve() for path in args.against)]
    load = os.getloadavg()[0]
    runs: dict[tuple[Path, int], list[dict[str, tuple[float, float]]]] = {}
    for round_ in range(args.runs):
        cases = [(root, n, path) for root in roots for n, path in sessions]
        for root, n, path in cases if round_ % 2 == 0 else cases[::-1]:  # both orders
            steps = run_once(root, path)
            if steps is not None:
                runs.setdefault((root, n), []).append(steps)
    header = "  ".join(f"{step:>15}" for step in STEPS)
    print(f"{'checkout':<28} {'entries':>8}  runs  {header}")
    for (root, n), values in runs.items():
        cells = []
        for step in STEPS:
            wall = statistics.median(v[step][0] for v in values) * 1000
            cpu = statistics.median(v[step][1] for v in values)
            shown = step not in ("writing", "written", "seen")  # the writer's, the probe's
            cells.append(f"{wall:7.1f}" + (f" ({cpu:5.1f})" if shown else ""))
        row = "  ".join(f"{cell:>15}" for cell in cells)
        print(f"{str(root)[-28:]:<28} {n:>8}  {len(values):>4}  {row}")
    for (root, n), values in runs.items():
        for step in ("writing", "written", "seen"):
            gaps = sorted((v[step][0] - v["queued"][0]) * 1000 for v in values)
            print(
                f"first frame, handed over -> {step} (ms): median "
                f"{statistics.median(gaps):5.1f}, each {' '.join(f'{g:.1f}' for g in gaps)}"
                f"  ({n} entries, {root})"
            )
    print("\nwall ms since process start (UI-thread CPU ms), medians; a run whose trace or")
    print("screen did not come is left out (runs)")
    print(f"load average (1 min) at start and end: {load:.1f} {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
