"""``tui-compactor audit SESSION [--json]``: hindsight audit of the compactions in a file.

For every compaction (any branch): the facts from its summarized region that the session used
after it and that neither its summary nor its kept window carried (where each was lost, where
it was needed), the files re-read after it, and a score (share of the facts used later that it
carried). Exit status 0 (a finding is not an error), 2 for files that cannot be used.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from tui_compactor.commands import engine_args as common
from tui_compactor.wording import count_of

if TYPE_CHECKING:
    from tui_compactor.engine.hindsight import EntryFacts
    from tui_compactor.workbench.settings import Settings


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Register the command's switches."""
    common.add_session(parser)
    common.add_settings(parser)
    common.add_json(parser)


def load_with_facts(args: argparse.Namespace) -> tuple[Settings, Any, EntryFacts]:
    """The settings, the session and what the hindsight audit needs of each entry: noted by
    a copy of this process while this one loads the file when a core is free
    (``FactsAhead``), or else while the file loads (each record decoded once); ``audit`` and
    ``timeline`` load so. Raises ``CommandError``."""
    from tui_compactor.engine.hindsight import EntryFacts, FactsAhead

    facts = EntryFacts()
    ahead = FactsAhead.start(args.session) if FactsAhead.worth_it() else None
    on_record = facts.take if ahead is None else ahead.note
    try:
        settings, session = common.load_with_settings(args, writes=False, on_record=on_record)
    except BaseException:
        if ahead is not None:
            ahead.cancel()
        raise
    if ahead is not None:
        ahead.finish(facts, session)
    return settings, session, facts


def run(args: argparse.Namespace) -> int:
    """Audit every compaction and print the findings."""
    from tui_compactor.engine.hindsight import audit_compactions

    try:
        settings, session, facts = load_with_facts(args)
    except common.CommandError as error:
        return common.fail(error)
    audits = audit_compactions(session, settings.rules, facts)
    if args.json:
        common.dump_json(
            {
                "session": str(session.path),
                "rules": settings.rules,
                "compactions": [audit.to_json(session) for audit in audits],
                "worstScore": round(min(a.score for a in audits), 3) if audits else None,
            }
        )
        return common.EXIT_OK
    print_audits(session, audits)
    return common.EXIT_OK


def print_audits(session: Any, audits: list[Any]) -> None:
    """The text form of ``audit``."""
    from tui_compactor.textsafe import sanitize

    entries = session.entries
    if not audits:
        print("no compactions in this session")
        return
    for audit in audits:
        ident = sanitize(entries[audit.entry_index].id, single_line=True, max_len=16)
        print(
            f"compaction {ident} (entry #{audit.entry_index}): score {audit.score:.2f} — "
            f"{audit.used - len(audit.lost)} of {audit.used} facts used later were carried; "
            f"{count_of(len(audit.rereads), 'file')} re-read"
        )
        if audit.warning:
            print(f"  warning: {sanitize(audit.warning, single_line=True)}")
        for fact in audit.lost:
            text = sanitize(fact.text, single_line=True, max_len=80)
            print(f"  lost {fact.kind:<10} {text:<80} #{fact.lost_at} → needed #{fact.needed_at}")
        for item in audit.rereads:
            path = sanitize(item.path, single_line=True, max_len=80)
            print(f"  re-read    {path:<80} #{item.read_at} → again #{item.reread_at}")
    worst = min(audits, key=lambda a: a.score)
    print(
        f"{count_of(len(audits), 'compaction')}; worst score {worst.score:.2f} "
        f"(entry #{worst.entry_index})"
    )
