"""Helpers shared by the session commands (lint, tree, inspect).

Nothing heavy is imported at module level: the CLI builds every parser on start-up.
"""

from __future__ import annotations

import sys
from typing import Any, cast

EXIT_OK = 0
EXIT_REFUSED = 2
"""A refused file (nothing usable) or wrong arguments."""


def print_json(value: Any) -> None:
    """Print ``value`` as JSON. ``ensure_ascii`` escapes every control character and every
    non-ASCII code point, so no session text can reach the terminal raw; a non-finite number
    is written as ``null``."""
    from tui_compactor.textsafe import json_for_terminal

    sys.stdout.write(json_for_terminal(value, ensure_ascii=True) + "\n")


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


def resolve_entry(session: Any, ref: str | None) -> int | None:
    """``ID`` or ``#INDEX`` -> entry index; None if ``ref`` is None; ValueError if unknown."""
    if ref is None:
        return None
    if ref.startswith("#") and ref[1:].isdigit():
        index = int(ref[1:])
        if 0 <= index < len(session.entries):
            return index
        raise ValueError(f"no entry #{index} (the session has {len(session.entries)})")
    index = session.index_of(ref)
    if index is None:
        raise ValueError(f"no entry with id {ref!r}")
    return cast(int, index)
