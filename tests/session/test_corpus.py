"""The bad-session corpus: every file gets the verdict, survivors, leaf, active path and
diagnostics that ``tests/fixtures/bad/EXPECTED.md`` describes."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tui_compactor.session.model import Severity, Verdict
from tui_compactor.session.reader import load_session

from .conftest import CORPUS

OPEN, WARN, RO, REFUSE = Verdict.OPEN, Verdict.OPEN_WARN, Verdict.READ_ONLY, Verdict.REFUSE
E6 = [f"e000000{i}" for i in range(1, 7)]


@dataclass
class Case:
    """What EXPECTED.md says about one file."""

    verdict: Verdict
    ids: list[str] | int
    """Surviving entry ids in file order (or just how many, for v1 / big files)."""
    leaf: str | None = None
    path: list[str] | int | None = None
    """Active path root..leaf (ids, or its length)."""
    warn_lines: set[int] = field(default_factory=set)
    """Physical lines that get a warning (exactly these)."""
    appendable: bool = True
    """Load-time gate (A1/A2) passes and the leaf's path is sound (A3)."""


CASES: dict[str, Case] = {
    "empty-file.jsonl": Case(REFUSE, [], appendable=False),
    "whitespace-only.jsonl": Case(REFUSE, [], appendable=False),
    "header-only.jsonl": Case(OPEN, [], None, [], appendable=False),
    "no-trailing-newline.jsonl": Case(WARN, E6, "e0000006", E6, {7}),
    "truncated-last-line.jsonl": Case(
        WARN, [*E6, "e000000a"], "e000000a", [*E6, "e000000a"], {8, 9}, appendable=False
    ),
    "invalid-json-middle.jsonl": Case(
        WARN,
        ["e0000001", "e0000002", "e0000003", "e0000005", "e0000006"],
        "e0000006",
        ["e0000005", "e0000006"],
        {4, 6, 7, 8, 9},
        appendable=False,
    ),
    "non-object-json-lines.jsonl": Case(WARN, E6, "e0000006", E6, {3, 5, 7, 8, 10}),
    "not-utf8.jsonl": Case(WARN, E6, "e0000006", E6, {5, 6}),
    "bom-prefixed.jsonl": Case(WARN, E6, "e0000006", E6, {1}),
    "crlf-lines.jsonl": Case(OPEN, E6, "e0000006", E6),
    "blank-lines-interspersed.jsonl": Case(OPEN, E6, "e0000006", E6),
    "raw-control-byte-in-string.jsonl": Case(
        WARN,
        ["e0000001", "e0000002", "e0000003", "e0000005", "e0000006"],
        "e0000006",
        ["e0000005", "e0000006"],
        {5, 6},
        appendable=False,
    ),
    "no-header.jsonl": Case(RO, E6, "e0000006", E6, {1}, appendable=False),
    "omp-title-slot-first-line.jsonl": Case(OPEN, E6, "e0000006", E6),
    "duplicate-header-replay.jsonl": Case(WARN, E6, "e0000006", E6, {4, 5, 6}),
    "future-version-99.jsonl": Case(RO, 6, None, 6, {1}, appendable=False),
    "v1-with-compaction-index.jsonl": Case(RO, 16, None, 16, {1, 14, 15}, appendable=False),
    "v2-hookMessage.jsonl": Case(RO, E6, "e0000006", E6, {1}, appendable=False),
    "unknown-entry-type.jsonl": Case(OPEN, 12, "e0000006", 12),
    "duplicate-ids.jsonl": Case(
        WARN,
        [
            "e00000a1",
            "e00000b2",
            "e0000001",
            "e0000002",
            "e0000003",
            "e0000004",
            "e0000002",
            "e0000006",
        ],  # fmt: skip
        "e0000006",
        [
            "e00000a1",
            "e00000b2",
            "e0000001",
            "e0000002",
            "e0000003",
            "e0000004",
            "e0000002",
            "e0000006",
        ],  # fmt: skip
        {4, 5, 10},
        appendable=False,
    ),
    "missing-parent.jsonl": Case(
        WARN, E6, "e0000006", ["e0000004", "e0000005", "e0000006"], {5}, appendable=False
    ),
    "parent-cycle.jsonl": Case(
        WARN, E6[:5], "e0000005", ["e0000003", "e0000004", "e0000005"], {4}, appendable=False
    ),
    "two-roots.jsonl": Case(OPEN, 8, "e0000008", ["e0000007", "e0000008"]),
    "leaf-on-older-branch.jsonl": Case(
        OPEN,
        10,
        "e000000a",
        ["e0000001", "e0000002", "e0000003", "e0000004", "e0000009", "e000000a"],
    ),
    "deeply-branching-1000-siblings.jsonl": Case(
        OPEN,
        1005,
        "d0000001",
        ["e0000001", "e0000002", "e0000003", "e0000004", "c00003e7", "d0000001"],
    ),
    "compaction-firstKept-missing.jsonl": Case(WARN, 8, "e0000008", 8, {8}),
    "compaction-on-other-branch.jsonl": Case(WARN, 10, "e0000008", 8, {10}),
    "label-to-missing-target.jsonl": Case(WARN, 11, "e000000b", 11, {8}),
    "tool-result-without-call.jsonl": Case(WARN, 8, "e0000008", 8, {5, 6, 8}),
    "image-content.jsonl": Case(OPEN, 5, "e0000005", 5),
    "null-content.jsonl": Case(WARN, 9, "e0000009", 9, {3, 5, 7, 9}),
    "prompt-injection-in-tool-output.jsonl": Case(OPEN, 8, "e0000008", 8),
    "control-characters-and-ansi-escapes.jsonl": Case(OPEN, 8, "e0000008", 8),
    "rtl-cjk-emoji.jsonl": Case(OPEN, 8, "e0000008", 8),
    "timestamps-missing-numeric-invalid.jsonl": Case(WARN, E6, "e0000006", E6, {3, 4, 5}),
    "timestamps-out-of-order.jsonl": Case(WARN, E6, "e0000006", E6, {6}),
    "branch-summary-fromId-missing-and-root.jsonl": Case(
        WARN, 10, "e000000c", ["e000000b", "e000000c"], {8, 10}
    ),
    "interleaved-writers.jsonl": Case(
        WARN, 10, "b0000007", [*E6[:4], "b0000005", "b0000006", "b0000007"], {8}
    ),
    "non-finite-numbers.jsonl": Case(WARN, E6, "e0000006", E6, {3, 5, 7}),
    "deep-nested-custom-data-50k.jsonl": Case(
        OPEN, [*E6[:3], "e00000c1", *E6[3:]], "e0000006", [*E6[:3], "e00000c1", *E6[3:]]
    ),
}

