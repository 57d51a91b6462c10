"""UI benchmarks: first paint, responsive tree, event-loop lag while summaries stream, cut moves.

Cases (the app runs headless through Textual's ``run_test`` at 120x36 unless noted):

* **first paint** — from creating the app on the 100k-entry session to the first composed
  screen (status line, empty tree, progress bar); indexing runs in a worker, so this must not
  depend on the file size. Target <= 0.5 s.
* **first paint, real terminal** — process start (``tui-compactor FILE`` in tmux) to the status
  line on screen: interpreter start and imports included. Skipped without tmux.
* **responsive tree** — from creating the app to the file fully indexed and the tree showing
  rows.
* **event-loop lag** — p50 / p99 lateness of a 5 ms timer on the app's loop while three
  candidate summaries stream at the same time from the loopback test server (fast chunks, so
  many deltas). Target p99 <= 30 ms.
* **cut move** — keypress (``[``) to the new plan drawn, on the 100k session, median and max.
* **lag through flows** — lateness of a 5 ms timer through every flow on the 100k session, per
  flow. One flow at a time, several runs, with the median of their max / p99::

      python benchmarks/bench_ui.py --flow filter --flow "show plan" --runs 5
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench_speed import RUN_MARK, probe_env, wait_run_ended
from stall_tracer import StallTracer

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SIZE = (120, 36)
LAG_TICK_S = 0.005


def _percentile(samples: list[float], fraction: float) -> float:
    """Nearest-rank percentile of ``samples``."""
    ordered = sorted(samples)
    rank = max(0, min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1)))))
    return ordered[rank]


async def _until(pilot: Any, condition: Callable[[], bool], what: str, seconds: float) -> None:
    """Let the app run until ``condition`` holds.

    Polls with a plain sleep: ``pilot.pause`` walks every widget and forces a screen refresh
    each time, work the app itself never does, which would be measured as the app's lag.
    """
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"bench_ui: timed out waiting for {what}")
        await asyncio.sleep(0.005)


async def _settle(pilot: Any, seconds: float = 300) -> None:
    """Wait until no worker runs, so the app shuts down without work in flight."""
    from textual.worker import WorkerState

    def idle() -> bool:
        return not any(
            w.state in (WorkerState.PENDING, WorkerState.RUNNING) for w in pilot.app.workers
        )

    for _ in range(3):
        await _until(pilot, idle, "workers to finish", seconds)
        await pilot.pause()


def _make_app(path: Path, **options: Any) -> Any:
    """The real app on ``path``, started as ``tui-compactor open`` starts it: the collector held
    until the first screen is drawn (``collector.hold_for_start_up``; without it the start-up's
    ~50k objects were scanned by a full collection in the open flow, 12-30 ms of UI CPU that
    the command's app never pays); measuring debounces off, no file polling."""
    from tui_compactor.ui import collector

    collector.hold_for_start_up()
    from tui_compactor.ui.app import CompactorApp

    app = CompactorApp(path, follow=False, **options)
    app.gauge_debounce = 0
    app.settings_debounce = 0
    return app


def _tree_rows(app: Any) -> int:
    """Rows the session tree shows now."""
    from tui_compactor.ui.widgets.tree import SessionTree

    return len(app.query_one(SessionTree).rows)


async def _open_timings(path: Path) -> tuple[float, float]:
    """(first paint, responsive tree) in seconds for one headless open of ``path``."""
    import tui_compactor.ui.app  # noqa: F401 - imports are not part of the paint

    started = time.perf_counter()
    app = _make_app(path)
    async with app.run_test(size=SIZE) as pilot:
        first_paint = time.perf_counter() - started
        await _until(
            pilot,
            lambda: app.session is not None and app.session.complete and _tree_rows(app) > 0,
            "the tree",
            300,
        )
        responsive = time.perf_counter() - started
        await _settle(pilot)
    return first_paint, responsive


FRESH_CODE = (
    "import json, sys; sys.path.insert(0, {here!r}); import bench_ui; "
    "result = bench_ui.{function}(**json.loads(sys.stdin.read())); "
    "open({out!r}, 'w').write(json.dumps(result))"
)


def _fresh(function: str, **kwargs: Any) -> Any:
    """``function(**kwargs)`` of this module run in a fresh Python process (``probe_env``),
    its output printed as it comes, its result passed back as JSON. Each run of the app then
    pays what a user's app pays once per process: imports, and the cl100k encoder built (in
    a counting process or in this one); several runs in one process would let only the
    first pay for it."""
    with tempfile.TemporaryDirectory(prefix="tuic-bench-run-") as tmp, probe_env() as env:
        out = Path(tmp) / "result.json"
        code = FRESH_CODE.format(here=str(HERE), function=function, out=str(out))
        subprocess.run([sys.executable, "-c", code], input=json.dumps(kwargs), text=True,
                       env=env, check=True)  # fmt: skip
        return json.loads(out.read_text())


def _open_run(path: str) -> list[float]:
    """``_open_timings`` of ``path`` (run by ``_fresh``)."""
    return list(asyncio.run(_open_timings(Path(path))))


def _streaming_run(path: str) -> tuple[list[float], int, float]:
    """``_lag_while_streaming`` of three streams (run by ``_fresh``)."""
    return asyncio.run(_lag_while_streaming(Path(path), 3))


def _cut_moves_run(path: str, moves: int) -> list[float]:
    """``_cut_moves`` (run by ``_fresh``)."""
    return asyncio.run(_cut_moves(Path(path), moves))


def _flows_run(
    path: str, moves: int, only: list[str] | None, trace_ms: float | None
) -> dict[str, dict[str, list[float]]]:
    """``_lag_through_flows`` (run by ``_fresh``): its samples and UI CPU per flow; with
    ``trace_ms``, the stalls over that many ms are traced and printed."""
    tracer = None if trace_ms is None else StallTracer(trace_ms / 1000)
    cpu: dict[str, list[float]] = {}
    wanted = set(only) if only is not None else None
    samples = asyncio.run(_lag_through_flows(Path(path), moves, wanted, tracer, cpu))
    if tracer is not None:
        tracer.keep(set(only or FLOWS))
        print(f"stalls over {trace_ms:.0f} ms in this run:")
        tracer.report()
    return {"samples": samples, "cpu": cpu}


def _tmux_first_paint(path: Path) -> float | None:
    """Process start to the status line in a real terminal (tmux), or None without tmux."""
    if shutil.which("tmux") is None:
        return None
    command = [sys.executable, "-m", "tui_compactor"]  # this checkout (PYTHONPATH below)
    socket = f"tuic-bench-{os.getpid()}-{uuid.uuid4().hex[:6]}"
    line = " ".join([*command, str(path), "--no-follow"])  # a leading option hides the path
    with probe_env() as env:
        env[RUN_MARK] = socket  # waited for below: the next run shares the cores with none of it
        started = time.perf_counter()
        subprocess.run(
            ["tmux", "-L", socket, "-f", "/dev/null", "new-session", "-d", "-s", "b",
             "-x", str(SIZE[0]), "-y", str(SIZE[1]), "-c", str(ROOT), line],
            env=env, check=True, timeout=30,
        )  # fmt: skip
        try:
            deadline = started + 60
            while time.perf_counter() < deadline:
                screen = subprocess.run(
                    ["tmux", "-L", socket, "capture-pane", "-p", "-t", "b"],
                    capture_output=True, text=True, timeout=10,
                ).stdout  # fmt: skip
                if path.name in screen:
                    return time.perf_counter() - started
                time.sleep(0.005)
            return None
        finally:
            subprocess.run(["tmux", "-L", socket, "kill-server"], capture_output=True,
                           timeout=10)  # fmt: skip
            wait_run_ended(socket)  # the app's counting process outlives the tmux server


STREAM_CHUNK_CHARS = 4
STREAM_CHUNK_DELAY_S = 0.01
"""About 100 tokens a second per stream: a fast hosted model."""

SERVER_CODE = """
import sys
sys.path.insert(0, {root!r})
from tests.support.llm_server import LLMServer
reply = {reply!r}
with LLMServer() as server:
    server.behaviour.chunk_chars = {chars}
    server.behaviour.chunk_delay = {delay}
    server.behaviour.reply = lambda request: reply
    print(server.port, flush=True)
    sys.stdin.read()
"""
"""The loopback server runs in its own process, as a real server would (its CPU and GIL are
not the app's)."""

LONG_REPLY = (
    "## Goal\nKeep the UI responsive while summaries stream.\n\n## Progress\n### Done\n"
    + "".join(
        f"- [x] step {n}: edited `src/module_{n}.py` and ran `make test`\n" for n in range(40)
    )
    + "\n## Next Steps\n1. continue\n"
)


async def _lag_while_streaming(path: Path, streams: int) -> tuple[list[float], int, float]:
    """Timer lateness samples (s) while ``streams`` candidates stream; (samples, deltas, secs)."""
    from tui_compactor.config import Profile
    from tui_compactor.summarize.compaction import CompactionJob
    from tui_compactor.summarize.providers import make_summarizer
    from tui_compactor.ui.widgets.compaction import CompactionPanel

    code = SERVER_CODE.format(root=str(ROOT), reply=LONG_REPLY, chars=STREAM_CHUNK_CHARS,
                              delay=STREAM_CHUNK_DELAY_S)  # fmt: skip
    server = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline())
        profile = Profile(name="local", provider="openai", base_url=f"http://127.0.0.1:{port}/v1",
                          model="bench", max_retries=0)  # fmt: skip
        environ = {"OPENAI_API_KEY": "bench-not-a-key"}
        app = _make_app(path)
        async with app.run_test(size=SIZE) as pilot:
            await _until(pilot, lambda: app.session is not None and app.session.complete,
                         "the session", 120)  # fmt: skip
            await pilot.press("G", "c")
            await _until(pilot, lambda: app.plan is not None, "the plan", 120)
            await _settle(pilot)  # token counting etc. finished: measure the streaming alone
            plan = app.plan
            jobs = [
                CompactionJob(
                    plan, app.session, make_summarizer(profile, environ=environ), app.settings
                )  # fmt: skip
                for _ in range(streams)
            ]
            panel = CompactionPanel(jobs, id="bench-panel")
            host = app.query("#compaction-host")
            await (host.first() if host else app.screen).mount(panel)
            app.action_show_tab("tab-compaction")
            samples: list[float] = []
            started = time.perf_counter()
            await _until(pilot, lambda: panel.running, "the run to start", 30)
            while panel.running:
                before = time.perf_counter()
                await asyncio.sleep(LAG_TICK_S)
                samples.append(time.perf_counter() - before - LAG_TICK_S)
            seconds = time.perf_counter() - started
            deltas = sum(p.append_count for v in panel.candidates for p in v.panes.values())
            failed = [v.state.error for v in panel.candidates if v.state.error]
            await _settle(pilot)
            if failed:
                raise RuntimeError(f"a summary failed: {failed[0]}")
    finally:
        server.communicate(input="", timeout=30)
    return samples, deltas, seconds


