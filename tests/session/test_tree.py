"""Tree queries: children order (pi's getTree), common ancestors, depth, ids, path checks."""

from __future__ import annotations

import json
from pathlib import Path

from tui_compactor.session.reader import load_session
from tui_compactor.session.session import timestamp_key

from .conftest import CORPUS

HEADER = {"type": "session", "version": 3, "id": "s", "timestamp": "2025-01-01T00:00:00.000Z"}


def write(path: Path, records: list[dict]) -> Path:
    path.write_text("\n".join(json.dumps(r) for r in [HEADER, *records]) + "\n")
    return path


def msg(entry_id: str, parent: str | None, timestamp: str, **extra: object) -> dict:
    return {"type": "message", "id": entry_id, "parentId": parent, "timestamp": timestamp,
            "message": {"role": "user", "content": entry_id}, **extra}  # fmt: skip


def test_children_sorted_by_timestamp_stable_on_ties(tmp_path: Path) -> None:
    path = write(tmp_path / "s.jsonl", [
        msg("root", None, "2025-01-01T00:00:00.000Z"),
        msg("late", "root", "2025-01-01T00:00:09.000Z"),
        msg("early", "root", "2025-01-01T00:00:01.000Z"),
        msg("tie-a", "root", "2025-01-01T00:00:05.000Z"),
        msg("tie-b", "root", "2025-01-01T00:00:05.000+00:00"),
        msg("offset", "root", "2025-01-01T02:00:03.000+02:00"),  # = 00:00:03Z
    ])  # fmt: skip
    session = load_session(path)
    kids = [session.entries[k].id for k in session.children(0)]
    assert kids == ["early", "offset", "tie-a", "tie-b", "late"]
    # The leaf is still the last line, not the newest timestamp.
    assert session.entries[session.leaf].id == "offset"  # type: ignore[index]


def test_timestamp_key_orders_like_instants() -> None:
    assert timestamp_key("2025-01-01T00:00:01.000Z") < timestamp_key("2025-01-01T00:00:01.5Z")
    assert timestamp_key("2025-01-01T01:00:00+01:00") == "2025-01-01T00:00:00.000Z"
    assert timestamp_key("not a date") == "" and timestamp_key(None) == ""


def test_common_ancestor_depth_and_paths() -> None:
    session = load_session(CORPUS / "leaf-on-older-branch.jsonl")
    index = session.index_of
    e4, e8, ea = index("e0000004"), index("e0000008"), index("e000000a")
    assert None not in (e4, e8, ea)
    assert session.common_ancestor(e8, ea) == e4  # type: ignore[arg-type]
    assert session.common_ancestor(e4, e8) == e4  # type: ignore[arg-type]
    assert session.depth(ea) == 5  # type: ignore[arg-type]
    assert session.is_ancestor(e4, e8) and not session.is_ancestor(e8, e4)  # type: ignore[arg-type]
    assert session.leaves == [e8, ea]
    roots = load_session(CORPUS / "two-roots.jsonl")
    assert roots.common_ancestor(0, roots.leaf) is None  # type: ignore[arg-type]


def test_entries_without_id_or_parent_field(tmp_path: Path) -> None:
    no_id = {"type": "message", "parentId": None, "timestamp": "2025-01-01T00:00:00.000Z",
             "message": {"role": "user", "content": "x"}}  # fmt: skip
    no_parent = {"type": "label", "id": "l1", "timestamp": "2025-01-01T00:00:01.000Z",
                 "targetId": "x"}  # fmt: skip
    path = write(tmp_path / "s.jsonl", [no_id, no_parent, msg("self", "self", "2025-01-01")])
    session = load_session(path)
    assert [e.id for e in session.entries] == ["~line2", "l1", "self"]
    assert session.path_problem(0) is not None  # minted id: pi cannot reference it
    assert session.path_problem(1) is None  # a root (with a warning)
    assert "its own parent" in str(session.diagnostics[-2:])
    codes = {d.code for d in session.diagnostics}
    assert {"missing-id", "missing-parent-field", "missing-parent"} <= codes
