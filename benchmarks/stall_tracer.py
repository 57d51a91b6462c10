"""Where the event loop stalls: a watchdog thread samples the main thread's stack during stalls.

The lag sampler of ``bench_ui.py`` ticks a 5 ms timer on the app's loop and calls
``StallTracer.tick`` after each sleep. A watchdog thread polls every ``interval`` seconds; once
the loop has not ticked for ``threshold`` seconds it records the main thread's stack
(``sys._current_frames``) and what every other thread is doing, every ``interval`` seconds,
until the next tick ends the stall. Each stall keeps its wall time, the main thread's CPU time
over it (wall much larger than CPU: the loop waited for the GIL held by another thread, or for
the OS scheduler), the cyclic garbage collections inside it (``gc.callbacks``), and its stack
samples. ``report`` prints the longest stalls per flow with their most frequent stacks, and
the functions seen most often across all stall samples of the flow.

The watchdog needs the GIL to take a sample, which it gets at the interpreter's switch
interval (5 ms): a stall shorter than ``threshold`` costs only a sleep and a comparison.
"""

from __future__ import annotations

import asyncio
import gc
import re
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

__all__ = ["Stall", "StallTracer"]

_IDLE_FUNCTIONS = frozenset(
    {"wait", "select", "sleep", "_wait_for_tstate_lock", "get", "poll", "_worker"}
)
"""Innermost functions of a thread that waits (it holds no GIL); ``_worker`` is an idle
``ThreadPoolExecutor`` thread blocked on its queue."""

_WIDGET_FUNCTIONS = frozenset(
    {"render_lines", "render_line", "_render", "arrange", "get_content_height", "render"}
)
"""Frames labelled with the class (and id) of their ``self``: which widget was drawn or laid
out."""


def _frame_label(filename: str, line: int, function: str) -> str:
    """``package/module.py:line function`` with the install prefix cut off."""
    path = Path(filename)
    parts = path.parts
    for anchor in ("tui_compactor", "textual", "rich", "asyncio", "httpx", "httpcore", "anyio"):
        if anchor in parts:
            start = len(parts) - 1 - parts[::-1].index(anchor)
            return f"{'/'.join(parts[start:])}:{line} {function}"
    return f"{path.name}:{line} {function}"


def _owner(frame: FrameType) -> str:
    """`` [Class#id]`` for a method frame of a widget-like ``self``, else ``""``."""
    owner = frame.f_locals.get("self")
    if owner is None or not hasattr(owner, "_css_type_name"):
        return ""
    name = getattr(owner, "id", None)
    return f" [{type(owner).__name__}{'#' + name if name else ''}]"


def _stack(frame: FrameType | None, depth: int) -> tuple[str, ...]:
    """The innermost ``depth`` frames of ``frame``, outermost first; drawing and layout
    frames name the widget they work on."""
    labels: list[str] = []
    while frame is not None and len(labels) < depth:
        code = frame.f_code
        label = _frame_label(code.co_filename, frame.f_lineno, code.co_name)
        if code.co_name in _WIDGET_FUNCTIONS:
            label += _owner(frame)
        labels.append(label)
        frame = frame.f_back
    labels.reverse()
    return tuple(labels)


def _describe(handle: asyncio.Handle) -> str:
    """What a loop callback runs: a task's coroutine (and the widget whose messages it
    processes), or the callback's name."""
    callback = getattr(handle, "_callback", None)
    task = getattr(callback, "__self__", None)
    if isinstance(task, asyncio.Task):
        coro = task.get_coro()
        name = getattr(coro, "__qualname__", repr(coro))
        frame = getattr(coro, "cr_frame", None)
        owner = _owner(frame) if frame is not None else ""
        timer = frame.f_locals.get("self") if frame is not None else None
        if type(timer).__name__ == "Timer":
            callback = getattr(timer, "_callback", None)
            what = getattr(callback, "__qualname__", None) or getattr(timer, "_target_repr", "")
            owner = f" [{getattr(timer, 'name', '')}: {what}]"
        return f"task {name}{owner}"
    name = getattr(callback, "__qualname__", None) or repr(callback)
    owner = getattr(callback, "__self__", None)
    return f"{name} of {type(owner).__name__}" if owner is not None else name