STORED = sorted(p.name for p in CORPUS.glob("*.jsonl") if p.name in CASES)


def test_every_stored_corpus_file_has_a_case() -> None:
    stored = {p.name for p in CORPUS.glob("*.jsonl")} - {
        "huge-single-line-5mb.jsonl",
        "very-deep-chain-50k.jsonl",
    }
    assert stored == set(CASES)


def check(path: Path, case: Case) -> None:
    session = load_session(path)
    try:
        assert session.verdict is case.verdict, [str(d) for d in session.diagnostics]
        ids = [e.id for e in session.entries]
        if isinstance(case.ids, int):
            assert len(ids) == case.ids
        else:
            assert ids == case.ids
        if case.leaf is not None:
            assert session.leaf is not None and session.entries[session.leaf].id == case.leaf
        path_ids = [session.entries[i].id for i in session.active_path()]
        if isinstance(case.path, int):
            assert len(path_ids) == case.path
        elif case.path is not None:
            assert path_ids == case.path
        warned = {d.line for d in session.diagnostics if d.severity is not Severity.INFO}
        if case.verdict is REFUSE:
            errors = [d for d in session.diagnostics if d.severity is Severity.ERROR]
            assert len(errors) == 1
            assert str(path) in str(errors[0])
        else:
            assert warned == case.warn_lines
        for diagnostic in session.diagnostics:
            assert diagnostic.path == str(path)
            if diagnostic.line is not None and diagnostic.severity is not Severity.ERROR:
                assert diagnostic.offset is not None
        gate_ok = session.append_refusal is None and (
            session.leaf is None or session.path_problem(session.leaf) is None
        )
        assert gate_ok == case.appendable
        assert session.complete is True
    finally:
        session.close()


@pytest.mark.parametrize("name", STORED)
def test_corpus_file(name: str) -> None:
    check(CORPUS / name, CASES[name])


def test_big_single_line(big_corpus: Path) -> None:
    check(big_corpus / "huge-single-line-5mb.jsonl", Case(OPEN, 5, "e0000005", 5))


def test_big_deep_chain(big_corpus: Path) -> None:
    path = big_corpus / "very-deep-chain-50k.jsonl"
    check(path, Case(OPEN, 50000, "0000c350", 50000))
    session = load_session(path)
    leaf = session.leaf
    assert leaf is not None
    assert session.depth(leaf) == 49999
    assert session.common_ancestor(leaf, 10) == 10
    assert session.path_problem(leaf) is None


# ---------------------------------------------------------------- details per file


def load(name: str):  # type: ignore[no-untyped-def]
    return load_session(CORPUS / name)


