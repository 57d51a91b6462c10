"""Tests for ``tui_compactor.textsafe``: nothing a terminal interprets survives ``sanitize``."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tui_compactor.textsafe import escape_markup, sanitize

CORPUS = Path(__file__).resolve().parents[1] / "fixtures" / "bad"
FORBIDDEN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\u202a-\u202e\u2066-\u2069]")

# Text biased towards the dangerous parts of Unicode: escapes, controls, bidi, surrogates.
dangerous_chars = st.sampled_from(
    [
        "\x1b",
        "[",
        "]",
        "P",
        "_",
        "^",
        "X",
        "\\",
        "\x07",
        "\x9b",
        "\x9c",
        "\x9d",
        "\x90",
        "\r",
        "\n",
        "\t",
        "\x00",
        "\x7f",
        "\u202e",
        "\u2066",
        "\ud800",
        "\u0301",
        "\u200d",
        "0",
        ";",
        "m",
        "c",
        "a",
        "👩",
        "\U0001f1ef",
    ]
)
hostile_text = st.lists(st.one_of(dangerous_chars, st.characters()), max_size=80).map("".join)


@given(hostile_text)
@settings(max_examples=400)
def test_sanitized_text_has_no_escape_or_control(text: str) -> None:
    out = sanitize(text)
    assert "\x1b" not in out
    assert FORBIDDEN.search(out) is None
    out.encode("utf-8")  # no lone surrogates left


@given(hostile_text, st.integers(min_value=0, max_value=40))
@settings(max_examples=300)
def test_single_line_has_no_line_breaks_and_respects_max_len(text: str, max_len: int) -> None:
    out = sanitize(text, single_line=True, max_len=max_len)
    assert "\n" not in out and "\r" not in out and "\t" not in out
    assert FORBIDDEN.search(out) is None
    assert len(out) <= max_len


long_hostile_text = st.lists(
    st.one_of(
        dangerous_chars,
        dangerous_chars,
        st.characters(),
        st.just("\u200c"),
        st.just("\u200b"),
        st.just("\u2028"),
    ),
    min_size=60,
    max_size=400,
).map("".join)


def _reference(text: str, single_line: bool) -> str:
    """The sanitizing passes one by one over the whole text, as ``sanitize`` defines them."""
    from tui_compactor.textsafe import _CONTROL_CLASS, _CONTROL_RE, _ESCAPE_RE, _replace_control

    text = _ESCAPE_RE.sub("", text)
    if single_line:
        every = re.compile(f"[{_CONTROL_CLASS}\n\t\u2028\u2029]")
        return every.sub(lambda m: _replace_control(m, True), text)
    return _CONTROL_RE.sub(lambda m: _replace_control(m, False), text)


@given(long_hostile_text, st.integers(min_value=0, max_value=60), st.booleans())
@settings(max_examples=600)
def test_a_capped_long_text_is_the_cap_of_the_whole_text(
    text: str, max_len: int, single_line: bool
) -> None:
    """A preview of a long tool output sanitizes only the output's head: the result is the
    one the whole text gives, cut to ``max_len``, whatever sits where the head ends."""
    from tui_compactor.textsafe import _cut_graphemes

    whole = _reference(text, single_line)
    assert sanitize(text, single_line=single_line) == whole
    assert sanitize(text, single_line=single_line, max_len=max_len) == _cut_graphemes(
        whole, max_len
    )


@pytest.mark.parametrize("tail", ["\x1b]0;title\x07 after", "👩\u200d👩 after", "\x1b[31m red"])
def test_a_cap_that_ends_inside_a_sequence_gives_the_whole_text_cap(tail: str) -> None:
    """Wherever ``sanitize``'s look at a long text's head ends (in an escape sequence, between
    an emoji and its joiner's second half) and however much of the head an escape sequence
    removed before it, the capped result is the whole text's cut."""
    from tui_compactor.textsafe import _cut_graphemes

    max_len = 20
    for removed in range(0, 200, 3):
        for kept in range(0, max_len + 12):
            text = "\x1b[" + "1" * removed + "m" + "a" * kept + tail + "z" * 300
            for single_line in (True, False):
                whole = sanitize(text, single_line=single_line)
                assert sanitize(text, single_line=single_line, max_len=max_len) == (
                    _cut_graphemes(whole, max_len)
                ), (removed, kept)


def test_corpus_control_characters_are_neutralised() -> None:
    lines = (CORPUS / "control-characters-and-ansi-escapes.jsonl").read_bytes().split(b"\n")
    text = json.loads(lines[3])["message"]["content"][0]["text"]
    out = sanitize(text)
    assert "\x1b" not in out and "\x9b" not in out and "\x9d" not in out
    # Payloads inside escape sequences are gone, visible text stays.
    assert "PWNED" not in out and "cm0gLXJmIH4K" not in out and "never closed" not in out
    assert "innocent text" in out and "red" in out
    assert "SAFE␍EVIL" in out  # CR cannot overwrite
    assert "⟨U+202E⟩" in out and "⟨U+2066⟩" in out
    assert "\n" in out


STRING_INTRODUCERS = ["\x1b]", "\x1bP", "\x1bX", "\x1b^", "\x1b_", "\x9d", "\x90"]
"""OSC, DCS, SOS, PM, APC (7-bit) and OSC, DCS (8-bit C1)."""


@pytest.mark.parametrize("introducer", STRING_INTRODUCERS)
def test_unterminated_control_string_ends_at_the_next_newline(introducer: str) -> None:
    """An OSC/DCS/SOS/PM/APC that is never closed must not swallow the following lines."""
    text = f"tool output {introducer}0;never closed\n\n[Assistant]: next message\nmore"
    out = sanitize(text)
    assert out == "tool output \n\n[Assistant]: next message\nmore"


def test_serialized_transcript_keeps_the_message_after_an_unterminated_osc() -> None:
    """The corpus file's tool result ends in an unclosed OSC; the next message still shows."""
    from tui_compactor.engine.context import build_context
    from tui_compactor.engine.serialize import serialize_pi
    from tui_compactor.session.reader import load_session

    session = load_session(CORPUS / "control-characters-and-ansi-escapes.jsonl")
    context = build_context(session, session.leaf)
    messages = [item.message for item in context.items if not item.excluded]
    out = sanitize(serialize_pi(messages))
    assert "never closed" not in out
    assert "\n\n[Assistant]: The command printed green text" in out
    assert out.count("[Assistant]:") == 3 and out.count("[User]:") == 2


def test_plain_text_is_unchanged() -> None:
    text = "def f(x):\n\treturn x  # العربية 中文 👨‍👩‍👧"
    assert sanitize(text) == text


def test_max_len_cuts_on_grapheme_boundary() -> None:
    family = "👨\u200d👩\u200d👧"
    assert sanitize("ab" + family, max_len=4) == "ab…"
    assert sanitize("ab" + family, max_len=len(family) + 2) == "ab" + family
    assert sanitize("e\u0301e\u0301", max_len=3) == "e\u0301…"
    flags = "\U0001f1ef\U0001f1f5\U0001f1fa\U0001f1f8"
    assert sanitize(flags, max_len=3) == flags[:2] + "…"


def test_lone_surrogate_replaced() -> None:
    assert sanitize("a\ud800b") == "a\ufffdb"


def test_escape_markup_shows_literally() -> None:
    from rich.text import Text

    for raw in ["[bold]x[/bold]", "a\\[b]", "[link=https://x]y[/link]", "[[x]]"]:
        assert Text.from_markup(escape_markup(raw)).plain == raw
    # Text followed by real markup: a trailing backslash must not escape the tag.
    assert Text.from_markup(escape_markup("end\\") + "[bold]b[/bold]").plain.endswith("b")