@dataclass
class Stall:
    """One stretch of ``wall`` seconds without a loop tick."""

    flow: str
    started: float
    wall: float = 0.0
    cpu: float = 0.0
    """The main thread's CPU seconds between the ticks around the stall."""
    gc_seconds: float = 0.0
    gc_collections: list[tuple[int, float, str]] = field(default_factory=list)
    """(generation, seconds, thread name) of each collection inside the stall."""
    stacks: Counter[tuple[str, ...]] = field(default_factory=Counter)
    others: Counter[str] = field(default_factory=Counter)
    """``thread name: innermost frame`` of other threads that were not waiting."""
    samples: int = 0


class StallTracer:
    """Record the main thread's stacks while the loop does not tick (see the module doc)."""

    def __init__(
        self,
        threshold: float = 0.03,
        interval: float = 0.003,
        depth: int = 40,
        callback_cpu: float = 0.008,
    ) -> None:
        self.threshold = threshold
        self.interval = interval
        self.depth = depth
        self.callback_cpu = callback_cpu
        self.flow = "start"
        self.stalls: list[Stall] = []
        self.tick_cpu: dict[str, list[float]] = {}
        """Per flow: the main thread's CPU seconds between two loop ticks (the loop's own
        work, which a loaded machine stretches far less than the wall time)."""
        self.callbacks: list[tuple[str, float, str]] = []
        """(flow, CPU seconds, what) of loop callbacks over ``callback_cpu`` of CPU."""
        self._original_run: Any = None
        self._original_dispatch: Any = None
        self._messages: list[str] = []
        """Messages whose dispatch started in the loop callback running now."""
        self._lock = threading.Lock()
        self._last_tick = time.perf_counter()
        self._last_cpu = time.thread_time()
        self._current: Stall | None = None
        self._gc_started: dict[int, float] = {}
        self._gc_cpu_started: dict[int, float] = {}
        self._gc_scanned: dict[int, int] = {}
        self._gc_log: list[tuple[float, float, int, str]] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._main_ident = threading.main_thread().ident

    # -- the loop side ----------------------------------------------------------------------
    def tick(self) -> None:
        """Called on the loop after every timer tick: ends a stall in progress."""
        now = time.perf_counter()
        cpu = time.thread_time()
        with self._lock:
            stall = self._current
            if stall is not None:
                stall.wall = now - stall.started
                stall.cpu = cpu - self._last_cpu
                self._current = None
                self.stalls.append(stall)
            self.tick_cpu.setdefault(self.flow, []).append(cpu - self._last_cpu)
            self._last_tick = now
            self._last_cpu = cpu

    def _patch_callbacks(self) -> None:
        """Time every loop callback's CPU on the main thread (``asyncio.Handle._run``)."""
        original = asyncio.events.Handle._run
        self._original_run = original
        tracer = self

        def timed_run(handle: asyncio.Handle) -> None:
            if threading.get_ident() != tracer._main_ident:
                original(handle)
                return
            started = time.thread_time()
            tracer._messages.clear()
            try:
                original(handle)
            finally:
                cpu = time.thread_time() - started
                if cpu >= tracer.callback_cpu:
                    what = _describe(handle)
                    if tracer._messages:
                        what += f" handling {', '.join(tracer._messages[:4])}"
                    tracer.callbacks.append((tracer.flow, cpu, what))

        asyncio.events.Handle._run = timed_run  # type: ignore[method-assign]

        from textual.message_pump import MessagePump

        dispatch = MessagePump._dispatch_message
        self._original_dispatch = dispatch

        async def named_dispatch(pump: Any, message: Any) -> None:
            tracer._messages.append(f"{type(message).__name__} on {type(pump).__name__}")
            await dispatch(pump, message)

        MessagePump._dispatch_message = named_dispatch  # type: ignore[method-assign]

    # -- the watchdog -----------------------------------------------------------------------
    def _sample(self, stall: Stall) -> None:
        frames = sys._current_frames()
        main = frames.get(self._main_ident) if self._main_ident is not None else None
        stall.stacks[_stack(main, self.depth)] += 1
        stall.samples += 1
        names = {thread.ident: thread.name for thread in threading.enumerate()}
        me = threading.get_ident()
        for ident, frame in frames.items():
            if ident in (self._main_ident, me):
                continue
            code = frame.f_code
            if code.co_name in _IDLE_FUNCTIONS:
                continue
            label = _frame_label(code.co_filename, frame.f_lineno, code.co_name)
            stall.others[f"{names.get(ident, ident)}: {label}"] += 1

    def _watch(self) -> None:
        while not self._stop.wait(self.interval):
            now = time.perf_counter()
            with self._lock:
                if now - self._last_tick < self.threshold:
                    continue
                if self._current is None:
                    self._current = Stall(self.flow, self._last_tick)
                self._sample(self._current)

    def _on_gc(self, phase: str, info: dict[str, Any]) -> None:
        ident = threading.get_ident()
        generation = info.get("generation", -1)
        if phase == "start":
            if generation == 2:  # what the collection scans (counted before it is timed)
                self._gc_scanned[ident] = sum(len(gc.get_objects(g)) for g in range(3))
            self._gc_started[ident] = time.perf_counter()
            self._gc_cpu_started[ident] = time.thread_time()
        elif ident in self._gc_started:
            started = self._gc_started.pop(ident)
            cpu = time.thread_time() - self._gc_cpu_started.pop(ident)
            name = threading.current_thread().name
            self._gc_log.append((started, time.perf_counter(), generation, name))
            scanned = self._gc_scanned.pop(ident, None)
            if cpu >= self.callback_cpu / 4:
                what = f"gc generation {generation} in {name}"
                if scanned is not None:
                    what += f", {scanned:,} objects scanned, {info.get('collected', 0):,} freed"
                self.callbacks.append((self.flow, cpu, what))

    def start(self) -> None:
        """Start the watchdog and the garbage-collection log."""
        self._stop.clear()
        self._last_tick = time.perf_counter()
        self._last_cpu = time.thread_time()
        gc.callbacks.append(self._on_gc)
        self._patch_callbacks()
        self._thread = threading.Thread(target=self._watch, name="stall-tracer", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop the watchdog; attribute the collections to the stalls they fell in."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        if self._on_gc in gc.callbacks:
            gc.callbacks.remove(self._on_gc)
        if self._original_run is not None:
            asyncio.events.Handle._run = self._original_run  # type: ignore[method-assign]
            self._original_run = None
        if self._original_dispatch is not None:
            from textual.message_pump import MessagePump

            MessagePump._dispatch_message = self._original_dispatch  # type: ignore[method-assign]
            self._original_dispatch = None
        for stall in self.stalls:
            end = stall.started + stall.wall
            for started, stopped, generation, name in self._gc_log:
                overlap = min(end, stopped) - max(stall.started, started)
                if overlap > 0:
                    stall.gc_seconds += overlap
                    stall.gc_collections.append((generation, stopped - started, name))
        self._gc_log.clear()

    def keep(self, flows: set[str]) -> None:
        """Forget what was recorded in other flows (those run only to reach these)."""
        self.stalls = [stall for stall in self.stalls if stall.flow in flows]
        self.tick_cpu = {flow: cpu for flow, cpu in self.tick_cpu.items() if flow in flows}
        self.callbacks = [callback for callback in self.callbacks if callback[0] in flows]

    # -- the report -------------------------------------------------------------------------
    def report(self, top: int = 5, frames: int = 14, out: Any = None) -> None:
        """Print, per flow, the ``top`` longest stalls with their most frequent stack (its
        innermost ``frames`` frames), and the functions most often on the stalled stacks."""
        out = out or sys.stdout
        flows: dict[str, list[Stall]] = {flow: [] for flow in self.tick_cpu}
        for stall in self.stalls:
            flows.setdefault(stall.flow, []).append(stall)
        for flow, stalls in flows.items():
            cpus = sorted(self.tick_cpu.get(flow, [0.0]))
            p99 = cpus[min(len(cpus) - 1, int(0.99 * (len(cpus) - 1) + 0.5))]
            print(f"\n== {flow}: UI thread CPU between two ticks max {cpus[-1] * 1000:.1f} ms, "
                  f"p99 {p99 * 1000:.1f} ms ({len(cpus)} ticks)", file=out)  # fmt: skip
            collections = [c for c in self.callbacks if c[0] == flow and c[2].startswith("gc ")]
            if collections:
                worst = max(collections, key=lambda c: c[1])
                print(f"   collections over {self.callback_cpu * 250:.0f} ms of CPU: "
                      f"{len(collections)}, {sum(c[1] for c in collections) * 1000:.0f} ms in "
                      f"all; the largest {worst[1] * 1000:.1f} ms ({worst[2]})",
                      file=out)  # fmt: skip
            heavy = sorted((c for c in self.callbacks if c[0] == flow), key=lambda c: -c[1])
            if heavy:
                print(f"   loop callbacks and collections over {self.callback_cpu * 1000:.0f} "
                      f"ms of CPU: {len(heavy)}; the largest:", file=out)  # fmt: skip
                for _, cpu, what in heavy[:8]:
                    print(f"     {cpu * 1000:6.1f} ms  {what}", file=out)
            stalls.sort(key=lambda s: -s.wall)
            walls = ", ".join(f"{s.wall * 1000:.0f}" for s in stalls[:20])
            print(f"   {len(stalls)} stalls over {self.threshold * 1000:.0f} ms "
                  f"(ms: {walls}{' …' if len(stalls) > 20 else ''})", file=out)  # fmt: skip
            for stall in stalls[:top]:
                gcs = ", ".join(f"gen{g} {s * 1000:.0f} ms in {n}" for g, s, n in
                                stall.gc_collections if s >= 0.001)  # fmt: skip
                small = sum(1 for _, s, _ in stall.gc_collections if s < 0.001)
                gcs = f"{gcs}{', ' if gcs and small else ''}{small} under 1 ms" if small else gcs
                print(f"-- {stall.wall * 1000:.0f} ms, main thread CPU {stall.cpu * 1000:.0f} "
                      f"ms, {stall.samples} samples; collections: {gcs or 'none'}",
                      file=out)  # fmt: skip
                for stack, count in stall.stacks.most_common(2):
                    print(f"   stack seen in {count}/{stall.samples} samples:", file=out)
                    for label in stack[-frames:]:
                        print(f"     {label}", file=out)
                for other, count in stall.others.most_common(3):
                    print(f"   other thread busy in {count}/{stall.samples}: {other}", file=out)
            hot: Counter[str] = Counter()
            total = 0
            for stall in stalls:
                for stack, count in stall.stacks.items():
                    total += count
                    functions = {re.sub(r":\d+ ", " ", label) for label in stack}
                    for function in functions:
                        if function.startswith(("tui_compactor/", "textual/", "rich/")):
                            hot[function] += count
            if total:
                print(f"   functions on the stalled stacks ({total} samples):", file=out)
                for label, count in hot.most_common(12):
                    print(f"     {count:5d}  {label}", file=out)
                widgets = [(label, count) for label, count in hot.most_common() if "[" in label]
                if widgets:
                    print("   widgets drawn or laid out on them:", file=out)
                    for label, count in widgets[:12]:
                        print(f"     {count:5d}  {label}", file=out)
                ours: Counter[tuple[str, ...]] = Counter()
                for stall in stalls:
                    for stack, count in stall.stacks.items():
                        mine = [n for n, label in enumerate(stack) if label.startswith("tui_")]
                        if mine:
                            ours[stack[mine[-1] : mine[-1] + 3]] += count
                if ours:
                    print("   the app's innermost frames on them (and what they called):", file=out)
                    for path, count in ours.most_common(8):
                        print(f"     {count:5d}  {' > '.join(path)}", file=out)
