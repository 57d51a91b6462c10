"""Benchmark driver: runs every ``benchmarks/bench_*.py`` module and prints one table.

    python benchmarks/bench.py              # everything (generates data on first use)
    python benchmarks/bench.py --quick      # small sizes, fewer runs
    python benchmarks/bench.py --only session --json results.json

Each module exposes ``run(ctx) -> list[dict]``. A row has ``bench`` (module), ``case``,
``median_s`` (median wall time over ``runs`` runs) and optionally ``ratio`` (to the case's
floor), ``peak_rss_mb`` (measured in a fresh subprocess), ``size_mb``, ``target`` and
``notes``. Modules use the helpers on ``BenchContext``: ``time(fn)`` for medians,
``peak_rss(code)`` for memory, ``data_dir`` for cached inputs.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


@dataclass
class BenchContext:
    """What a benchmark module gets: settings and measuring helpers."""

    quick: bool
    runs: int
    data_dir: Path = HERE / "data"
    root: Path = ROOT
    extra: dict[str, Any] = field(default_factory=dict)

    def time(self, fn: Callable[[], Any], runs: int | None = None) -> tuple[float, list[float]]:
        """Median wall time of ``fn()`` over ``runs`` runs (plus one untimed warm-up)."""
        fn()
        samples = []
        for _ in range(runs or self.runs):
            started = time.perf_counter()
            fn()
            samples.append(time.perf_counter() - started)
        return statistics.median(samples), samples

    def peak_rss(self, code: str, timeout: float = 600) -> float:
        """Peak resident memory (MB) of a fresh Python process running ``code``.

        The process imports nothing but what ``code`` imports, so the figure includes the
        interpreter (~10-20 MB) and the libraries ``code`` loads.
        """
        # VmHWM (Linux) is the peak of this process image only; ru_maxrss would also count
        # the parent's memory that a fork/vfork child inherits until exec.
        script = (
            "import resource, sys\n"
            f"sys.path.insert(0, {str(self.root)!r})\n"
            f"{code}\n"
            "try:\n"
            "    status = open('/proc/self/status').read().split('VmHWM:')[1]\n"
            "    peak = int(status.split()[0]) * 1024\n"
            "except (OSError, IndexError, ValueError):\n"
            "    usage = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
            "    peak = usage * (1 if sys.platform == 'darwin' else 1024)\n"
            "print('RSS', peak)\n"
        )
        from bench_speed import probe_env

        with probe_env() as env:
            result = subprocess.run(
                [sys.executable, "-c", script], capture_output=True, text=True, timeout=timeout,
                env={**env, "PYTHONHASHSEED": "0"},
            )  # fmt: skip
        if result.returncode != 0:
            raise RuntimeError(f"RSS probe failed: {result.stderr[-2000:]}")
        line = next(x for x in result.stdout.splitlines() if x.startswith("RSS "))
        return int(line.split()[1]) / (1024 * 1024)


def discover(only: list[str] | None) -> list[tuple[str, Any]]:
    """Import ``bench_*.py`` modules next to this script (filtered by ``--only``)."""
    modules = []
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(HERE))
    for path in sorted(HERE.glob("bench_*.py")):
        name = path.stem.removeprefix("bench_")
        if only and name not in only:
            continue
        spec = importlib.util.spec_from_file_location(f"benchmarks.{path.stem}", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        if hasattr(module, "run"):
            modules.append((name, module))
    return modules


COLUMNS = [
    ("bench", "bench", "{}"),
    ("case", "case", "{}"),
    ("median_s", "median", "{:.4f}s"),
    ("runs", "runs", "{}"),
    ("ratio", "ratio", "{:.2f}x"),
    ("peak_rss_mb", "peak RSS", "{:.0f} MB"),
    ("size_mb", "file", "{:.1f} MB"),
    ("target", "target", "{}"),
    ("notes", "notes", "{}"),
]


def format_table(rows: list[dict[str, Any]]) -> str:
    """A plain-text table of the rows (only the columns that have values)."""
    used = [c for c in COLUMNS if any(row.get(c[0]) is not None for row in rows)]
    cells = [[c[1] for c in used]]
    for row in rows:
        line = []
        for key, _, fmt in used:
            value = row.get(key)
            line.append("" if value is None else fmt.format(value))
        cells.append(line)
    widths = [max(len(r[i]) for r in cells) for i in range(len(used))]
    out = []
    for n, line in enumerate(cells):
        out.append("  ".join(v.ljust(w) for v, w in zip(line, widths, strict=True)).rstrip())
        if n == 0:
            out.append("  ".join("-" * w for w in widths))
    return "\n".join(out)


def _run_modules(
    modules: list[tuple[str, Any]], ctx: BenchContext
) -> tuple[list[dict[str, Any]], list[tuple[float, float, float]]]:
    """Every module's rows, and the load averages at the start and after each module."""
    loads = [os.getloadavg()]
    rows: list[dict[str, Any]] = []
    for name, module in modules:
        started = time.perf_counter()
        print(f"# {name} ...", file=sys.stderr, flush=True)
        try:
            produced = module.run(ctx)
        except Exception as error:  # noqa: BLE001 - one broken module must not hide the rest
            produced = [{"case": "(failed)", "notes": f"{type(error).__name__}: {error}"}]
        for row in produced:
            row.setdefault("bench", name)
        rows.extend(produced)
        loads.append(os.getloadavg())
        print(f"# {name} done in {time.perf_counter() - started:.1f}s", file=sys.stderr)
    return rows, loads


def main(argv: list[str] | None = None) -> int:
    """Run the benchmarks and print the table."""
    parser = argparse.ArgumentParser(description="tui-compactor benchmarks")
    parser.add_argument("--quick", action="store_true", help="small inputs, fewer runs")
    parser.add_argument("--only", action="append", metavar="NAME",
                        help="run only bench_NAME.py (repeatable)")  # fmt: skip
    parser.add_argument("--runs", type=int, default=None, help="timed runs per case")
    parser.add_argument("--json", type=Path, default=None, help="also write the rows here")
    parser.add_argument("--entries", type=int, action="append", default=[], metavar="N",
                        help="also measure a generated N-entry session in bench_scale.py "
                        "(e.g. 1000000; not in CI)")  # fmt: skip
    parser.add_argument("--huge", action="store_true",
                        help="bench_scale.py: also the hostile files of gen_huge.py")  # fmt: skip
    args = parser.parse_args(argv)
    ctx = BenchContext(quick=args.quick, runs=args.runs or (3 if args.quick else 5))
    ctx.extra.update(entries=args.entries, huge=args.huge)
    from bench_speed import probe_env

    # What the modules measure in this process (the app under Pilot) reads no user's config
    # either: the driver runs in the environment of the processes it measures.
    with probe_env() as env:
        os.environ.clear()
        os.environ.update(env)
        rows, loads = _run_modules(discover(args.only), ctx)
    print(format_table(rows))
    one_minute = [load[0] for load in loads]
    print(
        f"\nmachine: {os.cpu_count()} CPUs; load average (1 min) at start and after each module: "
        + " ".join(f"{value:.1f}" for value in one_minute)
    )
    for chart in ctx.extra.get("charts", []):
        print("\n" + chart)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
