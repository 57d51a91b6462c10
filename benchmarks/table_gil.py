"""How long the cl100k encoder's build keeps the app's other threads waiting for the GIL.

A thread ticks every 0.5 ms while the encoder is built, in a fresh process per run: in this
process (``Cl100kCounter``, what the commands do) or in a counting process
(``Cl100kProcessCounter``, what the app does). Prints, per way and run, the time until the first
count and the ticker's longest gap (a tick of the app's event loop would have waited as long),
then the medians::

    python benchmarks/table_gil.py --runs 5
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

PROBE = r"""
import sys, threading, time
from tui_compactor.engine.tokens import Cl100kCounter
from tui_compactor.engine.token_process import Cl100kProcessCounter
gaps = []
stop = threading.Event()

def tick() -> None:
    last = time.perf_counter()
    while not stop.is_set():
        time.sleep(0.0005)
        now = time.perf_counter()
        gaps.append(now - last)
        last = now

ticker = threading.Thread(target=tick)
ticker.start()
time.sleep(0.05)
started = time.perf_counter()
if sys.argv[1] == "in-process":
    Cl100kCounter(preload=False).count_text("hello")
else:
    counter = Cl100kProcessCounter()
    counter.count_text("hello")
ready = time.perf_counter() - started
time.sleep(0.05)
stop.set()
ticker.join()
print(ready, max(gaps))
"""

WAYS = ("in-process", "counting process")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="runs of each way, interleaved")
    args = parser.parse_args(argv)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    results: dict[str, list[tuple[float, float]]] = {way: [] for way in WAYS}
    for run in range(args.runs):
        for way in WAYS:
            out = subprocess.run([sys.executable, "-c", PROBE, way], env=env, check=True,
                                 capture_output=True, text=True).stdout  # fmt: skip
            ready, gap = map(float, out.split())
            results[way].append((ready, gap))
            print(f"run {run + 1}: {way:17} first count after {ready * 1000:5.0f} ms, "
                  f"longest wait of the ticker {gap * 1000:6.1f} ms", flush=True)  # fmt: skip
    print(f"medians of {args.runs} runs (load {os.getloadavg()[0]:.1f}):")
    for way, values in results.items():
        print(f"  {way:17} first count {statistics.median(v[0] for v in values) * 1000:5.0f} ms, "
              f"longest wait {statistics.median(v[1] for v in values) * 1000:6.1f} ms")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
