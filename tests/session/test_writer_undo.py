"""``tui-compactor undo``: the leaf moves back above the last compaction; nothing is deleted."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tui_compactor.cli import main
from tui_compactor.session.model import seal_command, torn_tail_refusal
from tui_compactor.session.reader import load_session
from tui_compactor.session.writer import LEAF_MARKER_TYPE

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SAMPLE = Path(__file__).resolve().parents[2] / "tui_compactor" / "data" / "sample-session.jsonl"


@pytest.fixture()
def session_copy(tmp_path: Path) -> Path:
    target = tmp_path / "refactor.jsonl"
    shutil.copyfile(FIXTURES / "sessions" / "refactor-session-v3.jsonl", target)
    return target


def _compactions_on_active_path(path: Path) -> list[str]:
    session = load_session(path)
    return [
        session.entries[i].id
        for i in session.path_to(session.leaf)
        if session.entries[i].type == "compaction"
    ]


def test_undo_twice_walks_back_over_both_compactions(
    session_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """pi's own compactions have hundreds of entries after them: each undo is refused (nothing
    written) until --force, and always says how many entries leave the active path."""
    original = session_copy.read_bytes()
    before = _compactions_on_active_path(session_copy)
    assert len(before) == 2
    path_length = len(load_session(session_copy).path_to(load_session(session_copy).leaf))

    assert main(["undo", str(session_copy), "--yes", "--json", "--quiet-window", "0"]) == 1
    refused = json.loads(capsys.readouterr().out)
    assert not refused["written"] and "--force" in refused["hint"]
    leaving = refused["entriesLeavingActivePath"]
    assert leaving > 300  # everything after pi's compaction on line 629
    assert session_copy.read_bytes() == original
    assert main(["undo", str(session_copy), "--yes", "--quiet-window", "0"]) == 1
    err = capsys.readouterr().err
    assert f"{leaving} entries after it leave the active path (nothing is deleted)" in err
    assert "--force" in err
    assert session_copy.read_bytes() == original

    assert (
        main(["undo", str(session_copy), "--yes", "--force", "--json", "--quiet-window", "0"]) == 0
    )
    report = json.loads(capsys.readouterr().out)
    assert report["written"] and report["compactionId"] == before[-1]
    assert report["entriesLeavingActivePath"] == leaving
    data = session_copy.read_bytes()
    assert data[: len(original)] == original  # only appended
    marker = json.loads(data[len(original) :])
    assert marker["type"] == "custom" and marker["customType"] == LEAF_MARKER_TYPE
    assert marker["id"] == report["markerId"]
    assert marker["parentId"] == report["newLeafParentId"]
    assert marker["data"]["undoneEntryId"] == before[-1]
    session = load_session(session_copy)
    assert session.entries[session.leaf].id == marker["id"]
    assert session.entry_by_id(before[-1]) is not None  # the compaction is still there
    assert _compactions_on_active_path(session_copy) == before[:1]
    # the marker's path: everything above the compaction, plus the marker itself
    assert len(session.path_to(session.leaf)) == path_length - leaving - 1 + 1

    second = session_copy.read_bytes()
    assert main(["undo", str(session_copy), "--yes", "--quiet-window", "0"]) == 1
    assert "--force" in capsys.readouterr().err
    assert session_copy.read_bytes() == second
    assert main(["undo", str(session_copy), "--yes", "--force", "--quiet-window", "0"]) == 0
    out = capsys.readouterr().out
    assert "appended leaf marker" in out and "leave the active path" in out
    assert _compactions_on_active_path(session_copy) == []
    third = session_copy.read_bytes()
    assert main(["undo", str(session_copy), "--yes", "--force", "--quiet-window", "0"]) == 1
    assert "nothing to undo" in capsys.readouterr().err
    assert session_copy.read_bytes() == third


def test_undo_after_our_compaction_then_refuses_to_rewind_pis(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The reported case: compact, undo (nothing after it: allowed), undo again (pi's older
    compaction with ~376 entries after it: refused without --force, file unchanged)."""
    path = tmp_path / "sample.jsonl"
    shutil.copyfile(SAMPLE, path)
    assert (
        main(["compact", str(path), "--yes", "--provider", "offline", "--quiet-window", "0"]) == 0
    )
    capsys.readouterr()
    ours = _compactions_on_active_path(path)[-1]
    assert main(["undo", str(path), "--yes", "--json", "--quiet-window", "0"]) == 0
    first = json.loads(capsys.readouterr().out)
    assert first["written"] and first["compactionId"] == ours
    assert first["entriesLeavingActivePath"] == 0
    active_before = len(load_session(path).path_to(load_session(path).leaf))
    after_first = path.read_bytes()

    assert main(["undo", str(path), "--yes", "--quiet-window", "0"]) == 1
    err = capsys.readouterr().err
    leaving = active_before - 1 - 628  # entries after pi's compaction on line 629, marker aside
    assert f"{leaving} entries after it leave the active path (nothing is deleted)" in err
    assert path.read_bytes() == after_first
    session = load_session(path)
    assert len(session.path_to(session.leaf)) == active_before  # nothing moved


def test_undo_refused_by_the_gate_on_a_v1_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "v1.jsonl"
    shutil.copyfile(FIXTURES / "bad" / "v1-with-compaction-index.jsonl", path)
    original = path.read_bytes()
    argv = ["undo", str(path), "--yes", "--force", "--json", "--quiet-window", "0"]
    assert main(argv) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["refusedCode"] == "A1"
    assert "pi" in report["hint"]
    assert path.read_bytes() == original
    assert sorted(p.name for p in tmp_path.iterdir()) == ["v1.jsonl"]


def test_a_torn_tail_is_refused_in_the_same_words_by_undo_compact_navigate_and_the_app(
    session_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One refusal for a torn last line: undo (the write gate, with its rule and hint),
    compact and navigate (the loader's verdict) and the app's banner say the same thing."""
    with session_copy.open("ab") as file:
        file.write(b'{"type":"message","id":"torn')
    original = session_copy.read_bytes()
    reason, hint = torn_tail_refusal(session_copy)
    assert f"`{seal_command(session_copy)}`" in hint

    argv = ["undo", str(session_copy), "--yes", "--force", "--json", "--quiet-window", "0"]
    assert main(argv) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["refusedCode"] == "A2"
    assert report["refused"] == f"{session_copy.name}: {reason}."
    assert report["hint"] == hint

    leaf = load_session(session_copy).entries[5].id
    for argv in (
        ["undo", str(session_copy), "--yes", "--force"],
        ["compact", str(session_copy), "--yes", "--provider", "offline"],
        ["navigate", str(session_copy), "--to", leaf, "--yes"],
    ):
        assert main([*argv, "--quiet-window", "0"]) == 1, argv
        err = " ".join(capsys.readouterr().err.split())
        assert reason in err and hint in err, argv
    banner = load_session(session_copy).append_refusal  # the app's banner: the gate's words
    assert banner == f"{session_copy.name}: {reason}. {hint}"
    assert session_copy.read_bytes() == original
