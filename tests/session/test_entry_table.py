"""The session's index kept in columns (``session.table``): every entry read from it equals
what its record says, in memory and lazily, and the index stays small per entry."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from tui_compactor.engine.context import build_context
from tui_compactor.session import table
from tui_compactor.session.reader import load_session
from tui_compactor.session.session import timestamp_key

from .conftest import CORPUS, SESSIONS

FIXTURES = sorted(CORPUS.glob("*.jsonl")) + sorted(SESSIONS.glob("*.jsonl"))


def _fields(entry: Any) -> tuple[Any, ...]:
    return (entry.index, entry.id, entry.parent_id, entry.type, entry.timestamp, entry.line,
            entry.offset, entry.size, entry.role, entry.parent)  # fmt: skip


@pytest.mark.parametrize("path", FIXTURES, ids=lambda path: path.name)
def test_every_entry_read_from_the_columns_matches_its_record(path: Path) -> None:
    """Timestamps, parent ids, types and roles rebuilt from the columns are the record's own
    values (after migration), the same in memory and lazily read, by index, slice and
    iteration."""
    eager = load_session(path, lazy=False)
    lazy = load_session(path, lazy=True)
    assert [_fields(e) for e in eager.entries] == [_fields(e) for e in lazy.entries]
    for entry in eager.entries:
        record = entry.data
        timestamp = record.get("timestamp")
        assert entry.timestamp == (timestamp if isinstance(timestamp, str) else "")
        if entry.parent is not None:
            assert entry.parent_id == eager.entries[entry.parent].id
        elif isinstance(record.get("parentId"), str) and not record.get("_unavailable"):
            assert entry.parent_id == record["parentId"]
            assert eager.broken_parent(entry.index) == entry.parent_id
        assert entry.type == (record.get("type") if isinstance(record.get("type"), str) else "")
        assert eager.entries[entry.index] == entry
        assert eager.parent_of(entry.index) == entry.parent
        assert eager.id_of(entry.index) == entry.id
        assert eager.type_of(entry.index) == entry.type
    if eager.entries:
        assert eager.entries[-1] == list(eager.entries)[-1]
        assert eager.entries[1:3] == list(eager.entries)[1:3]
    assert eager.entry_types() == [e.type for e in eager.entries]
    assert eager.entry_roles() == [e.role for e in eager.entries]
    # The columns walks read: the same facts, without an Entry or a call per entry.
    types = eager.type_column()
    assert len(types) == len(eager.entries) and list(types) == eager.entry_types()
    assert types[1:3] == eager.entry_types()[1:3]
    parents = eager.parent_column()
    assert [None if p < 0 else p for p in parents] == [e.parent for e in eager.entries]
    assert list(eager.id_column()) == [e.id for e in eager.entries]
    with pytest.raises(IndexError):
        eager.entries[len(eager.entries)]


def test_timestamps_of_any_shape_read_back_as_written_and_order_siblings(tmp_path: Path) -> None:
    """pi's 24-character timestamps are packed; any other shape (another length, an offset,
    non-ASCII, a number, none) reads back unchanged, and siblings still sort by instant."""
    stamps: list[Any] = [
        "2025-12-03T14:00:05.000Z",
        "2025-12-03T14:00:01Z",
        "2025-12-03T15:00:02.000+01:00",
        "2025-12-03T14:00:0é.000Z",
        1764770400000,
        None,
        "2025-12-03T14:00:03.500Z",
    ]
    lines = [{"type": "session", "version": 3, "id": "s", "timestamp": "2025-12-03T14:00:00.000Z",
              "cwd": "/"}]  # fmt: skip
    lines.append({"type": "message", "id": "root", "parentId": None,
                  "timestamp": "2025-12-03T13:00:00.000Z",
                  "message": {"role": "user", "content": "hi"}})  # fmt: skip
    for n, stamp in enumerate(stamps):
        record: dict[str, Any] = {"type": "message", "id": f"c{n}", "parentId": "root",
                                  "message": {"role": "user", "content": str(n)}}  # fmt: skip
        if stamp is not None:
            record["timestamp"] = stamp
        lines.append(record)
    path = tmp_path / "stamps.jsonl"
    path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines))
    for lazy in (False, True):
        session = load_session(path, lazy=lazy)
        read = [session.entries[i].timestamp for i in range(1, len(stamps) + 1)]
        assert read == [stamp if isinstance(stamp, str) else "" for stamp in stamps]
        order = [session.entries[i].id for i in session.children(0)]
        expected = sorted(range(len(stamps)), key=lambda n: timestamp_key(stamps[n]))
        assert order == [f"c{n}" for n in expected]


def test_more_types_and_roles_than_a_byte_holds_read_back_as_written(tmp_path: Path) -> None:
    """The type and role columns hold a byte an entry until a file names more than 256 of
    either; past that every entry still reads back its own type and role (the first 256 too),
    whether the new name came through the inline path (a message's role) or the general
    one (an entry type)."""
    lines: list[dict[str, Any]] = [{"type": "session", "version": 3, "id": "s", "cwd": "/",
                                    "timestamp": "2025-12-03T14:00:00.000Z"}]  # fmt: skip
    parent = None
    for n in range(300):
        entry_id = f"m{n}"
        lines.append({"type": "message", "id": entry_id, "parentId": parent,
                      "timestamp": "2025-12-03T14:00:01.000Z",
                      "message": {"role": f"role-{n}", "content": "x"}})  # fmt: skip
        lines.append({"type": f"kind-{n}", "id": f"k{n}", "parentId": entry_id,
                      "timestamp": "2025-12-03T14:00:01.000Z"})  # fmt: skip
        parent = f"k{n}"
    path = tmp_path / "names.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    expected_types = [t for n in range(300) for t in ("message", f"kind-{n}")]
    expected_roles = [r for n in range(300) for r in (f"role-{n}", None)]
    for lazy in (False, True):
        session = load_session(path, lazy=lazy)
        assert session.entry_types() == expected_types
        assert session.entry_roles() == expected_roles
        assert [e.type for e in session.entries] == expected_types
        assert [session.entries[i].role for i in range(600)] == expected_roles
        assert session.type_of(599) == "kind-299" and session.type_of(1) == "kind-0"


def test_lines_and_offsets_past_four_bytes_read_back_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Line numbers and byte offsets take four bytes an entry until a file goes past what
    four bytes hold (4 GB, 4 billion lines); then the columns widen and every entry, before
    and after, keeps its line and offset. The bound is lowered here to a few KB (a real
    4 GB file is not written), on a file indexed inline and through the general path (a
    label every few lines), eagerly and lazily."""
    lines: list[dict[str, Any]] = [{"type": "session", "version": 3, "id": "s", "cwd": "/",
                                    "timestamp": "2025-12-03T14:00:00.000Z"}]  # fmt: skip
    parent = None
    for n in range(200):
        entry_id = f"e{n}"
        if n % 7 == 3:
            record: dict[str, Any] = {"type": "label", "id": entry_id, "parentId": parent,
                                      "timestamp": "2025-12-03T14:00:01.000Z",
                                      "targetId": "e0", "label": f"l{n}"}  # fmt: skip
        else:
            record = {"type": "message", "id": entry_id, "parentId": parent,
                      "timestamp": "2025-12-03T14:00:01.000Z",
                      "message": {"role": "user", "content": "x" * n}}  # fmt: skip
        lines.append(record)
        parent = entry_id
    path = tmp_path / "positions.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines) + "\n" * 50)
    expected = {lazy: [_fields(e) for e in load_session(path, lazy=lazy).entries]
                for lazy in (False, True)}  # fmt: skip
    monkeypatch.setattr(table, "WIDE_POSITION", 5_000)
    for lazy in (False, True):
        session = load_session(path, lazy=lazy)
        assert session._table._offsets.typecode == "q"
        assert [_fields(e) for e in session.entries] == expected[lazy]
        assert session.entries[150].data["id"] == "e150"
    monkeypatch.setattr(table, "WIDE_POSITION", 100)  # the line numbers too
    session = load_session(path, lazy=True)
    assert session._table._lines.typecode == "q"
    assert [_fields(e) for e in session.entries] == expected[True]


def _chain(path: Path, count: int) -> Path:
    lines = [json.dumps({"type": "session", "version": 3, "id": "s", "cwd": "/",
                         "timestamp": "2025-12-03T14:00:00.000Z"})]  # fmt: skip
    parent = None
    for n in range(count):
        entry_id = f"{n * 2654435761 % 2**32:08x}"
        role = "user" if n % 2 == 0 else "assistant"
        content: Any = f"turn {n}" if role == "user" else [{"type": "text", "text": f"ok {n}"}]
        lines.append(json.dumps({"type": "message", "id": entry_id, "parentId": parent,
                                 "timestamp": f"2025-12-03T14:{n // 60000 % 60:02d}:"
                                              f"{n // 1000 % 60:02d}.{n % 1000:03d}Z",
                                 "message": {"role": role, "content": content}}))  # fmt: skip
        parent = entry_id
    path.write_text("\n".join(lines) + "\n")
    return path


def test_the_index_of_a_deep_chain_stays_small_per_entry(tmp_path: Path) -> None:
    """A lazily read 30,000-deep chain: the whole index (ids, links, positions, timestamps,
    tree) takes under 210 bytes an entry (one object per entry took ~390; eight-byte slots
    for every count, code and index ~224), and holding its
    leaf's context adds under 160 bytes an item (no entry object held per item)."""
    count = 30_000
    path = _chain(tmp_path / "chain.jsonl", count)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        session = load_session(path, lazy=True)
        index_bytes = tracemalloc.get_traced_memory()[0] - before
        assert len(session.entries) == count and session.leaf == count - 1
        before = tracemalloc.get_traced_memory()[0]
        context = build_context(session, session.leaf)
        context_bytes = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert len(context.items) == count
    assert index_bytes / count < 210, f"{index_bytes / count:.0f} bytes an entry"
    assert context_bytes / count < 160, f"{context_bytes / count:.0f} bytes an item"
    assert context.items[-1].entry is not None and context.items[-1].entry.index == count - 1
    assert context.items[0].message["content"] == "turn 0"
