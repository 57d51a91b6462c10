"""Helpers shared by the session commands (lint, tree, inspect).

Nothing heavy is imported at module level: the CLI builds every parser on start-up.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from tui_compactor.workbench.exits import EXIT_OK, EXIT_USAGE

__all__ = ["EXIT_OK", "EXIT_USAGE"]


def print_json(value: Any) -> None:
    """Print ``value`` as JSON. ``ensure_ascii`` escapes every control character and every
    non-ASCII code point, so no session text can reach the terminal raw; a non-finite number
    is written as ``null``."""
    from tui_compactor.textsafe import write_json_for_terminal

    write_json_for_terminal(sys.stdout, value, ensure_ascii=True)


def prints_report(args: Any, status: int) -> bool:
    """Whether a writing command ends by printing its ``--json`` report: with ``--json``,
    unless the input was wrong (exit 2: an unusable file, an unknown profile), where every
    command prints no report and says why on stderr."""
    return bool(args.json) and status != EXIT_USAGE


def finisher(args: Any, report: dict[str, Any]) -> Callable[[int, str | None], int]:
    """How a writing command (``seal``, ``undo``) ends: with ``--json`` it prints ``report``
    on stdout (``prints_report``) and a failure's ``message`` on stderr (as ``compact`` and
    ``navigate`` do), else ``message`` (stdout on success, stderr otherwise); it returns the
    exit status."""

    def finish(status: int, message: str | None = None) -> int:
        if args.json:
            if prints_report(args, status):
                print_json(report)
            if message and status:
                print(message, file=sys.stderr)
        elif message:
            print(message, file=sys.stderr if status else sys.stdout)
        return status

    return finish


def safe(text: Any, max_len: int | None = None, *, single_line: bool = True) -> str:
    """Session text made safe for a terminal (see ``tui_compactor.textsafe``)."""
    from tui_compactor.textsafe import sanitize

    return sanitize(str(text), single_line=single_line, max_len=max_len)


def diagnostic_json(diagnostic: Any) -> dict[str, Any]:
    """The JSON form of a ``Diagnostic``."""
    return {
        "severity": diagnostic.severity.value,
        "line": diagnostic.line,
        "offset": diagnostic.offset,
        "code": diagnostic.code,
        "message": diagnostic.message,
        "entryId": diagnostic.entry_id,
    }


def refused_error(session: Any) -> str:
    """The one clear error of a refused file."""
    errors = [d for d in session.diagnostics if d.severity.value == "error"]
    if errors:
        return str(errors[0])
    return session.append_refusal or f"{session.path}: not a usable session"


def refuse(session: Any, as_json: bool, fields: dict[str, Any]) -> int:
    """How a session command ends on a refused file: its one clear error (``refused_error``),
    printed as JSON (``fields`` and ``error``) or on stderr; returns the usage exit status."""
    error = refused_error(session)
    if as_json:
        print_json({**fields, "error": error})
    else:
        sys.stderr.write(f"tui-compactor: {safe(error)}\n")
    return EXIT_USAGE


def resolve_entry(session: Any, ref: str | None) -> int | None:
    """``ID`` or ``#INDEX`` -> entry index (``workbench.refs.resolve_ref``); None stays None.

    Raises:
        ValueError: no such entry (a ``RefError``).
    """
    from tui_compactor.workbench.refs import resolve_ref

    return resolve_ref(session, ref)
