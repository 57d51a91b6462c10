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
"""

from __future__ import annotations

__all__ = ["EXIT_OK", "EXIT_REFUSED", "EXIT_USAGE", "EXIT_CODES"]

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
