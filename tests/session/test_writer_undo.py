"""``tui-compactor undo``: the leaf moves back above the last compaction; nothing is deleted."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tui_compactor.cli import main
from tui_compactor.session.reader import load_session
from tui_compactor.session.writer import LEAF_MARKER_TYPE

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


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
    original = session_copy.read_bytes()
    before = _compactions_on_active_path(session_copy)
    assert len(before) == 2
    assert main(["undo", str(session_copy), "--yes", "--json", "--quiet-window", "0"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["written"] and report["compactionId"] == before[-1]
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

    assert main(["undo", str(session_copy), "--yes", "--quiet-window", "0"]) == 0
    assert "appended leaf marker" in capsys.readouterr().out
    assert _compactions_on_active_path(session_copy) == []
    third = session_copy.read_bytes()
    assert main(["undo", str(session_copy), "--yes", "--quiet-window", "0"]) == 1
    assert "nothing to undo" in capsys.readouterr().err
    assert session_copy.read_bytes() == third


def test_undo_writes_nothing_without_confirmation(
    session_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    original = session_copy.read_bytes()
    assert main(["undo", str(session_copy)]) == 1  # stdin is not a terminal under pytest
    assert "--yes" in capsys.readouterr().err
    assert main(["undo", str(session_copy), "--dry-run", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["dryRun"] and not report["written"]
    assert session_copy.read_bytes() == original


def test_undo_refused_by_the_gate_on_a_v1_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "v1.jsonl"
    shutil.copyfile(FIXTURES / "bad" / "v1-with-compaction-index.jsonl", path)
    original = path.read_bytes()
    assert main(["undo", str(path), "--yes", "--json", "--quiet-window", "0"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["refused"]["code"] == "A1"
    assert "pi" in report["refused"]["hint"]
    assert path.read_bytes() == original
    assert sorted(p.name for p in tmp_path.iterdir()) == ["v1.jsonl"]
