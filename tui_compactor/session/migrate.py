"""In-memory migration of older session formats to v3 (never written back).

pi migrates v1 and v2 files by rewriting them; this tool only reads, so the migration is
applied to records as they are parsed and again whenever a record is re-read lazily:

- v1 (no ``version``): entries have no ``id``/``parentId``. They get deterministic ids
  (derived from the line's byte offset, so the same file gives the same ids on every load)
  and are chained in file order. A compaction's ``firstKeptEntryIndex`` indexes the parsed
  objects *with the header counted*, so entry index = value - 1 when the header comes first;
  it becomes ``firstKeptEntryId``.
- v2: ``message.role == "hookMessage"`` becomes ``"custom"``.
"""

from __future__ import annotations

import hashlib
from typing import Any

CURRENT_VERSION = 3
"""The newest session format this tool reads and may append to."""


def v1_entry_id(offset: int, taken: set[str] | dict[str, Any]) -> str:
    """A deterministic 8-hex-digit id for the v1 entry whose line starts at ``offset``.

    The id depends only on the byte offset (plus a counter on the rare collision with an id
    already in ``taken``), so reloading the same file yields the same ids.
    """
    attempt = 0
    while True:
        seed = f"tui-compactor:v1:{offset}:{attempt}".encode()
        candidate = hashlib.blake2b(seed, digest_size=4).hexdigest()
        if candidate not in taken:
            return candidate
        attempt += 1


def migrate_message_role(record: dict[str, Any]) -> bool:
    """v2 -> v3: rename a ``hookMessage`` role to ``custom`` in place. True if changed."""
    if record.get("type") != "message":
        return False
    message = record.get("message")
    if isinstance(message, dict) and message.get("role") == "hookMessage":
        message["role"] = "custom"
        return True
    return False


def migrate_record(
    record: dict[str, Any],
    *,
    version: int | None,
    entry_id: str,
    parent_id: str | None,
    first_kept_id: str | None = None,
) -> dict[str, Any]:
    """Apply the in-memory v1/v2 -> v3 migration to one parsed record, in place.

    ``entry_id``/``parent_id`` are the ids the loader assigned (used for v1 only);
    ``first_kept_id`` is the resolved ``firstKeptEntryIndex`` of a v1 compaction.
    """
    if version is not None and version < 2:
        record["id"] = entry_id
        record["parentId"] = parent_id
        if record.get("type") == "compaction" and "firstKeptEntryIndex" in record:
            del record["firstKeptEntryIndex"]
            if first_kept_id is not None:
                record["firstKeptEntryId"] = first_kept_id
    if version is not None and version < CURRENT_VERSION:
        migrate_message_role(record)
    return record


def migrate_header(header: dict[str, Any], version: int | None) -> dict[str, Any]:
    """Return a copy of the header as pi holds it after migration (version set to 3)."""
    migrated = dict(header)
    if version is not None and version < CURRENT_VERSION:
        migrated["version"] = CURRENT_VERSION
    return migrated
