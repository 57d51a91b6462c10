"""``audit``, ``timeline`` and ``plan --sweep`` print, byte for byte, what they printed when
these goldens were written, on every fixture session with a compaction and under both rules
(the audit's speed work must not change a single fact, score or count).

``tests/engine/data/analysis-golden.json`` holds each command's exit status and its standard
output (the sweep's, being long, as its SHA-256 and length). To write it again after a change
that is meant to change the output, run ``python tests/engine/test_analysis_golden.py`` from
the repository root and review the diff.
"""

from __future__ import annotations

import hashlib
import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).parent / "data" / "analysis-golden.json"
FILES = [
    "tests/fixtures/bad/compaction-firstKept-missing.jsonl",
    "tests/fixtures/bad/compaction-on-other-branch.jsonl",
    "tests/fixtures/bad/null-content.jsonl",
    "tests/fixtures/bad/v1-with-compaction-index.jsonl",
    "tests/fixtures/fuzz/mutant-3905.jsonl",
    "tests/fixtures/oracle-omp/sessions/omp-basic.jsonl",
    "tests/fixtures/oracle-omp/sessions/omp-methods.jsonl",
    "tests/fixtures/oracle/sessions/before-compaction.jsonl",
    "tests/fixtures/oracle/sessions/tree-compacted.jsonl",
    "tests/fixtures/sessions/before-compaction.jsonl",
    "tests/fixtures/sessions/refactor-session-v3.jsonl",
]
COMMANDS = [("audit",), ("timeline",), ("plan", "--sweep")]


def _run(args: list[str]) -> tuple[int, str]:
    """The program's ``main`` on ``args`` (from the repository root): status and stdout."""
    from tui_compactor.cli import main

    out = io.StringIO()
    saved = sys.stdout
    sys.stdout = out
    try:
        status = main(args)
    finally:
        sys.stdout = saved
    return status, out.getvalue()


def _record(command: tuple[str, ...], status: int, stdout: str) -> dict[str, Any]:
    if command[0] == "plan":
        digest = hashlib.sha256(stdout.encode()).hexdigest()
        return {"status": status, "sha256": digest, "chars": len(stdout)}
    return {"status": status, "stdout": stdout}


def _cases() -> list[tuple[str, tuple[str, ...], str]]:
    return [
        (path, command, rules) for path in FILES for command in COMMANDS for rules in ("pi", "omp")
    ]


def _key(path: str, command: tuple[str, ...], rules: str) -> str:
    return " ".join([*command, "--rules", rules, path])


@pytest.mark.parametrize(("path", "command", "rules"), _cases(), ids=lambda v: str(v))
def test_the_output_is_the_golden_one(
    path: str, command: tuple[str, ...], rules: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from tui_compactor.engine.hindsight import NO_FORK_ENV

    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    monkeypatch.delenv("TUI_COMPACTOR_CONFIG", raising=False)
    monkeypatch.setenv(NO_FORK_ENV, "1")  # the copy's results are compared in test_hindsight
    expected = json.loads(GOLDEN.read_text(encoding="utf-8"))[_key(path, command, rules)]
    status, stdout = _run([*command, "--rules", rules, path, "--json"])
    assert _record(command, status, stdout) == expected


if __name__ == "__main__":
    import os

    os.chdir(ROOT)
    os.environ["TUI_COMPACTOR_NO_FORK"] = "1"
    golden = {}
    for path, command, rules in _cases():
        status, stdout = _run([*command, "--rules", rules, path, "--json"])
        golden[_key(path, command, rules)] = _record(command, status, stdout)
    text = json.dumps(golden, indent=1, sort_keys=True, ensure_ascii=False)
    GOLDEN.write_text(text + "\n", encoding="utf-8")
