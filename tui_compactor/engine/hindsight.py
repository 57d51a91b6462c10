"""Hindsight audit of the compactions already in a file, and the compaction timeline.

For each compaction (on any branch):

* its **summarized region**: the path before its ``firstKeptEntryId``, back to where the
  previous compaction's context began (pi rules: the previous compaction's own kept entry;
  oh-my-pi: right after the previous compaction);
* its **kept window**: from ``firstKeptEntryId`` up to the compaction;
* its **life**: every entry after it, on every branch, up to the next compaction (while its
  summary was what the model saw).

A fact (an anchor of ``engine.anchors``) is *used later* when the user's or the agent's words or
the agent's tool calls in the life carry it; it is *lost* when it came from the summarized
region and is in neither the summary nor the kept window. The score is the share of the facts
used later that the compaction carried over (1.0 when none was used). Files the agent read in
the region and read again during the life are re-reads: a symptom of lost context.

Facts are taken from what the user and the agent said and did (their text, tool calls and
commands), not from tool outputs: that keeps the audit to one pass over the conversation
proper, and an output the agent never mentioned is not something it could have carried.
"""

from __future__ import annotations

import gc
import operator
import os
import pickle
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from tui_compactor.engine.anchors import (
    AnchorKind,
    Haystack,
    Words,
    anchor_present,
    call_arguments,
    defined_names_each,
    message_text,
    message_uses,
    message_words,
)
from tui_compactor.engine.messages import MESSAGE_BEARING_TYPES, message_from_entry
from tui_compactor.engine.tokens import TokenCache, TokenCounter
from tui_compactor.session import reader
from tui_compactor.session.migrate import CURRENT_VERSION
from tui_compactor.session.session import gc_paused

__all__ = [
    "HINDSIGHT_KINDS",
    "LostFact",
    "ReRead",
    "CompactionAudit",
    "EntryFacts",
    "TimelineRow",
    "audit_compactions",
    "compaction_timeline",
]

HINDSIGHT_KINDS: frozenset[AnchorKind] = frozenset(
    {"path", "identifier", "error", "command", "url"}
)
"""Anchor kinds the hindsight audit follows (tool-call ids, numbers and requests are not facts
a later turn reuses by name)."""

NO_FORK_ENV = "TUI_COMPACTOR_NO_FORK"
"""Set (not ``0``): ``audit`` and ``timeline`` never fork a copy (``FactsAhead.worth_it``)."""

_USE_ROLES = frozenset({"user", "assistant", "custom", "bashExecution"})


@dataclass(frozen=True, slots=True)
class LostFact:
    """A fact the session needed after a compaction that the compaction did not carry."""

    kind: AnchorKind
    text: str
    lost_at: int
    """Entry index in the summarized region where it last occurred."""
    needed_at: int
    """Entry index after the compaction where it was first used."""


@dataclass(frozen=True, slots=True)
class ReRead:
    """A file read in the summarized region and read again after the compaction."""

    path: str
    read_at: int
    reread_at: int


