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

from dataclasses import dataclass, field
from typing import Any

from tui_compactor.engine.anchors import (
    READ_TOOLS,
    AnchorKind,
    Haystack,
    anchor_present,
    call_path,
    message_anchors,
    message_text,
    tool_calls,
)
from tui_compactor.engine.messages import message_from_entry
from tui_compactor.engine.tokens import TokenCache, TokenCounter

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

_MESSAGE_TYPES = frozenset({"message", "custom_message", "branch_summary", "compaction"})
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
        entries = session.entries

        def ident(index: int) -> str:
            return str(entries[index].id)

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


Uses = tuple[tuple[AnchorKind, str], ...]
Facts = tuple[Uses, tuple[str, ...]]
_NO_FACTS: Facts = ((), ())


class EntryFacts:
    """What the user and the agent did at each entry: the facts they used (tool outputs left
    out; each once, in order) and the files the agent asked to read.

    Worked out once per entry. A caller that audits a whole file fills it while the file
    loads (``load_session(path, on_record=facts.take)``), so each record is decoded once;
    otherwise ``of`` reads a record the first time it is asked about (``Entry.data_once``:
    not through the session's record cache). Records are dropped once their facts are
    taken; equal facts share one tuple.
    """

    def __init__(self) -> None:
        self._facts: dict[int, Facts] = {}
        self._shared: dict[tuple[AnchorKind, str], tuple[AnchorKind, str]] = {}

    def take(self, entry: Any, record: dict[str, Any]) -> None:
        """Note the facts of ``entry`` from its parsed ``record`` (the load hook)."""
        if _has_uses(entry):
            self._facts[entry.index] = self._learn(entry, _message_of(entry, record))

    def known(self, index: int) -> Facts | None:
        """The facts of entry ``index`` if they are known already (no reading), else None."""
        return self._facts.get(index)

    def of(self, entry: Any) -> Facts:
        """``(uses, reads)`` of ``entry``."""
        found = self._facts.get(entry.index)
        if found is None:
            found = _NO_FACTS
            if _has_uses(entry):
                found = self._learn(entry, _message_of(entry, entry.data_once()))
            self._facts[entry.index] = found
        return found

    def _learn(self, entry: Any, message: dict[str, Any] | None) -> Facts:
        shared = self._shared
        uses: dict[tuple[AnchorKind, str], None] = {}
        for anchor in message_anchors(message, uses_only=True):
            key = shared.get(anchor)  # seen before: its shared key, stripped
            if key is None:
                kind, text = anchor
                if kind not in HINDSIGHT_KINDS:
                    continue
                stripped = text.strip()
                key = anchor if stripped == text else (kind, stripped)
                key = shared[anchor] = shared.setdefault(key, key)
            uses[key] = None
        reads: tuple[str, ...] = ()
        if entry.role == "assistant" and message is not None:
            reads = tuple(
                path
                for _, name, arguments in tool_calls(message)
                if name in READ_TOOLS and (path := call_path(arguments))
            )
        return (tuple(uses), reads) if uses or reads else _NO_FACTS


def _has_uses(entry: Any) -> bool:
    """Whether ``entry`` can carry a use: a message of the user, the agent, a shell run or an
    extension (of the entries without a ``message``, only a custom message)."""
    if entry.type == "message":
        return entry.role in _USE_ROLES
    return bool(entry.type == "custom_message")


def _message_of(entry: Any, record: dict[str, Any]) -> dict[str, Any] | None:
    """The agent message of ``entry`` (None for entries without one), from its record."""
    if entry.type == "message":
        message = record.get("message")
        return message if isinstance(message, dict) else None
    return message_from_entry(record) if entry.type in _MESSAGE_TYPES else None


def _entry_text(entry: Any) -> str:
    """Everything of ``entry`` a later turn could find a fact in: its text, tool call
    arguments and outputs."""
    message = _message_of(entry, entry.data_once())
    if not isinstance(message, dict):
        return ""
    parts = [message_text(message)]
    for _, _, arguments in tool_calls(message):
        parts.extend(str(value) for value in arguments.values())
    return "\n".join(parts)


def _context_before(session: Any, index: int, rules: str) -> list[int]:
    """The entries the compaction at ``index`` saw as its context's history: walking up from
    its parent to where the previous compaction's context began (pi: the previous
    compaction's kept entry, so its summary is included; oh-my-pi: right after it), root first.
    Only this stretch is walked, so auditing every compaction is linear in the file."""
    entries = session.entries
    chain: list[int] = []
    previous: int | None = None
    target = None
    current = entries[index].parent
    while current is not None:
        entry = entries[current]
        if previous is None and (
            entry.type == "compaction" or (rules == "omp" and entry.type == "reset_boundary")
        ):
            if rules == "omp":
                break
            previous = len(chain)
            target = entry.data.get("firstKeptEntryId")
        elif previous is not None and entry.id == target:
            chain.append(current)
            break
        chain.append(current)
        current = entry.parent
    else:
        if previous is not None:  # the kept entry is not on the path: start after it (pi)
            chain = chain[:previous]
    chain.reverse()
    return chain


