"""``tui-compactor stats [DIR...] [--json] [--jobs N] [--sort COLUMN]``: every session under the
given directories (default: the picker's, ``~/.pi/agent/sessions`` and ``~/.omp/agent/sessions``)
in one table: size, entries, branches, compactions, peak context, worst hindsight score.

Files are measured in parallel worker processes (``--jobs``, default: the CPU count), with a
progress bar on a terminal's stderr. A file that cannot be used gets a row with its problem.
Exit status 0; 2 for wrong arguments or a directory that does not exist.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from tui_compactor.commands import engine_args as common


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Register the command's switches."""
    from tui_compactor.engine.stats import STATS_COLUMNS

    parser.add_argument(
        "dirs",
        nargs="*",
        metavar="DIR",
        help="directories (or files) to scan; default: the picker's directories",
    )
    parser.add_argument(
        "--jobs",
        type=common.positive,
        default=None,
        metavar="N",
        help="worker processes (default: the number of CPUs)",
    )
    parser.add_argument(
        "--sort",
        choices=tuple(STATS_COLUMNS),
        default="size",
        help="column to sort by, largest first (default: size)",
    )
    parser.add_argument(
        "--rules",
        choices=("pi", "omp"),
        default=None,
        help="rules for the hindsight audit (default: each session's own, "
        "unless the config or a variable chooses)",
    )
    common.add_json(parser)


def _progress(done: int, total: int) -> None:
    width = 30
    filled = width * done // total if total else width
    sys.stderr.write(f"\rstats [{'#' * filled}{'-' * (width - filled)}] {done}/{total} files")
    if done == total:
        sys.stderr.write("\n")
    sys.stderr.flush()


def run(args: argparse.Namespace) -> int:
    """Scan, measure, print."""
    from tui_compactor.engine.stats import STATS_COLUMNS
    from tui_compactor.session.discover import (
        SessionRoot,
        default_session_roots,
        find_session_files,
    )
    from tui_compactor.textsafe import sanitize

    try:
        settings = common.settings_from_args(args)
    except common.CommandError as error:
        return common.fail(error)
    missing = [d for d in args.dirs or [] if not Path(d).expanduser().exists()]
    if missing:
        return common.fail(
            common.CommandError(
                sanitize(f"{missing[0]}: no such file or directory", single_line=True)
            )
        )
    if args.dirs:
        roots = [SessionRoot(Path(d).expanduser(), "dir") for d in args.dirs]
        missing = [root.path for root in roots if not root.path.exists()]
        if missing:
            named = ", ".join(sanitize(str(path), single_line=True) for path in missing)
            return common.fail(common.CommandError(f"no such file or directory: {named}"))
    else:
        roots = default_session_roots()
    paths = [path for _, path in find_session_files(roots)]
    jobs = args.jobs or os.cpu_count() or 1
    chosen = settings.source_of("rules") != "default"
    rules = settings.rules if chosen else None  # else each session's own (as every command)
    from tui_compactor.engine.stats import measure_files

    show_progress = sys.stderr.isatty()
    if show_progress:
        _progress(0, len(paths))
    rows = measure_files(paths, rules, jobs=jobs,
                         on_row=(lambda _row, done, total: _progress(done, total))
                         if show_progress else None)  # fmt: skip
    rows.sort(key=lambda row: row.sort_key(args.sort), reverse=True)
    if args.json:
        common.dump_json({
            "roots": [str(root.path) for root in roots],
            "rules": rules or "per session",
            "sortedBy": args.sort,
            "sessions": [row.to_json() for row in rows],
        })  # fmt: skip
        return common.EXIT_OK
    if not rows:
        print("no session files found under " + ", ".join(
            sanitize(str(root.path), single_line=True) for root in roots))  # fmt: skip
        return common.EXIT_OK
    headers = list(STATS_COLUMNS.values())
    print(
        f"{headers[0]:>9} {headers[1]:>8} {headers[2]:>8} {headers[3]:>11} "
        f"{headers[4]:>12} {headers[5]:>15}  file"
    )
    for row in rows:
        path = sanitize(row.path, single_line=True)
        if row.problem:
            print(
                f"{row.size:>9,} {'-':>8} {'-':>8} {'-':>11} {'-':>12} {'-':>15}  {path}  "
                f"({sanitize(row.problem, single_line=True, max_len=80)})"
            )
            continue
        worst = f"{row.worst_score:.2f}" if row.worst_score is not None else "-"
        peak = f"{row.peak_context:,}" if row.peak_context is not None else "-"
        print(
            f"{row.size:>9,} {row.entries:>8,} {row.branches:>8} {row.compactions:>11} "
            f"{peak:>12} {worst:>15}  {path}"
        )
    return common.EXIT_OK