@dataclass(slots=True)
class CompactionAudit:
    """The hindsight audit of one compaction entry."""

    entry_index: int
    region: list[int] = field(default_factory=list)
    """Entry indices of the summarized region (message-bearing entries)."""
    kept: list[int] = field(default_factory=list)
    life: list[int] = field(default_factory=list)
    used: int = 0
    """Facts from the region used later."""
    lost: list[LostFact] = field(default_factory=list)
    rereads: list[ReRead] = field(default_factory=list)
    warning: str | None = None

    @property
    def score(self) -> float:
        """Share of the facts used later that the compaction carried (1.0 when none was)."""
        return 1.0 if not self.used else (self.used - len(self.lost)) / self.used

    def to_json(self, session: Any) -> dict[str, Any]:
        """One ``audit --json`` row."""
        id_of = session.id_of

        def ident(index: int) -> str:
            return str(id_of(index))

        return {
            "entryIndex": self.entry_index,
            "entryId": ident(self.entry_index),
            "score": round(self.score, 3),
            "used": self.used,
            "lostCount": len(self.lost),
            "regionEntries": len(self.region),
            "keptEntries": len(self.kept),
            "lifeEntries": len(self.life),
            "warning": self.warning,
            "lost": [
                {
                    "kind": fact.kind,
                    "text": fact.text,
                    "lostAt": fact.lost_at,
                    "lostAtId": ident(fact.lost_at),
                    "neededAt": fact.needed_at,
                    "neededAtId": ident(fact.needed_at),
                }
                for fact in self.lost
            ],
            "rereads": [
                {
                    "path": item.path,
                    "readAt": item.read_at,
                    "readAtId": ident(item.read_at),
                    "rereadAt": item.reread_at,
                    "rereadAtId": ident(item.reread_at),
                }
                for item in self.rereads
            ],
        }


_READ_CHUNK = 512
"""``EntryFacts.read`` reads and drops this many records at a time."""
_BATCH = 256
"""``EntryFacts.take`` notes the facts of this many messages at a time (their defined names
found in one pass over their texts, ``defined_names_each``)."""

Uses = tuple[tuple[AnchorKind, str], ...]
Facts = tuple[Uses, tuple[str, ...]]
_NO_FACTS: Facts = ((), ())
_TEXT = operator.itemgetter(0)
"""The text of a message's ``Words``."""