def message_of(session, line: int) -> str:  # type: ignore[no-untyped-def]
    return next(str(d) for d in session.diagnostics if d.line == line)


def test_truncated_tail_names_the_lost_record_and_needs_a_seal() -> None:
    session = load("truncated-last-line.jsonl")
    torn = next(d for d in session.diagnostics if d.code == "torn-tail")
    assert (torn.line, torn.offset) == (9, 3751)
    assert "5252 bytes" in torn.message and "e0000007" in torn.message
    assert "toolResult" in torn.message
    assert session.torn_ids == {"e0000007"}
    assert session.needs_seal and session.snapshot.torn_tail
    assert not session.snapshot.ends_with_newline
    # The leaf ends in a tool call whose result was lost.
    assert "toolu_02" in message_of(session, 8)


def test_no_trailing_newline_is_accepted_but_flagged() -> None:
    session = load("no-trailing-newline.jsonl")
    assert not session.snapshot.ends_with_newline and not session.snapshot.torn_tail
    assert session.append_refusal is None


def test_invalid_json_lines_are_each_reported() -> None:
    session = load("invalid-json-middle.jsonl")
    assert "column 548" in message_of(session, 6)
    # The unterminated e00000ff and the broken e0000004 are known ids for A7.
    assert {"e0000004", "e00000ff"} <= session.torn_ids
    assert "e0000004" in message_of(session, 8)


def test_raw_control_character_is_rejected_like_json_parse() -> None:
    session = load("raw-control-byte-in-string.jsonl")
    assert "column 168" in message_of(session, 5)
    assert "control character" in message_of(session, 5)


def test_not_utf8_reports_the_column_and_keeps_the_entry() -> None:
    session = load("not-utf8.jsonl")
    assert "column 158" in message_of(session, 5)
    text = session.entries[3].data["message"]["content"][0]["text"]
    assert "\ufffd" in text


def test_crlf_is_an_info_with_unchanged_offsets() -> None:
    session = load("crlf-lines.jsonl")
    assert [d.code for d in session.diagnostics] == ["crlf"]
    raw = (CORPUS / "crlf-lines.jsonl").read_bytes()
    for entry in session.entries:
        line = raw[entry.offset : entry.offset + entry.size]
        assert line.endswith(b"\r") and entry.id.encode() in line


def test_blank_lines_keep_physical_line_numbers() -> None:
    session = load("blank-lines-interspersed.jsonl")
    assert session.entries[-1].line == 13


def test_omp_title_slot() -> None:
    session = load("omp-title-slot-first-line.jsonl")
    assert session.title_slot is not None
    assert session.title_slot["title"] == "Port user-message-selector"
    assert session.header is not None and session.header_line == 2


def test_no_header_warns_about_pi_overwriting() -> None:
    session = load("no-header.jsonl")
    assert "not a session header" in message_of(session, 1)
    assert "overwrite" in message_of(session, 1)
    assert session.header is None and session.version is None
    assert session.append_refusal


def test_future_and_old_versions_are_read_only_with_reason() -> None:
    future = load("future-version-99.jsonl")
    assert future.version == 99 and "version 99" in (future.append_refusal or "")
    assert "checkpoint_v99" in [e.type for e in future.entries]
    v2 = load("v2-hookMessage.jsonl")
    assert v2.version == 2 and v2.header is not None and v2.header["version"] == 3
    custom = v2.entries[4]
    assert custom.role == "custom" and custom.data["message"]["role"] == "custom"


@pytest.mark.parametrize("lazy", [False, True])
def test_v1_migration_in_memory(lazy: bool) -> None:
    session = load_session(CORPUS / "v1-with-compaction-index.jsonl", lazy=lazy)
    assert session.version == 1
    entries = session.entries
    # Chained in file order.
    assert entries[0].parent is None
    assert all(e.parent == e.index - 1 for e in entries[1:])
    assert all(e.data["parentId"] == entries[e.index - 1].id for e in entries[1:])
    # firstKeptEntryIndex 6 counts the header: entry on line 7.
    compactions = [e for e in entries if e.type == "compaction"]
    by_line = {e.line: e for e in compactions}
    kept = session.entry_by_id(by_line[10].data["firstKeptEntryId"])
    assert kept is not None and kept.line == 7
    assert "firstKeptEntryIndex" not in by_line[10].data
    assert "firstKeptEntryId" not in by_line[14].data  # 999: out of range
    assert "firstKeptEntryId" not in by_line[15].data  # 0: the header


def test_v1_ids_are_deterministic() -> None:
    first = [e.id for e in load("v1-with-compaction-index.jsonl").entries]
    second = [e.id for e in load("v1-with-compaction-index.jsonl").entries]
    assert first == second
    assert len(set(first)) == len(first)