def _life(session: Any, start: int) -> list[int]:
    """Entries after ``start`` on every branch, up to (not into) the next compaction, in file
    order."""
    found: list[int] = []
    stack = list(session.children(start))
    entries = session.entries
    while stack:
        index = stack.pop()
        if entries[index].type == "compaction":
            continue
        found.append(index)
        stack.extend(session.children(index))
    found.sort()
    return found


def audit_compaction(
    session: Any, index: int, rules: str = "pi", facts: EntryFacts | None = None
) -> CompactionAudit:
    """The hindsight audit of the compaction entry at ``index``."""
    facts = EntryFacts() if facts is None else facts
    entries = session.entries
    compaction = entries[index]
    audit = CompactionAudit(index)
    chain = _context_before(session, index, rules)
    wanted = compaction.data.get("firstKeptEntryId")
    first_kept = next(
        (pos for pos in range(len(chain) - 1, -1, -1) if entries[chain[pos]].id == wanted), None
    )
    if first_kept is None:
        audit.warning = "firstKeptEntryId is not in the context before the compaction"
        first_kept = len(chain)
    audit.region = [i for i in chain[:first_kept] if entries[i].type in _MESSAGE_TYPES]
    audit.kept = [i for i in chain[first_kept:] if entries[i].type in _MESSAGE_TYPES]
    audit.life = _life(session, index)

    where: dict[tuple[AnchorKind, str], int] = {}
    read_at: dict[str, int] = {}
    noted = facts.known  # what is known already; ``of`` works out the rest
    of = facts.of
    for entry_index in audit.region:
        uses, reads = noted(entry_index) or of(entries[entry_index])
        if uses:
            where.update(dict.fromkeys(uses, entry_index))
        if reads:
            read_at.update(dict.fromkeys(reads, entry_index))
    if not where and not read_at:
        return audit
    kept: set[tuple[AnchorKind, str]] = set()
    for entry_index in audit.kept:
        kept.update((noted(entry_index) or of(entries[entry_index]))[0])
    summary = compaction.data.get("summary")
    summary = summary if isinstance(summary, str) else ""
    needed: dict[tuple[AnchorKind, str], int] = {}
    reread: dict[str, int] = {}
    for entry_index in audit.life:
        uses, reads = noted(entry_index) or of(entries[entry_index])
        for key in uses:
            if key in where and key not in needed:
                needed[key] = entry_index
        for read in reads:
            if read in read_at and read not in reread:
                reread[read] = entry_index
    audit.used = len(needed)
    summary_haystack = Haystack(summary)
    missing = [
        (key, needed_at)
        for key, needed_at in needed.items()
        if key not in kept and not anchor_present(key[0], key[1], summary_haystack)
    ]
    if missing and audit.kept:  # the kept window's tool outputs may still carry them
        kept_text = Haystack("\n".join(_entry_text(entries[i]) for i in audit.kept))
        missing = [
            (key, at) for key, at in missing if not anchor_present(key[0], key[1], kept_text)
        ]
    for (kind, text), needed_at in missing:
        audit.lost.append(LostFact(kind, text, where[(kind, text)], needed_at))
    audit.lost.sort(key=lambda fact: (fact.needed_at, fact.kind, fact.text))
    audit.rereads = sorted(
        (ReRead(path_, read_at[path_], at) for path_, at in reread.items()),
        key=lambda item: (item.reread_at, item.path),
    )
    return audit


def audit_compactions(
    session: Any, rules: str = "pi", facts: EntryFacts | None = None
) -> list[CompactionAudit]:
    """The hindsight audit of every compaction in the file, in file order. ``facts`` may hold
    what the load already noted (``EntryFacts.take``)."""
    facts = EntryFacts() if facts is None else facts
    return [
        audit_compaction(session, entry.index, rules, facts)
        for entry in session.entries
        if entry.type == "compaction"
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
    hindsight audit (``facts`` as for ``audit_compactions``). ``tokens_after`` is the local
    count of the summary and the kept window."""
    if cache is None or cache.counter is not counter or cache.session is not session:
        cache = TokenCache(session, counter)
    active = set(session.path_to(session.leaf)) if session.leaf is not None else set()
    facts = EntryFacts() if facts is None else facts
    rows = []
    for entry in session.entries:
        if entry.type not in ("compaction", "branch_summary"):
            continue
        data = entry.data
        summary = data.get("summary")
        summary = summary if isinstance(summary, str) else ""
        short = data.get("shortSummary")
        method = data.get("method")
        before = data.get("tokensBefore")
        row = TimelineRow(
            entry_index=entry.index,
            kind=entry.type,
            on_active_path=entry.index in active,
            method=method if isinstance(method, str) else None,
            tokens_before=before
            if isinstance(before, int) and not isinstance(before, bool)
            else None,
            tokens_after=None,
            summary_chars=len(summary),
            short_summary=short if isinstance(short, str) else None,
            model=_writer(data),
        )
        if entry.type == "compaction":
            row.audit = audit_compaction(session, entry.index, rules, facts)
            row.tokens_after = cache.message_tokens(entry.index) + sum(
                cache.message_tokens(i) for i in row.audit.kept
            )
        else:
            row.tokens_after = cache.message_tokens(entry.index)
        rows.append(row)
    return rows