class EntryFacts:
    """What the user and the agent did at each entry: the facts they used (tool outputs left
    out; each once, in order) and the files the agent asked to read.

    Worked out once per entry. A caller that audits a whole file fills it while the file
    loads (``load_session(path, on_record=facts.take)``), so each record is decoded once;
    otherwise an entry's record is read the first time an audit asks about it
    (``Entry.data_once``: not through the session's record cache). Records are dropped once
    their facts are taken (while loading, up to ``_BATCH`` messages wait to be read together);
    equal facts share one tuple.
    """

    def __init__(self) -> None:
        self._facts: dict[int, Facts] = {}
        self._shared: dict[AnchorKind, dict[str, tuple[AnchorKind, str]]] = {
            kind: {} for kind in HINDSIGHT_KINDS
        }
        """Per kind, each text met -> its key (the kind and the text stripped)."""
        self._keys: dict[tuple[AnchorKind, str], tuple[AnchorKind, str]] = {}
        self._waiting: list[tuple[int, str | None, dict[str, Any] | None]] = []
        """Messages ``take`` has not read yet: (index, role, message)."""

    def take(
        self,
        index: int,
        kind: str,
        role: str | None,
        offset: int,
        record: dict[str, Any],
        raw: bytes | memoryview = b"",
    ) -> None:
        """Note the facts of entry ``index`` (of type ``kind`` and ``role``) from its parsed
        ``record`` (the load hook, ``reader.RecordHook``; ``offset`` and the line's bytes
        ``raw`` are not needed). A message waits until ``_BATCH`` of them do."""
        if kind == "message":  # _has_uses and _message_of, inline: this runs for every entry
            if role not in _USE_ROLES:
                self._facts[index] = _NO_FACTS  # what ``of`` gives it, at once
                return
            message = record.get("message")
            if not isinstance(message, dict):
                message = None
        elif kind == "custom_message":
            message = _message_of(kind, record)
        else:
            self._facts[index] = _NO_FACTS
            return
        waiting = self._waiting
        waiting.append((index, role, message))
        if len(waiting) >= _BATCH:
            self._settle()

    def _settle(self) -> None:
        """Read the messages ``take`` left waiting."""
        waiting = self._waiting
        if waiting:
            self._waiting = []
            indices, roles, messages = zip(*waiting, strict=True)
            self._facts.update(zip(indices, self._learn_all(roles, messages), strict=True))

    def known(self, index: int) -> Facts | None:
        """The facts of entry ``index`` if they are known already (no reading), else None."""
        self._settle()
        return self._facts.get(index)

    def of(self, entry: Any) -> Facts:
        """``(uses, reads)`` of ``entry``."""
        self._settle()
        found = self._facts.get(entry.index)
        if found is None:
            found = _NO_FACTS
            if _has_uses(entry.type, entry.role):
                found = self._learn(entry.role, _message_of(entry.type, entry.data_once()))
            self._facts[entry.index] = found
        return found

    def lookup(
        self, session: Any, *groups: list[int], types: Sequence[str] | None = None
    ) -> Callable[[int], Facts]:
        """The facts of the entries whose indices are in ``groups`` (entries of ``session``),
        each worked out if not known yet (``read``), as a look-up by index."""
        self._settle()
        if len(self._facts) < len(session.entries):  # not every entry noted while loading
            self.read(session, sorted({index for group in groups for index in group}), types)
        return self._facts.__getitem__

    def read(
        self,
        session: Any,
        indices: Sequence[int] | None = None,
        types: Sequence[str] | None = None,
    ) -> None:
        """Work out the facts of those of ``indices`` (in file order; every entry when None)
        not known yet: the records of the ones that can carry uses are read a run of lines
        at a time (``Session.records_once``: no ``Entry`` built, ``_READ_CHUNK`` records
        held at once), which is what ``of`` reads one by one. ``types``: the session's entry
        types when the caller has them."""
        self._settle()
        facts = self._facts
        if len(facts) >= len(session.entries):  # every entry known (noted while loading)
            return
        if types is None:
            types = session.entry_types()
        roles = session.entry_roles()
        wanted: list[int] = []
        for index in range(len(types)) if indices is None else indices:
            if index not in facts:
                if _has_uses(types[index], roles[index]):
                    wanted.append(index)
                else:
                    facts[index] = _NO_FACTS
        for start in range(0, len(wanted), _READ_CHUNK):
            chunk = wanted[start : start + _READ_CHUNK]
            messages = [
                _message_of(types[index], record)
                for index, record in zip(chunk, session.records_once(chunk), strict=True)
            ]
            learnt = self._learn_all([roles[index] for index in chunk], messages)
            facts.update(zip(chunk, learnt, strict=True))

    def _learn_all(
        self, roles: Sequence[str | None], messages: Sequence[dict[str, Any] | None]
    ) -> list[Facts]:
        """``_learn`` of each message (of the role at the same place), their defined names
        found at once (``defined_names_each``)."""
        words = list(map(message_words, messages))
        defined = defined_names_each(list(map(_TEXT, words)))
        return list(map(self._learn, roles, messages, words, defined))

    def _learn(
        self,
        role: str | None,
        message: dict[str, Any] | None,
        words: Words | None = None,
        defined: list[str] | None = None,
    ) -> Facts:
        tables = self._shared
        uses: dict[tuple[AnchorKind, str], None] = {}
        read: list[str] = []
        reads = read if role == "assistant" else None
        for kind, texts in message_uses(message, reads, words=words, defined=defined):
            table = tables.get(kind)
            if table is None:  # not a kind hindsight follows
                continue
            for text in texts:
                key = table.get(text)  # seen before: its shared key, stripped
                if key is None:
                    key = table[text] = self._key(kind, text)
                uses[key] = None
        if uses or read:
            return tuple(uses), tuple(read)
        return _NO_FACTS

    def _key(self, kind: AnchorKind, text: str) -> tuple[AnchorKind, str]:
        """The one key of the fact ``text`` (stripped) of ``kind``."""
        key = (kind, text.strip())
        return self._keys.setdefault(key, key)


