"""``tui-compactor lint SESSION [--json]``: verdict and diagnostics of one session file.

Prints the verdict (``open``, ``open+warn``, ``read-only``, ``refuse``), one diagnostic per
problem (severity, line, byte offset, code, message), counts by entry type, roots, leaves,
the leaf and the active path length. Exit status 0, or 2 when the file is refused (the JSON
still carries the verdict and the error) or the arguments are wrong.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from tui_compactor.commands import session_args as common
from tui_compactor.wording import count_of


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Register the command's switches."""
    parser.add_argument("session", metavar="SESSION", help="session file (.jsonl)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    from tui_compactor.commands import engine_args

    engine_args.add_rules(
        parser,
        "omp also says whether oh-my-pi 18.2.3 would refuse the file or hang on it; "
        "default: as the other commands choose (config, variable, the session)",
    )
    engine_args.add_config(parser)


def lint_report(session: Any, rules: str = "pi") -> dict[str, Any]:
    """The ``lint --json`` object for a loaded session under ``rules``."""
    from tui_compactor.session.agents import orphaned_appends
    from tui_compactor.session.flavor import omp_rewrite_reason, pi_problems
    from tui_compactor.session.model import Verdict
    from tui_compactor.session.omp_open import OMP_HANGS, OMP_REFUSES, omp_open_problems

    entries = session.entries
    counts: dict[str, int] = {}
    roles: dict[str, int] = {}
    for entry in entries:
        counts[entry.type] = counts.get(entry.type, 0) + 1
        if entry.role is not None:
            roles[entry.role] = roles.get(entry.role, 0) + 1
    leaf = session.leaf
    refused = session.verdict is Verdict.REFUSE
    omp = pi = None
    if rules != "omp":
        pi = {"problems": [common.diagnostic_json(p) for p in pi_problems(session)]}
    else:
        problems = omp_open_problems(session)
        omp = {
            "refuses": any(p.code == OMP_REFUSES for p in problems),
            "hangs": any(p.code in OMP_HANGS for p in problems),
            "problems": [common.diagnostic_json(p) for p in problems],
        }
    return {
        "file": str(session.path),
        "rules": rules,
        "verdict": session.verdict.value,
        "error": common.refused_error(session) if refused else None,
        "appendAllowed": session.append_refusal is None
        and (leaf is None or session.path_problem(leaf) is None)
        and not refused,
        "appendRefusal": session.append_refusal
        or (session.path_problem(leaf) if leaf is not None else None),
        "version": session.version,
        "complete": session.complete,
        "title": _slot_title(session, rules),
        "name": session.name,
        "entries": len(entries),
        "counts": counts,
        "roles": roles,
        "roots": [entries[i].id for i in session.roots],
        "leaves": [entries[i].id for i in session.leaves],
        "leaf": entries[leaf].id if leaf is not None else None,
        "pathLength": len(session.path_to(leaf)) if leaf is not None else 0,
        "tornIds": sorted(session.torn_ids),
        "diagnostics": [common.diagnostic_json(d) for d in session.diagnostics],
        "ompRewritesOnAppend": omp_rewrite_reason(session),
        "omp": omp,
        "pi": pi,
        "orphanedAppends": [
            {
                "entryId": entries[orphan.index].id,
                "line": entries[orphan.index].line,
                "bypassedBy": entries[orphan.bypassed_by].id,
                "message": orphan.message(session),
                "fix": ["navigate", str(session.path), "--to", entries[orphan.index].id],
            }
            for orphan in orphaned_appends(session)
        ],
    }


def _slot_title(session: Any, rules: str) -> Any:
    """The title slot's title; None without a slot, and under oh-my-pi's rules when oh-my-pi
    does not read line 1 as its slot (it refuses the file: the record titles nothing)."""
    from tui_compactor.session.omp_open import title_slot_fault

    slot = session.title_slot
    if not slot or (rules == "omp" and title_slot_fault(slot) is not None):
        return None
    return slot.get("title")


def run(args: argparse.Namespace) -> int:
    """Load the file, print the report; 2 if the file is refused."""
    from tui_compactor.commands import engine_args
    from tui_compactor.session.reader import load_session

    try:
        settings = engine_args.settings_from_args(args, config_optional=True)
    except engine_args.CommandError as error:
        return engine_args.fail(error)
    session = load_session(args.session)
    try:
        rules = settings.for_session(session).rules
        report = lint_report(session, rules)
    finally:
        session.close()
    if args.json:
        common.print_json(report)
    else:
        _print_text(report)
    return common.EXIT_USAGE if report["verdict"] == "refuse" else common.EXIT_OK


def _print_text(report: dict[str, Any]) -> None:
    safe = common.safe
    out = sys.stdout
    out.write(f"{safe(report['file'])}: {report['verdict'].upper()}\n")
    if report["error"] and not any(d["severity"] == "error" for d in report["diagnostics"]):
        # A refusal that is not one of the diagnostics below (each is printed once).
        out.write(f"  error: {safe(report['error'])}\n")
    # The file's own diagnostics, then what the rules' agent would refuse or hang on.
    rules_problems = (report.get("omp") or report.get("pi") or {}).get("problems", [])
    for diag in [*report["diagnostics"], *rules_problems]:
        where = f"line {diag['line']}" if diag["line"] is not None else "file"
        if diag["offset"] is not None:
            where += f" (byte {diag['offset']})"
        out.write(f"  {diag['severity']:<7} {where}: {safe(diag['message'])} [{diag['code']}]\n")
    for orphan in report.get("orphanedAppends", []):
        out.write(
            f"  {'warning':<7} line {orphan['line']}: {safe(orphan['message'])} [orphaned-append]\n"
        )
    if report["verdict"] == "refuse":
        return
    if report.get("ompRewritesOnAppend"):
        out.write(f"  {'warning':<7} file: {safe(report['ompRewritesOnAppend'])} [omp-rewrite]\n")
    counts = ", ".join(f"{safe(k) or '(no type)'} {v}" for k, v in sorted(report["counts"].items()))
    version = report["version"] if report["version"] is not None else "none"
    out.write(f"  version {version}, {count_of(report['entries'], 'entry')}: {counts or 'none'}\n")
    if report["title"]:
        out.write(f"  title: {safe(report['title'], 120)}\n")
    if report["name"]:
        out.write(f"  name: {safe(report['name'], 120)}\n")
    roots = ", ".join(safe(r, 40) for r in report["roots"][:10])
    more = f" (+{len(report['roots']) - 10})" if len(report["roots"]) > 10 else ""
    out.write(f"  roots: {roots or 'none'}{more}; leaves: {len(report['leaves'])}\n")
    leaf = safe(report["leaf"], 40) if report["leaf"] else "none"
    out.write(f"  leaf: {leaf}, active path {count_of(report['pathLength'], 'entry')}\n")
    if report["appendAllowed"]:
        out.write("  append: allowed\n")
    else:
        out.write(f"  append: refused: {safe(report['appendRefusal'] or 'nothing to append to')}\n")
