"""What every writing command shares: the question it asks and its live-writer option."""

from __future__ import annotations

import argparse
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


def add_quiet_window(parser: argparse.ArgumentParser) -> None:
    """``--quiet-window SECONDS``: how long the file must stay unchanged before appending."""
    parser.add_argument(
        "--quiet-window",
        type=float,
        default=None,
        metavar="SECONDS",
        help="how long the file must stay unchanged before appending (live-writer check)",
    )
