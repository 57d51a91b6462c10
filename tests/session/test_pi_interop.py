"""Interop: what we append loads in pi's own SessionManager and shows up in its context.

Runs ``tests/support/pi_session_probe.mjs`` with Node against a copy of the real v3 session
after each append. Skips (with the reason) only when Node or the pi package is missing.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.support.pi_probe import pi_sees
from tui_compactor.session.reader import load_session
from tui_compactor.session.writer import (
    LEAF_MARKER_TYPE,
    append_entry,
    make_branch_summary_entry,
    make_compaction_entry,
    make_leaf_marker,
)

pytestmark = pytest.mark.node

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / "tests" / "fixtures" / "sessions" / "refactor-session-v3.jsonl"
FAST = {"quiet_seconds": 0.0}


def _probe(path: Path) -> dict[str, Any]:
    """Open ``path`` with pi and return what it sees; the file must not change."""
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    seen = pi_sees(path)
    # pi rewrites only files it migrates (v1/v2) or rejects; ours must stay byte-identical.
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before
    return seen


def _last_user_on_path(session) -> int:  # type: ignore[no-untyped-def]
    for index in reversed(session.path_to(session.leaf)):
        entry = session.entries[index]
        if entry.type == "message" and entry.role == "user":
            return index
        if entry.type == "compaction":
            break
    raise AssertionError("no user message after the last compaction")


def test_pi_loads_our_compaction_undo_and_branch_summary(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    shutil.copyfile(SOURCE, path)
    original = _probe(path)
    assert original["version"] == "0.73.1"
    session = load_session(path)
    old_leaf = session.entries[session.leaf]
    assert original["leafId"] == old_leaf.id

    # 1. A compaction at the leaf: pi's context starts with our summary.
    kept = session.entries[_last_user_on_path(session)]
    summary = "## Goal\nTUI-COMPACTOR interop summary \u2713 (\u5b8c\u6210)"
    compaction = make_compaction_entry(
        summary=summary,
        short_summary="interop",
        first_kept_entry_id=kept.id,
        tokens_before=123456,
        tokens_after=2345,
        read_files=["src/main.ts"],
        modified_files=["src/tui/tui-renderer.ts"],
    )
    written = append_entry(session, compaction, parent_index=session.leaf, **FAST)
    compaction_id = written.ids[0]
    seen = _probe(path)
    assert seen["leafId"] == compaction_id
    assert seen["entryCount"] == original["entryCount"] + 1
    first = seen["messages"][0]
    assert first["role"] == "compactionSummary"
    assert first["summary"] == summary  # byte-for-byte, non-ASCII included
    assert first["tokensBefore"] == 123456
    assert seen["branchIds"][-2] == old_leaf.id
    kept_text = "".join(
        block.get("text", "") for block in kept.message["content"] if isinstance(block, dict)
    )
    assert seen["messages"][1]["role"] == "user"
    assert seen["messages"][1]["text"] == kept_text[:200]  # pi keeps from our cut

    # 2. Undo: a leaf marker at the compaction's parent; pi resumes above our compaction.
    session = load_session(path)
    compaction_index = session.entry_by_id(compaction_id).index
    parent_index = session.entries[compaction_index].parent
    marker = make_leaf_marker(
        reason="undo", undone_entry_id=compaction_id, previous_leaf_id=compaction_id
    )
    undo = append_entry(session, marker, parent_index=parent_index, **FAST)
    seen = _probe(path)
    assert seen["leafId"] == undo.ids[0]
    assert compaction_id not in seen["branchIds"]
    assert all(m.get("summary") != summary for m in seen["messages"])
    assert seen["messages"] == original["messages"]  # exactly the context before compaction
    lines = path.read_bytes().splitlines()
    assert json.loads(lines[-1])["customType"] == LEAF_MARKER_TYPE
    assert any(json.loads(line).get("id") == compaction_id for line in lines[-2:])  # kept

    # 3. A branch summary attached at an earlier entry (navigation target).
    session = load_session(path)
    path_indices = session.path_to(session.leaf)
    target_index = path_indices[len(path_indices) // 2]
    target = session.entries[target_index]
    branch_text = "Abandoned branch: tried X, kept Y."
    branch = append_entry(
        session,
        make_branch_summary_entry(summary=branch_text, read_files=["a.ts"]),
        parent_index=target_index,
        **FAST,
    )
    seen = _probe(path)
    assert seen["leafId"] == branch.ids[0]
    assert seen["branchIds"][-2] == target.id
    last = seen["messages"][-1]
    assert last == {"role": "branchSummary", "summary": branch_text, "fromId": target.id}

    # 4. Before the root: parentId null, fromId "root"; pi's context is just the summary.
    session = load_session(path)
    root_text = "Went back to the very start."
    root = append_entry(
        session, make_branch_summary_entry(summary=root_text), parent_index=None, **FAST
    )
    seen = _probe(path)
    assert seen["leafId"] == root.ids[0]
    assert seen["branchIds"] == [root.ids[0]]
    assert seen["messages"] == [{"role": "branchSummary", "summary": root_text, "fromId": "root"}]