class FactsAhead:
    """The facts of a session file's messages noted by a forked copy of this process while
    this one loads the file: the whole ``audit`` command then takes about as long as the
    load, not the load and the reading of every message after it (on two free cores).

    ``start(path)`` before loading, when ``worth_it()`` (None when this cannot be done
    exactly or safely: not a regular file, not a version-3 file, which is read without
    migration, a first line over the loader's ``MAX_LINE_BYTES``, no ``fork``, other
    threads running); load with ``on_record=ahead.note``; then ``finish(facts, session)``.
    The copy reads each line that can be such an entry, parses it and notes its facts with
    the code ``EntryFacts`` uses, keyed by the line's offset, with a hash of the line's
    bytes; lines over ``MAX_LINE_BYTES`` (which the loader skips) it passes over without
    holding them. ``note`` keeps the same hash of each such line as the load read it. An
    entry takes the noted facts only when the two hashes match: the copy parsed the very
    bytes the load did (the file may have been rewritten in between, even in place with the
    same ids and sizes); any other entry (or all of them, if the copy failed or the file
    turned out not to be read as version 3) is read here instead.

    The hash is Python's ``hash`` of the bytes (SipHash, keyed per process; the copy is a
    fork of this process, so both key it alike): two different lines agree by accident
    once in 2**64, and it costs the load next to nothing.
    """

    def __init__(self, pid: int, pipe: int) -> None:
        self._pid = pid
        self._pipe = pipe
        self._read: dict[int, tuple[int, int]] = {}
        """The offset and the hash of each line the load read that can carry uses, by the
        index of its entry."""

    def note(
        self,
        index: int,
        kind: str,
        role: str | None,
        offset: int,
        record: dict[str, Any],
        raw: bytes | memoryview,
    ) -> None:
        """The load hook (``reader.RecordHook``): keep the offset and the hash of the bytes
        of entry ``index``'s line if it can carry uses (``record`` is not needed; a view's
        hash is the hash of its bytes)."""
        if _has_uses(kind, role):
            self._read[index] = (offset, hash(raw))

    @staticmethod
    def worth_it() -> bool:
        """Whether a copy would run beside this process rather than take turns with it: a
        second core and, over the last minute, fewer processes wanting a core than there
        are cores. (On a busy machine the copy only adds the work of reading the lines.)
        Never when ``TUI_COMPACTOR_NO_FORK`` is set (to anything but ``0``)."""
        if os.environ.get(NO_FORK_ENV, "") not in ("", "0"):
            return False
        cores = os.cpu_count() or 1
        try:
            busy = os.getloadavg()[0]
        except (AttributeError, OSError):
            return False
        return cores > 1 and busy < cores

    @classmethod
    def start(cls, path: Any) -> FactsAhead | None:
        """Fork the copy that notes the facts of ``path``'s messages."""
        import threading

        if not hasattr(os, "fork") or threading.active_count() > 1:
            return None
        try:
            if not os.path.isfile(path):
                return None
            with open(path, "rb") as file:
                first = file.readline(reader.MAX_LINE_BYTES + 1)
            if len(first) > reader.MAX_LINE_BYTES and not first.endswith(b"\n"):
                return None  # a header the loader skips: leave the file to it
            header = orjson.loads(first)
        except (OSError, ValueError):
            return None
        if not isinstance(header, dict) or header.get("version") != CURRENT_VERSION:
            return None
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:  # the copy: note, send, leave without any clean-up
            status = 1
            try:
                os.close(read_end)
                gc.disable()  # facts built, parsed records freed, no cycles; it never returns
                sent = pickle.dumps(_note_lines(path), pickle.HIGHEST_PROTOCOL)
                with os.fdopen(write_end, "wb") as pipe:
                    pipe.write(sent)
                status = 0
            finally:
                os._exit(status)
        os.close(write_end)
        return cls(pid, read_end)

    def cancel(self) -> None:
        """Stop the copy (the file could not be loaded after all)."""
        import signal

        os.close(self._pipe)
        os.kill(self._pid, signal.SIGKILL)
        os.waitpid(self._pid, 0)

    def finish(self, facts: EntryFacts, session: Any) -> None:
        """Note in ``facts`` what the copy sent for ``session`` (loaded from the same file),
        and read here what it did not, or noted from a line that is no longer there."""
        with os.fdopen(self._pipe, "rb") as pipe:
            received = pipe.read()
        _, status = os.waitpid(self._pid, 0)
        with gc_paused():  # tens of thousands of tuples unpickled, no cycles (as the audits)
            noted: dict[int, _Noted] = {}
            if status == 0 and received and session.version == CURRENT_VERSION:
                noted = pickle.loads(received)
            facts._settle()
            known = facts._facts
            read = self._read
            entries = session.entries
            roles = session.entry_roles()
            for index, kind in enumerate(session.entry_types()):
                if _has_uses(kind, roles[index]):
                    line = read.get(index)  # (offset, hash) as the load read it
                    found = None if line is None else noted.get(line[0])
                    if found is not None and line is not None and found[0] == line[1]:
                        known[index] = found[1]
                    else:
                        facts.of(entries[index])
                else:
                    known[index] = _NO_FACTS


