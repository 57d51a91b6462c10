"""The tail-first preview: the file's last lines, the leaf and its whole context, read before
the file is indexed (``reader.load_tail_preview``), agreeing with the full load."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

import tui_compactor.session.reader as reader
from tui_compactor.engine.context import build_context
from tui_compactor.session.reader import (
    PREVIEW_ENTRIES,
    PREVIEW_FILL_BYTES,
    PREVIEW_REFUSAL,
    load_session,
    load_tail_preview,
)

BAD = Path(__file__).resolve().parents[1] / "fixtures" / "bad"
TS = "2026-01-01T00:00:{:02d}.000Z"


def big_session(
    path: Path,
    entries: int,
    *,
    filler: int = 900,
    compaction_at: int | None = None,
    title_slot: bool = False,
) -> Path:
    """A version-3 session: a user/assistant chain with a side branch every 50 entries, ~1 KB
    per entry, and optionally a compaction keeping the 20 entries before it."""
    records: list[dict[str, Any]] = [
        {"type": "session", "version": 3, "id": "s-1", "timestamp": TS.format(0), "cwd": "/w"}
    ]
    parent: str | None = None
    for n in range(entries):
        entry_id = f"e{n:07d}"
        if compaction_at is not None and n == compaction_at:
            record: dict[str, Any] = {
                "type": "compaction",
                "summary": "earlier work",
                "firstKeptEntryId": f"e{n - 20:07d}",
                "tokensBefore": 5000,
            }
        elif n % 2 == 0:
            record = {
                "type": "message",
                "message": {
                    "role": "user",
                    "content": f"request {n} " + "x" * filler,
                    "timestamp": n,
                },
            }
        else:
            text = f"answer {n} " + "y" * filler
            record = {
                "type": "message",
                "message": {
                    "role": "assistant",
                    "content": [{"type": "text", "text": text}],
                    "model": "claude-sonnet-4-5",
                    "provider": "anthropic",
                    "stopReason": "stop",
                    "usage": {
                        "input": 100 + n,
                        "output": 10,
                        "cacheRead": 0,
                        "cacheWrite": 0,
                        "totalTokens": 110 + n,
                    },
                    "timestamp": n,
                },
            }
        record.update(id=entry_id, parentId=parent, timestamp=TS.format(n % 60))
        records.append(record)
        if n % 50 == 25 and parent is not None:  # a side branch off the previous entry
            records.append(
                {
                    "type": "message",
                    "id": f"b{n:07d}",
                    "parentId": parent,
                    "timestamp": TS.format(n % 60),
                    "message": {"role": "user", "content": "side", "timestamp": n},
                }
            )
        parent = entry_id
    lines = [json.dumps(r) for r in records]
    if title_slot:
        slot = json.dumps({"type": "title", "title": "t"})
        lines.insert(0, slot + " " * (255 - len(slot)))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def context_of(session: Any) -> tuple[Any, ...]:
    """The context at the leaf as the model gets it (both rule sets): messages and model."""
    contexts = [build_context(session, session.leaf, rules=rules) for rules in ("pi", "omp")]
    return tuple((c.messages, c.model, c.thinking_level) for c in contexts)


def assert_agrees(preview: Any, full: Any, *, same_lines: bool = True) -> None:
    """The leaf and the context at it are the full load's; every preview entry is the full
    session's entry of the same id (type, role, parent, record; with ``same_lines`` also
    the same line of the file)."""
    assert preview.entries[preview.leaf].id == full.entries[full.leaf].id
    assert context_of(preview) == context_of(full)
    for entry in preview.entries:
        if entry.id in full.ambiguous_ids:
            continue  # defined twice: the preview may hold the other definition
        whole = full.entry_by_id(entry.id)
        assert whole is not None
        assert (entry.type, entry.role, entry.parent_id) == (
            whole.type,
            whole.role,
            whole.parent_id,
        )
        assert entry.data == whole.data
        if same_lines:
            assert (entry.offset, entry.size) == (whole.offset, whole.size)


@pytest.mark.parametrize("title_slot", [False, True])
def test_preview_has_the_leaf_and_its_context(tmp_path: Path, title_slot: bool) -> None:
    path = big_session(tmp_path / "s.jsonl", 3000, title_slot=title_slot, compaction_at=2900)
    before = path.read_bytes()
    listing = sorted(os.listdir(tmp_path))
    preview = load_tail_preview(path, min_size=0, first_bytes=16 * 1024)
    full = load_session(path)
    assert preview is not None and preview.preview
    assert len(preview.entries) < len(full.entries) // 10
    assert_agrees(preview, full)
    # Read-only, not judged, not complete; nothing written or created.
    assert not preview.complete and preview.append_refusal == PREVIEW_REFUSAL
    assert preview.diagnostics == []
    assert path.read_bytes() == before and sorted(os.listdir(tmp_path)) == listing


def test_the_tail_grows_until_the_context_is_in_it(tmp_path: Path) -> None:
    # No compaction: the context reaches the root, so the preview is the whole file.
    path = big_session(tmp_path / "s.jsonl", 600)
    preview = load_tail_preview(path, min_size=0, first_bytes=4096, max_bytes=10**9)
    full = load_session(path)
    assert preview is not None and len(preview.entries) == len(full.entries)
    assert_agrees(preview, full)
    # ... unless that is further back than allowed: then no preview (the index comes).
    assert load_tail_preview(path, min_size=0, first_bytes=4096, max_bytes=64 * 1024) is None
    # A compaction near the end: a small tail has it and the first kept entry.
    path = big_session(tmp_path / "c.jsonl", 600, compaction_at=590)
    preview = load_tail_preview(path, min_size=0, first_bytes=4096, max_bytes=64 * 1024)
    assert preview is not None and len(preview.entries) < 100
    assert_agrees(preview, load_session(path))


def test_a_tail_that_grows_reads_and_parses_each_line_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A leaf whose context reaches ~2 MB back, from a 4 KB first tail: the tail grows many
    times, yet every byte after the header is read once and every line parsed once (the tail
    was read anew at each size, 256 KB, 1 MB and 4 MB, and every line of it parsed again);
    the preview holds the context and no more than the ``PREVIEW_ENTRIES`` wanted before it."""
    path = big_session(tmp_path / "s.jsonl", 3000, compaction_at=1000)
    size = path.stat().st_size
    read: list[int] = []
    parsed: list[int] = []
    real_pread, real_loads = os.pread, reader._fast_loads

    def counted_pread(fd: int, length: int, offset: int) -> bytes:
        data = real_pread(fd, length, offset)
        read.append(len(data))
        return data

    def counted_loads(data: Any) -> Any:
        parsed.append(len(data))
        return real_loads(data)

    monkeypatch.setattr(reader, "_estimate_entries", lambda fd, size: 1)  # memory limit: reads
    monkeypatch.setattr(os, "pread", counted_pread)
    monkeypatch.setattr(reader, "_fast_loads", counted_loads)
    preview = load_tail_preview(path, min_size=0, first_bytes=4096, max_bytes=10**9)
    monkeypatch.undo()
    full = load_session(path)
    assert preview is not None
    assert_agrees(preview, full, same_lines=False)
    assert preview.entries[0].id == "e0000980"  # the first kept entry: nothing before it
    lines = len(full.entries)
    assert len(parsed) <= lines + 2  # the header once, every line at most once
    assert sum(read) <= size + 2 * reader.SAMPLE_BYTES + 1024  # the header, then one pass