async def _cut_moves(path: Path, moves: int) -> list[float]:
    """Seconds from pressing ``[`` to the new plan drawn, ``moves`` times.

    The end time is taken when the app has handled the new plan (tree coloured, plan pane
    updated), not when ``pilot.press`` returns: Pilot waits for the whole app to be idle, and
    the background token counter of a 100k session keeps it busy for minutes.
    """
    from tui_compactor.ui.app import CompactorApp

    timings: list[float] = []
    drawn: list[float] = []

    class TimedApp(CompactorApp):
        def on_plan_ready(self, message: Any) -> None:
            super().on_plan_ready(message)
            drawn.append(time.perf_counter())

    from tui_compactor.ui import collector

    collector.hold_for_start_up()  # as ``_make_app``
    app = TimedApp(path, follow=False)
    app.gauge_debounce = 0
    app.settings_debounce = 0
    async with app.run_test(size=SIZE) as pilot:
        await _until(pilot, lambda: app.session is not None and app.session.complete,
                     "the session", 300)  # fmt: skip
        await pilot.press("G", "c")
        await _until(pilot, lambda: app.plan is not None, "the plan", 120)
        for _ in range(moves):
            previous = app.plan
            if not any(cut < previous.first_kept_index for cut in previous.valid_cut_points):
                break  # no earlier valid cut point: the key would only say so
            drawn.clear()
            started = time.perf_counter()
            await pilot.press("left_square_bracket")
            await _until(pilot, lambda p=previous: app.plan is not p and bool(drawn),
                         "the moved cut", 600)  # fmt: skip
            timings.append(drawn[0] - started)
        await _settle(pilot)
    return timings


