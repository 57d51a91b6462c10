"""The one reading of an entry reference typed by the user: an entry id, or ``#N``."""

from __future__ import annotations

from typing import Protocol

from tui_compactor.textsafe import sanitize

__all__ = ["RefError", "resolve_ref"]


class RefError(ValueError):
    """The reference names no entry of the session (the message says which and why)."""


class _Indexed(Protocol):
    @property
    def entries(self) -> list[object]: ...

    def index_of(self, entry_id: str) -> int | None: ...


def resolve_ref(session: _Indexed, ref: str | None, *, what: str = "entry") -> int | None:
    """Entry index of ``ref``: ``#N`` is entry index N, anything else an entry id.

    Args:
        session: the loaded session.
        ref: what the user typed; ``None`` (nothing typed) gives ``None``.
        what: the noun used in the error (``leaf``, ``cut entry``, ``target``...).

    Raises:
        RefError: no such entry; the message is safe to print (session text sanitized).
    """
    if ref is None:
        return None
    count = len(session.entries)
    if ref.startswith("#") and ref[1:].isdigit():
        index = int(ref[1:])
        if index < count:
            return index
        raise RefError(f"{what} #{index} does not exist (the session has {count} entries)")
    found = session.index_of(ref)
    if found is None:
        shown = sanitize(ref, single_line=True, max_len=80)
        raise RefError(f"no {what} with id {shown!r}")
    return found
