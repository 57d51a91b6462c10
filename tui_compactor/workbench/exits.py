"""The exit status of every command, one meaning each (documented in the README's table).

=====  ==========  ==================================================================
code   name        meaning
=====  ==========  ==================================================================
0      EXIT_OK     done: the report was printed, or the asked-for entry was appended
1      EXIT_REFUSED  nothing was written because the action was refused: the rules
                   refuse the cut or move, the plan summarizes nothing, the user did
                   not confirm, the append gate refused, or the summarizer failed
2      EXIT_USAGE  nothing was done because the input is wrong: bad arguments or
                   config, an unknown entry id, a file that cannot be read or is not
                   a usable session at all (``lint``'s "refuse" verdict)
=====  ==========  ==================================================================

Commands import these names; no command defines its own.

A refusal (exit 1) always has the same shape, ``Refusal``: the reason in the user's words, the
rule that refused (``code``, a JSON report's ``refusedCode``) and what to do about it (``hint``,
None when the rule has no advice). ``REFUSAL_CODES`` lists the codes of the workbench's own
rules; the append gate's codes (``A1`` ... ``A8``, ``live-agent``, ...) are the writer's
(``session.writer.AppendRefused``). docs/engine-commands.md shows both tables.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "EXIT_OK",
    "EXIT_REFUSED",
    "EXIT_USAGE",
    "EXIT_CODES",
    "REFUSAL_CODES",
    "Refusal",
]

EXIT_OK = 0
EXIT_REFUSED = 1
EXIT_USAGE = 2

EXIT_CODES: dict[int, str] = {
    EXIT_OK: "done",
    EXIT_REFUSED: "refused: nothing written (rules, empty plan, not confirmed, append gate, "
    "summarizer failure)",
    EXIT_USAGE: "wrong input: bad arguments or config, unknown id, unreadable or unusable file",
}
"""Code -> one-line meaning (the README and docs/engine-commands.md show the same table)."""


@dataclass(frozen=True)
class Refusal:
    """Why a writing action wrote nothing (see the module doc)."""

    reason: str
    code: str
    hint: str | None = None

    def __str__(self) -> str:
        return self.reason


REFUSAL_CODES: dict[str, str] = {
    "settings": "the settings make no sense (keep-recent not below the window minus reserve, ...)",
    "plan": "the rules refuse the plan: a cut that is not a valid cut point, no leaf to compact at",
    "nothing-to-compact": "the plan keeps every message: there is nothing to summarize",
    "nothing-to-do": "the navigation target is the current leaf",
    "nothing-to-undo": "no compaction on the active path",
    "not-last-compaction": "undo applies to the last compaction on the active path only",
    "no-parent": "the compaction has no parent entry to resume at",
    "needs-force": "entries written after the compaction would leave the active path",
    "nothing-to-seal": "the file ends with a newline: no torn last line to seal",
    "label-unchanged": "the label is already what was asked for",
    "no-such-entry": "the entry does not exist",
    "not-confirmed": "the user did not confirm (no --yes, no typed answer)",
    "kept-growing": "the session grew each time it was planned again: nothing was written",
}
"""The workbench's refusal codes -> meaning (the append gate's are the writer's)."""
