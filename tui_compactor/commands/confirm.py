"""The one question every writing command asks before it appends."""

from __future__ import annotations

import sys


def confirm(question: str, expected: str = "yes") -> bool:
    """Ask ``question`` on the terminal; only the typed word ``expected`` agrees.

    Without a terminal on stdin (scripts, CI) the answer is no: writing then needs ``--yes``.
    """
    if not sys.stdin.isatty():
        return False
    try:
        answer = input(f"{question} Type '{expected}' to write: ")
    except EOFError:
        return False
    return answer.strip().lower() == expected
