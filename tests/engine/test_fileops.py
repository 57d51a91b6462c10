"""File operations: extraction rules per agent, pi's suffix and oh-my-pi's ``<files>`` block."""

from __future__ import annotations

import pytest

from tui_compactor.engine.fileops import (
    FileOps,
    add_details,
    compute_file_lists,
    format_files_block,
    format_grouped_paths,
    format_pi_file_ops,
    strip_read_selector,
    upsert_file_operations,
)


def _assistant(*calls: tuple[str, object]) -> dict:
    return {
        "role": "assistant",
        "content": [
            {"type": "toolCall", "id": f"c{i}", "name": name, "arguments": {"path": path}}
            for i, (name, path) in enumerate(calls)
        ],
    }


def _ops(message: dict, rules: str) -> FileOps:
    from tui_compactor.engine.fileops import extract_file_ops

    ops = FileOps()
    extract_file_ops(message, ops, rules)
    return ops


def test_pi_keeps_paths_as_written_and_omp_normalizes() -> None:
    message = _assistant(
        ("read", "src/a.py:10-20"),
        ("read", "https://example.com/x"),
        ("write", "src/b.py"),
        ("edit", "src/c.py"),
        ("bash", "src/ignored.py"),
        ("read", ""),
        ("read", 42),
    )
    pi = _ops(message, "pi")
    assert list(pi.read) == ["src/a.py:10-20", "https://example.com/x"]
    assert list(pi.written) == ["src/b.py"] and list(pi.edited) == ["src/c.py"]
    omp = _ops(message, "omp")
    assert list(omp.read) == ["src/a.py"]


@pytest.mark.parametrize(
    ("path", "stripped"),
    [
        ("a.py:10-20", "a.py"),
        ("a.py:L5..L9", "a.py"),
        ("a.py:raw", "a.py"),
        ("a.py:RAW", "a.py"),
        ("a.py:conflicts", "a.py"),
        ("a.py:1-50:raw", "a.py"),
        ("a.py:raw:1-50", "a.py"),
        ("a.py:1,5-7", "a.py"),
        ("db.sqlite:users", "db.sqlite:users"),
        (":10", ":10"),
        ("C:/x/a.py", "C:/x/a.py"),
    ],
)
def test_strip_read_selector(path: str, stripped: str) -> None:
    assert strip_read_selector(path) == stripped


def test_compute_file_lists_and_pi_suffix() -> None:
    ops = FileOps()
    for path in ["b.py", "a.py", "c.py"]:
        ops.read[path] = None
    ops.edited["c.py"] = None
    ops.written["d.py"] = None
    read_files, modified = compute_file_lists(ops)
    assert read_files == ["a.py", "b.py"]
    assert modified == ["c.py", "d.py"]
    assert format_pi_file_ops(read_files, modified) == (
        "\n\n<read-files>\na.py\nb.py\n</read-files>\n\n<modified-files>\nc.py\nd.py\n</modified-files>"
    )
    assert format_pi_file_ops([], []) == ""
    assert format_pi_file_ops([], ["x"]) == "\n\n<modified-files>\nx\n</modified-files>"


def test_details_carry_forward_modified_as_edited() -> None:
    ops = FileOps()
    add_details({"readFiles": ["r.py", None], "modifiedFiles": ["m.py"]}, ops)
    add_details(None, ops)
    add_details({"readFiles": "not a list"}, ops)
    assert list(ops.read) == ["r.py"] and list(ops.edited) == ["m.py"] and not ops.written


def test_grouped_paths_fold_single_child_chains() -> None:
    paths = ["/abs/dir/a.ts", "/abs/dir/b.ts", "src/x/y.py", "src/z.py", "top.md"]
    assert format_grouped_paths(paths) == (
        "top.md\n# /abs/dir/\na.ts\nb.ts\n# src/\nz.py\n## x/\ny.py"
    )


def test_files_block_marks_modes_and_elides_after_twenty() -> None:
    block = format_files_block(["src/a.py"], ["src/b.py", "src/c.py"], read_set={"src/b.py"})
    assert block == "<files>\n# src/\na.py (Read)\nb.py (RW)\nc.py (Write)\n</files>"
    many = [f"f{i:02}.py" for i in range(25)]
    block = format_files_block(many, [])
    lines = block.splitlines()
    assert lines[0] == "<files>" and lines[-1] == "</files>"
    assert lines[-2] == "[…5 files elided…]"
    assert len([line for line in lines if line.endswith("(Read)")]) == 20
    assert format_files_block([], []) == ""


def test_upsert_replaces_old_blocks() -> None:
    old = (
        "Summary text.\n\n<read-files>\na.py\n</read-files>\n\n"
        "<modified-files>\nb.py\n</modified-files>\n\n<files>\nold (Read)\n</files>\n"
    )
    updated = upsert_file_operations(old, ["a.py"], ["b.py"], read_set=set())
    assert updated == "Summary text.\n\n<files>\na.py (Read)\nb.py (Write)\n</files>"
    assert upsert_file_operations(old, [], []) == "Summary text."
    assert upsert_file_operations("", ["a.py"], []) == "<files>\na.py (Read)\n</files>"