_Noted = tuple[int, Facts]
"""What the copy noted of a line: (the hash of its bytes without the newline, its facts)."""

_SKIP_BYTES = 1024 * 1024
"""The copy passes over a line longer than ``MAX_LINE_BYTES`` this many bytes at a time."""


def _note_lines(path: Any) -> dict[int, _Noted]:
    """The hash and facts of each line of a version-3 session file that is a message
    entry of the user, the agent, a shell run or an extension (``_has_uses``), by the line's
    offset. A line over ``MAX_LINE_BYTES`` is passed over a piece at a time, never held."""
    facts = EntryFacts()
    noted: dict[int, _Noted] = {}
    waiting: list[tuple[int, int, str | None, dict[str, Any] | None]] = []

    def settle() -> None:  # read the waiting messages together, as ``EntryFacts.take``
        if waiting:
            offsets, digests, roles, messages = zip(*waiting, strict=True)
            learnt = facts._learn_all(roles, messages)
            noted.update(zip(offsets, zip(digests, learnt, strict=True), strict=True))
            waiting.clear()

    offset = 0
    limit = reader.MAX_LINE_BYTES + 1
    with open(path, "rb") as file:
        readline = file.readline
        while line := readline(limit):
            size = len(line)
            if size == limit and line[-1:] != b"\n":  # over the limit: skip to its end
                while (piece := readline(_SKIP_BYTES)) and piece[-1:] != b"\n":
                    size += len(piece)
                offset += size + len(piece)
                continue
            # Both entry types that carry uses say "message"; tool results (most of the file)
            # are passed over unparsed (one written otherwise is parsed and skipped).
            if b"message" in line and b'"role":"toolResult"' not in line:
                try:
                    record = orjson.loads(line)
                except ValueError:
                    record = None
                if isinstance(record, dict):
                    kind = record.get("type")
                    role = _role_of(kind, record)
                    if _has_uses(kind, role):
                        body = line[:-1] if line[-1:] == b"\n" else line
                        waiting.append((offset, hash(body), role, _message_of(kind, record)))
                        if len(waiting) >= _BATCH:
                            settle()
            offset += size
    settle()
    return noted


def _role_of(kind: Any, record: dict[str, Any]) -> str | None:
    """The role of a record of entry type ``kind`` as the loader sets ``Entry.role``: a
    ``message`` entry's ``message.role`` when it is a string, else None."""
    if kind != "message":
        return None
    message = record.get("message")
    role = message.get("role") if isinstance(message, dict) else None
    return role if isinstance(role, str) else None


def _has_uses(kind: Any, role: str | None) -> bool:
    """Whether an entry of type ``kind`` and ``role`` can carry a use: a message of the user,
    the agent, a shell run or an extension (of the entries without a ``message``, only a
    custom message)."""
    if kind == "message":
        return role in _USE_ROLES
    return bool(kind == "custom_message")


