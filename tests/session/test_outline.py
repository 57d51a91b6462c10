"""The tree outline: flat linear runs, indented side branches, pi's /tree filters."""

from __future__ import annotations

import json
import time
import tracemalloc
from pathlib import Path

from tui_compactor.session.outline import OutlineFilter, OutlineWalk, build_outline
from tui_compactor.session.reader import load_session

from .conftest import CORPUS


def ids(session, rows) -> list[tuple[str, int]]:  # type: ignore[no-untyped-def]
    return [(session.entries[r.index].id, r.indent) for r in rows]


def test_branch_point_indents_side_branch_and_active_path_continues() -> None:
    session = load_session(CORPUS / "leaf-on-older-branch.jsonl")
    rows = build_outline(session, view=OutlineFilter.ALL)
    assert ids(session, rows) == [
        ("e0000001", 0), ("e0000002", 0), ("e0000003", 0), ("e0000004", 0),
        ("e0000005", 1), ("e0000006", 1), ("e0000007", 1), ("e0000008", 1),
        ("e0000009", 0), ("e000000a", 0),
    ]  # fmt: skip
    by_id = {session.entries[r.index].id: r for r in rows}
    assert by_id["e0000004"].is_branch_point and by_id["e0000004"].child_count == 2
    assert by_id["e000000a"].is_leaf and by_id["e000000a"].on_active_path
    assert not by_id["e0000006"].on_active_path
    assert by_id["e0000008"].is_tip


def test_choosing_another_leaf_swaps_the_main_line() -> None:
    session = load_session(CORPUS / "leaf-on-older-branch.jsonl")
    other = session.index_of("e0000008")
    rows = build_outline(session, leaf=other, view=OutlineFilter.ALL)
    assert ids(session, rows)[4:] == [
        ("e0000009", 1), ("e000000a", 1),
        ("e0000005", 0), ("e0000006", 0), ("e0000007", 0), ("e0000008", 0),
    ]  # fmt: skip
    assert rows[-1].is_leaf


def test_filters_follow_pi_tree_view() -> None:
    session = load_session(CORPUS / "leaf-on-older-branch.jsonl")
    default = ids(session, build_outline(session))
    # The label leaf stays visible; other labels would be hidden.
    assert ("e000000a", 0) in default
    user_only = [session.entries[r.index].role for r in build_outline(
        session, view=OutlineFilter.USER_ONLY) if r.index != session.leaf]  # fmt: skip
    assert set(user_only) == {"user"}
    no_tools = build_outline(session, view=OutlineFilter.NO_TOOLS)
    assert all(session.entries[r.index].role != "toolResult" for r in no_tools)
    labeled = build_outline(session, view=OutlineFilter.LABELED)
    assert {session.entries[r.index].id for r in labeled} == {"e0000006", "e000000a"}


def test_default_hides_bookkeeping_and_tool_call_only_assistants() -> None:
    session = load_session(CORPUS / "tool-result-without-call.jsonl")
    shown = {session.entries[r.index].id for r in build_outline(session)}
    assert "e0000007" in shown  # tool calls only, but aborted: shown as in pi
    every = {session.entries[r.index].id for r in build_outline(session, view=OutlineFilter.ALL)}
    assert every == {e.id for e in session.entries}
    info = load_session(CORPUS / "control-characters-and-ansi-escapes.jsonl")
    hidden = {info.entries[r.index].type for r in build_outline(info)}
    assert "session_info" not in hidden


def test_hidden_entries_attach_children_to_nearest_visible_ancestor(tmp_path: Path) -> None:
    session = load_session(CORPUS / "unknown-entry-type.jsonl")
    rows = build_outline(session, view=OutlineFilter.USER_ONLY)
    assert all(r.indent == 0 for r in rows)


def test_folding_hides_descendants_and_counts_them() -> None:
    session = load_session(CORPUS / "leaf-on-older-branch.jsonl")
    fold = session.index_of("e0000004")
    assert fold is not None
    rows = build_outline(session, folded={fold}, view=OutlineFilter.ALL)
    assert [session.entries[r.index].id for r in rows] == [
        "e0000001", "e0000002", "e0000003", "e0000004"
    ]  # fmt: skip
    assert rows[-1].folded and rows[-1].hidden_count == 6


