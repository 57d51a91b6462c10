"""Files oh-my-pi 18.2.3 refuses to open, or opens and then never returns on.

We open every file (and lose nothing); oh-my-pi does not. Measured with its own code
(``SessionManager.open``, the context it builds at the leaf, ``getTree`` and the
branch-summary walk of ``navigateTree``; ``tests/engine/test_omp_open_oracle.py`` holds the
verdicts to it):

* it refuses a file whose first JSON value (after the title slot; blank and unparseable lines
  skipped) is not a session header with a string ``id``, and a non-empty file with no parseable
  line at all ("the session header is missing or malformed");
* its loader throws on a ``null`` line (it reads ``.type`` of every value), on a ``message``
  entry without a message (it reads ``message.role`` while indexing), on a usage without
  ``cost`` (it sums ``usage.cost.total`` of every assistant message, ``task`` tool result and
  ``model_usage`` entry) and on a value nested so deeply that its recursive blob-reference scan
  overflows the stack (always from 30,000 levels; from about 20,000 in some runs);
* it opens a file whose ids are defined twice so that the tree loops: its tree (``/tree``)
  never returns; and one whose leaf's parents loop: navigating the tree from the leaf to an
  entry off that loop never returns (the branch-summary walk has no stop).

An empty or blank file is not refused: oh-my-pi writes a fresh header into it.

``omp_open_problems`` turns what the reader noted while indexing (``Session._omp_faults``, the
diagnostics, the deep lines) into diagnostics naming file and line; ``flavor.session_issues``
adds them under oh-my-pi's rules, so ``lint --rules omp`` and the app's Issues view list the
same ones. This module decides; the reader only calls ``usage_fault`` and notes the lines.
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any

from tui_compactor.session.model import Diagnostic, Severity

if TYPE_CHECKING:
    from tui_compactor.session.session import Session

__all__ = [
    "DEEP_REFUSED",
    "OMP_HANGS",
    "OMP_HANGS_NAVIGATION",
    "OMP_HANGS_TREE",
    "OMP_REFUSES",
    "content_fault",
    "content_fault_of",
    "missing_message_fault",
    "null_line_fault",
    "omp_open_problems",
    "usage_fault",
]

OMP_REFUSES = "omp-refuses"
"""Diagnostic code: oh-my-pi 18.2.3 would not open the file."""
OMP_HANGS_TREE = "omp-hangs-tree"
"""Diagnostic code: oh-my-pi 18.2.3 opens the file but its tree never returns."""
OMP_HANGS_NAVIGATION = "omp-hangs-navigation"
"""Diagnostic code: oh-my-pi 18.2.3 opens the file but a navigation from its leaf never
returns."""
OMP_HANGS = frozenset({OMP_HANGS_TREE, OMP_HANGS_NAVIGATION})
DEEP_REFUSED = 20_000
"""Nesting depth from which oh-my-pi's recursive scan of a record can overflow its stack
(Bun 1.4.5: every run from 30,000 levels, some from about 22,000)."""
MAX_LISTED = 20
"""Lines named one by one; the rest are counted in the last diagnostic."""

_PREFIX = "oh-my-pi 18.2.3 would refuse to open this file: "

_CACHE: weakref.WeakKeyDictionary[Any, tuple[tuple[int, ...], list[Diagnostic]]] = (
    weakref.WeakKeyDictionary()
)
"""The answer per session while it does not grow (the app's status line asks on each paint)."""


def _js_truthy(value: Any) -> bool:
    """JavaScript truthiness of a JSON value (objects and arrays are truthy even when empty)."""
    if isinstance(value, dict | list):
        return True
    return value not in (None, False, 0, "") and value == value


def usage_fault(usage: Any) -> str | None:
    """Why oh-my-pi's loader throws on this usage, or None: it adds ``usage.cost.total`` of
    every usage that is set, so a usage without a ``cost`` object (or not an object) fails."""
    if not _js_truthy(usage):
        return None
    cost = usage.get("cost") if isinstance(usage, dict) else None
    if cost is not None:
        return None
    what = "has no cost" if isinstance(usage, dict) else "is not an object"
    return f"its usage {what} (oh-my-pi sums usage.cost.total of every usage when it loads)"


def message_usage_fault(role: str, message: dict[str, Any]) -> str | None:
    """``usage_fault`` of a message whose usage oh-my-pi sums: an assistant message's, a
    ``task`` tool result's ``details.usage``."""
    if role == "assistant":
        return usage_fault(message.get("usage"))
    if role == "toolResult" and message.get("toolName") == "task":
        details = message.get("details")
        usage = details.get("usage") if isinstance(details, dict) else None
        return usage_fault(usage) if isinstance(usage, dict | list) else None
    return None


def _kind(value: Any) -> str:
    if value is None:
        return "null or missing"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    return "an object" if isinstance(value, dict) else type(value).__name__


def content_fault(content: Any) -> str | None:
    """Why oh-my-pi fails on an assistant message with this content when the message is in
    the context it builds, or None: it walks the blocks of every such message (a string is
    walked too), reading each block's type."""
    if isinstance(content, str):
        return None
    if isinstance(content, list) and all(block is not None for block in content):
        return None
    return content_fault_of(content)


def content_fault_of(content: Any) -> str:
    """``content_fault`` of content known to fail (the reader's fast path checks the types)."""
    if isinstance(content, list):
        return (
            "a block of its content is null (oh-my-pi reads the type of every block of the "
            "assistant messages in the context it builds, and fails)"
        )
    return (
        f"its content is {_kind(content)}, not a list (oh-my-pi walks the blocks of the "
        "assistant messages in the context it builds, and fails)"
    )


def null_line_fault() -> str:
    return "the line is `null` (oh-my-pi reads the type of every line and fails on it)"


def missing_message_fault(entry_id: str) -> str:
    return (
        f"message entry {entry_id} has no message (oh-my-pi reads its role while indexing "
        "and fails)"
    )


def omp_open_problems(session: Session) -> list[Diagnostic]:
    """Why oh-my-pi 18.2.3 would refuse this file or hang on it, one diagnostic per line
    (none for a preview of the file's tail: the verdict needs the whole file)."""
    if session.preview:
        return []
    key = (
        len(session.entries),
        len(session.diagnostics),
        len(session._omp_faults),
        session.leaf or -1,
    )
    cached = _CACHE.get(session)
    if cached is not None and cached[0] == key:
        return list(cached[1])
    problems = _problems(session)
    _CACHE[session] = (key, problems)
    return list(problems)


def _problems(session: Session) -> list[Diagnostic]:
    path = str(session.path)
    header = _header_fault(session)
    if header is not None:
        line, offset, why = header
        return [Diagnostic(Severity.WARNING, OMP_REFUSES, _PREFIX + why, path, line, offset)]
    faults = [
        (line, offset, entry_id, why)
        for line, offset, entry_id, why in session._omp_faults
        if session.header_line is None or line > session.header_line
    ]
    odd = session._oddities
    for line, offset, depth in getattr(odd, "deep", ()) if odd is not None else ():
        if depth >= DEEP_REFUSED and (session.header_line is None or line > session.header_line):
            faults.append(
                (
                    line,
                    offset,
                    None,
                    f"the line is nested {depth:,} levels deep (oh-my-pi's recursive scan of "
                    "each record overflows its stack)",
                )
            )
    faults.extend(_context_faults(session))
    faults.sort(key=lambda fault: fault[0])
    problems = [
        Diagnostic(Severity.WARNING, OMP_REFUSES, _PREFIX + why, path, line, offset, entry_id)
        for line, offset, entry_id, why in faults[:MAX_LISTED]
    ]
    if len(faults) > MAX_LISTED:
        rest = len(faults) - MAX_LISTED
        problems[-1] = Diagnostic(
            Severity.WARNING,
            OMP_REFUSES,
            problems[-1].message + f"; and {rest} more such lines",
            path,
            problems[-1].line,
            problems[-1].offset,
            problems[-1].entry_id,
        )
    if problems:
        return problems
    return _hangs(session)


def _header_fault(session: Session) -> tuple[int | None, int | None, str] | None:
    """oh-my-pi's header check: its first JSON value must be a header with a string id."""
    header_line = session.header_line
    for diagnostic in session.diagnostics:
        if diagnostic.code == "not-object" and (
            header_line is None or _before(diagnostic, header_line)
        ):
            kind = diagnostic.message.partition("(")[2].partition(")")[0] or "not an object"
            return (
                diagnostic.line,
                diagnostic.offset,
                f"its first JSON value is {_a(kind)}, not a session header",
            )
        if diagnostic.code == "no-header":
            return (diagnostic.line, diagnostic.offset, "its first record is not a session header")
    if header_line is not None:
        header = session.header if isinstance(session.header, dict) else {}
        if not isinstance(header.get("id"), str):
            return (header_line, None, "its session header has no string id")
        cwd = header.get("cwd")
        if _js_truthy(cwd) and not isinstance(cwd, str):
            return (
                header_line,
                None,
                f"its session header's cwd is {_kind(cwd)}, not a path (oh-my-pi resolves it "
                "and fails)",
            )
        return None
    if session.entries:
        return (None, None, "it has no session header")
    malformed = [d for d in session.diagnostics if d.code in ("invalid-json", "torn-tail")]
    if malformed:
        first = malformed[0]
        return (first.line, first.offset, "no line of it parses, so it has no session header")
    return None  # empty or blank: oh-my-pi writes a fresh header into it


def _context_faults(session: Session) -> list[tuple[int, int, str | None, str]]:
    """The assistant messages noted by the reader (``content_fault``) that are in oh-my-pi's
    context at the leaf (our ``--rules omp`` context, held to oh-my-pi's)."""
    noted = {
        index: why
        for index, why in session._omp_context_faults.items()
        if index < len(session.entries)
    }
    if not noted or session.leaf is None:
        return []
    from tui_compactor.engine.context import build_context

    context = build_context(session, session.leaf, rules="omp")
    faults: list[tuple[int, int, str | None, str]] = []
    for item in context.items:
        why = noted.get(item.entry_index) if item.role == "assistant" else None
        if why is not None:
            entry = session.entries[item.entry_index]
            faults.append(
                (entry.line, entry.offset, entry.id, f"assistant message {entry.id}: {why}")
            )
    return faults


def _before(diagnostic: Diagnostic, line: int) -> bool:
    return diagnostic.line is not None and diagnostic.line < line


def _a(kind: str) -> str:
    return kind if kind in ("null",) else f"an {kind}" if kind[:1] in "aeiou" else f"a {kind}"


# ---------------------------------------------------------------------- hangs


def _hangs(session: Session) -> list[Diagnostic]:
    """oh-my-pi finds an entry by id through a map (the last definition wins) and walks
    parents without a visited set in two places: its tree and the branch-summary walk."""
    entries = session.entries
    if not entries:
        return []
    path = str(session.path)
    by_id: dict[str, int] = {}
    for entry in entries:
        by_id[entry.id] = entry.index
    problems = []
    loop = _tree_loop(session, by_id) if session.ambiguous_ids else None
    if loop is not None:
        entry = entries[loop]
        problems.append(
            Diagnostic(
                Severity.WARNING,
                OMP_HANGS_TREE,
                "oh-my-pi 18.2.3 opens this file, but its tree (/tree) never returns: id "
                f"{entry.id} is defined more than once and its last definition is reached again "
                "below itself, so oh-my-pi's tree loops",
                path,
                entry.line,
                entry.offset,
                entry.id,
            )
        )
    target = _navigation_loop(session, by_id)
    if target is not None:
        entry = entries[target]
        leaf = entries[session.leaf] if session.leaf is not None else entry
        problems.append(
            Diagnostic(
                Severity.WARNING,
                OMP_HANGS_NAVIGATION,
                "oh-my-pi 18.2.3 opens this file, but navigating its tree from the leaf "
                f"(line {leaf.line}) to an entry off the leaf's parent chain (here line "
                f"{entry.line}) never returns: the leaf's parents loop, and the walk that "
                "collects the branch to summarize has no stop",
                path,
                leaf.line,
                leaf.offset,
                leaf.id,
            )
        )
    return problems


def _tree_loop(session: Session, by_id: dict[str, int]) -> int | None:
    """An entry whose tree node is reached again below itself, from a root, as oh-my-pi's
    ``getTree`` builds it (one node per id, each entry adds its id's node under its parent's
    node), or None."""
    children: dict[int, list[int]] = {}
    roots: list[int] = []
    for entry in session.entries:
        node = by_id[entry.id]
        parent_id = entry.parent_id
        parent = by_id.get(parent_id) if parent_id is not None and parent_id != entry.id else None
        if parent is None:
            roots.append(node)
        else:
            children.setdefault(parent, []).append(node)
    state: dict[int, int] = {}  # 1: on the current walk, 2: done
    for root in roots:
        if root in state:
            continue
        stack: list[tuple[int, int]] = [(root, 0)]
        state[root] = 1
        while stack:
            node, position = stack[-1]
            kids = children.get(node, ())
            if position < len(kids):
                stack[-1] = (node, position + 1)
                child = kids[position]
                seen = state.get(child)
                if seen == 1:
                    return child
                if seen is None:
                    state[child] = 1
                    stack.append((child, 0))
            else:
                state[node] = 2
                stack.pop()
    return None


def _navigation_loop(session: Session, by_id: dict[str, int]) -> int | None:
    """An entry whose own parent chain never meets the leaf's, when the leaf's chain loops
    (``collectEntriesForBranchSummary`` then walks the loop forever), or None."""
    leaf = session.leaf
    if leaf is None:
        return None
    entries = session.entries
    chain: dict[int, None] = {}
    node: int | None = by_id.get(entries[leaf].id)
    while node is not None and node not in chain:
        chain[node] = None
        parent_id = entries[node].parent_id
        node = by_id.get(parent_id) if parent_id is not None else None
    if node is None:
        return None  # the chain ends at a root: every walk stops
    meets: dict[int, bool] = {}
    for start in sorted(set(by_id.values())):  # navigation targets are ids
        walked: dict[int, None] = {}
        node = start
        result = False
        while node is not None:
            if node in chain:
                result = True
                break
            if node in meets:
                result = meets[node]
                break
            if node in walked:
                break
            walked[node] = None
            parent_id = entries[node].parent_id
            node = by_id.get(parent_id) if parent_id is not None else None
        for visited in walked:
            meets[visited] = result
        if not result:
            return start
    return None
