"""``tui-compactor tree SESSION [--json] [--filter MODE] [--leaf ID] [--fold ID ...]``.

Prints the outline of the session tree: linear runs flat; at a branch point the side branches
hang below it on ``├─`` / ``└─`` glyphs (with ``│`` rails while more side branches follow)
and the main line continues at the branch point's indent. A one-line legend explains the
markers: ``*`` on the active path, ``◆`` the leaf, labels in brackets, folded counts. A file
with several roots prints each further tree after a ``── root 2 of 2 ──`` line. Each row
ends with a one-line preview of the entry (``workbench.preview``: the app's words). All session
text is sanitized before it reaches the terminal. ``--json`` prints one object per row instead.
Exit status 2 for a refused file or an unknown ``--leaf``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Iterator
from typing import Any

from tui_compactor.commands import engine_args
from tui_compactor.commands import session_args as common
from tui_compactor.workbench.preview import entry_preview

FILTERS = ("default", "no-tools", "user-only", "labeled-only", "all")

ACTIVE_MARK = "*"
"""Marks a row on the path from the root to the leaf."""
LEAF_MARK = "◆"
"""Marks the leaf (where the agent resumes); it is on the active path too."""
BRANCH_GLYPH = "├─ "
LAST_BRANCH_GLYPH = "└─ "
RAIL = "│  "
ROOT_RULE = "──"
"""Brackets the line that separates the trees of a file with several roots."""
NO_RAIL = "   "
LEGEND = (
    f"legend: {ACTIVE_MARK} active path  {LEAF_MARK} leaf  {BRANCH_GLYPH.strip()} "
    f"{LAST_BRANCH_GLYPH.strip()} side branch (the main line continues below its branch "
    "point)  [label]  (+N folded)"
)
"""The one-line key printed above the rows."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Register the command's switches."""
    parser.add_argument("session", metavar="SESSION", help="session file (.jsonl)")
    parser.add_argument("--json", action="store_true", help="print JSON rows instead of text")
    parser.add_argument(
        "--filter",
        choices=FILTERS,
        default="default",
        help="which entries to show, as in pi's /tree (default hides bookkeeping entries)",
    )
    parser.add_argument("--leaf", metavar="ID", help="entry id (or #INDEX) to treat as the leaf")
    parser.add_argument(
        "--fold", metavar="ID", action="append", default=[], help="fold this entry (repeatable)"
    )
    parser.add_argument(
        "--width", type=int, default=72, metavar="N", help="preview length in characters"
    )
    engine_args.add_rules(
        parser,
        "whose flag marks a compaction written by an extension (pi: fromHook, oh-my-pi: "
        "fromExtension); default: as the other commands choose (config, variable, the session)",
    )
    engine_args.add_config(parser)


def run(args: argparse.Namespace) -> int:
    """Load, lay out and print the outline."""
    from tui_compactor.session.model import Verdict
    from tui_compactor.session.outline import OutlineFilter, OutlineWalk
    from tui_compactor.session.reader import load_session

    try:
        settings = engine_args.settings_from_args(args)
    except engine_args.CommandError as error:
        return engine_args.fail(error)
    session = load_session(args.session)
    try:
        if session.verdict is Verdict.REFUSE:
            return common.refuse(session, args.json, {"verdict": session.verdict.value, "rows": []})
        try:
            leaf = common.resolve_entry(session, args.leaf)
            folded = {common.resolve_entry(session, ref) for ref in args.fold}
        except ValueError as error:
            sys.stderr.write(f"tui-compactor: {common.safe(str(error))}\n")
            return common.EXIT_USAGE
        # The rows are printed as they are laid out, never held all at once (a 200,000-deep
        # chain is 200,000 rows).
        rows = OutlineWalk(
            session, leaf=leaf, folded={i for i in folded if i is not None},
            view=OutlineFilter(args.filter),
        )  # fmt: skip
        if args.json:
            from tui_compactor.textsafe import JsonText, json_list_chunks, write_json_for_terminal

            rows_json = (_row_json(session, row) for row in rows)
            write_json_for_terminal(
                sys.stdout,
                {
                    "verdict": session.verdict.value,
                    "filter": args.filter,
                    "rows": JsonText(json_list_chunks(rows_json, ensure_ascii=True)),
                },
                ensure_ascii=True,
            )
        else:
            rules = settings.for_session(session).rules  # only the text rows name the author
            _print_text(session, rows, max(10, args.width), rules)
        return common.EXIT_OK
    finally:
        session.close()


