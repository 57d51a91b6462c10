"""Find session files on disk and describe each one cheaply, for the session picker.

pi keeps sessions under ``~/.pi/agent/sessions/--<cwd with / as ->--/<time>_<id>.jsonl`` and
oh-my-pi under ``~/.omp/agent/sessions/`` in the same shape. A description reads only a bounded
head of the file (the header, an optional oh-my-pi title slot, the first user message), a bounded
tail (a ``session_info`` name set late in the session) and counts lines in chunks. Nothing here
writes: files are opened read-only, and no lock or cache file is created. Nothing here raises for
a bad or unreadable file: the description carries a ``problem`` instead.
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tui_compactor.engine.messages import text_of

__all__ = [
    "SessionRoot",
    "SessionSummary",
    "default_session_roots",
    "find_session_files",
    "describe_session",
    "discover_sessions",
    "count_lines",
    "project_from_dir_name",
]

HEAD_BYTES = 256 * 1024
"""How much of the start of a file is read for the header and the first user message."""
TAIL_BYTES = 64 * 1024
"""How much of the end of a file is read for a late ``session_info`` name."""
COUNT_CHUNK_BYTES = 1024 * 1024
"""Chunk size for the line count."""
FIRST_MESSAGE_MAX_CHARS = 400
"""The first user message is kept to this many characters (it is a one-line preview)."""
BOM = b"\xef\xbb\xbf"
"""A UTF-8 byte-order mark some editors put at the start of a file."""
MAX_WALK_DEPTH = 4
"""Session directories are shallow; a deeper walk is a symlink maze or the wrong directory."""


@dataclass(frozen=True, slots=True)
class SessionRoot:
    """A directory that holds session files, and which agent writes there."""

    path: Path
    agent: str
    """``"pi"``, ``"omp"`` or ``"dir"`` (a directory given with ``--sessions-dir``)."""


@dataclass(frozen=True, slots=True)
class SessionSummary:
    """What the picker shows for one session file. Strings are raw session text: sanitize them
    before display."""

    path: Path
    agent: str
    project: str
    """The header's ``cwd``, else the project decoded from pi's directory name, else ``""``."""
    name: str | None
    """The latest ``session_info`` name seen in the head or tail, else the oh-my-pi title."""
    first_message: str | None
    """Text of the first user message (capped), if found in the head."""
    started: datetime | None
    """The header's timestamp (session start)."""
    modified: datetime
    """The file's modification time (last activity)."""
    size: int
    """File size in bytes."""
    entries: int | None
    """Number of entry lines (header and title slot not counted); None if unreadable."""
    version: int | None
    """The header's ``version`` (missing -> 1); None without a header."""
    session_id: str | None
    problem: str | None = None
    """Why this file could not be described fully (no header, unreadable...), else None."""

    @property
    def title(self) -> str:
        """The session's name, else its first user message, else the file name."""
        return self.name or self.first_message or self.path.name


def default_session_roots(
    home: Path | None = None, extra: Iterable[Path] = ()
) -> list[SessionRoot]:
    """The pi and oh-my-pi session directories under ``home`` (default: the user's home) that
    exist, followed by each directory in ``extra`` (``--sessions-dir``), existing or not."""
    home = Path.home() if home is None else home
    roots = [
        SessionRoot(home / ".pi" / "agent" / "sessions", "pi"),
        SessionRoot(home / ".omp" / "agent" / "sessions", "omp"),
    ]
    found = [root for root in roots if root.path.is_dir()]
    found.extend(SessionRoot(Path(path).expanduser(), "dir") for path in extra)
    return found


