"""File operations seen in tool calls, and the file lists appended to summaries.

Both agents collect ``read`` / ``write`` / ``edit`` tool calls whose ``path`` argument is a
non-empty string. They differ in details:

* ``pi`` keeps paths as written and appends ``<read-files>`` / ``<modified-files>`` blocks
  (one path per line) to a compaction summary (``format_pi_file_ops``).
* ``omp`` skips URL-scheme paths (``artifact://``, ``https://``), strips read selectors
  (``a.py:10-20``, ``a.py:raw``) and writes one ``<files>`` block: a grouped path tree with
  ``(Read)`` / ``(Write)`` / ``(RW)`` marks, at most 20 files (``format_files_block``), which
  replaces any older file blocks in the summary (``upsert_file_operations``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from tui_compactor.engine.jstext import js_sorted

__all__ = [
    "FileOps",
    "extract_file_ops",
    "add_details",
    "written_by_extension",
    "compute_file_lists",
    "format_pi_file_ops",
    "format_files_block",
    "format_grouped_paths",
    "strip_file_blocks",
    "upsert_file_operations",
    "strip_read_selector",
    "is_url_path",
    "FILE_LIST_LIMIT",
]

FILE_LIST_LIMIT = 20
"""oh-my-pi lists at most this many files in a ``<files>`` block."""

_RANGE_CHUNK = r"L?\d+(?:(?:[-+]|\.\.)L?\d+|-|\.\.)?"
_RANGE_LIST = rf"{_RANGE_CHUNK}(?:,{_RANGE_CHUNK})*"
_SELECTOR = re.compile(rf"(?:{_RANGE_LIST}|raw|conflicts)", re.IGNORECASE)
_RANGE_ONLY = re.compile(_RANGE_LIST, re.IGNORECASE)
_RAW_ONLY = re.compile("raw", re.IGNORECASE)
_URL_SCHEME = re.compile(r"[a-z][a-z0-9+.-]*://", re.IGNORECASE)
_FILE_BLOCKS = (
    re.compile(r"<files>[\s\S]*?</files>\s*"),
    re.compile(r"<read-files>[\s\S]*?</read-files>\s*"),
    re.compile(r"<modified-files>[\s\S]*?</modified-files>\s*"),
)


@dataclass(slots=True)
class FileOps:
    """Paths read, written and edited, each in first-seen order (the reference's Sets)."""

    read: dict[str, None] = field(default_factory=dict)
    written: dict[str, None] = field(default_factory=dict)
    edited: dict[str, None] = field(default_factory=dict)

    def to_json(self, rules: str = "pi") -> dict[str, list[str]]:
        """Sets in insertion order plus the computed, sorted lists."""
        read_files, modified_files = compute_file_lists(self, rules)
        return {
            "read": list(self.read),
            "written": list(self.written),
            "edited": list(self.edited),
            "readFiles": read_files,
            "modifiedFiles": modified_files,
        }


def is_url_path(path: str) -> bool:
    """True for ``scheme://`` paths (oh-my-pi skips them)."""
    return _URL_SCHEME.search(path) is not None


def strip_read_selector(path: str) -> str:
    """``a.py:10-20`` -> ``a.py``; also ``:raw``, ``:conflicts``, ``:1-5:raw`` and ``:raw:1-5``."""
    colon = path.rfind(":")
    if colon <= 0:
        return path
    outer = path[colon + 1 :]
    if not _SELECTOR.fullmatch(outer):
        return path
    base = path[:colon]
    inner_colon = base.rfind(":")
    if inner_colon > 0:
        inner = base[inner_colon + 1 :]
        raw_range = _RAW_ONLY.fullmatch(inner) and _RANGE_ONLY.fullmatch(outer)
        range_raw = _RANGE_ONLY.fullmatch(inner) and _RAW_ONLY.fullmatch(outer)
        if raw_range or range_raw:
            base = base[:inner_colon]
    return base


def extract_file_ops(message: Any, ops: FileOps, rules: str = "pi") -> None:
    """Add the file paths of an assistant message's read/write/edit tool calls to ``ops``."""
    if not isinstance(message, dict) or message.get("role") != "assistant":
        return
    content = message.get("content")
    if not isinstance(content, list):
        return
    for block in content:
        if not isinstance(block, dict) or block.get("type") != "toolCall":
            continue
        if "arguments" not in block or "name" not in block:
            continue
        args = block.get("arguments")
        if not isinstance(args, dict):
            continue
        path = args.get("path")
        if not isinstance(path, str) or not path:
            continue
        if rules == "omp" and is_url_path(path):
            continue
        name = block.get("name")
        if name == "read":
            ops.read[strip_read_selector(path) if rules == "omp" else path] = None
        elif name == "write":
            ops.written[path] = None
        elif name == "edit":
            ops.edited[path] = None


def add_details(details: Any, ops: FileOps, rules: str = "pi") -> None:
    """Carry an earlier summary's ``details`` forward (readFiles -> read, modified -> edited)."""
    if not isinstance(details, dict):
        return
    read_files = details.get("readFiles")
    if isinstance(read_files, list):
        for path in read_files:
            if isinstance(path, str):
                ops.read[strip_read_selector(path) if rules == "omp" else path] = None
    modified = details.get("modifiedFiles")
    if isinstance(modified, list):
        for path in modified:
            if isinstance(path, str):
                ops.edited[path] = None


def written_by_extension(data: dict[str, Any], rules: str = "pi") -> bool:
    """Whether an extension wrote this compaction or branch-summary entry, by the flag the rules
    read: pi's ``fromHook``, oh-my-pi's ``fromExtension`` (18.2.3 ignores ``fromHook``). Such an
    entry's ``details`` do not feed the file lists."""
    return bool(data.get("fromExtension" if rules == "omp" else "fromHook"))


def compute_file_lists(ops: FileOps, rules: str = "pi") -> tuple[list[str], list[str]]:
    """(read-only files, modified files), each sorted by UTF-16 code units.

    Modified = edited ∪ written; read-only = read minus modified. oh-my-pi also drops URL paths.
    """
    modified = dict.fromkeys([*ops.edited, *ops.written])
    read_only = [path for path in ops.read if path not in modified]
    if rules == "omp":
        modified = {path: None for path in modified if not is_url_path(path)}
        read_only = [path for path in read_only if not is_url_path(path)]
    return js_sorted(read_only), js_sorted(modified)


def format_pi_file_ops(read_files: list[str], modified_files: list[str]) -> str:
    """pi's summary suffix: ``<read-files>`` and ``<modified-files>`` blocks, or ``""``."""
    sections = []
    if read_files:
        sections.append("<read-files>\n" + "\n".join(read_files) + "\n</read-files>")
    if modified_files:
        sections.append("<modified-files>\n" + "\n".join(modified_files) + "\n</modified-files>")
    if not sections:
        return ""
    return "\n\n" + "\n\n".join(sections)


class _PathNode:
    """A directory in the grouped path tree: its own files, then its subdirectories."""

    __slots__ = ("files", "file_names", "subdirs")

    def __init__(self) -> None:
        self.files: list[tuple[str, str]] = []  # (display name, original path)
        self.file_names: set[str] = set()
        self.subdirs: dict[str, _PathNode] = {}

    def add_file(self, name: str, key: str) -> None:
        """List a file once (the first path that gives this name wins)."""
        if name not in self.file_names:
            self.file_names.add(name)
            self.files.append((name, key))


def _build_tree(paths: Iterable[str]) -> _PathNode:
    root = _PathNode()
    for raw in paths:
        normalized = raw.replace("\\", "/")
        if is_url_path(normalized):
            root.add_file(normalized, raw)
            continue
        is_dir = raw.endswith("/")
        trimmed = normalized[:-1] if normalized.endswith("/") else normalized
        if not trimmed:
            continue
        segments = trimmed.split("/")
        dir_count = len(segments) if is_dir else len(segments) - 1
        node = root
        for segment in segments[:dir_count]:
            child = node.subdirs.get(segment)
            if child is None:
                child = node.subdirs[segment] = _PathNode()
            node = child
        if not is_dir:
            node.add_file(segments[-1], raw)
    return root


def _walk(node: _PathNode, depth: int, lines: list[str], annotate: Any) -> None:
    for name, key in node.files:
        lines.append(name + (annotate(key) if annotate else ""))
    for name, child in node.subdirs.items():
        parts = [name]
        # Fold chains of directories that hold one subdirectory and no files.
        while not child.files and len(child.subdirs) == 1:
            only_name, only = next(iter(child.subdirs.items()))
            parts.append(only_name)
            child = only
        lines.append("#" * (depth + 1) + " " + "/".join(parts) + "/")
        _walk(child, depth + 1, lines, annotate)


def format_grouped_paths(paths: list[str], annotate: Any = None) -> str:
    """Paths as a folded directory tree: ``# dir/`` headers (one ``#`` per level), bare names."""
    if not paths:
        return ""
    lines: list[str] = []
    _walk(_build_tree(paths), 0, lines, annotate)
    return "\n".join(lines)


def format_files_block(
    read_files: list[str], modified_files: list[str], read_set: Iterable[str] | None = None
) -> str:
    """oh-my-pi's ``<files>`` block (``""`` when there are no files)."""
    if not read_files and not modified_files:
        return ""
    reads = set(read_set or ())
    mode: dict[str, str] = {}
    for path in read_files:
        mode[path] = "Read"
    for path in modified_files:
        mode[path] = "RW" if path in reads else "Write"
    ordered = js_sorted(mode)
    listed = format_grouped_paths(ordered[:FILE_LIST_LIMIT], lambda path: f" ({mode[path]})")
    if len(ordered) > FILE_LIST_LIMIT:
        listed += f"\n[…{len(ordered) - FILE_LIST_LIMIT} files elided…]"
    return f"<files>\n{listed}\n</files>"


def strip_file_blocks(summary: str) -> str:
    """Remove ``<files>``, ``<read-files>`` and ``<modified-files>`` blocks, trim the end."""
    for pattern in _FILE_BLOCKS:
        summary = pattern.sub("", summary)
    return summary.rstrip()


def upsert_file_operations(
    summary: str,
    read_files: list[str],
    modified_files: list[str],
    read_set: Iterable[str] | None = None,
) -> str:
    """Replace any file blocks in ``summary`` with one fresh ``<files>`` block."""
    base = strip_file_blocks(summary)
    block = format_files_block(read_files, modified_files, read_set)
    if not block:
        return base
    if not base:
        return block
    return f"{base}\n\n{block}"
