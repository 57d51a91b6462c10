"""Start-up and whole-process speed, each against a floor measured in the same run.

Cases (100k-entry generated session; ``--quick``: 10k):

* **json.loads floor** — read the file and ``json.loads`` every line, in this process.
* **tree complete (process)** — a fresh ``python`` process starts the app headless (120x40)
  on the file; the time from process start until every row is in the tree, the gauge shows
  the active path's context tokens at the leaf and the rows on screen their token counts
  (the app's default counter). Ratio to the floor.
* **first full screen (tmux)** — process start to the tree, the gauge and the details all
  showing content in a real terminal (tmux, 120x40), for a 10-entry session and the big
  one; the floor is ``minimal_app.py`` (a dozen ``Static`` widgets) measured the same way.
  The gauge's first frame is a chars/4 count (marked ``≈ chars/4``) when the cl100k table has
  not loaded yet; the measured count replaces it once the table is in. Alone, and against
  another checkout in the same rounds (e.g. a ``git worktree`` of main)::

      python benchmarks/bench_speed.py --first-screen --runs 9 [--entries 10 --entries 100000]
          [--against ../main-checkout]

  Alone (``--tree-complete``), "tree complete" and its floor, with the CPU seconds of the
  process, and against other checkouts in the same rounds::

      python benchmarks/bench_speed.py --tree-complete --runs 5 [--against ../main-checkout]
* **import time** — ``python -X importtime -c "import tui_compactor.ui.app"``: the
  cumulative import time of the app module and its largest direct imports.
* **plan --tokens pi (process)** — the whole ``tui-compactor plan --tokens pi --json``
  process against the pi reference process (``pi_plan.mjs``: ``SessionManager.open`` +
  ``prepareCompaction`` in node) on the big session. Skipped without node and pi.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SIZE = (120, 40)
PI_PACKAGE = Path(
    os.environ.get(
        "PI_CODING_AGENT_DIR",
        "/work/main/.cache/pi-ref/node_modules/@mariozechner/pi-coding-agent",
    )
)

_DETAILS_HEADER = re.compile(r"#(\d+|…)\s+line (\d+|…)")


def app_ready(screen: str) -> bool:
    """The app's first full screen: a tree row (the leaf marker), the gauge and details (a
    tail-first preview's details header reads ``#…  line …`` until the file is indexed)."""
    return "◆ leaf" in screen and "compact at" in screen and bool(_DETAILS_HEADER.search(screen))


def minimal_ready(screen: str) -> bool:
    """The floor app's first full screen: its last widget drawn."""
    return "MINIMAL-READY" in screen


def clean_env(home: str) -> dict[str, str]:
    """This process's environment for a measured process whose ``HOME`` (and config directory)
    is ``home``: without ``TUI_COMPACTOR_*`` variables, outside the caller's tmux, with this
    checkout first on ``PYTHONPATH``; ``probe_env`` makes the ``HOME``."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("TMUX", "PYTHONDONTWRITEBYTECODE") and not key.startswith("TUI_COMPACTOR_")
    }
    env.update(
        HOME=home,
        XDG_CONFIG_HOME=home,
        TERM="xterm-256color",
        PYTHONPATH=str(ROOT),
        PYTHONPYCACHEPREFIX=str(Path(tempfile.gettempdir()) / "tuic-bench-pycache"),
    )
    return env


@contextmanager
def probe_env() -> Iterator[dict[str, str]]:
    """The environment every measured process runs in (``clean_env``) with a fresh empty
    ``HOME``: no user's config file or setting reaches a measurement."""
    with tempfile.TemporaryDirectory(prefix="tuic-bench-home-") as home:
        yield clean_env(home)


RUN_MARK = "TUIC_BENCH_RUN"
"""Environment variable naming the measured run each process of a ``tmux_first_screen`` run
inherits (the tmux server, the app and the app's children), so that its end can be waited for."""