def test_broken_links_are_roots_with_missing_parent() -> None:
    session = load_session(CORPUS / "missing-parent.jsonl")
    rows = build_outline(session, view=OutlineFilter.ALL)
    broken = [r for r in rows if r.missing_parent]
    assert [(session.entries[r.index].id, r.missing_parent) for r in broken] == [
        ("e0000004", "deadbeef")
    ]


def test_wide_and_deep_trees_are_fast(big_corpus: Path) -> None:
    wide = load_session(CORPUS / "deeply-branching-1000-siblings.jsonl")
    started = time.perf_counter()
    rows = build_outline(wide, view=OutlineFilter.ALL)
    assert len(rows) == 1005
    # The 999 inactive siblings are side branches; the active one continues the main line.
    assert sum(1 for r in rows if r.indent == 1) == 999
    assert wide.entries[rows[-1].index].id == "d0000001" and rows[-1].indent == 0
    deep = load_session(big_corpus / "very-deep-chain-50k.jsonl")
    rows = build_outline(deep, view=OutlineFilter.ALL)
    assert len(rows) == 50000 and all(r.indent == 0 for r in rows)
    # Loose sanity bound only (speed is measured by benchmarks/bench.py).
    assert time.perf_counter() - started < 20


def test_many_branches_stay_bounded(tmp_path: Path) -> None:
    """A comb: every entry of a 2000-long chain also has a side child. Indent stays 1."""
    lines = [json.dumps({"type": "session", "version": 3, "id": "s", "timestamp": "t",
                         "cwd": "/"})]  # fmt: skip
    parent = None
    for i in range(2000):
        main = f"m{i:05d}"
        lines.append(json.dumps({"type": "message", "id": main, "parentId": parent,
                                 "timestamp": f"2025-01-01T00:00:{i % 60:02d}.000Z",
                                 "message": {"role": "user", "content": "x"}}))  # fmt: skip
        lines.append(json.dumps({"type": "message", "id": f"s{i:05d}", "parentId": main,
                                 "timestamp": "2024-01-01T00:00:00.000Z",
                                 "message": {"role": "user", "content": "side"}}))  # fmt: skip
        parent = main
    path = tmp_path / "comb.jsonl"
    path.write_text("\n".join(lines) + "\n")
    session = load_session(path)
    leaf = session.index_of("m01999")
    rows = build_outline(session, leaf=leaf, view=OutlineFilter.ALL)
    assert len(rows) == 4000
    assert max(r.indent for r in rows) == 1
    main_rows = [r for r in rows if session.entries[r.index].id.startswith("m")]
    assert all(r.indent == 0 and r.on_active_path for r in main_rows)


def test_stored_rows_read_back_as_the_walk_made_them() -> None:
    """``build_outline`` keeps rows packed; every field a user sees (indent, marks, fold
    counts, broken links) reads back exactly as the walk made it, by position, slice and
    negative index, and ``positions`` finds each shown entry's row (only those)."""
    for path in sorted(CORPUS.glob("*.jsonl")):
        session = load_session(path)
        if not session.entries:
            continue
        branch_points = [i for i in range(len(session.entries)) if session._children.count(i) > 1]
        for view in OutlineFilter:
            for folded in (frozenset(), frozenset(branch_points[:1])):
                walked = list(OutlineWalk(session, folded=folded, view=view))
                rows = build_outline(session, folded=folded, view=view)
                assert list(rows) == walked, (path.name, view)
                assert len(rows) == len(walked)
                if walked:
                    assert rows[-1] == walked[-1] and rows[0] == walked[0]
                    assert rows[1:4] == walked[1:4]
                    assert [rows.index_at(p) for p in range(len(rows))] == [r.index for r in walked]
                    for p in range(len(rows)):  # what b / B / space reach from each row
                        after = [q for q in range(p + 1, len(rows)) if walked[q].is_branch_point]
                        before = [q for q in range(p) if walked[q].is_branch_point]
                        assert rows.next_branch_point(p, 1) == (after[0] if after else None)
                        assert rows.next_branch_point(p, -1) == (before[-1] if before else None)
                        foldable = [
                            q for q in range(p + 1) if walked[q].is_branch_point or walked[q].folded
                        ]
                        assert rows.foldable_at_or_before(p) == (foldable[-1] if foldable else None)
                assert dict(rows.positions) == {r.index: p for p, r in enumerate(walked)}
                assert list(rows.positions) == [r.index for r in walked]  # row order
                shown = {r.index for r in walked}
                for index in range(-1, len(session.entries) + 1):
                    assert (index in rows.positions) == (index in shown)
                assert rows.positions.get(len(session.entries)) is None