def test_the_tail_grows_for_a_screenful_of_entries_but_not_past_a_megabyte(tmp_path: Path) -> None:
    # A compaction near the end: a 4 KB tail holds the leaf's context, but the tree wants more
    # rows than that to show (and scroll to) while the file is indexed.
    path = big_session(tmp_path / "s.jsonl", 3000, compaction_at=2990)
    preview = load_tail_preview(path, min_size=0, first_bytes=4096)
    assert preview is not None and PREVIEW_ENTRIES <= len(preview.entries) < 1000
    assert_agrees(preview, load_session(path))
    # Entries of ~20 KB: a megabyte of them is fewer than wanted, and the tail stops there.
    path = big_session(tmp_path / "wide.jsonl", 300, filler=20_000, compaction_at=295)
    preview = load_tail_preview(path, min_size=0, first_bytes=4096)
    assert preview is not None and 20 < len(preview.entries) < PREVIEW_ENTRIES
    assert sum(entry.size for entry in preview.entries) < PREVIEW_FILL_BYTES
    assert_agrees(preview, load_session(path))


def test_small_old_or_refused_files_get_no_preview(tmp_path: Path) -> None:
    small = big_session(tmp_path / "small.jsonl", 20)
    assert load_tail_preview(small) is None  # under PREVIEW_MIN_BYTES: indexed at once
    for name in (
        "v1-with-compaction-index.jsonl",
        "v2-hookMessage.jsonl",
        "empty-file.jsonl",
        "no-header.jsonl",
        "future-version-99.jsonl",
        "header-only.jsonl",
    ):
        assert load_tail_preview(BAD / name, min_size=0) is None, name
    assert load_tail_preview(tmp_path / "missing.jsonl", min_size=0) is None
    assert load_tail_preview(tmp_path, min_size=0) is None  # a directory


