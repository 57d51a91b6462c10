"""The session commands (lint, tree, inspect) through ``cli.main`` and a real subprocess."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tui_compactor.cli import main

from .conftest import CORPUS

CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_lint_json_schema_and_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "lint", str(CORPUS / "invalid-json-middle.jsonl"), "--json")
    assert code == 0
    report = json.loads(out)
    assert report["verdict"] == "open+warn"
    assert report["counts"] == {"message": 5}
    assert report["leaf"] == "e0000006" and report["pathLength"] == 2
    assert report["roots"] == ["e0000001", "e0000005"]
    assert set(report["leaves"]) == {"e0000003", "e0000006"}
    assert report["appendAllowed"] is False
    lines = [d["line"] for d in report["diagnostics"]]
    assert {4, 6, 7, 9, 8} == set(lines)
    first = report["diagnostics"][0]
    assert set(first) >= {"severity", "line", "offset", "code", "message"}
    assert first["offset"] == 1274


@pytest.mark.parametrize("name", ["empty-file.jsonl", "whitespace-only.jsonl"])
def test_lint_refused_file_still_gets_json(capsys: pytest.CaptureFixture[str], name: str) -> None:
    code, out, _ = run_cli(capsys, "lint", str(CORPUS / name), "--json")
    assert code == 2
    report = json.loads(out)
    assert report["verdict"] == "refuse"
    assert name in report["error"]


def test_lint_text_and_wrong_arguments(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "lint", str(CORPUS / "v1-with-compaction-index.jsonl"))
    assert code == 0
    assert "READ-ONLY" in out and "append: refused" in out
    with pytest.raises(SystemExit) as exit_info:
        main(["lint"])
    assert exit_info.value.code == 2


def test_tree_text_is_sanitized(capsys: pytest.CaptureFixture[str]) -> None:
    path = CORPUS / "control-characters-and-ansi-escapes.jsonl"
    for view in ("default", "all"):
        code, out, _ = run_cli(capsys, "tree", str(path), "--filter", view)
        assert code == 0
        assert "\x1b" not in out and not CONTROL.search(out.replace("\n", ""))
        assert out.splitlines()[1].startswith("legend: * active path  ◆ leaf  ├─ └─")
        assert sum(line.startswith("◆ ") for line in out.splitlines()) == 1
    assert "⏎" in out  # the session name's CR LF is flattened, not obeyed


def _user(entry_id: str, parent: str | None, second: int) -> dict:
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": f"2025-01-01T00:00:{second:02d}.000Z",
        "message": {"role": "user", "content": f"text of {entry_id}"},
    }


def test_tree_text_draws_branch_glyphs_and_a_legend(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Side branches hang on ├─ / └─ under their branch point, nested ones keep the outer
    rail, and the main line continues at the branch point's indent."""
    header = {"type": "session", "version": 3, "id": "s", "timestamp": "2025-01-01T00:00:00Z"}
    records = [
        header,
        _user("r", None, 0),
        _user("a", "r", 1),
        _user("s1", "a", 2),
        _user("s1a", "s1", 3),
        _user("x", "s1a", 4),
        _user("y", "s1a", 5),
        _user("s2", "a", 6),
        _user("m", "a", 7),
        _user("tip", "m", 8),
    ]
    path = tmp_path / "branches.jsonl"
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    code, out, _ = run_cli(capsys, "tree", str(path))
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("legend: ")
    assert "* active path" in lines[0] and "◆ leaf" in lines[0] and "side branch" in lines[0]
    assert lines[1:] == [
        "* r user: text of r",
        "* a user: text of a",
        "  ├─ s1 user: text of s1",
        "  │  s1a user: text of s1a",
        "  │  └─ y user: text of y",
        "  │  x user: text of x",
        "  └─ s2 user: text of s2",
        "* m user: text of m",
        "◆ tip user: text of tip",
    ]
    code, out, _ = run_cli(capsys, "tree", str(path), "--json")
    rows = {row["id"]: row for row in json.loads(out)["rows"]}
    assert [i for i, row in rows.items() if row["branchStart"]] == ["s1", "y", "s2"]
    assert [i for i, row in rows.items() if row["lastBranch"]] == ["y", "s2"]


