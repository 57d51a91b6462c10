"""Loading never writes, refresh follows a growing file, damage never crashes the loader,
progress and cancellation work."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import sys
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tui_compactor.session.model import LoadProgress, Verdict
from tui_compactor.session.reader import load_session

from .conftest import CORPUS, SESSIONS


def _fingerprint(path: Path) -> tuple[str, int, int]:
    info = path.stat()
    return hashlib.sha256(path.read_bytes()).hexdigest(), info.st_size, info.st_mtime_ns


def _browse(path: Path) -> None:
    """Load and touch everything a user would: records, tree, labels, outline, refresh."""
    from tui_compactor.session.outline import OutlineFilter, build_outline

    session = load_session(path)
    for entry in session.entries:
        _ = entry.data
    if session.leaf is not None:
        session.path_to(session.leaf)
        session.path_problem(session.leaf)
    _ = session.labels, session.leaves, session.roots
    for view in OutlineFilter:
        build_outline(session, view=view)
    session.refresh()
    session.close()
    lazy = load_session(path, lazy=True)
    for entry in lazy.entries[:50]:
        _ = entry.data
    lazy.close()


ALL_STORED = sorted(CORPUS.glob("*.jsonl"))


@pytest.mark.parametrize("path", ALL_STORED, ids=lambda p: p.name)
def test_loading_never_writes(path: Path, tmp_path: Path) -> None:
    copy = tmp_path / path.name
    shutil.copy2(path, copy)
    before = _fingerprint(copy)
    _browse(copy)
    assert _fingerprint(copy) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]


@pytest.mark.parametrize("name", ["huge-single-line-5mb.jsonl", "very-deep-chain-50k.jsonl"])
def test_loading_big_files_never_writes(big_corpus: Path, name: str) -> None:
    path = big_corpus / name
    names_before = sorted(p.name for p in big_corpus.iterdir())
    before = _fingerprint(path)
    session = load_session(path)
    assert session.verdict is Verdict.OPEN
    session.close()
    assert _fingerprint(path) == before
    assert sorted(p.name for p in big_corpus.iterdir()) == names_before


def test_read_only_file_in_read_only_directory_opens(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    target = folder / "s.jsonl"
    shutil.copy2(CORPUS / "two-roots.jsonl", target)
    target.chmod(0o444)
    folder.chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        session = load_session(target)
        assert session.verdict is Verdict.OPEN
        assert len(session.entries) == 8
    finally:
        folder.chmod(0o755)
        target.chmod(0o644)


def test_missing_file_and_directory_are_refused_not_raised(tmp_path: Path) -> None:
    missing = load_session(tmp_path / "nope.jsonl")
    assert missing.verdict is Verdict.REFUSE
    assert "cannot open" in str(missing.diagnostics[0])
    folder = load_session(tmp_path)
    assert folder.verdict is Verdict.REFUSE


# ---------------------------------------------------------------- refresh


def _line(entry_id: str, parent: str | None, second: int, text: str = "hi") -> bytes:
    record = {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": f"2025-12-03T15:00:{second:02d}.000Z",
        "message": {"role": "user", "content": text},
    }
    return json.dumps(record).encode() + b"\n"


@pytest.mark.parametrize("lazy", [False, True])
def test_refresh_parses_only_appended_lines(tmp_path: Path, lazy: bool) -> None:
    path = tmp_path / "s.jsonl"
    shutil.copy2(CORPUS / "two-roots.jsonl", path)
    session = load_session(path, lazy=lazy)
    assert session.refresh().status == "unchanged"
    with open(path, "ab") as handle:
        handle.write(_line("n0000001", "e0000008", 1) + _line("n0000002", "n0000001", 2))
    result = session.refresh()
    assert result.status == "grew"
    assert [session.entries[i].id for i in result.added] == ["n0000001", "n0000002"]
    assert session.entries[session.leaf].id == "n0000002"  # type: ignore[index]
    assert session.entries[-1].data["message"]["content"] == "hi"
    assert session.snapshot.size == path.stat().st_size
    assert session.snapshot.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    fresh = load_session(path)
    assert [e.id for e in fresh.entries] == [e.id for e in session.entries]
    assert session.active_path() == fresh.active_path()
    assert session.refresh().status == "unchanged"


def test_refresh_completes_a_torn_tail(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    whole = (CORPUS / "two-roots.jsonl").read_bytes() + _line("n0000001", "e0000008", 1)
    path.write_bytes(whole[:-20])  # the agent is mid-write
    session = load_session(path)
    assert session.snapshot.torn_tail and session.torn_ids == {"n0000001"}
    with open(path, "ab") as handle:
        handle.write(whole[-20:])
    result = session.refresh()
    assert result.status == "grew"
    assert session.entries[-1].id == "n0000001"
    assert not session.snapshot.torn_tail and session.torn_ids == set()
    assert session.verdict is Verdict.OPEN
    assert session.append_refusal is None


def test_a_line_being_written_is_not_called_a_crash(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Live follow reads a file while the agent writes its last line: every place that
    words a torn last line (the Issues view and ``lint``, the read-only banner and the append
    gate, ``seal``) says what is true of both causes, in the words of one function, and the
    words go once the line ends."""
    from tui_compactor.cli import main
    from tui_compactor.commands.seal import describe_tail, explain
    from tui_compactor.session.model import torn_tail_cause

    path = tmp_path / "s.jsonl"
    path.write_bytes((CORPUS / "two-roots.jsonl").read_bytes())
    session = load_session(path)
    whole = _line("n0000001", "e0000008", 1)
    with open(path, "ab") as handle:
        handle.write(whole[:-20])  # the agent is mid-write
    assert session.refresh().status == "grew"  # what live follow does
    torn = next(d for d in session.diagnostics if d.code == "torn-tail")
    words = [torn.message, session.append_refusal or "", explain(describe_tail(session), "s")]
    assert main(["lint", str(path)]) == 0
    words.append(capsys.readouterr().out)
    for text in words:
        assert torn_tail_cause() in text and "probably a crash" not in text, text
    assert "n0000001 (user) appears when the line ends, or is lost" in torn.message
    with open(path, "ab") as handle:
        handle.write(whole[-20:])
    assert session.refresh().status == "grew"
    assert session.append_refusal is None
    assert not any(d.code == "torn-tail" for d in session.diagnostics)