def _message_of(kind: Any, record: dict[str, Any]) -> dict[str, Any] | None:
    """The agent message of an entry of type ``kind`` (None for entries without one), from
    its record."""
    if kind == "message":
        message = record.get("message")
        return message if isinstance(message, dict) else None
    return message_from_entry(record) if kind in MESSAGE_BEARING_TYPES else None


def _entry_text(kind: str, record: dict[str, Any], parts: list[str]) -> None:
    """Everything of an entry of type ``kind`` (its ``record``) a later turn could find a
    fact in, added to ``parts`` (the text is those parts joined by newlines): its text, tool
    call arguments and outputs, in one pass over its blocks."""
    message = _message_of(kind, record)
    if not isinstance(message, dict):
        parts.append("")
        return
    calls: list[dict[str, Any]] = []
    parts.append(message_text(message, calls=calls))
    for block in calls:
        parts.extend(str(value) for value in call_arguments(block).values())


def _context_before(session: Any, index: int, rules: str, types: Sequence[str]) -> list[int]:
    """The entries the compaction at ``index`` saw as its context's history: walking up from
    its parent to where the previous compaction's context began (pi: the previous
    compaction's kept entry, so its summary is included; oh-my-pi: right after it), root first.
    Only this stretch is walked, so auditing every compaction is linear in the file; the walk
    reads the index's columns (``types``: the session's entry types), not entries."""
    parents, ids = session.parent_column(), session.id_column()
    chain: list[int] = []
    previous: int | None = None
    target = None
    current = parents[index]
    while current >= 0:
        kind = types[current]
        if previous is None and (
            kind == "compaction" or (rules == "omp" and kind == "reset_boundary")
        ):
            if rules == "omp":
                break
            previous = len(chain)
            target = session.entries[current].data.get("firstKeptEntryId")
        elif previous is not None and ids[current] == target:
            chain.append(current)
            break
        chain.append(current)
        current = parents[current]
    else:
        if previous is not None:  # the kept entry is not on the path: start after it (pi)
            chain = chain[:previous]
    chain.reverse()
    return chain


def _life(session: Any, start: int, types: Sequence[str]) -> list[int]:
    """Entries after ``start`` on every branch, up to (not into) the next compaction, in file
    order (``types``: the session's ``entry_types``)."""
    found: list[int] = []
    children = session.children
    stack = children(start)
    while stack:
        index = stack.pop()
        if types[index] == "compaction":
            continue
        found.append(index)
        stack.extend(children(index))
    found.sort()
    return found


def _lives(session: Any, types: Sequence[str]) -> dict[int, list[int]]:
    """``_life`` of every compaction at once, in one pass over the parent column: an entry
    that is not a compaction is in the life of the nearest compaction above it. (A parent
    always comes before its children in the index, so one pass in file order sees each
    entry's parent first.)"""
    parents = session.parent_column()
    lives: dict[int, list[int]] = {}
    owner = [-1] * len(types)  # the nearest compaction at or above each entry, -1 for none
    for index, kind in enumerate(types):
        parent = parents[index]
        above = owner[parent] if parent >= 0 else -1
        if kind == "compaction":
            owner[index] = index
            lives[index] = []
        elif above >= 0:
            owner[index] = above
            lives[above].append(index)
    return lives