def _row_json(session: Any, row: Any) -> dict[str, Any]:
    entry = session.entries[row.index]
    return {
        "index": row.index,
        "id": entry.id,
        "parentId": entry.parent_id,
        "type": entry.type,
        "role": entry.role,
        "indent": row.indent,
        "branchPoint": row.is_branch_point,
        "branchStart": row.branch_start,
        "lastBranch": row.last_branch,
        "active": row.on_active_path,
        "leaf": row.is_leaf,
        "tip": row.is_tip,
        "childCount": row.child_count,
        "folded": row.folded,
        "hiddenCount": row.hidden_count,
        "label": session.label_of(row.index),
        "missingParent": row.missing_parent,
        "line": entry.line,
    }


def with_branch_prefixes(rows: Iterable[Any]) -> Iterator[tuple[Any, str]]:
    """Each row with its glyph prefix: rails for enclosing side branches, then ``├─`` / ``└─``
    on the first row of a side branch, or a rail / blank on the rows that continue it."""
    open_rails: list[bool] = []  # open_rails[k]: more side branches follow at level k + 1
    for row in rows:
        level = row.indent
        if level == 0:
            open_rails.clear()
            yield row, ""
            continue
        del open_rails[level:]
        while len(open_rails) < level:
            open_rails.append(False)  # defensive: a level entered without a branch start
        outer = "".join(RAIL if rail else NO_RAIL for rail in open_rails[: level - 1])
        if row.branch_start:
            open_rails[level - 1] = not row.last_branch
            glyph = LAST_BRANCH_GLYPH if row.last_branch else BRANCH_GLYPH
        else:
            glyph = RAIL if open_rails[level - 1] else NO_RAIL
        yield row, outer + glyph


def _print_text(session: Any, rows: Any, width: int, rules: str) -> None:
    safe = common.safe
    out = sys.stdout
    if session.title_slot and session.title_slot.get("title"):
        out.write(f"title: {safe(session.title_slot.get('title'), 100)}\n")
    if session.name:
        out.write(f"name: {safe(session.name, 100)}\n")
    # The walk lays out each shown tree from one of its visible roots (a root, an entry whose
    # parent is missing, or the shown children of a hidden root), so those rows start the trees.
    roots = rows.root_count
    first_rows = set(rows.visible_roots)
    tree_number = 1
    for position, (row, prefix) in enumerate(with_branch_prefixes(rows)):
        if not position:
            out.write(LEGEND + "\n")
        elif row.index in first_rows:
            tree_number += 1
            out.write(
                f"{ROOT_RULE} root {tree_number} of {roots}: "
                f"a separate tree, not connected to the rows above {ROOT_RULE}\n"
            )
        entry = session.entries[row.index]
        kind = entry.role if entry.type == "message" and entry.role else entry.type or "?"
        if row.is_leaf:
            mark = LEAF_MARK
        elif row.on_active_path:
            mark = ACTIVE_MARK
        else:
            mark = " "
        parts = [mark, " ", prefix]  # marker gutter first, so the glyphs line up
        if row.missing_parent is not None:
            parts.append(f"(missing {safe(row.missing_parent, 20)}) ")
        parts.append(f"{safe(entry.id, 24)} {safe(kind, 24)}")
        label = session.label_of(row.index)
        if label:
            parts.append(f" [{safe(label, 40)}]")
        preview = safe(entry_preview(session.entries[row.index], rules), width)
        if preview:
            parts.append(f": {preview}")
        if row.folded and row.hidden_count:
            parts.append(f"  (+{row.hidden_count} folded)")
        out.write("".join(parts) + "\n")