def test_refresh_detects_rewrites(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    shutil.copy2(CORPUS / "two-roots.jsonl", path)
    session = load_session(path)
    data = path.read_bytes()
    path.write_bytes(data[:-10])
    assert session.refresh().status == "rewritten"  # shrank

    session = load_session(path)
    path.write_bytes(b"X" + path.read_bytes()[1:] + _line("n0000001", None, 1))
    assert session.refresh().status == "rewritten"  # prefix changed

    session = load_session(path)
    replacement = tmp_path / "other.jsonl"
    shutil.copy2(path, replacement)
    os.replace(replacement, path)
    assert session.refresh().status == "rewritten"  # new inode


def test_refresh_refuses_a_fused_line(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    shutil.copy2(CORPUS / "no-trailing-newline.jsonl", path)
    session = load_session(path)
    with open(path, "ab") as handle:
        handle.write(_line("n0000001", "e0000006", 1))  # pi's bug: glued onto line 7
    assert session.refresh().status == "rewritten"

    shutil.copy2(CORPUS / "no-trailing-newline.jsonl", path)
    session = load_session(path)
    with open(path, "ab") as handle:
        handle.write(b"\n" + _line("n0000001", "e0000006", 1))  # done right
    result = session.refresh()
    assert result.status == "grew" and session.entries[-1].id == "n0000001"
    assert session.verdict is Verdict.OPEN


def test_omp_title_rewrite_is_not_a_rewrite(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    shutil.copy2(CORPUS / "omp-title-slot-first-line.jsonl", path)
    session = load_session(path)
    data = bytearray(path.read_bytes())
    old = b'"title":"Port user-message-selector"'
    new = b'"title":"Port user-message-picker!!"'
    assert len(old) == len(new)
    start = data.index(old)
    data[start : start + len(old)] = new
    path.write_bytes(bytes(data) + _line("n0000001", "e0000006", 1))
    result = session.refresh()
    assert result.status == "grew"
    assert session.title_slot is not None
    assert session.title_slot["title"] == "Port user-message-picker!!"


# ---------------------------------------------------------------- progress and cancel


def test_progress_and_cancel(big_corpus: Path) -> None:
    path = big_corpus / "very-deep-chain-50k.jsonl"
    reports: list[LoadProgress] = []
    session = load_session(path, progress=reports.append)
    assert reports and reports[-1].bytes_done == reports[-1].bytes_total == path.stat().st_size
    assert reports[-1].entries == 50000
    assert session.complete

    cancel = threading.Event()
    cancel.set()
    stopped = load_session(path, cancel=cancel)
    assert not stopped.complete and stopped.entries == []
    assert stopped.verdict is Verdict.READ_ONLY
    assert stopped.append_refusal is not None and "cancel" in stopped.append_refusal


def test_cancel_from_progress_callback_keeps_what_was_read(
    big_corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tui_compactor.session import reader

    monkeypatch.setattr(reader, "PROGRESS_INTERVAL", 0.0)
    monkeypatch.setattr(reader, "CHUNK_SIZE", 256 * 1024)
    path = big_corpus / "very-deep-chain-50k.jsonl"
    cancel = threading.Event()
    stopped = load_session(path, progress=lambda _: cancel.set(), cancel=cancel)
    assert not stopped.complete
    assert 0 < len(stopped.entries) < 50000
    assert stopped.verdict is Verdict.READ_ONLY
    assert stopped.refresh().status == "rewritten"  # an incomplete load is reloaded, not grown
    # What was read is a correct prefix of the full load.
    full = load_session(path)
    assert [e.id for e in stopped.entries] == [e.id for e in full.entries[: len(stopped.entries)]]


# ---------------------------------------------------------------- damage (hypothesis)

BASE = (SESSIONS / "refactor-session-v3.jsonl").read_bytes()
BASE_LINES = BASE.split(b"\n")


def _damage(data: bytes, kind: str, position: int, blob: bytes) -> bytes:
    if not data:
        return blob if kind == "insert" else data
    position %= len(data)
    if kind == "cut":
        return data[:position]
    if kind == "flip":
        return data[:position] + bytes([data[position] ^ 0x5A]) + data[position + 1 :]
    if kind == "insert":
        return data[:position] + blob + data[position:]
    if kind == "crlf":
        return data.replace(b"\n", b"\r\n")
    if kind == "bom":
        return b"\xef\xbb\xbf" + data
    lines = data.split(b"\n")
    k = position % max(1, len(lines))
    if kind == "duplicate":
        return b"\n".join(lines[: k + 1] + lines[k:])
    if kind == "swap" and k + 1 < len(lines):
        lines[k], lines[k + 1] = lines[k + 1], lines[k]
        return b"\n".join(lines)
    if kind == "splice" and k + 1 < len(lines):
        return b"\n".join(lines[:k] + [lines[k] + lines[k + 1]] + lines[k + 2 :])
    return data


damage_steps = st.lists(
    st.tuples(
        st.sampled_from(["cut", "flip", "insert", "crlf", "bom", "duplicate", "swap", "splice"]),
        st.integers(min_value=0, max_value=len(BASE)),
        st.sampled_from([b"\x00\x00\x00", b"\xef\xbb\xbf", b"\n", b'{"a":', b"\xff\xfe",
                         b"\\ud800", b'"parentId":"x"', b"\x1b[2J", b"[[[[[[[[[[" * 500]),
    ),
    min_size=1,
    max_size=3,
)  # fmt: skip


@given(damage_steps)
@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
def test_byte_damage_never_raises(tmp_path_factory: pytest.TempPathFactory, steps) -> None:  # type: ignore[no-untyped-def]
    data = BASE
    for kind, position, blob in steps:
        data = _damage(data, kind, position, blob)
    folder = tmp_path_factory.mktemp("damage")
    path = folder / "s.jsonl"
    path.write_bytes(data)
    session = load_session(path)
    assert session.verdict in set(Verdict)
    if session.leaf is not None:
        assert session.path_to(session.leaf)[-1] == session.leaf
        session.path_problem(session.leaf)
    # Every intact original line that parsed before still gives the same id.
    original = {line for line in BASE_LINES if line}
    by_offset = {e.offset: e for e in session.entries}
    for entry in by_offset.values():
        raw = data[entry.offset : entry.offset + entry.size]
        if raw in original and b'"id"' in raw[:80]:
            assert json.loads(raw)["id"] == entry.id or entry.id.startswith("~")
    for diagnostic in session.diagnostics:
        assert diagnostic.path == str(path)


def test_deep_nesting_nan_and_bom_mid_file_are_rejected_per_line(tmp_path: Path) -> None:
    header = b'{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z"}\n'
    good = _line("g0000001", None, 1)
    deep = b'{"type":"message","id":"d1","parentId":null,"x":' + b"[" * 200_000 + b"\n"
    nan = b'{"type":"message","id":"n1","parentId":null,"x":NaN}\n'
    infinity = b'{"type":"message","id":"n2","parentId":null,"x":-Infinity}\n'
    bom = b"\xef\xbb\xbf" + _line("b0000001", None, 2)
    path = tmp_path / "s.jsonl"
    path.write_bytes(header + good + deep + nan + infinity + bom)
    session = load_session(path)
    assert [e.id for e in session.entries] == ["g0000001"]
    by_line = {d.line: d.message for d in session.diagnostics}
    # Unterminated: the iterative decoder (used past the recursive decoders' depth) finds the
    # real error instead of giving up.
    assert "not valid JSON" in by_line[3] and "nested 200001 levels deep" in by_line[3]
    assert "NaN" in by_line[4] and "Infinity" in by_line[5]
    assert "byte-order mark" in by_line[6]
    assert {"d1", "n1", "n2", "b0000001"} <= session.torn_ids


def test_refresh_on_big_files_compares_samples(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tui_compactor.session import reader

    monkeypatch.setattr(reader, "FULL_PREFIX_CHECK_LIMIT", 0)
    path = tmp_path / "s.jsonl"
    shutil.copy2(CORPUS / "two-roots.jsonl", path)
    session = load_session(path)
    with open(path, "ab") as handle:
        handle.write(_line("n0000001", "e0000008", 1))
    assert session.refresh().status == "grew"
    assert session.snapshot.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    data = bytearray(path.read_bytes())
    data[5] ^= 1  # a change near the start
    path.write_bytes(bytes(data) + _line("n0000002", "n0000001", 2))
    assert session.refresh().status == "rewritten"


def test_numbers_json_parse_reads_as_infinity_are_warned_per_line(tmp_path: Path) -> None:
    header = b'{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z"}\n'
    lines = [header, _line("g0000001", None, 1)]
    for n, number in enumerate((b"1e400", b"1" + b"0" * 400, b"-1e400", b"1e300")):
        entry_id = f"u000000{n}".encode()
        parent = b'"g0000001"' if n == 0 else b'"u000000' + str(n - 1).encode() + b'"'
        lines.append(
            b'{"type":"message","id":"' + entry_id + b'","parentId":' + parent
            + b',"timestamp":"2025-12-03T15:00:1' + str(n + 2).encode()
            + b'.000Z","message":{"role":"assistant","content":[],"usage":{"totalTokens":'
            + number + b"}}}\n"
        )  # fmt: skip
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"".join(lines))
    session = load_session(path)
    assert len(session.entries) == 5  # nothing dropped
    warned = {d.line: d.message for d in session.diagnostics if d.code == "non-finite-number"}
    assert set(warned) == {3, 4, 5}  # 1e300 is finite
    assert all("message.usage.totalTokens" in text for text in warned.values())
    assert session.verdict.value == "open+warn"


def test_a_line_over_the_cap_is_skipped_unread_and_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tui_compactor.session import reader

    header = b'{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z"}\n'
    big = _line("b0000001", "a0000001", 1)[:-2] + b',"pad":"' + b"x" * 5000 + b'"}\n'
    body = header + _line("a0000001", None, 1) + big + _line("c0000001", "b0000001", 2)
    for chunk in (2 * 1024 * 1024, 1500, 7):
        monkeypatch.setattr(reader, "MAX_LINE_BYTES", 4000)
        monkeypatch.setattr(reader, "CHUNK_SIZE", chunk)
        for tail in (b"", big[:-1]):  # also as an unterminated last line
            path = tmp_path / "s.jsonl"
            path.write_bytes(body + tail)
            session = load_session(path)
            assert [e.id for e in session.entries] == ["a0000001", "c0000001"]
            long = [d for d in session.diagnostics if d.code == "line-too-long"]
            assert long[0].line == 3 and "b0000001" in long[0].message
            assert "b0000001" in session.torn_ids  # its id stays taken
            assert session.entries[1].line == 4 and session.entries[1].parent is None
            if tail:
                assert len(long) == 2 and session.needs_seal
            else:
                assert len(long) == 1 and not session.needs_seal


def test_an_index_that_would_outgrow_the_memory_limit_is_refused_before_it_grows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tui_compactor import config_sources
    from tui_compactor.session import reader

    header = b'{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z"}\n'
    lines = [header] + [_line(f"t{n:07d}", f"t{n - 1:07d}" if n else None, 1) for n in range(3000)]
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"".join(lines))
    # A limit that holds 1,000 entries: refused from the sample, nothing indexed.
    monkeypatch.setattr(reader, "BASE_MEMORY", 0)
    monkeypatch.setattr(config_sources, "MEMORY_BASE_MB", 0)
    per_entry = reader.INDEX_BYTES_PER_ENTRY
    monkeypatch.setenv("TUI_COMPACTOR_MEMORY_LIMIT_MB", str(1000 * per_entry / 1024 / 1024))
    session = load_session(path)
    assert session.verdict.value == "refuse" and not session.entries
    error = session.diagnostics[0]
    assert error.code == "memory-limit" and "about 3,00" in error.message
    assert "TUI_COMPACTOR_MEMORY_LIMIT_MB" in error.message
    # Small lines after a big first one fool the sample: the scan stops at the limit.
    big_first = lines[:2] + [lines[2][:-2] + b',"pad":"' + b"x" * 8_000_000 + b'"}\n'] + lines[3:]
    path.write_bytes(b"".join(big_first))
    session = load_session(path)
    assert session.verdict.value == "refuse" and session.diagnostics[0].code == "memory-limit"
    assert "over " in session.diagnostics[0].message and not session.entries  # checked per chunk
    # 0 lifts the limit.
    monkeypatch.setenv("TUI_COMPACTOR_MEMORY_LIMIT_MB", "0")
    assert len(load_session(path).entries) == 3000


def _tiny_chain(path: Path, entries: int) -> Path:
    header = b'{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z"}\n'
    lines = [_line(f"t{n:07d}", f"t{n - 1:07d}" if n else None, n % 60) for n in range(entries)]
    path.write_bytes(header + b"".join(lines))
    return path


def test_the_memory_guard_admits_what_the_index_really_needs_and_refuses_what_it_cannot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The guard's estimate per entry is what the columnar index costs (with a margin), not
    the ~600 bytes an entry object cost: a session within that opens, a bigger one is refused
    up front with the figures and the override."""
    from tui_compactor.session import reader

    path = _tiny_chain(tmp_path / "s.jsonl", 3000)
    mb = 1024 * 1024
    # 450 bytes an entry beyond the base: refused when an entry was counted at 600 bytes.
    monkeypatch.setenv("TUI_COMPACTOR_MEMORY_LIMIT_MB", str((reader.BASE_MEMORY + 3000 * 450) / mb))
    session = load_session(path)
    assert session.verdict.value != "refuse" and len(session.entries) == 3000
    # 200 bytes an entry: too little for the index, refused before it grows.
    monkeypatch.setenv("TUI_COMPACTOR_MEMORY_LIMIT_MB", str((reader.BASE_MEMORY + 3000 * 200) / mb))
    session = load_session(path)
    assert session.verdict.value == "refuse" and not session.entries
    message = session.diagnostics[0].message
    assert session.diagnostics[0].code == "memory-limit"
    assert "too many entries for the memory limit: about 3,0" in message
    assert "the limit is 51 MB (set by TUI_COMPACTOR_MEMORY_LIMIT_MB)" in message
    assert "TUI_COMPACTOR_MEMORY_LIMIT_MB=<MB> (0: no limit) to open it anyway" in message


def test_the_memory_guard_counts_at_least_what_the_index_really_takes(tmp_path: Path) -> None:
    """Allocations while indexing a 40,000-deep chain of tiny entries (the shape with the most
    index per byte), per entry, stay under the guard's estimate per entry (records not kept
    in memory, as for any file past ``LAZY_THRESHOLD``)."""
    import tracemalloc

    from tui_compactor.session import reader

    path = _tiny_chain(tmp_path / "s.jsonl", 40_000)
    tracemalloc.start()
    try:
        session = load_session(path, hash_thread=False, lazy=True)  # as a big file is read
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(session.entries) == 40_000
    buffers = 3 * reader.CHUNK_SIZE  # the chunk read, its lines and the unfinished line
    assert 150 < (peak - buffers) / 40_000 < reader.INDEX_BYTES_PER_ENTRY


@pytest.mark.parametrize("read", ["one record", "a run of records"])
def test_a_close_on_another_thread_never_spoils_a_read_in_progress(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, read: str
) -> None:
    """A reload closes the lazy session's descriptor while a worker reads records through it:
    the read in progress still reads this file's lines (not a closed descriptor, nor another
    file opened meanwhile under the same number), and later reads reopen the file."""
    from tests.session.test_preview import big_session

    path = big_session(tmp_path / "big.jsonl", 40)
    other = tmp_path / "other.jsonl"  # another session, its lines where this one's are
    other.write_bytes(path.read_bytes().replace(b'"e0', b'"x0'))
    session = load_session(path, lazy=True)
    wanted = list(range(1, 30))
    expected = [session.entries[i].id for i in wanted]
    session.drop_cached_records()
    real_pread = os.pread
    opened: list[int] = []

    def pread_after_a_close(fd: int, size: int, offset: int) -> bytes:
        # Between taking the descriptor and reading, another thread closes the session and
        # opens some other file (which the system gives the lowest free number).
        if not opened:
            closer = threading.Thread(target=session.close)
            closer.start()
            closer.join()
            opened.append(os.open(other, os.O_RDONLY))
        return real_pread(fd, size, offset)

    monkeypatch.setattr(os, "pread", pread_after_a_close)
    try:
        if read == "one record":
            records = [session.entries[i].data_once() for i in wanted]
        else:
            records = session.records_once(wanted)
    finally:
        monkeypatch.undo()
        for fd in opened:
            os.close(fd)
    assert opened, "the read went through pread"
    assert [record.get("id") for record in records] == expected
    assert not any("_unavailable" in record for record in records)
    assert session.entries[35].data["id"] == session.entries[35].id  # reopened
    session.close()


def test_reads_stay_right_while_another_thread_closes_the_session_again_and_again(
    tmp_path: Path,
) -> None:
    """A worker reads every record, one by one and in runs, while another thread closes the
    session over and over (as reloads do): every record read is this file's, and none is
    said to be unavailable."""
    from tests.session.test_preview import big_session

    path = big_session(tmp_path / "big.jsonl", 200)
    session = load_session(path, lazy=True)
    ids = [entry.id for entry in session.entries]
    stop = threading.Event()

    def closing() -> None:
        while not stop.is_set():
            session.close()

    closer = threading.Thread(target=closing)
    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # the threads take turns as often as they can
    closer.start()
    wrong: list[object] = []
    try:
        for _ in range(20):
            session.drop_cached_records()
            read = [session.entries[i].data_once() for i in range(len(ids))]
            read += session.records_once(range(len(ids)))
            wrong += [
                r
                for r, i in zip(read, ids + ids, strict=True)
                if r.get("id") != i or "_unavailable" in r
            ]
    finally:
        stop.set()
        closer.join()
        sys.setswitchinterval(switch)
        session.close()
    assert wrong == []


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("abc", "valid number"),
        ("-5", "greater than or equal to 0"),
        ("nan", "finite"),
        ("10", "0 (no limit) or over 50"),
    ],
)
def test_a_bad_memory_limit_variable_is_refused_by_the_commands_and_the_reader(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    value: str,
    why: str,
) -> None:
    from tui_compactor.cli import main

    header = b'{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z"}\n'
    path = tmp_path / "s.jsonl"
    path.write_bytes(header + _line("t0000000", None, 1))
    before = path.read_bytes()
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    monkeypatch.setenv("TUI_COMPACTOR_MEMORY_LIMIT_MB", value)
    expected = "environment variable TUI_COMPACTOR_MEMORY_LIMIT_MB: memory_limit_mb: "
    # The commands refuse it as they refuse any bad variable (``open`` before the app starts).
    for command in ("plan", "open", "tree"):
        assert main([command, str(path)]) == 2
        error = capsys.readouterr().err
        assert expected in error and why in error
    # The reader (what the app loads with) refuses the file instead of ignoring the variable.
    session = load_session(path)
    assert session.verdict.value == "refuse" and not session.entries
    assert session.diagnostics[0].message.startswith(expected)
    assert path.read_bytes() == before


@pytest.mark.parametrize("limit", [None, 1, 3])
@given(st.lists(st.binary(max_size=40), max_size=60), st.booleans())
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_the_memory_estimate_counts_every_newline(
    limit: int | None, lines: list[bytes], torn: bool
) -> None:
    """The memory limit's entry estimate counts the sample's newlines exactly as
    ``bytes.count`` does, whether it finds them one by one or counts the rest at once."""
    from tui_compactor.session import reader

    data = b"\n".join(lines) + (b"" if torn else b"\n")
    saved = reader.NEWLINES_BY_FIND
    if limit is not None:
        reader.NEWLINES_BY_FIND = limit
    try:
        assert reader._newlines(data) == data.count(b"\n")
    finally:
        reader.NEWLINES_BY_FIND = saved


def test_the_memory_estimate_of_a_file_of_short_lines(tmp_path: Path) -> None:
    """Past the newlines found one by one, the rest are counted too: a file of a million
    two-byte lines is estimated at a million lines."""
    from tui_compactor.session import reader

    path = tmp_path / "tiny.jsonl"
    path.write_bytes(b"{}\n" * 1_000_000)
    fd = os.open(path, os.O_RDONLY)
    try:
        assert reader._estimate_entries(fd, path.stat().st_size) == 1_000_000
    finally:
        os.close(fd)
