"""The bundled sample session: built deterministically by our writer from the real v3 session."""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

from tests.support.pi_probe import pi_sees
from tui_compactor.session.reader import load_session

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "tui_compactor" / "data" / "sample-session.jsonl"
BASE = ROOT / "tests" / "fixtures" / "sessions" / "refactor-session-v3.jsonl"


def _make_sample_module():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location(
        "make_sample", ROOT / "scripts" / "make_sample.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_sample_is_reproducible_and_only_appends_to_the_real_session(tmp_path: Path) -> None:
    rebuilt = _make_sample_module().build(BASE, tmp_path / "sample-session.jsonl")
    assert rebuilt.read_bytes() == SAMPLE.read_bytes()  # committed file == script output
    base = BASE.read_bytes()
    sample = SAMPLE.read_bytes()
    assert sample[: len(base)] == base
    added = [json.loads(line) for line in sample[len(base) :].splitlines()]
    assert len(added) == 11
    assert all(record["id"].startswith("5a7e0") for record in added)


def test_sample_shows_branches_labels_summary_and_compactions() -> None:
    session = load_session(SAMPLE)
    assert session.verdict.value in ("open", "open+warn")
    assert session.append_refusal is None
    types = [entry.type for entry in session.entries]
    assert types.count("compaction") == 2
    assert types.count("branch_summary") == 1
    assert len(session.labels) == 2
    assert len(session.leaves) >= 3  # main line + two side branches
    leaf = session.entries[session.leaf]
    assert leaf.id == "5a7e0c02"
    path_ids = {session.entries[i].id for i in session.path_to(session.leaf)}
    assert {"5a7e0c01", "d6e1e20a", "537c4c07", "112cf017"} <= path_ids  # the main line
    assert not path_ids & {"5a7e0a01", "5a7e0b01"}


def test_pi_resumes_the_sample_on_the_main_line(tmp_path: Path) -> None:
    copy = tmp_path / SAMPLE.name  # pi opens a copy, never the package data
    shutil.copyfile(SAMPLE, copy)
    seen = pi_sees(copy)
    assert copy.read_bytes() == SAMPLE.read_bytes()
    assert seen["leafId"] == "5a7e0c02"
    assert seen["messages"][0]["role"] == "compactionSummary"
    assert seen["messages"][-1]["role"] == "branchSummary"
    assert seen["messages"][-1]["fromId"] == "d6e1e20a"
