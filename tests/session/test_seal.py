"""``tui-compactor seal``: a torn last line is ended with one newline, only when asked."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tui_compactor.cli import main
from tui_compactor.session.reader import load_session
from tui_compactor.session.writer import AppendRefused, append_entry, make_leaf_marker

CORPUS = Path(__file__).resolve().parents[1] / "fixtures" / "bad"


@pytest.fixture()
def torn_copy(tmp_path: Path) -> Path:
    target = tmp_path / "torn.jsonl"
    shutil.copyfile(CORPUS / "truncated-last-line.jsonl", target)
    return target


def test_seal_without_yes_and_without_a_terminal_writes_nothing(
    torn_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    original = torn_copy.read_bytes()
    assert main(["seal", str(torn_copy)]) == 1  # stdin is not a terminal under pytest
    err = capsys.readouterr().err
    assert "line 9" in err and "5252 bytes" in err and "e0000007" in err
    assert "toolResult" in err and "--yes" in err
    assert torn_copy.read_bytes() == original
    assert sorted(p.name for p in torn_copy.parent.iterdir()) == ["torn.jsonl"]


def test_seal_appends_one_newline_then_compact_succeeds(
    torn_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    original = torn_copy.read_bytes()
    compact = [
        "compact",
        str(torn_copy),
        "--yes",
        "--provider",
        "offline",
        "--quiet-window",
        "0",
        "--keep-recent",
        "50",
    ]  # something to summarize: an empty plan is never run
    assert main(compact) != 0  # the gate refuses a torn tail and names the command
    assert f"tui-compactor seal {torn_copy}" in capsys.readouterr().err
    assert torn_copy.read_bytes() == original

    assert main(["seal", str(torn_copy), "--yes", "--json", "--quiet-window", "0"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["written"] and report["offset"] == len(original)
    assert report["tail"] == {
        "line": 9,
        "offset": 3751,
        "bytes": 5252,
        "torn": True,
        "entryId": "e0000007",
        "kind": "toolResult",
    }
    assert torn_copy.read_bytes() == original + b"\n"

    assert main(compact) == 0
    capsys.readouterr()
    data = torn_copy.read_bytes()
    assert data.startswith(original + b"\n")  # the fragment is kept, on its own line
    appended = json.loads(data[len(original) + 1 :])
    assert appended["type"] == "compaction"
    session = load_session(torn_copy)
    assert session.entries[session.leaf].id == appended["id"]


def test_seal_refuses_when_there_is_nothing_to_seal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "clean.jsonl"
    shutil.copyfile(CORPUS / "image-content.jsonl", path)
    original = path.read_bytes()
    assert original.endswith(b"\n")
    assert main(["seal", str(path), "--yes", "--quiet-window", "0"]) == 1
    assert "nothing to seal" in capsys.readouterr().err
    assert path.read_bytes() == original


def test_seal_refused_by_the_gate_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A v1 file without a final newline: the writer's header check (A1) says no."""
    path = tmp_path / "v1.jsonl"
    data = (CORPUS / "v1-with-compaction-index.jsonl").read_bytes().rstrip(b"\n")
    path.write_bytes(data)
    assert main(["seal", str(path), "--yes", "--json", "--quiet-window", "0"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert not report["written"] and report["refusedCode"] == "A1"
    assert path.read_bytes() == data


def test_seal_a_complete_record_without_final_newline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "open-end.jsonl"
    shutil.copyfile(CORPUS / "no-trailing-newline.jsonl", path)
    original = path.read_bytes()
    last_id = json.loads(original.rsplit(b"\n", 1)[1])["id"]
    assert main(["seal", str(path), "--yes", "--quiet-window", "0"]) == 0
    out = capsys.readouterr().out
    assert "complete record without a final newline" in out and last_id in out
    assert path.read_bytes() == original + b"\n"
    assert load_session(path).entries[-1].id == last_id  # the record is still an entry


def test_gate_refusal_names_the_seal_command(torn_copy: Path) -> None:
    session = load_session(torn_copy)
    assert f"tui-compactor seal {torn_copy}" in (session.append_refusal or "")
    marker = make_leaf_marker(reason="test", undone_entry_id=None, previous_leaf_id=None)
    with pytest.raises(AppendRefused) as refused:
        append_entry(session, marker, parent_index=session.leaf, quiet_seconds=0)
    assert f"tui-compactor seal {torn_copy}" in refused.value.hint