def test_a_torn_last_line_leaves_the_same_leaf_as_the_full_load(tmp_path: Path) -> None:
    path = big_session(tmp_path / "s.jsonl", 400, compaction_at=390)
    with path.open("ab") as handle:
        handle.write(b'{"type":"message","id":"torn","parentId":"e0000399","mess')
    preview = load_tail_preview(path, min_size=0, first_bytes=4096)
    full = load_session(path)
    assert preview is not None
    assert full.entries[full.leaf].id == "e0000399"
    assert_agrees(preview, full)


def test_a_last_line_longer_than_the_tail_gives_no_preview(tmp_path: Path) -> None:
    path = big_session(tmp_path / "s.jsonl", 50)
    with path.open("a", encoding="utf-8") as handle:
        long = {
            "type": "message",
            "id": "long",
            "parentId": "e0000049",
            "timestamp": TS.format(1),
            "message": {"role": "user", "content": "z" * 300_000, "timestamp": 1},
        }
        handle.write(json.dumps(long) + "\n")
    assert load_tail_preview(path, min_size=0, first_bytes=4096, max_bytes=65536) is None
    preview = load_tail_preview(path, min_size=0, first_bytes=4096, max_bytes=10**9)
    assert preview is not None and preview.entries[preview.leaf].id == "long"


CORPUS = sorted(BAD.glob("*.jsonl"))


@pytest.mark.parametrize("path", CORPUS, ids=[p.name for p in CORPUS])
def test_every_strange_file_previews_as_the_full_load_reads_it(path: Path) -> None:
    """Whatever the preview shows of a corpus file (or it shows nothing), the full load agrees;
    the full load's verdicts are the reader's corpus tests."""
    for first in (64, 4096):
        preview = load_tail_preview(path, min_size=0, first_bytes=first, max_bytes=1 << 20)
        if preview is None:
            continue
        full = load_session(path)
        assert full.leaf is not None
        assert_agrees(preview, full, same_lines=False)


def test_the_index_parses_each_line_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The whole-file index hands a line its fast path parsed but does not take (a compaction,
    a model change, a label) to the general path with its value: every line is parsed once
    (the general path parsed those lines again)."""
    path = big_session(tmp_path / "s.jsonl", 400, compaction_at=390)
    others = [
        {"type": "model_change", "provider": "anthropic", "modelId": "claude-sonnet-4-5"},
        {"type": "label", "targetId": "e0000010", "label": "start"},
        {"type": "custom", "customType": "note", "data": {"n": 1}},
    ]
    with path.open("a", encoding="utf-8") as handle:
        parent = "e0000399"
        for n, record in enumerate(others):
            entry_id = f"x{n:07d}"
            record.update(id=entry_id, parentId=parent, timestamp=TS.format(n))
            handle.write(json.dumps(record) + "\n")
            parent = entry_id
    parsed: list[int] = []
    real_loads = reader._fast_loads

    def counted_loads(data: Any) -> Any:
        parsed.append(len(data))
        return real_loads(data)

    monkeypatch.setattr(reader, "_fast_loads", counted_loads)
    session = load_session(path)
    monkeypatch.undo()
    lines = len(path.read_bytes().splitlines())
    assert session.entries[session.leaf].id == "x0000002"
    assert sum(entry.type != "message" for entry in session.entries) == 4
    assert len(parsed) == lines - 1  # every line but the header (read by the general path)