class LagSampler:
    """Lateness of a 5 ms timer on the app's event loop, labelled by the flow running.

    With a ``StallTracer``, each tick also tells the tracer the loop is alive (and the flow),
    so its watchdog samples the main thread's stack only while the loop stalls.
    """

    def __init__(self, tracer: StallTracer | None = None) -> None:
        self._flow = "start"
        self.samples: dict[str, list[float]] = {}
        self.cpu: dict[str, list[float]] = {}
        """Per flow: the UI thread's CPU seconds between two ticks (``time.thread_time``): what
        the app itself spent, which a loaded machine stretches far less than the wall time."""
        self.tracer = tracer
        self._task: asyncio.Task[None] | None = None

    @property
    def flow(self) -> str:
        """The flow the next samples belong to."""
        return self._flow

    @flow.setter
    def flow(self, flow: str) -> None:
        self._flow = flow
        if self.tracer is not None:
            self.tracer.flow = flow

    async def _run(self) -> None:
        cpu_before = time.thread_time()
        while True:
            before = time.perf_counter()
            await asyncio.sleep(LAG_TICK_S)
            if self.tracer is not None:
                self.tracer.tick()
            late = time.perf_counter() - before - LAG_TICK_S
            cpu = time.thread_time()
            self.samples.setdefault(self.flow, []).append(max(0.0, late))
            self.cpu.setdefault(self.flow, []).append(cpu - cpu_before)
            cpu_before = cpu

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run())
        if self.tracer is not None:
            self.tracer.start()

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            self._task = None
            if self.tracer is not None:
                self.tracer.stop()