def find_session_files(
    roots: Iterable[SessionRoot], cancel: threading.Event | None = None
) -> Iterator[tuple[SessionRoot, Path]]:
    """Yield ``(root, path)`` for every ``*.jsonl`` file under the roots, each file once.

    Hidden files (lock files such as ``.name.lock``, editor backups) are skipped; symlinked
    directories are not followed, so a link loop cannot trap the walk.
    """
    seen: set[Path] = set()
    for root in roots:
        if root.path.is_file() and root.path.suffix == ".jsonl":
            resolved = root.path.resolve()
            if resolved not in seen:
                seen.add(resolved)
                yield root, root.path
            continue
        base_depth = len(root.path.parts)
        for directory, subdirs, files in os.walk(root.path, onerror=lambda _error: None):
            if cancel is not None and cancel.is_set():
                return
            if len(Path(directory).parts) - base_depth >= MAX_WALK_DEPTH:
                subdirs.clear()
            subdirs[:] = sorted(d for d in subdirs if not d.startswith("."))
            for file_name in sorted(files):
                if file_name.startswith(".") or not file_name.endswith(".jsonl"):
                    continue
                path = Path(directory) / file_name
                resolved = path.resolve()
                if resolved in seen:
                    continue
                seen.add(resolved)
                yield root, path


_PI_DIR_RE = re.compile(r"^--(.*)--$")


def project_from_dir_name(dir_name: str) -> str | None:
    """Decode pi's session directory name (``--home-dev-project--``) into a path.

    The encoding replaces ``/`` with ``-``, so it is lossy: a dash in a directory name reads
    back as a slash. Used only when the header has no ``cwd``.
    """
    match = _PI_DIR_RE.match(dir_name)
    if not match:
        return None
    return "/" + match.group(1).replace("-", "/")


def count_lines(path: Path, cancel: threading.Event | None = None) -> int:
    """Number of lines in the file: ``\\n`` count, plus one for an unterminated last line.

    Blank lines are counted too (they are rare; this is a fast estimate for display).
    """
    lines = 0
    last_byte = b"\n"
    with open(path, "rb") as stream:
        while chunk := stream.read(COUNT_CHUNK_BYTES):
            lines += chunk.count(b"\n")
            last_byte = chunk[-1:]
            if cancel is not None and cancel.is_set():
                break
    if last_byte != b"\n":
        lines += 1
    return lines


_TEXT_FIELD_RE = re.compile(rb'"text"\s*:\s*"((?:[^"\\]|\\.)*)')
_PARTIAL_ESCAPE_RE = re.compile(r"\\(u[0-9a-fA-F]{0,3})?$")


def _text_from_cut_line(line: bytes) -> str | None:
    """The first ``"text"`` string of a JSON line cut off by the head limit, best effort."""
    match = _TEXT_FIELD_RE.search(line)
    if not match:
        return None
    body = match.group(1).decode("utf-8", "replace")
    body = _PARTIAL_ESCAPE_RE.sub("", body)
    try:
        return str(json.loads(f'"{body}"'))
    except ValueError:
        return body


def _parse_line(line: bytes) -> dict[str, Any] | None:
    """Parse one JSONL line into an object, or None."""
    try:
        value = json.loads(line)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _parse_time(value: Any) -> datetime | None:
    """Parse an ISO timestamp (``Z`` suffix allowed) into an aware datetime, or None."""
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _cap(text: str | None) -> str | None:
    """Cap a preview text to ``FIRST_MESSAGE_MAX_CHARS`` and strip outer whitespace."""
    if text is None:
        return None
    text = text.strip()
    return text[:FIRST_MESSAGE_MAX_CHARS] if text else None


def _session_info_name(record: dict[str, Any]) -> str | None:
    """The name carried by a ``session_info`` entry, if any."""
    if record.get("type") != "session_info":
        return None
    name = record.get("name")
    return name if isinstance(name, str) and name.strip() else None


