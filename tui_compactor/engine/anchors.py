"""Anchors: the exact facts a handoff must carry over, pulled out of agent messages.

One extractor for everything that asks "which facts does this region hold": the fidelity audit
of a new summary (``summarize.audit``), the dependencies crossing a cut point
(``engine.deps``) and the hindsight audit of compactions already in a file
(``engine.hindsight``).

An anchor is ``(kind, text)``: a file path, a name (identifier), an error line, a shell
command, a URL, a tool-call id, a number the user gave, or the last unanswered request. What
counts as each, and which part of which message is searched for it, is decided here and nowhere
else: ``message_anchors`` reads one message; ``summarize.extract.extract_anchors`` lists a
region's anchors for the fidelity audit from it.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import operator
import re
from collections.abc import Callable, Sequence
from typing import Any, Literal

from tui_compactor.engine.messages import message_text

__all__ = [
    "AnchorKind",
    "code_names",
    "defined_names",
    "defined_names_each",
    "mentioned_paths",
    "mentioned_urls",
    "request_names",
    "user_numbers",
    "AUDIT_KINDS",
    "MAX_PER_KIND",
    "Haystack",
    "anchor_present",
    "call_arguments",
    "error_lines",
    "first_line",
    "message_anchors",
    "message_uses",
    "message_words",
    "message_text",
    "normalize",
    "tool_calls",
]

AnchorKind = Literal[
    "path", "identifier", "error", "command", "url", "tool_call", "number", "request"
]

AUDIT_KINDS: tuple[AnchorKind, ...] = ("path", "identifier", "error", "command", "number")
"""Kinds the fidelity audit checks a summary for, in the order it lists them (then the last
unanswered request). URLs and tool-call ids are for dependencies and hindsight only."""

MAX_PER_KIND = 12
"""The fidelity audit lists at most this many anchors of one kind."""

_PATH = re.compile(
    r"(?<![\w/.-])((?=[~\w.-]*+/)(?:~|\.{1,2})?/?(?:[\w.-]+/)+[\w.-]+\.[A-Za-z0-9]{1,8}"
    r"|[\w-]++\.(?:py|ts|tsx|js|jsx|rs|go|md|json|jsonl|toml|yaml|yml|c|h|cpp|java|rb|sh|css|"
    r"html|sql|txt|lock))(?![\w/])"
)
"""A file path: directories and a name with an extension, or a bare name with a known one.
(The look-ahead and the possessive runs only save backtracking: a path's first ``/`` follows
its leading run of name characters, and a bare name ends at its first ``.``.)"""
_DOT_ALNUM = re.compile(r"\.[A-Za-z0-9]")
"""Cheap test a text must pass before ``_PATH`` (both of its forms end in ``.`` + extension)."""
_URL = re.compile(r"\b(?:https?|ftp|file)://[^\s<>\"'`)\]]+")
_DEFINITION_KEYWORDS = "def class function fn func interface struct enum type".split()
_DEFINITION = re.compile(
    "(?:" + "|".join(rf"{word}(?<!\w{word})" for word in _DEFINITION_KEYWORDS) + r")"
    r"\s+([A-Za-z_]\w{2,})"
)
"""A keyword at a word's start (``\\b``, written as a look-behind after the keyword so the
engine can skip to the keywords' first letters), whitespace, the name."""
_CODE_SPAN = re.compile(r"`([A-Za-z_][\w.]*(?:\(\))?)`")
_BARE_IDENTIFIER = re.compile(
    r"(?<![\w./-])([a-z_][a-z0-9]*+_[a-z0-9_]++|[a-z]++[A-Z][A-Za-z0-9]++"
    r"|[A-Z][a-z0-9]++[A-Z][A-Za-z0-9]++)(?![\w/-])"
)
"""``snake_case``, ``camelCase`` or ``PascalCase`` standing alone (possessive runs: each run
stops where the next part must start, so giving characters back never helps)."""
_NUMBER = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?(?:%|ms|s|k|KB|MB|GB)?)(?![\w.])")
_URL_SCHEME = re.compile(r"[a-z][a-z0-9+.-]*://", re.I)
_ERROR_LINE = re.compile(
    r"(?:^|\b)(?:(?:[A-Z][A-Za-z]*)?(?:Error|Exception)|error(?:\[[A-Z0-9]+\])?|fatal|FAIL(?:ED)?|"
    r"Traceback|panic|ERR!)\b",
)