def run_processes(mark: str) -> list[int]:
    """Ids of the processes whose environment has ``RUN_MARK=mark`` (empty without ``/proc``)."""
    needle = f"{RUN_MARK}={mark}".encode() + b"\0"
    pids = []
    try:
        names = os.listdir("/proc")
    except OSError:
        return []
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as handle:
                environ = handle.read()
        except OSError:
            continue  # gone, or not ours to read
        if needle in environ:
            pids.append(int(name))
    return pids


def wait_run_ended(mark: str, timeout: float = 15.0) -> list[int]:
    """Wait until no process of the run ``mark`` is left; the ids still there at ``timeout``.

    Killing the tmux server ends the app, but not what the app started: its counting process
    (a second interpreter loading the cl100k table, started once the first screen is drawn)
    runs on, orphaned, for up to a second. The next measured process would share the two
    cores with it: the session measured after the 10-entry one was slowed by the 10-entry
    one's counting process, whichever it was (the 100k session 1.35x the 10-entry one in one
    order, 0.83x in the other)."""
    deadline = time.perf_counter() + timeout
    while True:
        left = run_processes(mark)
        if not left or time.perf_counter() >= deadline:
            return left
        time.sleep(0.02)


def process_cpu(mark: str, command: list[str]) -> float | None:
    """CPU seconds so far of the main thread of the run ``mark``'s process running ``command``
    (its argv; ``/proc/PID/task/PID/schedstat``: nanoseconds on a CPU); None if not found. The
    main thread is Textual's event loop, where the first screen is made; a big file's index
    starts on other threads once the first frame is written, and until the screen is seen
    (tmux parses the frame, the probe polls) it would count there (~10-50 ms at load 10)."""
    argv = "\0".join(command).encode() + b"\0"
    for pid in run_processes(mark):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                if handle.read() != argv:
                    continue
            with open(f"/proc/{pid}/task/{pid}/schedstat") as handle:
                return int(handle.read().split()[0]) / 1e9
        except (OSError, ValueError, IndexError):
            continue
    return None


def tmux_first_screen(
    command: list[str], ready: Callable[[str], bool], cpu: list[float] | None = None
) -> float | None:
    """Seconds from starting ``command`` in a fresh 120x40 tmux to ``ready(screen)``; returns
    once every process of the run has ended (``wait_run_ended``), so none shares the machine
    with the next run. ``cpu``: gets the CPU seconds the process's main thread had used when the
    screen was seen ready (``process_cpu``), a figure the load of the machine moves far less
    than the wall clock."""
    if shutil.which("tmux") is None:
        return None
    socket = f"tuic-bench-{os.getpid()}-{uuid.uuid4().hex[:6]}"
    line = " ".join(command)
    with probe_env() as env:
        env[RUN_MARK] = socket
        started = time.perf_counter()
        subprocess.run(
            [
                "tmux",
                "-L",
                socket,
                "-f",
                "/dev/null",
                "new-session",
                "-d",
                "-s",
                "b",
                "-x",
                str(SIZE[0]),
                "-y",
                str(SIZE[1]),
                "-c",
                str(ROOT),
                line,
            ],
            env=env,
            check=True,
            timeout=30,
        )
        try:
            deadline = started + 120
            while time.perf_counter() < deadline:
                screen = subprocess.run(
                    ["tmux", "-L", socket, "capture-pane", "-p", "-t", "b"],
                    capture_output=True,
                    text=True,
                    timeout=10,
                ).stdout
                if ready(screen):
                    seconds = time.perf_counter() - started
                    used = process_cpu(socket, command) if cpu is not None else None
                    if cpu is not None and used is not None:
                        cpu.append(used)
                    return seconds
                time.sleep(0.01)
            return None
        finally:
            subprocess.run(["tmux", "-L", socket, "kill-server"], capture_output=True, timeout=10)
            wait_run_ended(socket)


