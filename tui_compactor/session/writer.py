"""The only code that writes to a session file: appends behind the append gate (A1-A8).

Every append is one ``write()`` of complete, newline-terminated lines of strict JSON on an
``O_APPEND`` descriptor, followed by ``fsync``, under the locks of :mod:`session.lock`. Before
the write, and under the lock, the file is checked to be exactly the one that was loaded
(device, inode, size and a hash of the loaded bytes; a changed mtime alone, as after ``touch``,
is accepted when every loaded byte is identical). Bytes a user already has are never
rewritten or truncated: when a write fails, only our own partial bytes are removed, and only if
``fstat`` proves nothing else landed after them.

Refusals raise :class:`AppendRefused` (``reason`` says why, ``hint`` what the user can do).
:class:`SessionChanged` means the file grew by complete lines since it was loaded: reload
(``session.refresh()``), re-plan and ask again. :class:`AppendFailed` means the write itself
failed; ``rolled_back`` tells whether the file is back to its old bytes.

All OS calls go through :class:`OsOps`, which a test can replace to fail the N-th call.
"""

from __future__ import annotations

import errno
import hashlib
import json
import math
import os
import secrets
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tui_compactor.session import lock as session_lock_module
from tui_compactor.session.lock import LockBusy, SessionLock, detect_live_writer
from tui_compactor.session.model import (
    GENERATOR_NAME,
    TITLE_SLOT_BYTES,
    TORN_TAIL_CODE,
    seal_command,
    torn_tail_refusal,
)
from tui_compactor.textsafe import well_formed

LEAF_MARKER_TYPE = "tui-compactor/leaf"
"""``customType`` of the ``custom`` entry that moves the leaf (pi ignores it for context)."""
HASH_CHUNK = 1 << 20


# -- errors --------------------------------------------------------------------------------


class AppendRefused(Exception):
    """An append was refused; nothing was written.

    Attributes:
        reason: why, in one sentence, naming the file.
        hint: what the user can do about it.
        code: which rule refused it (``A1`` ... ``A8``, ``live-writer``, ``locked``, ...).
    """

    def __init__(self, reason: str, hint: str, *, code: str = "refused") -> None:
        super().__init__(f"{reason} {hint}".strip())
        self.reason = reason
        self.hint = hint
        self.code = code


class SessionChanged(AppendRefused):
    """The file grew by complete lines since it was loaded: reload, re-plan, ask again."""

    def __init__(self, reason: str, hint: str, *, added_bytes: int) -> None:
        super().__init__(reason, hint, code="A5-grew")
        self.added_bytes = added_bytes


class AppendFailed(AppendRefused):
    """The write or fsync failed. ``rolled_back`` is True when the file holds its old bytes."""

    def __init__(self, reason: str, hint: str, *, rolled_back: bool, damage: str | None) -> None:
        super().__init__(reason, hint, code="A8")
        self.rolled_back = rolled_back
        self.damage = damage


# -- OS wrapper (fault-injection seam) -------------------------------------------------------


class OsOps:
    """Thin wrapper over the OS calls the writer makes; tests subclass it to inject faults."""

    def open(self, path: str, flags: int, mode: int = 0o600) -> int:
        """``os.open``."""
        return os.open(path, flags, mode)

    def fstat(self, fd: int) -> os.stat_result:
        """``os.fstat``."""
        return os.fstat(fd)

    def stat(self, path: str) -> os.stat_result:
        """``os.stat``."""
        return os.stat(path)

    def pread(self, fd: int, length: int, offset: int) -> bytes:
        """``os.pread``."""
        return os.pread(fd, length, offset)

    def write(self, fd: int, data: bytes) -> int:
        """``os.write`` (one call; may be short)."""
        return os.write(fd, data)

    def fsync(self, fd: int) -> None:
        """``os.fsync``."""
        os.fsync(fd)

    def ftruncate(self, fd: int, length: int) -> None:
        """``os.ftruncate``."""
        os.ftruncate(fd, length)

    def close(self, fd: int) -> None:
        """``os.close``."""
        os.close(fd)

    def lock(self, path: str, wait_seconds: float) -> SessionLock:
        """Acquire both session locks (see :mod:`session.lock`)."""
        held = SessionLock(path, wait_seconds=wait_seconds)
        held.acquire()
        return held


