"""``tui-compactor compact``: plan, summarize and (when confirmed) append a compaction entry.

The plan is printed first, then the summaries stream to stderr as they are generated (the
history and turn-prefix summaries run at the same time; one is shown live, the other when it is
its turn), then the fidelity audit. The entry is appended only with ``--yes`` or when the user
types ``yes`` at the prompt; ``--dry-run`` never writes. Exit status: 0 done (or dry run),
1 refused / not confirmed / summarizer failed (nothing written), 2 bad arguments, config or
file.

Settings come from the config file and ``TUI_COMPACTOR_*`` variables; flags typed here win.
The summarizer is the compaction profile, ``--profile NAME``, or ``--provider/--base-url/
--model`` (the key from ``OPENAI_API_KEY`` / ``ANTHROPIC_API_KEY`` or the profile's variable).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, TextIO

from tui_compactor.commands import engine_args as common
from tui_compactor.commands.confirm import (
    add_append_options,
    append_options,
    confirm,
    dry_run_gate,
    gate_refusal,
    kept_growing,
    not_confirmed,
    refuse,
)
from tui_compactor.workbench.exits import EXIT_OK, EXIT_REFUSED, EXIT_USAGE


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Register the command's switches (every ``plan`` option plus the summarizer's)."""
    common.add_session(parser)
    common.add_leaf(parser)
    parser.add_argument(
        "--cut",
        metavar="ID",
        default=None,
        help="compact at this manual cut point instead of the computed one",
    )
    common.add_settings(parser)
    common.add_summarizer(parser)
    parser.add_argument(
        "--method",
        choices=("soft", "handoff", "shake"),
        default="soft",
        help="soft: summaries (default); handoff: a handoff document for the "
        "next model instance (oh-my-pi's handoff method); shake: refused, "
        "oh-my-pi writes shakes by rewriting the file",
    )
    parser.add_argument(
        "--instructions",
        default=None,
        metavar="TEXT",
        help="custom instructions for the history summary (or the handoff)",
    )
    parser.add_argument(
        "--replace-instructions",
        action="store_true",
        help="use --instructions instead of the default prompt, not in addition",
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="generate and show the summaries, write nothing"
    )
    parser.add_argument(
        "--show-requests",
        action="store_true",
        help="with --dry-run: print the exact requests each part would send "
        "(prompts, max_tokens, model, options; never the key) and call no model",
    )
    parser.add_argument("--yes", action="store_true", help="append without asking")
    parser.add_argument(
        "--json",
        action="store_true",
        help="print one JSON object on stdout (summaries still stream to stderr)",
    )
    add_append_options(parser)


class _StreamPrinter:
    """Shows concurrent parts on one stream: one part live, the others when their turn comes."""

    TITLES = {
        "history": "history summary",
        "turn_prefix": "turn prefix summary",
        "short": "short summary",
        "branch": "branch summary",
    }

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.live: str | None = None
        self.buffers: dict[str, list[str]] = {}
        self.finished: list[str] = []
        self.order: list[str] = []

    def _write(self, text: str) -> None:
        from tui_compactor.textsafe import sanitize

        self.out.write(sanitize(text))
        self.out.flush()

    def _title(self, part: str, label: str, note: str = "") -> str:
        return f"\n── {self.TITLES.get(part, part)} ({label}){note} ──\n"

    def __call__(self, event: Any) -> None:
        from tui_compactor.summarize.runner import PartDelta, PartFailed, PartFinished, PartStarted

        part = event.part
        if isinstance(event, PartStarted):
            note = ""
            if event.windows > 1:
                note = f", window {event.window}/{event.windows}"
            if event.attempt > 1:
                note += f", restarted (attempt {event.attempt})"
            if event.note:
                note += f"; warning: {event.note}"
            if part not in self.order:
                self.order.append(part)
            if self.live is None:
                self.live = part
            if self.live == part:
                self._write(self._title(part, event.label, note))
            else:
                self.buffers[part] = [self._title(part, event.label, note)]
        elif isinstance(event, PartDelta):
            if self.live == part:
                self._write(event.text)
            else:
                self.buffers.setdefault(part, []).append(event.text)
        elif isinstance(event, (PartFinished, PartFailed)):
            if isinstance(event, PartFailed):
                text = f"\n[{part} {'cancelled' if event.cancelled else 'failed'}: {event.error}]\n"
                if self.live == part:
                    self._write(text)
                else:
                    self.buffers.setdefault(part, []).append(text)
            self.finished.append(part)
            if self.live == part:
                self._write("\n")
                self.live = None
                self._promote()

    def _promote(self) -> None:
        """Print finished buffered parts; make the next running one live."""
        for part in list(self.order):
            if part not in self.buffers:
                continue
            self._write("".join(self.buffers.pop(part)))
            if part in self.finished:
                self._write("\n")
                continue
            self.live = part
            return


