"""Long fuzz run: N mutated sessions through the read commands (issue 13; CI runs a short one).

    python benchmarks/fuzz_sessions.py                  # 10,000 mutants, 2 worker processes
    python benchmarks/fuzz_sessions.py --mutants 500 --workers 1 --seed 7

Each mutant of the strange-file corpus (``tests/fixtures/bad``, files up to 64 KiB) gets 1-4
random edits (``tests/support/mutate.py``) and runs through ``lint``, ``plan``, ``context``,
``inspect`` and ``tree``, in text and JSON. A run fails on a traceback, a command that does
not answer within 20 s, output that is not printable text or holds an escape, or a changed
input file. Failing mutants are kept under ``--keep DIR`` for reproduction. Prints one
summary (mutants, runs, failures, hangs, changed inputs, wall time, median and slowest run)
and exits 1 if anything failed.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.mutate import check_file, mutate, seed_files  # noqa: E402


def _work(job: tuple[int, int, int, str]) -> dict[str, Any]:
    """Fuzz ``count`` mutants from ``start`` with the RNG seeded by ``seed``."""
    start, count, seed, keep = job
    os.environ["XDG_CONFIG_HOME"] = tempfile.mkdtemp(prefix="fuzz-config-")
    seeds = seed_files()
    rng = random.Random(seed * 1_000_003 + start)
    folder = Path(tempfile.mkdtemp(prefix="fuzz-"))
    times: list[float] = []
    failures: list[dict[str, Any]] = []
    runs = 0
    for number in range(start, start + count):
        source = rng.choice(seeds)
        data = mutate(source.read_bytes(), rng)
        path = folder / "mutant.jsonl"
        path.write_bytes(data)
        for outcome in check_file(path):
            runs += 1
            times.append(outcome.seconds)
            if outcome.problem is not None:
                kept = Path(keep) / f"mutant-{number}.jsonl"
                kept.write_bytes(data)
                failures.append(
                    {
                        "mutant": number,
                        "seed": source.name,
                        "argv": outcome.argv[:1] + outcome.argv[2:],
                        "problem": outcome.problem[-2000:],
                        "file": str(kept),
                    }
                )
    return {"runs": runs, "times": times, "failures": failures}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mutants", type=int, default=10_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keep", type=Path, default=Path(tempfile.gettempdir()) / "fuzz-fail")
    parser.add_argument("--json", type=Path, help="also write the summary here")
    args = parser.parse_args()
    args.keep.mkdir(parents=True, exist_ok=True)
    chunk = 100
    jobs = [
        (start, min(chunk, args.mutants - start), args.seed, str(args.keep))
        for start in range(0, args.mutants, chunk)
    ]
    started = time.perf_counter()
    results: list[dict[str, Any]] = []
    with multiprocessing.get_context("fork").Pool(args.workers) as pool:
        for done, result in enumerate(pool.imap_unordered(_work, jobs), 1):
            results.append(result)
            if done % 10 == 0:
                print(
                    f"  {done * chunk} mutants, {time.perf_counter() - started:.0f}s",
                    file=sys.stderr,
                )
    wall = time.perf_counter() - started
    times = [t for r in results for t in r["times"]]
    failures = [f for r in results for f in r["failures"]]
    summary = {
        "mutants": args.mutants,
        "seeds": len(seed_files()),
        "runs": sum(r["runs"] for r in results),
        "failures": len(failures),
        "hangs": sum("no answer" in f["problem"] for f in failures),
        "changedInputs": sum(f["problem"] == "the input file changed" for f in failures),
        "tracebacks": sum("Traceback" in f["problem"] for f in failures),
        "wallSeconds": round(wall, 1),
        "medianRunSeconds": round(statistics.median(times), 4) if times else None,
        "slowestRunSeconds": round(max(times), 3) if times else None,
        "failureSamples": failures[:10],
    }
    print(json.dumps(summary, indent=2))
    if args.json:
        args.json.write_text(json.dumps(summary, indent=2) + "\n")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