DEFAULT_OPS = OsOps()


# -- the session as the writer sees it ------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AppendResult:
    """What was appended."""

    records: list[dict[str, Any]]
    """The records exactly as written (with id, parentId, timestamp)."""
    ids: list[str]
    offset: int
    """File offset where our bytes start (the old size)."""
    size_after: int
    took_over_stale_lock: str | None = None
    """Set when a stale oh-my-pi lock (dead pid) was removed to take the lock."""
    refreshed: bool = False
    """True when ``session.refresh()`` picked up the new entries."""


def _hash_range(ops: OsOps, fd: int, start: int, end: int) -> str:
    digest = hashlib.sha256()
    position = start
    while position < end:
        chunk = ops.pread(fd, min(HASH_CHUNK, end - position), position)
        if not chunk:
            break
        digest.update(chunk)
        position += len(chunk)
    return digest.hexdigest()


# -- ids, timestamps, JSON ------------------------------------------------------------------


def iso_timestamp(moment: datetime | None = None) -> str:
    """An ISO 8601 UTC timestamp with milliseconds and ``Z``, like pi's ``toISOString()``."""
    moment = moment or datetime.now(UTC)
    moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def taken_ids(session: Any) -> set[str]:
    """Every id a new entry must avoid: parseable entries, torn-line ids, the header id."""
    taken = {entry.id for entry in session.entries}
    taken.update(getattr(session, "torn_ids", None) or ())
    header = getattr(session, "header", None)
    if isinstance(header, dict) and isinstance(header.get("id"), str):
        taken.add(header["id"])
    return taken


def new_entry_id(taken: set[str], *, token: Callable[[], str] | None = None) -> str:
    """A fresh 8-hex id not in ``taken`` (added to it)."""
    make = token or (lambda: secrets.token_hex(4))
    for _ in range(1000):
        candidate = make()
        if candidate not in taken:
            taken.add(candidate)
            return candidate
    raise RuntimeError("could not find a free 8-hex id")  # pragma: no cover - 2**32 ids