def run(args: argparse.Namespace) -> int:
    """Plan, summarize, audit and append when confirmed; exit status per module doc."""
    import asyncio

    from tui_compactor.config import ConfigError
    from tui_compactor.session.writer import AppendRefused, check_appendable
    from tui_compactor.summarize.compaction import CompactionJob
    from tui_compactor.summarize.errors import SummarizeError
    from tui_compactor.textsafe import sanitize
    from tui_compactor.workbench.actions import (
        MAX_REPLANS,
        ActionRefused,
        StaleProposal,
        apply,
        propose_compaction,
    )
    from tui_compactor.workbench.handle import SessionHandle
    from tui_compactor.workbench.plans import make_plan, plan_refusal, run_refusal

    def say(message: str) -> None:
        print(sanitize(message), file=sys.stderr)

    if args.show_requests and not args.dry_run:
        say("tui-compactor: --show-requests needs --dry-run (it shows requests, sends none)")
        return EXIT_USAGE
    if args.method == "shake":
        from tui_compactor.engine.methods import method_info

        say(
            f"tui-compactor: cannot write a shake: {method_info('shake').note}; "
            "`tui-compactor shake SESSION` shows what it would elide"
        )
        return EXIT_USAGE
    try:
        settings = common.settings_from_args(args)
        summarizer = common.summarizer_from_args(args, settings, compaction=True)
    except ConfigError as error:
        say(f"tui-compactor: {error}")
        return EXIT_USAGE
    except common.CommandError as error:
        return common.fail(error)
    try:
        settings, session, leaf = common.load_at_leaf(args, settings=settings)
        cut = common.resolve(session, args.cut, what="cut entry")
    except common.CommandError as error:
        return common.fail(error)

    report: dict[str, Any] = {"session": str(session.path), "written": False}

    def finish(status: int) -> int:
        if args.json:
            common.dump_json(report)
        return status

    if not args.dry_run:
        try:  # refuse before spending any model call: the append gate would refuse anyway
            check_appendable(session)
        except AppendRefused as refused:
            say(gate_refusal(report, refused))
            say("Nothing was written. Use --dry-run to preview the summaries anyway.")
            return finish(EXIT_REFUSED)

    handle = SessionHandle(session)
    gate_options: dict[str, Any] = append_options(args)
    for attempt in range(MAX_REPLANS + 1):
        with handle.read() as snapshot:
            plan = make_plan(
                session, leaf, settings, cut, cache=handle.token_cache(settings.counter())
            )
            planned_at, file_leaf = snapshot.generation, snapshot.leaf
        report["plan"] = plan.to_json()
        from tui_compactor.summarize.compaction import fold_notes

        notes = (
            []
            if summarizer.offline
            else fold_notes(plan, summarizer.context_window, settings.reserve_tokens)
        )
        report["plan"]["summarizerNotes"] = notes
        for note in notes:
            say(f"note: {note}")
        if not args.json:
            _print_plan(session, plan, summarizer.label)
        refusal = plan_refusal(plan, settings)
        if refusal is not None:
            say(f"tui-compactor: cannot compact here: {run_refusal(plan, settings)}")
            for position in plan.nearest_cut_points:
                say(f"  nearest valid cut: {session.entries[plan.branch[position]].id}")
            refuse(report, refusal)
            return finish(EXIT_REFUSED)

        if args.show_requests:
            from tui_compactor.commands.analysis import show_requests
            from tui_compactor.summarize.requests import compaction_requests

            requests = asyncio.run(compaction_requests(
                plan, session, summarizer, settings.compaction(), instructions=args.instructions,
                replace_instructions=args.replace_instructions,
                files_format=settings.files_format, method=args.method,
            ))  # fmt: skip
            show_requests(requests, report if args.json else None)
            return finish(EXIT_OK)
        job = CompactionJob(
            plan,
            session,
            summarizer,
            settings.compaction(),
            instructions=args.instructions,
            replace_instructions=args.replace_instructions,
            files_format=settings.files_format,
            method=args.method,
        )
        printer = _StreamPrinter(sys.stderr)

        async def generate(job: CompactionJob = job, printer: _StreamPrinter = printer) -> Any:
            from tui_compactor.summarize.providers import aclose_shared_clients

            try:
                return await job.run(printer)
            finally:
                await aclose_shared_clients()

        try:
            result = asyncio.run(generate())
        except SummarizeError as error:
            say(f"tui-compactor: summarizing failed: {error}")
            say("Nothing was written.")
            report["error"] = str(error)
            return finish(EXIT_REFUSED)

        report.update(
            {
                "summarizer": result.label,
                "offline": result.offline,
                "summary": result.summary,
                "method": result.method,
                "shortSummary": result.entry.get("shortSummary"),
                "audit": result.audit.to_json(),
                "preserveData": result.entry.get("preserveData"),
                "warnings": result.warnings,
                "seconds": {k: round(v, 3) for k, v in result.seconds.items()},
            }
        )
        if not args.json:
            _print_result(result)
        for warning in result.warnings:
            say(f"warning: {warning}")

        if args.dry_run:
            if not args.json:
                print("dry run: nothing written")
            gate = dry_run_gate(report, session)
            if gate is not None:
                say(gate)
            return finish(EXIT_OK)
        if not args.yes and not confirm(f"Append this compaction to {session.path}?"):
            say(not_confirmed(report))
            return finish(EXIT_REFUSED)
        try:
            with handle.read() as snapshot:
                proposal = propose_compaction(
                    snapshot, plan, result.entry, generation=planned_at, file_leaf=file_leaf
                )
            appended = apply(handle, proposal, **gate_options)
        except ActionRefused as action_refused:
            say(f"tui-compactor: cannot compact here: {action_refused.words}")
            refuse(report, action_refused)
            return finish(EXIT_REFUSED)
        except StaleProposal as stale:
            # Never onto the old leaf: plan again at the new leaf and ask again (--yes: say so).
            if leaf == file_leaf:
                leaf = stale.leaf if stale.leaf is not None else leaf
            report["replanned"] = attempt + 1
            say(f"tui-compactor: {stale}")
            say(
                "planning again at the new leaf"
                + (" (--yes: it will be written without asking)" if args.yes else "")
            )
            continue
        except AppendRefused as refused:
            say(gate_refusal(report, refused))
            return finish(EXIT_REFUSED)
        report["written"] = True
        report["entryId"] = appended.ids[0]
        if not args.json:
            print(
                f"appended compaction {sanitize(appended.ids[0], single_line=True)} "
                f"(summarizer: {result.label})"
            )
        return finish(EXIT_OK)
    say(kept_growing(report))
    return finish(EXIT_REFUSED)


def _print_plan(session: Any, plan: Any, label: str) -> None:
    from tui_compactor.commands.plan import plan_lines
    from tui_compactor.textsafe import sanitize

    print(f"session     {sanitize(str(session.path), single_line=True)}")
    print(f"summarizer  {sanitize(label, single_line=True)}")
    if plan.prepared:
        for line in plan_lines(session, plan):
            print(line)


def _print_result(result: Any) -> None:
    audit = result.audit
    print(
        f"summary     {len(result.summary)} chars by {result.label}"
        + (" (offline, extractive)" if result.offline else "")
    )
    timing = ", ".join(f"{k} {v:.2f}s" for k, v in result.seconds.items())
    print(f"time        {timing}")
    print(f"audit       {len(audit.kept)}/{len(audit.anchors)} anchors kept ({audit.coverage:.0%})")
    from tui_compactor.textsafe import sanitize

    for anchor in audit.missing[:20]:
        print(f"  missing {anchor.kind}: {sanitize(anchor.text, single_line=True, max_len=100)}")
    if len(audit.missing) > 20:
        print(f"  … and {len(audit.missing) - 20} more")
