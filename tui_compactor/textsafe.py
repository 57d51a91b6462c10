"""Make untrusted session text safe to show in a terminal.

Session files hold text written by models, tools and users. Printed raw, that text could
move the cursor, change the window title, write the clipboard (OSC 52), ask the terminal to
answer on stdin (``ESC[6n``) or reorder what the user reads (bidi overrides). ``sanitize``
removes every terminal escape sequence and control character except ``\\n`` and ``\\t``,
makes bidi controls visible, replaces lone surrogates and can cap the length on a grapheme
boundary. Pure Python; Rich markup is escaped separately with ``escape_markup``.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["sanitize", "escape_markup", "BIDI_CONTROLS"]

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

# Everything that survives escape removal but must still not reach the terminal: C0 except
# \t and \n, DEL, C1, bidi controls, lone surrogates.
_CONTROL_CLASS = (
    "\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff"
)
_CONTROL_RE = re.compile(f"[{_CONTROL_CLASS}]")
_NEEDS_WORK_RE = re.compile(f"[{_CONTROL_CLASS}\u2028\u2029]")
_SINGLE_LINE_RE = re.compile(f"[{_CONTROL_CLASS}\n\t\u2028\u2029]")

_SINGLE_LINE_MARKS = {"\n": "⏎", "\r": "⏎", "\t": " ", "\u2028": "⏎", "\u2029": "⏎"}
"""single_line: line breaks become a visible return mark, tabs a space."""


def _replace_control(match: re.Match[str], single_line: bool) -> str:
    char = match.group()
    if single_line and char in _SINGLE_LINE_MARKS:
        return _SINGLE_LINE_MARKS[char]
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
    - bidi overrides/isolates/marks are shown as ``⟨U+202E⟩``-style marks;
    - lone surrogates become U+FFFD;
    - ``single_line=True`` also turns line breaks into ``⏎`` and tabs into spaces;
    - ``max_len`` caps the length (code points) on a grapheme boundary, ending with ``…``.
    """
    if not isinstance(text, str):
        text = str(text)
    if ESC in text or "\x9b" in text or _has_c1_introducer(text):
        text = _ESCAPE_RE.sub("", text)
    pattern = _SINGLE_LINE_RE if single_line else _NEEDS_WORK_RE
    if pattern.search(text):
        if single_line:
            text = _SINGLE_LINE_RE.sub(lambda m: _replace_control(m, True), text)
        else:
            text = _CONTROL_RE.sub(lambda m: _replace_control(m, False), text)
    if max_len is not None:
        text = _cut_graphemes(text, max_len)
    return text


def _has_c1_introducer(text: str) -> bool:
    """True if the text holds an 8-bit string-sequence introducer (DCS, SOS, OSC, PM, APC)."""
    return any(c in text for c in "\x90\x98\x9d\x9e\x9f")


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