def test_indents_and_child_counts_past_a_byte_read_back_as_walked(tmp_path: Path) -> None:
    """Rows keep indent and child count in a byte each until one is over 255; a tree whose
    side branches nest 300 deep and whose root has 300 children still reads back every row
    as the walk made it."""

    def record(entry_id: str, parent: str | None, second: int) -> str:
        return json.dumps({"type": "message", "id": entry_id, "parentId": parent,
                           "timestamp": f"2025-01-01T00:{second // 60:02d}:{second % 60:02d}.000Z",
                           "message": {"role": "user", "content": entry_id}})  # fmt: skip

    lines = [json.dumps({"type": "session", "version": 3, "id": "s", "timestamp": "t",
                         "cwd": "/"})]  # fmt: skip
    lines.append(record("root", None, 0))
    for n in range(300):  # the root's children: 300 one-entry branches
        lines.append(record(f"c{n}", "root", 1 + n))
    parent = "c0"
    for n in range(300):  # under c0 a staircase: each side branch opens one level deeper
        lines.append(record(f"t{n}", parent, 400 + 2 * n))
        lines.append(record(f"s{n}", parent, 401 + 2 * n))
        parent = f"s{n}"
    lines.append(record("leaf", "root", 3000))
    path = tmp_path / "wide-and-nested.jsonl"
    path.write_text("\n".join(lines) + "\n")
    session = load_session(path)
    walked = list(OutlineWalk(session, view=OutlineFilter.ALL))
    rows = build_outline(session, view=OutlineFilter.ALL)
    assert list(rows) == walked
    assert max(r.indent for r in walked) > 255 and max(r.child_count for r in walked) == 301


def test_rows_of_a_deep_chain_stay_small(big_corpus: Path) -> None:
    """A 50,000-deep chain's rows and positions take a few bytes per row (row objects and a
    dict of positions took ~200 bytes a row: the app held ~40 MB for a 200k chain; four-byte
    indents and child counts ~18)."""
    deep = load_session(big_corpus / "very-deep-chain-50k.jsonl")
    tracemalloc.start()
    try:
        rows = build_outline(deep, view=OutlineFilter.ALL)
        size, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(rows) == 50_000 and rows[-1].is_leaf and rows[-1].on_active_path
    assert size < 50_000 * 14, f"{size / 50_000:.0f} bytes a row"


def test_the_child_lists_flat_form_is_the_lists() -> None:
    """``ChildLists.flat``, which the outline reads inline, decodes to the same children as
    the lists themselves, for the whole tree and for a filtered one (``visible``)."""
    from tui_compactor.session.session import NO_CHILD, SEVERAL

    oracle = Path(__file__).resolve().parents[1] / "fixtures" / "oracle" / "sessions"
    session = load_session(oracle / "tree-branches.jsonl")
    children = session._children
    shown = [i % 3 != 1 for i in range(len(session.entries))]
    visible, _ = children.visible(shown)
    for lists in (children, visible):
        only, several = lists.flat()
        assert len(only) == len(lists) == len(session.entries)
        decoded = [
            [] if only[i] == NO_CHILD else list(several[i]) if only[i] == SEVERAL else [only[i]]
            for i in range(len(lists))
        ]
        assert decoded == [list(lists[i]) for i in range(len(lists))]
        assert any(len(kids) > 1 for kids in decoded)