TREE_COMPLETE_CODE = r"""
import asyncio, os, sys, time
from pathlib import Path
started = float(os.environ["BENCH_T0"])
from tui_compactor.ui.app import CompactorApp
from tui_compactor.ui.widgets.tree import SessionTree
from tui_compactor.engine.messages import MESSAGE_BEARING_TYPES

async def main() -> None:
    phases = {"imported": time.time() - started}
    app = CompactorApp(Path(sys.argv[1]), follow=False)
    async with app.run_test(size=(120, 40)) as pilot:
        while True:
            session = app.session
            if session is not None and session.complete:
                phases.setdefault("loaded", time.time() - started)
                tree = app.query_one(SessionTree)
                if tree.rows:
                    phases.setdefault("rows", time.time() - started)
                    gauge = app.gauge_data
                    if gauge is not None and gauge.entry_index == session.leaf:
                        phases.setdefault("gauge", time.time() - started)
                        top = int(tree.scroll_y)
                        shown = [row.index for row in tree.rows[top: top + tree.size.height]]
                        if all(i in tree.token_counts for i in shown
                               if session.entries[i].type in MESSAGE_BEARING_TYPES):
                            break
            await asyncio.sleep(0.005)
        elapsed = time.time() - started
        print("TREE", elapsed, " ".join(f"{k}={v:.2f}" for k, v in phases.items()), flush=True)
    # The app's counting process ended and waited for: its CPU counts in the process's.
    from tui_compactor.engine import tokens
    getattr(tokens._COUNTERS.get("cl100k"), "close", lambda: None)()
    os._exit(0)

asyncio.run(main())
"""
"""Done when: every row is in the tree, the gauge shows the leaf's context tokens (the active
path's context, back to its last compaction) and the rows on screen show their token counts.
Per-row counts of the whole active path keep filling in after that, newest first."""


def run_probe(
    code: str,
    args: list[str],
    tag: str,
    what: str,
    *,
    env: dict[str, str] | None = None,
    timeout: float = 3600,
) -> str:
    """The rest of the line starting with ``tag`` that a fresh ``python -c code *args`` (run in
    the repository, in ``env`` or else ``probe_env()``) prints; RuntimeError naming ``what``,
    with its stderr's tail, if none."""
    with probe_env() as clean:
        result = subprocess.run(
            [sys.executable, "-c", code, *args],
            capture_output=True,
            text=True,
            env=env or clean,
            timeout=timeout,
            cwd=ROOT,
        )
    prefix = tag + " "
    line = next((x for x in result.stdout.splitlines() if x.startswith(prefix)), None)
    if line is None:
        raise RuntimeError(f"{what} failed: {result.stderr[-1500:]}")
    return line[len(prefix) :]


def tree_complete(path: Path, root: Path | None = None) -> tuple[float, str]:
    """Process start to every row shown with the active path's token counts (headless), with
    the app of this checkout or of ``root`` (another checkout of the project)."""
    with probe_env() as env:
        if root is not None:
            env["PYTHONPATH"] = str(root)
        env["BENCH_T0"] = repr(time.time())
        seconds, *phases = run_probe(
            TREE_COMPLETE_CODE, [str(path)], "TREE", "tree-complete probe", env=env, timeout=600
        ).split()
    return float(seconds), " ".join(phases)


