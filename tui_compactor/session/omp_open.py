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

An empty or blank file is not refused: oh-my-pi writes a fresh header into it. And where a
line starts with a complete JSON value followed by anything else, oh-my-pi's lenient parser
keeps that value (an entry, when it is an object) and we skip the line, as pi does: such lines
get an ``omp-numbering`` warning (our ``#N`` after them is lower than oh-my-pi's entry index,
ids agree), and the value is checked as above.

``omp_open_problems`` turns what the reader noted while indexing (``Session._omp_faults``, the
diagnostics, the deep lines) into diagnostics naming file and line; ``flavor.session_issues``
adds them under oh-my-pi's rules, so ``lint --rules omp`` and the app's Issues view list the
same ones. This module decides; the reader only calls ``usage_fault`` and notes the lines.
"""

from __future__ import annotations

import json
import weakref
from typing import TYPE_CHECKING, Any

from tui_compactor.session.model import TITLE_SLOT_BYTES, Diagnostic, Severity

if TYPE_CHECKING:
    from tui_compactor.session.session import Session

__all__ = [
    "DEEP_REFUSED",
    "TITLE_SOURCES",
    "FaultLines",
    "OMP_HANGS",
    "OMP_HANGS_NAVIGATION",
    "OMP_HANGS_TREE",
    "OMP_NUMBERING",
    "OMP_REFUSES",
    "TITLE_SLOT",
    "content_fault",
    "content_fault_of",
    "missing_message_fault",
    "null_line_fault",
    "omp_open_problems",
    "title_slot_fault",
    "title_slot_note",
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
OMP_NUMBERING = "omp-numbering"
"""Diagnostic code: oh-my-pi reads an entry from the start of a line we skip, so its entry
numbering (and that entry's children) differ from ours after it."""
DEEP_REFUSED = 20_000
"""Nesting depth from which oh-my-pi's recursive scan of a record can overflow its stack
(Bun 1.4.5: every run from 30,000 levels, some from about 22,000)."""
MAX_LISTED = 20
"""Lines named one by one; the rest are counted in the last diagnostic."""
KEPT = 100
"""Faulty lines the reader keeps (a file can have one on every line: a usage without cost);
the rest are only counted."""


class FaultLines(list[tuple[int, int, "str | None", str]]):
    """(line, byte offset, entry id, why) of the lines oh-my-pi's loader fails on, in file
    order: the first ``KEPT`` kept, the rest counted in ``more``."""

    __slots__ = ("more", "_counted_line", "_counted")

    def __init__(self) -> None:
        super().__init__()
        self.more = 0
        self._counted_line = -1
        self._counted = 0
        """How many of ``more`` came from the last line counted (a torn last line is
        retracted when read again, whether it was kept or only counted)."""

    def append(self, fault: tuple[int, int, str | None, str]) -> None:
        if len(self) < KEPT:
            super().append(fault)
            return
        self.more += 1
        if fault[0] != self._counted_line:
            self._counted_line, self._counted = fault[0], 0
        self._counted += 1

    def retract(self, line: int) -> None:
        """Forget ``line`` (a torn last line read again)."""
        self[:] = [fault for fault in self if fault[0] != line]
        if line == self._counted_line:
            self.more -= self._counted
            self._counted_line, self._counted = -1, 0


_PREFIX = "oh-my-pi 18.2.3 would refuse to open this file: "

_CACHE: weakref.WeakKeyDictionary[Any, tuple[tuple[Any, ...], list[Diagnostic]]] = (
    weakref.WeakKeyDictionary()
)
"""The answer per session while it does not grow (the app's status line asks on each paint)."""


def _js_truthy(value: Any) -> bool:
    """JavaScript truthiness of a JSON value (objects and arrays are truthy even when empty)."""
    if isinstance(value, dict | list):
        return True
    return value not in (None, False, 0, "") and value == value


_SUMS_COST = " (oh-my-pi sums usage.cost.total of every usage when it loads)"
USAGE_WITHOUT_COST = "its usage has no cost" + _SUMS_COST
"""``usage_fault`` of a usage object without a ``cost`` (one string for every such line: a
generated or older session can have one on every assistant line)."""
USAGE_NOT_OBJECT = "its usage is not an object" + _SUMS_COST


def usage_fault(usage: Any) -> str | None:
    """Why oh-my-pi's loader throws on this usage, or None: it adds ``usage.cost.total`` of
    every usage that is set, so a usage without a ``cost`` object (or not an object) fails."""
    if isinstance(usage, dict):
        return USAGE_WITHOUT_COST if usage.get("cost") is None else None
    return USAGE_NOT_OBJECT if _js_truthy(usage) else None


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
    kind = _kind(content)
    return _REASONS.setdefault(  # one string per kind, however many lines have it
        kind,
        f"its content is {kind}, not a list (oh-my-pi walks the blocks of the assistant "
        "messages in the context it builds, and fails)",
    )


_REASONS: dict[str, str] = {}


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
    slot = session.title_slot
    key = (
        len(session.entries),
        len(session.diagnostics),
        len(session._omp_faults) + session._omp_faults.more,
        session.leaf or -1,
        title_slot_fault(slot) if slot is not None else None,  # rewritten in place
    )
    cached = _CACHE.get(session)
    if cached is not None and cached[0] == key:
        return list(cached[1])
    problems = _problems(session)
    _CACHE[session] = (key, problems)
    return list(problems)


def _problems(session: Session) -> list[Diagnostic]:
    path = str(session.path)
    recovered = _recovered(session)
    header = _header_fault(session, recovered)
    if header is not None:
        line, offset, why = header
        return [Diagnostic(Severity.WARNING, OMP_REFUSES, _PREFIX + why, path, line, offset)]
    header_line = session.header_line
    faults = [
        (line, offset, entry_id, why)
        for line, offset, entry_id, why in session._omp_faults
        if header_line is None or line > header_line
    ]
    odd = session._oddities
    for line, offset, depth in getattr(odd, "deep", ()) if odd is not None else ():
        if depth >= DEEP_REFUSED and (header_line is None or line > header_line):
            faults.append(
                (
                    line,
                    offset,
                    None,
                    f"the line is nested {depth:,} levels deep (oh-my-pi's recursive scan of "
                    "each record overflows its stack)",
                )
            )
    first = _first_value_line(session, recovered)
    numbering = []
    for line, offset, value in recovered:
        if line == first:
            continue
        fault = _record_fault(value)
        raw_id = value.get("id") if isinstance(value, dict) else None
        record_id = raw_id if isinstance(raw_id, str) else None
        if fault is not None:
            faults.append((line, offset, record_id, f"{fault}, read from the start of the line"))
        numbering.append(_numbering(path, line, offset, value, record_id))
    faults.extend(_context_faults(session))
    faults.sort(key=lambda fault: fault[0])
    unlisted = session._omp_faults.more
    problems = [
        Diagnostic(Severity.WARNING, OMP_REFUSES, _PREFIX + why, path, line, offset, entry_id)
        for line, offset, entry_id, why in faults[:MAX_LISTED]
    ]
    if len(faults) + unlisted > MAX_LISTED:
        rest = len(faults) + unlisted - MAX_LISTED
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
        return problems + numbering
    return numbering + _hangs(session)


def _numbering(path: str, line: int, offset: int, value: Any, entry_id: str | None) -> Diagnostic:
    what = f"entry {entry_id}" if entry_id else f"{_kind(value)} value"
    return Diagnostic(
        Severity.WARNING,
        OMP_NUMBERING,
        f"oh-my-pi 18.2.3 reads the {what} this line starts with and skips only the rest; we "
        "skip the whole line, as pi does: from here oh-my-pi counts one entry more than our #N, "
        "and an entry whose parent is on this line is a root here but a child there",
        path,
        line,
        offset,
        entry_id,
    )


def _record_fault(value: Any) -> str | None:
    """The loader's checks of one record (the reader makes them while indexing; these are
    for values only oh-my-pi reads: the start of a line we skip)."""
    if value is None:
        return null_line_fault()
    if not isinstance(value, dict):
        return None
    kind = value.get("type")
    if kind == "model_usage":
        return usage_fault(value.get("usage"))
    if kind != "message":
        return None
    message = value.get("message")
    if message is None:
        return missing_message_fault(str(value.get("id")))
    if isinstance(message, dict) and isinstance(message.get("role"), str):
        return message_usage_fault(message["role"], message)
    return None


MAX_RECOVERED_LINE = 16 * 1024 * 1024
"""Longer malformed lines are not re-read (oh-my-pi's answer on them is not predicted)."""


def _recovered(session: Session) -> list[tuple[int, int, Any]]:
    """(line, byte offset, value) of each line we skip as malformed that oh-my-pi's lenient
    parser still reads a value from: it starts with a complete JSON value, and something
    follows it (``{...} garbage``, ``{...},``, two objects on a line: the first one counts)."""
    from tui_compactor.session.flavor import MALFORMED_CODES

    lines = [
        (d.line, d.offset)
        for d in session.diagnostics
        if d.code in MALFORMED_CODES and d.line is not None and d.offset is not None
    ]
    if not lines:
        return []
    found = []
    try:
        with open(session.path, "rb") as handle:
            for line, offset in lines:
                handle.seek(offset)
                raw = handle.readline(MAX_RECOVERED_LINE + 1)
                if len(raw) > MAX_RECOVERED_LINE:
                    continue
                value = _leading_value(raw.rstrip(b"\n"))
                if value is not _NOTHING:
                    found.append((line, offset, value))
    except OSError:
        return []
    return found


_NOTHING = object()
_STRICT = json.JSONDecoder(parse_constant=lambda name: _refuse_constant(name))


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _leading_value(raw: bytes) -> Any:
    """The complete JSON value ``raw`` starts with when more follows it, else ``_NOTHING``."""
    text = raw.decode("utf-8", "replace").lstrip(" \t\r")
    if text.startswith("\ufeff"):
        return _NOTHING
    try:
        value, end = _STRICT.raw_decode(text)
    except (ValueError, RecursionError):
        return _NOTHING
    return value if text[end:].strip(" \t\r") else _NOTHING


def _first_value_line(session: Session, recovered: list[tuple[int, int, Any]]) -> int | None:
    lines = [line for line, _, _ in recovered[:1]]
    if session.header_line is not None:
        lines.append(session.header_line)
    if session.entries:
        lines.append(session.entries[0].line)
    lines += [d.line for d in session.diagnostics if d.code == "not-object" and d.line is not None]
    return min(lines) if lines else None


TITLE_SLOT = "title-slot"
"""Diagnostic code (info) of a ``type: "title"`` record on line 1 (``title_slot_note``)."""
TITLE_SOURCES = ("auto", "user")
"""The values oh-my-pi accepts in its title slot's ``source``."""


def title_slot_fault(slot: Any) -> str | None:
    """Why oh-my-pi 18.2.3 does not take line 1 (``slot``, a ``type: "title"`` record the
    reader set aside as the title slot) for its title slot, or None when it does.

    Its rule (``parseTitleSlotObject``): ``v`` is 1, ``title``, ``updatedAt`` and ``pad`` are
    strings, ``source`` is absent or "auto" / "user". A record that fails it is not peeled off:
    oh-my-pi reads it as the file's first record, which is not a session header.
    """
    if not isinstance(slot, dict) or slot.get("type") != "title":
        return "it is not a title record"
    version = slot.get("v")
    if isinstance(version, bool) or not isinstance(version, int | float) or version != 1:
        return f"its v is {_shown(slot, 'v')}, not 1"
    for field in ("title", "updatedAt", "pad"):
        if not isinstance(slot.get(field), str):
            return f"its {field} is {_shown(slot, field)}, not a string"
    if "source" in slot and slot["source"] not in TITLE_SOURCES:
        return f'its source is {_shown(slot, "source")}, not "auto" or "user"'
    return None


def title_slot_note(slot: Any, size: int) -> str:
    """What the reader's ``title-slot`` diagnostic says of line 1 (``slot``, ``size`` bytes
    with its newline): a slot oh-my-pi reads, or what oh-my-pi does with one it does not
    (held to oh-my-pi 18.2.3's verdicts: it refuses the file, "the session header is missing
    or malformed")."""
    fault = title_slot_fault(slot)
    if fault is not None:
        return (
            f"a title record oh-my-pi does not read as its title slot ({fault}): oh-my-pi "
            "refuses to open the file (it takes the record for a malformed session header)"
        )
    return "oh-my-pi title slot" + (
        "" if size == TITLE_SLOT_BYTES else f" ({size} bytes, expected {TITLE_SLOT_BYTES})"
    )


def _shown(record: dict[str, Any], field: str) -> str:
    """A field's value in a few words: missing, a short JSON scalar, or its kind."""
    if field not in record:
        return "missing"
    value = record[field]
    if value is None or isinstance(value, bool | int | float | str):
        shown = json.dumps(value, ensure_ascii=False)
        return shown if len(shown) <= 40 else shown[:39] + "…"
    return _kind(value)


def _header_fault(
    session: Session, recovered: list[tuple[int, int, Any]]
) -> tuple[int | None, int | None, str] | None:
    """oh-my-pi's header check: its first JSON value must be a header with a string id (and
    a cwd it can resolve); a line-1 title record it does not take for its title slot
    (``title_slot_fault``) is that first value."""
    if session.title_slot is not None:
        fault = title_slot_fault(session.title_slot)
        if fault is not None:
            return (
                1,
                0,
                f"line 1 is not a title slot it reads ({fault}), so its first JSON value is a "
                "title record, not a session header",
            )
    first = _first_value_line(session, recovered)
    if first is None:
        malformed = [d for d in session.diagnostics if d.code in ("invalid-json", "torn-tail")]
        if malformed:
            where = malformed[0]
            return (where.line, where.offset, "no line of it parses, so it has no session header")
        return None  # empty or blank: oh-my-pi writes a fresh header into it
    header: Any = _NOTHING
    offset: int | None = None
    for line, at, value in recovered[:1]:
        if line == first:
            header, offset = value, at
    if header is _NOTHING and first == session.header_line:
        header = session.header if isinstance(session.header, dict) else {}
    if header is _NOTHING:
        for diagnostic in session.diagnostics:
            if diagnostic.line == first and diagnostic.code == "not-object":
                kind = diagnostic.message.partition("(")[2].partition(")")[0] or "not an object"
                return (
                    first,
                    diagnostic.offset,
                    f"its first JSON value is {_a(kind)}, not a session header",
                )
        entry = session.entries[0] if session.entries else None
        byte = entry.offset if entry is not None and entry.line == first else None
        return (first, byte, "its first record is not a session header")
    if not isinstance(header, dict) or header.get("type") != "session":
        return (first, offset, f"its first JSON value is {_kind(header)}, not a session header")
    if not isinstance(header.get("id"), str):
        return (first, offset, "its session header has no string id")
    cwd = header.get("cwd")
    if _js_truthy(cwd) and not isinstance(cwd, str):
        return (
            first,
            offset,
            f"its session header's cwd is {_kind(cwd)}, not a path (oh-my-pi resolves it "
            "and fails)",
        )
    return None


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
    by_id = session._latest  # id -> index of its last definition, as oh-my-pi's map (read only)
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