def audit_compaction(
    session: Any,
    index: int,
    rules: str = "pi",
    facts: EntryFacts | None = None,
    *,
    records: dict[int, dict[str, Any]] | None = None,
    types: Sequence[str] | None = None,
    life: list[int] | None = None,
) -> CompactionAudit:
    """The hindsight audit of the compaction entry at ``index``. ``records``: kept entries'
    records read already (by index); those the audit reads are added. ``types``: the
    session's ``entry_types`` when the caller has them (one list for many audits); else the
    type column, read only where the audit walks. ``life``: its ``_life`` when the caller
    has it (``_lives``)."""
    facts = EntryFacts() if facts is None else facts
    if types is None:
        types = session.type_column()
    entries = session.entries
    compaction = entries[index]
    audit = CompactionAudit(index)
    chain = _context_before(session, index, rules, types)
    wanted = compaction.data.get("firstKeptEntryId")
    ids = session.id_column()
    first_kept = next(
        (pos for pos in range(len(chain) - 1, -1, -1) if ids[chain[pos]] == wanted), None
    )
    if first_kept is None:
        audit.warning = "firstKeptEntryId is not in the context before the compaction"
        first_kept = len(chain)
    bearing = MESSAGE_BEARING_TYPES
    audit.region = [i for i in chain[:first_kept] if types[i] in bearing]
    audit.kept = [i for i in chain[first_kept:] if types[i] in bearing]
    audit.life = _life(session, index, types) if life is None else life

    facts_of = facts.lookup(session, audit.region, audit.kept, audit.life, types=types)
    # (Entries without facts, most of them, are left out at once.)
    region = [(i, found) for i in audit.region if (found := facts_of(i)) is not _NO_FACTS]
    # fact -> where the region last had it; file -> where it was last read there
    where = {use: i for i, (uses, _) in region for use in uses}
    read_at = {path: i for i, (_, reads) in region for path in reads}
    if not where and not read_at:
        return audit
    later = [(i, found) for i in reversed(audit.life) if (found := facts_of(i)) is not _NO_FACTS]
    # fact -> where the life first used it; file -> where it was first read again
    first_use = {use: i for i, (uses, _) in later for use in uses}
    first_read = {path: i for i, (_, reads) in later for path in reads}
    needed = first_use.keys() & where.keys()
    audit.used = len(needed)
    not_kept = needed.difference(*(facts_of(entry_index)[0] for entry_index in audit.kept))
    summary = compaction.data.get("summary")
    summary_haystack = Haystack(summary if isinstance(summary, str) else "")
    missing = [
        (key, first_use[key])
        for key in not_kept
        if not anchor_present(key[0], key[1], summary_haystack)
    ]
    if missing and audit.kept:  # the kept window's tool outputs may still carry them
        read = {} if records is None else records
        unread = [i for i in audit.kept if i not in read]
        read.update(zip(unread, session.records_once(unread), strict=True))
        parts: list[str] = []
        for i in audit.kept:
            _entry_text(types[i], read[i], parts)
        kept_text = Haystack.joined(parts)
        missing = [
            (key, at) for key, at in missing if not anchor_present(key[0], key[1], kept_text)
        ]
    for (kind, text), needed_at in missing:
        audit.lost.append(LostFact(kind, text, where[(kind, text)], needed_at))
    audit.lost.sort(key=lambda fact: (fact.needed_at, fact.kind, fact.text))
    audit.rereads = sorted(
        (
            ReRead(path_, read_at[path_], first_read[path_])
            for path_ in first_read.keys() & read_at.keys()
        ),
        key=lambda item: (item.reread_at, item.path),
    )
    return audit


def audit_compactions(
    session: Any, rules: str = "pi", facts: EntryFacts | None = None
) -> list[CompactionAudit]:
    """The hindsight audit of every compaction in the file, in file order. ``facts`` may hold
    what the load already noted (``EntryFacts.take``, ``FactsAhead``)."""
    facts = EntryFacts() if facts is None else facts
    types = session.entry_types()
    compactions = [index for index, kind in enumerate(types) if kind == "compaction"]
    if not compactions:
        return []
    # The audits build many short-lived dicts, lists, tuples and parsed kept records and no
    # cycles: the cyclic collector would only walk them (on the 100k benchmark session 13
    # collections, ~0.01 s of CPU: a small saving, measured by process time).
    with gc_paused():
        facts.read(session, types=types)  # every entry's facts at once, in file order
        lives = _lives(session, types)
        return [
            audit_compaction(session, index, rules, facts, types=types, life=lives[index])
            for index in compactions
        ]