def describe_session(
    path: Path,
    agent: str = "dir",
    *,
    count: bool = True,
    cancel: threading.Event | None = None,
) -> SessionSummary:
    """Describe one session file from a bounded head, a bounded tail and a line count.

    Never raises for bad content or I/O errors; ``problem`` says what went wrong.
    """
    problem: str | None = None
    try:
        stat = path.stat()
    except OSError as error:
        return SessionSummary(
            path=path,
            agent=agent,
            project=project_from_dir_name(path.parent.name) or "",
            name=None,
            first_message=None,
            started=None,
            modified=datetime.fromtimestamp(0, UTC),
            size=0,
            entries=None,
            version=None,
            session_id=None,
            problem=f"cannot read: {error.strerror or error}",
        )
    modified = datetime.fromtimestamp(stat.st_mtime, UTC)
    header: dict[str, Any] | None = None
    omp_title: str | None = None
    name: str | None = None
    first_message: str | None = None
    head_lines = 0
    tail = b""
    try:
        with open(path, "rb") as stream:
            head = stream.read(HEAD_BYTES)
            if stat.st_size > HEAD_BYTES:
                stream.seek(max(HEAD_BYTES, stat.st_size - TAIL_BYTES))
                tail = stream.read(TAIL_BYTES)
    except OSError as error:
        head = b""
        problem = f"cannot read: {error.strerror or error}"
    head_is_whole = stat.st_size <= HEAD_BYTES
    raw_lines = head.split(b"\n")
    for number, raw_line in enumerate(raw_lines):
        is_cut = not head_is_whole and number == len(raw_lines) - 1
        line = raw_line.strip()
        if number == 0:
            line = line.removeprefix(BOM)
        if not line:
            continue
        record = None if is_cut else _parse_line(line)
        if record is None:
            if is_cut and first_message is None and header is not None and b'"user"' in line:
                first_message = _cap(_text_from_cut_line(line))
            continue
        kind = record.get("type")
        if kind == "title" and header is None and head_lines == 0:
            title = record.get("title")
            omp_title = title if isinstance(title, str) and title.strip() else None
        elif kind == "session" and header is None:
            header = record
        elif header is not None:
            name = _session_info_name(record) or name
            if first_message is None and kind == "message":
                message = record.get("message")
                if isinstance(message, dict) and message.get("role") == "user":
                    first_message = _cap(text_of(message.get("content"), "\n") or None)
        head_lines += 1
    if tail:
        # The first tail line may be cut at the seek point: drop it.
        for raw_line in tail.split(b"\n")[1:]:
            if b"session_info" not in raw_line:
                continue
            record = _parse_line(raw_line.strip())
            if record is not None:
                name = _session_info_name(record) or name
    if header is None and problem is None:
        problem = "no session header in the first lines"
    if header is not None and isinstance(header.get("title"), str) and not omp_title:
        omp_title = header["title"].strip() or None
    entries: int | None = None
    readable = problem is None or header is None and bool(head)
    if count and readable:
        try:
            extra_lines = (1 if header is not None else 0) + (1 if omp_title_slot(head) else 0)
            entries = max(0, count_lines(path, cancel) - extra_lines)
        except OSError as error:
            problem = problem or f"cannot read: {error.strerror or error}"
    cwd = header.get("cwd") if header is not None else None
    project = cwd if isinstance(cwd, str) and cwd else project_from_dir_name(path.parent.name)
    version: int | None = None
    if header is not None:
        raw_version = header.get("version", 1)
        version = raw_version if isinstance(raw_version, int) else None
    session_id = header.get("id") if header is not None else None
    return SessionSummary(
        path=path,
        agent=agent,
        project=project or "",
        name=name or omp_title,
        first_message=first_message,
        started=_parse_time(header.get("timestamp")) if header is not None else None,
        modified=modified,
        size=stat.st_size,
        entries=entries,
        version=version,
        session_id=session_id if isinstance(session_id, str) else None,
        problem=problem,
    )


def omp_title_slot(head: bytes) -> bool:
    """True when the first line of ``head`` is oh-my-pi's title slot."""
    first_line = head.split(b"\n", 1)[0].strip().removeprefix(BOM)
    record = _parse_line(first_line)
    return record is not None and record.get("type") == "title"


def discover_sessions(
    roots: Iterable[SessionRoot],
    *,
    count: bool = True,
    cancel: threading.Event | None = None,
) -> Iterator[SessionSummary]:
    """Describe every session file under ``roots``, in directory order (sort afterwards)."""
    for root, path in find_session_files(roots, cancel):
        if cancel is not None and cancel.is_set():
            return
        yield describe_session(path, root.agent, count=count, cancel=cancel)