def _clean_strings(value: Any) -> Any:
    """Replace lone surrogates so the record is valid Unicode everywhere."""
    if isinstance(value, str):
        return well_formed(value)
    if isinstance(value, Mapping):
        return {str(key): _clean_strings(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean_strings(item) for item in value]
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError("NaN or Infinity cannot be written to a session")
    return value


def encode_record(record: Mapping[str, Any]) -> bytes:
    """One line of strict JSON (no NaN, ASCII only), terminated by ``\\n``."""
    text = json.dumps(
        _clean_strings(record), allow_nan=False, ensure_ascii=True, separators=(",", ":")
    )
    if "\n" in text or "\r" in text:  # ensure_ascii escapes them; a guard, not a path
        raise ValueError("a record must be one line")
    return text.encode("ascii") + b"\n"


# -- entry builders -------------------------------------------------------------------------


def _generator(summarizer: str | None) -> dict[str, str]:
    generator = {"name": GENERATOR_NAME}
    if summarizer:
        generator["summarizer"] = summarizer
    return generator


def make_compaction_entry(
    *,
    summary: str,
    first_kept_entry_id: str,
    tokens_before: int,
    tokens_after: int | None = None,
    short_summary: str | None = None,
    read_files: Iterable[str] = (),
    modified_files: Iterable[str] = (),
    summarizer: str | None = "offline",
    method: str | None = None,
    preserve_data: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A ``compaction`` record (without id/parentId/timestamp; the writer adds them).

    ``method`` and ``preserve_data`` are oh-my-pi's ``method`` and ``preserveData`` (pi
    ignores both); an empty ``preserve_data`` is left out, as oh-my-pi does.
    """
    record: dict[str, Any] = {
        "type": "compaction",
        "summary": summary,
        "firstKeptEntryId": first_kept_entry_id,
        "tokensBefore": int(tokens_before),
    }
    if short_summary is not None:
        record["shortSummary"] = short_summary
    if tokens_after is not None:
        record["tokensAfter"] = int(tokens_after)
    if method is not None:
        record["method"] = method
    record["details"] = {"readFiles": list(read_files), "modifiedFiles": list(modified_files)}
    if preserve_data:
        record["preserveData"] = preserve_data
    record["generator"] = _generator(summarizer)
    return record


def make_branch_summary_entry(
    *,
    summary: str,
    read_files: Iterable[str] = (),
    modified_files: Iterable[str] = (),
    summarizer: str | None = "offline",
) -> dict[str, Any]:
    """A ``branch_summary`` record; the writer sets ``parentId`` and ``fromId`` to the new leaf
    (or ``fromId: "root"`` with ``parentId: null`` when the target is before the first entry)."""
    return {
        "type": "branch_summary",
        "summary": summary,
        "details": {"readFiles": list(read_files), "modifiedFiles": list(modified_files)},
        "generator": _generator(summarizer),
    }


def make_label_entry(*, target_id: str, label: str | None) -> dict[str, Any]:
    """A pi ``label`` record naming entry ``target_id``; an empty or None label clears it (the
    key is left out, as pi writes a cleared label). pi appends it as a child of the leaf."""
    record: dict[str, Any] = {"type": "label", "targetId": target_id}
    if label:
        record["label"] = label
    record["generator"] = _generator(None)
    return record


def make_leaf_marker(
    *, reason: str = "undo", undone_entry_id: str | None = None, previous_leaf_id: str | None = None
) -> dict[str, Any]:
    """A ``custom`` entry that moves the leaf: pi's loader resumes at the last entry, and a
    ``custom`` entry contributes nothing to the model context, so appending this at a target
    makes the agent continue from that target. Nothing is deleted."""
    data: dict[str, Any] = {"reason": reason}
    if undone_entry_id is not None:
        data["undoneEntryId"] = undone_entry_id
    if previous_leaf_id is not None:
        data["previousLeafId"] = previous_leaf_id
    return {
        "type": "custom",
        "customType": LEAF_MARKER_TYPE,
        "data": data,
        "generator": _generator(None),
    }


def is_leaf_marker(data: Mapping[str, Any]) -> bool:
    """True for an entry written by :func:`make_leaf_marker`."""
    return data.get("type") == "custom" and data.get("customType") == LEAF_MARKER_TYPE


# -- the gate -------------------------------------------------------------------------------


def _name(session: Any) -> str:
    return Path(session.path).name


def check_header(session: Any) -> None:
    """A1: a valid v3 header with a string id."""
    name = _name(session)
    header = getattr(session, "header", None)
    version = getattr(session, "version", None)
    if not isinstance(header, dict) or not isinstance(header.get("id"), str):
        raise AppendRefused(
            f"{name}: no valid session header, so this is not a pi session tui-compactor may "
            "append to.",
            "Copy the file if you want to keep it; opening it with `pi --session` would "
            "replace it with an empty session.",
            code="A1",
        )
    if version != 3 or isinstance(version, bool):
        if isinstance(version, int) and version > 3:
            raise AppendRefused(
                f"{name}: written by a newer session format (version {version}); this tool "
                "appends only to version 3.",
                "Use the agent that wrote it, or a newer tui-compactor.",
                code="A1",
            )
        raise AppendRefused(
            f"{name}: session format version {version}; appends need version 3.",
            "Open the session once in pi so it migrates the file, then try again "
            "(pi gives v1 entries new ids, so anything appended now would dangle).",
            code="A1",
        )
    if not getattr(session, "complete", True):
        raise AppendRefused(
            f"{name}: the session was only partly loaded (loading was cancelled).",
            "Reload it completely, then try again.",
            code="incomplete",
        )


def check_tail(session: Any) -> None:
    """A2: the file ends with ``\\n`` or with a complete record (we then start with ``\\n``)."""
    snapshot = session.snapshot
    if snapshot.torn_tail:
        reason, hint = torn_tail_refusal(session.path)
        raise AppendRefused(f"{_name(session)}: {reason}.", hint, code=TORN_TAIL_CODE)


def check_appendable(session: Any) -> None:
    """What the gate refuses whatever is appended and wherever: A1 (header, version, a whole
    load), A2 (a torn last line) and A3's "no entries". The loader's ``append_refusal`` (the
    app's banner) and the writing commands' first check are this rule, in these words."""
    check_header(session)
    check_tail(session)
    if not session.entries:
        check_parent_path(session, None)


def check_parent_path(session: Any, parent_index: int | None) -> list[int]:
    """A3: the parent exists and its path to a root is whole; returns that path (indices)."""
    name = _name(session)
    if parent_index is None:
        if not session.entries:
            raise AppendRefused(
                f"{name}: the session has no entries, so there is nothing to summarize or "
                "attach to.",
                "Nothing to do until the agent has written a conversation.",
                code="A3",
            )
        return []
    if not 0 <= parent_index < len(session.entries):
        raise AppendRefused(
            f"{name}: entry #{parent_index} does not exist.",
            "Reload the session and pick the entry again.",
            code="A3",
        )
    path = list(session.path_to(parent_index))
    if not path or path[-1] != parent_index:
        raise AppendRefused(
            f"{name}: the path from entry #{parent_index} to the root could not be built.",
            "Pick another entry.",
            code="A3",
        )
    problem = session.path_problem(parent_index)
    if problem is not None:
        raise AppendRefused(
            f"{name}: cannot attach to {session.entries[parent_index].id}: {problem}.",
            "Pick an entry on an unbroken branch (or repair a copy of the file by hand).",
            code="A3",
        )
    return path


def _tool_call_ids(message: Mapping[str, Any]) -> list[str]:
    content = message.get("content")
    if not isinstance(content, list):
        return []
    ids = []
    for block in content:
        if isinstance(block, dict) and block.get("type") == "toolCall":
            call_id = block.get("id")
            if isinstance(call_id, str):
                ids.append(call_id)
    return ids


def check_cut_point(session: Any, path: Sequence[int], first_kept_id: Any) -> None:
    """A4: ``firstKeptEntryId`` is on the path and a valid cut point."""
    name = _name(session)
    if not isinstance(first_kept_id, str):
        raise AppendRefused(
            f"{name}: the compaction has no firstKeptEntryId.",
            "Plan the compaction again.",
            code="A4",
        )
    position = next(
        (pos for pos, index in enumerate(path) if session.entries[index].id == first_kept_id),
        None,
    )
    if position is None:
        raise AppendRefused(
            f"{name}: firstKeptEntryId {first_kept_id} is not on the path the compaction is "
            "attached to, so pi would keep nothing after the summary.",
            "Plan the compaction again from the current leaf.",
            code="A4",
        )
    kept = session.entries[path[position]]
    if kept.id in (getattr(session, "synthetic_ids", None) or ()):
        raise AppendRefused(
            f"{name}: the cut entry on line {kept.line} has no id of its own in the file, so "
            "pi could not find it.",
            "Pick another cut point.",
            code="A4",
        )
    if kept.type == "compaction" or (kept.type == "message" and kept.role == "toolResult"):
        what = "a tool result" if kept.type == "message" else "a compaction"
        raise AppendRefused(
            f"{name}: the cut at {first_kept_id} starts the kept messages with {what}.",
            "Pick a cut at a user or assistant message.",
            code="A4",
        )
    calls_before: set[str] = set()
    for index in path[:position]:
        message = session.entries[index].message
        if isinstance(message, dict) and message.get("role") == "assistant":
            calls_before.update(_tool_call_ids(message))
    for index in path[position:]:
        message = session.entries[index].message
        if isinstance(message, dict) and message.get("role") == "toolResult":
            if message.get("toolCallId") in calls_before:
                raise AppendRefused(
                    f"{name}: the cut at {first_kept_id} separates tool call "
                    f"{message.get('toolCallId')} from its result.",
                    "Pick a cut before the assistant message that made the call.",
                    code="A4",
                )


def check_live_agents(session: Any) -> None:
    """A6: no running pi / oh-my-pi process works on this session (see ``session.agents``).

    pi keeps its leaf in memory: whatever we append while it runs, even idle at its prompt,
    is left on a dead side branch by its next entry. The user may override this explicitly
    (``ignore_agents=True``, the ``--ignore-agent`` flag)."""
    from tui_compactor.session.agents import describe_agents, find_agents

    header = getattr(session, "header", None)
    header = header if isinstance(header, dict) else {}
    cwd = header.get("cwd") if isinstance(header.get("cwd"), str) else None
    session_id = header.get("id") if isinstance(header.get("id"), str) else None
    agents = find_agents(session.path, session_cwd=cwd, session_id=session_id)
    if agents:
        raise AppendRefused(
            f"{_name(session)}: an agent is working on this session: {describe_agents(agents)}.",
            "pi keeps its place in memory, so its next entry would leave what we append on a "
            "dead side branch. Quit the agent (or finish with it), then try again; to append "
            "anyway, pass --ignore-agent.",
            code="live-agent",
        )


def check_live_writer(session: Any, quiet_seconds: float) -> None:
    """A6: no live writer (oh-my-pi lock with a live pid, a growing file)."""
    live = detect_live_writer(session.path, quiet_seconds=quiet_seconds)
    if live is not None:
        raise AppendRefused(
            f"{_name(session)}: an agent appears to be writing this session now ({live.reason}).",
            "Appending to a live session would put the entry on a side branch or break the "
            "agent's next rewrite. Close the agent (or wait for it to finish), then try again.",
            code="live-writer",
        )


# -- verification under the lock -------------------------------------------------------------


def _verify_unchanged(session: Any, ops: OsOps, fd: int) -> None:
    """A5: the open descriptor is the loaded file, byte for byte (title slot aside)."""
    name = _name(session)
    snapshot = session.snapshot
    held = ops.fstat(fd)
    try:
        live = ops.stat(str(session.path))
    except FileNotFoundError:
        raise AppendRefused(
            f"{name}: the file was removed or renamed since it was loaded.",
            "Reload the session before appending.",
            code="A5",
        ) from None
    if (held.st_dev, held.st_ino) != (live.st_dev, live.st_ino) or (
        held.st_dev,
        held.st_ino,
    ) != (snapshot.device, snapshot.inode):
        raise AppendRefused(
            f"{name}: the file was replaced (another file was renamed over it) since it was "
            "loaded.",
            "Reload the session; nothing was written.",
            code="A5",
        )
    if held.st_size < snapshot.size:
        raise AppendRefused(
            f"{name}: the file shrank from {snapshot.size} to {held.st_size} bytes since it was "
            "loaded (rewritten or truncated by another program).",
            "Reload the session; nothing was written.",
            code="A5",
        )
    full = _hash_range(ops, fd, 0, snapshot.size)
    if full != snapshot.sha256:
        if not _only_title_slot_changed(session, ops, fd):
            raise AppendRefused(
                f"{name}: the file's existing bytes changed since it was loaded (rewritten "
                "by another program).",
                "Reload the session; nothing was written.",
                code="A5",
            )
    if held.st_size > snapshot.size:
        added = held.st_size - snapshot.size
        tail = ops.pread(fd, 1, held.st_size - 1)
        if tail == b"\n":
            raise SessionChanged(
                f"{name}: {added} bytes of new entries were appended since it was loaded.",
                "Nothing was written: load it again (run the command again, or reload in the "
                "app), check the plan and confirm.",
                added_bytes=added,
            )
        raise AppendRefused(
            f"{name}: another program is in the middle of writing the file ({added} new bytes, "
            "no complete line yet).",
            "Wait until the agent is idle (or closed), reload, and try again.",
            code="live-writer",
        )


def _only_title_slot_changed(session: Any, ops: OsOps, fd: int) -> bool:
    """True when only oh-my-pi's title slot (bytes 0-255) differs from the loaded file.

    oh-my-pi rewrites its fixed-width slot in place when the title changes; the rest of the
    loaded bytes must be identical and the slot must still be a 256-byte title line.
    """
    if getattr(session, "title_slot", None) is None:
        return False
    snapshot = session.snapshot
    body_hash = session.body_digest
    if body_hash is None or snapshot.size < TITLE_SLOT_BYTES:
        return False
    slot = ops.pread(fd, TITLE_SLOT_BYTES, 0)
    if len(slot) != TITLE_SLOT_BYTES or not slot.endswith(b"\n"):
        return False
    try:
        parsed = json.loads(slot)
    except ValueError:
        return False
    if not isinstance(parsed, dict) or parsed.get("type") != "title":
        return False
    return bool(_hash_range(ops, fd, TITLE_SLOT_BYTES, snapshot.size) == body_hash)


# -- writing --------------------------------------------------------------------------------


@dataclass(slots=True)
class _Prepared:
    records: list[dict[str, Any]] = field(default_factory=list)
    ids: list[str] = field(default_factory=list)


def _prepare_records(
    session: Any,
    records: Sequence[Mapping[str, Any]],
    parent_index: int | None,
    *,
    chain: bool,
    ids: Sequence[str] | None,
    timestamps: Sequence[str] | None,
) -> _Prepared:
    """Give each record id, parentId and timestamp (pi's key order) and check A4 and A7."""
    name = _name(session)
    taken = taken_ids(session)
    path = check_parent_path(session, parent_index)
    parent_id = session.entries[parent_index].id if parent_index is not None else None
    prepared = _Prepared()
    now = iso_timestamp()
    for position, record in enumerate(records):
        if not isinstance(record.get("type"), str) or record.get("type") in ("session", "title"):
            raise AppendRefused(
                f"{name}: record {position + 1} has no valid entry type.",
                "This is a bug in the caller.",
                code="A8",
            )
        if ids is not None:
            entry_id = ids[position]
            if entry_id in taken:
                raise AppendRefused(
                    f"{name}: id {entry_id} is already used in this file.",
                    "Use a fresh id.",
                    code="A7",
                )
            taken.add(entry_id)
        else:
            entry_id = new_entry_id(taken)
        timestamp = timestamps[position] if timestamps is not None else now
        body = {
            key: value
            for key, value in record.items()
            if key not in ("type", "id", "parentId", "timestamp")
        }
        if record["type"] == "compaction":
            if position > 0 or not path:
                raise AppendRefused(
                    f"{name}: a compaction must be attached to an existing entry.",
                    "Plan the compaction again.",
                    code="A4",
                )
            check_cut_point(session, path, record.get("firstKeptEntryId"))
        if record["type"] == "branch_summary":
            expected_from = parent_id if parent_id is not None else "root"
            given_from = body.get("fromId", expected_from)
            if given_from != expected_from:
                raise AppendRefused(
                    f"{name}: a branch summary's fromId must be the entry it is attached to "
                    f"({expected_from}), not {given_from}.",
                    "This is a bug in the caller.",
                    code="A3",
                )
            body = {"fromId": expected_from, **{k: v for k, v in body.items() if k != "fromId"}}
        full = {
            "type": record["type"],
            "id": entry_id,
            "parentId": parent_id,
            "timestamp": timestamp,
            **body,
        }
        prepared.records.append(full)
        prepared.ids.append(entry_id)
        if chain:
            parent_id = entry_id
    return prepared


def _rollback(ops: OsOps, fd: int, old_size: int, data: bytes) -> tuple[bool, str | None]:
    """Remove our partial bytes if, and only if, they are all that lies past ``old_size``."""
    try:
        size_now = ops.fstat(fd).st_size
    except OSError as error:
        return False, f"could not check the file after the failed write ({error.strerror})"
    if size_now == old_size:
        return True, None
    landed = size_now - old_size
    if landed < 0:
        return False, f"the file shrank to {size_now} bytes during the write"
    if landed > len(data):
        return False, (
            f"{landed} bytes lie past the old end, more than our {len(data)}: another program "
            "wrote too; nothing was truncated"
        )
    try:
        ours = ops.pread(fd, landed, old_size)
    except OSError as error:
        return False, f"could not read back the partial write ({error.strerror})"
    if ours != data[:landed]:
        return False, "the bytes past the old end are not ours; nothing was truncated"
    try:
        ops.ftruncate(fd, old_size)
    except OSError as error:
        return False, f"could not remove our {landed} partial bytes ({error.strerror})"
    return True, None


def _describe(error: OSError) -> str:
    if error.errno == errno.ENOSPC:
        return "the disk is full"
    if error.errno == errno.EINTR:
        return "the write was interrupted"
    return error.strerror or str(error)


def _write_locked(
    session: Any, ops: OsOps, prefix_newline: bool, payload: bytes, expected_ids: Sequence[str]
) -> tuple[int, int]:
    """Open, verify (A5), write once, fsync, verify the tail. Returns (offset, size_after)."""
    name = _name(session)
    path = str(session.path)
    try:
        fd = ops.open(path, os.O_RDWR | os.O_APPEND | os.O_CLOEXEC)
    except OSError as error:
        raise AppendRefused(
            f"{name}: could not open the file for appending ({_describe(error)}).",
            "Check the file's permissions and try again; nothing was written.",
            code="A8",
        ) from None
    try:
        try:
            _verify_unchanged(session, ops, fd)
        except OSError as error:
            raise AppendRefused(
                f"{name}: could not re-check the file before writing ({_describe(error)}).",
                "Nothing was written; try again.",
                code="A5",
            ) from None
        data = (b"\n" if prefix_newline else b"") + payload
        old_size = session.snapshot.size
        failure: str | None = None
        try:
            written = ops.write(fd, data)
            if written != len(data):
                failure = f"short write ({written} of {len(data)} bytes)"
            else:
                ops.fsync(fd)
        except OSError as error:
            failure = _describe(error)
        if failure is not None:
            rolled_back, damage = _rollback(ops, fd, old_size, data)
            if rolled_back:
                raise AppendFailed(
                    f"{name}: the append failed ({failure}); our partial bytes were removed "
                    "and the file is as it was.",
                    "Nothing was saved. Free disk space or fix the error, then try again.",
                    rolled_back=True,
                    damage=None,
                )
            raise AppendFailed(
                f"{name}: the append failed ({failure}) and could not be undone cleanly: {damage}.",
                "The bytes before the append are untouched. Reload the session: tui-compactor "
                "will name the incomplete last line; seal it with "
                f"`{seal_command(session.path)}`.",
                rolled_back=False,
                damage=damage,
            )
        try:
            offset = _locate_written(ops, fd, old_size, data)
            tail = ops.pread(fd, len(data), offset)
        except OSError as error:
            raise AppendFailed(
                f"{name}: the entry was written and synced, but reading it back failed "
                f"({_describe(error)}).",
                "Reload the session to check it.",
                rolled_back=False,
                damage="unverified",
            ) from None
        _check_written(name, tail, data, expected_ids)
        return offset, offset + len(data)
    finally:
        try:
            ops.close(fd)
        except OSError:
            pass


LOCATE_LIMIT = 64 << 20
"""How far past the old end the read-back looks for our record (see _locate_written)."""


def _locate_written(ops: OsOps, fd: int, old_size: int, data: bytes) -> int:
    """Where our record landed: ``old_size``, unless a lock-less writer (pi) appended between
    the re-check and our write; ``O_APPEND`` then put our line after theirs."""
    if ops.pread(fd, len(data), old_size) == data:
        return old_size
    end = ops.fstat(fd).st_size
    region = ops.pread(fd, min(end - old_size, LOCATE_LIMIT), old_size)
    found = region.find(data)
    return old_size + found if found >= 0 else old_size


def _check_written(name: str, tail: bytes, data: bytes, expected_ids: Sequence[str]) -> None:
    """Re-read verification: our bytes are in place and every line parses to our ids."""
    problem = None
    if tail != data:
        problem = "the bytes read back differ from what was written"
    else:
        lines = [line for line in data.split(b"\n") if line]
        parsed_ids = []
        for line in lines:
            try:
                parsed_ids.append(json.loads(line).get("id"))
            except ValueError:
                problem = "a written line does not parse"
                break
        if problem is None and parsed_ids != list(expected_ids):
            problem = "the written lines do not carry the expected ids"
    if problem is not None:
        raise AppendFailed(
            f"{name}: the append could not be verified: {problem}.",
            "Reload the session and check its last lines.",
            rolled_back=False,
            damage=problem,
        )


def append_entries(
    session: Any,
    records: Sequence[Mapping[str, Any]],
    *,
    parent_index: int | None,
    chain: bool = True,
    ids: Sequence[str] | None = None,
    timestamps: Sequence[str] | None = None,
    quiet_seconds: float = session_lock_module.DEFAULT_QUIET_SECONDS,
    lock_wait_seconds: float = session_lock_module.DEFAULT_WAIT_SECONDS,
    ops: OsOps = DEFAULT_OPS,
    refresh: bool = True,
    ignore_agents: bool = False,
) -> AppendResult:
    """Append ``records`` as new entries after the gate (A1-A8) allows it.

    Args:
        session: a loaded session (``reader.load_session``).
        records: entry bodies (from the ``make_*`` builders, or any pi entry without id,
            parentId and timestamp).
        parent_index: entry index the first record attaches to; None for a new root.
        chain: each later record is a child of the previous one (else all share the parent).
        ids / timestamps: fixed values (for deterministic output); default fresh 8-hex ids and
            the current time.
        quiet_seconds: the window in which the file must not change (live-writer check).
        lock_wait_seconds: bounded wait for the locks.
        ops: the OS wrapper (tests inject faults here).
        refresh: call ``session.refresh()`` afterwards so the session shows the new entries.
        ignore_agents: append even though a running agent works on the session (the user
            said so explicitly); see ``check_live_agents``.

    Raises:
        AppendRefused: the gate refused (nothing written); ``SessionChanged`` when the file
            grew by complete lines; ``AppendFailed`` when the write itself failed.
    """
    if not records:
        raise ValueError("nothing to append")
    if ids is not None and len(ids) != len(records):
        raise ValueError("ids must match records")
    if timestamps is not None and len(timestamps) != len(records):
        raise ValueError("timestamps must match records")
    check_header(session)
    check_tail(session)
    prepared = _prepare_records(
        session, records, parent_index, chain=chain, ids=ids, timestamps=timestamps
    )
    payload = b"".join(encode_record(record) for record in prepared.records)
    prefix_newline = session.snapshot.size > 0 and not session.snapshot.ends_with_newline
    offset, size_after, stale = _gated_write(
        session,
        ops,
        prefix_newline,
        payload,
        prepared.ids,
        quiet_seconds,
        lock_wait_seconds,
        ignore_agents,
    )
    refreshed = False
    if refresh and hasattr(session, "refresh"):
        status = session.refresh()
        refreshed = getattr(status, "status", None) == "grew"
    return AppendResult(prepared.records, prepared.ids, offset, size_after, stale, refreshed)


def _gated_write(
    session: Any,
    ops: OsOps,
    prefix_newline: bool,
    payload: bytes,
    expected_ids: Sequence[str],
    quiet_seconds: float,
    lock_wait_seconds: float,
    ignore_agents: bool = False,
) -> tuple[int, int, str | None]:
    """A6 (a running agent, a live writer), then the locks, then the locked write."""
    if not ignore_agents:
        check_live_agents(session)
    check_live_writer(session, quiet_seconds)
    try:
        held = ops.lock(str(session.path), lock_wait_seconds)
    except LockBusy as busy:
        raise AppendRefused(str(busy), "Nothing was written.", code="locked") from None
    except OSError as error:
        raise AppendRefused(
            f"{_name(session)}: could not create the lock file beside the session "
            f"({_describe(error)}).",
            "Check that the directory is writable; nothing was written.",
            code="locked",
        ) from None
    try:
        offset, size_after = _write_locked(session, ops, prefix_newline, payload, expected_ids)
    finally:
        held.release()
    stale = None
    if held.took_over_stale is not None:
        stale = (
            f"removed a stale lock {held.took_over_stale.path.name} left by pid "
            f"{held.took_over_stale.pid} (no longer running)"
        )
    return offset, size_after, stale


def append_entry(
    session: Any,
    record: Mapping[str, Any],
    *,
    parent_index: int | None,
    **options: Any,
) -> AppendResult:
    """Append one record as a child of ``parent_index``; see :func:`append_entries`."""
    if "id" in options:
        options["ids"] = [options.pop("id")]
    if "timestamp" in options:
        options["timestamps"] = [options.pop("timestamp")]
    return append_entries(session, [record], parent_index=parent_index, **options)


def seal_tail(
    session: Any,
    *,
    quiet_seconds: float = session_lock_module.DEFAULT_QUIET_SECONDS,
    lock_wait_seconds: float = session_lock_module.DEFAULT_WAIT_SECONDS,
    ops: OsOps = DEFAULT_OPS,
    refresh: bool = True,
    ignore_agents: bool = False,
) -> AppendResult:
    """Append a single ``\\n`` after a torn or unterminated last line (only when the user asks).

    The fragment stays in the file as a malformed line that pi also skips; nothing is
    truncated. Needs A1, A5 and A6 only.
    """
    check_header(session)
    snapshot = session.snapshot
    if snapshot.ends_with_newline or snapshot.size == 0:
        raise AppendRefused(
            f"{_name(session)}: the file already ends with a newline; there is nothing to seal.",
            "No action needed.",
            code="A2",
        )
    offset, size_after, stale = _gated_write(
        session, ops, False, b"\n", [], quiet_seconds, lock_wait_seconds, ignore_agents
    )
    if refresh and hasattr(session, "refresh"):
        session.refresh()
    return AppendResult([], [], offset, size_after, stale, False)