FLOWS = (
    "open",
    "scroll to end",
    "filter",
    "search",
    "show plan",
    "move cut x20",
    "context tab",
    "compaction, 3 streams",
    "navigate",
)
"""The flows ``_lag_through_flows`` drives, in order."""

FLOW_NEEDS = {"move cut x20": "show plan", "compaction, 3 streams": "show plan"}
"""A flow that starts from the state another flow leaves (run first, its lag not kept)."""


async def _lag_through_flows(
    path: Path,
    moves: int = 20,
    only: set[str] | None = None,
    tracer: StallTracer | None = None,
    cpu: dict[str, list[float]] | None = None,
) -> dict[str, list[float]]:
    """Event-loop lag through every flow on ``path``: open, scroll to the end, filter, search,
    show the plan, move the cut ``moves`` times, the Context tab, a compaction with three
    streams, navigate. Returns lateness samples (s) per flow; with ``only``, those flows alone
    (after the open and what they start from, whose lag is not kept). A ``tracer`` records the
    stacks of the loop's stalls meanwhile. ``cpu`` receives the UI thread's CPU seconds
    between two ticks, per flow."""
    from tui_compactor.config import Profile
    from tui_compactor.summarize.compaction import CompactionJob
    from tui_compactor.summarize.providers import make_summarizer
    from tui_compactor.ui.widgets.compaction import CompactionPanel

    wanted = set(FLOWS) if only is None else set(only)
    unknown = wanted - set(FLOWS)
    if unknown:
        raise ValueError(f"unknown flows {sorted(unknown)}; known: {', '.join(FLOWS)}")
    running = {"open"} | wanted | {FLOW_NEEDS[flow] for flow in wanted if flow in FLOW_NEEDS}
    server: subprocess.Popen[str] | None = None
    if "compaction, 3 streams" in running:
        code = SERVER_CODE.format(root=str(ROOT), reply=LONG_REPLY, chars=STREAM_CHUNK_CHARS,
                                  delay=STREAM_CHUNK_DELAY_S)  # fmt: skip
        server = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True)  # fmt: skip
    sampler = LagSampler(tracer)
    try:
        app = _make_app(path)
        async with app.run_test(size=SIZE) as pilot:

            async def scroll_to_end() -> None:
                await pilot.press("G")
                await pilot.pause(0.2)
                await pilot.press("g")
                await pilot.pause(0.2)

            async def filter_rows() -> None:
                for _ in range(2):
                    await pilot.press("f")
                    await _settle(pilot, 600)
                await pilot.press("F", "F")
                await _settle(pilot, 600)

            async def search() -> None:
                await pilot.press("slash", *"cache", "enter")
                await _settle(pilot, 600)
                await pilot.press("n", "n", "escape")

            async def show_plan() -> None:
                await pilot.press("l", "c")
                await _until(pilot, lambda: app.plan is not None, "the plan", 300)
                await _settle(pilot, 600)

            async def move_cut() -> None:
                for _ in range(moves):
                    previous = app.plan
                    if previous is None or not any(
                        cut < previous.first_kept_index for cut in previous.valid_cut_points
                    ):
                        break
                    await pilot.press("left_square_bracket")
                    await _until(pilot, lambda p=previous: app.plan is not p, "the moved cut",
                                 300)  # fmt: skip
                await _settle(pilot, 600)

            async def context_tab() -> None:
                await pilot.press("2")
                await _settle(pilot, 600)
                await pilot.press("1")

            async def compaction() -> None:
                assert server is not None and server.stdout is not None
                port = int(server.stdout.readline())
                profile = Profile(name="local", provider="openai",
                                  base_url=f"http://127.0.0.1:{port}/v1", model="bench",
                                  max_retries=0)  # fmt: skip
                environ = {"OPENAI_API_KEY": "bench-not-a-key"}
                jobs = [CompactionJob(app.plan, app.session,
                                      make_summarizer(profile, environ=environ), app.settings)
                        for _ in range(3)]  # fmt: skip
                panel = CompactionPanel(jobs, id="bench-panel")
                host = app.query("#compaction-host")
                await (host.first() if host else app.screen).mount(panel)
                app.action_show_tab("tab-compaction")
                await _until(pilot, lambda: panel.running, "the run to start", 60)
                await _until(pilot, lambda: not panel.running, "the run to end", 600)
                await panel.remove()
                await _settle(pilot, 600)

            async def navigate() -> None:
                await pilot.press("1", "g", "j", "j", "enter")
                await pilot.pause(1.0)
                await pilot.press("escape")
                await _settle(pilot, 600)

            steps: dict[str, Callable[[], Any]] = {
                "scroll to end": scroll_to_end, "filter": filter_rows, "search": search,
                "show plan": show_plan, "move cut x20": move_cut, "context tab": context_tab,
                "compaction, 3 streams": compaction, "navigate": navigate,
            }  # fmt: skip
            sampler.start()
            sampler.flow = "open"
            await _until(pilot, lambda: app.session is not None and app.session.complete
                         and _tree_rows(app) > 0, "the session", 300)  # fmt: skip
            await _settle(pilot, 600)
            for flow in FLOWS[1:]:
                if flow in running:
                    sampler.flow = flow
                    await steps[flow]()
            sampler.stop()
    finally:
        sampler.stop()
        if server is not None:
            server.communicate(input="", timeout=30)
    if cpu is not None:
        cpu.update({flow: values for flow, values in sampler.cpu.items() if flow in wanted})
    return {flow: values for flow, values in sampler.samples.items() if flow in wanted}