READ_TOOLS = frozenset({"read"})
"""Tool names whose ``path`` argument is a file the agent read."""
WRITE_TOOLS = frozenset({"write", "edit"})
"""Tool names whose ``path`` argument is a file the agent changed."""


def first_line(text: str, limit: int = 160) -> str:
    """The first non-blank line of ``text``, shortened to ``limit`` characters."""
    for line in text.splitlines():
        stripped = " ".join(line.split())
        if stripped:
            return stripped if len(stripped) <= limit else stripped[: limit - 1] + "…"
    return ""


def error_lines(text: str, limit: int = 3) -> list[str]:
    """The most telling lines of an error output (e.g. ``TypeError: ...``)."""
    found = []
    for line in text.splitlines():
        stripped = line.strip()
        if stripped and _ERROR_LINE.search(stripped) and not stripped.startswith("Traceback"):
            found.append(stripped[:200])
            if len(found) >= limit:
                break
    if not found:
        line = first_line(text, 200)
        if line:
            found.append(line)
    return found


def tool_calls(message: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    """``(call id, tool name, arguments)`` of every tool call in an assistant message."""
    content = message.get("content")
    if not isinstance(content, list):
        return []
    return [
        _call_of(block)
        for block in content
        if isinstance(block, dict) and block.get("type") == "toolCall"
    ]


def _call_of(block: dict[str, Any]) -> tuple[str, str, dict[str, Any]]:
    """``(call id, tool name, arguments)`` of a tool-call block."""
    return str(block.get("id", "")), str(block.get("name", "tool")), call_arguments(block)


def call_arguments(block: dict[str, Any]) -> dict[str, Any]:
    """The arguments of a tool-call block (``{}`` when they are not an object)."""
    arguments = block.get("arguments")
    return arguments if isinstance(arguments, dict) else {}


def call_path(arguments: dict[str, Any]) -> str | None:
    """A tool call's ``path`` (or ``file_path``) argument when it is a local path."""
    value = arguments.get("path") or arguments.get("file_path")
    if isinstance(value, str) and value and ("://" not in value or not _URL_SCHEME.match(value)):
        return value
    return None


def call_command(arguments: dict[str, Any]) -> str | None:
    """A bash-like tool call's shell command."""
    value = arguments.get("command") or arguments.get("cmd")
    return value if isinstance(value, str) and value.strip() else None


def _unique(values: Any) -> list[str]:
    """The non-empty ``values``, each once, in order of first appearance."""
    return [value for value in dict.fromkeys(values) if value]


def _words_with(text: str, keep: Callable[[str], bool]) -> str:
    """The whitespace-separated words of ``text`` that ``keep`` keeps, joined by spaces.

    For a pattern whose matches hold no whitespace and whose look-arounds at a match's ends
    accept whitespace, this text has the same matches as ``text`` when ``keep`` keeps every
    word that can hold one: each match lies within one word, and a space stands where
    whitespace or a text's end stood. Scanning it instead skips the words that cannot."""
    return " ".join(filter(keep, text.split()))


def _has_dot(word: str) -> bool:
    return "." in word


def mentioned_paths(text: str) -> list[str]:
    """File paths written in ``text`` (URLs left out), in order, each once."""
    if "." not in text or _DOT_ALNUM.search(text) is None:  # every path ends in ".ext"
        return []
    # Both forms hold a ".", and no whitespace (``_words_with``).
    words = _words_with(text, _has_dot)
    return _unique(path for path in _PATH.findall(words) if "://" not in path)


def mentioned_urls(text: str) -> list[str]:
    """URLs written in ``text``, in order, each once."""
    if "://" not in text:
        return []
    return _unique(url.rstrip(".,;:") for url in _URL.findall(text))


_DEFINITION_WORDS = ("class", "func", "def", "type", "struct", "enum", "interface", "fn")
"""Every keyword of ``_DEFINITION`` contains one of these (``function`` contains ``func``); the
usual ones first, so a text with a definition is told after one or two look-ups."""
_CAMEL = re.compile(r"[a-z0-9][A-Z]")
"""Each of ``_BARE_IDENTIFIER``'s forms has an ``_`` or a lower-case letter or digit followed
by a capital."""


def defined_names(text: str) -> list[str]:
    """Names a piece of code defines (``def x``, ``class X``, ``function x``...), each once."""
    if not any(map(text.__contains__, _DEFINITION_WORDS)):  # cheap: most prose has none
        return []
    return _unique(_DEFINITION.findall(text))


_DEFINITION_EACH = tuple(
    (word, re.compile(rf"{word}(?<!\w{word}){tail}\s+([A-Za-z_]\w{{2,}})"))
    for word, tail in (
        ("func", "(?:tion)?"), ("def", ""), ("class", ""), ("fn", ""), ("interface", ""),
        ("struct", ""), ("enum", ""), ("type", ""),
    )
)  # fmt: skip
"""``_DEFINITION`` one keyword at a time (``function`` and ``func`` in one: ``function`` first,
as in ``_DEFINITION``'s alternation, ``fn`` matching neither). Each starts with its keyword,
a literal the engine skips to (``_DEFINITION`` can only skip to the keywords' first letters,
most letters of English text, and tries the whole alternation at each)."""
_APART = "\x00"
"""What ``defined_names_each`` puts between texts: neither a word character nor whitespace, so
no match reaches across it, and a keyword right after it is at a word's start, as at the
start of a text (it may also occur in a text: only match positions are used)."""
_MATCH_START = re.Match.start
_MATCH_END = re.Match.end
_NAME = operator.itemgetter(1)


def defined_names_each(texts: Sequence[str]) -> list[list[str]]:
    """``[defined_names(text) for text in texts]``, in one pass per keyword over the texts
    joined (``_APART`` between them) instead of one scan and a few look-ups a text.

    At most one keyword matches at a place (their first letters differ but for ``f``, and
    ``fn``, ``func`` and ``function`` need different letters or whitespace after ``f`` or
    ``func``), so the matches of ``_DEFINITION`` are those of the keywords one at a time
    whenever those do not overlap: scanning left to right, the next match of the joint
    pattern is the first one-keyword match no earlier match covers. A text where two of
    them overlap (``class def foo``: ``def foo`` is covered by ``class def``) is read by
    ``defined_names``."""
    found: list[list[str]] = [[] for _ in texts]
    if not texts:
        return found
    joined = _APART.join(texts)
    starts: list[int] = []
    ends: list[int] = []
    names: list[str] = []
    keywords = 0
    for word, pattern in _DEFINITION_EACH:
        if word in joined:
            matches = list(pattern.finditer(joined))
            if matches:
                keywords += 1
                starts += map(_MATCH_START, matches)
                ends += map(_MATCH_END, matches)
                names += map(_NAME, matches)
    if not starts:
        return found
    # Where each text ends (its separator included), to tell which text a match is in.
    bounds = list(itertools.accumulate(len(text) + 1 for text in texts))
    owners = list(map(bisect.bisect_right, itertools.repeat(bounds, len(starts)), starts))
    if keywords == 1:  # one keyword's matches: in order, never overlapping
        for owner, name in zip(owners, names, strict=True):
            found[owner].append(name)
    else:
        overlapping: list[int] = []
        last_owner = -1
        last_end = 0
        for start, end, owner, name in sorted(zip(starts, ends, owners, names, strict=True)):
            if owner == last_owner and start < last_end:
                overlapping.append(owner)
            found[owner].append(name)
            last_owner = owner
            last_end = end
        for owner in overlapping:
            found[owner] = _DEFINITION.findall(texts[owner])
    return [list(dict.fromkeys(names)) if len(names) > 1 else names for names in found]


def code_names(text: str) -> list[str]:
    """Names in backticks that look like code (``snake_case``, ``camelCase``, ``a.b``; a file
    name in backticks is a path, not a name), each once."""
    if "`" not in text:
        return []
    found = []
    for span in _CODE_SPAN.findall(text):
        name = span.removesuffix("()")
        looks_like_code = "_" in name or "." in name or any(c.isupper() for c in name[1:])
        if looks_like_code and "/" not in name and not _PATH.fullmatch(name):
            found.append(name)
    return _unique(found)


def request_names(text: str) -> list[str]:
    """Bare identifiers a user typed (``load_all``, ``checkForNewVersion``), each once."""
    # A text with no capital (``islower``: cased letters and all of them lower case) holds
    # no camel case: told without a search.
    if "_" not in text and (text.islower() or _CAMEL.search(text) is None):
        return []
    # Each form holds an "_" or a capital (so a word that is all lower case holds none), and
    # no whitespace (``_words_with``).
    return _unique(_BARE_IDENTIFIER.findall(_words_with(text, _may_be_name)))


def _may_be_name(word: str) -> bool:
    return "_" in word or not word.islower()


def user_numbers(text: str) -> list[str]:
    """Numbers a user gave (two digits or more, units kept: ``45s``, ``200``, ``80%``)."""
    return _unique(value for value in _NUMBER.findall(text) if len(value.rstrip("%msKBGk")) >= 2)


Grouped = list[tuple[AnchorKind, list[str]]]
"""Anchors grouped by the reader that found them: ``(kind, texts in reading order)``."""


def _spoken(text: str, *, user: bool, defined: list[str] | None = None) -> Grouped:
    """The anchors of words the user or the agent wrote (not tool output), numbers aside.
    ``defined``: ``defined_names(text)`` when the caller has it (``defined_names_each``)."""
    found: Grouped = []
    if not text:  # an assistant turn of tool calls only
        return found
    # The first cheap test of each reader, asked here first: most texts pass none of them.
    if "://" in text:
        urls = mentioned_urls(text)
        if urls:
            found.append(("url", urls))
    if "." in text:
        paths = mentioned_paths(text)
        if paths:
            found.append(("path", paths))
    names = defined_names(text) if defined is None else defined
    if names:
        found.append(("identifier", names))
    if "`" in text:
        names = code_names(text)
        if names:
            found.append(("identifier", names))
    if user:
        names = request_names(text)
        if names:
            found.append(("identifier", names))
    return found


def _call_uses(arguments: dict[str, Any], found: Grouped) -> str | None:
    """What a tool call used, added to ``found``: the file it names, the command it runs.
    Returns the file (None when it names none)."""
    path = call_path(arguments)
    if path:
        found.append(("path", [path]))
    command = call_command(arguments)
    if command:
        found.append(("command", [first_line(command.strip(), 120)]))
    return path


Words = tuple[str, list[dict[str, Any]]]
"""What ``message_uses`` reads in a message: the words the user or the agent wrote (its text;
empty when it has none to read) and the assistant's tool-call blocks."""


def message_words(message: Any) -> Words:
    """The ``Words`` of ``message`` (``message_uses`` reads them; a caller reading many
    messages gets their defined names at once with ``defined_names_each``)."""
    if isinstance(message, dict):
        role = message.get("role")
        if role == "user" or (role == "custom" and message.get("display", True)):
            return message_text(message), []
        if role == "assistant":
            blocks: list[dict[str, Any]] = []
            return message_text(message, calls=blocks), blocks
    return "", []


def message_uses(
    message: Any,
    reads: list[str] | None = None,
    *,
    call_ids: bool = False,
    words: Words | None = None,
    defined: list[str] | None = None,
) -> Grouped:
    """What the user or the agent *did* with facts in one message, grouped (repeats kept):
    the anchors of their words and the files and commands of the assistant's tool calls or
    of a shell run, not what tools returned and not the numbers a user gave (a constraint for
    a summary to keep, not a fact a later turn refers back to). ``call_ids``: each tool
    call's id too (kind ``tool_call``), before what the call used. ``reads``, when given,
    gets the files an assistant message's calls of ``READ_TOOLS`` read, in order.
    ``words``: its ``message_words`` and ``defined``: ``defined_names`` of their text, when
    the caller has them."""
    if not isinstance(message, dict):
        return []
    role = message.get("role")
    if role == "bashExecution":  # a command the user ran: a use; its output is not
        command = str(message.get("command", "")).strip()
        return [("command", [first_line(command, 120)])] if command else []
    text, blocks = message_words(message) if words is None else words
    found = _spoken(text, user=role == "user", defined=defined)
    for block in blocks:
        if call_ids:
            call_id = str(block.get("id", ""))
            if call_id:
                found.append(("tool_call", [call_id]))
        path = _call_uses(call_arguments(block), found)
        if path and reads is not None and str(block.get("name", "tool")) in READ_TOOLS:
            reads.append(path)
    return found


def message_anchors(message: Any) -> list[tuple[AnchorKind, str]]:
    """The anchors one message carries, in reading order (repeats kept): what it used
    (``message_uses``, tool-call ids included), the numbers a user gave, and what tools and
    shell runs returned (names a piece of code defines, error lines, the call a result
    answers)."""
    out = [(kind, text) for kind, texts in message_uses(message, call_ids=True) for text in texts]
    if not isinstance(message, dict):
        return out
    role = message.get("role")
    if role == "user":
        out += [("number", number) for number in user_numbers(message_text(message))]
    elif role == "bashExecution":
        out.extend(("identifier", name) for name in defined_names(message_text(message)))
        exit_code = message.get("exitCode")
        if isinstance(exit_code, int) and not isinstance(exit_code, bool) and exit_code != 0:
            output = str(message.get("output", ""))
            out.extend(("error", line[:120]) for line in error_lines(output))
    elif role == "toolResult":
        result_id = message.get("toolCallId")
        if isinstance(result_id, str) and result_id:
            out.append(("tool_call", result_id))
        text = message_text(message)
        out.extend(("identifier", name) for name in defined_names(text))
        if message.get("isError"):
            out.extend(("error", line[:120]) for line in error_lines(text))
    elif role in ("branchSummary", "compactionSummary"):
        out.extend(("identifier", name) for name in defined_names(message_text(message)))
    return out


def normalize(text: str) -> str:
    """Lower case, whitespace runs collapsed: the form anchors are looked up in."""
    return " ".join(text.lower().split())


_ASCII_SPACES = b"\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f "
"""The ASCII characters ``str.isspace`` (and so ``\\s``) calls whitespace."""
_WIDE_SPACES = (
    rb"\xc2[\x85\xa0]|\xe1\x9a\x80|\xe2\x80[\x80-\x8a\xa8\xa9\xaf]|\xe2\x81\x9f|\xe3\x80\x80"
)
"""The UTF-8 bytes of the other characters it calls whitespace."""
_BYTES_SPACE = rb"(?:[" + re.escape(_ASCII_SPACES) + rb"]|" + _WIDE_SPACES + rb")+"
"""``\\s+`` of a text in its UTF-8 bytes: a run of the characters ``str.isspace`` (and so
``\\s``) calls whitespace, byte by byte."""
_CASE_INTO_ASCII = ("\u0130", "\u212a")
"""The only characters not in ASCII that ``str.lower`` turns into ASCII letters (``İ``, the
Kelvin sign)."""
_UTF8 = operator.methodcaller("encode", "utf-8", "surrogatepass")
"""A text's UTF-8 bytes (surrogates kept, as a session's JSON may hold them)."""


@functools.lru_cache(maxsize=1024)
def _spaced_pattern(needle: str) -> re.Pattern[str]:
    """Where the words of ``needle`` (single-spaced) follow each other in a lower-cased text,
    any whitespace between them: where ``needle`` occurs once the text is ``normalize``d."""
    return re.compile(r"\s+".join(re.escape(word) for word in needle.split(" ")))


_SPACE_RUN = re.compile(_BYTES_SPACE)


def _words_follow(text: bytes, at: int, words: list[bytes]) -> bool:
    """Whether ``words`` (ASCII, none empty or starting with whitespace) follow each other
    in ``text`` from ``at`` with a whitespace run between each two: ``_spaced_pattern`` of
    them joined by spaces, for the UTF-8 bytes of a text, without compiling a pattern per
    needle. (The run before a word is taken whole: giving any of it back would leave
    whitespace where the word must start.)"""
    last = len(words) - 1
    for number, word in enumerate(words):
        if not text.startswith(word, at):
            return False
        at += len(word)
        if number < last:
            run = _SPACE_RUN.match(text, at)
            if run is None:
                return False
            at = run.end()
    return True


class Haystack:
    """A text anchors are looked up in, as given (``raw``); the lower-case form is made on
    the first lookup, the ``normalize``d one only when a lookup cannot do without it.

    An ASCII needle (the usual one) is looked for in the UTF-8 bytes of the text with their
    ASCII letters lower-cased: it occurs there exactly when it occurs in the lower-case text
    (a UTF-8 sequence never holds an ASCII byte it does not stand for), unless the text has
    one of the two characters ``str.lower`` makes ASCII of; and bytes are searched faster.
    """

    __slots__ = ("_raw", "_parts", "_lower", "_bytes", "_ascii_ok", "_norm", "_starts")

    def __init__(self, raw: str) -> None:
        self._raw: str | None = raw
        self._parts: list[str] = []
        self._lower: str | None = None
        self._bytes: bytes | None = None
        self._ascii_ok = True
        self._norm: str | None = None
        self._starts: dict[tuple[bytes, bytes], list[int]] = {}

    @classmethod
    def joined(cls, parts: list[str]) -> Haystack:
        """The haystack of ``parts`` joined by newlines, made lazily."""
        haystack = cls("")
        haystack._raw = None
        haystack._parts = parts
        return haystack

    @property
    def raw(self) -> str:
        """The text as given."""
        if self._raw is None:
            self._raw = "\n".join(self._parts)
        return self._raw

    @property
    def lower(self) -> str:
        """``raw`` in lower case."""
        if self._lower is None:
            self._lower = self.raw.lower()
        return self._lower

    def _ascii_lower(self) -> bytes | None:
        """The UTF-8 bytes of ``raw`` with ASCII letters in lower case, or None when the text
        has a character ``str.lower`` makes ASCII of (then that is not the lower-case text
        as far as ASCII needles are concerned)."""
        if self._bytes is None and self._ascii_ok:
            # Part by part when given in parts: a part in ASCII is copied as it is, where
            # the joined text would be as wide as its widest character.
            parts = [self._raw] if self._raw is not None else self._parts
            wide = [part for part in parts if not part.isascii()]
            self._ascii_ok = not any(char in part for part in wide for char in _CASE_INTO_ASCII)
            if self._ascii_ok:
                self._bytes = b"\n".join(map(_UTF8, parts)).lower()
        return self._bytes

    def contains(self, needle: str) -> bool:
        """Whether ``needle`` (lower case) occurs in ``normalize(raw)``.

        Without whitespace in it, it occurs there exactly when it occurs in the lower-case
        text; single-spaced words occur there exactly when they follow each other in it with
        whitespace between. Only other needles need the normalized text itself.
        """
        if self._norm is not None:
            return needle in self._norm
        way, encoded = _needle_way(needle)
        if encoded is not None:
            text = self._ascii_lower()
            if text is not None:
                return encoded in text if way is _PLAIN else self._spaced(text, encoded)
        if way is _PLAIN:
            return needle in self.lower
        if way is _SPACED:
            return _spaced_pattern(needle).search(self.lower) is not None
        self._norm = " ".join(self.lower.split())
        return needle in self._norm

    def _spaced(self, text: bytes, needle: bytes) -> bool:
        """Whether the words of ``needle`` follow each other in ``text`` with whitespace
        between. Every match starts where its first two words do: those places are found in
        one search per haystack (the needles of one kind mostly share their first two words,
        e.g. ``npm test``), and the whole needle is tried at each of them only."""
        first, _, rest = needle.partition(b" ")
        second = rest.partition(b" ")[0]
        starts = self._starts.get((first, second))
        if starts is None:
            found = _head_pattern(first, second).finditer(text)
            starts = self._starts[(first, second)] = [match.start() for match in found]
        if not starts or len(first) + 1 + len(second) == len(needle):
            return bool(starts)  # none, or two words: those places answer
        words = needle.split(b" ")
        return any(_words_follow(text, at, words) for at in starts)


@functools.lru_cache(maxsize=256)
def _head_pattern(first: bytes, second: bytes) -> re.Pattern[bytes]:
    """Where ``first`` is followed by whitespace and ``second``, matching ``first`` only: it
    starts with a literal, which the search skips to, and two such places never overlap (the
    whitespace after one ``first`` would have to be inside the other)."""
    return re.compile(re.escape(first) + b"(?=" + _BYTES_SPACE + re.escape(second) + b")")


_HAS_SPACE = re.compile(r"\s")
_PLAIN = "plain"
_SPACED = "spaced"
_OTHER = "other"


@functools.lru_cache(maxsize=4096)
def _needle_way(needle: str) -> tuple[str, bytes | None]:
    """How ``Haystack.contains`` looks ``needle`` up (worked out once per needle: the same
    facts are looked up in many haystacks): ``_PLAIN`` without whitespace, ``_SPACED``
    single-spaced printable words, else ``_OTHER``; and its ASCII bytes when the UTF-8 bytes
    of a text can answer (a plain or spaced ASCII needle), else None."""
    # Only " " is both whitespace and printable: the usual needle needs no regex.
    printable = needle.isprintable()
    if " " not in needle and (printable or not _HAS_SPACE.search(needle)):
        way = _PLAIN
    elif printable and "  " not in needle and needle[0] != " " and needle[-1] != " ":
        way = _SPACED
    else:
        return _OTHER, None
    return way, needle.encode("ascii") if needle.isascii() else None


_normalized = functools.lru_cache(maxsize=4096)(normalize)
"""``normalize`` of an anchor (short; the same anchors are looked up in many haystacks)."""


def anchor_present(kind: AnchorKind, text: str, haystack: Haystack) -> bool:
    """Whether a text carries an anchor, exactly or recognisably (a path by its last two
    parts, a long error, command or request by its first 60 chars), letter case and
    whitespace runs aside."""
    norm = _normalized(text)
    if haystack.contains(norm):
        return True
    if kind == "path":
        return (
            "/" in text
            and haystack.contains(text.rsplit("/", 1)[-1].lower())
            and any(haystack.contains(part.lower()) for part in text.split("/")[-2:-1])
        )
    if kind == "number":
        pattern = r"(?<![\d.])" + re.escape(text) + r"(?![\d])"
        return re.search(pattern, haystack.raw) is not None
    if kind in ("error", "request", "command"):
        return len(norm) > 60 and haystack.contains(norm[:60])
    return False