def test_tree_json_rows(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(
        capsys, "tree", str(CORPUS / "leaf-on-older-branch.jsonl"), "--json", "--filter", "all"
    )
    assert code == 0
    rows = json.loads(out)["rows"]
    assert [(r["id"], r["indent"]) for r in rows][3:6] == [
        ("e0000004", 0), ("e0000005", 1), ("e0000006", 1)
    ]  # fmt: skip
    assert rows[3]["branchPoint"] and rows[-1]["leaf"]
    assert next(r for r in rows if r["id"] == "e0000006")["label"] == "selector-ported"


def test_tree_unknown_leaf_and_refused(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(capsys, "tree", str(CORPUS / "two-roots.jsonl"), "--leaf", "nope")
    assert code == 2 and "nope" in err
    code, _, err = run_cli(capsys, "tree", str(CORPUS / "empty-file.jsonl"))
    assert code == 2 and "empty file" in err


def test_inspect_json_with_tokens(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(
        capsys, "inspect", str(CORPUS / "duplicate-ids.jsonl"), "--json", "--tokens", "pi"
    )
    assert code == 0
    report = json.loads(out)
    assert report["leafId"] == "e0000006"
    assert report["header"]["version"] == 3
    entries = report["entries"]
    assert [e["index"] for e in entries] == list(range(8))
    assert entries[0]["tokens"] is None and entries[0]["type"] == "session_info"
    assert all(isinstance(e["tokens"], int) for e in entries if e["type"] == "message")
    assert entries[-1]["depth"] == 7 and entries[-1]["parentId"] == "e0000002"


def test_inspect_counts_tokens_with_cl100k_by_default(
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = str(CORPUS / "duplicate-ids.jsonl")
    code, out, _ = run_cli(capsys, "inspect", path, "--json")
    assert code == 0
    report = json.loads(out)
    assert report["tokens"] == "cl100k"
    messages = [e for e in report["entries"] if e["type"] == "message"]
    assert messages and all(isinstance(e["tokens"], int) and e["tokens"] > 0 for e in messages)
    code, out, _ = run_cli(capsys, "inspect", path, "--json", "--tokens", "cl100k")
    assert json.loads(out)["entries"] == report["entries"]
    code, out, _ = run_cli(capsys, "inspect", path, "--json", "--tokens", "bytes")
    chosen = json.loads(out)
    assert chosen["tokens"] == "bytes"
    assert [e["tokens"] for e in chosen["entries"]] != [e["tokens"] for e in report["entries"]]
    code, out, _ = run_cli(capsys, "inspect", path)  # the table shows the same counts
    table = {int(line.split()[0]): line.split() for line in out.splitlines()[2:]}
    for entry in messages:
        assert table[entry["index"]][5] == str(entry["tokens"])


def test_inspect_refused_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "inspect", str(CORPUS / "empty-file.jsonl"), "--json")
    assert code == 2 and json.loads(out)["verdict"] == "refuse"


def test_cli_subprocess_never_leaks_escapes(tmp_path: Path) -> None:
    path = CORPUS / "control-characters-and-ansi-escapes.jsonl"
    for command in (["lint"], ["tree", "--filter", "all"], ["inspect"], ["inspect", "--json"]):
        result = subprocess.run(
            [sys.executable, "-m", "tui_compactor", command[0], str(path), *command[1:]],
            capture_output=True,
            timeout=120,
            cwd=tmp_path,
        )
        assert result.returncode == 0, result.stderr
        assert b"\x1b" not in result.stdout and b"\x9b" not in result.stdout
        assert not re.search(rb"[\x00-\x08\x0b-\x1f\x7f]", result.stdout.replace(b"\n", b""))
