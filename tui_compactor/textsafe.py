"""Make untrusted session text safe to show in a terminal.

Session files hold text written by models, tools and users. Printed raw, that text could
move the cursor, change the window title, write the clipboard (OSC 52), ask the terminal to
answer on stdin (``ESC[6n``) or reorder what the user reads (bidi overrides). ``sanitize``
removes every terminal escape sequence and control character except ``\\n`` and ``\\t``,
makes bidi controls and stray zero-width characters visible, replaces lone surrogates and can
cap the length on a grapheme boundary. Pure Python; Rich markup is escaped separately with
``escape_markup``.

The same module decides the other two ways session text leaves the process: ``well_formed``
(lone surrogates, which pi produces when it cuts an emoji in half, become U+FFFD before text
is encoded, counted in bytes or sent over HTTP) and ``json_for_terminal`` (JSON output whose
unsafe code points are ``\\uXXXX`` escapes and whose non-finite numbers are ``null``, as
JavaScript's ``JSON.stringify`` writes them).
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from collections.abc import Iterable, Iterator
from typing import Any

try:
    import orjson
except ImportError:  # pragma: no cover - a declared dependency; the stdlib path is exact too
    orjson = None  # type: ignore[assignment]

__all__ = [
    "BIDI_CONTROLS",
    "TerminalSafeStream",
    "cells_head",
    "cut_cells",
    "one_cell_each",
    "ZERO_WIDTH",
    "escape_markup",
    "JsonText",
    "json_for_terminal",
    "json_list_chunks",
    "sanitize",
    "utf8_length",
    "well_formed",
    "well_formed_value",
    "write_json_for_terminal",
]

ESC = "\x1b"

# Escape sequences, matched on text (so 8-bit C1 introducers are code points U+0080..U+009F).
# String-type sequences (OSC, DCS, SOS, PM, APC) run to ST (ESC \ or U+009C) or, for OSC, BEL.
# An unterminated one ends at the next ESC, the next newline (which is kept) or the end of the
# text: once the sequence itself is removed nothing can reach the terminal as a control string,
# and the lines after it (the next message of a transcript, say) must stay visible.
_STRING_SEQ = (
    r"(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])"  # OSC, DCS, SOS, PM, APC introducers (7/8-bit)
    r"[^\x07\x1b\x9c\n]*"  # body, never past a newline
    r"(?:\x07|\x1b\\|\x9c|(?=[\x1b\n])|\Z)"  # terminator, or the next ESC / newline, or the end
)
_CSI_SEQ = r"(?:\x1b\[|\x9b)[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]?"
# Any other ESC sequence: ESC, intermediates, one final byte (ESC c, ESC 7, ESC ( B, ...).
_OTHER_ESC = r"\x1b[\x20-\x2f]*[\x30-\x7e]?"
_ESCAPE_RE = re.compile(f"{_STRING_SEQ}|{_CSI_SEQ}|{_OTHER_ESC}")

BIDI_CONTROLS = frozenset(
    "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)
"""Characters that change display order; shown as visible marks like ``⟨U+202E⟩``."""

ZERO_WIDTH = frozenset("\u00ad\u180e\u200b\u200c\u200d\u2060\u2061\u2062\u2063\u2064\ufeff")
"""Invisible characters that can hide text (``pass\u200bword``); shown as ``⟨U+200B⟩``. A
zero-width joiner inside an emoji sequence and a non-joiner between letters stay as they are."""

# Everything that survives escape removal but must still not reach the terminal: C0 except
# \t and \n, DEL, C1, bidi controls, zero-width characters, lone surrogates.
_CONTROL_CLASS = (
    "\x00-\x08\x0b-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e"
    "\u2060-\u2064\u2066-\u2069\ufeff\ud800-\udfff"
)
_CONTROL_RE = re.compile(f"[{_CONTROL_CLASS}]")
_NEEDS_WORK_RE = re.compile(f"[{_CONTROL_CLASS}\u2028\u2029]")

_SINGLE_LINE_MARKS = {"\n": "⏎", "\r": "⏎", "\t": " ", "\u2028": "⏎", "\u2029": "⏎"}
"""single_line: line breaks become a visible return mark, tabs a space."""


def _joins_legitimately(text: str, at: int) -> bool:
    """A ZWJ between emoji (👩‍💻) or a ZWNJ between letters (Persian, Indic) is real text."""
    char = text[at]
    before = text[at - 1] if at > 0 else ""
    after = text[at + 1] if at + 1 < len(text) else ""
    if not before or not after:
        return False
    if char == "\u200d":
        return _emoji_like(before) and _emoji_like(after)
    if char == "\u200c":
        return unicodedata.category(before)[0] in "LM" and unicodedata.category(after)[0] == "L"
    return False


def _emoji_like(char: str) -> bool:
    code = ord(char)
    return (
        unicodedata.category(char) == "So"
        or 0x1F000 <= code <= 0x1FAFF
        or 0xFE00 <= code <= 0xFE0F
        or 0x1F3FB <= code <= 0x1F3FF
    )


def _replace_control(match: re.Match[str], single_line: bool) -> str:
    char = match.group()
    if single_line and char in _SINGLE_LINE_MARKS:
        return _SINGLE_LINE_MARKS[char]
    if char in ZERO_WIDTH:
        if _joins_legitimately(match.string, match.start()):
            return char
        return f"⟨U+{ord(char):04X}⟩"
    if char in BIDI_CONTROLS:
        return f"⟨U+{ord(char):04X}⟩"
    if "\ud800" <= char <= "\udfff":
        return "\ufffd"
    if char == "\r":
        # A bare CR would let later text overwrite earlier text on the same line.
        return "␍" if not single_line else "⏎"
    return ""


def _cut_graphemes(text: str, max_len: int) -> str:
    """Cut ``text`` to at most ``max_len`` code points without splitting a grapheme.

    Approximation of UAX #29 good enough for display: never stop before a combining mark,
    a zero-width joiner or the character after one, a variation selector, an emoji
    modifier, or the second half of a regional-indicator pair.
    """
    if len(text) <= max_len:
        return text
    if max_len <= 0:
        return ""
    keep = max_len - 1  # room for the ellipsis
    while keep > 0 and _continues_grapheme(text, keep):
        keep -= 1
    return text[:keep] + "…"


def cut_cells(text: str, cells: int) -> str:
    """Cut ``text`` to at most ``cells`` terminal columns on a grapheme boundary, ending with
    ``…`` when cut. A CJK character or an emoji takes two columns, a combining mark none, so a
    cap in characters can overflow twice over; a cap on screen is a cap in cells."""
    from rich.cells import cell_len  # lazily: the commands never cut by cells

    if cell_len(text) <= cells:
        return text
    if cells <= 0:
        return ""
    return cells_head(text, cells - 1) + "…"  # the ellipsis takes one column


def cells_head(text: str, cells: int) -> str:
    """The longest head of ``text`` that takes at most ``cells`` terminal columns and ends on
    a grapheme boundary: where every cut of text to a width cuts (``cut_cells``, the tree's
    rows). A head of one-cell characters is cut by length, without measuring the text."""
    if cells < 0:
        return ""
    head = text[: cells + 1]  # the character after the cut too: nothing combines with it
    if one_cell_each(head):
        return head[:cells]
    from rich.cells import cell_len  # lazily: the commands never cut by cells

    keep, over = 0, len(text) + 1  # the longest head that fits: text[:keep] fits, text[:over] not
    while over - keep > 1:
        middle = (keep + over) // 2
        if cell_len(text[:middle]) <= cells:
            keep = middle
        else:
            over = middle
    while 0 < keep < len(text) and _continues_grapheme(text, keep):
        keep -= 1
    return text[:keep]


_ONE_CELL: set[str] = set(map(chr, range(0x20, 0x7F)))
"""Characters known to take one cell and to combine with nothing (printable ASCII to start
with; ``one_cell_each`` adds those it meets: ✓, —, …)."""


def one_cell_each(text: str) -> bool:
    """True if every character of ``text`` takes one cell on its own and ends its grapheme
    (no wide, zero-width, joiner, variation-selector or flag-pairing character): its cells are
    its characters, and a cut between any two of them splits nothing."""
    if _ONE_CELL.issuperset(text):
        return True
    from rich.cells import get_character_cell_size  # lazily: the commands never cut by cells

    for char in set(text).difference(_ONE_CELL):
        if char in "\u200d\ufe0f" or 0x1F1E6 <= ord(char) <= 0x1F1FF:
            return False
        if unicodedata.category(char) in ("Mn", "Me", "Mc"):
            return False
        if get_character_cell_size(char) != 1:
            return False
        _ONE_CELL.add(char)
    return True


def _continues_grapheme(text: str, i: int) -> bool:
    """True when the character at ``i`` belongs to the grapheme that starts before it."""
    char = text[i]
    prev = text[i - 1]
    code = ord(char)
    if prev == "\u200d":  # after a ZWJ
        return True
    if char == "\u200d" or 0xFE00 <= code <= 0xFE0F or 0xE0100 <= code <= 0xE01EF:
        return True
    if 0x1F3FB <= code <= 0x1F3FF or 0xE0020 <= code <= 0xE007F:  # skin tones, tag chars
        return True
    if char == "\u20e3":  # combining enclosing keycap
        return True
    if unicodedata.combining(char) or unicodedata.category(char) in ("Mn", "Me", "Mc"):
        return True
    if 0x1F1E6 <= code <= 0x1F1FF:
        # Regional indicators pair up: count the run before i.
        run = 0
        j = i - 1
        while j >= 0 and 0x1F1E6 <= ord(text[j]) <= 0x1F1FF:
            run += 1
            j -= 1
        return run % 2 == 1
    if prev == "\r" and char == "\n":
        return True
    return False


def sanitize(text: str, *, single_line: bool = False, max_len: int | None = None) -> str:
    """Return ``text`` with nothing left that a terminal would interpret.

    - every escape sequence (CSI, OSC, DCS, SOS, PM, APC, 8-bit C1 forms, ``ESC c`` and
      other two-byte escapes) is removed; an unterminated control string ends at the next
      newline, which is kept, so the lines after it stay visible;
    - every other C0/C1 control except ``\\n`` and ``\\t`` is removed (a bare ``\\r`` shows
      as ``␍``);
    - bidi overrides/isolates/marks and zero-width characters are shown as ``⟨U+202E⟩``-style
      marks (except a joiner that is part of an emoji sequence or a word);
    - lone surrogates become U+FFFD;
    - ``single_line=True`` also turns line breaks into ``⏎`` and tabs into spaces;
    - ``max_len`` caps the length (code points) on a grapheme boundary, ending with ``…``.
    """
    if not isinstance(text, str):
        text = str(text)
    if max_len is None:
        return _sanitize_all(text, single_line)
    head_len = 2 * max(max_len, 0) + _HEAD_SLACK
    if len(text) > head_len:
        # A long text's capped result depends on its head only: escape removal and the
        # control marks are local (a sequence cut at the end of the head is removed up to the
        # cut, as the whole text removes it and more; only the head's last character can come
        # out differently, as at most one mark). So when the sanitized head is longer than
        # ``max_len`` by more than one mark, its cut is the whole text's cut.
        head = _sanitize_all(text[:head_len], single_line)
        if len(head) > max_len + _LONGEST_MARK:
            return _cut_graphemes(head, max_len)
    return _cut_graphemes(_sanitize_all(text, single_line), max_len)


_HEAD_SLACK = 64
"""Characters beyond twice ``max_len`` that ``sanitize`` looks at before the whole text."""

_LONGEST_MARK = len("⟨U+FEFF⟩")
"""Longest replacement of one character (a zero-width or bidi control's visible mark)."""


def _sanitize_all(text: str, single_line: bool) -> str:
    """``sanitize`` without the length cap."""
    if ESC in text or "\x9b" in text or _has_c1_introducer(text):
        text = _ESCAPE_RE.sub("", text)
    if single_line:
        # Controls first, on the text as it came (a joiner is judged by its neighbours as
        # written), then the line breaks and tabs that pass leaves, each in one C-level
        # replace (``\r`` is a control: ``_replace_control`` marks it).
        if _CONTROL_RE.search(text):
            text = _CONTROL_RE.sub(lambda m: _replace_control(m, True), text)
        for char, mark in _SINGLE_LINE_MARKS.items():
            if char in text:
                text = text.replace(char, mark)
        return text
    if _NEEDS_WORK_RE.search(text):
        text = _CONTROL_RE.sub(lambda m: _replace_control(m, False), text)
    return text


_C1_INTRODUCER_RE = re.compile("[\x90\x98\x9d\x9e\x9f]")


def _has_c1_introducer(text: str) -> bool:
    """True if the text holds an 8-bit string-sequence introducer (DCS, SOS, OSC, PM, APC)."""
    return not text.isascii() and _C1_INTRODUCER_RE.search(text) is not None


_MARKUP_RE = re.compile(r"(\\*)\[")


def escape_markup(text: str) -> str:
    """Escape Rich/Textual console markup so ``text`` shows literally inside a markup string.

    Every ``[`` is escaped (its preceding backslashes doubled so they stay literal), which is
    stricter than Rich's own ``escape`` and also safe for Textual content markup. A trailing
    backslash is doubled so it cannot escape markup that follows. Does not sanitize: call
    ``sanitize`` first.
    """
    escaped = _MARKUP_RE.sub(lambda m: m.group(1) * 2 + "\\[", text)
    trailing = len(escaped) - len(escaped.rstrip("\\"))
    if trailing:
        escaped += "\\" * trailing
    return escaped


_SURROGATE_RE = re.compile("[\ud800-\udfff]")


def well_formed(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD, so it can be encoded as UTF-8.

    Python strings decoded from JSON keep unpaired ``\\ud800`` escapes as surrogate code
    points; ``str.encode("utf-8")`` then raises. This is what ``TextEncoder`` does in
    JavaScript, so byte counts stay the same as pi's.
    """
    if _SURROGATE_RE.search(text) is None:
        return text
    return _SURROGATE_RE.sub("\ufffd", text)


def well_formed_value(value: Any) -> Any:
    """``value`` (JSON-like: dicts, lists, strings) with ``well_formed`` applied to every string
    and key; other values are returned as they are."""
    if isinstance(value, str):
        return well_formed(value)
    if isinstance(value, dict):
        return {well_formed(str(key)): well_formed_value(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [well_formed_value(item) for item in value]
    return value


def utf8_length(text: str) -> int:
    """Bytes of ``text`` in UTF-8, a lone surrogate counting as U+FFFD (3 bytes)."""
    return len(text.encode("utf-8", "surrogatepass"))


# Code points JSON may carry raw but a terminal must not see: C1, bidi, zero-width, surrogates,
# line/paragraph separators (C0 controls, DEL aside, are always escaped by ``json.dumps``).
_JSON_UNSAFE_RE = re.compile(f"[{_CONTROL_CLASS}\u2028\u2029]")


def _finite(value: Any) -> Any:
    """``value`` with every NaN or infinity replaced by None (``JSON.stringify`` writes null)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(item) for item in value]
    return value


def _without_floats(value: Any) -> bool:
    """True when ``value`` holds no number ``orjson`` would spell differently from ``json.dumps``
    (floats: ``1e-05`` against ``0.00001``) and nothing but JSON's own types."""
    stack = [value]
    while stack:
        current = stack.pop()
        kind = type(current)
        if kind is str or kind is int or kind is bool or current is None:
            continue
        if kind is dict:
            stack.extend(current.values())
        elif kind is list or kind is tuple:
            stack.extend(current)
        else:
            return False
    return True


def json_for_terminal(value: Any, *, indent: int | None = 2, ensure_ascii: bool = False) -> str:
    """``value`` as strict JSON that is safe to print: non-finite numbers become ``null``, and
    every code point ``sanitize`` would touch is written as a ``\\uXXXX`` escape (the data is
    unchanged for a JSON reader, the terminal sees only ASCII for them)."""
    if indent == 2 and not ensure_ascii and orjson is not None and _without_floats(value):
        # The same text as ``json.dumps`` (strings, integers and layout are written alike),
        # ten times faster; what it refuses (lone surrogates, huge integers, keys that are
        # not strings, deep nesting) goes the usual way.
        try:
            text = orjson.dumps(value, option=orjson.OPT_INDENT_2).decode()
        except (TypeError, ValueError):
            pass
        else:
            return _JSON_UNSAFE_RE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    try:
        try:
            text = json.dumps(value, ensure_ascii=ensure_ascii, indent=indent, allow_nan=False)
        except ValueError:
            text = json.dumps(
                _finite(value), ensure_ascii=ensure_ascii, indent=indent, allow_nan=False
            )
    except RecursionError:
        # Nesting deeper than Python's recursion (a damaged or hostile file): JavaScript's
        # rules, written without recursion and without indentation.
        from tui_compactor.engine.jstext import js_stringify

        text = js_stringify(value) or "null"
        if ensure_ascii:
            return _NON_ASCII_RE.sub(_ascii_escape, text)
    if ensure_ascii:
        return text
    return _JSON_UNSAFE_RE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


class JsonText:
    """The already rendered JSON text of one value of the object ``write_json_for_terminal``
    writes (``json_list_chunks``), written as it comes instead of being held whole."""

    def __init__(self, chunks: Iterable[str]) -> None:
        self.chunks = chunks


JSON_CHUNK_ITEMS = 512
"""Items rendered per chunk of a streamed JSON list (one write each)."""


def json_list_chunks(
    items: Iterable[Any], *, ensure_ascii: bool = False, level: int = 1
) -> Iterator[str]:
    """The text ``json_for_terminal`` writes for a list of ``items`` that is the value of a key
    at nesting ``level`` (2-space indentation), in chunks: the list is never held whole."""
    inner = "\n" + "  " * (level + 1)
    buffer: list[str] = []
    first = True
    for item in items:
        text = json_for_terminal(item, ensure_ascii=ensure_ascii).replace("\n", inner)
        buffer.append(("[" if first else ",") + inner + text)
        first = False
        if len(buffer) >= JSON_CHUNK_ITEMS:
            yield "".join(buffer)
            buffer.clear()
    if first:
        yield "[]"
        return
    buffer.append("\n" + "  " * level + "]")
    yield "".join(buffer)


STREAM_MIN_ITEMS = 256
"""``write_json_for_terminal`` writes a list or object with this many items (or holding one)
piece by piece instead of rendering it whole."""


def _is_big(value: Any, depth: int = 0) -> bool:
    if isinstance(value, JsonText):
        return True
    if depth >= 8 or not isinstance(value, (dict, list, tuple)):
        return False
    if len(value) >= STREAM_MIN_ITEMS:
        return True
    items = value.values() if isinstance(value, dict) else value
    return any(_is_big(item, depth + 1) for item in items)


def _json_key(key: Any) -> str:
    """An object key as ``json.dumps`` writes it (non-string keys become strings)."""
    if isinstance(key, bool):
        key = "true" if key else "false"
    elif key is None:
        key = "null"
    elif isinstance(key, float):
        key = repr(key) if math.isfinite(key) else ("NaN" if key != key else repr(key))
    return str(key)


def _write_json(out: Any, value: Any, level: int, ensure_ascii: bool) -> None:
    if isinstance(value, JsonText):
        for chunk in value.chunks:
            out.write(chunk)
        return
    pad = "\n" + "  " * level
    if not _is_big(value):
        out.write(json_for_terminal(value, ensure_ascii=ensure_ascii).replace("\n", pad))
        return
    inner = pad + "  "
    if isinstance(value, dict):
        separator = "{"
        for key, item in value.items():
            name = json_for_terminal(_json_key(key), ensure_ascii=ensure_ascii)
            out.write(f"{separator}{inner}{name}: ")
            separator = ","
            _write_json(out, item, level + 1, ensure_ascii)
        out.write(pad + "}")
        return
    separator = "["
    items = value if isinstance(value, list) else list(value)
    for start in range(0, len(items), JSON_CHUNK_ITEMS):
        batch = items[start : start + JSON_CHUNK_ITEMS]
        if not any(_is_big(item) for item in batch):
            # One rendering per batch: "[\n  a,\n  b\n]" without its brackets, re-indented.
            text = json_for_terminal(batch, ensure_ascii=ensure_ascii)
            out.write(separator + pad + text[2:-2].replace("\n", pad))
            separator = ","
            continue
        for item in batch:
            out.write(separator + inner)
            _write_json(out, item, level + 1, ensure_ascii)
            separator = ","
    out.write(pad + "]")


def write_json_for_terminal(out: Any, value: Any, *, ensure_ascii: bool = False) -> None:
    """Write ``json_for_terminal(value)`` and a newline to ``out``: the same text, but big
    lists and objects (and ``JsonText`` values, streamed from their chunks) are written piece
    by piece, so a 200,000-item list never becomes one string."""
    _write_json(out, value, 0, ensure_ascii)
    out.write("\n")


_NON_ASCII_RE = re.compile("[^\x00-\x7f]")


def _ascii_escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


class TerminalSafeStream:
    """A text stream that passes everything written through ``sanitize`` (line breaks and
    tabs kept) before it reaches the wrapped stream.

    The headless commands print through it, so no field of any entry can reach the terminal
    raw, whichever command prints it and however it was formatted. JSON output built with
    ``json_for_terminal`` passes unchanged. Other attributes (``buffer``, ``isatty``,
    ``fileno``, ``encoding``) are the wrapped stream's.

    ``flush_first`` (stderr's wrapper gets stdout) is flushed before each write, so with both
    sent to one pipe (``2>&1 | less``) lines arrive in the order they were printed: a warning
    never lands inside a buffered stdout line, nor a streamed summary before the plan.
    """

    def __init__(self, stream: Any, *, flush_first: Any = None) -> None:
        self.wrapped = stream
        self.flush_first = flush_first

    def write(self, text: str) -> int:
        """Write ``sanitize(text)``; returns ``len(text)`` as callers expect."""
        if self.flush_first is not None:
            self.flush_first.flush()
        self.wrapped.write(sanitize(text))
        return len(text)

    def writelines(self, lines: Any) -> None:
        """Write each line through ``write``."""
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        """Flush the wrapped stream."""
        self.wrapped.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.wrapped, name)
