"""Fidelity-audit score of the offline summarizer on the shared fixture sessions.

    python benchmarks/offline_audit.py            # table on stdout
    python benchmarks/offline_audit.py --json out.json
    python benchmarks/offline_audit.py --show     # also print each summary
    git show REV:tui_compactor/summarize/offline.py > /tmp/old.py
    python benchmarks/offline_audit.py --offline-module /tmp/old.py   # an older summarizer,
                                                                      # the current audit

For every distinct session file (same bytes counted once) among the shared fixtures
(``/work/shared/fixtures/sessions`` when present), ``tests/fixtures/sessions``,
``tests/fixtures/oracle/sessions`` and the bundled sample, a compaction is planned at the leaf
for several keep-recent values (cl100k tokens, pi rules, default reserve) and run with the
offline summarizer, exactly as ``compact --dry-run`` would. Each row is the audit of that
summary: anchors kept / anchors found, per kind, and the summary's size, so that a higher score
bought by a longer summary shows. The closing line is the micro average (all anchors of all
plans) and the macro average (mean of the per-plan coverage).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import statistics
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tui_compactor.engine.plan import prepare_compaction  # noqa: E402
from tui_compactor.engine.settings import CompactionSettings  # noqa: E402
from tui_compactor.engine.tokens import TokenCache, get_counter  # noqa: E402
from tui_compactor.session.reader import load_session  # noqa: E402
from tui_compactor.summarize.compaction import CompactionJob  # noqa: E402
from tui_compactor.summarize.offline import OfflineSummarizer  # noqa: E402

SESSION_DIRS = (
    Path("/work/shared/fixtures/sessions"),
    ROOT / "tests" / "fixtures" / "sessions",
    ROOT / "tests" / "fixtures" / "oracle" / "sessions",
)
SAMPLE = ROOT / "tui_compactor" / "data" / "sample-session.jsonl"
KEEP_RECENT = (20000, 4000)
LEAF_FRACTIONS = (1 / 3, 2 / 3, 1.0)
KINDS = ("path", "identifier", "error", "command", "number", "request")


def session_files() -> list[Path]:
    """Every fixture session, each distinct content once, in a stable order."""
    seen: set[str] = set()
    files: list[Path] = []
    for folder in SESSION_DIRS:
        for path in sorted(folder.glob("*.jsonl")) if folder.is_dir() else []:
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            if digest not in seen:
                seen.add(digest)
                files.append(path)
    if SAMPLE.is_file():
        digest = hashlib.sha256(SAMPLE.read_bytes()).hexdigest()
        if digest not in seen:
            files.append(SAMPLE)
    return files


def audit_rows(
    path: Path, show: bool = False, summarizer: type = OfflineSummarizer
) -> list[dict[str, Any]]:
    """One row per keep-recent value that gives a plan with something to summarize."""
    session = load_session(path)
    counter = get_counter("cl100k")
    cache = TokenCache(session, counter)
    rows: list[dict[str, Any]] = []
    seen: set[tuple[int, ...]] = set()
    path_to_leaf = session.path_to(session.leaf) if session.leaf is not None else []
    leaves = [
        path_to_leaf[max(0, round(f * len(path_to_leaf)) - 1)]
        for f in LEAF_FRACTIONS
        if path_to_leaf
    ]
    for leaf, keep in ((leaf, keep) for leaf in leaves for keep in KEEP_RECENT):
        settings = CompactionSettings(keep_recent_tokens=keep)
        plan = prepare_compaction(session, leaf, settings, counter, cache=cache)
        if not plan.prepared or not (plan.messages_to_summarize or plan.turn_prefix_messages):
            continue
        region = tuple(
            id(item.message) for item in [*plan.messages_to_summarize, *plan.turn_prefix_messages]
        )
        if region in seen:
            continue
        seen.add(region)
        job = CompactionJob(plan, session, summarizer(), settings)
        result = asyncio.run(job.run())
        audit = result.audit
        per_kind = {
            kind: (
                sum(a.present for a in audit.anchors if a.kind == kind),
                sum(a.kind == kind for a in audit.anchors),
            )
            for kind in KINDS
        }
        rows.append(
            {
                "session": path.name,
                "leaf": f"#{leaf}",
                "keep_recent": keep,
                "prefix": bool(plan.turn_prefix_messages),
                "kept": len(audit.kept),
                "anchors": len(audit.anchors),
                "coverage": audit.coverage,
                "per_kind": per_kind,
                "summary_bytes": len(result.summary.encode()),
                "short_bytes": len(result.short_summary.encode()),
                "missing": [f"{a.kind}: {a.text[:80]}" for a in audit.missing],
            }
        )
        if show:
            print(f"===== {path.name} leaf #{leaf} keep_recent={keep} =====")
            print(result.summary)
            print("--- short:", result.short_summary)
            print("--- missing:", *rows[-1]["missing"], sep="\n  ")
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", type=Path, help="also write the rows as JSON here")
    parser.add_argument("--show", action="store_true", help="print every summary")
    parser.add_argument(
        "--offline-module",
        type=Path,
        metavar="FILE",
        help="take OfflineSummarizer from this file (e.g. an older offline.py)",
    )
    args = parser.parse_args(argv)
    summarizer: type = OfflineSummarizer
    if args.offline_module:
        import importlib.util

        spec = importlib.util.spec_from_file_location("offline_under_test", args.offline_module)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        summarizer = module.OfflineSummarizer
    rows = [row for path in session_files() for row in audit_rows(path, args.show, summarizer)]
    header = f"{'session':<26} {'leaf':>6} {'keep':>6} {'pfx':>3} {'kept/all':>9} {'cov':>5} "
    header += " ".join(f"{k[:5]:>6}" for k in KINDS) + f" {'bytes':>7}"
    print(header)
    for row in rows:
        kinds = " ".join(
            f"{k}/{n}".rjust(6) if n else "     -" for k, n in row["per_kind"].values()
        )
        print(
            f"{row['session'][:26]:<26} {row['leaf']:>6} {row['keep_recent']:>6} "
            f"{'yes' if row['prefix'] else 'no':>3} "
            f"{row['kept']:>4}/{row['anchors']:<4} {row['coverage']:>5.0%} {kinds} "
            f"{row['summary_bytes']:>7}"
        )
    if rows:
        kept = sum(r["kept"] for r in rows)
        total = sum(r["anchors"] for r in rows)
        macro = statistics.mean(r["coverage"] for r in rows)
        print(
            f"micro {kept}/{total} = {kept / max(1, total):.1%}   macro {macro:.1%}   "
            f"median summary {statistics.median(r['summary_bytes'] for r in rows):.0f} bytes"
        )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