def _flows_main(argv: list[str] | None = None) -> int:
    """CLI: the lag of chosen flows, several runs, each run's and the median max / p99 (ms)."""
    import argparse

    sys.path.insert(0, str(HERE))
    from gen_session import generate

    parser = argparse.ArgumentParser(
        description="Event-loop lag (max / p99 ms) through the app's flows on a big session."
    )
    parser.add_argument(
        "--flow",
        action="append",
        choices=FLOWS,
        metavar="FLOW",
        help=f"one of: {', '.join(FLOWS)} (repeatable; default all)",
    )
    parser.add_argument("--runs", type=int, default=3, help="runs (a fresh app each)")
    parser.add_argument("--entries", type=int, default=100000, help="session size")
    parser.add_argument("--moves", type=int, default=20, help="cut moves")
    parser.add_argument(
        "--trace-stalls",
        nargs="?",
        type=float,
        const=30.0,
        metavar="MS",
        help="sample the UI thread's stack while the loop stalls over MS ms (default 30) "
        "and print the longest stalls per flow with their stacks",
    )
    args = parser.parse_args(argv)
    path = generate(args.entries)
    results: dict[str, list[tuple[float, float, int, float, float]]] = {}
    for run in range(args.runs):
        measured = _fresh("_flows_run", path=str(path), moves=args.moves, only=args.flow,
                          trace_ms=args.trace_stalls)  # fmt: skip
        for flow, values in measured["samples"].items():
            spent = measured["cpu"].get(flow) or [0.0]
            figures = (max(values) * 1000, _percentile(values, 0.99) * 1000, len(values),
                       max(spent) * 1000, _percentile(spent, 0.99) * 1000)  # fmt: skip
            results.setdefault(flow, []).append(figures)
            print(f"run {run + 1}: {flow:24} max {figures[0]:6.1f}  p99 {figures[1]:6.1f}  "
                  f"ticks {figures[2]}  UI CPU max {figures[3]:6.1f}  p99 {figures[4]:6.1f}",
                  flush=True)  # fmt: skip
    print(f"median of {args.runs} runs, each in a fresh process (load "
          f"{os.getloadavg()[0]:.1f}; ms; UI CPU: the UI thread's CPU time between two "
          "ticks):")  # fmt: skip
    for flow in FLOWS:
        if flow in results:
            runs = results[flow]
            print(
                f"  {flow:24} max {statistics.median(r[0] for r in runs):6.1f}  "
                f"p99 {statistics.median(r[1] for r in runs):6.1f}  "
                f"UI CPU max {statistics.median(r[3] for r in runs):6.1f}  "
                f"p99 {statistics.median(r[4] for r in runs):6.1f}"
            )
    return 0