@dataclass(slots=True)
class TimelineRow:
    """One compaction or branch summary of the tree."""

    entry_index: int
    kind: str
    """``compaction`` or ``branch_summary``."""
    on_active_path: bool
    method: str | None
    tokens_before: int | None
    tokens_after: int | None
    summary_chars: int
    short_summary: str | None
    model: str | None
    """Who wrote the summary when the entry says (our ``generator``, oh-my-pi's fields)."""
    audit: CompactionAudit | None = None

    def to_json(self, session: Any) -> dict[str, Any]:
        """One ``timeline --json`` row."""
        entry = session.entries[self.entry_index]
        audit = self.audit
        return {
            "entryIndex": self.entry_index,
            "entryId": entry.id,
            "type": self.kind,
            "timestamp": entry.timestamp,
            "parentId": entry.parent_id,
            "onActivePath": self.on_active_path,
            "method": self.method,
            "tokensBefore": self.tokens_before,
            "tokensAfter": self.tokens_after,
            "summaryChars": self.summary_chars,
            "shortSummary": self.short_summary,
            "model": self.model,
            "score": round(audit.score, 3) if audit is not None else None,
            "lost": len(audit.lost) if audit is not None else None,
            "rereads": len(audit.rereads) if audit is not None else None,
        }


def _writer(data: dict[str, Any]) -> str | None:
    generator = data.get("generator")
    if isinstance(generator, dict):
        name = generator.get("summarizer") or generator.get("name")
        if isinstance(name, str) and name:
            return name
    for key in ("model", "summaryModel"):
        value = data.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def compaction_timeline(
    session: Any,
    counter: TokenCounter,
    cache: TokenCache | None = None,
    rules: str = "pi",
    facts: EntryFacts | None = None,
) -> list[TimelineRow]:
    """Every compaction and branch summary of the tree in file order, compactions with their
    hindsight audit (``facts`` as for ``audit_compactions``). ``tokens_after``
    is the local count of the summary and the kept window (each kept record read once: for
    its tokens and, when the audit looks there, its text)."""
    if cache is None or cache.counter is not counter or cache.session is not session:
        cache = TokenCache(session, counter)
    active = set(session.path_to(session.leaf)) if session.leaf is not None else set()
    facts = EntryFacts() if facts is None else facts
    entries = session.entries
    types = session.entry_types()
    lives: dict[int, list[int]] = {}

    def row_of(index: int) -> TimelineRow:
        entry = entries[index]
        data = entry.data
        summary = data.get("summary")
        short = data.get("shortSummary")
        method = data.get("method")
        before = data.get("tokensBefore")
        row = TimelineRow(
            entry_index=index,
            kind=entry.type,
            on_active_path=index in active,
            method=method if isinstance(method, str) else None,
            tokens_before=before
            if isinstance(before, int) and not isinstance(before, bool)
            else None,
            tokens_after=cache.message_tokens(index),
            summary_chars=len(summary) if isinstance(summary, str) else 0,
            short_summary=short if isinstance(short, str) else None,
            model=_writer(data),
        )
        if entry.type == "compaction":
            read: dict[int, dict[str, Any]] = {}
            row.audit = audit_compaction(
                session, index, rules, facts, records=read, types=types, life=lives[index]
            )
            tokens = cache.message_tokens(index)
            for kept in row.audit.kept:  # records the audit read are not read again
                tokens += cache.entry_tokens(kept, read.get(kept)) or 0
            row.tokens_after = tokens
        return row

    with gc_paused():  # as for ``audit_compactions``
        if "compaction" in types:  # every entry's facts at once, as ``audit_compactions``
            facts.read(session, types=types)
            lives.update(_lives(session, types))
        return [
            row_of(index)
            for index, kind in enumerate(types)
            if kind in ("compaction", "branch_summary")
        ]