def test_duplicate_ids_resolve_to_nearest_earlier_definition() -> None:
    session = load("duplicate-ids.jsonl")
    assert "lines 7 and 10" in message_of(session, 10)
    assert session.ambiguous_ids == {"e0000002"}
    assert session.entry_by_id("e0000002") == session.entries[6]  # the latest
    problem = session.path_problem(session.leaf)  # type: ignore[arg-type]
    assert problem is not None and "e0000002" in problem


def test_parent_cycle_is_broken_by_file_order() -> None:
    session = load("parent-cycle.jsonl")
    text = message_of(session, 4)
    assert "e0000005" in text and "defined later" in text and "line 6" in text


def test_missing_parent_message() -> None:
    session = load("missing-parent.jsonl")
    assert "parent deadbeef not found" in message_of(session, 5)
    assert session.broken_parent(3) == "deadbeef"
    assert len(session.roots) == 2


def test_two_roots_and_siblings_order() -> None:
    session = load("two-roots.jsonl")
    assert len(session.roots) == 2
    siblings = load("deeply-branching-1000-siblings.jsonl")
    parent = siblings.index_of("e0000004")
    assert parent is not None
    kids = siblings.children(parent)
    assert len(kids) == 1000
    assert [siblings.entries[k].id for k in kids][:2] == ["c0000000", "c0000001"]
    assert kids == sorted(kids)


def test_duplicate_header_replay_folds_identical_lines() -> None:
    session = load("duplicate-header-replay.jsonl")
    assert "second session header" in message_of(session, 4)
    assert "repeats line 2" in message_of(session, 5)
    assert len(session.roots) == 1


def test_labels_resolve_in_file_order() -> None:
    session = load("label-to-missing-target.jsonl")
    labels = {session.entries[i].id: text for i, text in session.labels.items()}
    assert labels == {"e000000b": "labels-itself"}
    assert "0badc0de" in message_of(session, 8)


def test_compaction_first_kept_problems() -> None:
    missing = load("compaction-firstKept-missing.jsonl")
    assert "0badc0de not found" in message_of(missing, 8)
    other = load("compaction-on-other-branch.jsonl")
    assert "another branch" in message_of(other, 10)


def test_tool_pairing_warnings() -> None:
    session = load("tool-result-without-call.jsonl")
    assert "toolu_NOCALL" in message_of(session, 5)
    assert "toolu_02" in message_of(session, 6)
    assert "aborted" in message_of(session, 8)


def test_session_name_and_labels_are_kept_raw() -> None:
    session = load("control-characters-and-ansi-escapes.jsonl")
    assert session.name is not None and "\x1b" in session.name  # sanitizing is the UI's job


# ---------------------------------------------------------------- semantic problems (F)


def test_timestamp_problems_name_their_lines() -> None:
    session = load("timestamps-missing-numeric-invalid.jsonl")
    codes = {d.code: d for d in session.diagnostics}
    assert (codes["timestamp-missing"].line, codes["timestamp-numeric"].line) == (3, 4)
    assert codes["timestamp-invalid"].line == 5
    order = next(d for d in load("timestamps-out-of-order.jsonl").diagnostics)
    assert order.code == "timestamp-order" and "parent on line 5" in order.message


def test_branch_summary_from_ids_are_checked() -> None:
    session = load("branch-summary-fromId-missing-and-root.jsonl")
    assert "0badf00d names no entry" in message_of(session, 8)
    assert '"root"' in message_of(session, 10)


def test_interleaved_writers_are_named_and_one_branch_switch_is_not() -> None:
    session = load("interleaved-writers.jsonl")
    warning = next(d for d in session.diagnostics if d.code == "interleaved-writers")
    assert warning.line == 8 and "3 such switches" in warning.message
    # A user going back once to an old branch's last entry is not two writers.
    older = load("leaf-on-older-branch.jsonl").diagnostics
    assert not [d for d in older if d.code == "interleaved-writers"]


def test_deep_custom_data_keeps_everything_pi_keeps() -> None:
    from tui_compactor.session.reader import OpaqueJSON, decode_deep

    for lazy in (False, True):
        session = load_session(CORPUS / "deep-nested-custom-data-50k.jsonl", lazy=lazy)
        custom = session.entries[3]
        assert (custom.id, custom.type) == ("e00000c1", "custom")
        assert session.entries[4].parent == 3  # its child stays attached
        value = custom.data["data"]
        depth = 1
        while not isinstance(value, OpaqueJSON):
            value = value["d"]
            depth += 1
        rest = decode_deep(value, keep_depth=10**6)
        while "d" in rest:
            rest = rest["d"]
            depth += 1
        assert rest == {"leaf": "kept"} and depth == 50_000
        session.close()