def run(ctx: Any) -> list[dict[str, Any]]:
    """All UI cases (``--quick``: the 10k session instead of 100k)."""
    from gen_session import generate

    entries = 10000 if ctx.quick else 100000
    big = generate(entries)
    size_mb = big.stat().st_size / 1e6
    rows: list[dict[str, Any]] = []

    def case(name: str, measure: Callable[[], list[dict[str, Any]]]) -> None:
        """Run one case; a failure becomes a row instead of hiding the other cases."""
        try:
            rows.extend(measure())
        except Exception as error:  # noqa: BLE001 - reported in the table
            rows.append({"case": f"{name} (failed)", "notes": f"{type(error).__name__}: {error}"})

    def opening() -> list[dict[str, Any]]:
        opens = [_fresh("_open_run", path=str(big)) for _ in range(max(1, ctx.runs - 2))]
        paints = [first for first, _ in opens]
        trees = [tree for _, tree in opens]
        return [
            {
                "case": f"{entries:>6} first paint (headless)",
                "median_s": statistics.median(paints),
                "runs": len(paints), "size_mb": size_mb, "target": "<=0.5 s",
                "notes": f"max {max(paints):.3f}s; app created -> ready (on_mount done), "
                "modules imported",
            },
            {
                "case": f"{entries:>6} responsive tree", "median_s": statistics.median(trees),
                "runs": len(trees), "size_mb": size_mb,
                "notes": f"max {max(trees):.3f}s; indexed, tree rows shown",
            },
        ]  # fmt: skip

    def terminal() -> list[dict[str, Any]]:
        measured = [value for value in (_tmux_first_paint(big) for _ in range(3)) if value]
        if not measured:
            return []
        return [{
            "case": f"{entries:>6} first paint (tmux, process)",
            "median_s": statistics.median(measured), "runs": len(measured), "size_mb": size_mb,
            "target": "<=0.5 s",
            "notes": "process start -> status line on a real terminal (imports included)",
        }]  # fmt: skip

    def lag() -> list[dict[str, Any]]:
        sample = ROOT / "tui_compactor" / "data" / "sample-session.jsonl"
        with tempfile.TemporaryDirectory() as tmp:
            copy = Path(tmp) / sample.name
            shutil.copyfile(sample, copy)
            samples, deltas, seconds = _fresh("_streaming_run", path=str(copy))
        p50, p99 = _percentile(samples, 0.5), _percentile(samples, 0.99)
        return [
            {
                "case": "lag p50, 3 summaries streaming", "median_s": p50, "runs": len(samples),
                "notes": f"{deltas} deltas in {seconds:.1f}s, {STREAM_CHUNK_CHARS} chars every "
                f"{STREAM_CHUNK_DELAY_S * 1000:.0f} ms per stream",
            },
            {
                "case": "lag p99, 3 summaries streaming", "median_s": p99, "runs": len(samples),
                "target": "<=30 ms", "notes": f"max {max(samples) * 1000:.1f} ms",
            },
        ]  # fmt: skip

    def cut_moves() -> list[dict[str, Any]]:
        moves = _fresh("_cut_moves_run", path=str(big), moves=3 if ctx.quick else 5)
        return [{
            "case": f"{entries:>6} cut move keypress->plan",
            "median_s": statistics.median(moves), "runs": len(moves), "size_mb": size_mb,
            "notes": f"max {max(moves):.3f}s",
        }]  # fmt: skip

    def flows() -> list[dict[str, Any]]:
        measured = _fresh("_flows_run", path=str(big), moves=5 if ctx.quick else 20, only=None,
                          trace_ms=None)  # fmt: skip
        samples: dict[str, list[float]] = measured["samples"]
        cpu: dict[str, list[float]] = measured["cpu"]
        everything = [value for values in samples.values() for value in values]
        worst = sorted(samples.items(), key=lambda item: -max(item[1]))
        per_flow = "; ".join(
            f"{flow} {max(values) * 1000:.0f}/{_percentile(values, 0.99) * 1000:.0f}"
            for flow, values in worst
        )
        per_flow += "; UI thread CPU between two ticks, max/p99 ms: " + "; ".join(
            f"{flow} {max(spent) * 1000:.0f}/{_percentile(spent, 0.99) * 1000:.0f}"
            for flow, spent in cpu.items()
            if spent
        )
        return [
            {"case": f"{entries:>6} lag max, every flow", "median_s": max(everything),
             "runs": len(everything), "size_mb": size_mb, "target": "<=50 ms",
             "notes": f"max/p99 ms per flow: {per_flow}"},
            {"case": f"{entries:>6} lag p99, every flow",
             "median_s": _percentile(everything, 0.99), "runs": len(everything),
             "size_mb": size_mb, "target": "<=16 ms",
             "notes": "open, G/g, filter, search, plan, cut x20, Context, 3 streams, navigate"},
        ]  # fmt: skip

    case(f"{entries:>6} lag through flows", flows)
    case(f"{entries:>6} open", opening)
    case(f"{entries:>6} first paint (tmux)", terminal)
    case("lag while streaming", lag)
    case(f"{entries:>6} cut move", cut_moves)
    return rows


if __name__ == "__main__":
    sys.exit(_flows_main())