def tree_completes(path: Path, runs: int, against: tuple[Path, ...] = ()) -> list[dict[str, Any]]:
    """The ``json.loads`` floor and "tree complete" of this checkout (and of each of
    ``against``), interleaved run by run under the same load; ratios to the floor's median,
    with the process's CPU seconds (user + system, its counting process's included) and its
    phases."""
    json_floor(path)  # page cache warm for all
    floors: list[float] = []
    samples: dict[Path | None, list[tuple[float, float, str]]] = {}
    roots: tuple[Path | None, ...] = (None, *against)
    for _ in range(runs):
        started = time.perf_counter()
        json_floor(path)
        floors.append(time.perf_counter() - started)
        for root in roots:
            cpu = _children_cpu()
            seconds, phases = tree_complete(path, root)
            samples.setdefault(root, []).append((seconds, _children_cpu() - cpu, phases))
    floor = statistics.median(floors)
    rows: list[dict[str, Any]] = [
        {
            "case": "json.loads floor",
            "median_s": floor,
            "runs": runs,
            "ratio": 1.0,
            "notes": "read + json.loads per line",
        }
    ]
    for root in roots:
        values = samples[root]
        wall = statistics.median(value[0] for value in values)
        cpu = statistics.median(value[1] for value in values)
        phases = min(values)[2]
        which = "" if root is None else f" [{root}]"
        rows.append(
            {
                "case": f"tree complete (process){which}",
                "median_s": wall,
                "runs": runs,
                "ratio": wall / floor,
                "target": "<=2.0x",
                "notes": f"min {min(v[0] for v in values):.2f} s; CPU {cpu:.2f} s; "
                f"fastest run's phases, s: {phases}",
            }
        )
    return rows


def _children_cpu() -> float:
    """User + system seconds of this process's finished children."""
    times = os.times()
    return times.children_user + times.children_system


def json_floor(path: Path) -> None:
    """The floor: read the file line by line and ``json.loads`` each line."""
    loads = json.loads
    with open(path, "rb") as handle:
        for line in handle:
            if line.strip():
                loads(line)


def import_times() -> tuple[float, list[tuple[str, float]]]:
    """Cumulative import seconds of ``tui_compactor.ui.app`` and its largest direct imports."""
    with probe_env() as env:
        result = subprocess.run(
            [sys.executable, "-X", "importtime", "-c", "import tui_compactor.ui.app"],
            capture_output=True,
            text=True,
            env=env,
            cwd=ROOT,
            timeout=120,
        )
    rows = []
    total = 0.0
    for line in result.stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        _, cumulative, name = line.split("|")
        if not cumulative.strip().isdigit():
            continue
        seconds = int(cumulative) / 1e6
        depth = (len(name) - len(name.lstrip())) // 2
        if name.strip() == "tui_compactor.ui.app":
            total = seconds
        elif depth <= 1:
            rows.append((name.strip(), seconds))
    rows.sort(key=lambda item: -item[1])
    return total, rows[:6]


