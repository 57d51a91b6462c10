"""Every refusal of every writing command has one shape: ``refused``, ``refusedCode``, ``hint``.

Whatever refused (the load-time gate, the rules, the plan, the user, the append gate), a script
reading ``--json`` finds the same three fields, and the code is one the docs explain.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from tests.support.cli import cli
from tui_compactor.workbench.exits import EXIT_REFUSED, REFUSAL_CODES

ROOT = Path(__file__).resolve().parents[2]
BAD = ROOT / "tests" / "fixtures" / "bad"
COMPACTED = ROOT / "tests" / "fixtures" / "oracle" / "sessions" / "tree-compacted.jsonl"
DOC = (ROOT / "docs" / "engine-commands.md").read_text(encoding="utf-8")
GATE_CODES = set(
    re.findall(r'code="([^"]+)"', (ROOT / "tui_compactor/session/writer.py").read_text())
)

CASES = [
    # (fixture, argv after the file, the rule that refuses, has a hint)
    ("truncated-last-line.jsonl", ["compact", "--provider", "offline", "--yes"], "A2", True),
    ("truncated-last-line.jsonl", ["navigate", "--to", "#0", "--yes"], "A2", True),
    ("future-version-99.jsonl", ["compact", "--provider", "offline", "--yes"], "A1", True),
    ("future-version-99.jsonl", ["navigate", "--to", "#0", "--yes"], "A1", True),
    ("header-only.jsonl", ["undo", "--yes"], "nothing-to-undo", False),
    ("tree-compacted.jsonl", ["undo", "--yes"], "needs-force", True),
    ("tree-compacted.jsonl", ["seal", "--yes"], "nothing-to-seal", False),
    ("tree-compacted.jsonl", ["compact", "--cut", "#0", "--provider", "offline"], "plan", False),
    (
        "tree-compacted.jsonl",
        ["compact", "--keep-recent", "9999999", "--provider", "offline"],
        "nothing-to-compact",
        True,
    ),
    (
        "tree-compacted.jsonl",
        ["compact", "--keep-recent", "200000", "--window", "1000", "--provider", "offline"],
        "settings",
        False,
    ),
    ("tree-compacted.jsonl", ["compact", "--provider", "offline"], "not-confirmed", True),
    ("tree-compacted.jsonl", ["navigate", "--to", "#1"], "not-confirmed", True),
]


@pytest.mark.parametrize(("name", "argv", "code", "hinted"), CASES)
def test_every_refusal_has_the_same_fields(
    name: str, argv: list[str], code: str, hinted: bool, tmp_path: Path
) -> None:
    source = COMPACTED if name == "tree-compacted.jsonl" else BAD / name
    path = tmp_path / name
    shutil.copyfile(source, path)
    before = path.read_bytes()
    result = cli(argv[0], str(path), *argv[1:], "--json", "--quiet-window", "0")
    assert result.returncode == EXIT_REFUSED, result.stderr
    report = json.loads(result.stdout)
    assert report["written"] is False
    assert {"refused", "refusedCode", "hint"} <= report.keys(), report
    assert report["refused"] and report["refusedCode"] == code
    assert bool(report["hint"]) is hinted, report
    assert path.read_bytes() == before


def test_the_load_time_refusal_is_the_gates_in_its_words(tmp_path: Path) -> None:
    # compact refuses before any model call, navigate before any move: with the words, code
    # and hint the append gate itself gives (undo reaches the gate and says the same).
    path = tmp_path / "torn.jsonl"
    shutil.copyfile(BAD / "truncated-last-line.jsonl", path)
    compact = json.loads(cli("compact", str(path), "--provider", "offline", "--json").stdout)
    navigate = json.loads(cli("navigate", str(path), "--to", "#0", "--yes", "--json").stdout)
    fields = ("refused", "refusedCode", "hint")
    assert [compact[f] for f in fields] == [navigate[f] for f in fields]
    assert compact["refused"].startswith("torn.jsonl: the file ends in an incomplete record")


def test_every_refusal_code_is_documented() -> None:
    for code in sorted(set(REFUSAL_CODES) | GATE_CODES):
        assert f"`{code}`" in DOC, f"docs/engine-commands.md does not explain {code}"


def test_undo_needs_force_gives_its_advice_as_the_hint(tmp_path: Path) -> None:
    # The advice is the hint (what to do about it), not part of the reason; the text output
    # still says both.
    path = tmp_path / "tree-compacted.jsonl"
    shutil.copyfile(COMPACTED, path)
    report = json.loads(cli("undo", str(path), "--yes", "--json").stdout)
    assert report["refusedCode"] == "needs-force"
    assert report["hint"] == "pass --force to undo anyway"
    assert "--force" not in report["refused"]
    text = cli("undo", str(path), "--yes")
    assert text.returncode == EXIT_REFUSED
    assert b"would leave the active path; pass --force to undo anyway" in text.stderr


@pytest.mark.parametrize(
    "argv",
    [
        ["undo", "--dry-run", "--force"],
        ["navigate", "--to", "#3", "--dry-run"],
        ["compact", "--dry-run", "--provider", "offline"],
    ],
)
def test_a_dry_run_says_the_gate_would_refuse_the_real_run(argv: list[str], tmp_path: Path) -> None:
    """Another process left half a line at the end: the app opens the file read-only and its
    `u`, `enter` and `a` are refused. `undo --dry-run` said it would undo (exit 0, no word of
    the gate); each dry run now reports the refusal the real run meets (`appendRefused`, in
    the shape of every refusal) and says so on stderr; a clean file reports null."""
    path = tmp_path / "torn.jsonl"
    shutil.copyfile(COMPACTED, path)
    clean = json.loads(cli(argv[0], str(path), *argv[1:], "--json").stdout)
    assert clean["appendRefused"] is None
    with path.open("ab") as torn:
        torn.write(b'{"type":"message","id":"half","parentId":"9f5ca3d3","mess')
    before = path.read_bytes()
    dry = cli(argv[0], str(path), *argv[1:], "--json")
    assert dry.returncode == 0, dry.stderr  # a dry run writes nothing: it is not refused
    report = json.loads(dry.stdout)["appendRefused"]
    real_argv = [a for a in argv if a != "--dry-run"] + ["--yes", "--quiet-window", "0"]
    real = json.loads(cli(real_argv[0], str(path), *real_argv[1:], "--json").stdout)
    fields = ("refused", "refusedCode", "hint")
    assert [report[f] for f in fields] == [real[f] for f in fields]
    assert report["refusedCode"] == "A2"
    assert b"note: a real run would be refused now: append refused: torn.jsonl" in dry.stderr
    assert path.read_bytes() == before
