"""The append gate (A1-A8) over the bad corpus, external changes, locks and live writers.

Every test works on a copy in ``tmp_path``; the corpus files themselves are never opened for
writing. After every write the test checks ``file[:old_size] == old_bytes``.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.support.processes import dead_pid, hold_publish_lock
from tui_compactor.session.lock import publish_lock_path
from tui_compactor.session.reader import load_session
from tui_compactor.session.session import Session
from tui_compactor.session.writer import (
    LEAF_MARKER_TYPE,
    AppendRefused,
    SessionChanged,
    append_entries,
    append_entry,
    encode_record,
    iso_timestamp,
    make_branch_summary_entry,
    make_compaction_entry,
    make_leaf_marker,
    seal_tail,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
BAD = FIXTURES / "bad"
REFACTOR = FIXTURES / "sessions" / "refactor-session-v3.jsonl"

# Append verdicts from tests/fixtures/bad/EXPECTED.md ("Append" column): True = allowed at
# the file's leaf; otherwise the rule that refuses it.
APPEND_VERDICTS: dict[str, bool | str] = {
    "empty-file.jsonl": "A1",
    "whitespace-only.jsonl": "A1",
    "header-only.jsonl": "A3",  # nothing to summarise, no parent to attach to
    "no-trailing-newline.jsonl": True,
    "truncated-last-line.jsonl": "A2",
    "invalid-json-middle.jsonl": "A3",
    "non-object-json-lines.jsonl": True,
    "not-utf8.jsonl": True,
    "bom-prefixed.jsonl": True,
    "crlf-lines.jsonl": True,
    "blank-lines-interspersed.jsonl": True,
    "raw-control-byte-in-string.jsonl": "A3",
    "no-header.jsonl": "A1",
    "omp-title-slot-first-line.jsonl": True,
    "duplicate-header-replay.jsonl": True,
    "future-version-99.jsonl": "A1",
    "v1-with-compaction-index.jsonl": "A1",
    "v2-hookMessage.jsonl": "A1",
    "unknown-entry-type.jsonl": True,
    "duplicate-ids.jsonl": "A3",
    "missing-parent.jsonl": "A3",
    "parent-cycle.jsonl": "A3",
    "two-roots.jsonl": True,
    "leaf-on-older-branch.jsonl": True,
    "deeply-branching-1000-siblings.jsonl": True,
    "compaction-firstKept-missing.jsonl": True,
    "compaction-on-other-branch.jsonl": True,
    "label-to-missing-target.jsonl": True,
    "tool-result-without-call.jsonl": True,
    "image-content.jsonl": True,
    "null-content.jsonl": True,
    "prompt-injection-in-tool-output.jsonl": True,
    "control-characters-and-ansi-escapes.jsonl": True,
    "rtl-cjk-emoji.jsonl": True,
    "timestamps-missing-numeric-invalid.jsonl": True,
    "timestamps-out-of-order.jsonl": True,
    "branch-summary-fromId-missing-and-root.jsonl": True,
    "interleaved-writers.jsonl": True,
    "deep-nested-custom-data-50k.jsonl": True,
    "non-finite-numbers.jsonl": True,
}

FAST = {"quiet_seconds": 0.0}
"""Tests skip the live-writer quiet window unless they test it."""


def _expected_sha256() -> dict[str, str]:
    table: dict[str, str] = {}
    text = (BAD / "EXPECTED.md").read_text(encoding="utf-8")
    section = text.split("## sha256 of the stored files", 1)[1]
    for line in section.splitlines():
        cells = [cell.strip().strip("`") for cell in line.split("|")]
        if len(cells) >= 4 and cells[1].endswith(".jsonl"):
            table[cells[1]] = cells[3]
    return table


SHA256 = _expected_sha256()


def _copy(source: Path, tmp_path: Path) -> Path:
    target = tmp_path / source.name
    shutil.copyfile(source, target)
    return target


def _lines(path: Path) -> list[bytes]:
    return path.read_bytes().split(b"\n")


def test_every_corpus_file_has_a_verdict() -> None:
    stored = {p.name for p in BAD.glob("*.jsonl")}
    assert stored == set(APPEND_VERDICTS)
    assert set(SHA256) == stored


@pytest.mark.parametrize("name", sorted(APPEND_VERDICTS))
def test_corpus_append_verdict(name: str, tmp_path: Path) -> None:
    path = _copy(BAD / name, tmp_path)
    old = path.read_bytes()
    assert hashlib.sha256(old).hexdigest() == SHA256[name]
    session = load_session(path)
    verdict = APPEND_VERDICTS[name]
    marker = make_leaf_marker(reason="test")
    if verdict is not True:
        with pytest.raises(AppendRefused) as refused:
            append_entry(session, marker, parent_index=session.leaf, **FAST)
        assert refused.value.code == verdict, refused.value
        assert path.name in refused.value.reason
        assert refused.value.hint
        # Nothing written, nothing created beside it.
        assert hashlib.sha256(path.read_bytes()).hexdigest() == SHA256[name]
        assert sorted(p.name for p in tmp_path.iterdir()) == [name]
        return
    old_leaf = session.entries[session.leaf]
    old_count = len(session.entries)
    result = append_entry(session, marker, parent_index=session.leaf, **FAST)
    new = path.read_bytes()
    assert new[: len(old)] == old
    added = new[len(old) :]
    needs_newline = not old.endswith(b"\n")
    assert added.startswith(b"\n") == needs_newline
    assert added.endswith(b"\n") and added.count(b"\n") == 1 + needs_newline
    record = json.loads(added)
    assert record == result.records[0]
    assert record["parentId"] == old_leaf.id
    assert record["customType"] == LEAF_MARKER_TYPE
    # No lock file left behind (the flock sidecar is kept on purpose).
    assert not publish_lock_path(path).exists()
    reloaded = load_session(path)
    assert len(reloaded.entries) == old_count + 1
    assert reloaded.entries[reloaded.leaf].id == record["id"]
    assert reloaded.entries[reloaded.entries[reloaded.leaf].parent].id == old_leaf.id
    assert reloaded.snapshot.ends_with_newline


def test_torn_tail_needs_seal_then_appends_after_fragment(tmp_path: Path) -> None:
    path = _copy(BAD / "truncated-last-line.jsonl", tmp_path)
    old = path.read_bytes()
    session = load_session(path)
    with pytest.raises(AppendRefused) as refused:
        append_entry(session, make_leaf_marker(), parent_index=session.leaf, **FAST)
    assert refused.value.code == "A2" and "tui-compactor seal" in refused.value.hint
    assert "e0000007" in session.torn_ids
    seal_tail(session, **FAST)
    sealed = path.read_bytes()
    assert sealed == old + b"\n"  # the fragment is kept, never truncated
    session = load_session(path)
    assert not session.snapshot.torn_tail
    result = append_entry(session, make_leaf_marker(), parent_index=session.leaf, **FAST)
    assert result.ids[0] != "e0000007"
    assert path.read_bytes()[: len(sealed)] == sealed
    with pytest.raises(AppendRefused):
        seal_tail(load_session(path), **FAST)  # nothing left to seal


def test_new_ids_avoid_torn_ids(tmp_path: Path) -> None:
    path = _copy(BAD / "truncated-last-line.jsonl", tmp_path)
    session = load_session(path)
    seal_tail(session, **FAST)
    session = load_session(path)
    with pytest.raises(AppendRefused) as refused:
        append_entry(
            session, make_leaf_marker(), parent_index=session.leaf, ids=["e0000007"], **FAST
        )
    assert refused.value.code == "A7"
    with pytest.raises(AppendRefused):
        append_entry(
            session, make_leaf_marker(), parent_index=session.leaf, ids=["e0000002"], **FAST
        )


def test_records_are_strict_single_line_json() -> None:
    line = encode_record({"type": "custom", "text": "a\nb\u2028c\u00e9\ud800"})
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert line.isascii()
    assert json.loads(line)["text"] == "a\nb\u2028c\u00e9\ufffd"
    with pytest.raises(ValueError):
        encode_record({"type": "custom", "x": float("nan")})


def test_timestamps_look_like_pi() -> None:
    stamp = iso_timestamp()
    assert len(stamp) == len("2025-12-08T22:41:05.306Z") and stamp.endswith("Z")
    assert stamp[10] == "T" and stamp[19] == "."


def _index(session, entry_id: str) -> int:  # type: ignore[no-untyped-def]
    entry = session.entry_by_id(entry_id)
    assert entry is not None
    return entry.index


def test_compaction_cut_rules(tmp_path: Path) -> None:
    path = _copy(BAD / "tool-result-without-call.jsonl", tmp_path)
    session = load_session(path)
    leaf = session.leaf
    for bad_cut in ("e0000006", "e0000004", "0badc0de"):
        entry = make_compaction_entry(summary="s", first_kept_entry_id=bad_cut, tokens_before=10)
        with pytest.raises(AppendRefused) as refused:
            append_entry(session, entry, parent_index=leaf, **FAST)
        assert refused.value.code == "A4"
    # The cut must lie on the path *before* the new entry: a later sibling does not count.
    entry = make_compaction_entry(summary="s", first_kept_entry_id="e0000008", tokens_before=1)
    with pytest.raises(AppendRefused):
        append_entry(session, entry, parent_index=_index(session, "e0000007"), **FAST)
    good = make_compaction_entry(
        summary="summary text",
        short_summary="short",
        first_kept_entry_id="e0000007",
        tokens_before=1234,
        tokens_after=200,
        read_files=["a.ts"],
        modified_files=["b.ts"],
    )
    result = append_entry(session, good, parent_index=leaf, **FAST)
    record = result.records[0]
    assert list(record)[:4] == ["type", "id", "parentId", "timestamp"]
    assert record["firstKeptEntryId"] == "e0000007"
    assert record["details"] == {"readFiles": ["a.ts"], "modifiedFiles": ["b.ts"]}
    assert record["generator"] == {"name": "tui-compactor", "summarizer": "offline"}
    assert len(record["id"]) == 8 and int(record["id"], 16) >= 0


def test_cut_that_splits_a_call_from_its_result_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "split.jsonl"
    rows = [
        {"type": "session", "version": 3, "id": "hdr", "timestamp": "2025-01-01T00:00:00.000Z"},
        {
            "type": "message",
            "id": "a1",
            "parentId": None,
            "timestamp": "2025-01-01T00:00:01.000Z",
            "message": {"role": "user", "content": "go"},
        },
        {
            "type": "message",
            "id": "a2",
            "parentId": "a1",
            "timestamp": "2025-01-01T00:00:02.000Z",
            "message": {
                "role": "assistant",
                "content": [{"type": "toolCall", "id": "call1", "name": "bash", "arguments": {}}],
            },
        },
        {
            "type": "label",
            "id": "a3",
            "parentId": "a2",
            "timestamp": "2025-01-01T00:00:03.000Z",
            "targetId": "a1",
            "label": "x",
        },
        {
            "type": "message",
            "id": "a4",
            "parentId": "a3",
            "timestamp": "2025-01-01T00:00:04.000Z",
            "message": {"role": "toolResult", "toolCallId": "call1", "content": "ok"},
        },
        {
            "type": "message",
            "id": "a5",
            "parentId": "a4",
            "timestamp": "2025-01-01T00:00:05.000Z",
            "message": {"role": "assistant", "content": "done"},
        },
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    session = load_session(path)
    entry = make_compaction_entry(summary="s", first_kept_entry_id="a3", tokens_before=1)
    with pytest.raises(AppendRefused) as refused:
        append_entry(session, entry, parent_index=session.leaf, **FAST)
    assert refused.value.code == "A4" and "call1" in refused.value.reason
    entry = make_compaction_entry(summary="s", first_kept_entry_id="a5", tokens_before=1)
    append_entry(session, entry, parent_index=session.leaf, **FAST)


def test_branch_summary_from_id_and_root(tmp_path: Path) -> None:
    path = _copy(BAD / "two-roots.jsonl", tmp_path)
    session = load_session(path)
    target = _index(session, "e0000004")
    result = append_entry(
        session, make_branch_summary_entry(summary="went back"), parent_index=target, **FAST
    )
    record = result.records[0]
    assert record["parentId"] == "e0000004" and record["fromId"] == "e0000004"
    session = load_session(path)
    result = append_entry(
        session, make_branch_summary_entry(summary="before root"), parent_index=None, **FAST
    )
    record = result.records[0]
    assert record["parentId"] is None and record["fromId"] == "root"
    with pytest.raises(AppendRefused):
        wrong = {**make_branch_summary_entry(summary="x"), "fromId": "e0000001"}
        append_entry(load_session(path), wrong, parent_index=target, **FAST)


def test_plural_append_chains_records_in_one_write(tmp_path: Path) -> None:
    path = _copy(BAD / "two-roots.jsonl", tmp_path)
    old = path.read_bytes()
    session = load_session(path)
    records = [
        {"type": "message", "message": {"role": "user", "content": "side question"}},
        {"type": "message", "message": {"role": "assistant", "content": "side answer"}},
    ]
    result = append_entries(
        session,
        records,
        parent_index=_index(session, "e0000002"),
        ids=["b0000001", "b0000002"],
        timestamps=["2025-12-03T15:00:00.000Z", "2025-12-03T15:00:01.000Z"],
        **FAST,
    )
    added = path.read_bytes()[len(old) :]
    assert added == b"".join(encode_record(record) for record in result.records)
    assert result.records[1]["parentId"] == "b0000001"
    assert result.records[0]["parentId"] == "e0000002"
    assert result.refreshed and session.entries[session.leaf].id == "b0000002"


# -- external changes between load and append ------------------------------------------------


@pytest.fixture()
def small(tmp_path: Path) -> Path:
    return _copy(BAD / "two-roots.jsonl", tmp_path)


def test_appended_line_raises_session_changed_then_reload_works(small: Path) -> None:
    session = load_session(small)
    line = json.dumps(
        {
            "type": "custom",
            "id": "agent001",
            "parentId": session.entries[session.leaf].id,
            "timestamp": "2025-12-03T16:00:00.000Z",
            "customType": "agent",
        }
    )
    with small.open("ab") as handle:
        handle.write(line.encode() + b"\n")
    before = small.read_bytes()
    with pytest.raises(SessionChanged) as changed:
        append_entry(session, make_leaf_marker(), parent_index=session.leaf, **FAST)
    assert changed.value.added_bytes == len(line) + 1
    assert small.read_bytes() == before
    refresh = session.refresh()
    assert refresh.status == "grew"
    result = append_entry(session, make_leaf_marker(), parent_index=session.leaf, **FAST)
    assert result.records[0]["parentId"] == "agent001"
    assert small.read_bytes()[: len(before)] == before


def test_partial_line_growth_is_a_live_writer(small: Path) -> None:
    session = load_session(small)
    with small.open("ab") as handle:
        handle.write(b'{"type":"custom","id":"half')
    before = small.read_bytes()
    with pytest.raises(AppendRefused) as refused:
        append_entry(session, make_leaf_marker(), parent_index=session.leaf, **FAST)
    assert refused.value.code == "live-writer"
    assert small.read_bytes() == before


def test_truncated_file_aborts(small: Path) -> None:
    session = load_session(small)
    data = small.read_bytes()
    cut = data[: data.rindex(b"\n", 0, len(data) - 1) + 1]
    small.write_bytes(cut)
    with pytest.raises(AppendRefused) as refused:
        append_entry(session, make_leaf_marker(), parent_index=session.leaf, **FAST)
    assert refused.value.code == "A5" and "shrank" in refused.value.reason
    assert small.read_bytes() == cut


def test_renamed_over_file_aborts(small: Path, tmp_path: Path) -> None:
    session = load_session(small)
    replacement = tmp_path / "new.jsonl"
    replacement.write_bytes(small.read_bytes())
    os.replace(replacement, small)
    with pytest.raises(AppendRefused) as refused:
        append_entry(session, make_leaf_marker(), parent_index=session.leaf, **FAST)
    assert refused.value.code == "A5" and "replaced" in refused.value.reason


def test_same_size_rewrite_aborts(small: Path) -> None:
    session = load_session(small)
    data = bytearray(small.read_bytes())
    position = data.index(b"e0000003")
    data[position : position + 8] = b"e0000009"
    with small.open("r+b") as handle:  # same inode, same size, other bytes
        handle.write(bytes(data))
    with pytest.raises(AppendRefused) as refused:
        append_entry(session, make_leaf_marker(), parent_index=session.leaf, **FAST)
    assert refused.value.code == "A5" and "changed" in refused.value.reason
    assert small.read_bytes() == bytes(data)


def test_omp_title_slot_rewrite_is_allowed(tmp_path: Path) -> None:
    path = _copy(BAD / "omp-title-slot-first-line.jsonl", tmp_path)
    session = load_session(path)
    assert session.title_slot is not None
    data = bytearray(path.read_bytes())
    slot = json.loads(data[:256])
    slot["title"] = "Renamed by oh-my-pi"
    slot["pad"] = ""
    text = json.dumps(slot, separators=(",", ":"))
    slot["pad"] = " " * (255 - len(text))
    new_slot = json.dumps(slot, separators=(",", ":")).encode() + b"\n"
    assert len(new_slot) == 256
    data[:256] = new_slot
    with path.open("r+b") as handle:  # oh-my-pi's positioned write at offset 0
        handle.write(new_slot)
    result = append_entry(session, make_leaf_marker(), parent_index=session.leaf, **FAST)
    now = path.read_bytes()
    assert now[: len(data)] == bytes(data)
    assert json.loads(now[len(data) :])["id"] == result.ids[0]
    # A change outside the slot is still refused.
    session = load_session(path)
    with path.open("r+b") as handle:
        handle.seek(300)
        original = handle.read(1)
        handle.seek(300)
        handle.write(b"X" if original != b"X" else b"Y")
    with pytest.raises(AppendRefused):
        append_entry(session, make_leaf_marker(), parent_index=session.leaf, **FAST)


# -- locks and live writers -------------------------------------------------------------------


def test_live_omp_lock_in_another_process_refuses_within_budget(small: Path) -> None:
    lock = publish_lock_path(small)
    with hold_publish_lock(small, 30) as holder:
        session = load_session(small)
        before = small.read_bytes()
        started = time.monotonic()
        with pytest.raises(AppendRefused) as refused:
            append_entry(
                session,
                make_leaf_marker(),
                parent_index=session.leaf,
                lock_wait_seconds=0.3,
                **FAST,
            )
        assert time.monotonic() - started < 2.0
        assert refused.value.code in ("live-agent", "live-writer", "locked")
        assert str(holder.pid) in refused.value.reason
        assert small.read_bytes() == before
        assert lock.read_text().startswith(f"{holder.pid}:")  # never stolen


def test_stale_lock_of_dead_pid_is_taken_over(small: Path) -> None:
    dead = dead_pid()
    publish_lock_path(small).write_text(f"{dead}:{int(time.time() * 1000)}")
    session = load_session(small)
    result = append_entry(session, make_leaf_marker(), parent_index=session.leaf, **FAST)
    assert result.took_over_stale_lock is not None and str(dead) in result.took_over_stale_lock
    assert not publish_lock_path(small).exists()


PI_STYLE_WRITER = textwrap.dedent(
    """
    import json, sys, time
    path, parent, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    for i in range(count):
        entry = {"type": "message", "id": "p%07d" % i, "parentId": parent,
                 "timestamp": "2025-12-03T17:00:00.000Z",
                 "message": {"role": "user", "content": "agent line %d " % i + "x" * 300}}
        with open(path, "a") as handle:  # like appendFileSync: open, write, close
            handle.write(json.dumps(entry) + "\\n")
        if i == 0:
            sys.stdout.write("started\\n")
            sys.stdout.flush()
        parent = entry["id"]
        time.sleep(0.005)
    """
)


def start_pi_style_writer(session: Session, count: int, stdout: int) -> subprocess.Popen[bytes]:
    """``PI_STYLE_WRITER`` appending ``count`` entries after the leaf of ``session``."""
    leaf_id = session.entries[session.leaf].id
    return subprocess.Popen(
        [sys.executable, "-c", PI_STYLE_WRITER, str(session.path), leaf_id, str(count)],
        stdout=stdout,
    )


def test_concurrent_pi_style_writer_never_gets_a_fused_line(small: Path) -> None:
    session = load_session(small)
    original = small.read_bytes()
    writer = start_pi_style_writer(session, 400, subprocess.DEVNULL)
    attempts = refused = 0
    written: list[str] = []
    try:
        while writer.poll() is None:
            attempts += 1
            try:
                result = append_entry(
                    session, make_leaf_marker(), parent_index=session.leaf, quiet_seconds=0.05
                )
                written.extend(result.ids)
            except AppendRefused:
                refused += 1
                session = load_session(small)
            assert small.read_bytes()[: len(original)] == original
    finally:
        writer.wait()
    assert attempts > 3 and refused >= attempts - len(written)
    assert refused > 0
    data = small.read_bytes()
    assert data.endswith(b"\n")
    ids = []
    for raw in data.split(b"\n")[:-1]:
        if raw.strip():
            ids.append(json.loads(raw).get("id"))  # every line parses: nothing fused
    assert len([i for i in ids if i and i.startswith("p")]) == 400
    for our_id in written:
        assert our_id in ids


def test_quiet_window_catches_a_writer_between_appends(small: Path) -> None:
    session = load_session(small)
    writer = start_pi_style_writer(session, 300, subprocess.PIPE)
    try:
        assert writer.stdout is not None and writer.stdout.readline() == b"started\n"
        session = load_session(small)
        with pytest.raises(AppendRefused) as refused:
            append_entry(session, make_leaf_marker(), parent_index=session.leaf, quiet_seconds=0.2)
        assert refused.value.code in ("live-writer", "A5-grew")
    finally:
        writer.kill()
        writer.wait()


def test_lockless_writer_landing_just_before_our_write(small: Path) -> None:
    """pi takes no lock: its line can land between our re-check and our write. O_APPEND puts
    ours after it; both lines stay whole and the read-back finds ours."""
    from tui_compactor.session.writer import OsOps

    session = load_session(small)
    original = small.read_bytes()
    agent_line = (
        json.dumps(
            {
                "type": "custom",
                "id": "race0001",
                "parentId": None,
                "timestamp": "2025-12-03T18:00:00.000Z",
                "customType": "agent",
            }
        )
        + "\n"
    ).encode()

    class RacingAgent(OsOps):
        def write(self, fd: int, data: bytes) -> int:
            with small.open("ab") as agent:  # the agent's own open/write/close
                agent.write(agent_line)
            return super().write(fd, data)

    result = append_entry(
        session, make_leaf_marker(), parent_index=session.leaf, ops=RacingAgent(), **FAST
    )
    data = small.read_bytes()
    assert data[: len(original)] == original
    assert result.offset == len(original) + len(agent_line)
    assert data[len(original) :] == agent_line + encode_record(result.records[0])


@pytest.mark.parametrize("name", ["huge-single-line-5mb.jsonl", "very-deep-chain-50k.jsonl"])
def test_generated_big_files_accept_appends(name: str, big_corpus: Path, tmp_path: Path) -> None:
    """EXPECTED.md: both generated files allow appends; the 50k chain also a compaction
    (A3/A4 walk the whole 50,000-entry path without recursion)."""
    path = _copy(big_corpus / name, tmp_path)
    old = path.read_bytes()
    session = load_session(path)
    path_indices = session.path_to(session.leaf)
    kept = next(
        i
        for i in reversed(path_indices)
        if session.entries[i].type == "message" and session.entries[i].role == "user"
    )
    entry = make_compaction_entry(
        summary="big file summary",
        first_kept_entry_id=session.entries[kept].id,
        tokens_before=1,
    )
    result = append_entry(session, entry, parent_index=session.leaf, **FAST)
    data = path.read_bytes()
    assert data[: len(old)] == old
    assert json.loads(data[len(old) :])["id"] == result.ids[0]
    reloaded = load_session(path)
    assert reloaded.entries[reloaded.leaf].id == result.ids[0]
    assert len(reloaded.path_to(reloaded.leaf)) == len(path_indices) + 1


def test_title_slot_rewrite_without_a_body_hash_is_refused(tmp_path: Path) -> None:
    """Without a hash of the bytes after the slot, a title rewrite is refused (fail closed)."""
    path = _copy(BAD / "omp-title-slot-first-line.jsonl", tmp_path)
    slot = json.loads(path.read_bytes()[:256])
    slot["title"], slot["pad"] = "first rename", ""
    slot["pad"] = " " * (255 - len(json.dumps(slot, separators=(",", ":"))))
    session = load_session(path)
    session._body_digest = None  # as if the reader kept no hash of the body
    with path.open("r+b") as handle:
        handle.write(json.dumps(slot, separators=(",", ":")).encode() + b"\n")
    with pytest.raises(AppendRefused) as refused:
        append_entry(session, make_leaf_marker(), parent_index=session.leaf, **FAST)
    assert refused.value.code == "A5"