def first_screens(
    sessions: list[tuple[str, Path]], runs: int, against: tuple[Path, ...] = ()
) -> list[dict[str, Any]]:
    """First full screen of the floor app and of the app on each session, interleaved (one
    round: the floor, then each session), ``runs`` rounds; ratios to the floor's median.

    ``against``: other checkouts of the project whose app is measured in the same rounds
    (side by side, under the same load), e.g. a ``git worktree`` of main.
    """
    global ROOT
    app = [sys.executable, "-m", "tui_compactor"]
    minimal = [sys.executable, str(HERE / "minimal_app.py")]
    here = ROOT
    roots = (here, *against)
    samples: dict[tuple[Path, str], list[float]] = {}
    cpus: dict[tuple[Path, str], list[float]] = {}
    floor_samples: list[float] = []
    floor_cpus: list[float] = []
    try:
        for _ in range(runs):  # interleaved
            ROOT = here
            value = tmux_first_screen(minimal, minimal_ready, floor_cpus)
            if value is not None:
                floor_samples.append(value)
            for root in roots:
                ROOT = root  # the tmux window's directory and PYTHONPATH
                for label, path in sessions:
                    value = tmux_first_screen(
                        [*app, str(path), "--no-follow"],
                        app_ready,
                        cpus.setdefault((root, label), []),
                    )
                    if value is not None:
                        samples.setdefault((root, label), []).append(value)
    finally:
        ROOT = here
    if not floor_samples:
        return [{"case": "first full screen (skipped)", "notes": "no tmux"}]
    floor = statistics.median(floor_samples)
    floor_cpu = statistics.median(floor_cpus) if floor_cpus else None
    out: list[dict[str, Any]] = [
        {
            "case": "first full screen, minimal Textual app",
            "median_s": floor,
            "runs": len(floor_samples),
            "ratio": 1.0,
            "notes": "floor (tmux 120x40)"
            + (f"; UI-thread CPU {floor_cpu:.3f} s when seen" if floor_cpu else ""),
        }
    ]
    for root in roots:
        which = "" if root == here else f" [{root}]"
        first: float | None = None
        first_cpu: float | None = None
        for label, _path in sessions:
            values = samples.get((root, label))
            if not values:
                out.append({"case": f"{label} first full screen{which} (timed out)"})
                continue
            value = statistics.median(values)
            used = statistics.median(cpus[root, label]) if cpus.get((root, label)) else None
            note = "tree + gauge + details drawn"
            is_first = first is None
            if first is None:
                first, first_cpu = value, used
            else:
                note += (
                    f"; {value / first:.2f}x the {sessions[0][0].strip()}-entry session "
                    "(target <=1.1x)"
                )
            if used is not None and floor_cpu:
                # The main thread's CPU when the screen was seen (median): what it did, which
                # the load moves far less than the wall clock.
                note += f"; UI-thread CPU {used:.3f} s = {used / floor_cpu:.2f}x the floor's"
                if first_cpu is not None and not is_first:
                    note += f", {used / first_cpu:.2f}x the {sessions[0][0].strip()}-entry's"
            out.append(
                {
                    "case": f"{label} first full screen (tmux){which}",
                    "median_s": value,
                    "runs": len(values),
                    "ratio": value / floor,
                    "target": "<=1.5x",
                    "notes": note,
                }
            )
    return out


def _median_of(fn: Callable[[], float | None], runs: int) -> tuple[float | None, list[float]]:
    values = [v for v in (fn() for _ in range(runs)) if v is not None]
    return (statistics.median(values) if values else None), values


def plan_processes(path: Path, runs: int) -> list[dict[str, Any]]:
    """``plan --tokens pi`` process against the pi reference process on ``path``."""
    node = shutil.which("node")
    if node is None or not PI_PACKAGE.is_dir():
        return [{"case": "plan process vs pi (skipped)", "notes": "node or pi package missing"}]
    with probe_env() as env:
        env["PI_CODING_AGENT_DIR"] = str(PI_PACKAGE)
        return _plan_processes(path, runs, node, env)


def _plan_processes(path: Path, runs: int, node: str, env: dict[str, str]) -> list[dict[str, Any]]:
    label = f"{path.stem}"

    def ours() -> float:
        started = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "tui_compactor", "plan", str(path), "--tokens", "pi", "--json"],
            capture_output=True,
            check=True,
            env=env,
            cwd=ROOT,
        )
        return time.perf_counter() - started

    def reference() -> float:
        started = time.perf_counter()
        subprocess.run(
            [node, str(HERE / "pi_plan.mjs"), str(path)],
            capture_output=True,
            check=True,
            env=env,
            cwd=ROOT,
        )
        return time.perf_counter() - started

    ours(), reference()  # warm caches (bytecode, page cache)
    samples_ours: list[float] = []
    samples_ref: list[float] = []
    for _ in range(runs):  # interleaved, so both see the same machine load
        samples_ours.append(ours())
        samples_ref.append(reference())
    mine, theirs = statistics.median(samples_ours), statistics.median(samples_ref)
    return [
        {
            "case": f"plan process {label}, pi 0.73.1 (node)",
            "median_s": theirs,
            "runs": runs,
            "ratio": 1.0,
            "notes": "floor: SessionManager.open + prepareCompaction",
        },
        {
            "case": f"plan process {label}, ours --tokens pi",
            "median_s": mine,
            "runs": runs,
            "ratio": mine / theirs,
            "target": ">=5x faster",
            "notes": f"{theirs / mine:.1f}x faster than pi",
        },
    ]


def run(ctx: Any) -> list[dict[str, Any]]:
    """All cases (``--quick``: the 10k session)."""
    from gen_session import generate  # type: ignore[import-not-found]

    entries = 10_000 if ctx.quick else 100_000
    big = generate(entries)
    small = generate(10)
    real_1k = ROOT / "tui_compactor" / "data" / "sample-session.jsonl"
    size_mb = big.stat().st_size / 1e6
    runs = max(3, ctx.runs)
    rows: list[dict[str, Any]] = []

    def case(name: str, measure: Callable[[], list[dict[str, Any]]]) -> None:
        try:
            rows.extend(measure())
        except Exception as error:  # noqa: BLE001 - reported in the table
            rows.append({"case": f"{name} (failed)", "notes": f"{type(error).__name__}: {error}"})

    def tree() -> list[dict[str, Any]]:
        rows = tree_completes(big, runs)
        for row in rows:
            row["case"] = f"{entries:>7} {row['case']}"
            row["size_mb"] = size_mb
        rows[1]["notes"] = "start -> all rows, leaf gauge, visible counts; " + rows[1]["notes"]
        return rows

    def screens() -> list[dict[str, Any]]:
        return first_screens([("     10", small), (f"{entries:>7}", big)], runs)

    def imports() -> list[dict[str, Any]]:
        totals = []
        parts: list[tuple[str, float]] = []
        for _ in range(runs):
            total, parts = import_times()
            totals.append(total)
        shown = ", ".join(f"{name} {seconds * 1000:.0f}" for name, seconds in parts)
        return [
            {
                "case": "import tui_compactor.ui.app",
                "median_s": statistics.median(totals),
                "runs": runs,
                "notes": f"-X importtime, ms: {shown}",
            }
        ]

    case("first full screen", screens)
    case("tree complete", tree)
    case("imports", imports)
    case("plan process 1k", lambda: plan_processes(real_1k, runs))
    case("plan process big", lambda: plan_processes(big, runs))
    return rows


def main(argv: list[str] | None = None) -> int:
    """``--first-screen``: only the first-full-screen probe; ``--tree-complete``: only the
    floor and "tree complete" (the whole module runs from ``bench.py --only speed``)."""
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument(
        "--first-screen",
        action="store_true",
        help="measure the first full screen against the minimal app",
    )
    which.add_argument(
        "--tree-complete",
        action="store_true",
        help="measure the json.loads floor and tree complete (process) of one session "
        "(default: the 100k-entry one)",
    )
    parser.add_argument("--runs", type=int, default=7, help="interleaved rounds (default 7)")
    parser.add_argument(
        "--entries",
        type=int,
        action="append",
        default=None,
        metavar="N",
        help="a generated N-entry session (repeatable; default: 10, with --tree-complete "
        "100000 and only the first counts)",
    )
    parser.add_argument(
        "--against",
        type=Path,
        action="append",
        default=[],
        metavar="DIR",
        help="also another checkout's app, in the same rounds (repeatable)",
    )
    args = parser.parse_args(argv)
    sys.path.insert(0, str(HERE))
    from bench import format_table  # type: ignore[import-not-found]
    from gen_session import generate  # type: ignore[import-not-found]

    against = tuple(path.resolve() for path in args.against)
    load = os.getloadavg()[0]
    if args.tree_complete:
        rows = tree_completes(generate((args.entries or [100_000])[0]), args.runs, against)
    else:
        sessions = [(f"{n:>7}", generate(n)) for n in args.entries or [10]]
        rows = first_screens(sessions, args.runs, against)
    print(format_table(rows))
    print(f"\nload average (1 min) at start and end: {load:.1f} {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
